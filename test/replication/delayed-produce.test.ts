/**
 * Proves the acks=all wait as Kafka's DelayedProduce behaves: a partition
 * waits until its high watermark reaches the offset after the append, a
 * partition still waiting at timeoutMs answers REQUEST_TIMED_OUT (others keep
 * their result), a lost leadership answers NOT_LEADER_OR_FOLLOWER, and a
 * shrunken ISR below min.insync.replicas NOT_ENOUGH_REPLICAS_AFTER_APPEND.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/io/clock.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { DelayedOperationPurgatory } from '../../src/replication/purgatory.js';
import { DelayedProduce, type ProducePartitionStatus } from '../../src/replication/delayed-produce.js';
import type { Partition } from '../../src/replication/partition.js';

/** Stands in for a leader partition: only the acks=all check matters here. */
function fakePartition(state: { highWatermark: number; isLeader: boolean; isrBelowMin: boolean }): Partition {
  return {
    checkEnoughReplicasReachOffset(requiredOffset: number) {
      if (!state.isLeader) return { hasEnough: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
      if (state.highWatermark < requiredOffset) return { hasEnough: false, errorCode: ErrorCode.NONE };
      return { hasEnough: true, errorCode: state.isrBelowMin ? ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND : ErrorCode.NONE };
    },
  } as unknown as Partition;
}

function setup(states: Record<string, { highWatermark: number; isLeader: boolean; isrBelowMin: boolean }>, requiredOffset = 10) {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<DelayedProduce>('Produce', clock, { operationsMax: 10 });
  const statuses: ProducePartitionStatus[] = Object.keys(states).map((key) => ({ key, requiredOffset, acksPending: false, errorCode: ErrorCode.NONE }));
  let answered: readonly ProducePartitionStatus[] | null = null;
  const operation = new DelayedProduce(1000, statuses, (key) => fakePartition(states[key]!), (done) => (answered = done));
  purgatory.tryCompleteElseWatch(operation, Object.keys(states));
  return { clock, purgatory, answered: () => answered };
}

test('waits for the high watermark, then answers NONE', () => {
  const states = { 'a-0': { highWatermark: 5, isLeader: true, isrBelowMin: false } };
  const { purgatory, answered } = setup(states);
  assert.equal(answered(), null);
  states['a-0'].highWatermark = 10;
  purgatory.checkAndComplete('a-0');
  assert.deepEqual(answered()!.map((s) => s.errorCode), [ErrorCode.NONE]);
});

test('a partition still short at timeoutMs answers REQUEST_TIMED_OUT; a caught-up one keeps NONE', () => {
  const states = { 'a-0': { highWatermark: 10, isLeader: true, isrBelowMin: false }, 'a-1': { highWatermark: 3, isLeader: true, isrBelowMin: false } };
  const { clock, answered } = setup(states);
  assert.equal(answered(), null);
  clock.advance(1000);
  assert.deepEqual(answered()!.map((s) => [s.key, s.errorCode]), [['a-0', ErrorCode.NONE], ['a-1', ErrorCode.REQUEST_TIMED_OUT]]);
});

test('lost leadership and a shrunken ISR answer Kafka errors', () => {
  const states = { 'a-0': { highWatermark: 0, isLeader: true, isrBelowMin: false }, 'a-1': { highWatermark: 10, isLeader: true, isrBelowMin: true } };
  const { purgatory, answered } = setup(states);
  states['a-0'].isLeader = false;
  purgatory.checkAndComplete('a-0');
  assert.deepEqual(answered()!.map((s) => s.errorCode), [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND]);
});
