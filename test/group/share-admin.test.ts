/**
 * Share-group administration in the group coordinator, with an in-memory
 * persister. Proves: ShareGroupDescribe's fields (assignor `simple`, epochs,
 * members with topic names) and GROUP_ID_NOT_FOUND for missing or other
 * groups; ListGroups shows share groups with type "share" and protocol type
 * "share" and filters by type and state; DescribeGroups answers a share
 * group as Kafka does (Dead, GROUP_ID_NOT_FOUND from v6), and so do
 * OffsetCommit and OffsetFetch; DeleteGroups
 * refuses a non-empty share group, deletes an empty one's state in the
 * persister for every initialized partition, and keeps the group when that
 * fails; DescribeShareGroupOffsets reads start offsets and computes lag =
 * end - start - deliveryCompleteCount (-1 when unknown), for named topics or
 * all initialized partitions; AlterShareGroupOffsets only on an empty group,
 * initializing at the group epoch; DeleteShareGroupOffsets deletes a topic's
 * state and answers UNKNOWN_TOPIC_OR_PARTITION once nothing is left; an
 * empty share group never expires.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import type { ShareGroupHeartbeatInput, ShareGroupHeartbeatResponseData } from '../../src/group/share-group-protocol.js';
import { harness, topicIdFor, type Harness } from './helpers.js';
import { MemorySharePersister } from './share-helpers.js';

const events = topicIdFor('events');
const ctx = { clientId: 'client', clientHost: '/10.0.0.1' };

function beat(h: Harness, over: Partial<ShareGroupHeartbeatInput>): Promise<ShareGroupHeartbeatResponseData> {
  return h.coordinator.shareGroupHeartbeat(ctx, { groupId: 'sg', memberId: 'm1', memberEpoch: 0, rackId: null, subscribedTopicNames: ['events'], ...over });
}

/** A share group with one member holding every initialized partition of `events` (3 partitions). */
async function groupWithMember(options: { persister?: MemorySharePersister; latestOffset?: (topic: string, partition: number) => Promise<{ errorCode: number; offset: number }> } = {}) {
  const persister = options.persister ?? new MemorySharePersister();
  const h = await harness({ persister, topics: [{ name: 'events', partitions: 3 }, { name: 'other', partitions: 1 }], ...(options.latestOffset === undefined ? {} : { latestOffset: options.latestOffset }) });
  const joined = await beat(h, {});
  await h.coordinator.shareInitializationsSettled();
  await h.drain();
  const assigned = await beat(h, { memberEpoch: joined.memberEpoch, subscribedTopicNames: null });
  return { h, persister, member: assigned };
}

async function leave(h: Harness, epoch: number): Promise<void> {
  const left = await beat(h, { memberEpoch: -1, subscribedTopicNames: null });
  assert.equal(left.errorCode, ErrorCode.NONE);
  void epoch;
}

test('ShareGroupDescribe shows epochs, the simple assignor and each member with topic names', async () => {
  const { h, member } = await groupWithMember();
  const [described, missing] = h.coordinator.shareGroupDescribe(['sg', 'nope']);
  assert.deepEqual(described, {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId: 'sg',
    groupState: 'Stable',
    groupEpoch: member.memberEpoch,
    assignmentEpoch: member.memberEpoch,
    assignorName: 'simple',
    members: [
      {
        memberId: 'm1',
        rackId: null,
        memberEpoch: member.memberEpoch,
        clientId: 'client',
        clientHost: '/10.0.0.1',
        subscribedTopicNames: ['events'],
        assignment: { topicPartitions: [{ topicId: events, topicName: 'events', partitions: [0, 1, 2] }] },
      },
    ],
  });
  assert.deepEqual([missing!.errorCode, missing!.errorMessage], [ErrorCode.GROUP_ID_NOT_FOUND, 'Group nope not found.']);
  assert.equal(h.coordinator.shareGroupDescribe([''])[0]!.errorCode, ErrorCode.INVALID_GROUP_ID);
});

