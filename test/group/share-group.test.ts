/**
 * KIP-932 share groups through ShareGroupHeartbeat on a ManualClock, with an
 * in-memory persister. Proves: a joining member gets an epoch and an empty
 * assignment until the persister initialized the subscribed share
 * partitions (start offset -1, state epoch = group epoch), then all of them;
 * with more members than partitions every member gets work and each
 * partition is shared by ceil(members / partitions) of them; a leave (-1)
 * and a session expiry (group.share.session.timeout.ms) remove the member
 * and give its partitions to the others; Kafka's errors (FENCED_MEMBER_EPOCH,
 * UNKNOWN_MEMBER_ID, GROUP_MAX_SIZE_REACHED, GROUP_ID_NOT_FOUND for a
 * consumer group's id, INCONSISTENT_GROUP_PROTOCOL for a classic JoinGroup
 * on a share group's id, INVALID_REQUEST with Kafka's messages); a deleted
 * topic leaves the state metadata; partitions added to a subscribed topic
 * are initialized from offset 0 and assigned; a failed
 * initialization leaves the partitions unassigned and is asked for again;
 * a shard rebuilt from the written records holds the same group.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ShareGroupHeartbeatInput, ShareGroupHeartbeatResponseData } from '../../src/group/share-group-protocol.js';
import type { GroupCoordinator } from '../../src/group/coordinator.js';
import { harness, imageWith, topicIdFor, type Harness } from './helpers.js';
import { MemorySharePersister } from './share-helpers.js';

const events = topicIdFor('events');
const small = topicIdFor('small');
const ctx = { clientId: 'client', clientHost: '/10.0.0.1' };

function beat(coordinator: GroupCoordinator, over: Partial<ShareGroupHeartbeatInput>): Promise<ShareGroupHeartbeatResponseData> {
  return coordinator.shareGroupHeartbeat(ctx, { groupId: 'sg', memberId: 'm1', memberEpoch: 0, rackId: null, subscribedTopicNames: ['events'], ...over });
}

/** Joins and waits for the persister initialization the join started. */
async function join(h: Harness, memberId: string, topics = ['events']): Promise<ShareGroupHeartbeatResponseData> {
  const response = await beat(h.coordinator, { memberId, subscribedTopicNames: topics });
  await h.coordinator.shareInitializationsSettled();
  await h.drain();
  return response;
}

function partitionsOf(response: ShareGroupHeartbeatResponseData, topicId: string): number[] {
  return response.assignment?.topicPartitions.find((t) => t.topicId === topicId)?.partitions ?? [];
}

test('a joining member is assigned the share partitions once the persister initialized them', async () => {
  const persister = new MemorySharePersister();
  const h = await harness({ persister });
  const joined = await join(h, 'm1');
  assert.equal(joined.errorCode, ErrorCode.NONE);
  assert.equal(joined.memberId, 'm1');
  assert.equal(joined.memberEpoch, 1);
  assert.equal(joined.heartbeatIntervalMs, 5000);
  assert.deepEqual(joined.assignment, { topicPartitions: [] }, 'nothing is initialized yet');
  const inits = persister.callsOf('initialize');
  assert.deepEqual(
    inits.map((c) => (c.op === 'initialize' ? [c.key, c.stateEpoch, c.startOffset] : [])),
    [0, 1, 2, 3, 4, 5].map((p) => [`sg:${events}:${p}`, 1, -1]),
  );
  const next = await beat(h.coordinator, { memberEpoch: 1, subscribedTopicNames: null });
  assert.equal(next.memberEpoch, 2, 'newly initialized partitions bump the group epoch');
  assert.deepEqual(partitionsOf(next, events), [0, 1, 2, 3, 4, 5]);
  const quiet = await beat(h.coordinator, { memberEpoch: 2, subscribedTopicNames: null });
  assert.equal(quiet.memberEpoch, 2);
  assert.equal(quiet.assignment, null, 'an unchanged assignment is not sent again');
  await h.coordinator.shareInitializationsSettled();
  assert.equal(persister.callsOf('initialize').length, 6, 'initialized partitions are not initialized again');
});

