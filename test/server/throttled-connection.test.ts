/**
 * Proves the socket server mutes a throttled connection as Kafka does
 * (KIP-219): the throttled response is sent at once, and the next request
 * pipelined on that connection is not served until the throttle time has
 * passed on the server's clock; other connections are served meanwhile.
 * The timers are a ManualClock, so nothing here waits on real time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, realEnv } from '../../src/io/env.js';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { RequestHandlerTable } from '../../src/server/request-handler.js';
import { SocketServer } from '../../src/server/socket-server.js';
import { UNLIMITED_CONNECTIONS } from '../../src/server/connection-quotas.js';
import { defineHandler, type ApiHandler } from '../../src/server/handler.js';
import { apiVersionsHandler } from '../../src/server/apis/18-api-versions.js';
import { silentLogger } from '../../src/common/logger.js';
import type { ApiContext } from '../../src/server/api-context.js';
import { WireClient } from './wire-client.js';

const THROTTLE_MS = 5000;

/** A Fetch that asks its connection to be muted, as a consumer over its quota is. */
function throttlingFetch(handled: number[]): ApiHandler {
  return defineHandler({
    api: Fetch,
    handle(_request, context) {
      handled.push(context.header.correlationId);
      context.throttle?.(THROTTLE_MS);
      return { throttleTimeMs: THROTTLE_MS, responses: [] };
    },
  }) as unknown as ApiHandler;
}

const fetchRequest = (correlationId: number) =>
  encodeRequest(Fetch, { apiVersion: 12, correlationId, clientId: 'throttled' }, {
    maxWaitMs: 0, minBytes: 1, maxBytes: 1024, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [], topics: [],
  } as never);

test('a throttled connection gets its response at once and nothing more is served on it until the throttle time passes', async () => {
  const clock = new ManualClock(0);
  const handled: number[] = [];
  const fakeBroker = { metadata: { image: { offset: 3, clusterId: 'test-cluster', features: new Map([['metadata.version', 25]]) } }, raft: { kraftVersion: 0 } } as unknown as ApiContext;
  const table = new RequestHandlerTable([apiVersionsHandler(fakeBroker), throttlingFetch(handled)], silentLogger);
  (fakeBroker as unknown as { handlers: RequestHandlerTable }).handlers = table;
  const limits = { requestBytesMax: 1 << 20, queuedRequestsMax: 100, queuedBytesMax: 1 << 20, idleMs: -1, pendingResponseBytesMax: 1 << 20, requestPoolBytes: -1, connectionQuotas: UNLIMITED_CONNECTIONS };
  const server = new SocketServer({ ...realEnv, clock, timers: clock }, table, limits, silentLogger);
  const listener = await server.listen('PLAINTEXT', '127.0.0.1', 0);
  const client = await WireClient.connect(`127.0.0.1:${listener.port}`);
  const bystander = await WireClient.connect(`127.0.0.1:${listener.port}`);
  try {
    client.send(fetchRequest(1));
    client.send(fetchRequest(2));
    const first = decodeResponse(Fetch, 12, (await client.next())!);
    assert.ok(first.ok && first.body.throttleTimeMs === THROTTLE_MS, 'the throttled response is sent at once');

    bystander.send(encodeRequest(ApiVersions, { apiVersion: 3, correlationId: 9, clientId: 'other' }, { clientSoftwareName: 't', clientSoftwareVersion: '1' }));
    assert.ok(decodeResponse(ApiVersions, 3, (await bystander.next())!).ok, 'other connections are served during the throttle');
    for (let turn = 0; turn < 20; turn++) await nextTurn();
    assert.deepEqual(handled, [1], 'the second request waits: the server cannot serve it before its clock passes the throttle time');

    clock.advance(THROTTLE_MS - 1);
    for (let turn = 0; turn < 20; turn++) await nextTurn();
    assert.deepEqual(handled, [1]);
    clock.advance(1);
    assert.equal((await client.next())?.readInt32BE(0), 2, 'served once the throttle time has passed');
    assert.deepEqual(handled, [1, 2]);
  } finally {
    client.close();
    bystander.close();
    await server.shutdown();
  }
});
