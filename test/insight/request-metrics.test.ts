/**
 * Proves RequestMetrics' counting without a broker: requests by API and
 * version, Fetch split into FetchConsumer and FetchFollower (by the replica
 * id, in ReplicaState from v15) as Kafka's RequestMetrics names them, error
 * codes counted per response field (NONE included) under the API's own
 * name, with the Produce and Fetch shortcuts counting what the generic walk
 * counts for any other API, and no response (acks=0) counting no error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { RequestMetrics } from '../../src/insight/request-metrics.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const clock = { nowMs: () => 0, monotonicMs: () => 0 };

async function values(registry: Registry, name: string): Promise<Map<string, number>> {
  const metric = await registry.getSingleMetric(name)!.get();
  return new Map(metric.values.map((v) => [JSON.stringify(v.labels), v.value]));
}

test('requests, FetchConsumer and FetchFollower, and error codes are counted as Kafka names them', async () => {
  const registry = new Registry();
  const metrics = new RequestMetrics(registry, { clock, queuedRequestCount: () => 0 });
  const produceBody = { responses: [{ name: 't', partitionResponses: [{ index: 0, errorCode: ErrorCode.NONE }, { index: 1, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }] }, { name: 'u', partitionResponses: [{ index: 0, errorCode: ErrorCode.NONE }] }] };
  metrics.requestCompleted({ apiKey: 0, version: 11, request: {}, body: produceBody, totalTimeMs: 1 });
  metrics.requestCompleted({ apiKey: 0, version: 11, request: {}, body: null, totalTimeMs: 1 });
  const fetchBody = { errorCode: ErrorCode.NONE, responses: [{ topic: 't', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, records: Buffer.alloc(8) }] }] };
  metrics.requestCompleted({ apiKey: 1, version: 12, request: { replicaId: -1 }, body: fetchBody, totalTimeMs: 1 });
  metrics.requestCompleted({ apiKey: 1, version: 12, request: { replicaId: 2 }, body: fetchBody, totalTimeMs: 1 });
  metrics.requestCompleted({ apiKey: 1, version: 17, request: { replicaId: -1, replicaState: { replicaId: 3, replicaEpoch: 5 } }, body: fetchBody, totalTimeMs: 1 });
  // Metadata goes through the generic walk: topic and partition error codes.
  const metadataBody = { topics: [{ errorCode: ErrorCode.NONE, name: 't', partitions: [{ errorCode: ErrorCode.LEADER_NOT_AVAILABLE }, { errorCode: ErrorCode.NONE }] }] };
  metrics.requestCompleted({ apiKey: 3, version: 12, request: {}, body: metadataBody, totalTimeMs: 1 });

  const requests = await values(registry, 'kafka_network_requestmetrics_requests_total');
  assert.equal(requests.get(JSON.stringify({ request: 'Produce', version: '11' })), 2);
  assert.equal(requests.get(JSON.stringify({ request: 'FetchConsumer', version: '12' })), 1);
  assert.equal(requests.get(JSON.stringify({ request: 'FetchFollower', version: '12' })), 1);
  assert.equal(requests.get(JSON.stringify({ request: 'FetchFollower', version: '17' })), 1);
  assert.equal(requests.get(JSON.stringify({ request: 'Metadata', version: '12' })), 1);

  const errors = await values(registry, 'kafka_network_requestmetrics_errors_total');
  assert.deepEqual(Object.fromEntries(errors), {
    [JSON.stringify({ request: 'Produce', error: 'NONE' })]: 2,
    [JSON.stringify({ request: 'Produce', error: 'NOT_LEADER_OR_FOLLOWER' })]: 1,
    [JSON.stringify({ request: 'Fetch', error: 'NONE' })]: 3,
    [JSON.stringify({ request: 'Fetch', error: 'OFFSET_OUT_OF_RANGE' })]: 3,
    [JSON.stringify({ request: 'Metadata', error: 'NONE' })]: 2,
    [JSON.stringify({ request: 'Metadata', error: 'LEADER_NOT_AVAILABLE' })]: 1,
  });

  const counts = await values(registry, 'kafka_network_requestmetrics_totaltimems_count');
  assert.equal(counts.get(JSON.stringify({ request: 'Produce' })), 2);
  assert.equal(counts.get(JSON.stringify({ request: 'FetchFollower' })), 2);
});
