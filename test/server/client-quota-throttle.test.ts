/**
 * Client byte-rate quotas on a whole node on simulated io (ManualClock):
 *
 * - A Produce from a client over its producer_byte_rate is answered with
 *   Kafka's throttle time, (rate - bound) / bound × window, where a first
 *   request's rate is its bytes over quota.window.num - 1 windows; the
 *   connection is asked to mute for that long.
 * - A client without a quota gets throttleTimeMs 0 and no mute.
 * - A consumer Fetch over its consumer_byte_rate is answered with no
 *   partitions and the throttle time; its bytes are taken back, so the
 *   same fetch at once is measured the same (not twice the bytes).
 * - controller_mutation_rate (KIP-599): CreateTopics v7 refuses the topics
 *   that find the token bucket below zero with THROTTLING_QUOTA_EXCEEDED
 *   and creates the others, with the throttle time and a mute; v5 creates
 *   them all and is only throttled. DeleteTopics (strict from v5) and
 *   CreatePartitions (strict from v3) likewise. A validateOnly request is
 *   checked against the quota too, as Kafka's controller does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { SeededRandom } from '../../src/io/random.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { decodeRequest, encodeRequest } from '../../src/protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../src/protocol/schema.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { DeleteTopics } from '../../src/protocol/schemas/20-delete-topics.js';
import { CreatePartitions } from '../../src/protocol/schemas/37-create-partitions.js';
import { SIM_LOG_DIR, simBroker, startNode, type SimNode } from './sim-broker.js';
import { produceBody, fetchBody } from './wire-client.js';

const TOPIC = 'quota-t';
const RECORD_BYTES = 20_000;

/** Runs `operation` to completion, letting the simulated node's queued work run without moving its clock. */
async function drive<T>(node: SimNode, operation: Promise<T>): Promise<T> {
  let outcome: { value: T } | { error: unknown } | null = null;
  operation.then((value) => (outcome = { value }), (error: unknown) => (outcome = { error }));
  while (outcome === null) {
    node.clock.advance(0);
    await nextTurn();
  }
  const settled = outcome as { value: T } | { error: unknown };
  if ('error' in settled) throw settled.error;
  return settled.value;
}

/** Sends one request through the node's handler table as a connection would; returns the body and the mute asked for. */
async function send<A extends ApiDef>(node: SimNode, api: A, version: number, clientId: string, body: Partial<RequestOf<A>>) {
  const frame = Buffer.concat(encodeRequest(api, { apiVersion: version, correlationId: 1, clientId }, body as never)).subarray(4);
  let mutedMs = 0;
  const connection = { connectionId: 'c', listenerName: 'PLAINTEXT', clientAddress: '127.0.0.1', principal: 'User:ANONYMOUS', requestBytes: frame.length, throttle: (ms: number) => (mutedMs = ms) };
  const outcome = await drive(node, node.broker.handlers.handle(decodeRequest(frame), connection));
  assert.equal(outcome.kind, 'respond');
  return { response: (outcome as { body: unknown }).body as ResponseOf<A>, mutedMs, requestBytes: frame.length };
}

async function quotaNode(quotas: { entity: { entityType: string; entityName: string | null }[]; key: string; value: number }[]): Promise<SimNode> {
  const node = simBroker(new SimFileSystem(new SeededRandom(1)), { config: { 'log.dirs': SIM_LOG_DIR } });
  await startNode(node);
  const [created] = await drive(node, node.broker.controller.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false }));
  assert.equal(created?.errorCode, ErrorCode.NONE);
  const alterations = quotas.map(({ entity, key, value }) => ({ entity, ops: [{ key, value, remove: false }] }));
  const results = await drive(node, node.broker.controller.alterClientQuotas(alterations, { validateOnly: false }));
  assert.ok(results.every((r) => r.errorCode === ErrorCode.NONE));
  return node;
}

const records = (node: SimNode) => buildBatch({ records: [{ key: 'k', value: Buffer.alloc(RECORD_BYTES, 7), timestamp: node.clock.nowMs() }] });

test('a producer over producer_byte_rate gets Kafka\'s throttle time and a muted connection; one without a quota gets 0', async () => {
  const node = await quotaNode([{ entity: [{ entityType: 'client-id', entityName: 'c1' }], key: 'producer_byte_rate', value: 1000 }]);
  try {
    const throttled = await send(node, Produce, 9, 'c1', produceBody(TOPIC, records(node), 1));
    assert.equal(throttled.response.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE, 'the records are appended all the same');
    // rate = bytes / 10 s (11 samples: at least 10 windows of 1 s); throttle = (rate - 1000) / 1000 × 10 000 ms.
    const expectedMs = Math.round((throttled.requestBytes / 10 - 1000) / 1000 * 10_000);
    assert.equal(throttled.response.throttleTimeMs, expectedMs);
    assert.equal(throttled.mutedMs, expectedMs);

    const free = await send(node, Produce, 9, 'no-quota', produceBody(TOPIC, records(node), 1));
    assert.deepEqual([free.response.throttleTimeMs, free.mutedMs], [0, 0]);
  } finally {
    await drive(node, node.broker.stop());
  }
});

