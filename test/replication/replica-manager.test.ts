/**
 * Proves the replica manager, driven by hand-built metadata deltas, serves
 * the data plane as Kafka's does on one broker: it becomes leader and appends
 * with HW = LEO, reads back the exact batch bytes, long-polls fetches until
 * an append (or max.wait.ms on a ManualClock) wakes them, deduplicates
 * idempotent retries (also after a restart, through producer snapshots),
 * refuses gaps and old epochs, fences stale leader epochs, answers unknown
 * partitions, honours min.insync.replicas for acks=all, lists offsets, moves
 * the log start with DeleteRecords, and deletes the logs of deleted topics.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/io/clock.js';
import { realEnv, type Env } from '../../src/io/env.js';
import { SeededRandom } from '../../src/io/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { readBatchHeader } from '../../src/protocol/records/batch.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import type { MetadataDelta, MetadataImage, PartitionRegistration, TopicImage } from '../../src/metadata/image.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';
import type { FetchParams } from '../../src/replication/delayed-fetch.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

function registration(overrides: Partial<PartitionRegistration> = {}): PartitionRegistration {
  return {
    topicId: TOPIC_ID, topicName: 'orders', partition: 0, replicas: [1], isr: [1], elr: [], lastKnownElr: [],
    removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0, ...overrides,
  };
}

function imageWith(partitions: PartitionRegistration[], configs: Map<string, string> = new Map()): { image: MetadataImage; topic: TopicImage } {
  const topic: TopicImage = { name: 'orders', id: TOPIC_ID, partitions: new Map(partitions.map((p) => [p.partition, p])), configs };
  const image: MetadataImage = {
    offset: 1, clusterId: 'test', topicsByName: new Map([['orders', topic]]), topicsById: new Map([[TOPIC_ID, topic]]),
    brokers: new Map(), features: new Map(), brokerConfigs: new Map(), groupConfigs: new Map(), controllers: new Map(), nextProducerId: 0, scramCredentials: new Map(), acls: new Map(), clientQuotas: new Map(),
  };
  return { image, topic };
}

function delta(changed: PartitionRegistration[], deleted: TopicImage[] = []): MetadataDelta {
  return { changedPartitions: changed, deletedTopics: deleted, changedTopicConfigs: [], brokersChanged: false, changedFeatures: new Map(), offset: 1 };
}

async function startManager(options: { dir?: string; env?: Env; config?: Record<string, string | number> } = {}) {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'spool-rm-')));
  const metadata = { image: imageWith([registration()]).image };
  const context = {
    nodeId: 1,
    config: BrokerConfig.fromObject({ 'log.dirs': dir, ...options.config }),
    env: options.env ?? realEnv,
    log: silentLogger,
    metadata,
  };
  const manager = new ReplicaManager(context);
  await manager.start();
  return { manager, dir, metadata };
}

async function lead(manager: ReplicaManager, metadata: { image: MetadataImage }, reg = registration(), configs?: Map<string, string>) {
  const { image } = imageWith([reg], configs);
  metadata.image = image;
  await manager.onMetadataUpdate(delta([reg]), image);
}

const tp = { topic: 'orders', partition: 0 };
const NOW = () => Date.now();

function produce(manager: ReplicaManager, records: Buffer, acks = 1, timeoutMs = 1000) {
  return manager.appendRecords({ timeoutMs, requiredAcks: acks, internalTopicsAllowed: false, entries: [{ topicPartition: tp, records }] }).then((r) => r.get('orders-0')!);
}

const consumerFetch = (overrides: Partial<FetchParams> = {}): FetchParams => ({
  replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolation: 'highWatermark', fetchOnlyFromLeader: true, ...overrides,
});

const fetchInfo = (fetchOffset: number, currentLeaderEpoch = -1) => ({
  topicPartition: tp, fetchOffset, logStartOffset: -1, maxBytes: 1 << 20, currentLeaderEpoch, lastFetchedEpoch: -1,
});

test('leader appends with HW = LEO and serves the same batch bytes back', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata);
  const batch = buildBatch({ records: [{ key: 'a', value: '1', timestamp: NOW() }, { key: 'b', value: '2', timestamp: NOW() }] });
  const first = await produce(manager, Buffer.from(batch));
  assert.equal(first.errorCode, ErrorCode.NONE);
  assert.equal(first.baseOffset, 0);
  const second = await produce(manager, Buffer.from(batch));
  assert.equal(second.baseOffset, 2);
  const [data] = await manager.fetchMessages(consumerFetch(), [fetchInfo(0)]);
  assert.equal(data!.errorCode, ErrorCode.NONE);
  assert.equal(data!.highWatermark, 4);
  assert.equal(data!.lastStableOffset, 4);
  assert.equal(data!.records.length, batch.length * 2);
  const header = readBatchHeader(data!.records, batch.length);
  assert.equal(header.baseOffset, 2);
  assert.equal(header.partitionLeaderEpoch, 0);
  assert.deepEqual(data!.records.subarray(batch.length + 16), batch.subarray(16), 'bytes after the offset and leader epoch are the producer bytes');
});

test('acks=all completes at once with ISR = {self}; min.insync.replicas above the ISR refuses the write', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata);
  const ok = await produce(manager, buildBatch({ records: [{ value: 'x', timestamp: NOW() }] }), -1);
  assert.equal(ok.errorCode, ErrorCode.NONE);
  await lead(manager, metadata, registration({ leaderEpoch: 1 }), new Map([['min.insync.replicas', '2']]));
  await manager.onMetadataUpdate({ ...delta([]), changedTopicConfigs: [metadata.image.topicsByName.get('orders')!] }, metadata.image);
  const refused = await produce(manager, buildBatch({ records: [{ value: 'y', timestamp: NOW() }] }), -1);
  assert.equal(refused.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
  const acksOne = await produce(manager, buildBatch({ records: [{ value: 'z', timestamp: NOW() }] }), 1);
  assert.equal(acksOne.errorCode, ErrorCode.NONE, 'acks=1 ignores min.insync.replicas');
  const invalid = await produce(manager, buildBatch({ records: [{ value: 'w', timestamp: NOW() }] }), 2);
  assert.equal(invalid.errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
});

test('idempotent retries return the original offset; gaps and old epochs are refused', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata);
  const batch = (baseSequence: number, producerEpoch = 0) =>
    buildBatch({ records: [{ value: `s${baseSequence}`, timestamp: NOW() }, { value: 'n', timestamp: NOW() }], producerId: 4000, producerEpoch, baseSequence });
  assert.equal((await produce(manager, batch(0))).baseOffset, 0);
  assert.equal((await produce(manager, batch(2))).baseOffset, 2);
  const retry = await produce(manager, batch(0));
  assert.equal(retry.errorCode, ErrorCode.NONE);
  assert.equal(retry.baseOffset, 0, 'a retry of the first batch gets its original offset');
  assert.equal((await produce(manager, batch(8))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal((await produce(manager, batch(4, 1))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, 'a new epoch must start at 0');
  assert.equal((await produce(manager, batch(0, 1))).baseOffset, 4);
  assert.equal((await produce(manager, batch(2, 0))).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  const [data] = await manager.fetchMessages(consumerFetch(), [fetchInfo(0)]);
  assert.equal(data!.highWatermark, 6, 'no duplicate reached the log');
});

test('a fetch waits for fetch.min.bytes and wakes on the append; an idle one expires at max.wait.ms', async (t) => {
  const clock = new ManualClock(Date.now());
  const env: Env = { ...realEnv, clock, timers: clock, random: new SeededRandom(7) };
  const { manager, dir, metadata } = await startManager({ env });
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata);
  let answered: Awaited<ReturnType<ReplicaManager['fetchMessages']>> | null = null;
  const waiting = manager.fetchMessages(consumerFetch({ maxWaitMs: 500, minBytes: 1 }), [fetchInfo(0)]).then((r) => (answered = r));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, null);
  assert.equal(manager.fetchPurgatory.delayedCount, 1);
  await produce(manager, buildBatch({ records: [{ value: 'wake', timestamp: clock.nowMs() }] }));
  const [woken] = await waiting;
  assert.equal(woken!.highWatermark, 1);
  assert.ok(woken!.records.length > 0);

  let idle: Awaited<ReturnType<ReplicaManager['fetchMessages']>> | null = null;
  const idleFetch = manager.fetchMessages(consumerFetch({ maxWaitMs: 500, minBytes: 1 }), [fetchInfo(1)]).then((r) => (idle = r));
  await new Promise((resolve) => setImmediate(resolve));
  clock.advance(499);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(idle, null);
  clock.advance(1);
  const [expired] = await idleFetch;
  assert.equal(expired!.errorCode, ErrorCode.NONE);
  assert.equal(expired!.records.length, 0);
  assert.equal(manager.fetchPurgatory.delayedCount, 0);
});

test('stale or future leader epochs are fenced; out-of-range offsets and unknown partitions answer errors', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata, registration({ leaderEpoch: 3 }));
  const [fenced, unknownEpoch, outOfRange, current] = await manager.fetchMessages(consumerFetch(), [fetchInfo(0, 2), fetchInfo(0, 4), fetchInfo(5, 3), fetchInfo(0, 3)]);
  assert.equal(fenced!.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(fenced!.highWatermark, -1);
  assert.equal(unknownEpoch!.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
  assert.equal(outOfRange!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  assert.equal(current!.errorCode, ErrorCode.NONE);
  const [missing] = await manager.fetchMessages(consumerFetch(), [{ ...fetchInfo(0), topicPartition: { topic: 'nope', partition: 0 } }]);
  assert.equal(missing!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const notHosted = await manager.appendRecords({ timeoutMs: 10, requiredAcks: 1, internalTopicsAllowed: false, entries: [{ topicPartition: { topic: 'orders', partition: 9 }, records: buildBatch({ records: [{ value: 'x' }] }) }] });
  assert.equal(notHosted.get('orders-9')!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.deepEqual(manager.lastOffsetForLeaderEpoch({ topicPartition: tp, currentLeaderEpoch: 3, leaderEpoch: 3, fetchOnlyFromLeader: true }), { errorCode: 0, leaderEpoch: 3, endOffset: 0 });
});

test('ListOffsets and DeleteRecords move through earliest, latest and timestamps', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata, registration({ leaderEpoch: 2 }));
  const base = NOW() - 10_000;
  for (let i = 0; i < 3; i++) await produce(manager, buildBatch({ records: [{ value: `${i}`, timestamp: base + i * 1000 }] }));
  const list = (timestamp: number) => manager.fetchOffsetForTimestamp({ topicPartition: tp, timestamp, currentLeaderEpoch: -1, isolationLevel: 0, fetchOnlyFromLeader: true });
  assert.deepEqual(await list(-1), { errorCode: 0, timestamp: -1, offset: 3, leaderEpoch: 2 });
  assert.deepEqual(await list(-2), { errorCode: 0, timestamp: -1, offset: 0, leaderEpoch: 2 });
  assert.equal((await list(base + 500)).offset, 1);
  assert.equal((await list(base + 5000)).offset, -1, 'nothing at or after that timestamp');
  const max = await list(-3);
  assert.equal(max.offset, 2);
  assert.equal(max.timestamp, base + 2000);
  assert.deepEqual(await list(-5), { errorCode: 0, timestamp: -1, offset: -1, leaderEpoch: -1 });
  assert.deepEqual(await manager.deleteRecords(tp, 2), { errorCode: 0, lowWatermark: 2 });
  assert.equal((await list(-2)).offset, 2);
  assert.equal((await manager.deleteRecords(tp, 9)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  const [gone] = await manager.fetchMessages(consumerFetch(), [fetchInfo(0)]);
  assert.equal(gone!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
});

test('producer state survives a clean restart: a retried batch is still deduplicated', async (t) => {
  const first = await startManager();
  await lead(first.manager, first.metadata);
  const batch = () => buildBatch({ records: [{ value: 'once', timestamp: NOW() }], producerId: 77, producerEpoch: 2, baseSequence: 10 });
  assert.equal((await produce(first.manager, batch())).baseOffset, 0);
  assert.equal((await produce(first.manager, buildBatch({ records: [{ value: 'plain', timestamp: NOW() }] }))).baseOffset, 1);
  await first.manager.stop();
  assert.ok((await readdir(join(first.dir, 'orders-0'))).includes('00000000000000000002.snapshot'));

  const second = await startManager({ dir: first.dir });
  t.after(async () => { await second.manager.stop(); await rm(first.dir, { recursive: true, force: true }); });
  await lead(second.manager, second.metadata, registration({ leaderEpoch: 1 }));
  const retry = await produce(second.manager, batch());
  assert.equal(retry.errorCode, ErrorCode.NONE);
  assert.equal(retry.baseOffset, 0);
  const next = await produce(second.manager, buildBatch({ records: [{ value: 'next', timestamp: NOW() }], producerId: 77, producerEpoch: 2, baseSequence: 11 }));
  assert.equal(next.baseOffset, 2);
});

test('a deleted topic loses its log', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata);
  await produce(manager, buildBatch({ records: [{ value: 'x', timestamp: NOW() }] }));
  const { topic } = imageWith([registration()]);
  await manager.onMetadataUpdate(delta([], [topic]), { ...metadata.image, topicsByName: new Map(), topicsById: new Map() });
  assert.equal((await readdir(dir)).includes('orders-0'), false);
  assert.equal(manager.hostedPartitions().length, 0);
});

test('after a crash (no clean shutdown, no snapshot) replaying the log still deduplicates a retry', async (t) => {
  const first = await startManager();
  await lead(first.manager, first.metadata);
  const batch = () => buildBatch({ records: [{ value: 'once', timestamp: NOW() }], producerId: 91, producerEpoch: 0, baseSequence: 0 });
  assert.equal((await produce(first.manager, batch())).baseOffset, 0);
  // No stop(): the process "dies" here; the next manager opens the same directory.
  const second = await startManager({ dir: first.dir });
  t.after(async () => { await second.manager.stop(); await rm(first.dir, { recursive: true, force: true }); });
  await lead(second.manager, second.metadata, registration({ leaderEpoch: 1 }));
  const retry = await produce(second.manager, batch());
  assert.equal(retry.baseOffset, 0);
  const [data] = await second.manager.fetchMessages(consumerFetch(), [fetchInfo(0)]);
  assert.equal(data!.highWatermark, 1);
});

test('logs on disk that the first metadata image does not claim are deleted', async (t) => {
  const first = await startManager();
  await lead(first.manager, first.metadata);
  await produce(first.manager, buildBatch({ records: [{ value: 'x', timestamp: NOW() }] }));
  await first.manager.stop();
  const second = await startManager({ dir: first.dir });
  t.after(async () => { await second.manager.stop(); await rm(first.dir, { recursive: true, force: true }); });
  const empty = { ...second.metadata.image, topicsByName: new Map(), topicsById: new Map() };
  second.metadata.image = empty;
  await second.manager.onMetadataUpdate(delta([]), empty);
  assert.equal((await readdir(first.dir)).includes('orders-0'), false);
});

test('segment rolls snapshot producer state at the new base offset; a crash restart replays from there', async (t) => {
  const first = await startManager();
  await lead(first.manager, first.metadata, registration(), new Map([['internal.segment.bytes', '600']]));
  const batch = (baseSequence: number) => buildBatch({ records: [{ value: Buffer.alloc(200, baseSequence), timestamp: NOW() }], producerId: 5, producerEpoch: 0, baseSequence });
  for (let seq = 0; seq < 6; seq++) assert.equal((await produce(first.manager, batch(seq))).baseOffset, seq);
  const files = (await readdir(join(first.dir, 'orders-0'))).sort();
  const segments = files.filter((name) => name.endsWith('.log')).map((name) => Number(name.slice(0, 20)));
  const snapshots = files.filter((name) => name.endsWith('.snapshot')).map((name) => Number(name.slice(0, 20)));
  assert.ok(segments.length > 1, 'the small segment size rolled the log');
  assert.deepEqual(snapshots, segments.slice(1), 'one snapshot at each rolled segment base offset');
  // Crash: no stop. The new manager loads the latest snapshot and replays the active segment.
  const second = await startManager({ dir: first.dir });
  t.after(async () => { await second.manager.stop(); await rm(first.dir, { recursive: true, force: true }); });
  await lead(second.manager, second.metadata, registration({ leaderEpoch: 1 }), new Map([['internal.segment.bytes', '600']]));
  // As in Kafka, a snapshot keeps each producer's last batch; the batches after it come back by replay.
  const latestSnapshot = snapshots.at(-1)!;
  for (let seq = latestSnapshot - 1; seq < 6; seq++) assert.equal((await produce(second.manager, batch(seq))).baseOffset, seq, `retry of sequence ${seq}`);
  if (latestSnapshot - 2 >= 0) assert.equal((await produce(second.manager, batch(latestSnapshot - 2))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal((await produce(second.manager, batch(7))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal((await produce(second.manager, batch(6))).baseOffset, 6);
});

test('a follower replica refuses appends with NOT_LEADER_OR_FOLLOWER', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata, registration({ replicas: [2, 1], isr: [2, 1], leader: 2, leaderEpoch: 4 }));
  const refused = await produce(manager, buildBatch({ records: [{ value: 'x', timestamp: NOW() }] }));
  assert.equal(refused.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(refused.logStartOffset, -1);
  const [read] = await manager.fetchMessages(consumerFetch(), [fetchInfo(0)]);
  assert.equal(read!.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'fetchOnlyFromLeader');
});

test('the response byte budget: the first batch comes whole even if larger (KIP-74), later partitions stay within it', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  const partitions = [registration({ partition: 0 }), registration({ partition: 1 })];
  const { image } = imageWith(partitions);
  metadata.image = image;
  await manager.onMetadataUpdate(delta(partitions), image);
  const big = buildBatch({ records: [{ value: Buffer.alloc(5000), timestamp: NOW() }] });
  for (const partition of [0, 1]) {
    const result = await manager.appendRecords({ timeoutMs: 100, requiredAcks: 1, internalTopicsAllowed: false, entries: [{ topicPartition: { topic: 'orders', partition }, records: Buffer.from(big) }] });
    assert.equal(result.get(`orders-${partition}`)!.errorCode, ErrorCode.NONE);
  }
  const info = (partition: number) => ({ ...fetchInfo(0), topicPartition: { topic: 'orders', partition }, maxBytes: 1000 });
  const [first, second] = await manager.fetchMessages(consumerFetch({ maxBytes: 2000 }), [info(0), info(1)]);
  assert.equal(first!.records.length, big.length, 'larger than both limits, returned whole');
  assert.equal(second!.records.length, 0, 'the budget is spent; an incomplete batch is not sent');
  assert.equal(second!.highWatermark, 1);
});

/** Bytes one partition gives a sequential read (KIP-74 first batch whole, else a slice that may cut the last batch). */
function sequentialBytes(batchSizes: readonly number[], limitBytes: number, minOneMessage: boolean): number {
  const total = batchSizes.reduce((sum, size) => sum + size, 0);
  if (total === 0) return 0;
  if (batchSizes[0]! > limitBytes) return minOneMessage ? batchSizes[0]! : 0;
  return Math.min(total, limitBytes);
}

