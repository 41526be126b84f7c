/**
 * The KIP-848 consumer protocol through ConsumerGroupHeartbeat on a
 * ManualClock. Proves: a first member gets every partition at epoch 1; when
 * a second member joins, partitions move only after their old owner revoked
 * them (the owner stays at its epoch in UNREVOKED_PARTITIONS, the newcomer
 * waits in UNRELEASED_PARTITIONS), then both reach the new epoch; stale or
 * future epochs are FENCED_MEMBER_EPOCH, a lost response is forgiven at the
 * previous epoch; unknown members; leaving (-1) and session expiry fence a
 * member and give its partitions away; a static member's temporary leave (-2)
 * keeps its partitions for its return under a new member id, and a second
 * instance is UNRELEASED_INSTANCE_ID; the range assignor; regex
 * subscriptions following topic creation (internal topics included); request validation; member epoch
 * checks of OffsetCommit/OffsetFetch v9; ConsumerGroupDescribe; DeleteGroups
 * NON_EMPTY_GROUP; and the upgrade of an empty classic group that keeps its
 * offsets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ConsumerGroupHeartbeatInput, ConsumerGroupHeartbeatResponseData } from '../../src/group/consumer-group-protocol.js';
import { harness, imageWith, topicIdFor, type Harness } from './helpers.js';

const events = topicIdFor('events');
const ctx = (apiVersion = 1) => ({ clientId: 'client', clientHost: '/10.0.0.1', apiVersion });

function beat(h: Harness, over: Partial<ConsumerGroupHeartbeatInput>, apiVersion = 1): Promise<ConsumerGroupHeartbeatResponseData> {
  return h.coordinator.consumerGroupHeartbeat(ctx(apiVersion), {
    groupId: 'g',
    memberId: 'm',
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: null,
    ...over,
  });
}

const join = (h: Harness, memberId: string, over: Partial<ConsumerGroupHeartbeatInput> = {}) =>
  beat(h, { memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['events'], topicPartitions: [], ...over });

const owned = (partitions: number[], topicId = events) => (partitions.length === 0 ? [] : [{ topicId, partitions }]);
const partitionsOf = (response: ConsumerGroupHeartbeatResponseData, topicId = events) =>
  response.assignment?.topicPartitions.find((t) => t.topicId === topicId)?.partitions ?? [];

test('the first member gets every partition at epoch 1', async () => {
  const h = await harness();
  const response = await join(h, 'm1');
  assert.equal(response.errorCode, ErrorCode.NONE);
  assert.equal(response.memberId, 'm1');
  assert.equal(response.memberEpoch, 1);
  assert.equal(response.heartbeatIntervalMs, 5000);
  assert.deepEqual(partitionsOf(response), [0, 1, 2, 3, 4, 5]);
  const [described] = h.coordinator.consumerGroupDescribe(['g']);
  assert.equal(described!.groupState, 'Stable');
  assert.equal(described!.groupEpoch, 1);
  assert.equal(described!.assignorName, 'uniform');
  assert.deepEqual(described!.members[0]!.assignment.topicPartitions, [{ topicId: events, topicName: 'events', partitions: [0, 1, 2, 3, 4, 5] }]);
});

test('partitions move to a new member only after their owner revoked them', async () => {
  const h = await harness();
  await join(h, 'm1');
  const second = await join(h, 'm2');
  assert.equal(second.memberEpoch, 2);
  assert.deepEqual(partitionsOf(second), [], 'all its target partitions are still owned by m1');
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]!.groupState, 'Reconciling');

  const revoking = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3, 4, 5]) });
  assert.equal(revoking.memberEpoch, 1, 'the owner stays at its epoch until it revokes');
  const kept = partitionsOf(revoking);
  assert.equal(kept.length, 3);

  const waiting = await beat(h, { memberId: 'm2', memberEpoch: 2, topicPartitions: [] });
  assert.equal(waiting.assignment, null, 'nothing released yet: no new assignment');

  const revoked = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned(kept) });
  assert.equal(revoked.memberEpoch, 2);

  const released = await beat(h, { memberId: 'm2', memberEpoch: 2, topicPartitions: [] });
  const gained = partitionsOf(released);
  assert.equal(gained.length, 3);
  assert.deepEqual([...kept, ...gained].sort(), [0, 1, 2, 3, 4, 5]);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]!.groupState, 'Stable');
});

test('member epochs are fenced: ahead is refused, behind is refused unless it is the previous epoch with owned partitions', async () => {
  const h = await harness();
  await join(h, 'm1');
  await join(h, 'm2');
  const ahead = await beat(h, { memberId: 'm1', memberEpoch: 5, topicPartitions: owned([0]) });
  assert.equal(ahead.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  assert.match(ahead.errorMessage ?? '', /greater member epoch/);
  const revoking = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3, 4, 5]) });
  const revoked = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned(partitionsOf(revoking)) });
  assert.equal(revoked.memberEpoch, 2);
  const lostResponse = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned(partitionsOf(revoking)) });
  assert.equal(lostResponse.errorCode, ErrorCode.NONE, 'the previous epoch with a subset of the assignment is accepted');
  assert.equal(lostResponse.memberEpoch, 2);
  const tooOld = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: null });
  assert.equal(tooOld.errorCode, ErrorCode.FENCED_MEMBER_EPOCH, 'the previous epoch without owned partitions is fenced');
  const unknown = await beat(h, { memberId: 'ghost', memberEpoch: 3 });
  assert.equal(unknown.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const noGroup = await beat(h, { groupId: 'none', memberId: 'ghost', memberEpoch: 3 });
  assert.equal(noGroup.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});

test('a leaving member (epoch -1) is removed and its partitions go to the others', async () => {
  const h = await harness();
  await join(h, 'm1');
  const second = await join(h, 'm2');
  const revoking = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3, 4, 5]) });
  await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned(partitionsOf(revoking)) });
  const m2 = await beat(h, { memberId: 'm2', memberEpoch: second.memberEpoch, topicPartitions: [] });
  const left = await beat(h, { memberId: 'm1', memberEpoch: -1 });
  assert.deepEqual([left.errorCode, left.memberEpoch], [ErrorCode.NONE, -1]);
  const all = await beat(h, { memberId: 'm2', memberEpoch: m2.memberEpoch, topicPartitions: owned(partitionsOf(m2)) });
  assert.deepEqual(partitionsOf(all), [0, 1, 2, 3, 4, 5]);
  assert.equal(all.memberEpoch, 3, 'the leave bumped the group epoch');
  assert.equal((await beat(h, { memberId: 'm1', memberEpoch: -1 })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a member whose session expires is fenced; a member that never revokes is fenced after its rebalance timeout', async () => {
  const h = await harness({ config: { consumerGroupSessionTimeoutMs: 45_000 } });
  await join(h, 'm1', { rebalanceTimeoutMs: 20_000 });
  await h.advance(44_000);
  const alive = await beat(h, { memberId: 'm1', memberEpoch: 1 });
  assert.equal(alive.errorCode, ErrorCode.NONE);
  await join(h, 'm2');
  await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3, 4, 5]) });
  // m1 must revoke within 20 s; it keeps heartbeating without revoking
  await h.advance(10_000);
  await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3, 4, 5]) });
  await beat(h, { memberId: 'm2', memberEpoch: 2, topicPartitions: [] });
  await h.advance(10_001);
  const fenced = await beat(h, { memberId: 'm1', memberEpoch: 1 });
  assert.equal(fenced.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const everything = await beat(h, { memberId: 'm2', memberEpoch: 2, topicPartitions: [] });
  assert.deepEqual(partitionsOf(everything).length, 6);
  await h.advance(45_001);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]!.groupState, 'Empty', 'm2 stopped heartbeating and was fenced');
});

test('a static member leaving with epoch -2 keeps its partitions for its return under a new member id', async () => {
  const h = await harness();
  const first = await join(h, 'a1', { instanceId: 'app-1' });
  assert.equal(partitionsOf(first).length, 6);
  const left = await beat(h, { memberId: 'a1', memberEpoch: -2, instanceId: 'app-1' });
  assert.equal(left.memberEpoch, -2);
  const other = await join(h, 'b1');
  assert.deepEqual(partitionsOf(other), [], 'the partitions are still held for app-1');
  const intruder = await join(h, 'x1', { instanceId: 'app-1' });
  assert.equal(intruder.errorCode, ErrorCode.NONE, 'app-1 had left: a new member id may take it');
  assert.equal(intruder.memberId, 'x1');
  assert.ok(partitionsOf(intruder).length > 0, 'the returning instance gets its partitions back without revocation');
  const second = await join(h, 'y1', { instanceId: 'app-1' });
  assert.equal(second.errorCode, ErrorCode.UNRELEASED_INSTANCE_ID);
  const fencedOld = await beat(h, { memberId: 'a1', memberEpoch: 1, instanceId: 'app-1' });
  assert.equal(fencedOld.errorCode, ErrorCode.FENCED_INSTANCE_ID);
});

test('the range assignor is used when members ask for it', async () => {
  const h = await harness();
  await join(h, 'b', { serverAssignor: 'range' });
  await join(h, 'a', { serverAssignor: 'range' });
  const [described] = h.coordinator.consumerGroupDescribe(['g']);
  assert.equal(described!.assignorName, 'range');
  const targets = new Map(described!.members.map((m) => [m.memberId, m.targetAssignment.topicPartitions[0]?.partitions ?? []]));
  assert.deepEqual(targets.get('a'), [0, 1, 2]);
  assert.deepEqual(targets.get('b'), [3, 4, 5]);
  const refused = await join(h, 'c', { serverAssignor: 'sticky' });
  assert.equal(refused.errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
});

test('a regex subscription follows the topics that match it, internal topics included as in Kafka', async () => {
  const h = await harness({ topics: [{ name: 'orders-eu', partitions: 2 }, { name: 'payments', partitions: 1 }, { name: '__consumer_offsets', partitions: 4 }] });
  const internal = await join(h, 'm0', { subscribedTopicNames: null, subscribedTopicRegex: '__consumer_off.*' });
  assert.deepEqual(internal.assignment?.topicPartitions, [{ topicId: topicIdFor('__consumer_offsets'), partitions: [0, 1, 2, 3] }], 'Kafka 4.4 assigns internal topics too');
  await beat(h, { memberId: 'm0', memberEpoch: -1 });
  const first = await join(h, 'm1', { subscribedTopicNames: null, subscribedTopicRegex: 'orders-.*' });
  assert.deepEqual(first.assignment?.topicPartitions, [{ topicId: topicIdFor('orders-eu'), partitions: [0, 1] }]);
  h.setImage(imageWith([{ name: 'orders-eu', partitions: 2 }, { name: 'orders-us', partitions: 1 }, { name: 'payments', partitions: 1 }], 2));
  const grown = await beat(h, { memberId: 'm1', memberEpoch: first.memberEpoch, topicPartitions: owned([0, 1], topicIdFor('orders-eu')) });
  assert.equal(grown.memberEpoch, first.memberEpoch + 1);
  assert.deepEqual(partitionsOf(grown, topicIdFor('orders-us')), [0]);
  const escaped = await join(h, 'm3', { subscribedTopicNames: null, subscribedTopicRegex: '^orders\\-e.*' });
  assert.equal(escaped.errorCode, ErrorCode.NONE, 'RE2/J accepts an escaped dash; so does Spool');
  const invalid = await join(h, 'm2', { subscribedTopicNames: null, subscribedTopicRegex: '(unclosed' });
  assert.equal(invalid.errorCode, ErrorCode.INVALID_REGULAR_EXPRESSION);
});

test('requests are validated as Kafka validates them', async () => {
  const h = await harness();
  const invalid = async (over: Partial<ConsumerGroupHeartbeatInput>, message: RegExp, apiVersion = 1) => {
    const response = await beat(h, over, apiVersion);
    assert.equal(response.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(response.errorMessage ?? '', message);
  };
  await invalid({ memberId: '', rebalanceTimeoutMs: 1, subscribedTopicNames: [], topicPartitions: [] }, /MemberId can't be empty/);
  await invalid({ groupId: '' }, /GroupId can't be empty/);
  await invalid({ rebalanceTimeoutMs: -1, subscribedTopicNames: [], topicPartitions: [] }, /RebalanceTimeoutMs must be provided/);
  await invalid({ rebalanceTimeoutMs: 1, subscribedTopicNames: ['a'], topicPartitions: null }, /TopicPartitions must be empty/);
  await invalid({ rebalanceTimeoutMs: 1, topicPartitions: [] }, /SubscribedTopicNames or SubscribedTopicRegex/);
  await invalid({ memberEpoch: -2 }, /InstanceId can't be null/);
  await invalid({ memberEpoch: -3 }, /MemberEpoch is invalid/);
  await invalid({ instanceId: '' }, /InstanceId can't be empty/);
  const generated = await beat(h, { memberId: '', rebalanceTimeoutMs: 1, subscribedTopicNames: ['events'], topicPartitions: [] }, 0);
  assert.equal(generated.errorCode, ErrorCode.NONE, 'v0 lets the coordinator pick the member id');
  assert.match(generated.memberId ?? '', /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
});

test('OffsetCommit and OffsetFetch v9 check member epochs; DeleteGroups refuses a group with members', async () => {
  const h = await harness();
  const joined = await join(h, 'm1');
  const request = (epoch: number, memberId = 'm1') => ({
    groupId: 'g',
    generationIdOrMemberEpoch: epoch,
    memberId,
    groupInstanceId: null,
    retentionTimeMs: -1,
    topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 9, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });
  assert.equal((await h.coordinator.commitOffsets(request(joined.memberEpoch), 9))[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.equal((await h.coordinator.commitOffsets(request(joined.memberEpoch + 1), 9))[0]!.partitions[0]!.errorCode, ErrorCode.STALE_MEMBER_EPOCH);
  assert.equal((await h.coordinator.commitOffsets(request(joined.memberEpoch), 8))[0]!.partitions[0]!.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.equal((await h.coordinator.commitOffsets(request(1, 'ghost'), 9))[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const fetched = h.coordinator.fetchOffsets({ groupId: 'g', memberId: 'm1', memberEpoch: joined.memberEpoch, topics: null, requireStable: true });
  assert.equal(fetched.topics[0]!.partitions[0]!.committedOffset, 9);
  const stale = h.coordinator.fetchOffsets({ groupId: 'g', memberId: 'm1', memberEpoch: 7, topics: null, requireStable: false });
  assert.equal(stale.errorCode, ErrorCode.STALE_MEMBER_EPOCH);
  assert.equal((await h.coordinator.deleteGroups(['g']))[0]!.errorCode, ErrorCode.NON_EMPTY_GROUP);
  await beat(h, { memberId: 'm1', memberEpoch: -1 });
  assert.equal((await h.coordinator.deleteGroups(['g']))[0]!.errorCode, ErrorCode.NONE);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});

test('KIP-1251: a commit with an older member epoch is accepted for partitions held since then, also after a reload', async () => {
  const h = await harness();
  await join(h, 'm1');
  await join(h, 'm2');
  const revoking = await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3, 4, 5]) });
  const kept = partitionsOf(revoking);
  const given = [0, 1, 2, 3, 4, 5].filter((p) => !kept.includes(p));
  assert.equal((await beat(h, { memberId: 'm1', memberEpoch: 1, topicPartitions: owned(kept) })).memberEpoch, 2);
  const released = await beat(h, { memberId: 'm2', memberEpoch: 2, topicPartitions: [] });
  assert.deepEqual(partitionsOf(released), given);
  const commit = async (coordinator: Harness['coordinator'], memberId: string, epoch: number, partitions: number[]) => {
    const [topic] = await coordinator.commitOffsets({
      groupId: 'g', generationIdOrMemberEpoch: epoch, memberId, groupInstanceId: null, retentionTimeMs: -1,
      topics: [{ name: 'events', partitions: partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null })) }],
    }, 9);
    return [...new Set(topic!.partitions.map((p) => p.errorCode))];
  };
  const check = async (coordinator: Harness['coordinator']) => {
    assert.deepEqual(await commit(coordinator, 'm1', 1, kept), [ErrorCode.NONE], 'm1 has held what it kept since epoch 1');
    assert.deepEqual(await commit(coordinator, 'm1', 1, given), [ErrorCode.STALE_MEMBER_EPOCH], 'm1 gave these up');
    assert.deepEqual(await commit(coordinator, 'm1', 1, [...kept, given[0]!]), [ErrorCode.STALE_MEMBER_EPOCH], 'one bad partition fails the request');
    assert.deepEqual(await commit(coordinator, 'm2', 1, given), [ErrorCode.STALE_MEMBER_EPOCH], 'm2 got its partitions at epoch 2');
    assert.deepEqual(await commit(coordinator, 'm2', 2, given), [ErrorCode.NONE]);
  };
  await check(h.coordinator);
  await check(await h.reload());
});

test('KIP-1251: a static member that left (-2) and returns under a new member id may commit its partitions with any epoch up to its own', async () => {
  const h = await harness();
  await join(h, 'a1', { instanceId: 'app-1' });
  await beat(h, { memberId: 'a1', memberEpoch: -2, instanceId: 'app-1' });
  const back = await join(h, 'x1', { instanceId: 'app-1' });
  assert.ok(back.memberEpoch > 0);
  const [topic] = await h.coordinator.commitOffsets({
    groupId: 'g', generationIdOrMemberEpoch: 0, memberId: 'x1', groupInstanceId: 'app-1', retentionTimeMs: -1,
    topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }],
  }, 9);
  assert.equal(topic!.partitions[0]!.errorCode, ErrorCode.NONE, 'its partitions went back to assignment epoch 0 when it left');
});

test('the first heartbeat to an empty classic group upgrades it to a consumer group and keeps its offsets', async () => {
  const h = await harness();
  await h.coordinator.commitOffsets(
    { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 2, committedOffset: 77, committedLeaderEpoch: -1, committedMetadata: null }] }] },
    8,
  );
  assert.equal(h.coordinator.listGroups([], ['classic']).groups.length, 1);
  const joined = await join(h, 'm1');
  assert.equal(joined.errorCode, ErrorCode.NONE);
  assert.deepEqual(h.coordinator.listGroups([], []).groups, [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' }]);
  const fetched = h.coordinator.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: null, requireStable: false });
  assert.equal(fetched.topics[0]!.partitions[0]!.committedOffset, 77);
  const describedAsClassic = h.coordinator.describeGroups(['g'], 6)[0]!;
  assert.equal(describedAsClassic.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});
