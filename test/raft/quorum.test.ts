/**
 * Proves multi-voter KRaft on the simulated network and mock clock (no
 * sleeps; each test names its seed): three voters elect exactly one leader
 * through pre-vote and vote; appends are replicated by Fetch, committed by a
 * majority, pipelined, and delivered in order everywhere; a killed leader is
 * replaced and nothing committed is lost; a partitioned voter does not bump
 * the epoch (pre-vote); a deposed leader truncates its uncommitted tail; a
 * replica below the leader's log start catches up by FetchSnapshot; an
 * observer follows without being counted; a leader that shuts down hands
 * over with EndQuorumEpoch before any fetch timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { SimQuorum } from './sim-cluster.js';

const VOTERS = [1, 2, 3];
/** An election needs at most a few randomised election timeouts (1000-2000 ms each). */
const ELECTION_LIMIT_MS = 10_000;

async function electedQuorum(seed: number, options: ConstructorParameters<typeof SimQuorum>[1] | object = {}): Promise<{ quorum: SimQuorum; leader: number }> {
  const quorum = new SimQuorum(VOTERS, { seed, ...options });
  await quorum.startAll();
  await quorum.runUntil(() => quorum.agreedLeader() !== null, ELECTION_LIMIT_MS, 'an agreed leader');
  return { quorum, leader: quorum.agreedLeader()! };
}

/** Appends on the leader while time runs, resolving with the append's result. */
function appendOn(quorum: SimQuorum, leader: number, records: string[]): Promise<{ baseOffset: number; lastOffset: number; epoch: number }> {
  return quorum.whileRunning(quorum.client(leader).append(records));
}

test('three voters elect one leader in epoch 1 (pre-vote first), and all of them learn it', async () => {
  const { quorum, leader } = await electedQuorum(1);
  assert.equal(quorum.leaders().length, 1);
  for (const id of VOTERS) assert.deepEqual(quorum.client(id).leaderAndEpoch, { leaderId: leader, epoch: 1 });
  // The LeaderChangeMessage commits once a follower fetched past it, everywhere.
  await quorum.runUntil(() => VOTERS.every((id) => quorum.node(id).listener.deliveries.some((d) => d.kind === 'batch' && d.control.includes('LEADER_CHANGE'))), 2000, 'the LeaderChangeMessage committed');
  const told = quorum.node(leader).listener.deliveries.filter((d) => d.kind === 'leader');
  assert.deepEqual(told.at(-1), { kind: 'leader', leaderId: leader, epoch: 1 });
  await quorum.closeAll();
});

test('appends are pipelined, commit by majority and reach every listener in order', async () => {
  const { quorum, leader } = await electedQuorum(2);
  const pending = [0, 1, 2, 3, 4].map((i) => quorum.client(leader).append([`r${i}`]));
  const results = await quorum.whileRunning(Promise.all(pending));
  assert.deepEqual(results.map((r) => r.lastOffset), [1, 2, 3, 4, 5]);
  await quorum.runUntil(() => VOTERS.every((id) => quorum.node(id).listener.records.length === 5), 2000, 'delivery everywhere');
  for (const id of VOTERS) assert.deepEqual(quorum.node(id).listener.records, ['r0', 'r1', 'r2', 'r3', 'r4']);
  for (const id of VOTERS) assert.equal(quorum.client(id).highWatermark, 6);
  await quorum.closeAll();
});

test('a killed leader is replaced in a later epoch and no committed record is lost', async () => {
  const { quorum, leader } = await electedQuorum(3);
  await appendOn(quorum, leader, ['before-1', 'before-2']);
  await quorum.kill(leader);
  await quorum.runUntil(() => quorum.agreedLeader() !== null, ELECTION_LIMIT_MS, 'a new leader');
  const successor = quorum.agreedLeader()!;
  assert.notEqual(successor, leader);
  // A later epoch: 2, or more when a seed's first election after the kill splits the vote.
  assert.ok(quorum.client(successor).leaderAndEpoch.epoch >= 2, `epoch ${quorum.client(successor).leaderAndEpoch.epoch}`);
  await appendOn(quorum, successor, ['after']);
  await quorum.start(leader);
  await quorum.runUntil(() => quorum.node(leader).listener.records.length === 3 && quorum.agreedLeader() === successor, ELECTION_LIMIT_MS, 'the old leader caught up');
  for (const id of VOTERS) assert.deepEqual(quorum.node(id).listener.records.slice(-3), ['before-1', 'before-2', 'after']);
  await quorum.closeAll();
});

test('pre-vote: a voter cut off from the quorum does not raise the epoch or unseat the leader when it returns', async () => {
  const { quorum, leader } = await electedQuorum(4);
  const follower = VOTERS.find((id) => id !== leader)!;
  quorum.network.isolate(follower, VOTERS);
  await quorum.runFor(3 * quorum.config.fetchTimeoutMs);
  assert.equal(quorum.client(follower).leaderAndEpoch.epoch, 1, 'pre-votes do not bump the epoch');
  quorum.network.heal();
  await quorum.runUntil(() => quorum.client(follower).role === 'follower', ELECTION_LIMIT_MS, 'the voter following again');
  await appendOn(quorum, leader, ['still-epoch-1']);
  assert.equal(quorum.agreedLeader(), leader);
  assert.equal(quorum.client(leader).leaderAndEpoch.epoch, 1);
  await quorum.closeAll();
});

