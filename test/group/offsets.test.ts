/**
 * Committed offsets and group lifecycle: simple (non-member) commits create
 * a simple group; member commits are checked against generation and member
 * (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, and
 * GROUP_ID_NOT_FOUND from v9); oversized metadata is refused per partition;
 * OffsetFetch for given partitions and for all, missing offsets are -1;
 * OffsetDelete refuses subscribed topics; DeleteGroups refuses non-empty
 * groups; ListGroups filters by state and type; offsets expire after
 * offsets.retention.minutes (from the commit for simple groups, from the
 * moment an emptied group became Empty) and then the group is deleted; an
 * explicit retention time (OffsetCommit v2-v4) wins.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { OffsetCommitInput } from '../../src/group/offset-operations.js';
import { encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import { harness, type Harness } from './helpers.js';

function commit(over: Partial<OffsetCommitInput> = {}, partitions = [0, 1]): OffsetCommitInput {
  return {
    groupId: 'g',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1,
    topics: [{ name: 'events', partitions: partitions.map((p) => ({ partitionIndex: p, committedOffset: 100 + p, committedLeaderEpoch: 3, committedMetadata: `m${p}` })) }],
    ...over,
  };
}

const fetchAll = (h: Harness, groupId = 'g') => h.coordinator.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null, requireStable: false });

/** A stable classic group with one member subscribed to `topics`. */
async function stableGroup(h: Harness, topics = ['events'], sessionTimeoutMs = 10_000) {
  const ctx = { clientId: 'c', clientHost: '/h', apiVersion: 9 };
  const request = {
    groupId: 'g',
    sessionTimeoutMs,
    rebalanceTimeoutMs: 10_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: encodeSubscription({ topics }) }],
    reason: null,
  };
  const first = await h.coordinator.joinGroup(ctx, request);
  const join = h.coordinator.joinGroup(ctx, { ...request, memberId: first.memberId });
  await h.advance(3000);
  const joined = await join;
  await h.coordinator.syncGroup({ groupId: 'g', generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  return { memberId: joined.memberId, generationId: joined.generationId };
}

test('a simple commit creates a simple group; fetching gives the committed offsets, -1 for the rest', async () => {
  const h = await harness();
  const result = await h.coordinator.commitOffsets(commit(), 8);
  assert.deepEqual(result, [{ name: 'events', partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 0 }] }]);
  const fetched = h.coordinator.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: [{ name: 'events', partitionIndexes: [1, 5] }], requireStable: false });
  assert.deepEqual(fetched.topics, [
    {
      name: 'events',
      partitions: [
        { partitionIndex: 1, committedOffset: 101, committedLeaderEpoch: 3, metadata: 'm1', errorCode: 0 },
        { partitionIndex: 5, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
      ],
    },
  ]);
  assert.deepEqual(fetchAll(h).topics[0]!.partitions.map((p) => p.committedOffset), [100, 101]);
  const listed = h.coordinator.listGroups([], []);
  assert.deepEqual(listed.groups, [{ groupId: 'g', protocolType: '', groupState: 'Empty', groupType: 'classic' }]);
  const unknown = fetchAll(h, 'nobody');
  assert.deepEqual(unknown, { groupId: 'nobody', errorCode: 0, topics: [] });
});

