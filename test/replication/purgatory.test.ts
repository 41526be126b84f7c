/**
 * Proves the delayed-operation purgatory wakes operations by key and by
 * timer only (driven by a ManualClock, no real time): an operation completes
 * exactly once, expiry fires at its delay and not before, completion unlinks
 * it from every key, the operationsMax bound completes overflow at once, and
 * shutdown completes everything still waiting.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/io/clock.js';
import { DelayedOperation, DelayedOperationPurgatory } from '../../src/replication/purgatory.js';

/** Completes once `ready()` says so; records how it ended. */
class Probe extends DelayedOperation {
  outcomes: string[] = [];
  constructor(
    delayMs: number,
    readonly ready: () => boolean,
  ) {
    super(delayMs);
  }
  tryComplete(): boolean {
    return this.ready() ? this.forceComplete() : false;
  }
  protected onComplete(): void {
    this.outcomes.push(this.isExpired ? 'expired' : 'completed');
  }
}

test('an operation ready at once completes without being watched', () => {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<Probe>('test', clock, { operationsMax: 10 });
  const op = new Probe(100, () => true);
  assert.equal(purgatory.tryCompleteElseWatch(op, ['a']), true);
  assert.deepEqual(op.outcomes, ['completed']);
  assert.equal(purgatory.delayedCount, 0);
  assert.equal(clock.pendingCount, 0);
});

test('a key event completes a waiting operation once and unlinks it from all its keys', () => {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<Probe>('test', clock, { operationsMax: 10 });
  let ready = false;
  const op = new Probe(100, () => ready);
  assert.equal(purgatory.tryCompleteElseWatch(op, ['a', 'b']), false);
  assert.equal(purgatory.delayedCount, 1);
  assert.equal(purgatory.watchedKeyCount, 2);
  assert.equal(purgatory.checkAndComplete('a'), 0, 'not ready yet');
  ready = true;
  assert.equal(purgatory.checkAndComplete('b'), 1);
  assert.equal(purgatory.checkAndComplete('a'), 0, 'already completed');
  assert.deepEqual(op.outcomes, ['completed']);
  assert.equal(purgatory.delayedCount, 0);
  assert.equal(purgatory.watchedKeyCount, 0);
  clock.advance(1000);
  assert.deepEqual(op.outcomes, ['completed'], 'the timer was cancelled');
});

test('the timer expires an operation at its delay, not before', () => {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<Probe>('test', clock, { operationsMax: 10 });
  const op = new Probe(500, () => false);
  purgatory.tryCompleteElseWatch(op, ['a']);
  clock.advance(499);
  assert.deepEqual(op.outcomes, []);
  clock.advance(1);
  assert.deepEqual(op.outcomes, ['expired']);
  assert.equal(op.isExpired, true);
  assert.equal(purgatory.delayedCount, 0);
  assert.equal(purgatory.watchedKeyCount, 0);
});

test('past operationsMax a new operation is completed at once instead of waiting', () => {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<Probe>('test', clock, { operationsMax: 2 });
  const waiting = [new Probe(100, () => false), new Probe(100, () => false)];
  for (const op of waiting) assert.equal(purgatory.tryCompleteElseWatch(op, ['k']), false);
  const overflow = new Probe(100, () => false);
  assert.equal(purgatory.tryCompleteElseWatch(overflow, ['k']), true);
  assert.deepEqual(overflow.outcomes, ['completed']);
  assert.equal(purgatory.delayedCount, 2);
});

test('shutdown completes every waiting operation', () => {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<Probe>('test', clock, { operationsMax: 10 });
  const ops = [new Probe(100, () => false), new Probe(100, () => false)];
  purgatory.tryCompleteElseWatch(ops[0]!, ['a']);
  purgatory.tryCompleteElseWatch(ops[1]!, ['a', 'b']);
  purgatory.shutdown();
  assert.deepEqual(ops.map((op) => op.outcomes), [['completed'], ['completed']]);
  assert.equal(purgatory.delayedCount, 0);
  assert.equal(clock.pendingCount, 0);
});

test('after shutdown a new operation completes at once instead of waiting', () => {
  const clock = new ManualClock();
  const purgatory = new DelayedOperationPurgatory<Probe>('test', clock, { operationsMax: 10 });
  purgatory.shutdown();
  const late = new Probe(100, () => false);
  assert.equal(purgatory.tryCompleteElseWatch(late, ['a']), true);
  assert.deepEqual(late.outcomes, ['completed']);
  assert.equal(purgatory.delayedCount, 0);
});
