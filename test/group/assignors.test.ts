/**
 * Server-side assignors and reconciliation as pure functions. Uniform: every
 * subscribed partition is assigned exactly once, only to subscribers of its
 * topic; members with the same eligibility differ by at most one partition
 * (homogeneous and heterogeneous subscriptions, seeded random shapes);
 * adding a member moves only what balance requires (stickiness). Range:
 * Kafka's contiguous ranges, static members first. Reconciliation: a member
 * keeps what stays, must revoke what goes before anything new, and receives
 * a partition only once nobody owns it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rangeAssignor, uniformAssignor, type AssignmentMemberSpec, type AssignmentSpec } from '../../src/group/assignors.js';
import { assignmentEpochsAt, MemberState, newConsumerGroupMember, type Assignment } from '../../src/group/consumer-group.js';
import { reconcile } from '../../src/group/reconciliation.js';
import { SeededRandom } from '../../src/io/random.js';

const member = (topics: string[], assignment: Assignment = new Map(), instanceId: string | null = null): AssignmentMemberSpec => ({
  instanceId,
  rackId: null,
  subscribedTopicIds: new Set(topics),
  assignment,
});

function count(assignment: Assignment | undefined): number {
  let n = 0;
  for (const partitions of assignment?.values() ?? []) n += partitions.size;
  return n;
}

/** Every partition of every subscribed topic is owned exactly once, by a subscriber. */
function assertComplete(spec: AssignmentSpec, result: Map<string, Assignment>): void {
  const owners = new Map<string, string>();
  for (const [memberId, assignment] of result) {
    for (const [topicId, partitions] of assignment) {
      assert.ok(spec.members.get(memberId)!.subscribedTopicIds.has(topicId), `${memberId} got ${topicId} without subscribing`);
      for (const p of partitions) {
        const key = `${topicId}-${p}`;
        assert.equal(owners.get(key), undefined, `${key} assigned twice`);
        owners.set(key, memberId);
      }
    }
  }
  for (const [topicId, partitionCount] of spec.partitionCounts) {
    const subscribed = [...spec.members.values()].some((m) => m.subscribedTopicIds.has(topicId));
    for (let p = 0; p < partitionCount; p++) assert.equal(owners.has(`${topicId}-${p}`), subscribed, `${topicId}-${p}`);
  }
}

test('uniform balances a homogeneous group to within one partition', () => {
  const spec: AssignmentSpec = {
    members: new Map([['a', member(['t1', 't2'])], ['b', member(['t1', 't2'])], ['c', member(['t1', 't2'])]]),
    partitionCounts: new Map([['t1', 5], ['t2', 3]]),
  };
  const result = uniformAssignor.assign(spec);
  assertComplete(spec, result);
  const counts = [...result.values()].map(count).sort();
  assert.deepEqual(counts, [2, 3, 3]);
});

test('uniform is sticky: a new member takes only its share from the others', () => {
  const before = uniformAssignor.assign({ members: new Map([['a', member(['t'])], ['b', member(['t'])]]), partitionCounts: new Map([['t', 6]]) });
  const spec: AssignmentSpec = {
    members: new Map([['a', member(['t'], before.get('a'))], ['b', member(['t'], before.get('b'))], ['c', member(['t'])]]),
    partitionCounts: new Map([['t', 6]]),
  };
  const after = uniformAssignor.assign(spec);
  assertComplete(spec, after);
  for (const id of ['a', 'b']) {
    const kept = [...after.get(id)!.get('t')!].filter((p) => before.get(id)!.get('t')!.has(p));
    assert.equal(kept.length, 2, `${id} keeps two of its three partitions`);
  }
  assert.equal(count(after.get('c')), 2);
});

test('uniform handles random heterogeneous subscriptions: complete, and balanced among equally eligible members', () => {
  const random = new SeededRandom(42);
  for (let round = 0; round < 50; round++) {
    const topics = Array.from({ length: 1 + random.nextInt(4) }, (_, i) => `t${i}`);
    const partitionCounts = new Map(topics.map((t) => [t, 1 + random.nextInt(8)]));
    const members = new Map<string, AssignmentMemberSpec>();
    const memberCount = 1 + random.nextInt(5);
    for (let m = 0; m < memberCount; m++) {
      const subscribed = topics.filter(() => random.nextFloat() < 0.6);
      members.set(`m${m}`, member(subscribed.length > 0 ? subscribed : [topics[0]!]));
    }
    const spec = { members, partitionCounts };
    const result = uniformAssignor.assign(spec);
    assertComplete(spec, result);
    const groups = new Map<string, number[]>();
    for (const [id, m] of members) {
      const key = [...m.subscribedTopicIds].sort().join(',');
      groups.set(key, [...(groups.get(key) ?? []), count(result.get(id))]);
    }
    for (const counts of groups.values()) assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `seed round ${round}: ${counts}`);
  }
});

