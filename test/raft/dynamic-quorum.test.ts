/**
 * Proves KIP-853 dynamic quorums on the simulated network and mock clock
 * (each test names its seed): a quorum formatted with kraft.version 1 takes
 * its voters from the bootstrap snapshot's VotersRecord; a new replica that
 * knows no voter finds the leader through the bootstrap servers, follows the
 * log as an observer (a follower's Fetch answer names the leader's endpoint,
 * as the leader's does), and once caught up is added as a voter (AddRaftVoter)
 * everywhere; removing the leader voter commits, the leader resigns, the
 * others elect a successor and metadata keeps committing (also when one
 * voter is left, whose own vote decides its election); Kafka's refusals:
 * a replica that is not caught up (REQUEST_TIMED_OUT), a duplicate id
 * (DUPLICATE_VOTER), an unknown voter (VOTER_NOT_FOUND), a second change
 * while one is in flight (REQUEST_TIMED_OUT), a static quorum
 * (UNSUPPORTED_VERSION), a follower (NOT_LEADER_OR_FOLLOWER); with
 * controller.quorum.auto.join.enable an observer adds itself once caught up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { RequestOf } from '../../src/protocol/schema.js';
import type { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { METADATA_TOPIC_ID } from '../../src/raft/raft-rpc.js';
import { readQuorumState } from '../../src/raft/quorum-state-file.js';
import type { QuorumConfig } from '../../src/raft/quorum-config.js';
import type { VoterNode } from '../../src/raft/voter-set.js';
import { LOG_DIR } from './helpers.js';
import { SimQuorum } from './sim-cluster.js';

const VOTERS = [1, 2, 3];
const ELECTION_LIMIT_MS = 10_000;
const ADD_TIMEOUT_MS = 30_000;
const METADATA_DIR = `${LOG_DIR}/__cluster_metadata-0`;

function voterNode(id: number): VoterNode {
  return { id, directoryId: SimQuorum.directoryId(id), endpoints: [SimQuorum.endpoint(id)], kraftVersionMin: 0, kraftVersionMax: 1 };
}

async function dynamicQuorum(seed: number, config: Partial<QuorumConfig> = {}): Promise<{ quorum: SimQuorum; leader: number }> {
  const quorum = new SimQuorum(VOTERS, { seed, dynamic: true, config });
  await quorum.startAll();
  await quorum.runUntil(() => quorum.agreedLeader() !== null, ELECTION_LIMIT_MS, 'an agreed leader');
  const leader = quorum.agreedLeader()!;
  // The leader's high watermark is established in its epoch once a follower fetched past its LeaderChangeMessage.
  await quorum.runUntil(() => quorum.client(leader).highWatermark !== null, 5000, 'a high watermark');
  return { quorum, leader };
}

/** Starts replica `id` as an observer and waits until it has the leader's whole log. */
async function caughtUpObserver(quorum: SimQuorum, leader: number, id: number): Promise<void> {
  await quorum.start(id);
  const caughtUp = (): boolean => {
    const observers = quorum.client(leader).describeQuorum().topics![0]!.partitions![0]!.observers ?? [];
    return observers.some((o) => o.replicaId === id && (o.lastCaughtUpTimestamp ?? -1) > 0);
  };
  await quorum.runUntil(caughtUp, 10_000, `the leader sees observer ${id} caught up`);
}

test('voters come from the bootstrap snapshot; quorum-state is written at data_version 1', async () => {
  const { quorum, leader } = await dynamicQuorum(11);
  for (const id of VOTERS) {
    assert.deepEqual(quorum.client(id).voterSet.ids, VOTERS);
    assert.equal(quorum.client(id).kraftVersion, 1);
  }
  const text = (await quorum.node(leader).fs.readFile(`${METADATA_DIR}/quorum-state`)).toString('utf8');
  assert.equal(JSON.parse(text).data_version, 1);
  assert.equal((await readQuorumState(quorum.node(leader).fs, METADATA_DIR))!.votedDirectoryId, SimQuorum.directoryId(leader));
  await quorum.closeAll();
});

