/**
 * The consumer's group membership against a scripted coordinator (the fake
 * broker of fake-broker.ts), for the answers a real broker gives rarely:
 * - classic: the first JoinGroup answers MEMBER_ID_REQUIRED and the member
 *   joins again with the id (KIP-394); as leader it runs the range assignor
 *   over both members' subscriptions and sends both assignments in
 *   SyncGroup; a heartbeat's ILLEGAL_GENERATION loses the partitions
 *   (onPartitionsLost, no commit) and the member rejoins with its id; as a
 *   follower it sends an empty SyncGroup; close() commits then leaves.
 * - consumer protocol (KIP-848): the first heartbeat (epoch 0, a
 *   client-made member id) gets a target, poll() assigns it and acknowledges
 *   at once; a smaller target commits the revoked partitions' positions
 *   before onPartitionsRevoked and before the acknowledging heartbeat;
 *   FENCED_MEMBER_EPOCH loses the partitions and rejoins at epoch 0 with the
 *   same member id; close() commits, revokes and leaves with epoch -1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Consumer } from '../../src/client/consumer.js';
import type { TopicPartition } from '../../src/client/cluster.js';
import { decodeSubscription, decodeAssignment, encodeAssignment, encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FakeBroker, apiVersionsBody, reply, type ReceivedRequest } from './fake-broker.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
/**
 * The KIP-848 coordinator's heartbeat interval: longer than the test, so every
 * heartbeat the member sends is one an event asks for (joining, acknowledging,
 * rejoining after a fence, leaving), in an order a loaded machine cannot change.
 */
const HEARTBEAT_INTERVAL_MS = 600_000;

type Script = (request: ReceivedRequest) => Record<string, unknown> | null;

/** A one-topic ("t", 4 partitions) broker that is also the coordinator; group answers come from `group`. */
async function fakeCluster(group: Script) {
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  broker.answer = (request) => {
    const body = answerFor(request, address, group);
    return body === null ? null : reply(request, body);
  };
  address = await broker.start();
  return { broker, bootstrap: `${address.host}:${address.port}` };
}

function answerFor(request: ReceivedRequest, address: { host: string; port: number }, group: Script): Record<string, unknown> | null {
  const partitions = [0, 1, 2, 3];
  switch (request.header.requestApiKey) {
    case 18:
      return apiVersionsBody({ 18: [0, 3], 3: [0, 12], 1: [4, 12], 2: [1, 7], 10: [0, 4], 8: [2, 9], 9: [1, 9], 11: [0, 9], 12: [0, 4], 13: [0, 5], 14: [0, 5], 68: [0, 1] });
    case 3:
      return {
        brokers: [{ nodeId: 1, ...address, rack: null }],
        controllerId: 1,
        topics: [{ errorCode: 0, name: 't', topicId: TOPIC_ID, partitions: partitions.map((p) => ({ errorCode: 0, partitionIndex: p, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1] })) }],
      };
    case 10:
      return { coordinators: [{ key: 'g', nodeId: 1, ...address, errorCode: 0, errorMessage: null }] };
    case 2:
      return { topics: [{ name: 't', partitions: (request.body.topics as { partitions: { partitionIndex: number }[] }[])[0]!.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0, timestamp: -1, offset: 5, leaderEpoch: 0 })) }] };
    case 1:
      return { responses: [] };
    case 9:
      return { groups: [{ groupId: 'g', topics: [], errorCode: 0 }] };
    default:
      return group(request);
  }
}

/** Polls until `done` holds; each poll is short, the loop ends when the fake broker's script has played out. */
async function pollUntil(consumer: Consumer, done: () => boolean): Promise<void> {
  for (let polls = 0; !done(); polls++) {
    assert.ok(polls < 400, 'the scripted exchange did not complete');
    await consumer.poll(20);
  }
}

const tps = (...partitions: number[]): TopicPartition[] => partitions.map((partition) => ({ topic: 't', partition }));
const of = (requests: readonly ReceivedRequest[], apiKey: number) => requests.filter((r) => r.header.requestApiKey === apiKey);