test('ListGroups shows share groups by type and state; DescribeGroups answers them as not classic', async () => {
  const { h } = await groupWithMember();
  await h.coordinator.commitOffsets({ groupId: 'simple', memberId: '', generationIdOrMemberEpoch: -1, groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }] }, 9);
  const all = h.coordinator.listGroups([], []);
  assert.deepEqual(all.groups.find((g) => g.groupId === 'sg'), { groupId: 'sg', protocolType: 'share', groupState: 'Stable', groupType: 'share' });
  assert.deepEqual(h.coordinator.listGroups([], ['share']).groups.map((g) => g.groupId), ['sg']);
  assert.deepEqual(h.coordinator.listGroups(['empty'], ['share']).groups, []);
  assert.deepEqual(h.coordinator.listGroups(['stable'], []).groups.map((g) => g.groupId), ['sg']);
  const [v5] = h.coordinator.describeGroups(['sg'], 5);
  assert.deepEqual([v5!.errorCode, v5!.groupState], [ErrorCode.NONE, 'Dead']);
  const [v6] = h.coordinator.describeGroups(['sg'], 6);
  assert.deepEqual([v6!.errorCode, v6!.errorMessage], [ErrorCode.GROUP_ID_NOT_FOUND, 'Group sg is not a classic group.']);
});

