/**
 * Replay equivalence: a coordinator built only by loading the records
 * another coordinator wrote holds the same durable state — every consumer
 * group field (epochs, members, current and target assignments, regex
 * resolutions), every committed offset, and each classic group's generation,
 * protocol, leader and members once the group is Stable or Empty. Also:
 * a coordinator restarted in the middle of a classic rebalance loses no
 * committed offset and serves the last stable generation; a consumer group
 * member resumes its epoch and assignment after a coordinator move, and its
 * session timer restarts on load.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { GroupCoordinator } from '../../src/group/coordinator.js';
import { encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import { assignmentToList } from '../../src/group/consumer-group.js';
import type { ConsumerGroupHeartbeatInput } from '../../src/group/consumer-group-protocol.js';
import { harness, topicIdFor, type Harness } from './helpers.js';

/** Everything a shard holds durably, as plain data. */
function durableState(coordinator: GroupCoordinator, partitions: number) {
  const out: Record<string, unknown> = {};
  for (let p = 0; p < partitions; p++) {
    const shard = coordinator.runtime.shard(p);
    assert.ok(shard !== undefined, `shard ${p} is loaded`);
    for (const [groupId, group] of [...shard.groups].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (group.type === 'classic') {
        out[`classic:${groupId}`] = {
          state: group.state,
          generation: group.generationId,
          protocolType: group.protocolType,
          protocolName: group.protocolName,
          leader: group.leaderId,
          members: [...group.members.values()]
            .map((m) => ({
              memberId: m.memberId,
              instanceId: m.groupInstanceId,
              clientId: m.clientId,
              clientHost: m.clientHost,
              rebalanceTimeoutMs: m.rebalanceTimeoutMs,
              sessionTimeoutMs: m.sessionTimeoutMs,
              metadata: group.protocolName === null ? null : m.metadata(group.protocolName).toString('hex'),
              assignment: m.assignment.toString('hex'),
            }))
            .sort((a, b) => (a.memberId < b.memberId ? -1 : 1)),
        };
      } else if (group.type === 'consumer') {
        out[`consumer:${groupId}`] = {
          state: group.state,
          groupEpoch: group.groupEpoch,
          metadataHash: group.metadataHash,
          targetAssignmentEpoch: group.targetAssignmentEpoch,
          members: [...group.members.values()]
            .map((m) => ({ ...m, assignedPartitions: assignmentToList(m.assignedPartitions), partitionsPendingRevocation: assignmentToList(m.partitionsPendingRevocation) }))
            .sort((a, b) => (a.memberId < b.memberId ? -1 : 1)),
          target: [...group.targetAssignment].map(([id, a]) => [id, assignmentToList(a)]).sort(),
          regexes: [...group.resolvedRegularExpressions].sort(),
        };
      }
      const offsets = shard.offsets.groupOffsets(groupId);
      if (offsets !== undefined) {
        out[`offsets:${groupId}`] = [...offsets].map(([topic, parts]) => [topic, [...parts].sort(([a], [b]) => a - b)]).sort();
      }
    }
  }
  return out;
}

const classicCtx = (clientId: string) => ({ clientId, clientHost: '/127.0.0.1', apiVersion: 9 });

async function classicStable(h: Harness, groupId: string, clients: string[], instanceIds: (string | null)[] = []) {
  const request = (memberId: string, index: number) => ({
    groupId,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId,
    groupInstanceId: instanceIds[index] ?? null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['events'] }) }, { name: 'roundrobin', metadata: encodeSubscription({ topics: ['events'], userData: Buffer.from('x') }) }],
    reason: null,
  });
  const joins = [];
  for (const [index, client] of clients.entries()) {
    let memberId = '';
    if (instanceIds[index] === undefined || instanceIds[index] === null) {
      memberId = (await h.coordinator.joinGroup(classicCtx(client), request('', index))).memberId;
    }
    joins.push(h.coordinator.joinGroup(classicCtx(client), request(memberId, index)));
  }
  await h.advance(6000);
  const responses = await Promise.all(joins);
  const leader = responses.find((r) => r.members.length > 0)!;
  await Promise.all(
    responses.map((r) =>
      h.coordinator.syncGroup({
        groupId,
        generationId: r.generationId,
        memberId: r.memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: r === leader ? responses.map((x, i) => ({ memberId: x.memberId, assignment: Buffer.from(`part-${i}`) })) : [],
      }),
    ),
  );
  return responses;
}

function beat(h: Harness, over: Partial<ConsumerGroupHeartbeatInput>) {
  return h.coordinator.consumerGroupHeartbeat({ clientId: 'c', clientHost: '/h', apiVersion: 1 }, {
    groupId: 'cg',
    memberId: 'm',
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['events'],
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [],
    ...over,
  });
}

