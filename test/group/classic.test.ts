/**
 * The classic group state machine, driven through the coordinator with a
 * ManualClock. Proves Kafka's behaviour for: KIP-394 member ids, the initial
 * rebalance delay and its extension, leader election and the leader-only
 * member list, protocol selection by vote, SyncGroup distributing the
 * leader's assignment only after it is written, heartbeats in each state,
 * session expiry and the rebalance that follows, the rebalance timeout
 * dropping members that do not rejoin, static membership (replacement
 * without rebalance, fencing of the old id, leave by instance id), batch
 * LeaveGroup, group.max.size, session timeout bounds, empty group ids,
 * inconsistent protocols, and JoinGroup before v4 (no member id round trip).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { JoinGroupInput } from '../../src/group/classic-protocol.js';
import type { JoinGroupResponseData } from '../../src/group/classic-group.js';
import { encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import { harness, settle, type Harness } from './helpers.js';

const ctx = (clientId = 'client', apiVersion = 9) => ({ clientId, clientHost: '/127.0.0.1', apiVersion });
const metadata = (topics: string[] = ['events']) => encodeSubscription({ topics });

function joinRequest(over: Partial<JoinGroupInput> = {}): JoinGroupInput {
  return {
    groupId: 'g',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 60_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: metadata() }],
    reason: null,
    ...over,
  };
}

/** Tracks a pending promise so a test can assert it has not settled yet. */
function track<T>(promise: Promise<T>): { done: () => boolean; value: () => T; promise: Promise<T> } {
  let settled = false;
  let result: T;
  promise.then((v) => {
    settled = true;
    result = v;
  });
  return { done: () => settled, value: () => result!, promise };
}

/** A dynamic member's two-step join (KIP-394); returns the pending second JoinGroup. */
async function startJoin(h: Harness, over: Partial<JoinGroupInput> = {}, clientId = 'client') {
  const first = await h.coordinator.joinGroup(ctx(clientId), joinRequest(over));
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  return { memberId: first.memberId, join: track(h.coordinator.joinGroup(ctx(clientId), joinRequest({ ...over, memberId: first.memberId }))) };
}

/** Brings a one-member group to Stable; returns its member id and generation. */
async function stableSingleMember(h: Harness) {
  const { memberId, join } = await startJoin(h);
  await h.advance(3000);
  assert.ok(join.done());
  const response = join.value();
  const sync = await h.coordinator.syncGroup({
    groupId: 'g',
    generationId: response.generationId,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId, assignment: Buffer.from('all') }],
  });
  assert.equal(sync.errorCode, ErrorCode.NONE);
  return { memberId, generationId: response.generationId };
}

