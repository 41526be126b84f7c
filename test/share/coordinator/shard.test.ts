/**
 * The share coordinator over the coordinator runtime, on an in-memory
 * `__share_group_state`: what each operation writes (initialize a
 * snapshot, a write an update with only its batches, a snapshot after
 * share.coordinator.snapshot.update.records.per.snapshot updates, delete a
 * tombstone, a read at a new leader epoch an update without batches),
 * Kafka 4.4's validation and fencing errors, and that a coordinator loaded
 * from the log (a restart, a new leader) holds exactly the state the
 * writing one held.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { imageWith } from '../../group/helpers.js';
import { READ_UNINITIALIZED_SHARE_PARTITION, WRITE_UNINITIALIZED_SHARE_PARTITION } from '../../../src/share/coordinator/shard.js';
import type { SharePartitionKey, WriteStateInput } from '../../../src/share/persister.js';
import { shareHarness, shareRecords, TOPIC, TOPIC_ID, type ShareHarness } from './helpers.js';

const KEY: SharePartitionKey = { groupId: 'g', topicId: TOPIC_ID, partition: 1 };
const batch = (firstOffset: number, lastOffset: number, deliveryState: number, deliveryCount: number) => ({ firstOffset, lastOffset, deliveryState, deliveryCount });
const write = (overrides: Partial<WriteStateInput> = {}): WriteStateInput => ({ stateEpoch: 0, leaderEpoch: 1, startOffset: 0, deliveryCompleteCount: -1, stateBatches: [], ...overrides });

function recordsOf(h: ShareHarness) {
  return shareRecords(h.log, h.coordinator.partitionFor(KEY));
}

function stateOf(h: ShareHarness) {
  return h.coordinator.runtime.shard(h.coordinator.partitionFor(KEY))!.state(KEY);
}

test('initialize writes a snapshot; a read at a new leader epoch records it once', async () => {
  const h = await shareHarness();
  assert.equal((await h.coordinator.initializeState(KEY, { stateEpoch: 0, startOffset: 10 })).errorCode, ErrorCode.NONE);
  assert.deepEqual(recordsOf(h).map((r) => r.type), ['ShareSnapshot']);
  const read = await h.coordinator.readState(KEY, { leaderEpoch: 3 });
  assert.deepEqual(read, { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: 0, startOffset: 10, stateBatches: [] });
  const update = recordsOf(h)[1]!;
  assert.equal(update.type, 'ShareUpdate');
  assert.deepEqual(update.value, { snapshotEpoch: 0, leaderEpoch: 3, startOffset: 10, stateBatches: [], deliveryCompleteCount: 0 });
  await h.coordinator.readState(KEY, { leaderEpoch: 3 });
  assert.equal(recordsOf(h).length, 2, 'a read at the recorded leader epoch writes nothing');
});

test('reads and writes of a share partition never initialized are INVALID_REQUEST with Kafka messages', async () => {
  const h = await shareHarness();
  assert.deepEqual(
    { ...(await h.coordinator.readState(KEY, { leaderEpoch: 0 })) },
    { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: READ_UNINITIALIZED_SHARE_PARTITION, stateEpoch: 0, startOffset: -1, stateBatches: [] },
  );
  assert.deepEqual(await h.coordinator.writeState(KEY, write()), { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: WRITE_UNINITIALIZED_SHARE_PARTITION });
  assert.equal((await h.coordinator.writeState(KEY, write({ leaderEpoch: -1 }))).errorMessage, 'The leader epoch cannot be a negative number.');
  assert.equal((await h.coordinator.initializeState({ ...KEY, partition: -1 }, { stateEpoch: 0, startOffset: 0 })).errorMessage, 'The partition id cannot be a negative number.');
  assert.equal(recordsOf(h).length, 0);
});

test('a partition the metadata lacks is UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const h = await shareHarness();
  assert.equal((await h.coordinator.initializeState({ ...KEY, partition: 4 }, { stateEpoch: 0, startOffset: 0 })).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal((await h.coordinator.readSummary({ ...KEY, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' }, { leaderEpoch: 0 })).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

test('stale leader and state epochs are fenced', async () => {
  const h = await shareHarness();
  await h.coordinator.initializeState(KEY, { stateEpoch: 2, startOffset: 0 });
  await h.coordinator.readState(KEY, { leaderEpoch: 5 });
  assert.equal((await h.coordinator.writeState(KEY, write({ stateEpoch: 2, leaderEpoch: 4 }))).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal((await h.coordinator.readState(KEY, { leaderEpoch: 4 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal((await h.coordinator.writeState(KEY, write({ stateEpoch: 1, leaderEpoch: 5 }))).errorCode, ErrorCode.FENCED_STATE_EPOCH);
  assert.equal((await h.coordinator.initializeState(KEY, { stateEpoch: 1, startOffset: 0 })).errorCode, ErrorCode.FENCED_STATE_EPOCH);
  assert.equal((await h.coordinator.writeState(KEY, write({ stateEpoch: 2, leaderEpoch: 6 }))).errorCode, ErrorCode.NONE, 'a newer leader epoch writes');
});

test('writes become updates with only their batches, merged into the state; the start offset never moves back', async () => {
  const h = await shareHarness();
  await h.coordinator.initializeState(KEY, { stateEpoch: 0, startOffset: 0 });
  await h.coordinator.writeState(KEY, write({ startOffset: 0, stateBatches: [batch(0, 9, 0, 1)] }));
  await h.coordinator.writeState(KEY, write({ startOffset: 5, deliveryCompleteCount: 2, stateBatches: [batch(5, 6, 2, 1)] }));
  const updates = recordsOf(h).slice(1);
  assert.deepEqual(updates.map((r) => r.type), ['ShareUpdate', 'ShareUpdate']);
  assert.deepEqual(updates[1]!.value!.stateBatches, [batch(5, 6, 2, 1)], 'the update carries what was sent');
  const read = await h.coordinator.readState(KEY, { leaderEpoch: 1 });
  assert.equal(read.startOffset, 5);
  assert.deepEqual(read.stateBatches, [batch(5, 6, 2, 1), batch(7, 9, 0, 1)]);
  await h.coordinator.writeState(KEY, write({ startOffset: 3, stateBatches: [] }));
  assert.equal((await h.coordinator.readState(KEY, { leaderEpoch: 1 })).startOffset, 5, 'a writer behind the start offset does not move it back');
  assert.equal((await h.coordinator.readSummary(KEY, { leaderEpoch: 1 })).deliveryCompleteCount, 2, 'and keeps the delivery-complete count');
});

test('after share.coordinator.snapshot.update.records.per.snapshot updates the next write is a snapshot of the merged state', async () => {
  const h = await shareHarness({ config: { snapshotUpdateRecordsPerSnapshot: 2 } });
  await h.coordinator.initializeState(KEY, { stateEpoch: 0, startOffset: 0 });
  for (let i = 0; i < 5; i++) await h.coordinator.writeState(KEY, write({ startOffset: i, stateBatches: [batch(i * 10, i * 10 + 4, 2, 1)] }));
  assert.deepEqual(recordsOf(h).map((r) => r.type), ['ShareSnapshot', 'ShareUpdate', 'ShareUpdate', 'ShareSnapshot', 'ShareUpdate', 'ShareUpdate']);
  const third = recordsOf(h)[3]!;
  assert.equal(third.value!.snapshotEpoch, 1);
  assert.deepEqual(third.value!.stateBatches, [batch(2, 4, 2, 1), batch(10, 14, 2, 1), batch(20, 24, 2, 1)]);
});

test('a coordinator loaded from the log holds the same state, fencing included', async () => {
  const h = await shareHarness({ config: { snapshotUpdateRecordsPerSnapshot: 3 } });
  await h.coordinator.initializeState(KEY, { stateEpoch: 1, startOffset: 0 });
  await h.coordinator.readState(KEY, { leaderEpoch: 2 });
  for (let i = 0; i < 7; i++) await h.coordinator.writeState(KEY, write({ stateEpoch: 1, leaderEpoch: 2, startOffset: i * 3, deliveryCompleteCount: i, stateBatches: [batch(i * 5, i * 5 + 6, i % 2 === 0 ? 2 : 4, 1 + (i % 3))] }));
  const before = stateOf(h);
  const updatesBefore = h.coordinator.runtime.shard(h.coordinator.partitionFor(KEY))!.updatesSince(KEY);
  await h.reload();
  assert.deepEqual(stateOf(h), before);
  assert.equal(h.coordinator.runtime.shard(h.coordinator.partitionFor(KEY))!.updatesSince(KEY), updatesBefore);
  assert.equal((await h.coordinator.writeState(KEY, write({ stateEpoch: 1, leaderEpoch: 1 }))).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal((await h.coordinator.writeState(KEY, write({ stateEpoch: 0, leaderEpoch: 2 }))).errorCode, ErrorCode.FENCED_STATE_EPOCH);
});

test('delete writes a tombstone and forgets the share partition; deleting nothing writes nothing', async () => {
  const h = await shareHarness();
  assert.equal((await h.coordinator.deleteState(KEY)).errorCode, ErrorCode.NONE);
  assert.equal(recordsOf(h).length, 0);
  await h.coordinator.initializeState(KEY, { stateEpoch: 3, startOffset: 7 });
  assert.deepEqual(await h.coordinator.readSummary(KEY, { leaderEpoch: 0 }), { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: 3, leaderEpoch: 0, startOffset: 7, deliveryCompleteCount: 0 });
  await h.coordinator.deleteState(KEY);
  const tombstone = recordsOf(h).at(-1)!;
  assert.deepEqual([tombstone.type, tombstone.value], ['ShareSnapshot', null]);
  assert.equal((await h.coordinator.readState(KEY, { leaderEpoch: 0 })).errorCode, ErrorCode.INVALID_REQUEST);
  assert.deepEqual(await h.coordinator.readSummary(KEY, { leaderEpoch: 0 }), { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: 0, leaderEpoch: 0, startOffset: -1, deliveryCompleteCount: -1 });
  await h.reload();
  assert.equal(stateOf(h), undefined, 'the tombstone is replayed on load');
  assert.equal((await h.coordinator.initializeState(KEY, { stateEpoch: 0, startOffset: 0 })).errorCode, ErrorCode.NONE, 'and the state epoch forgotten with it');
});

test('a deleted topic tombstones its share partitions', async () => {
  const h = await shareHarness();
  await h.coordinator.initializeState(KEY, { stateEpoch: 0, startOffset: 0 });
  const topic = imageWith([{ name: TOPIC, partitions: 4 }]).topicsByName.get(TOPIC)!;
  h.coordinator.onMetadataUpdate({ changedPartitions: [], deletedTopics: [topic], changedTopicConfigs: [], brokersChanged: false, changedFeatures: new Map(), offset: 2 }, imageWith([]));
  await h.coordinator.runtime.drain();
  assert.equal(stateOf(h), undefined);
  assert.equal(recordsOf(h).at(-1)!.value, null);
});

test('a share partition not written for share.coordinator.cold.partition.snapshot.interval.ms is snapshotted again', async () => {
  const h = await shareHarness({ config: { coldPartitionSnapshotIntervalMs: 1000 } });
  await h.coordinator.initializeState(KEY, { stateEpoch: 0, startOffset: 0 });
  await h.coordinator.writeState(KEY, write({ stateBatches: [batch(0, 3, 2, 1)] }));
  h.clock.advance(1000);
  await h.coordinator.runtime.drain();
  const records = recordsOf(h);
  assert.deepEqual(records.map((r) => r.type), ['ShareSnapshot', 'ShareUpdate', 'ShareSnapshot']);
  assert.equal(records[2]!.value!.snapshotEpoch, 1);
  assert.deepEqual(records[2]!.value!.stateBatches, [batch(0, 3, 2, 1)]);
  h.clock.advance(1000);
  await h.coordinator.runtime.drain();
  assert.equal(recordsOf(h).length, 3, 'once snapshotted cold, an idle share partition is left alone');
});
