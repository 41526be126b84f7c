/**
 * Proves the Raft role state machine: elections (a single voter wins its
 * own, three voters need two votes), the effects each transition asks for
 * (durable state first), the leader's high watermark rule (majority of
 * flushed offsets, only past the epoch start, never backwards), restoring
 * persisted state, and refusing illegal transitions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IllegalStateTransition, QuorumState } from '../../src/raft/quorum-state.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';

test('a single voter elects itself in the next epoch, persisting its vote first', () => {
  const quorum = new QuorumState(1, [1], 'dir');
  assert.deepEqual(quorum.initialize(null, 0), []);
  const candidacy = quorum.transitionToCandidate();
  assert.deepEqual(candidacy[0], { type: 'persist', election: { epoch: 1, leaderId: -1, votedId: 1, votedDirectoryId: 'dir', voters: [1] } });
  assert.equal(candidacy.some((e) => e.type === 'sendVoteRequests'), false);
  assert.equal(quorum.isVoteGranted(), true);
  const leadership = quorum.transitionToLeader(10);
  assert.deepEqual(leadership.map((e) => e.type), ['persist', 'appendLeaderChange', 'leaderChanged']);
  assert.deepEqual(leadership[1], { type: 'appendLeaderChange', epoch: 1, leaderId: 1, voters: [1], grantingVoters: [1] });
  assert.equal(quorum.leaderId, 1);
  assert.equal(quorum.highWatermark, null);
});

test('the leader high watermark needs a majority, passes the epoch start, and never goes back', () => {
  const quorum = new QuorumState(1, [1, 2, 3]);
  quorum.initialize(null, 4);
  const candidacy = quorum.transitionToCandidate();
  assert.deepEqual(candidacy.find((e) => e.type === 'sendVoteRequests'), { type: 'sendVoteRequests', epoch: 5, voters: [2, 3], preVote: false });
  assert.equal(quorum.isVoteGranted(), false);
  assert.throws(() => quorum.transitionToLeader(20), IllegalStateTransition);
  assert.equal(quorum.recordGrantedVote(3), true);
  quorum.transitionToLeader(20);
  assert.deepEqual(quorum.updateVoterEndOffset(1, 21), []);
  // Another voter at the epoch start is not enough: the entry of this epoch is not on a majority.
  assert.deepEqual(quorum.updateVoterEndOffset(2, 20), []);
  assert.deepEqual(quorum.updateVoterEndOffset(3, 25), [{ type: 'highWatermark', offset: 21 }]);
  assert.deepEqual(quorum.updateVoterEndOffset(1, 30), [{ type: 'highWatermark', offset: 25 }]);
  assert.deepEqual(quorum.updateVoterEndOffset(3, 22), []);
  assert.equal(quorum.highWatermark, 25);
});

test('persisted state is restored: a vote stays cast, another leader is followed, a newer log epoch wins', () => {
  const voted = new QuorumState(1, [1, 2, 3]);
  voted.initialize({ epoch: 7, leaderId: -1, votedId: 2, votedDirectoryId: ZERO_UUID, voters: [1, 2, 3] }, 6);
  assert.deepEqual(voted.state, { role: 'unattached', epoch: 7, votedId: 2 });
  const following = new QuorumState(1, [1, 2, 3]);
  const effects = following.initialize({ epoch: 7, leaderId: 3, votedId: -1, votedDirectoryId: ZERO_UUID, voters: [1, 2, 3] }, 7);
  assert.deepEqual(effects, [{ type: 'leaderChanged', epoch: 7, leaderId: 3 }]);
  assert.equal(following.leaderId, 3);
  const stale = new QuorumState(1, [1]);
  stale.initialize({ epoch: 2, leaderId: 1, votedId: 1, votedDirectoryId: ZERO_UUID, voters: [1] }, 5);
  assert.deepEqual(stale.state, { role: 'unattached', epoch: 5, votedId: -1 });
  stale.transitionToCandidate();
  assert.equal(stale.epoch, 6);
});

test('illegal transitions throw', () => {
  const observer = new QuorumState(4, [1, 2, 3]);
  observer.initialize(null, 0);
  assert.throws(() => observer.transitionToCandidate(), /not a voter/);
  const leader = new QuorumState(1, [1]);
  leader.initialize(null, 0);
  leader.transitionToCandidate();
  leader.transitionToLeader(0);
  assert.throws(() => leader.transitionToCandidate(), IllegalStateTransition);
  assert.throws(() => leader.transitionToUnattached(1), IllegalStateTransition);
  assert.throws(() => leader.transitionToFollower(1, 1), /follow itself/);
  assert.throws(() => new QuorumState(1, [1, 1]), /duplicate voters/);
});

test('a follower moves to a later epoch and tracks the leader high watermark', () => {
  const quorum = new QuorumState(2, [1, 2, 3]);
  quorum.initialize(null, 0);
  const effects = quorum.transitionToFollower(3, 1);
  assert.deepEqual(effects[0], { type: 'persist', election: { epoch: 3, leaderId: 1, votedId: -1, votedDirectoryId: ZERO_UUID, voters: [1, 2, 3] } });
  assert.deepEqual(quorum.updateFollowerHighWatermark(10), [{ type: 'highWatermark', offset: 10 }]);
  assert.deepEqual(quorum.updateFollowerHighWatermark(9), []);
  assert.throws(() => quorum.transitionToFollower(2, 3), IllegalStateTransition);
  quorum.transitionToUnattached(4);
  assert.equal(quorum.leaderId, null);
});
