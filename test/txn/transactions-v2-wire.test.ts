/**
 * Transactions V2 (KIP-890 part 2) over TCP, as a Kafka 4 client drives it
 * once the broker finalizes transaction.version 2 (a new cluster does):
 *
 * - ApiVersions advertises transaction.version 0-2, finalized at 2, and
 *   EndTxn up to v5.
 * - Produce v12+ adds its partition to the transaction (no
 *   AddPartitionsToTxn); Produce v11 only verifies, so the same batch of a
 *   transaction that never added the partition is TRANSACTION_ABORTABLE.
 * - TxnOffsetCommit v5 adds the group's `__consumer_offsets` partition (no
 *   AddOffsetsToTxn); the offsets are visible once the commit completes.
 * - EndTxn v5 bumps the epoch and answers it; the markers carry it; a retry
 *   (the old epoch) is answered with the new one; ABORT with nothing open
 *   is allowed; the old epoch is fenced; the next transaction goes on at
 *   the new epoch from sequence 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, decodeRecords } from '../../src/protocol/records/records.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { OffsetFetch } from '../../src/protocol/schemas/09-offset-fetch.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { InitProducerId } from '../../src/protocol/schemas/22-init-producer-id.js';
import { EndTxn } from '../../src/protocol/schemas/26-end-txn.js';
import { TxnOffsetCommit } from '../../src/protocol/schemas/28-txn-offset-commit.js';
import { WriteTxnMarkers } from '../../src/protocol/schemas/27-write-txn-markers.js';
import { DescribeTransactions } from '../../src/protocol/schemas/65-describe-transactions.js';
import { WireClient, call, fetchBody } from '../server/wire-client.js';

const TOPIC = 'orders';
const TXN = 'v2-copier';
const GROUP = 'v2-group';

async function startWithTopic(dir: string): Promise<RunningBroker> {
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  const [created] = await running.broker.controller.createTopics(
    [{ name: TOPIC, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
    { validateOnly: false },
  );
  assert.equal(created!.errorCode, ErrorCode.NONE);
  return running;
}

const produce = (client: WireClient, version: number, partition: number, producerId: number, producerEpoch: number, baseSequence: number, value: string) =>
  call(client, Produce, version, {
    transactionalId: TXN,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: TOPIC, partitionData: [{ index: partition, records: buildBatch({ records: [{ value, timestamp: Date.now() }], producerId, producerEpoch, baseSequence, isTransactional: true }) }] }],
  }).then((response) => response.responses[0]!.partitionResponses[0]!.errorCode);

async function describe(client: WireClient) {
  const described = await call(client, DescribeTransactions, 0, { transactionalIds: [TXN] });
  return described.transactionStates[0]!;
}

/** FindCoordinator for the transactional id and the group, as a client does first, until both coordinators are loaded. */
async function findCoordinators(client: WireClient): Promise<void> {
  for (const [key, keyType] of [[TXN, 1], [GROUP, 0]] as const) {
    for (;;) {
      const found = await call(client, FindCoordinator, 4, { keyType, coordinatorKeys: [key] });
      if (found.coordinators[0]!.errorCode === ErrorCode.NONE) break;
    }
  }
}

/** Waits, one DescribeTransactions round trip at a time, until the markers are written and the transaction completed. */
async function completed(client: WireClient): Promise<string> {
  for (;;) {
    const state = (await describe(client)).transactionState;
    if (state !== 'PrepareCommit' && state !== 'PrepareAbort') return state;
  }
}

