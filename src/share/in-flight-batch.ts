/**
 * The in-flight records of a share partition (KIP-932): runs of offsets the
 * share-partition leader has acquired at least once and not yet moved the
 * share-partition start offset (SPSO) past.
 *
 * A run (InFlightBatch) is tracked as a whole while every offset in it shares
 * one state; the first operation that touches only part of it (a per-offset
 * acknowledgement, a partial acquisition, the SPSO moving inside it) splits it
 * into one state per offset, for good, as Kafka's InFlightBatch does. Splitting
 * never changes what any offset's state is, only how it is stored.
 *
 * An acquisition lock is shared by every state acquired in one step (a whole
 * batch, or the offsets a split batch handed out together) so that one timer
 * serves them all; each state drops its hold when it leaves ACQUIRED, and the
 * timer is cancelled when no state holds the lock any more.
 */
import assert from 'node:assert/strict';
import type { TimerHandle } from '../io/clock.js';

/** Kafka's RecordState ids (ARCHIVING, 3, is the DLQ's transient state; Spool has no DLQ). */
export const RecordState = { AVAILABLE: 0, ACQUIRED: 1, ACKNOWLEDGED: 2, ARCHIVED: 4 } as const;

export interface AcquisitionLock {
  deadlineMs: number;
  handle: TimerHandle | null;
  /** States still ACQUIRED under this lock; at 0 the timer is cancelled. */
  holders: number;
}

export interface InFlightState {
  state: number;
  deliveryCount: number;
  /** The acquiring member while ACQUIRED, else '' (Kafka's EMPTY_MEMBER_ID). */
  memberId: string;
  lock: AcquisitionLock | null;
}

export function isTerminal(state: number): boolean {
  return state === RecordState.ACKNOWLEDGED || state === RecordState.ARCHIVED;
}

export function attachLock(state: InFlightState, lock: AcquisitionLock): void {
  assert.equal(state.lock, null, 'a state holds one acquisition lock at a time');
  state.lock = lock;
  lock.holders++;
}

export function detachLock(state: InFlightState): void {
  const lock = state.lock;
  if (lock === null) return;
  state.lock = null;
  lock.holders--;
  assert.ok(lock.holders >= 0, 'acquisition lock holders never go negative');
  if (lock.holders === 0) lock.handle?.cancel();
}

export class InFlightBatch {
  private batchState: InFlightState | null;
  private offsetStates: InFlightState[] | null = null;

  constructor(
    readonly firstOffset: number,
    readonly lastOffset: number,
    state: InFlightState,
  ) {
    assert.ok(Number.isSafeInteger(firstOffset) && firstOffset >= 0, `in-flight first offset ${firstOffset}`);
    assert.ok(lastOffset >= firstOffset, `in-flight batch ${firstOffset}-${lastOffset} is empty`);
    this.batchState = state;
  }

  get size(): number {
    return this.lastOffset - this.firstOffset + 1;
  }

  get isSplit(): boolean {
    return this.offsetStates !== null;
  }

  /** The whole-batch state; only while the batch is not split. */
  get whole(): InFlightState {
    assert.ok(this.batchState !== null, `batch ${this.firstOffset}-${this.lastOffset} is tracked per offset`);
    return this.batchState;
  }

  contains(offset: number): boolean {
    return offset >= this.firstOffset && offset <= this.lastOffset;
  }

  stateAt(offset: number): InFlightState {
    assert.ok(this.contains(offset), `offset ${offset} outside batch ${this.firstOffset}-${this.lastOffset}`);
    if (this.offsetStates === null) return this.whole;
    return this.offsetStates[offset - this.firstOffset]!;
  }

  /**
   * Switches to per-offset tracking. Offsets above `acquiredLastOffset` (record_limit's partial
   * acquisition of a fresh batch) go back to AVAILABLE with the delivery this acquisition counted
   * taken off, as Kafka does; the rest copy the batch state and share its lock.
   */
  split(acquiredLastOffset = this.lastOffset): void {
    if (this.offsetStates !== null) return;
    const batch = this.whole;
    const states: InFlightState[] = [];
    for (let offset = this.firstOffset; offset <= this.lastOffset; offset++) {
      const copy: InFlightState = { state: batch.state, deliveryCount: batch.deliveryCount, memberId: batch.memberId, lock: null };
      if (offset > acquiredLastOffset) Object.assign(copy, { state: RecordState.AVAILABLE, deliveryCount: batch.deliveryCount - 1, memberId: '' });
      else if (batch.lock !== null) attachLock(copy, batch.lock);
      states.push(copy);
    }
    detachLock(batch);
    this.batchState = null;
    this.offsetStates = states;
    assert.equal(states.length, this.size, 'a split batch has one state per offset');
  }

  /** Every state with the first and last offset it covers: one entry when whole, one per offset when split. */
  *states(): Generator<[number, number, InFlightState]> {
    if (this.offsetStates === null) {
      yield [this.firstOffset, this.lastOffset, this.whole];
      return;
    }
    for (let i = 0; i < this.offsetStates.length; i++) yield [this.firstOffset + i, this.firstOffset + i, this.offsetStates[i]!];
  }

  /** Cancels whatever locks this batch's states hold (the batch is dropped or the partition closed). */
  releaseLocks(): void {
    for (const [, , state] of this.states()) detachLock(state);
  }
}