test('classic: MEMBER_ID_REQUIRED, leader assignment, ILLEGAL_GENERATION loses partitions, follower rejoin, commit and leave on close', async () => {
  const otherMember = encodeSubscription({ topics: ['t'], ownedPartitions: [], generationId: -1 });
  let joins = 0;
  let heartbeats = 0;
  const { broker, bootstrap } = await fakeCluster((request) => {
    const body = request.body;
    switch (request.header.requestApiKey) {
      case 11:
        joins++;
        if (joins === 1) return { errorCode: ErrorCode.MEMBER_ID_REQUIRED, memberId: 'm-1', leader: '', protocolName: null, members: [] };
        if (joins === 2) {
          const mine = (body.protocols as { name: string; metadata: Buffer }[])[0]!;
          return { errorCode: 0, generationId: 1, protocolType: 'consumer', protocolName: 'range', leader: 'm-1', memberId: 'm-1', members: [{ memberId: 'm-1', metadata: mine.metadata }, { memberId: 'm-2', metadata: otherMember }] };
        }
        return { errorCode: 0, generationId: 2, protocolType: 'consumer', protocolName: 'range', leader: 'm-2', memberId: 'm-1', members: [] };
      case 14: {
        const assignment = (body.generationId as number) === 1 ? tps(0, 1) : tps(3);
        return { errorCode: 0, protocolType: 'consumer', protocolName: 'range', assignment: encodeAssignment({ assignedPartitions: [{ topic: 't', partitions: assignment.map((tp) => tp.partition) }] }) };
      }
      case 12:
        heartbeats++;
        return { errorCode: heartbeats === 1 ? ErrorCode.ILLEGAL_GENERATION : 0 };
      case 8:
        return { topics: (body.topics as { name: string; partitions: { partitionIndex: number }[] }[]).map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0 })) })) };
      case 13:
        return { errorCode: 0, members: [{ memberId: 'm-1', groupInstanceId: null, errorCode: 0 }] };
      default:
        return null;
    }
  });
  const events: string[] = [];
  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: 'g', partitionAssignmentStrategy: ['range'], heartbeatIntervalMs: 10, fetchMaxWaitMs: 5, retryBackoffMs: 1 });
  consumer.subscribe(['t'], {
    onPartitionsAssigned: (p) => { events.push(`assigned ${p.map((tp) => tp.partition)}`); },
    onPartitionsRevoked: (p) => { events.push(`revoked ${p.map((tp) => tp.partition)}`); },
    onPartitionsLost: (p) => { events.push(`lost ${p.map((tp) => tp.partition)}`); },
  });
  try {
    await pollUntil(consumer, () => consumer.groupMetadata().generationId === 2);
    await pollUntil(consumer, () => consumer.assignment().length === 1);
    assert.deepEqual(consumer.assignment(), tps(3));
    assert.deepEqual(events, ['assigned 0,1', 'lost 0,1', 'assigned 3']);
  } finally {
    await consumer.close();
    await broker.stop();
  }
  const joinRequests = of(broker.received, 11);
  assert.deepEqual(joinRequests.map((r) => r.body.memberId), ['', 'm-1', 'm-1'], 'joins again with the id it was given, and keeps it after ILLEGAL_GENERATION');
  assert.equal(decodeSubscription((joinRequests[2]!.body.protocols as { metadata: Buffer }[])[0]!.metadata)!.generationId, -1, 'the lost generation is not claimed');
  const syncs = of(broker.received, 14);
  const leaderSync = (syncs[0]!.body.assignments as { memberId: string; assignment: Buffer }[]).map((a) => [a.memberId, decodeAssignment(a.assignment)!.assignedPartitions]);
  assert.deepEqual(leaderSync, [['m-1', [{ topic: 't', partitions: [0, 1] }]], ['m-2', [{ topic: 't', partitions: [2, 3] }]]], 'range over both members');
  assert.deepEqual(syncs[1]!.body.assignments, [], 'a follower sends no assignments');
  const commits = of(broker.received, 8);
  assert.deepEqual(commits.map((r) => [r.body.generationIdOrMemberEpoch, r.body.memberId]), [[2, 'm-1']], 'only the close commits: nothing for the lost generation');
  const last = broker.received[broker.received.length - 1]!;
  assert.equal(last.header.requestApiKey, 13, 'LeaveGroup comes last');
  assert.deepEqual((last.body.members as { memberId: string }[]).map((m) => m.memberId), ['m-1']);
});