test('Transactions V2 over the wire: implicit partition adds on Produce v12 and TxnOffsetCommit v5, an epoch bump per EndTxn v5', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-txn-v2-'));
  const running = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });

  const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
  assert.deepEqual(versions.supportedFeatures.find((f) => f.name === 'transaction.version'), { name: 'transaction.version', minVersion: 0, maxVersion: 2 });
  assert.deepEqual(versions.finalizedFeatures.find((f) => f.name === 'transaction.version'), { name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 });
  assert.equal(versions.apiKeys.find((k) => k.apiKey === EndTxn.key)?.maxVersion, 5);

  await findCoordinators(client);
  let init = await call(client, InitProducerId, 5, { transactionalId: TXN, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
  while (init.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || init.errorCode === ErrorCode.NOT_COORDINATOR) init = await call(client, InitProducerId, 5, { transactionalId: TXN, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
  assert.equal(init.errorCode, ErrorCode.NONE);
  const pid = init.producerId;
  assert.equal(init.producerEpoch, 0);

  // Produce v11 verifies only: the partition was never added.
  assert.equal(await produce(client, 11, 1, pid, 0, 0, 'unadded'), ErrorCode.TRANSACTION_ABORTABLE);
  // Produce v12 adds it.
  assert.equal(await produce(client, 12, 0, pid, 0, 0, 'a'), ErrorCode.NONE);
  const open = await describe(client);
  assert.deepEqual([open.transactionState, open.producerEpoch, open.topics], ['Ongoing', 0, [{ topic: TOPIC, partitions: [0] }]]);

  const offsets = await call(client, TxnOffsetCommit, 5, {
    transactionalId: TXN, groupId: GROUP, producerId: pid, producerEpoch: 0, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 42, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });
  assert.equal(offsets.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual((await describe(client)).topics.map((topic) => topic.topic).sort(), ['__consumer_offsets', TOPIC]);

  const commit = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: pid, producerEpoch: 0, committed: true });
  assert.deepEqual([commit.errorCode, commit.producerId, commit.producerEpoch], [ErrorCode.NONE, pid, 1]);
  assert.equal(await completed(client), 'CompleteCommit');
  const retry = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: pid, producerEpoch: 0, committed: true });
  assert.deepEqual([retry.errorCode, retry.producerId, retry.producerEpoch], [ErrorCode.NONE, pid, 1], 'a retry is answered with the bumped epoch');

  const fetched = await call(client, OffsetFetch, 8, { groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: [{ name: TOPIC, partitionIndexes: [0] }] }], requireStable: true });
  assert.equal(fetched.groups[0]!.topics[0]!.partitions[0]!.committedOffset, 42, 'the offsets committed with the transaction');

  // The old epoch is fenced; the new one starts the next transaction at sequence 0.
  assert.equal(await produce(client, 12, 0, pid, 0, 1, 'zombie'), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(await produce(client, 12, 0, pid, 1, 0, 'b'), ErrorCode.NONE);
  const abort = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: pid, producerEpoch: 1, committed: false });
  assert.deepEqual([abort.errorCode, abort.producerEpoch], [ErrorCode.NONE, 2]);
  assert.equal(await completed(client), 'CompleteAbort');
  // ABORT with nothing open: allowed under V2, and bumps again.
  const emptyAbort = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: pid, producerEpoch: 2, committed: false });
  assert.deepEqual([emptyAbort.errorCode, emptyAbort.producerEpoch], [ErrorCode.NONE, 3]);
  assert.equal(await completed(client), 'CompleteAbort');

  const read = await call(client, Fetch, 12, fetchBody(TOPIC, 0, { isolationLevel: 1 }));
  const partition = read.responses[0]!.partitions[0]!;
  assert.equal(partition.lastStableOffset, partition.highWatermark);
  const markers: number[] = [];
  const values: string[] = [];
  for (const { position, header } of iterateBatches(partition.records!)) {
    if (header.isControl) markers.push(header.producerEpoch);
    else values.push(...decodeRecords(partition.records!.subarray(position, position + header.sizeBytes)).records!.map((r) => r.value!.toString()));
  }
  assert.deepEqual(markers, [1, 2], 'each marker carries the epoch its EndTxn bumped to');
  assert.deepEqual(values, ['a', 'b']);
  assert.deepEqual(partition.abortedTransactions?.map((a) => a.producerId), [pid], 'read_committed skips "b" by the aborted transaction');
});