test('a deposed leader truncates its uncommitted tail to the new leader\'s log (diverging epoch)', async () => {
  const { quorum, leader } = await electedQuorum(5);
  await appendOn(quorum, leader, ['committed']);
  quorum.network.isolate(leader, VOTERS);
  const lost = quorum.client(leader).append(['uncommitted-1', 'uncommitted-2']);
  const outcome = lost.then(() => 'committed', (error: Error) => error.name);
  await quorum.runUntil(() => quorum.leaders().some((id) => id !== leader), ELECTION_LIMIT_MS, 'a leader on the majority side');
  const successor = quorum.leaders().find((id) => id !== leader)!;
  await appendOn(quorum, successor, ['new-epoch']);
  quorum.network.heal();
  await quorum.runUntil(() => quorum.agreedLeader() === successor && quorum.node(leader).listener.records.includes('new-epoch'), ELECTION_LIMIT_MS, 'the old leader following');
  assert.equal(await outcome, 'NotLeaderError');
  for (const id of VOTERS) {
    assert.deepEqual(quorum.node(id).listener.records, ['committed', 'new-epoch']);
    assert.equal(quorum.client(id).logEndOffset, quorum.client(successor).logEndOffset);
  }
  await quorum.closeAll();
});

test('a replica below the leader\'s log start copies the snapshot with FetchSnapshot, then the log', async () => {
  const { quorum, leader } = await electedQuorum(6, { retentionBytes: 0 });
  const lagging = VOTERS.find((id) => id !== leader)!;
  await quorum.kill(lagging);
  for (let i = 0; i < 3; i++) await appendOn(quorum, leader, [`r${i}`]);
  const id = { offset: quorum.client(leader).logEndOffset, epoch: 1 };
  await quorum.client(leader).createSnapshot(id, ['state-r0-r2'], 0);
  await appendOn(quorum, leader, ['after-snapshot']);
  quorum.node(lagging).fs.crash({ keepUnsyncedPrefix: false });
  await quorum.start(lagging);
  await quorum.runUntil(() => quorum.node(lagging).listener.records.includes('after-snapshot'), ELECTION_LIMIT_MS, 'catch-up');
  const deliveries = quorum.node(lagging).listener.deliveries.filter((d) => d.kind === 'snapshot');
  assert.deepEqual(deliveries.at(-1), { kind: 'snapshot', offset: id.offset, epoch: 1, records: ['state-r0-r2'] });
  assert.deepEqual(quorum.client(lagging).latestSnapshotId, id);
  await quorum.closeAll();
});

test('an observer follows the log by Fetch, is described as an observer, and never counts towards the high watermark', async () => {
  const { quorum, leader } = await electedQuorum(7);
  await quorum.start(4);
  await appendOn(quorum, leader, ['seen-by-observer']);
  await quorum.runUntil(() => quorum.node(4).listener.records.includes('seen-by-observer'), 2000, 'the observer caught up');
  assert.equal(quorum.client(4).leaderAndEpoch.leaderId, leader);
  const described = quorum.client(leader).describeQuorum();
  const partition = described.topics![0]!.partitions![0]!;
  assert.deepEqual(partition.currentVoters!.map((v) => v.replicaId), VOTERS);
  assert.deepEqual(partition.observers!.map((o) => o.replicaId), [4]);
  // With both other voters gone, the leader and the observer are no majority: nothing more commits.
  for (const id of VOTERS.filter((v) => v !== leader)) await quorum.kill(id);
  const highWatermark = quorum.client(leader).highWatermark;
  void quorum.client(leader).append(['never-committed']).catch(() => undefined);
  await quorum.runFor(1000);
  assert.equal(quorum.client(leader).highWatermark, highWatermark);
  assert.equal(quorum.node(4).listener.records.includes('never-committed'), false);
  await quorum.closeAll();
});

test('a leader that shuts down resigns with EndQuorumEpoch: a successor is elected before any fetch timeout', async () => {
  const { quorum, leader } = await electedQuorum(8);
  await appendOn(quorum, leader, ['x']);
  await quorum.stop(leader);
  const tookMs = await quorum.runUntil(() => quorum.agreedLeader() !== null, ELECTION_LIMIT_MS, 'a successor');
  assert.ok(tookMs < quorum.config.fetchTimeoutMs, `successor after ${tookMs} ms`);
  await quorum.closeAll();
});

test('raft requests from another cluster or an older epoch are refused with Kafka\'s errors', async () => {
  const { quorum, leader } = await electedQuorum(9);
  const vote = (clusterId: string | null, replicaEpoch: number, preVote = false) =>
    quorum.client(leader).handleVote({
      clusterId,
      voterId: leader,
      topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0, replicaEpoch, replicaId: 9, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA', voterDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA', lastOffsetEpoch: 0, lastOffset: 0, preVote }] }],
    });
  assert.equal((await vote('another-cluster', 5)).errorCode, ErrorCode.INCONSISTENT_CLUSTER_ID);
  // A standard vote's last epoch must be below the epoch it stands in.
  assert.equal((await vote(null, 0)).topics![0]!.partitions![0]!.errorCode, ErrorCode.INVALID_REQUEST);
  const stale = await vote(null, 0, true);
  assert.equal(stale.topics![0]!.partitions![0]!.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(stale.topics![0]!.partitions![0]!.voteGranted, false);
  await quorum.closeAll();
});