test('a consumer over consumer_byte_rate gets an empty throttled answer; its bytes are not counted', async () => {
  const node = await quotaNode([{ entity: [{ entityType: 'client-id', entityName: null }], key: 'consumer_byte_rate', value: 1000 }]);
  try {
    await send(node, Produce, 9, 'producer', produceBody(TOPIC, records(node), 1));
    const fetch = () => send(node, Fetch, 12, 'consumer-1', fetchBody(TOPIC, 0) as never);
    const throttled = await fetch();
    assert.ok(throttled.response.throttleTimeMs > 0, 'over the default client-id quota');
    assert.equal(throttled.mutedMs, throttled.response.throttleTimeMs);
    assert.deepEqual(throttled.response.responses, []);
    // The throttled answer's bytes were taken back: the next fetch measures the same bytes again, and is throttled the same.
    const again = await fetch();
    assert.equal(again.response.throttleTimeMs, throttled.response.throttleTimeMs);
  } finally {
    await drive(node, node.broker.stop());
  }
});

const newTopics = (names: readonly string[], numPartitions: number, validateOnly = false) => ({
  topics: names.map((name) => ({ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] })),
  timeoutMs: 5000,
  validateOnly,
});
const codesOf = (results: readonly { name: string | null; errorCode: number }[]) => results.map((r) => `${r.name}:${r.errorCode}`);

test('controller_mutation_rate: CreateTopics v7 refuses the topics past the burst with THROTTLING_QUOTA_EXCEEDED; v5 is only throttled', async () => {
  // 1 partition a second over 11 windows of 1 s: a burst of 11.
  const node = await quotaNode([{ entity: [{ entityType: 'client-id', entityName: 'mutator' }], key: 'controller_mutation_rate', value: 1 }]);
  try {
    const strict = await send(node, CreateTopics, 7, 'mutator', newTopics(['a', 'b', 'c'], 10));
    const THROTTLED = ErrorCode.THROTTLING_QUOTA_EXCEEDED;
    assert.deepEqual(codesOf(strict.response.topics), ['a:0', 'b:0', `c:${THROTTLED}`], 'b takes the bucket from 1 to -9; c finds it below zero');
    assert.equal(strict.response.topics[2]!.errorMessage, null, "Kafka leaves out the error's default message");
    assert.equal(strict.response.throttleTimeMs, 9000);
    assert.equal(strict.mutedMs, 9000);
    assert.ok(node.broker.metadata.image.topicsByName.has('b') && !node.broker.metadata.image.topicsByName.has('c'));

    const dryRun = await send(node, CreateTopics, 7, 'mutator', newTopics(['c'], 1, true));
    assert.deepEqual(codesOf(dryRun.response.topics), [`c:${THROTTLED}`], 'validateOnly is checked against the quota too');

    const permissive = await send(node, CreateTopics, 5, 'mutator', newTopics(['c', 'd'], 1));
    assert.deepEqual(codesOf(permissive.response.topics), ['c:0', 'd:0']);
    assert.equal(permissive.response.throttleTimeMs, 11_000, 'the bucket at -11');
    assert.equal(permissive.mutedMs, 11_000);

    const other = await send(node, CreateTopics, 7, 'other', newTopics(['e'], 10));
    assert.deepEqual([codesOf(other.response.topics), other.response.throttleTimeMs, other.mutedMs], [['e:0'], 0, 0], 'a client without the quota');
  } finally {
    await drive(node, node.broker.stop());
  }
});

test('controller_mutation_rate: DeleteTopics is strict from v5, CreatePartitions from v3; older versions are only throttled', async () => {
  const node = await quotaNode([{ entity: [{ entityType: 'client-id', entityName: 'mutator' }], key: 'controller_mutation_rate', value: 1 }]);
  const THROTTLED = ErrorCode.THROTTLING_QUOTA_EXCEEDED;
  try {
    const created = await send(node, CreateTopics, 7, 'free', newTopics(['a', 'b', 'c'], 6));
    assert.deepEqual(codesOf(created.response.topics), ['a:0', 'b:0', 'c:0']);
    const deleted = await send(node, DeleteTopics, 5, 'mutator', { topicNames: ['a', 'b', 'c'], timeoutMs: 5000 });
    assert.deepEqual(codesOf(deleted.response.responses), ['a:0', 'b:0', `c:${THROTTLED}`], '11 - 6 - 6 = -1 after b');
    assert.equal(deleted.response.throttleTimeMs, 1000);
    const grow = (count: number) => ({ topics: [{ name: 'c', count, assignments: null }], timeoutMs: 5000, validateOnly: false });
    const strictGrow = await send(node, CreatePartitions, 3, 'mutator', grow(8));
    assert.deepEqual(codesOf(strictGrow.response.results), [`c:${THROTTLED}`]);
    const permissiveGrow = await send(node, CreatePartitions, 2, 'mutator', grow(8));
    assert.deepEqual(codesOf(permissiveGrow.response.results), ['c:0']);
    assert.equal(permissiveGrow.response.throttleTimeMs, 3000, '-1 - 2 tokens');
    const permissiveDelete = await send(node, DeleteTopics, 4, 'mutator', { topicNames: ['c'], timeoutMs: 5000 });
    assert.deepEqual(codesOf(permissiveDelete.response.responses), ['c:0']);
    assert.equal(permissiveDelete.response.throttleTimeMs, 11_000, '-3 - 8 tokens');
    assert.equal(permissiveDelete.mutedMs, 11_000);
  } finally {
    await drive(node, node.broker.stop());
  }
});