test('a new replica finds the leader by the bootstrap servers, catches up, and is added as the fourth voter everywhere', async () => {
  const { quorum, leader } = await dynamicQuorum(12);
  await caughtUpObserver(quorum, leader, 4);
  assert.equal(quorum.client(4).voterSet.ids.includes(4), false);
  const added = await quorum.whileRunning(quorum.client(leader).addVoter(voterNode(4), { timeoutMs: ADD_TIMEOUT_MS, ackWhenCommitted: true }));
  assert.deepEqual(added, { errorCode: ErrorCode.NONE, errorMessage: null });
  await quorum.runUntil(() => [1, 2, 3, 4].every((id) => quorum.client(id).voterSet.ids.join() === '1,2,3,4'), 5000, 'every replica sees four voters');
  const described = quorum.client(leader).describeQuorum().topics![0]!.partitions![0]!;
  const currentVoters = described.currentVoters!;
  assert.deepEqual(currentVoters.map((v) => v.replicaId), [1, 2, 3, 4]);
  assert.equal(currentVoters.find((v) => v.replicaId === 4)!.replicaDirectoryId, SimQuorum.directoryId(4));
  // Records keep committing with four voters, and reach the new one.
  await quorum.whileRunning(quorum.client(leader).append(['after-add']));
  await quorum.runUntil(() => quorum.node(4).listener.records.includes('after-add'), 5000, 'the new voter received the record');
  await quorum.closeAll();
});

test('a follower asked to Fetch by an observer names the leader and its endpoint in nodeEndpoints, as the leader does', async () => {
  // Found by the whole-cluster simulator (docs/SIMULATION.md, finding 5): with only the leader id and no endpoint, a
  // broker that asked a follower among its bootstrap servers fetched from "no endpoint known" until its fetch timed out.
  const { quorum, leader } = await dynamicQuorum(15);
  const follower = VOTERS.find((id) => id !== leader)!;
  const request = {
    clusterId: null,
    replicaId: 99,
    replicaState: { replicaId: 99, replicaEpoch: -1 },
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: '__cluster_metadata', topicId: METADATA_TOPIC_ID, partitions: [{ partition: 0, currentLeaderEpoch: 0, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: 0, partitionMaxBytes: 0, replicaDirectoryId: SimQuorum.directoryId(99), highWatermark: -1 }] }],
    forgottenTopicsData: [],
    rackId: '',
  } as unknown as RequestOf<typeof Fetch>;
  const { port } = SimQuorum.endpoint(leader);
  for (const asked of [follower, leader]) {
    const response = await quorum.whileRunning(quorum.client(asked).handleFetch(request, 17));
    const partition = response.responses![0]!.partitions![0]!;
    assert.equal(partition.currentLeader!.leaderId, leader, `asked ${asked}`);
    assert.deepEqual(response.nodeEndpoints!.map((n) => [n.nodeId, n.port]), [[leader, port]], `asked ${asked}`);
  }
  await quorum.closeAll();
});

test('removing the leader voter commits, the leader resigns, the others elect a successor and keep committing', async () => {
  const { quorum, leader } = await dynamicQuorum(13);
  const removed = await quorum.whileRunning(quorum.client(leader).removeVoter(leader, SimQuorum.directoryId(leader)));
  assert.equal(removed.errorCode, ErrorCode.NONE);
  const rest = VOTERS.filter((id) => id !== leader);
  await quorum.runUntil(() => {
    const leaders = quorum.leaders();
    return leaders.length === 1 && leaders[0] !== leader && rest.every((id) => quorum.client(id).leaderAndEpoch.leaderId === leaders[0]);
  }, ELECTION_LIMIT_MS, 'a successor among the remaining voters');
  const successor = quorum.leaders()[0]!;
  for (const id of rest) assert.deepEqual(quorum.client(id).voterSet.ids, rest);
  await quorum.runUntil(() => quorum.client(successor).highWatermark !== null, 5000, 'the successor commits');
  await quorum.whileRunning(quorum.client(successor).append(['after-remove']));
  // The removed leader follows the log as an observer.
  await quorum.runUntil(() => quorum.node(leader).listener.records.includes('after-remove'), 10_000, 'the removed leader follows as observer');
  assert.equal(quorum.client(leader).voterSet.ids.includes(leader), false);
  await quorum.closeAll();
});