test('with more members than partitions, each partition is shared by ceil(members / partitions) members', async () => {
  const h = await harness({ topics: [{ name: 'small', partitions: 2 }] });
  for (const id of ['m1', 'm2', 'm3', 'm4', 'm5']) await join(h, id, ['small']);
  // Every member heartbeats once more, so each one has reconciled to the final target assignment.
  for (const id of ['m1', 'm2', 'm3', 'm4', 'm5']) {
    const response = await beat(h.coordinator, { memberId: id, memberEpoch: 0, subscribedTopicNames: ['small'] });
    assert.ok(partitionsOf(response, small).length >= 1, `${id} has work`);
  }
  const described = h.coordinator.shareGroupDescribe(['sg'])[0]!;
  assert.equal(described.members.length, 5);
  const holders = new Map<number, number>();
  for (const member of described.members) {
    const partitions = member.assignment.topicPartitions.flatMap((t) => t.partitions);
    assert.ok(partitions.length >= 1 && partitions.length <= 2, `${member.memberId} holds ${partitions.length}`);
    for (const p of partitions) holders.set(p, (holders.get(p) ?? 0) + 1);
  }
  assert.deepEqual([...holders.entries()].sort(), [[0, 3], [1, 3]]);
});

test('a member that leaves, or whose session expires, is removed and its partitions go to the others', async () => {
  const h = await harness();
  await join(h, 'm1');
  await join(h, 'm2');
  let m1 = await beat(h.coordinator, { memberId: 'm1', memberEpoch: 0 });
  const m2 = await beat(h.coordinator, { memberId: 'm2', memberEpoch: 0 });
  assert.deepEqual([...partitionsOf(m1, events), ...partitionsOf(m2, events)].sort(), [0, 1, 2, 3, 4, 5], 'no partition is shared when there are enough');
  assert.equal(partitionsOf(m2, events).length, 3);

  const left = await beat(h.coordinator, { memberId: 'm2', memberEpoch: -1, subscribedTopicNames: null });
  assert.deepEqual([left.errorCode, left.memberId, left.memberEpoch], [ErrorCode.NONE, 'm2', -1]);
  m1 = await beat(h.coordinator, { memberId: 'm1', memberEpoch: m1.memberEpoch, subscribedTopicNames: null });
  assert.deepEqual(partitionsOf(m1, events), [0, 1, 2, 3, 4, 5]);
  assert.equal((await beat(h.coordinator, { memberId: 'm2', memberEpoch: 3, subscribedTopicNames: null })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);

  await join(h, 'm3');
  await h.advance(40_000);
  m1 = await beat(h.coordinator, { memberId: 'm1', memberEpoch: m1.memberEpoch, subscribedTopicNames: null });
  await h.advance(10_000);
  // m3 sent nothing for 50 s (past group.share.session.timeout.ms), m1 heartbeated 10 s ago.
  assert.deepEqual(h.coordinator.shareGroupDescribe(['sg'])[0]!.members.map((m) => m.memberId), ['m1']);
  await h.advance(45_000);
  const described = h.coordinator.shareGroupDescribe(['sg'])[0]!;
  assert.deepEqual([described.groupState, described.members.length], ['Empty', 0]);
});

test('epochs, unknown members, the size limit and other group types get Kafka\'s errors', async () => {
  const h = await harness({ config: { shareGroupMaxSize: 2 } });
  const joined = await join(h, 'm1');
  const greater = await beat(h.coordinator, { memberEpoch: joined.memberEpoch + 5, subscribedTopicNames: null });
  assert.equal(greater.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
  assert.match(greater.errorMessage!, /greater member epoch/);
  const current = await beat(h.coordinator, { memberEpoch: joined.memberEpoch, subscribedTopicNames: null });
  assert.equal(current.memberEpoch, 2);
  const previous = await beat(h.coordinator, { memberEpoch: 1, subscribedTopicNames: null });
  assert.equal(previous.errorCode, ErrorCode.NONE, 'the previous epoch is forgiven (its response was lost)');
  const stale = await beat(h.coordinator, { memberEpoch: 0, memberId: 'm1', subscribedTopicNames: ['events'] });
  assert.equal(stale.errorCode, ErrorCode.NONE, 'epoch 0 rejoins');
  assert.equal((await beat(h.coordinator, { memberId: 'ghost', memberEpoch: 4, subscribedTopicNames: null })).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal((await beat(h.coordinator, { groupId: 'nope', memberEpoch: 4, subscribedTopicNames: null })).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  await join(h, 'm2');
  const full = await beat(h.coordinator, { memberId: 'm3' });
  assert.deepEqual([full.errorCode, full.errorMessage], [ErrorCode.GROUP_MAX_SIZE_REACHED, 'The share group has reached its maximum capacity of 2 members.']);

  await h.coordinator.consumerGroupHeartbeat(
    { clientId: 'c', clientHost: '/h', apiVersion: 1 },
    { groupId: 'cg', memberId: 'c1', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 1000, subscribedTopicNames: ['events'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [] },
  );
  const other = await beat(h.coordinator, { groupId: 'cg' });
  assert.deepEqual([other.errorCode, other.errorMessage], [ErrorCode.GROUP_ID_NOT_FOUND, 'Group cg is not a share group.']);
  const asConsumer = await h.coordinator.consumerGroupHeartbeat(
    { clientId: 'c', clientHost: '/h', apiVersion: 1 },
    { groupId: 'sg', memberId: 'c1', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 1000, subscribedTopicNames: ['events'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [] },
  );
  assert.equal(asConsumer.errorCode, ErrorCode.GROUP_ID_NOT_FOUND, 'a consumer heartbeat cannot take a share group id');
  const asClassic = await h.coordinator.joinGroup(
    { clientId: 'c', clientHost: '/h', apiVersion: 9 },
    { groupId: 'sg', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null },
  );
  assert.deepEqual([asClassic.errorCode, asClassic.memberId], [ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''], 'nor a classic JoinGroup, as Kafka');
});

test('a deleted topic leaves the share groups\' state metadata', async () => {
  const h = await harness({ topics: [{ name: 'events', partitions: 2 }, { name: 'other', partitions: 1 }] });
  await join(h, 'm1', ['events', 'other']);
  const partition = h.coordinator.partitionFor('sg');
  const initialized = () => {
    const outcome = h.coordinator.runtime.read(partition, (shard) => {
      const group = shard.groups.get('sg');
      return group?.type === 'share' ? [...(group.statePartitionMetadata?.initialized.keys() ?? [])].sort() : [];
    });
    assert.ok(outcome.ok);
    return outcome.response;
  };
  assert.deepEqual(initialized(), [events, topicIdFor('other')].sort());
  await h.coordinator.runtime.write(partition, (shard) => shard.share.cleanupDeletedTopics(new Set([topicIdFor('other')])));
  assert.deepEqual(initialized(), [events]);
});

test('requests Kafka refuses before the shard are INVALID_REQUEST with its messages', async () => {
  const h = await harness();
  const cases: [Partial<ShareGroupHeartbeatInput>, string][] = [
    [{ memberId: '' }, "MemberId can't be empty."],
    [{ memberId: 'x'.repeat(37) }, 'Invalid member id in the request.'],
    [{ groupId: '' }, "GroupId can't be empty."],
    [{ rackId: ' ' }, "RackId can't be empty."],
    [{ subscribedTopicNames: null }, 'SubscribedTopicNames must be set in first request.'],
    [{ subscribedTopicNames: [] }, 'SubscribedTopicNames must be set in first request.'],
    [{ memberEpoch: -2 }, 'MemberEpoch is invalid.'],
  ];
  for (const [over, message] of cases) {
    const response = await beat(h.coordinator, over);
    assert.deepEqual([response.errorCode, response.errorMessage], [ErrorCode.INVALID_REQUEST, message], JSON.stringify(over));
  }
});

test('a failed initialization leaves the partitions unassigned, and a later heartbeat asks again', async () => {
  const persister = new MemorySharePersister();
  const h = await harness({ persister, topics: [{ name: 'events', partitions: 2 }] });
  persister.failing.set(`sg:${events}:1`, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  await join(h, 'm1');
  const after = await beat(h.coordinator, { memberEpoch: 1, subscribedTopicNames: null });
  assert.deepEqual(partitionsOf(after, events), [], 'one failure uninitializes the whole request, as Kafka');
  await h.coordinator.shareInitializationsSettled();
  persister.failing.clear();
  assert.equal(persister.callsOf('initialize').length, 4, 'the failed partitions are no longer initializing, so the heartbeat asked again');
  await h.drain();
  const assigned = await beat(h.coordinator, { memberEpoch: after.memberEpoch, subscribedTopicNames: null });
  await h.coordinator.shareInitializationsSettled();
  const last = await beat(h.coordinator, { memberEpoch: assigned.memberEpoch, subscribedTopicNames: null });
  assert.deepEqual(partitionsOf(assigned.assignment === null ? last : assigned, events), [0, 1]);
});

test('a coordinator rebuilt from the written records holds the same share group', async () => {
  const h = await harness();
  await join(h, 'm1');
  await join(h, 'm2', ['events', 'other']);
  await beat(h.coordinator, { memberId: 'm1', memberEpoch: 0 });
  await beat(h.coordinator, { memberId: 'm2', memberEpoch: 0, rackId: 'r2', subscribedTopicNames: ['events', 'other'] });
  const before = h.coordinator.shareGroupDescribe(['sg']);
  const stateBefore = h.coordinator.runtime.read(h.coordinator.partitionFor('sg'), (shard) => shard.groups.get('sg'));
  const reloaded = await h.reload();
  assert.deepEqual(reloaded.shareGroupDescribe(['sg']), before);
  const stateAfter = reloaded.runtime.read(reloaded.partitionFor('sg'), (shard) => shard.groups.get('sg'));
  assert.ok(stateBefore.ok && stateAfter.ok);
  const view = (g: unknown) => {
    const group = g as { targetAssignment: Map<string, unknown>; statePartitionMetadata: { initialized: Map<string, { partitions: Set<number> }> } | null; groupEpoch: number; targetAssignmentEpoch: number };
    return {
      groupEpoch: group.groupEpoch,
      targetAssignmentEpoch: group.targetAssignmentEpoch,
      target: [...group.targetAssignment.keys()].sort(),
      initialized: [...(group.statePartitionMetadata?.initialized ?? new Map())].map(([id, e]) => [id, [...e.partitions].sort()]),
    };
  };
  assert.deepEqual(view(stateAfter.response), view(stateBefore.response));
  const m1 = await beat(reloaded, { memberId: 'm1', memberEpoch: before[0]!.members.find((m) => m.memberId === 'm1')!.memberEpoch, subscribedTopicNames: null });
  assert.equal(m1.errorCode, ErrorCode.NONE, 'members carry on after the move');
});

test('partitions added to a subscribed topic are initialized from offset 0 and then assigned', async () => {
  const persister = new MemorySharePersister();
  const h = await harness({ persister, topics: [{ name: 'events', partitions: 2 }] });
  const joined = await join(h, 'm1');
  let member = await beat(h.coordinator, { memberEpoch: joined.memberEpoch, subscribedTopicNames: null });
  assert.deepEqual(partitionsOf(member, events), [0, 1]);
  h.setImage(imageWith([{ name: 'events', partitions: 3 }], 2));
  member = await beat(h.coordinator, { memberEpoch: member.memberEpoch, subscribedTopicNames: null });
  await h.coordinator.shareInitializationsSettled();
  await h.drain();
  const added = persister.callsOf('initialize').at(-1);
  assert.deepEqual(added, { op: 'initialize', key: `sg:${events}:2`, stateEpoch: member.memberEpoch, startOffset: 0 }, 'a new partition of a known topic starts at its beginning, as Kafka');
  member = await beat(h.coordinator, { memberEpoch: member.memberEpoch, subscribedTopicNames: null });
  assert.deepEqual(partitionsOf(member, events), [0, 1, 2]);
});