test('a coordinator loaded from the records holds the same durable state', async () => {
  const h = await harness({ topics: [{ name: 'events', partitions: 6 }, { name: 'audit', partitions: 2 }] });
  await classicStable(h, 'classic-a', ['x', 'y']);
  await classicStable(h, 'classic-static', ['s'], ['inst-1']);
  for (const group of ['simple-1', 'simple-2']) {
    await h.coordinator.commitOffsets(
      {
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: group === 'simple-2' ? 60_000 : -1,
        topics: [{ name: 'events', partitions: [0, 1, 2].map((p) => ({ partitionIndex: p, committedOffset: p * 10, committedLeaderEpoch: p, committedMetadata: p === 1 ? null : 'meta' })) }],
      },
      group === 'simple-2' ? 4 : 8,
    );
  }
  const m1 = await beat(h, { memberId: 'm1' });
  const m2 = await beat(h, { memberId: 'm2', subscribedTopicNames: ['events', 'audit'], serverAssignor: 'range' });
  const m3 = await beat(h, { memberId: 'm3', subscribedTopicNames: null, subscribedTopicRegex: 'aud.*', instanceId: 'i3' });
  await beat(h, { memberId: 'm1', memberEpoch: m1.memberEpoch, topicPartitions: m1.assignment!.topicPartitions });
  await beat(h, { memberId: 'm2', memberEpoch: m2.memberEpoch, topicPartitions: m2.assignment!.topicPartitions, subscribedTopicNames: null, rebalanceTimeoutMs: -1 });
  await beat(h, { memberId: 'm3', memberEpoch: m3.memberEpoch, instanceId: 'i3', topicPartitions: [], subscribedTopicNames: null, rebalanceTimeoutMs: -1 });
  await h.coordinator.commitOffsets(
    { groupId: 'cg', generationIdOrMemberEpoch: m1.memberEpoch, memberId: 'm1', groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 4, committedOffset: 44, committedLeaderEpoch: -1, committedMetadata: '' }] }] },
    9,
  );
  await beat(h, { memberId: 'm3', memberEpoch: -2, instanceId: 'i3' });
  await h.coordinator.deleteGroups(['simple-1']);
  await h.drain();

  const before = durableState(h.coordinator, h.config.offsetsTopicPartitions);
  const reloaded = await h.reload();
  assert.deepEqual(durableState(reloaded, h.config.offsetsTopicPartitions), before);
  assert.ok(Object.keys(before).length >= 6, 'the scenario produced state to compare');
});

test('a restart in the middle of a rebalance loses no committed offset and serves the last stable generation', async () => {
  const h = await harness();
  const [a, b] = await classicStable(h, 'g', ['a', 'b']);
  const committed = await h.coordinator.commitOffsets(
    { groupId: 'g', generationIdOrMemberEpoch: a!.generationId, memberId: a!.memberId, groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 3, committedOffset: 1234, committedLeaderEpoch: 0, committedMetadata: null }] }] },
    8,
  );
  assert.equal(committed[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  // b rejoins: the group is mid-rebalance when the coordinator goes away
  void h.coordinator.joinGroup(classicCtx('b'), {
    groupId: 'g',
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 30_000,
    memberId: b!.memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['events'] }) }],
    reason: null,
  });
  await h.drain();
  assert.equal(h.coordinator.describeGroups(['g'], 5)[0]!.groupState, 'PreparingRebalance');
  const reloaded = await h.reload();
  const fetched = reloaded.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: [{ name: 'events', partitionIndexes: [3] }], requireStable: false });
  assert.equal(fetched.topics[0]!.partitions[0]!.committedOffset, 1234);
  const described = reloaded.describeGroups(['g'], 5)[0]!;
  assert.equal(described.groupState, 'Stable');
  assert.equal(described.members.length, 2);
  assert.equal(await reloaded.heartbeat({ groupId: 'g', memberId: a!.memberId, generationId: a!.generationId, groupInstanceId: null }), ErrorCode.NONE);
});

test('a consumer group member resumes after a coordinator move; its session restarts on load', async () => {
  const h = await harness({ config: { consumerGroupSessionTimeoutMs: 45_000 } });
  const joined = await beat(h, { memberId: 'm1' });
  const reloaded = await h.reload();
  const resumed = await reloaded.consumerGroupHeartbeat({ clientId: 'c', clientHost: '/h', apiVersion: 1 }, {
    groupId: 'cg',
    memberId: 'm1',
    memberEpoch: joined.memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [{ topicId: topicIdFor('events'), partitions: [0, 1, 2, 3, 4, 5] }],
  });
  assert.equal(resumed.errorCode, ErrorCode.NONE);
  assert.equal(resumed.memberEpoch, joined.memberEpoch);
  assert.equal(resumed.assignment, null, 'nothing changed: a light heartbeat gets no assignment');
  const described = reloaded.consumerGroupDescribe(['cg'])[0]!;
  assert.deepEqual(described.members[0]!.assignment.topicPartitions[0]!.partitions, [0, 1, 2, 3, 4, 5]);
  h.clock.advance(45_001);
  await reloaded.runtime.drain();
  assert.equal(reloaded.consumerGroupDescribe(['cg'])[0]!.groupState, 'Empty', 'the session timer restarted on load and expired');
});
