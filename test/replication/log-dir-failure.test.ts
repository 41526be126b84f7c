/**
 * Proves Kafka's log-directory failure handling on a whole node over the
 * simulated disk: any I/O error in a log directory (a producer snapshot at
 * roll, a segment write, a checkpoint) takes the directory offline; its
 * partitions answer KAFKA_STORAGE_ERROR to Produce, Fetch and ListOffsets,
 * DescribeLogDirs lists it with KAFKA_STORAGE_ERROR, a failed write is never
 * acknowledged (its retry neither), other directories keep serving, and the
 * node stops once the metadata log directory or the last directory is gone.
 * After a restart the retried batch is in the log exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import { describeLogDirsHandler } from '../../src/server/apis/35-describe-log-dirs.js';
import type { SpoolNode } from '../../src/node/node.js';
import type { RequestContext } from '../../src/server/handler.js';
import type { ApiContext } from '../../src/server/api-context.js';
import { settle, simBroker, startNode, type SimNode } from '../server/sim-broker.js';

const PRODUCER_ID = 4000;

function idempotentBatch(sequence: number, valueBytes = 120): Buffer {
  return buildBatch({
    records: [{ key: `k${sequence}`, value: Buffer.alloc(valueBytes, sequence), timestamp: 1_700_000_000_000 }],
    producerId: PRODUCER_ID,
    producerEpoch: 0,
    baseSequence: sequence,
  });
}

async function createTopic(broker: SpoolNode, name: string, options: { partitions?: number; configs?: Record<string, string> } = {}): Promise<void> {
  const configs = Object.entries(options.configs ?? {}).map(([configName, value]) => ({ name: configName, value }));
  const [result] = await broker.controller.createTopics([{ name, numPartitions: options.partitions ?? 1, replicationFactor: 1, assignments: [], configs }], {
    validateOnly: false,
  });
  assert.equal(result!.errorCode, ErrorCode.NONE);
}

async function produce(broker: SpoolNode, topic: string, records: Buffer, partition = 0) {
  const results = await broker.replicaManager.appendRecords({
    timeoutMs: 1000,
    requiredAcks: -1,
    internalTopicsAllowed: false,
    entries: [{ topicPartition: { topic, partition }, records }],
  });
  return results.get(`${topic}-${partition}`)!;
}

async function fetchError(broker: SpoolNode, topic: string, partition = 0): Promise<number> {
  const params = { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolation: 'highWatermark' as const, fetchOnlyFromLeader: true };
  const info = { topicPartition: { topic, partition }, fetchOffset: 0, logStartOffset: -1, maxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 };
  const [data] = await broker.replicaManager.fetchMessages(params, [info]);
  return data!.errorCode;
}

async function listOffsetsError(broker: SpoolNode, topic: string): Promise<number> {
  const result = await broker.replicaManager.fetchOffsetForTimestamp({
    topicPartition: { topic, partition: 0 },
    timestamp: -1,
    currentLeaderEpoch: -1,
    isolationLevel: 0,
    fetchOnlyFromLeader: true,
  });
  return result.errorCode;
}

async function describeLogDirs(broker: SpoolNode) {
  const response = await describeLogDirsHandler({ replicaManager: broker.replicaManager } as ApiContext).handle({ topics: null } as never, {} as RequestContext);
  return (response as { results: { logDir: string; errorCode: number; topics: unknown[] }[] }).results;
}

async function start(fs: SimFileSystem, config: Record<string, string | number> = {}): Promise<SimNode> {
  const node = simBroker(fs, { config });
  await startNode(node);
  return node;
}

/** Sequence numbers of the batches in a partition's log, in offset order. */
async function sequencesInLog(broker: SpoolNode, topic: string): Promise<number[]> {
  const log = broker.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === topic)!.log;
  const sequences: number[] = [];
  for (let offset = log.logStartOffset; offset < log.logEndOffset; ) {
    const { records } = await log.read(offset, { maxBytes: 1 << 20 });
    for (const { header } of iterateBatches(records)) {
      sequences.push(header.baseSequence);
      offset = header.lastOffset + 1;
    }
  }
  return sequences;
}