test('the byte budget over many partitions read together gives exactly what reading them in order gives (seeded)', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  const random = new SeededRandom(20261129);
  const partitionCount = 8;
  const partitions = Array.from({ length: partitionCount }, (_, partition) => registration({ partition }));
  const { image } = imageWith(partitions);
  metadata.image = image;
  await manager.onMetadataUpdate(delta(partitions), image);
  const batchSizes: number[][] = [];
  for (let partition = 0; partition < partitionCount; partition++) {
    batchSizes.push([]);
    for (let count = random.nextInt(4); count > 0; count--) {
      const batch = buildBatch({ records: [{ value: Buffer.alloc(random.nextInt(3000)), timestamp: NOW() }] });
      const result = await manager.appendRecords({ timeoutMs: 100, requiredAcks: 1, internalTopicsAllowed: false, entries: [{ topicPartition: { topic: 'orders', partition }, records: batch }] });
      assert.equal(result.get(`orders-${partition}`)!.errorCode, ErrorCode.NONE);
      batchSizes[partition]!.push(batch.length);
    }
  }
  for (let round = 0; round < 200; round++) {
    const order = Array.from({ length: partitionCount }, (_, partition) => partition).sort(() => random.nextInt(3) - 1);
    const maxBytes = random.nextInt(15_000);
    const infos = order.map((partition) => ({ ...fetchInfo(0), topicPartition: { topic: 'orders', partition }, maxBytes: random.nextInt(5000) }));
    const data = await manager.readFromLog(consumerFetch({ maxBytes }), infos);
    let remainingBytes = maxBytes;
    let minOneMessage = true;
    infos.forEach((info, index) => {
      const expected = sequentialBytes(batchSizes[info.topicPartition.partition]!, Math.min(info.maxBytes, remainingBytes), minOneMessage);
      assert.equal(data[index]!.records.length, expected, `round ${round}, partition ${info.topicPartition.partition} at ${index}`);
      if (expected > 0) minOneMessage = false;
      remainingBytes = Math.max(0, remainingBytes - expected);
    });
  }
});