test("range gives Kafka's contiguous ranges, static members first, extra partitions to the first members", () => {
  const spec: AssignmentSpec = {
    members: new Map([['b', member(['t'])], ['a', member(['t'])], ['z', member(['t'], new Map(), 'instance-0')]]),
    partitionCounts: new Map([['t', 7]]),
  };
  const result = rangeAssignor.assign(spec);
  assert.deepEqual([...result.get('z')!.get('t')!], [0, 1, 2]);
  assert.deepEqual([...result.get('a')!.get('t')!], [3, 4]);
  assert.deepEqual([...result.get('b')!.get('t')!], [5, 6]);
});

test('reconciliation revokes first, then assigns only released partitions', () => {
  const assignedPartitions = new Map([['t', new Set([0, 1, 2, 3])]]);
  const owner = { ...newConsumerGroupMember('a'), memberEpoch: 1, previousMemberEpoch: 0, assignedPartitions, assignmentEpochs: assignmentEpochsAt(assignedPartitions, 1) };
  const target = new Map([['t', new Set([0, 1])]]);
  const free = () => -1;
  const revoking = reconcile(owner, { targetAssignmentEpoch: 2, targetAssignment: target, currentPartitionEpoch: free, ownedTopicPartitions: [{ topicId: 't', partitions: [0, 1, 2, 3] }] });
  assert.equal(revoking.state, MemberState.UNREVOKED_PARTITIONS);
  assert.equal(revoking.memberEpoch, 1);
  assert.deepEqual([...revoking.partitionsPendingRevocation.get('t')!], [2, 3]);
  const stillOwning = reconcile(revoking, { targetAssignmentEpoch: 2, targetAssignment: target, currentPartitionEpoch: free, ownedTopicPartitions: [{ topicId: 't', partitions: [0, 1, 3] }] });
  assert.equal(stillOwning, revoking, 'no progress while a revoked partition is still owned');
  const done = reconcile(revoking, { targetAssignmentEpoch: 2, targetAssignment: target, currentPartitionEpoch: free, ownedTopicPartitions: [{ topicId: 't', partitions: [0, 1] }] });
  assert.deepEqual([done.state, done.memberEpoch, done.previousMemberEpoch], [MemberState.STABLE, 2, 1]);
  // KIP-1251: what A kept stays at the epoch it was assigned at, so a commit with epoch 1 is still good for it.
  assert.deepEqual([...revoking.assignmentEpochs.get('t')!].sort(), [[0, 1], [1, 1], [2, 1], [3, 1]]);
  assert.deepEqual([...done.assignmentEpochs.get('t')!].sort(), [[0, 1], [1, 1]]);

  const newcomer = { ...newConsumerGroupMember('b'), memberEpoch: 0 };
  const ownedByA = (topicId: string, p: number) => (topicId === 't' && p === 2 ? 1 : -1);
  const waiting = reconcile(newcomer, { targetAssignmentEpoch: 2, targetAssignment: new Map([['t', new Set([2, 4])]]), currentPartitionEpoch: ownedByA, ownedTopicPartitions: [] });
  assert.deepEqual([waiting.state, waiting.memberEpoch, [...waiting.assignedPartitions.get('t')!]], [MemberState.UNRELEASED_PARTITIONS, 2, [4]]);
  const released = reconcile(waiting, { targetAssignmentEpoch: 2, targetAssignment: new Map([['t', new Set([2, 4])]]), currentPartitionEpoch: free, ownedTopicPartitions: [{ topicId: 't', partitions: [4] }] });
  assert.deepEqual([released.state, [...released.assignedPartitions.get('t')!].sort()], [MemberState.STABLE, [2, 4]]);
  assert.deepEqual([...released.assignmentEpochs.get('t')!].sort(), [[2, 2], [4, 2]], 'newly assigned partitions take the target epoch');
});