test('a new dynamic member gets a member id first (KIP-394), then joins after the initial delay as leader', async () => {
  const h = await harness();
  const first = await h.coordinator.joinGroup(ctx('app'), joinRequest());
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.match(first.memberId, /^app-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const join = track(h.coordinator.joinGroup(ctx('app'), joinRequest({ memberId: first.memberId })));
  await h.advance(2999);
  assert.equal(join.done(), false, 'the initial rebalance waits group.initial.rebalance.delay.ms');
  await h.advance(1);
  const response: JoinGroupResponseData = join.value();
  assert.equal(response.errorCode, ErrorCode.NONE);
  assert.equal(response.generationId, 1);
  assert.equal(response.leader, first.memberId);
  assert.equal(response.protocolName, 'range');
  assert.equal(response.protocolType, 'consumer');
  assert.deepEqual(response.members.map((m) => m.memberId), [first.memberId]);
  const [described] = h.coordinator.describeGroups(['g'], 5);
  assert.equal(described!.groupState, 'CompletingRebalance');
});

test('members arriving during the initial delay extend it; all get the generation, only the leader the member list', async () => {
  const h = await harness();
  const a = await startJoin(h, {}, 'a');
  await h.advance(2000);
  const b = await startJoin(h, {}, 'b');
  await h.advance(1000);
  assert.equal(a.join.done(), false, 'a member joined during the delay: wait another delay');
  await h.advance(2999);
  assert.equal(a.join.done(), false);
  await h.advance(1);
  assert.ok(a.join.done() && b.join.done());
  assert.equal(a.join.value().generationId, 1);
  assert.equal(b.join.value().generationId, 1);
  assert.equal(a.join.value().leader, a.memberId);
  assert.equal(a.join.value().members.length, 2);
  assert.equal(b.join.value().members.length, 0);
});

test('the protocol is chosen by vote among the protocols every member supports', async () => {
  const h = await harness({ config: { classicGroupInitialRebalanceDelayMs: 0 } });
  const p = (names: string[]) => names.map((name) => ({ name, metadata: metadata() }));
  const joins = [
    await startJoin(h, { protocols: p(['range', 'roundrobin', 'sticky']) }, 'a'),
    await startJoin(h, { protocols: p(['roundrobin', 'range']) }, 'b'),
    await startJoin(h, { protocols: p(['roundrobin', 'cooperative-sticky', 'range']) }, 'c'),
  ];
  await h.advance(0);
  for (const j of joins) assert.equal(j.join.value().protocolName, 'roundrobin');
  const refused = await h.coordinator.joinGroup(ctx('d'), joinRequest({ protocols: p(['sticky']) }));
  assert.equal(refused.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
});

test("SyncGroup hands out the leader's assignment once it is written; the group becomes Stable", async () => {
  const h = await harness();
  const a = await startJoin(h, {}, 'a');
  const b = await startJoin(h, {}, 'b');
  await h.advance(6000);
  const generationId = a.join.value().generationId;
  const followerSync = track(
    h.coordinator.syncGroup({ groupId: 'g', generationId, memberId: b.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] }),
  );
  await settle();
  assert.equal(followerSync.done(), false, 'followers wait for the leader');
  const before = h.log.allRecords().length;
  const leaderSync = await h.coordinator.syncGroup({
    groupId: 'g',
    generationId,
    memberId: a.memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [
      { memberId: a.memberId, assignment: Buffer.from('A') },
      { memberId: b.memberId, assignment: Buffer.from('B') },
    ],
  });
  assert.equal(leaderSync.errorCode, ErrorCode.NONE);
  assert.equal(leaderSync.assignment.toString(), 'A');
  assert.equal((await followerSync.promise).assignment.toString(), 'B');
  const written = h.log.allRecords().slice(before);
  assert.equal(written.length, 1);
  assert.equal(written[0]!.type, 'GroupMetadata');
  const [described] = h.coordinator.describeGroups(['g'], 5);
  assert.equal(described!.groupState, 'Stable');
  assert.equal(described!.protocolData, 'range');
  assert.deepEqual(described!.members.map((m) => m.memberAssignment.toString()).sort(), ['A', 'B']);
});

test('a failed write of the assignment answers every waiting SyncGroup with the mapped error', async () => {
  const h = await harness({ config: { classicGroupInitialRebalanceDelayMs: 0 } });
  const a = await startJoin(h);
  await h.advance(0);
  h.log.failAppendsWith = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  const sync = await h.coordinator.syncGroup({
    groupId: 'g',
    generationId: a.join.value().generationId,
    memberId: a.memberId,
    groupInstanceId: null,
    protocolType: null,
    protocolName: null,
    assignments: [{ memberId: a.memberId, assignment: Buffer.from('A') }],
  });
  assert.equal(sync.errorCode, ErrorCode.NOT_COORDINATOR);
});

test('heartbeats: fine when Stable, REBALANCE_IN_PROGRESS while preparing, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID when stale', async () => {
  const h = await harness();
  const { memberId, generationId } = await stableSingleMember(h);
  const beat = (over: Partial<{ memberId: string; generationId: number; groupInstanceId: string | null; groupId: string }> = {}) =>
    h.coordinator.heartbeat({ groupId: 'g', memberId, generationId, groupInstanceId: null, ...over });
  assert.equal(await beat(), ErrorCode.NONE);
  assert.equal(await beat({ generationId: generationId + 1 }), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(await beat({ memberId: 'nobody' }), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await beat({ groupId: 'other' }), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await beat({ groupId: '' }), ErrorCode.INVALID_GROUP_ID);
  const newcomer = await startJoin(h, {}, 'new');
  assert.equal(await beat(), ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal(newcomer.join.done(), false);
});

test('a member that stops heartbeating is removed after its session timeout and the others rebalance', async () => {
  const h = await harness({ config: { classicGroupInitialRebalanceDelayMs: 0 } });
  const a = await startJoin(h, {}, 'a');
  const b = await startJoin(h, {}, 'b');
  await h.advance(0);
  const generationId = a.join.value().generationId;
  for (const m of [a, b]) {
    const syncing = h.coordinator.syncGroup({ groupId: 'g', generationId, memberId: m.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    if (m === b) await syncing;
    else void syncing;
  }
  await h.drain();
  // b keeps heartbeating, a goes silent.
  for (let t = 0; t < 3; t++) {
    await h.advance(4000);
    assert.equal(await h.coordinator.heartbeat({ groupId: 'g', memberId: b.memberId, generationId, groupInstanceId: null }), t < 2 ? ErrorCode.NONE : ErrorCode.REBALANCE_IN_PROGRESS);
  }
  const rejoin = track(h.coordinator.joinGroup(ctx('b'), joinRequest({ memberId: b.memberId })));
  await h.drain();
  assert.ok(rejoin.done(), 'the only remaining member rejoined: the join phase completes at once');
  assert.equal(rejoin.value().generationId, generationId + 1);
  assert.deepEqual(rejoin.value().members.map((m) => m.memberId), [b.memberId]);
});

test('members that do not rejoin within the rebalance timeout are dropped', async () => {
  const h = await harness({ config: { classicGroupInitialRebalanceDelayMs: 0 } });
  const a = await startJoin(h, { sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 20_000 }, 'a');
  const b = await startJoin(h, { sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 20_000 }, 'b');
  await h.advance(0);
  const generationId = a.join.value().generationId;
  await h.coordinator.syncGroup({ groupId: 'g', generationId, memberId: a.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  await h.coordinator.syncGroup({ groupId: 'g', generationId, memberId: b.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  // a new member starts a rebalance; a rejoins, b never does
  const c = await startJoin(h, { sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 20_000 }, 'c');
  const aRejoin = track(h.coordinator.joinGroup(ctx('a'), joinRequest({ memberId: a.memberId, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 20_000 })));
  await h.advance(19_999);
  assert.equal(aRejoin.done(), false);
  await h.advance(1);
  assert.ok(aRejoin.done() && c.join.done());
  assert.equal(aRejoin.value().generationId, generationId + 1);
  const ids = new Set(aRejoin.value().members.map((m) => m.memberId));
  assert.ok(ids.has(a.memberId) && ids.has(c.memberId) && !ids.has(b.memberId));
});

test('a static member that restarts takes its old place without a rebalance; the old member id is fenced', async () => {
  const h = await harness();
  const join = track(h.coordinator.joinGroup(ctx('s'), joinRequest({ groupInstanceId: 'instance-1' })));
  await h.advance(3000);
  const first = join.value();
  assert.equal(first.errorCode, ErrorCode.NONE, 'static members skip MEMBER_ID_REQUIRED');
  assert.match(first.memberId, /^instance-1-/);
  await h.coordinator.syncGroup({
    groupId: 'g',
    generationId: first.generationId,
    memberId: first.memberId,
    groupInstanceId: 'instance-1',
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId: first.memberId, assignment: Buffer.from('mine') }],
  });
  const again = await h.coordinator.joinGroup(ctx('s'), joinRequest({ groupInstanceId: 'instance-1' }));
  assert.equal(again.errorCode, ErrorCode.NONE);
  assert.notEqual(again.memberId, first.memberId);
  assert.equal(again.generationId, first.generationId, 'no rebalance');
  assert.equal(again.skipAssignment, true, 'the replaced leader skips the assignment (KIP-814)');
  const stale = await h.coordinator.heartbeat({ groupId: 'g', memberId: first.memberId, generationId: first.generationId, groupInstanceId: 'instance-1' });
  assert.equal(stale, ErrorCode.FENCED_INSTANCE_ID);
  const sync = await h.coordinator.syncGroup({
    groupId: 'g',
    generationId: again.generationId,
    memberId: again.memberId,
    groupInstanceId: 'instance-1',
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [],
  });
  assert.equal(sync.assignment.toString(), 'mine', 'the assignment is kept');
  const left = await h.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId: '', groupInstanceId: 'instance-1', reason: null }] });
  assert.deepEqual(left.members, [{ memberId: '', groupInstanceId: 'instance-1', errorCode: ErrorCode.NONE }]);
  await h.drain();
  assert.equal(h.coordinator.describeGroups(['g'], 5)[0]!.groupState, 'Empty');
});

test('batch LeaveGroup answers each member; unknown members get UNKNOWN_MEMBER_ID; leaving members trigger a rebalance', async () => {
  const h = await harness({ config: { classicGroupInitialRebalanceDelayMs: 0 } });
  const a = await startJoin(h, {}, 'a');
  const b = await startJoin(h, {}, 'b');
  const c = await startJoin(h, {}, 'c');
  await h.advance(0);
  const generationId = a.join.value().generationId;
  for (const m of [a, b, c]) void h.coordinator.syncGroup({ groupId: 'g', generationId, memberId: m.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  await h.drain();
  const left = await h.coordinator.leaveGroup({
    groupId: 'g',
    members: [
      { memberId: a.memberId, groupInstanceId: null, reason: 'bye' },
      { memberId: 'ghost', groupInstanceId: null, reason: null },
      { memberId: b.memberId, groupInstanceId: null, reason: null },
    ],
  });
  assert.deepEqual(left.members.map((m) => m.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE]);
  assert.equal(await h.coordinator.heartbeat({ groupId: 'g', memberId: c.memberId, generationId, groupInstanceId: null }), ErrorCode.REBALANCE_IN_PROGRESS);
  const missing = await h.coordinator.leaveGroup({ groupId: 'nope', members: [{ memberId: 'x', groupInstanceId: null, reason: null }] });
  assert.deepEqual(missing.members.map((m) => m.errorCode), [ErrorCode.UNKNOWN_MEMBER_ID]);
});

test('group.max.size refuses members beyond the limit with GROUP_MAX_SIZE_REACHED', async () => {
  const h = await harness({ config: { classicGroupMaxSize: 2, classicGroupInitialRebalanceDelayMs: 0 } });
  const a = await startJoin(h, {}, 'a');
  const b = await startJoin(h, {}, 'b');
  const refused = await h.coordinator.joinGroup(ctx('c'), joinRequest());
  assert.equal(refused.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
  assert.equal(refused.memberId, '');
  await h.advance(0);
  assert.equal(a.join.value().members.length, 2);
  assert.ok(b.join.done());
});

test('session timeouts outside group.min/max.session.timeout.ms and empty group ids are refused', async () => {
  const h = await harness();
  assert.equal((await h.coordinator.joinGroup(ctx(), joinRequest({ sessionTimeoutMs: 5999 }))).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal((await h.coordinator.joinGroup(ctx(), joinRequest({ sessionTimeoutMs: 1_800_001 }))).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal((await h.coordinator.joinGroup(ctx(), joinRequest({ groupId: '' }))).errorCode, ErrorCode.INVALID_GROUP_ID);
  const sync = await h.coordinator.syncGroup({ groupId: '', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  assert.equal(sync.errorCode, ErrorCode.INVALID_GROUP_ID);
  const unknownSync = await h.coordinator.syncGroup({ groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  assert.equal(unknownSync.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('JoinGroup before v4 joins in one step; rejoining with an unknown member id is UNKNOWN_MEMBER_ID', async () => {
  const h = await harness({ config: { classicGroupInitialRebalanceDelayMs: 0 } });
  const join = track(h.coordinator.joinGroup(ctx('old', 3), joinRequest()));
  await h.advance(0);
  assert.equal(join.value().errorCode, ErrorCode.NONE);
  assert.match(join.value().memberId, /^old-/);
  const unknown = await h.coordinator.joinGroup(ctx('old', 3), joinRequest({ memberId: 'made-up' }));
  assert.equal(unknown.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a group id too long for the records is refused without touching the shard; other groups carry on', async () => {
  const h = await harness();
  const huge = 'g'.repeat(40_000);
  const refused = await h.coordinator.joinGroup(ctx(), joinRequest({ groupId: huge }));
  assert.equal(refused.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
  const commit = await h.coordinator.commitOffsets(
    { groupId: huge, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }] },
    8,
  );
  assert.equal(commit[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.deepEqual(h.coordinator.listGroups([], []).groups, []);
  const { memberId } = await stableSingleMember(h);
  assert.ok(memberId.startsWith('client-'));
});

test('a client flooding JoinGroup only creates pending member ids that expire with their session; the group keeps working', async () => {
  const h = await harness();
  const { memberId, generationId } = await stableSingleMember(h);
  for (let i = 0; i < 200; i++) {
    const flood = await h.coordinator.joinGroup(ctx('flood'), joinRequest());
    assert.equal(flood.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  }
  assert.equal(await h.coordinator.heartbeat({ groupId: 'g', memberId, generationId, groupInstanceId: null }), ErrorCode.NONE);
  const rejoin = track(h.coordinator.joinGroup(ctx(), joinRequest({ memberId })));
  await h.advance(9_999);
  assert.equal(rejoin.done(), false, 'pending members count until their session expires, as in Kafka');
  await h.advance(1);
  assert.equal(rejoin.value().errorCode, ErrorCode.NONE);
  assert.equal(rejoin.value().generationId, generationId + 1);
  assert.deepEqual(rejoin.value().members.map((m) => m.memberId), [memberId]);
});
