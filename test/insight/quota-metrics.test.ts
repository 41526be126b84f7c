/**
 * Quota metrics with Kafka's names, per user/client-id sensor, on a manual
 * clock: Produce byte-rate (Kafka's Rate: a first record over 10 windows)
 * and throttle-time (the mean of the throttled requests' times),
 * Request request-time, ControllerMutation mutation-rate, tokens and
 * throttle-time; a sensor's metrics appear once it counts something and go
 * with it. On a real node, GET /metrics shows the controller mutation
 * sensor of a client that created topics over the wire.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { QuotaMetrics } from '../../src/insight/quota-metrics.js';
import { ClientQuotaManager, ClientRequestQuotaManager } from '../../src/server/client-quota-manager.js';
import { ControllerMutationQuotaManager, controllerQuotaThrottleTimeMs } from '../../src/server/controller-mutation-quota.js';
import { applyClientQuota, type ClientQuotaImage } from '../../src/metadata/client-quotas.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { WireClient, call } from '../server/wire-client.js';
import { scrape, valueOf } from './metrics-scrape.js';

const WINDOWS = { windowCount: 11, windowSizeMs: 1000 };

function quotas(key: string, value: number): Map<string, ClientQuotaImage> {
  const map = new Map<string, ClientQuotaImage>();
  applyClientQuota(map, { entity: [{ entityType: 'client-id', entityName: 'c1' }], key, value, remove: false });
  return map;
}

async function values(registry: Registry): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const value of metric.values) found.set(`${metric.name}{${value.labels.user},${value.labels.client_id}}`, value.value);
  }
  return found;
}

test('quota metrics: byte-rate, request-time, mutation-rate, tokens and throttle-time per sensor, under Kafka\'s names', async () => {
  const clock = { nowMs: 100_000 };
  const nowMs = () => clock.nowMs;
  const produce = new ClientQuotaManager('producer_byte_rate', WINDOWS, nowMs);
  produce.update(quotas('producer_byte_rate', 1000));
  const request = new ClientRequestQuotaManager(WINDOWS, nowMs);
  request.update(quotas('request_percentage', 50));
  const mutations = new ControllerMutationQuotaManager(WINDOWS, nowMs);
  mutations.update(quotas('controller_mutation_rate', 1));
  const registry = new Registry();
  const metrics = new QuotaMetrics(registry, { produce, request, controllerMutation: mutations });

  metrics.refresh();
  assert.deepEqual([...(await values(registry)).keys()], [], 'no sensor yet');

  // 20 000 bytes over 10 windows: 2000 B/s, throttled (2000 - 1000) / 1000 × 10 s.
  assert.equal(produce.recordAndGetThrottleTimeMs('ANONYMOUS', 'c1', 20_000), 10_000);
  // 1000 ms of loop time: 100 percent-seconds over 10 s, 10%: under 50.
  assert.equal(request.recordRequestTimeAndGetThrottleTimeMs('User:ANONYMOUS', 'c1', 1000), 0);
  const quota = mutations.newQuotaFor({ principal: 'User:ANONYMOUS', clientId: 'c1', apiVersion: 7 }, { strictSinceVersion: 6 });
  assert.equal(quota.record(15), true);
  assert.equal(quota.record(1), false);
  assert.equal(controllerQuotaThrottleTimeMs(quota, undefined), 4000);

  metrics.refresh();
  assert.deepEqual(
    Object.fromEntries(await values(registry)),
    {
      'kafka_server_produce_byte_rate{,c1}': 2000,
      'kafka_server_produce_throttle_time{,c1}': 10_000,
      'kafka_server_request_request_time{,c1}': 10,
      'kafka_server_request_throttle_time{,c1}': 0,
      'kafka_server_controllermutation_mutation_rate{,c1}': 1.5,
      'kafka_server_controllermutation_throttle_time{,c1}': 4000,
      'kafka_server_controllermutation_tokens{,c1}': -4,
    },
  );
  // An hour and more later a new sensor's creation drops the idle ones.
  clock.nowMs += 3_600_000;
  produce.recordAndGetThrottleTimeMs('ANONYMOUS', 'c2', 1);
  metrics.refresh();
  assert.equal((await values(registry)).has('kafka_server_produce_byte_rate{,c1}'), false);
});

test('GET /metrics on a node shows the controller mutation sensor of a client that created topics', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-quota-metrics-'));
  const broker = await startBroker({ config: { 'log.dirs': dir, 'metrics.listener': 'http://127.0.0.1:0' }, logger: silentLogger });
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    // WireClient's client id is spool-test; a burst of 10 × 11 tokens.
    const [altered] = await broker.broker.controller.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'spool-test' }], ops: [{ key: 'controller_mutation_rate', value: 10, remove: false }] }], { validateOnly: false });
    assert.equal(altered?.errorCode, ErrorCode.NONE);
    const created = await call(client, CreateTopics, 7, { topics: [{ name: 'metered-mutations', numPartitions: 5, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
    assert.equal(created.topics[0]?.errorCode, ErrorCode.NONE);
    const samples = await scrape(broker.broker);
    const labels = { user: '', client_id: 'spool-test' };
    const tokens = valueOf(samples, 'kafka_server_controllermutation_tokens', labels);
    assert.ok(tokens !== undefined && tokens >= 105 && tokens <= 110, `tokens ${tokens}: 110 less the 5 partitions, refilled at 10 a second since`);
    assert.ok((valueOf(samples, 'kafka_server_controllermutation_mutation_rate', labels) ?? 0) > 0);
    assert.equal(valueOf(samples, 'kafka_server_controllermutation_throttle_time', labels), 0);
  } finally {
    client.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