test('LogAppendTime topics stamp the append time and answer it', async (t) => {
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata, registration(), new Map([['message.timestamp.type', 'LogAppendTime']]));
  const before = Date.now();
  const result = await produce(manager, buildBatch({ records: [{ value: 'x', timestamp: 1000 }] }));
  assert.equal(result.errorCode, ErrorCode.NONE);
  assert.ok(result.logAppendTimeMs >= before);
  const [data] = await manager.fetchMessages(consumerFetch(), [fetchInfo(0)]);
  const header = readBatchHeader(data!.records);
  assert.equal(header.timestampType, 1);
  assert.equal(header.maxTimestamp, result.logAppendTimeMs);
});

test('a __cluster_metadata topic in an old image is not served and its directory is left to the Raft log; other partitions are served', async (t) => {
  // Bug pinned: such a topic (creatable before the controller refused the name) opened a Log over the metadata log's files.
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await mkdir(join(dir, '__cluster_metadata-0'));
  await writeFile(join(dir, '__cluster_metadata-0', 'quorum-state'), '{}');
  const legacy = registration({ topicName: '__cluster_metadata', topicId: 'Ht9bqjGOQ7uLmMtu2f2KtA' });
  metadata.image = imageWith([registration()]).image;
  await manager.onMetadataUpdate(delta([legacy, registration()]), metadata.image);
  assert.equal((await produce(manager, buildBatch({ records: [{ value: 'x' }] }))).errorCode, ErrorCode.NONE);
  const legacyTopic: TopicImage = { name: '__cluster_metadata', id: legacy.topicId, partitions: new Map([[0, legacy]]), configs: new Map() };
  await manager.onMetadataUpdate(delta([], [legacyTopic]), metadata.image);
  assert.deepEqual(await readdir(join(dir, '__cluster_metadata-0')), ['quorum-state']);
  assert.ok((await readdir(dir)).every((name) => !name.startsWith('__cluster_metadata-0.')), 'nothing renamed for deletion');
});

test('a fetched batch queued behind becoming leader is not appended (regression: followers looping on a diverging epoch)', async (t) => {
  // Bug: a follower's fetch answered by the old leader was appended after makeLeader had begun the new epoch at
  // the log end, so batches stamped with the old epoch followed the new epoch's start; every follower of the new
  // leader then truncated and refetched those offsets for ever (found by test/fault/'s clean bounce).
  const { manager, dir, metadata } = await startManager();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await lead(manager, metadata, registration({ leaderEpoch: 3 }));
  const partition = manager.hostedPartitions().find((p) => p.topicPartition.topic === 'orders')!;
  assert.equal(partition.isLeader, true);
  const fromOldLeader = Buffer.from(buildBatch({ records: [{ value: 'old epoch', timestamp: NOW() }], partitionLeaderEpoch: 2 }));
  assert.equal(await partition.appendRecordsAsFollower(fromOldLeader), null);
  assert.equal(partition.log.logEndOffset, 0);
  assert.deepEqual(partition.log.leaderEpochCache.epochEntries, [{ epoch: 3, startOffset: 0 }]);
});