test('regression: a failed producer snapshot at segment roll left the log online and the retry duplicated the batch', async () => {
  const fs = new SimFileSystem(new SeededRandom(11));
  const first = await start(fs);
  let halted: string | null = null;
  void first.broker.halted.then((reason) => (halted = reason));
  await createTopic(first.broker, 'orders', { configs: { 'internal.segment.bytes': '600' } });
  fs.injectFault({ operation: 'writeFileAtomic', code: 'EIO', pathIncludes: '.snapshot', count: Infinity });
  let sequence = 0;
  let failed: { sequence: number; errorCode: number } | null = null;
  for (; sequence < 20 && failed === null; sequence++) {
    const result = await produce(first.broker, 'orders', idempotentBatch(sequence));
    if (result.errorCode !== ErrorCode.NONE) failed = { sequence, errorCode: result.errorCode };
  }
  assert.deepEqual(failed, { sequence: sequence - 1, errorCode: ErrorCode.KAFKA_STORAGE_ERROR }, 'the append that rolled fails with KAFKA_STORAGE_ERROR');
  const retry = await produce(first.broker, 'orders', idempotentBatch(failed.sequence));
  assert.equal(retry.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'the retry is not acknowledged either');
  assert.equal(await fetchError(first.broker, 'orders'), ErrorCode.KAFKA_STORAGE_ERROR);
  assert.equal(await listOffsetsError(first.broker, 'orders'), ErrorCode.KAFKA_STORAGE_ERROR);
  const [dir] = await describeLogDirs(first.broker);
  assert.equal(dir!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
  assert.deepEqual(dir!.topics, []);
  await settle(first.clock);
  assert.match(halted ?? '', /has failed/, 'the only log directory (also the metadata one) is gone: the node stops');
  assert.equal(first.broker.running, false);

  fs.clearFaults();
  const second = await start(fs);
  const again = await produce(second.broker, 'orders', idempotentBatch(failed.sequence));
  assert.equal(again.errorCode, ErrorCode.NONE);
  const sequences = await sequencesInLog(second.broker, 'orders');
  assert.deepEqual(sequences, Array.from({ length: failed.sequence + 1 }, (_, i) => i), 'every batch once, the failed one included');
  await second.broker.stop();
});

test('a failed log directory answers KAFKA_STORAGE_ERROR while the others serve; the node stops with the last one', async () => {
  const fs = new SimFileSystem(new SeededRandom(12));
  const node = await start(fs, { 'log.dirs': '/disk-a,/disk-b', 'metadata.log.dir': '/disk-meta' });
  let halted: string | null = null;
  void node.broker.halted.then((reason) => (halted = reason));
  await createTopic(node.broker, 'spread', { partitions: 2 });
  const dirOf = (partition: number) => node.broker.replicaManager.hostedPartitions().find((p) => p.topicPartition.partition === partition)!.log.dir;
  assert.notEqual(dirOf(0).split('/')[1], dirOf(1).split('/')[1], 'one partition in each directory');
  const failing = dirOf(0).split('/')[1]!;
  fs.injectFault({ operation: 'write', code: 'EIO', pathIncludes: `/${failing}/` });
  assert.equal((await produce(node.broker, 'spread', idempotentBatch(0), 0)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
  assert.equal((await produce(node.broker, 'spread', buildBatch({ records: [{ value: 'ok' }] }), 1)).errorCode, ErrorCode.NONE);
  assert.equal(await fetchError(node.broker, 'spread', 0), ErrorCode.KAFKA_STORAGE_ERROR);
  assert.equal(await fetchError(node.broker, 'spread', 1), ErrorCode.NONE);
  const dirs = new Map((await describeLogDirs(node.broker)).map((dir) => [dir.logDir, dir.errorCode]));
  assert.deepEqual(dirs, new Map([[`/${failing}`, ErrorCode.KAFKA_STORAGE_ERROR], [dirOf(1).replace(/\/spread-1$/, ''), ErrorCode.NONE]]));
  assert.equal(halted, null, 'one directory is left: the node goes on');

  // A checkpoint that cannot be written takes the last directory offline too.
  fs.injectFault({ operation: 'writeFileAtomic', code: 'EIO', pathIncludes: 'recovery-point-offset-checkpoint', count: Infinity });
  node.clock.advance(60_000);
  await settle(node.clock);
  assert.equal((await produce(node.broker, 'spread', buildBatch({ records: [{ value: 'late' }] }), 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
  assert.match(halted ?? '', /all log directories/);
});