test('a share group keeps no offsets in __consumer_offsets: OffsetCommit and OffsetFetch are GROUP_ID_NOT_FOUND, as Kafka', async () => {
  const { h } = await groupWithMember();
  const committed = await h.coordinator.commitOffsets({ groupId: 'sg', memberId: '', generationIdOrMemberEpoch: -1, groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }] }, 9);
  assert.equal(committed[0]!.partitions[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const fetched = h.coordinator.fetchOffsets({ groupId: 'sg', memberId: null, memberEpoch: -1, topics: null, requireStable: false });
  assert.equal(fetched.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});

test('DeleteGroups refuses a non-empty share group and deletes an empty one with its share state', async () => {
  const { h, persister, member } = await groupWithMember();
  assert.deepEqual(await h.coordinator.deleteGroups(['sg']), [{ groupId: 'sg', errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: null }]);
  assert.equal(persister.callsOf('delete').length, 0);
  await leave(h, member.memberEpoch);
  persister.failing.set(`sg:${events}:2`, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.deepEqual(await h.coordinator.deleteGroups(['sg']), [{ groupId: 'sg', errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, errorMessage: null }]);
  assert.equal(h.coordinator.shareGroupDescribe(['sg'])[0]!.errorCode, ErrorCode.NONE, 'a failed state deletion keeps the group');
  persister.failing.clear();
  persister.calls.length = 0;
  assert.deepEqual(await h.coordinator.deleteGroups(['sg']), [{ groupId: 'sg', errorCode: ErrorCode.NONE, errorMessage: null }]);
  assert.deepEqual(persister.callsOf('delete').map((c) => c.key).sort(), [0, 1, 2].map((p) => `sg:${events}:${p}`), 'the deleting topics are deleted again');
  assert.equal(h.coordinator.shareGroupDescribe(['sg'])[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const reloaded = await h.reload();
  assert.equal(reloaded.shareGroupDescribe(['sg'])[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND, 'the tombstones replay to no group');
});

test('DescribeShareGroupOffsets reads start offsets and computes lag, for named topics or every initialized partition', async () => {
  const persister = new MemorySharePersister();
  const { h } = await groupWithMember({ persister, latestOffset: async (_topic, partition) => (partition === 2 ? { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1 } : { errorCode: ErrorCode.NONE, offset: 100 }) });
  persister.states.set(`sg:${events}:0`, { stateEpoch: 2, leaderEpoch: 4, startOffset: 40, deliveryCompleteCount: 5 });
  persister.states.set(`sg:${events}:1`, { stateEpoch: 2, leaderEpoch: 4, startOffset: 10, deliveryCompleteCount: -1 });
  persister.states.set(`sg:${events}:2`, { stateEpoch: 2, leaderEpoch: 4, startOffset: 10, deliveryCompleteCount: 0 });
  const named = await h.coordinator.describeShareGroupOffsets('sg', [{ topicName: 'events', partitions: [0, 1, 2] }, { topicName: 'gone', partitions: [0] }]);
  assert.deepEqual(named, {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    topics: [
      {
        topicName: 'events',
        topicId: events,
        partitions: [
          { partitionIndex: 0, startOffset: 40, leaderEpoch: 4, lag: 55, errorCode: ErrorCode.NONE, errorMessage: null },
          { partitionIndex: 1, startOffset: 10, leaderEpoch: 4, lag: -1, errorCode: ErrorCode.NONE, errorMessage: null },
          { partitionIndex: 2, startOffset: 0, leaderEpoch: 0, lag: -1, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: named.topics[0]!.partitions[2]!.errorMessage },
        ],
      },
      { topicName: 'gone', topicId: ZERO_UUID, partitions: [{ partitionIndex: 0, startOffset: -1, leaderEpoch: 0, lag: -1, errorCode: ErrorCode.NONE, errorMessage: null }] },
    ],
  });
  const all = await h.coordinator.describeShareGroupOffsets('sg', null);
  assert.deepEqual(all.topics.map((t) => [t.topicName, t.partitions.map((p) => p.partitionIndex)]), [['events', [0, 1, 2]]], 'only initialized partitions');
});

test('AlterShareGroupOffsets works only on an empty group and initializes the state at the group epoch', async () => {
  const { h, persister, member } = await groupWithMember();
  const busy = await h.coordinator.alterShareGroupOffsets('sg', [{ topicName: 'events', partitions: [{ partitionIndex: 0, startOffset: 5 }] }]);
  assert.equal(busy.errorCode, ErrorCode.NON_EMPTY_GROUP);
  await leave(h, member.memberEpoch);
  persister.calls.length = 0;
  const groupEpoch = h.coordinator.shareGroupDescribe(['sg'])[0]!.groupEpoch;
  const altered = await h.coordinator.alterShareGroupOffsets('sg', [{ topicName: 'events', partitions: [{ partitionIndex: 0, startOffset: 5 }, { partitionIndex: 9, startOffset: 1 }] }]);
  assert.deepEqual(altered, {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    responses: [
      {
        topicName: 'events',
        topicId: events,
        partitions: [
          { partitionIndex: 0, errorCode: ErrorCode.NONE, errorMessage: null },
          { partitionIndex: 9, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: altered.responses[0]!.partitions[1]!.errorMessage },
        ],
      },
    ],
  });
  assert.deepEqual(persister.callsOf('initialize'), [{ op: 'initialize', key: `sg:${events}:0`, stateEpoch: groupEpoch, startOffset: 5 }]);
  const fresh = await h.coordinator.alterShareGroupOffsets('new-group', [{ topicName: 'other', partitions: [{ partitionIndex: 0, startOffset: 7 }] }]);
  assert.equal(fresh.errorCode, ErrorCode.NONE, 'a missing group is created, as Kafka');
  assert.equal(h.coordinator.shareGroupDescribe(['new-group'])[0]!.groupState, 'Empty');
});

test('DeleteShareGroupOffsets deletes a topic\'s share state from an empty group', async () => {
  const { h, persister, member } = await groupWithMember();
  assert.equal((await h.coordinator.deleteShareGroupOffsets('sg', ['events'])).errorCode, ErrorCode.NON_EMPTY_GROUP);
  assert.equal((await h.coordinator.deleteShareGroupOffsets('nope', ['events'])).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  await leave(h, member.memberEpoch);
  const deleted = await h.coordinator.deleteShareGroupOffsets('sg', ['events', 'other']);
  assert.deepEqual(deleted, {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    responses: [
      { topicName: 'other', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' },
      { topicName: 'events', topicId: events, errorCode: ErrorCode.NONE, errorMessage: null },
    ],
  });
  assert.deepEqual(persister.callsOf('delete').map((c) => c.key), [0, 1, 2].map((p) => `sg:${events}:${p}`));
  const again = await h.coordinator.deleteShareGroupOffsets('sg', ['events']);
  assert.equal(again.responses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'nothing is left to delete');
  assert.deepEqual((await h.coordinator.describeShareGroupOffsets('sg', null)).topics, []);
});

test('an empty share group does not expire with offsets.retention.check.interval.ms, as Kafka', async () => {
  const { h, member } = await groupWithMember();
  await leave(h, member.memberEpoch);
  await h.advance(h.config.offsetsRetentionCheckIntervalMs + h.config.offsetsRetentionMs);
  const described = h.coordinator.shareGroupDescribe(['sg'])[0]!;
  assert.deepEqual([described.errorCode, described.groupState], [ErrorCode.NONE, 'Empty']);
});
