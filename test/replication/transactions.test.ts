/**
 * The partition side of transactions, through the replica manager: markers
 * (COMMIT / ABORT control batches written by the coordinator) end a
 * producer's transaction; the last stable offset stops at the first offset
 * of the oldest open transaction; an aborted transaction goes into the
 * .txnindex with the LSO it leaves, and read_committed fetches return it in
 * aborted_transactions; ListOffsets read_committed answers the LSO; the
 * open transaction survives a restart (producer snapshot) and still holds
 * the LSO back, and after a crash the transactions replayed to their
 * markers are stable again once the checkpointed high watermark passes
 * them. A marker from a fenced epoch or an older coordinator is refused.
 *
 * The example: records "0" committed, "1" aborted, "2" open, "3"
 * committed, then "2" commits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../src/io/env.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildControlBatch } from '../../src/protocol/records/control.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import type { MetadataImage, PartitionRegistration, TopicImage } from '../../src/metadata/image.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const tp = { topic: 'orders', partition: 0 };
const COORDINATOR_EPOCH = 3;

async function leadOrders(dir: string): Promise<ReplicaManager> {
  const reg: PartitionRegistration = {
    topicId: TOPIC_ID, topicName: 'orders', partition: 0, replicas: [1], isr: [1], elr: [], lastKnownElr: [],
    removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0,
  };
  const topic: TopicImage = { name: 'orders', id: TOPIC_ID, partitions: new Map([[0, reg]]), configs: new Map() };
  const image: MetadataImage = {
    offset: 1, clusterId: 'test', topicsByName: new Map([['orders', topic]]), topicsById: new Map([[TOPIC_ID, topic]]),
    brokers: new Map(), features: new Map(), brokerConfigs: new Map(), groupConfigs: new Map(), controllers: new Map(), nextProducerId: 0, scramCredentials: new Map(), acls: new Map(), clientQuotas: new Map(),
  };
  const manager = new ReplicaManager({ nodeId: 1, config: BrokerConfig.fromObject({ 'log.dirs': dir }), env: realEnv, log: silentLogger, metadata: { image } });
  await manager.start();
  await manager.onMetadataUpdate({ changedPartitions: [reg], deletedTopics: [], changedTopicConfigs: [], brokersChanged: false, changedFeatures: new Map(), offset: 1 }, image);
  return manager;
}

async function append(manager: ReplicaManager, records: Buffer, origin: 'client' | 'coordinator' = 'client') {
  const result = await manager.appendRecords({ timeoutMs: 1000, requiredAcks: -1, internalTopicsAllowed: false, origin, entries: [{ topicPartition: tp, records }] });
  return result.get('orders-0')!;
}

const data = (producerId: number, value: string) =>
  buildBatch({ records: [{ value, timestamp: Date.now() }], producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true });
const marker = (producerId: number, type: 'COMMIT' | 'ABORT', options: { producerEpoch?: number; coordinatorEpoch?: number } = {}) =>
  buildControlBatch({ type, producerId, producerEpoch: options.producerEpoch ?? 0, coordinatorEpoch: options.coordinatorEpoch ?? COORDINATOR_EPOCH, timestamp: Date.now() });

async function readCommitted(manager: ReplicaManager) {
  const [read] = await manager.readFromLog(
    { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolation: 'txnCommitted', fetchOnlyFromLeader: true },
    [{ topicPartition: tp, fetchOffset: 0, logStartOffset: -1, maxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }],
  );
  const lso = await manager.fetchOffsetForTimestamp({ topicPartition: tp, timestamp: -1, currentLeaderEpoch: -1, isolationLevel: 1, fetchOnlyFromLeader: true });
  return { lastStableOffset: read!.lastStableOffset, listedOffset: lso.offset, aborted: read!.abortedTransactions };
}

test('the last stable offset, aborted transactions and ListOffsets read_committed follow the markers, across a restart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-txn-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let manager = await leadOrders(dir);
  assert.equal((await append(manager, data(1, '0'))).baseOffset, 0);
  assert.equal((await append(manager, marker(1, 'COMMIT'), 'coordinator')).baseOffset, 1);
  assert.equal((await append(manager, data(2, '1'))).baseOffset, 2);
  assert.equal((await append(manager, data(3, '2'))).baseOffset, 3);
  assert.equal((await append(manager, marker(2, 'ABORT'), 'coordinator')).baseOffset, 4);
  assert.equal((await append(manager, data(4, '3'))).baseOffset, 5);
  assert.equal((await append(manager, marker(4, 'COMMIT'), 'coordinator')).baseOffset, 6);

  const open = await readCommitted(manager);
  assert.deepEqual({ lso: open.lastStableOffset, listed: open.listedOffset }, { lso: 3, listed: 3 }, 'stops at "2", the open transaction');
  // The abort left the LSO at 3 (producer 3 still open), as the index records it.
  assert.deepEqual(open.aborted, [{ producerId: 2, firstOffset: 2, lastOffset: 4, lastStableOffset: 3 }]);

  await manager.stop();
  manager = await leadOrders(dir);
  const restarted = await readCommitted(manager);
  assert.deepEqual({ lso: restarted.lastStableOffset, aborted: restarted.aborted?.length }, { lso: 3, aborted: 1 }, 'the open transaction survives the restart');

  assert.equal((await append(manager, marker(3, 'COMMIT'), 'coordinator')).baseOffset, 7);
  const committed = await readCommitted(manager);
  assert.deepEqual({ lso: committed.lastStableOffset, listed: committed.listedOffset }, { lso: 8, listed: 8 });
  await manager.stop();
});

test('after a crash, transactions replayed to their markers are stable when the checkpointed high watermark already passed them', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-txn-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const first = await leadOrders(dir);
  await append(first, data(1, 'a'));
  await append(first, marker(1, 'COMMIT'), 'coordinator');
  await append(first, data(2, 'b'));
  await append(first, marker(2, 'ABORT'), 'coordinator');
  assert.equal((await readCommitted(first)).lastStableOffset, 4);
  // The process dies without stop(), after the periodic high-watermark
  // checkpoint recorded 4 (Kafka's replication-offset-checkpoint format).
  await writeFile(join(dir, 'replication-offset-checkpoint'), '0\n1\norders 0 4\n');
  const second = await leadOrders(dir);
  t.after(() => second.stop());
  const restarted = await readCommitted(second);
  assert.deepEqual(
    { lso: restarted.lastStableOffset, listed: restarted.listedOffset, aborted: restarted.aborted },
    { lso: 4, listed: 4, aborted: [{ producerId: 2, firstOffset: 2, lastOffset: 3, lastStableOffset: 4 }] },
  );
});

test('a marker of a fenced producer epoch or an older coordinator epoch is refused; a client cannot write markers', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-txn-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const manager = await leadOrders(dir);
  t.after(() => manager.stop());
  await append(manager, data(9, 'x'));
  assert.equal((await append(manager, marker(9, 'ABORT', { producerEpoch: 1 }), 'coordinator')).errorCode, ErrorCode.NONE, 'a fencing abort at a bumped epoch');
  assert.equal((await append(manager, marker(9, 'COMMIT', { producerEpoch: 0 }), 'coordinator')).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal((await append(manager, marker(9, 'ABORT', { producerEpoch: 1, coordinatorEpoch: 2 }), 'coordinator')).errorCode, ErrorCode.TRANSACTION_COORDINATOR_FENCED);
  assert.equal((await append(manager, data(9, 'zombie'))).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH, 'the fenced producer writes nothing');
  assert.equal((await append(manager, marker(9, 'COMMIT', { producerEpoch: 1 }))).errorCode, ErrorCode.INVALID_RECORD);
});