test('the coordinator aborts a transaction past its transaction.timeout.ms, fencing its producer, and forgets an id idle past transactional.id.expiration.ms', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-txn-timeout-'));
  const running = await startBroker({
    config: {
      'log.dirs': dir,
      'node.id': 1,
      'transaction.abort.timed.out.transaction.cleanup.interval.ms': 50,
      'transaction.remove.expired.transaction.cleanup.interval.ms': 50,
      'transactional.id.expiration.ms': 5000,
    },
    logger: silentLogger,
  });
  const [created] = await running.broker.controller.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
  assert.equal(created!.errorCode, ErrorCode.NONE);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });
  await findCoordinators(client);

  const init = await call(client, InitProducerId, 5, { transactionalId: TXN, transactionTimeoutMs: 100, producerId: -1, producerEpoch: -1 });
  assert.equal(init.errorCode, ErrorCode.NONE);
  const tooLong = await call(client, InitProducerId, 5, { transactionalId: 'too-long', transactionTimeoutMs: 900_001, producerId: -1, producerEpoch: -1 });
  assert.equal(tooLong.errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT, 'above transaction.max.timeout.ms');
  assert.equal(await produce(client, 12, 0, init.producerId, 0, 0, 'slow'), ErrorCode.NONE);
  let state = await describe(client);
  while (state.transactionState === 'Ongoing' || state.transactionState === 'PrepareAbort') state = await describe(client);
  assert.deepEqual([state.transactionState, state.producerEpoch], ['CompleteAbort', 2], 'aborted by the coordinator: fenced (epoch 1), then ended (epoch 2)');
  const late = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: init.producerId, producerEpoch: 0, committed: true });
  assert.equal(late.errorCode, ErrorCode.PRODUCER_FENCED);
  const read = await call(client, Fetch, 12, fetchBody(TOPIC, 0, { isolationLevel: 1 }));
  assert.equal(read.responses[0]!.partitions[0]!.lastStableOffset, read.responses[0]!.partitions[0]!.highWatermark, 'the abort marker released read_committed consumers');

  while (state.errorCode === ErrorCode.NONE) state = await describe(client);
  assert.equal(state.errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, 'forgotten once idle past transactional.id.expiration.ms');
});

/**
 * A late V2 marker: the COMMIT that ended the first transaction (epoch 1)
 * arrives again, as an ABORT from a deposed coordinator or a retry that
 * overtook would, while the producer's next transaction (also at epoch 1)
 * is open on the partition. Kafka refuses it (INVALID_PRODUCER_EPOCH: a V2
 * marker must raise the epoch); accepted, it would end the open
 * transaction on this partition with the wrong result, and its records
 * before the marker would be aborted although the transaction commits.
 * The same marker with no transaction open is a harmless retry, accepted.
 *
 * Regression: the three-broker txn-bounce lost or duplicated about half
 * of one transaction (one output partition's share) in a run of six.
 */
test('a late Transactions V2 marker (an epoch not above the producer\'s) is refused while the next transaction is open, so it cannot end it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-txn-v2-late-'));
  const running = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });
  await findCoordinators(client);
  let init = await call(client, InitProducerId, 5, { transactionalId: TXN, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
  while (init.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || init.errorCode === ErrorCode.NOT_COORDINATOR) init = await call(client, InitProducerId, 5, { transactionalId: TXN, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
  const pid = init.producerId;
  const lateMarker = (committed: boolean) =>
    call(client, WriteTxnMarkers, 2, {
      markers: [{ producerId: pid, producerEpoch: 1, transactionResult: committed, coordinatorEpoch: 0, transactionVersion: 2, topics: [{ name: TOPIC, partitionIndexes: [0] }] }],
    }).then((response) => response.markers[0]!.topics[0]!.partitions[0]!.errorCode);

  assert.equal(await produce(client, 12, 0, pid, 0, 0, 'first'), ErrorCode.NONE);
  const commit = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: pid, producerEpoch: 0, committed: true });
  assert.equal(commit.producerEpoch, 1);
  assert.equal(await completed(client), 'CompleteCommit');
  assert.equal(await lateMarker(true), ErrorCode.NONE, 'a retry of the marker already written, with no transaction open, is accepted');

  assert.equal(await produce(client, 12, 0, pid, 1, 0, 'second'), ErrorCode.NONE);
  assert.equal(await lateMarker(false), ErrorCode.INVALID_PRODUCER_EPOCH, 'the late marker does not end the open transaction');
  const held = (await call(client, Fetch, 12, fetchBody(TOPIC, 0, { isolationLevel: 1 }))).responses[0]!.partitions[0]!;
  assert.ok(held.lastStableOffset < held.highWatermark, 'the open transaction still holds the last stable offset');

  const second = await call(client, EndTxn, 5, { transactionalId: TXN, producerId: pid, producerEpoch: 1, committed: true });
  assert.equal(second.errorCode, ErrorCode.NONE);
  assert.equal(await completed(client), 'CompleteCommit');
  const read = (await call(client, Fetch, 12, fetchBody(TOPIC, 0, { isolationLevel: 1 }))).responses[0]!.partitions[0]!;
  const values: string[] = [];
  for (const { position, header } of iterateBatches(read.records!)) {
    if (!header.isControl) values.push(...decodeRecords(read.records!.subarray(position, position + header.sizeBytes)).records!.map((r) => r.value!.toString()));
  }
  assert.deepEqual(values, ['first', 'second']);
  assert.deepEqual(read.abortedTransactions ?? [], [], 'nothing was aborted');
});