test('a leader that removes itself from two voters leaves one, which elects itself at once (its own vote decides) and keeps committing', async () => {
  const quorum = new SimQuorum([1], { seed: 17, dynamic: true });
  await quorum.startAll();
  await quorum.runUntil(() => quorum.agreedLeader() === 1 && quorum.client(1).highWatermark !== null, ELECTION_LIMIT_MS, 'node 1 leads alone');
  await caughtUpObserver(quorum, 1, 2);
  const added = await quorum.whileRunning(quorum.client(1).addVoter(voterNode(2), { timeoutMs: ADD_TIMEOUT_MS, ackWhenCommitted: true }));
  assert.equal(added.errorCode, ErrorCode.NONE);
  await quorum.runUntil(() => quorum.client(2).voterSet.ids.join() === '1,2', 5000, 'node 2 sees two voters');
  const epoch = quorum.client(1).leaderAndEpoch.epoch;
  const removed = await quorum.whileRunning(quorum.client(1).removeVoter(1, SimQuorum.directoryId(1)));
  assert.equal(removed.errorCode, ErrorCode.NONE);
  // No other voter is left to answer a (pre-)vote: before Kafka's maybeTransitionForward was followed, node 2 went
  // from prospective back to follower of the resigned leader, and no leader was ever elected.
  await quorum.runUntil(() => quorum.leaders().join() === '2', ELECTION_LIMIT_MS, 'node 2 elected');
  assert.deepEqual(quorum.client(2).voterSet.ids, [2]);
  assert.ok(quorum.client(2).leaderAndEpoch.epoch > epoch);
  await quorum.runUntil(() => quorum.client(2).highWatermark !== null, 5000, 'node 2 commits');
  await quorum.whileRunning(quorum.client(2).append(['after-takeover']));
  await quorum.runUntil(() => quorum.node(1).listener.records.includes('after-takeover'), 10_000, 'the removed leader follows as observer');
  await quorum.closeAll();
});

test('refusals: not caught up, duplicate voter, unknown voter, a change in flight, a follower', async () => {
  const { quorum, leader } = await dynamicQuorum(14);
  const client = quorum.client(leader);
  const notCaughtUp = await quorum.whileRunning(client.addVoter(voterNode(5), { timeoutMs: ADD_TIMEOUT_MS, ackWhenCommitted: true }));
  assert.equal(notCaughtUp.errorCode, ErrorCode.REQUEST_TIMED_OUT);
  assert.match(notCaughtUp.errorMessage!, /lagging behind/);
  const duplicate = await quorum.whileRunning(client.addVoter(voterNode(2), { timeoutMs: ADD_TIMEOUT_MS, ackWhenCommitted: true }));
  assert.equal(duplicate.errorCode, ErrorCode.DUPLICATE_VOTER);
  const unknown = await quorum.whileRunning(client.removeVoter(7, SimQuorum.directoryId(7)));
  assert.equal(unknown.errorCode, ErrorCode.VOTER_NOT_FOUND);
  const wrongDirectory = await quorum.whileRunning(client.removeVoter(2, SimQuorum.directoryId(9)));
  assert.equal(wrongDirectory.errorCode, ErrorCode.VOTER_NOT_FOUND);
  const follower = VOTERS.find((id) => id !== leader)!;
  const notLeader = await quorum.whileRunning(quorum.client(follower).removeVoter(leader, SimQuorum.directoryId(leader)));
  assert.equal(notLeader.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  // Two changes at once: the second is refused while the first is uncommitted.
  const other = VOTERS.find((id) => id !== leader && id !== follower)!;
  const first = client.removeVoter(other, SimQuorum.directoryId(other));
  const second = client.removeVoter(follower, SimQuorum.directoryId(follower));
  const [firstResult, secondResult] = await quorum.whileRunning(Promise.all([first, second]));
  assert.equal(firstResult.errorCode, ErrorCode.NONE);
  assert.equal(secondResult.errorCode, ErrorCode.REQUEST_TIMED_OUT);
  await quorum.closeAll();
});

test('a static quorum (kraft.version 0) refuses voter changes with UNSUPPORTED_VERSION', async () => {
  const quorum = new SimQuorum(VOTERS, { seed: 15 });
  await quorum.startAll();
  await quorum.runUntil(() => quorum.agreedLeader() !== null, ELECTION_LIMIT_MS, 'an agreed leader');
  const leader = quorum.agreedLeader()!;
  await quorum.runUntil(() => quorum.client(leader).highWatermark !== null, 5000, 'a high watermark');
  const result = await quorum.whileRunning(quorum.client(leader).removeVoter(2, SimQuorum.directoryId(2)));
  assert.equal(result.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.equal(quorum.client(leader).kraftVersion, 0);
  await quorum.closeAll();
});

test('controller.quorum.auto.join.enable: an observer asks the leader to add it, and is a voter everywhere once caught up', async () => {
  const { quorum, leader } = await dynamicQuorum(16, { autoJoinEnable: true });
  await quorum.start(4);
  await quorum.runUntil(() => [1, 2, 3, 4].every((id) => quorum.client(id).voterSet.ids.join() === '1,2,3,4'), 20_000, 'the observer joined the voters');
  assert.equal(quorum.client(leader).voterSet.get(4)!.directoryId, SimQuorum.directoryId(4));
  assert.deepEqual(quorum.client(leader).voterSet.endpoint(4), SimQuorum.endpoint(4));
  await quorum.closeAll();
});
