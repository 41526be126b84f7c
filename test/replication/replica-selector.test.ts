/**
 * Kafka's RackAwareReplicaSelector as Spool implements it: the leader when
 * the client names no rack, when the leader is in the client's rack, or
 * when no replica is; else the most caught-up replica of the rack (log end
 * offset, then the shorter time since caught up, then the larger broker
 * id). replica.selector.class accepts Kafka's class name only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/common/config.js';
import { RACK_AWARE_REPLICA_SELECTOR, rackAwareReplicaSelector, replicaSelectorFor, type ReplicaView } from '../../src/replication/replica-selector.js';

const view = (brokerId: number, rack: string | null, logEndOffset = 10, timeSinceLastCaughtUpMs = 0): ReplicaView => ({ brokerId, rack, logEndOffset, timeSinceLastCaughtUpMs });

test('the leader when the client has no rack, shares the leader\'s rack, or matches no replica', () => {
  const leader = view(1, 'a');
  const replicas = [view(2, 'b'), view(3, 'b'), leader];
  assert.equal(rackAwareReplicaSelector('', replicas, leader), leader);
  assert.equal(rackAwareReplicaSelector('z', replicas, leader), leader);
  const leaderInB = view(1, 'b');
  assert.equal(rackAwareReplicaSelector('b', [view(2, 'b', 99), leaderInB], leaderInB), leaderInB, 'the leader wins in its own rack even when behind');
});

test('the most caught-up replica of the client\'s rack: log end offset, then time since caught up, then broker id', () => {
  const leader = view(1, 'a');
  assert.equal(rackAwareReplicaSelector('b', [view(2, 'b', 10), view(3, 'b', 12), leader], leader)?.brokerId, 3);
  assert.equal(rackAwareReplicaSelector('b', [view(2, 'b', 10, 5), view(3, 'b', 10, 50), leader], leader)?.brokerId, 2);
  assert.equal(rackAwareReplicaSelector('b', [view(2, 'b', 10, 5), view(4, 'b', 10, 5), view(3, 'b', 10, 5), leader], leader)?.brokerId, 4);
  assert.equal(rackAwareReplicaSelector('b', [view(2, null), leader], leader), leader, 'a replica without a rack (or endpoint) is never matched');
});

test('replica.selector.class: unset is leader-only, Kafka\'s class name is rack-aware, any other is refused', () => {
  assert.equal(replicaSelectorFor(null), null);
  assert.equal(replicaSelectorFor(''), null);
  assert.equal(replicaSelectorFor(RACK_AWARE_REPLICA_SELECTOR), rackAwareReplicaSelector);
  assert.throws(() => replicaSelectorFor('com.example.MySelector'), ConfigError);
});