test('member commits are checked against the member and its generation', async () => {
  const h = await harness();
  const { memberId, generationId } = await stableGroup(h);
  const ok = await h.coordinator.commitOffsets(commit({ memberId, generationIdOrMemberEpoch: generationId }), 8);
  assert.equal(ok[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  const stale = await h.coordinator.commitOffsets(commit({ memberId, generationIdOrMemberEpoch: generationId - 1 }), 8);
  assert.equal(stale[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  const stranger = await h.coordinator.commitOffsets(commit({ memberId: 'x', generationIdOrMemberEpoch: generationId }), 8);
  assert.equal(stranger[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const simple = await h.coordinator.commitOffsets(commit(), 8);
  assert.equal(simple[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID, 'no simple commits while the group has members');
  const missingOld = await h.coordinator.commitOffsets(commit({ groupId: 'missing', memberId, generationIdOrMemberEpoch: 1 }), 8);
  assert.equal(missingOld[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  const missingNew = await h.coordinator.commitOffsets(commit({ groupId: 'missing', memberId, generationIdOrMemberEpoch: 1 }), 9);
  assert.equal(missingNew[0]!.partitions[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});

test('a commit during CompletingRebalance is REBALANCE_IN_PROGRESS', async () => {
  const h = await harness();
  const ctx = { clientId: 'c', clientHost: '/h', apiVersion: 9 };
  const request = { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['events'] }) }], reason: null };
  const first = await h.coordinator.joinGroup(ctx, request);
  const join = h.coordinator.joinGroup(ctx, { ...request, memberId: first.memberId });
  await h.advance(3000);
  const joined = await join;
  const result = await h.coordinator.commitOffsets(commit({ memberId: joined.memberId, generationIdOrMemberEpoch: joined.generationId }), 8);
  assert.equal(result[0]!.partitions[0]!.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
});

test('after another member left, a commit with the current generation is accepted while the group prepares its rebalance, refused once it moved on', async () => {
  // Issue 9 reported Kafka 4.4 refusing a librdkafka member's commit from its revoke callback after another member
  // left. Kafka 4.4's ClassicGroup.validateOffsetCommit accepts the current generation in PreparingRebalance, and a
  // real librdkafka 2.0.2 member (eager range, sync commit in on_revoke, 0 or 5 s after the other member closed or was
  // killed) got NO_ERROR from Kafka 4.4 and from Spool alike. This pins that rule and the refusals after the rejoin.
  const h = await harness();
  const ctx = { clientId: 'c', clientHost: '/h', apiVersion: 9 };
  const request = { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['events'] }) }], reason: null };
  const [a, b] = await Promise.all([h.coordinator.joinGroup(ctx, request), h.coordinator.joinGroup(ctx, request)]);
  const joins = [h.coordinator.joinGroup(ctx, { ...request, memberId: a.memberId }), h.coordinator.joinGroup(ctx, { ...request, memberId: b.memberId })];
  // group.initial.rebalance.delay.ms (3 s), once more because the second member came during the first delay.
  await h.advance(6000);
  const [joinedA, joinedB] = await Promise.all(joins);
  await Promise.all([joinedA!, joinedB!].map((member) =>
    h.coordinator.syncGroup({ groupId: 'g', generationId: member.generationId, memberId: member.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })));
  const generation = joinedA!.generationId;
  await h.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId: joinedB!.memberId, groupInstanceId: null, reason: null }] });
  await h.advance(5000);
  const fromRevoke = await h.coordinator.commitOffsets(commit({ memberId: joinedA!.memberId, generationIdOrMemberEpoch: generation }), 8);
  assert.equal(fromRevoke[0]!.partitions[0]!.errorCode, ErrorCode.NONE, 'PreparingRebalance, current generation: accepted');
  const rejoined = await h.coordinator.joinGroup(ctx, { ...request, memberId: joinedA!.memberId });
  assert.equal(rejoined.generationId, generation + 1);
  const stale = await h.coordinator.commitOffsets(commit({ memberId: joinedA!.memberId, generationIdOrMemberEpoch: generation }), 8);
  assert.equal(stale[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  const beforeSync = await h.coordinator.commitOffsets(commit({ memberId: joinedA!.memberId, generationIdOrMemberEpoch: rejoined.generationId }), 8);
  assert.equal(beforeSync[0]!.partitions[0]!.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
});

test('metadata longer than offset.metadata.max.bytes fails only its partition', async () => {
  const h = await harness({ config: { offsetMetadataMaxBytes: 5 } });
  const request = commit();
  request.topics[0]!.partitions[1]!.committedMetadata = 'way too long';
  const result = await h.coordinator.commitOffsets(request, 8);
  assert.deepEqual(result[0]!.partitions.map((p) => p.errorCode), [ErrorCode.NONE, ErrorCode.OFFSET_METADATA_TOO_LARGE]);
  assert.deepEqual(fetchAll(h).topics[0]!.partitions.map((p) => p.partitionIndex), [0]);
});

test('OffsetDelete refuses topics the group consumes and deletes the others', async () => {
  const h = await harness({ topics: [{ name: 'events', partitions: 2 }, { name: 'old', partitions: 1 }] });
  const { memberId, generationId } = await stableGroup(h, ['events']);
  await h.coordinator.commitOffsets(commit({ memberId, generationIdOrMemberEpoch: generationId }), 8);
  await h.coordinator.commitOffsets(
    { ...commit({ memberId, generationIdOrMemberEpoch: generationId }), topics: [{ name: 'old', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: null }] }] },
    8,
  );
  const deleted = await h.coordinator.deleteOffsets({
    groupId: 'g',
    topics: [
      { name: 'events', partitions: [{ partitionIndex: 0 }] },
      { name: 'old', partitions: [{ partitionIndex: 0 }] },
    ],
  });
  assert.equal(deleted.errorCode, ErrorCode.NONE);
  assert.deepEqual(deleted.topics.map((t) => t.partitions[0]!.errorCode), [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ErrorCode.NONE]);
  assert.deepEqual(fetchAll(h).topics.map((t) => t.name), ['events']);
  assert.equal((await h.coordinator.deleteOffsets({ groupId: 'nobody', topics: [] })).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal((await h.coordinator.deleteOffsets({ groupId: '', topics: [] })).errorCode, ErrorCode.INVALID_GROUP_ID);
});

test('DeleteGroups refuses non-empty groups, deletes empty ones with their offsets, and knows missing ones', async () => {
  const h = await harness();
  await stableGroup(h);
  await h.coordinator.commitOffsets(commit({ groupId: 'simple' }), 8);
  const results = await h.coordinator.deleteGroups(['g', 'simple', 'missing']);
  assert.deepEqual(results.map((r) => r.errorCode), [ErrorCode.NON_EMPTY_GROUP, ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND]);
  assert.deepEqual(fetchAll(h, 'simple').topics, []);
  assert.deepEqual(h.coordinator.listGroups([], []).groups.map((g) => g.groupId), ['g']);
});

test('ListGroups filters by state and type, case-insensitively', async () => {
  const h = await harness();
  await stableGroup(h);
  await h.coordinator.commitOffsets(commit({ groupId: 'simple' }), 8);
  const ids = (states: string[], types: string[]) => h.coordinator.listGroups(states, types).groups.map((g) => g.groupId).sort();
  assert.deepEqual(ids(['stable'], []), ['g']);
  assert.deepEqual(ids(['Empty'], []), ['simple']);
  assert.deepEqual(ids([], ['CLASSIC']), ['g', 'simple']);
  assert.deepEqual(ids([], ['consumer']), []);
  assert.deepEqual(ids([], ['share']), []);
});

test('offsets expire after offsets.retention.minutes; the emptied group is then deleted', async () => {
  const h = await harness({ config: { offsetsRetentionMs: 60 * 60_000, offsetsRetentionCheckIntervalMs: 60_000 } });
  await h.coordinator.commitOffsets(commit({ groupId: 'simple' }), 8);
  await h.advance(30 * 60_000);
  await h.coordinator.commitOffsets(commit({ groupId: 'simple' }, [1]), 8);
  await h.advance(31 * 60_000);
  assert.deepEqual(fetchAll(h, 'simple').topics[0]!.partitions.map((p) => p.partitionIndex), [1], 'partition 0 expired an hour after its commit');
  await h.advance(30 * 60_000);
  assert.deepEqual(fetchAll(h, 'simple').topics, []);
  assert.deepEqual(h.coordinator.listGroups([], []).groups, [], 'a group left empty without offsets is deleted');
});

test("an empty classic group's offsets expire counting from when it became Empty", async () => {
  const h = await harness({ config: { offsetsRetentionMs: 60 * 60_000, offsetsRetentionCheckIntervalMs: 60_000 } });
  const { memberId, generationId } = await stableGroup(h, ['events'], 1_800_000);
  await h.coordinator.commitOffsets(commit({ memberId, generationIdOrMemberEpoch: generationId }), 8);
  for (let i = 0; i < 6; i++) {
    await h.advance(20 * 60_000);
    assert.equal(await h.coordinator.heartbeat({ groupId: 'g', memberId, generationId, groupInstanceId: null }), ErrorCode.NONE);
  }
  assert.equal(fetchAll(h).topics.length, 1, 'offsets of a subscribed topic of a live group never expire');
  await h.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId, groupInstanceId: null, reason: null }] });
  await h.advance(59 * 60_000);
  assert.equal(fetchAll(h).topics.length, 1);
  await h.advance(2 * 60_000);
  assert.deepEqual(fetchAll(h).topics, []);
});

test('an explicit retention time (OffsetCommit v2-v4) sets the expiry', async () => {
  const h = await harness({ config: { offsetsRetentionCheckIntervalMs: 60_000 } });
  await h.coordinator.commitOffsets(commit({ retentionTimeMs: 5 * 60_000 }), 4);
  await h.advance(4 * 60_000);
  assert.equal(fetchAll(h).topics.length, 1);
  await h.advance(2 * 60_000);
  assert.deepEqual(fetchAll(h).topics, []);
});