test('consumer protocol: assign and acknowledge, commit before revoking, fenced epoch loses partitions and rejoins, leave with epoch -1', async () => {
  let fenced = false;
  const target = (...partitions: number[]) => ({ topicPartitions: [{ topicId: TOPIC_ID, partitions }] });
  // The coordinator's answers follow what the member reports (heartbeats may cross a reconciliation, as with Kafka).
  const { broker, bootstrap } = await fakeCluster((request) => {
    const body = request.body;
    if (request.header.requestApiKey === 8) {
      return { topics: (body.topics as { name: string; partitions: { partitionIndex: number }[] }[]).map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0 })) })) };
    }
    if (request.header.requestApiKey !== 68) return null;
    const memberId = body.memberId as string;
    const epoch = body.memberEpoch as number;
    const owned = ((body.topicPartitions as { partitions: number[] }[] | null) ?? []).flatMap((t) => t.partitions).join(',');
    const answer = (memberEpoch: number, assignment: unknown) => ({ errorCode: 0, memberId, memberEpoch, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, assignment });
    if (epoch < 0) return answer(epoch, null);
    if (epoch === 0) return fenced ? answer(3, target(3)) : answer(1, target(0, 1, 2));
    if (epoch === 1) return owned === '0,1,2' ? answer(2, target(0)) : answer(1, null);
    if (epoch === 2 && owned === '0' && !fenced) {
      fenced = true;
      return { errorCode: ErrorCode.FENCED_MEMBER_EPOCH, errorMessage: 'fenced by the test', memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
    }
    return answer(epoch, null);
  });
  const events: string[] = [];
  const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: 'g', groupProtocol: 'consumer', fetchMaxWaitMs: 5, retryBackoffMs: 1 });
  consumer.subscribe(['t'], {
    onPartitionsAssigned: (p) => { events.push(`assigned ${p.map((tp) => tp.partition)}`); },
    onPartitionsRevoked: (p) => { events.push(`revoked ${p.map((tp) => tp.partition)} after ${of(broker.received, 8).length} commits`); },
    onPartitionsLost: (p) => { events.push(`lost ${p.map((tp) => tp.partition)}`); },
  });
  try {
    await pollUntil(consumer, () => consumer.groupMetadata().generationId === 3 && consumer.assignment().length === 1 && consumer.assignment()[0]!.partition === 3);
  } finally {
    await consumer.close();
    await broker.stop();
  }
  // As in the classic cooperative protocol, every reconciliation ends with onPartitionsAssigned, here once with nothing new.
  assert.deepEqual(events, ['assigned 0,1,2', 'revoked 1,2 after 1 commits', 'assigned ', 'lost 0', 'assigned 3', 'revoked 3 after 2 commits']);
  const beatsSent = of(broker.received, 68).map((r) => ({ epoch: r.body.memberEpoch as number, memberId: r.body.memberId as string, owned: (r.body.topicPartitions as { partitions: number[] }[] | null)?.flatMap((t) => t.partitions) ?? null }));
  assert.match(beatsSent[0]!.memberId, /^[A-Za-z0-9_-]{22}$/, 'a client-made Kafka Uuid (KIP-1082)');
  assert.ok(beatsSent.every((b) => b.memberId === beatsSent[0]!.memberId), 'one member id throughout, also after being fenced');
  assert.deepEqual(beatsSent.slice(0, 2).map((b) => [b.epoch, b.owned]), [[0, []], [1, [0, 1, 2]]], 'join, then acknowledge the assignment at once');
  const acknowledged = beatsSent.findIndex((b) => b.epoch === 2 && b.owned?.join() === '0');
  assert.ok(acknowledged > 0, 'the revocation is acknowledged');
  assert.deepEqual([beatsSent[acknowledged + 1]!.epoch, beatsSent[acknowledged + 1]!.owned], [0, []], 'after the fence: rejoins at epoch 0 owning nothing');
  assert.equal(beatsSent[beatsSent.length - 1]!.epoch, -1, 'leaves with epoch -1');
  const commits = of(broker.received, 8);
  assert.deepEqual(commits.map((c) => c.body.generationIdOrMemberEpoch), [2, 3], 'before the revocation, then on close: none for the fenced epoch');
  assert.deepEqual((commits[0]!.body.topics as { partitions: { partitionIndex: number; committedOffset: number }[] }[])[0]!.partitions.map((p) => [p.partitionIndex, p.committedOffset]), [[1, 5], [2, 5]], 'the revoked partitions at their positions');
});
