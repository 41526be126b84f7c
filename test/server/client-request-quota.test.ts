/**
 * request_percentage (KIP-124; Kafka's ClientRequestQuotaManager) on a
 * manual clock, through the request handler table as a connection uses it:
 * - a request is charged the time its handler runs before its first wait,
 *   not the wait (a purgatory, a long poll): 500 ms of loop time is 50
 *   percent-seconds, a rate of 5% over the first 10 windows; over a bound of
 *   4.6 the throttle is (5 - 4.6) / 4.6 × 10 000 ms, in the response and as
 *   the connection's mute (had the 5 s wait been charged, the throttle would
 *   be the one-window cap);
 * - the throttle is at most one window (quota.window.size.seconds), and the
 *   response keeps a larger throttle time of its own;
 * - a client without the quota is not throttled; controller listeners are
 *   not counted;
 * - a handler that asks for its throttle time itself (Fetch, which answers
 *   empty when throttled) is charged once, the time before its first wait;
 * - Kafka's exemptions: SASL, WriteTxnMarkers, follower Fetch, Produce acks=0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRequest, encodeRequest } from '../../src/protocol/apis.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { DescribeCluster } from '../../src/protocol/schemas/60-describe-cluster.js';
import type { ApiDef } from '../../src/protocol/schema.js';
import { applyClientQuota, type ClientQuotaImage } from '../../src/metadata/client-quotas.js';
import { ClientRequestQuotaManager } from '../../src/server/client-quota-manager.js';
import { exemptFromRequestQuota } from '../../src/server/client-request-quota.js';
import { RequestHandlerTable } from '../../src/server/request-handler.js';
import { defineHandler } from '../../src/server/handler.js';
import { silentLogger } from '../../src/common/logger.js';

const WINDOWS = { windowCount: 11, windowSizeMs: 1000 };
/** The loop time the fake handler takes before it waits, and the wait. */
const HANDLER_MS = 500;
const WAIT_MS = 5000;

function tableWith(bound: number, ownThrottleMs = 0, asks: number[] | null = null) {
  const clock = { nowMs: 1_000_000 };
  const quotas = new Map<string, ClientQuotaImage>();
  applyClientQuota(quotas, { entity: [{ entityType: 'client-id', entityName: 'c1' }], key: 'request_percentage', value: bound, remove: false });
  const manager = new ClientRequestQuotaManager(WINDOWS, () => clock.nowMs);
  manager.update(quotas);
  const handlerOf = (api: ApiDef) =>
    defineHandler({
      api,
      handle(_request, context) {
        clock.nowMs += HANDLER_MS;
        return (async () => {
          await Promise.resolve();
          clock.nowMs += WAIT_MS;
          if (asks === null) return { throttleTimeMs: ownThrottleMs } as never;
          // As Fetch: the throttle time decides the answer, asked twice to show it is charged once.
          asks.push(context.requestThrottleTimeMs!(), context.requestThrottleTimeMs!());
          return { throttleTimeMs: asks.at(-1) } as never;
        })();
      },
    });
  const table = new RequestHandlerTable([handlerOf(Metadata), handlerOf(DescribeCluster)], silentLogger, { controllerListenerNames: ['CONTROLLER'], requestQuota: { manager, nowMs: () => clock.nowMs } });
  return table;
}

async function metadata(table: RequestHandlerTable, clientId: string, listenerName = 'PLAINTEXT') {
  const frame =
    listenerName === 'CONTROLLER'
      ? Buffer.concat(encodeRequest(DescribeCluster, { apiVersion: 1, correlationId: 1, clientId }, { includeClusterAuthorizedOperations: false })).subarray(4)
      : Buffer.concat(encodeRequest(Metadata, { apiVersion: 12, correlationId: 1, clientId }, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })).subarray(4);
  let mutedMs = 0;
  const outcome = await table.handle(decodeRequest(frame), { connectionId: 'c', listenerName, clientAddress: '127.0.0.1', principal: 'User:ANONYMOUS', requestBytes: frame.length, throttle: (ms) => (mutedMs = ms) });
  assert.equal(outcome.kind, 'respond');
  return { throttleTimeMs: (outcome as { body: Record<string, unknown> }).body.throttleTimeMs, mutedMs };
}

test("request_percentage: the handler's loop time before its first wait is charged, the wait is not", async () => {
  const table = tableWith(4.6);
  const expectedMs = Math.round(((5 - 4.6) / 4.6) * 10_000);
  assert.ok(expectedMs < WINDOWS.windowSizeMs, 'below the one-window cap, so the charge shows');
  assert.deepEqual(await metadata(table, 'c1'), { throttleTimeMs: expectedMs, mutedMs: expectedMs });
  assert.deepEqual(await metadata(table, 'other'), { throttleTimeMs: 0, mutedMs: 0 }, 'no quota for this client');
});

test('request_percentage: the throttle is at most one window; a larger throttle of the response stays; controller listeners are not counted', async () => {
  // (DescribeCluster on the controller listener: Metadata is not served there.)
  assert.deepEqual(await metadata(tableWith(1), 'c1'), { throttleTimeMs: 1000, mutedMs: 1000 });
  assert.deepEqual(await metadata(tableWith(1, 3000), 'c1'), { throttleTimeMs: 3000, mutedMs: 1000 }, "the handler's own mute is asked by the handler");
  assert.deepEqual(await metadata(tableWith(1), 'c1', 'CONTROLLER'), { throttleTimeMs: 0, mutedMs: 0 });
});

test('request_percentage: a handler asking for its throttle time is charged once, its time before the first wait', async () => {
  const asks: number[] = [];
  const table = tableWith(4.6, 0, asks);
  const expectedMs = Math.round(((5 - 4.6) / 4.6) * 10_000);
  const answered = await metadata(table, 'c1');
  assert.deepEqual(asks, [expectedMs, expectedMs]);
  asks.length = 0;
  assert.deepEqual(answered, { throttleTimeMs: expectedMs, mutedMs: 0 }, 'the handler mutes (Fetch does), the table adds nothing');
  // Charged once: a second request finds 100 percent-seconds over 10 s (10%), throttle capped at one window.
  assert.deepEqual(await metadata(table, 'c1'), { throttleTimeMs: 1000, mutedMs: 0 });
});

test("request_percentage: Kafka's exemptions", () => {
  assert.equal(exemptFromRequestQuota(17, {}), true, 'SaslHandshake');
  assert.equal(exemptFromRequestQuota(36, {}), true, 'SaslAuthenticate');
  assert.equal(exemptFromRequestQuota(27, {}), true, 'WriteTxnMarkers');
  assert.equal(exemptFromRequestQuota(0, { acks: 0 }), true, 'Produce acks=0');
  assert.equal(exemptFromRequestQuota(0, { acks: -1 }), false);
  assert.equal(exemptFromRequestQuota(1, { replicaId: 2 }), true, 'follower Fetch before v15');
  assert.equal(exemptFromRequestQuota(1, { replicaState: { replicaId: 2 } }), true, 'follower Fetch v15+');
  assert.equal(exemptFromRequestQuota(1, { replicaId: -1 }), false, 'consumer Fetch');
  assert.equal(exemptFromRequestQuota(1, { replicaState: { replicaId: -1 } }), false);
  assert.equal(exemptFromRequestQuota(3, {}), false, 'Metadata');
});
