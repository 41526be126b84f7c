/**
 * The share partition (KIP-932): the delivery state one share group keeps for
 * one topic-partition, on that partition's leader. Pure state machine, no I/O:
 * the ShareFetch layer reads the log, hands the batches here to acquire,
 * applies acknowledgements, and writes persistentState() through the
 * SharePersister when it changed.
 *
 * Offsets below the share-partition start offset (SPSO) are done. Offsets in
 * [SPSO, SPEO) are in flight, each AVAILABLE, ACQUIRED (by one member, under an
 * acquisition lock of group.share.record.lock.duration.ms), ACKNOWLEDGED or
 * ARCHIVED, with a delivery count. Offsets at or above the SPEO were never
 * acquired. The SPSO moves past the longest prefix of ACKNOWLEDGED/ARCHIVED
 * offsets; each acquisition counts a delivery; a record released or timed out
 * at group.share.delivery.count.limit deliveries is ARCHIVED instead of being
 * offered again. A hole between in-flight batches is a range the log has no
 * records for (compaction), so it never blocks the SPSO.
 *
 * As in Kafka 4.4, control batches (transaction markers) occupy offsets like
 * any other batch and are acquired with them; the consumer skips their records
 * and acknowledges their offsets as GAP, which archives them.
 */
import assert from 'node:assert/strict';
import type { Clock, Timers } from '../io/clock.js';
import { ErrorCode } from '../protocol/errors.js';
import type { PersisterStateBatch } from './persister.js';
import { RecordState, InFlightBatch, attachLock, detachLock, isTerminal, type AcquisitionLock, type InFlightState } from './in-flight-batch.js';

export { RecordState } from './in-flight-batch.js';

/** ShareFetch/ShareAcknowledge acknowledge types; RENEW is KIP-1222's lock renewal. */
export const AcknowledgeType = { GAP: 0, ACCEPT: 1, RELEASE: 2, REJECT: 3, RENEW: 4 } as const;

/** ShareFetch v2's AcquireMode byte (share.acquire.mode): Kafka's ShareAcquireMode ids. */
export const ShareAcquireMode = { BATCH_OPTIMIZED: 0, RECORD_LIMIT: 1 } as const;

/**
 * One record batch as read from the log (offsets from its header; control batches included, isControl
 * true). isControl is informational: like Kafka 4.4, acquisition treats a control batch's offsets as
 * any others and the consumer acknowledges them as GAP.
 */
export interface FetchedBatch {
  baseOffset: number;
  lastOffset: number;
  isControl: boolean;
}

export interface AcquiredRecords {
  firstOffset: number;
  lastOffset: number;
  deliveryCount: number;
}

/** ShareFetch/ShareAcknowledge AcknowledgementBatch: one type for the whole range, or one per offset. */
export interface AcknowledgementBatch {
  firstOffset: number;
  lastOffset: number;
  acknowledgeTypes: number[];
}

export interface SharePartitionOptions {
  clock: Clock;
  timers: Timers;
  /** group.share.record.lock.duration.ms (default 30000). */
  recordLockDurationMs: number;
  /** group.share.delivery.count.limit (default 5). */
  deliveryCountLimit: number;
  /** group.share.partition.max.record.locks (default 2000). */
  maxInFlightRecords: number;
  /** share.renew.acknowledge.enable (group config, default true): whether RENEW is honoured. */
  renewAcknowledgeEnable?: boolean;
  /** The persisted state read at load: SPSO (already resolved, never -1 here), epoch, batches. */
  state: { stateEpoch: number; startOffset: number; stateBatches: PersisterStateBatch[] };
  /** Called (synchronously, from a timer) when acquisition locks expired and records became available or archived. */
  onLocksExpired?: () => void;
}

export interface AcquireOptions {
  maxRecords: number;
  batchSize: number;
  acquireMode: number;
  /**
   * The nextFetchOffset() the batches were read at. When given and the log's data starts above it,
   * AVAILABLE in-flight records in between no longer exist in the log and are archived (Kafka's
   * maybeArchiveStaleBatches); without it that clean-up is skipped.
   */
  fetchOffset?: number;
}

export interface AcknowledgeResult {
  errorCode: number;
  errorMessage: string | null;
}

/** Kafka's throttled delivery: from this count on, redeliveries of a batch are handed out in shrinking pieces. */
function throttleDeliveryCountFrom(deliveryCountLimit: number): number {
  return Math.max(2, Math.ceil(deliveryCountLimit / 2));
}

/** The last offset of the fetched batch holding `offset` (batch_optimized hands out whole batches), else `offset`. */
function lastOffsetOfBatchHolding(batches: readonly FetchedBatch[], offset: number): number {
  let holding: FetchedBatch | undefined;
  for (const batch of batches) {
    if (batch.baseOffset > offset) break;
    holding = batch;
  }
  return holding !== undefined && offset <= holding.lastOffset ? holding.lastOffset : offset;
}

/** Merges consecutive offsets with equal delivery counts into ranges (Kafka's accumulateAcquiredRecords). */
function accumulate(result: AcquiredRecords[], perOffset: readonly AcquiredRecords[]): void {
  for (const records of perOffset) {
    const previous = result.at(-1);
    if (previous !== undefined && previous.lastOffset + 1 === records.firstOffset && previous.deliveryCount === records.deliveryCount) {
      previous.lastOffset = records.lastOffset;
    } else {
      result.push({ ...records });
    }
  }
}

const NONE: AcknowledgeResult = { errorCode: ErrorCode.NONE, errorMessage: null };

function invalidRequest(message: string): AcknowledgeResult {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: message };
}

function invalidRecordState(message: string): AcknowledgeResult {
  return { errorCode: ErrorCode.INVALID_RECORD_STATE, errorMessage: message };
}

/** One validated piece of an acknowledgement: a whole batch, or a range of a batch to be split. */
interface AckStep {
  batch: InFlightBatch;
  whole: boolean;
  firstOffset: number;
  lastOffset: number;
  typeAt: (offset: number) => number;
}

export class SharePartition {
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly recordLockDurationMs: number;
  private readonly deliveryCountLimit: number;
  private readonly maxInFlightRecords: number;
  private readonly renewAcknowledgeEnable: boolean;
  private readonly onLocksExpired: (() => void) | undefined;
  /** In offset order, non-overlapping; the first holds the SPSO (or starts above it only when empty). */
  private readonly batches: InFlightBatch[] = [];
  private spso: number;
  private speo: number;
  private readonly epoch: number;

  constructor(options: SharePartitionOptions) {
    assert.ok(options.recordLockDurationMs > 0, 'recordLockDurationMs is positive');
    assert.ok(options.deliveryCountLimit >= 1, 'deliveryCountLimit is at least 1');
    assert.ok(options.maxInFlightRecords >= 1, 'maxInFlightRecords is at least 1');
    assert.ok(Number.isSafeInteger(options.state.startOffset) && options.state.startOffset >= 0, `SPSO ${options.state.startOffset} is resolved`);
    this.clock = options.clock;
    this.timers = options.timers;
    this.recordLockDurationMs = options.recordLockDurationMs;
    this.deliveryCountLimit = options.deliveryCountLimit;
    this.maxInFlightRecords = options.maxInFlightRecords;
    this.renewAcknowledgeEnable = options.renewAcknowledgeEnable ?? true;
    this.onLocksExpired = options.onLocksExpired;
    this.epoch = options.state.stateEpoch;
    this.spso = options.state.startOffset;
    this.speo = this.load(options.state.startOffset, options.state.stateBatches);
    this.maybeAdvanceStartOffset();
    this.assertInvariants();
  }

  get startOffset(): number {
    return this.spso;
  }

  get endOffset(): number {
    return this.speo;
  }

  get stateEpoch(): number {
    return this.epoch;
  }

  /** The log offset the leader should read from to acquire more: the first AVAILABLE in-flight offset, else SPEO. */
  nextFetchOffset(): number {
    for (const batch of this.batches) {
      for (const [firstOffset, lastOffset, state] of batch.states()) {
        if (lastOffset >= this.spso && state.state === RecordState.AVAILABLE) return Math.max(firstOffset, this.spso);
      }
    }
    return this.speo;
  }

  /** False when the in-flight records reach maxInFlightRecords (no acquisition until acks move the SPSO). */
  canAcquireRecords(): boolean {
    if (this.nextFetchOffset() !== this.speo) return true;
    return this.inFlightRecordCount() < this.maxInFlightRecords;
  }

  /**
   * Acquires records for the member from batches read at nextFetchOffset(): AVAILABLE in-flight
   * records first, then new ones from the SPEO. batch_optimized keeps whole log batches (so it may
   * exceed maxRecords) and cuts the new records into acquired ranges of about batchSize at log batch
   * boundaries; record_limit never exceeds maxRecords, leaving the rest of a log batch AVAILABLE.
   */
  acquire(memberId: string, batches: readonly FetchedBatch[], options: AcquireOptions): AcquiredRecords[] {
    assert.ok(memberId.length > 0, 'an acquiring member has an id');
    assert.ok(options.batchSize >= 1, `batchSize ${options.batchSize} is positive`);
    const first = batches[0];
    const last = batches.at(-1);
    if (options.maxRecords <= 0 || first === undefined || last === undefined || last.lastOffset < this.spso) return [];
    const fetchOffset = options.fetchOffset ?? this.nextFetchOffset();
    const limit = this.acquisitionLimit(fetchOffset, options.maxRecords, last.lastOffset);
    if (limit.maxRecords <= 0) return [];
    if (options.fetchOffset !== undefined && this.archiveStaleRecords(options.fetchOffset, first.baseOffset)) this.maybeAdvanceStartOffset();
    const request = {
      memberId,
      recordLimit: options.acquireMode === ShareAcquireMode.RECORD_LIMIT,
      firstOffset: Math.max(first.baseOffset, this.spso),
      lastOffset: limit.lastOffset,
      maxRecords: limit.maxRecords,
    };
    const result: AcquiredRecords[] = [];
    const reacquired = this.acquireInFlight(request, result);
    const remaining = request.maxRecords - reacquired.count;
    if (!reacquired.throttled && remaining > 0 && this.speo <= request.lastOffset) {
      this.acquireNew({ ...request, firstOffset: Math.max(this.speo, request.firstOffset), maxRecords: remaining }, batches, options.batchSize, result);
    }
    this.assertAcquired(result, request);
    this.assertInvariants();
    return result;
  }

  /**
   * Applies the member's acknowledgements: ACCEPT→ACKNOWLEDGED, RELEASE→AVAILABLE (ARCHIVED at the
   * delivery limit), REJECT and GAP→ARCHIVED, RENEW restarts the lock. All or nothing: every batch is
   * validated before any state changes.
   */
  acknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): AcknowledgeResult {
    const steps: AckStep[] = [];
    const claimed = new Set<number>();
    for (const batch of batches) {
      const error = this.validateShape(batch) ?? this.planAcknowledgement(memberId, batch, steps, claimed);
      if (error !== null) return error;
    }
    for (const step of steps) this.applyAcknowledgement(memberId, step);
    this.maybeAdvanceStartOffset();
    this.assertInvariants();
    return { ...NONE };
  }

  /** The member left or its session ended: its ACQUIRED records become AVAILABLE (ARCHIVED at the limit). */
  releaseAcquiredRecords(memberId: string): boolean {
    let changed = false;
    for (const batch of this.batches) {
      if (!batch.isSplit && batch.whole.memberId === memberId && this.straddlesStartOffset(batch)) batch.split();
      for (const [, lastOffset, state] of batch.states()) {
        if (state.state !== RecordState.ACQUIRED || state.memberId !== memberId) continue;
        this.release(state, lastOffset);
        changed = true;
      }
    }
    if (changed) this.maybeAdvanceStartOffset();
    this.assertInvariants();
    return changed;
  }

  /** The log start offset moved past the SPSO (retention, DeleteRecords): archive what is below, move the SPSO. */
  updateLogStartOffset(logStartOffset: number): void {
    if (logStartOffset <= this.spso) return;
    this.archiveAvailable(this.spso, logStartOffset - 1);
    this.spso = logStartOffset;
    this.speo = Math.max(this.speo, this.spso);
    this.maybeAdvanceStartOffset();
    this.assertInvariants();
  }

  /**
   * What to persist now (WriteShareGroupState): the SPSO and the runs above it whose state is not
   * AVAILABLE with no deliveries. ACQUIRED is written as AVAILABLE with its count, so a new leader
   * offers it again and counts the delivery that was under way.
   */
  persistentState(): { startOffset: number; deliveryCompleteCount: number; stateBatches: PersisterStateBatch[] } {
    const stateBatches: PersisterStateBatch[] = [];
    let deliveryCompleteCount = 0;
    for (const [firstOffset, lastOffset, state] of this.statesFromStartOffset()) {
      const deliveryState = state.state === RecordState.ACQUIRED ? RecordState.AVAILABLE : state.state;
      if (isTerminal(deliveryState)) deliveryCompleteCount += lastOffset - firstOffset + 1;
      if (deliveryState === RecordState.AVAILABLE && state.deliveryCount === 0) continue;
      const previous = stateBatches.at(-1);
      if (previous?.lastOffset === firstOffset - 1 && previous.deliveryState === deliveryState && previous.deliveryCount === state.deliveryCount) {
        previous.lastOffset = lastOffset;
      } else {
        stateBatches.push({ firstOffset, lastOffset, deliveryState, deliveryCount: state.deliveryCount });
      }
    }
    return { startOffset: this.spso, deliveryCompleteCount, stateBatches };
  }

  /** Per-state record counts at or above the SPSO, for describe and metrics. */
  inFlightSummary(): { available: number; acquired: number; acknowledged: number; archived: number } {
    const summary = { available: 0, acquired: 0, acknowledged: 0, archived: 0 };
    for (const [firstOffset, lastOffset, state] of this.statesFromStartOffset()) {
      const records = lastOffset - firstOffset + 1;
      if (state.state === RecordState.AVAILABLE) summary.available += records;
      else if (state.state === RecordState.ACQUIRED) summary.acquired += records;
      else if (state.state === RecordState.ACKNOWLEDGED) summary.acknowledged += records;
      else summary.archived += records;
    }
    return summary;
  }

  /** Cancels every lock timer (leadership lost, group deleted). */
  close(): void {
    for (const batch of this.batches) batch.releaseLocks();
  }

  // ---- load ----

  /**
   * Rebuilds the in-flight batches from the persisted runs and returns the SPEO. Ranges between
   * runs (and between the SPSO and the first run) were never delivered: they come back as AVAILABLE
   * with no deliveries. Parts of runs below the SPSO or overlapping an earlier run are dropped.
   */
  private load(startOffset: number, stateBatches: readonly PersisterStateBatch[]): number {
    let nextOffset = startOffset;
    for (const run of [...stateBatches].sort((a, b) => a.firstOffset - b.firstOffset)) {
      assert.ok(run.deliveryCount >= 0, `persisted delivery count ${run.deliveryCount}`);
      const firstOffset = Math.max(run.firstOffset, nextOffset);
      if (run.lastOffset < firstOffset) continue;
      if (firstOffset > nextOffset) this.batches.push(new InFlightBatch(nextOffset, firstOffset - 1, idleState(RecordState.AVAILABLE, 0)));
      this.batches.push(new InFlightBatch(firstOffset, run.lastOffset, idleState(loadedState(run.deliveryState), run.deliveryCount)));
      nextOffset = run.lastOffset + 1;
    }
    return nextOffset;
  }

  // ---- acquisition ----

  private inFlightRecordCount(): number {
    return this.batches.length === 0 ? 0 : this.speo - this.spso;
  }

  /**
   * How many records, up to which offset, this fetch may acquire. At the in-flight limit a fetch
   * inside the in-flight range may still take AVAILABLE records there, but nothing new.
   */
  private acquisitionLimit(fetchOffset: number, maxRecords: number, lastOffset: number): { maxRecords: number; lastOffset: number } {
    const headroom = Math.min(maxRecords, this.maxInFlightRecords - this.inFlightRecordCount());
    if (headroom > 0) return { maxRecords: headroom, lastOffset };
    if (fetchOffset >= this.speo) return { maxRecords: 0, lastOffset };
    return { maxRecords: Math.min(maxRecords, this.speo - fetchOffset), lastOffset: Math.min(lastOffset, this.speo - 1) };
  }

  /** The log returned data from `baseOffset` though asked from `fetchOffset`: what lies between is gone. */
  private archiveStaleRecords(fetchOffset: number, baseOffset: number): boolean {
    if (fetchOffset >= baseOffset) return false;
    this.archiveAvailable(Math.max(fetchOffset, this.spso), baseOffset - 1);
    return true;
  }

  /** Re-acquires AVAILABLE in-flight records in the request's range (Kafka's overlap path of acquire). */
  private acquireInFlight(request: AcquireRequest, result: AcquiredRecords[]): { count: number; throttled: boolean } {
    let count = 0;
    for (const batch of this.batchesOverlapping(request.firstOffset, request.lastOffset)) {
      if (count >= request.maxRecords) break;
      const fullMatch = batch.firstOffset >= request.firstOffset && batch.lastOffset <= request.lastOffset;
      const recordLimitSubset = request.recordLimit && batch.size > request.maxRecords - count;
      const throttled = this.shouldThrottle(batch, request.firstOffset, request.lastOffset);
      if (throttled && count > 0) return { count, throttled: true };
      if (fullMatch && !batch.isSplit && !recordLimitSubset && !throttled) {
        count += this.acquireWholeBatch(request.memberId, batch, result);
        continue;
      }
      if (!batch.isSplit && batch.whole.state !== RecordState.AVAILABLE) continue;
      batch.split();
      const acquired = this.acquireOffsets({ ...request, maxRecords: request.maxRecords - count }, batch, result);
      count += acquired;
      if (throttled && acquired > 0) return { count, throttled: true };
    }
    return { count, throttled: false };
  }

  private acquireWholeBatch(memberId: string, batch: InFlightBatch, result: AcquiredRecords[]): number {
    const state = batch.whole;
    if (state.state !== RecordState.AVAILABLE) return 0;
    this.markAcquired(state, memberId);
    this.lockStates(batch, [state]);
    result.push({ firstOffset: batch.firstOffset, lastOffset: batch.lastOffset, deliveryCount: state.deliveryCount });
    return batch.size;
  }

  /**
   * Acquires AVAILABLE offsets of a split batch in the request's range. A record on its last
   * delivery is handed out alone, and a batch redelivered often is handed out in pieces that halve
   * with each further delivery, so one poison record cannot keep failing its neighbours (Kafka 4.4).
   */
  private acquireOffsets(request: AcquireRequest, batch: InFlightBatch, result: AcquiredRecords[]): number {
    const throttleFrom = throttleDeliveryCountFrom(this.deliveryCountLimit);
    const lastAttemptAlone = this.deliveryCountLimit > 2;
    const acquired: AcquiredRecords[] = [];
    const states: InFlightState[] = [];
    let throttledMax = -1;
    for (let offset = Math.max(request.firstOffset, batch.firstOffset); offset <= Math.min(request.lastOffset, batch.lastOffset); offset++) {
      const state = batch.stateAt(offset);
      if (state.state !== RecordState.AVAILABLE) continue;
      if (lastAttemptAlone && state.deliveryCount === this.deliveryCountLimit - 1 && acquired.length > 0) break;
      if (state.deliveryCount >= throttleFrom && throttledMax < 0) throttledMax = Math.max(1, Math.floor(batch.size / 2 ** (state.deliveryCount - throttleFrom + 1)));
      this.markAcquired(state, request.memberId);
      states.push(state);
      acquired.push({ firstOffset: offset, lastOffset: offset, deliveryCount: state.deliveryCount });
      if (lastAttemptAlone && state.deliveryCount === this.deliveryCountLimit) break;
      if (request.recordLimit && acquired.length === request.maxRecords) break;
      if (acquired.length === throttledMax) break;
    }
    if (states.length > 0) this.lockStates(batch, states);
    accumulate(result, acquired);
    return acquired.length;
  }

  private shouldThrottle(batch: InFlightBatch, firstOffset: number, lastOffset: number): boolean {
    const throttleFrom = throttleDeliveryCountFrom(this.deliveryCountLimit);
    for (const [stateFirst, stateLast, state] of batch.states()) {
      if (stateLast < firstOffset || stateFirst > lastOffset || state.state !== RecordState.AVAILABLE) continue;
      if (state.deliveryCount >= throttleFrom) return true;
    }
    return false;
  }

  /** Acquires never-delivered records from `request.firstOffset` (at or above the SPEO) on. */
  private acquireNew(request: AcquireRequest, batches: readonly FetchedBatch[], batchSize: number, result: AcquiredRecords[]): void {
    const firstOffset = request.firstOffset;
    assert.ok(firstOffset >= this.speo, 'new records start at or above the SPEO');
    if (firstOffset > request.lastOffset) return;
    let lastOffset = request.lastOffset;
    if (request.maxRecords < lastOffset - firstOffset + 1) lastOffset = lastOffsetOfBatchHolding(batches, firstOffset + request.maxRecords - 1);
    if (this.batches.length === 0) this.spso = firstOffset;
    this.speo = Math.max(this.speo, lastOffset + 1);
    if (request.recordLimit) {
      this.addAcquiredBatch(request.memberId, firstOffset, lastOffset, result, Math.min(lastOffset, firstOffset + request.maxRecords - 1));
      return;
    }
    for (const [rangeFirst, rangeLast] of rangesAtBatchBoundaries(batches, firstOffset, lastOffset, batchSize)) {
      this.addAcquiredBatch(request.memberId, rangeFirst, rangeLast, result);
    }
  }

  /** A new in-flight batch acquired by the member; record_limit acquires only up to `acquiredLastOffset`. */
  private addAcquiredBatch(memberId: string, firstOffset: number, lastOffset: number, result: AcquiredRecords[], acquiredLastOffset = lastOffset): void {
    const previous = this.batches.at(-1);
    assert.ok(previous === undefined || previous.lastOffset < firstOffset, 'new in-flight batches go after the last one');
    const state = idleState(RecordState.AVAILABLE, 0);
    const batch = new InFlightBatch(firstOffset, lastOffset, state);
    this.batches.push(batch);
    this.markAcquired(state, memberId);
    this.lockStates(batch, [state]);
    if (acquiredLastOffset < lastOffset) batch.split(acquiredLastOffset);
    result.push({ firstOffset, lastOffset: acquiredLastOffset, deliveryCount: 1 });
  }

  private markAcquired(state: InFlightState, memberId: string): void {
    assert.equal(state.state, RecordState.AVAILABLE, 'only AVAILABLE records are acquired');
    state.state = RecordState.ACQUIRED;
    state.deliveryCount++;
    state.memberId = memberId;
  }

  // ---- acquisition locks ----

  /** Puts `states` of `batch` under one new acquisition lock of recordLockDurationMs. */
  private lockStates(batch: InFlightBatch, states: readonly InFlightState[]): void {
    const lock: AcquisitionLock = { deadlineMs: this.clock.monotonicMs() + this.recordLockDurationMs, handle: null, holders: 0 };
    for (const state of states) {
      detachLock(state);
      attachLock(state, lock);
    }
    lock.handle = this.timers.schedule(this.recordLockDurationMs, () => this.onLockTimeout(batch, lock));
  }

  private onLockTimeout(batch: InFlightBatch, lock: AcquisitionLock): void {
    // Real timers may fire a fraction of a millisecond before the monotonic clock shows the deadline.
    assert.ok(this.clock.monotonicMs() >= lock.deadlineMs - 1, 'an acquisition lock never expires early');
    if (!batch.isSplit && batch.whole.lock === lock && this.straddlesStartOffset(batch)) batch.split();
    let changed = false;
    for (const [, lastOffset, state] of batch.states()) {
      if (state.lock !== lock) continue;
      assert.equal(state.state, RecordState.ACQUIRED, 'only ACQUIRED records hold a lock');
      this.release(state, lastOffset);
      changed = true;
    }
    if (!changed) return;
    this.maybeAdvanceStartOffset();
    this.assertInvariants();
    this.onLocksExpired?.();
  }

  /** ACQUIRED → AVAILABLE, or ARCHIVED at the delivery limit or when the SPSO moved past it. */
  private release(state: InFlightState, lastOffset: number): void {
    assert.equal(state.state, RecordState.ACQUIRED, 'only ACQUIRED records are released');
    detachLock(state);
    state.memberId = '';
    const archive = lastOffset < this.spso || state.deliveryCount >= this.deliveryCountLimit;
    state.state = archive ? RecordState.ARCHIVED : RecordState.AVAILABLE;
  }

  // ---- acknowledgement ----

  /** The request checks Kafka's ShareAcknowledge handler makes before the share partition sees a batch. */
  private validateShape(batch: AcknowledgementBatch): AcknowledgeResult | null {
    const types = batch.acknowledgeTypes;
    if (batch.firstOffset > batch.lastOffset) return invalidRequest(`Acknowledgement batch ${batch.firstOffset}-${batch.lastOffset} is empty.`);
    if (types.length === 0) return invalidRequest('Acknowledgement batch has no acknowledge types.');
    if (types.length > 1 && types.length !== batch.lastOffset - batch.firstOffset + 1) return invalidRequest('Acknowledge types do not match the batch offsets.');
    if (types.some((type) => !Number.isInteger(type) || type < AcknowledgeType.GAP || type > AcknowledgeType.RENEW)) return invalidRequest(`Invalid acknowledge type: [${types.join(', ')}]`);
    return null;
  }

  /** Validates one acknowledgement batch against the in-flight state and queues its steps. */
  private planAcknowledgement(memberId: string, ack: AcknowledgementBatch, steps: AckStep[], claimed: Set<number>): AcknowledgeResult | null {
    if (ack.lastOffset < this.spso) return null;
    const covered = this.batchesCoveringAcknowledgement(ack);
    if (!Array.isArray(covered)) return covered;
    const typeAt = ack.acknowledgeTypes.length === 1 ? () => ack.acknowledgeTypes[0]! : (offset: number) => ack.acknowledgeTypes[offset - ack.firstOffset]!;
    if (!this.renewAcknowledgeEnable && ack.acknowledgeTypes.includes(AcknowledgeType.RENEW)) return invalidRecordState('Renewing acquisition locks is not enabled for the group.');
    for (const batch of covered) {
      if (batch.lastOffset < this.spso) continue;
      const error = batch.isSplit ? null : this.checkWholeBatchOwner(memberId, batch);
      if (error !== null) return error;
      const fullMatch = batch.firstOffset >= ack.firstOffset && batch.lastOffset <= ack.lastOffset;
      const whole = fullMatch && !batch.isSplit && ack.acknowledgeTypes.length === 1 && !this.straddlesStartOffset(batch);
      const step: AckStep = { batch, whole, firstOffset: Math.max(ack.firstOffset, batch.firstOffset, this.spso), lastOffset: Math.min(ack.lastOffset, batch.lastOffset), typeAt };
      const stepError = this.checkOffsets(memberId, step, claimed);
      if (stepError !== null) return stepError;
      steps.push(step);
    }
    return null;
  }

  /** The in-flight batches an acknowledgement covers, or Kafka's error when it reaches outside them. */
  private batchesCoveringAcknowledgement(ack: AcknowledgementBatch): InFlightBatch[] | AcknowledgeResult {
    let floor = this.floorBatchIndex(ack.firstOffset);
    if (floor < 0 && ack.firstOffset < this.spso) floor = this.floorBatchIndex(this.spso);
    if (floor < 0) return invalidRecordState('Batch record not found. The request batch offsets are not found in the cache.');
    const covered: InFlightBatch[] = [];
    for (let i = floor; i < this.batches.length && this.batches[i]!.firstOffset <= ack.lastOffset; i++) covered.push(this.batches[i]!);
    const lastCovered = covered.at(-1)!.lastOffset;
    if (lastCovered < ack.firstOffset) return invalidRequest('Batch record not found. The first offset in request is past acquired records.');
    if (ack.lastOffset > lastCovered) return invalidRequest('Batch record not found. The last offset in request is past acquired records.');
    return covered;
  }

  private checkWholeBatchOwner(memberId: string, batch: InFlightBatch): AcknowledgeResult | null {
    const state = batch.whole;
    if (state.state !== RecordState.ACQUIRED) return invalidRecordState('The batch cannot be acknowledged. The batch is not in the acquired state.');
    if (state.memberId !== memberId) return invalidRecordState('Member is not the owner of batch record');
    return null;
  }

  /** Every offset of the step must be ACQUIRED by the member and not already acknowledged in this request. */
  private checkOffsets(memberId: string, step: AckStep, claimed: Set<number>): AcknowledgeResult | null {
    for (let offset = step.firstOffset; offset <= step.lastOffset; offset++) {
      const state = step.batch.stateAt(offset);
      if (state.state !== RecordState.ACQUIRED) return invalidRecordState('The offset cannot be acknowledged. The offset is not acquired.');
      if (state.memberId !== memberId) return invalidRecordState('Member is not the owner of offset');
      if (claimed.has(offset)) return invalidRecordState('The record state is invalid. The acknowledgement of delivery could not be completed.');
      if (step.typeAt(offset) !== AcknowledgeType.RENEW) claimed.add(offset);
    }
    return null;
  }

  private applyAcknowledgement(memberId: string, step: AckStep): void {
    if (step.whole) {
      this.acknowledgeState(step.batch, step.batch.whole, step.batch.lastOffset, step.typeAt(step.firstOffset));
      return;
    }
    step.batch.split();
    const renewed: InFlightState[] = [];
    for (let offset = step.firstOffset; offset <= step.lastOffset; offset++) {
      const state = step.batch.stateAt(offset);
      assert.equal(state.memberId, memberId, 'validated offsets belong to the member');
      if (step.typeAt(offset) === AcknowledgeType.RENEW) renewed.push(state);
      else this.acknowledgeState(step.batch, state, offset, step.typeAt(offset));
    }
    if (renewed.length > 0) this.lockStates(step.batch, renewed);
  }

  private acknowledgeState(batch: InFlightBatch, state: InFlightState, lastOffset: number, type: number): void {
    if (type === AcknowledgeType.RENEW) {
      this.lockStates(batch, [state]);
      return;
    }
    if (type === AcknowledgeType.RELEASE) {
      this.release(state, lastOffset);
      return;
    }
    detachLock(state);
    state.memberId = '';
    state.state = type === AcknowledgeType.ACCEPT ? RecordState.ACKNOWLEDGED : RecordState.ARCHIVED;
  }

  // ---- start offset ----

  /** Moves the SPSO past the leading ACKNOWLEDGED/ARCHIVED records and holes, dropping batches below it. */
  private maybeAdvanceStartOffset(): boolean {
    const before = this.spso;
    while (this.batches.length > 0) {
      const batch = this.batches[0]!;
      if (batch.lastOffset >= this.spso) {
        this.spso = Math.max(this.spso, batch.firstOffset);
        const open = firstOpenOffset(batch, this.spso);
        if (open !== null) {
          this.spso = open;
          break;
        }
        this.spso = batch.lastOffset + 1;
      }
      batch.releaseLocks();
      this.batches.shift();
    }
    this.speo = Math.max(this.speo, this.spso);
    assert.ok(this.spso >= before, 'the SPSO never moves back');
    return this.spso !== before;
  }

  /** Archives AVAILABLE records in [firstOffset, lastOffset]; ACQUIRED ones are archived when released. */
  private archiveAvailable(firstOffset: number, lastOffset: number): void {
    for (const batch of this.batchesOverlapping(firstOffset, lastOffset)) {
      const inside = batch.firstOffset >= firstOffset && batch.lastOffset <= lastOffset;
      if (!batch.isSplit && (batch.whole.state !== RecordState.AVAILABLE || inside)) {
        if (batch.whole.state === RecordState.AVAILABLE) batch.whole.state = RecordState.ARCHIVED;
        continue;
      }
      batch.split();
      for (let offset = Math.max(firstOffset, batch.firstOffset); offset <= Math.min(lastOffset, batch.lastOffset); offset++) {
        const state = batch.stateAt(offset);
        if (state.state === RecordState.AVAILABLE) state.state = RecordState.ARCHIVED;
      }
    }
  }

  private straddlesStartOffset(batch: InFlightBatch): boolean {
    return batch.firstOffset < this.spso && batch.lastOffset >= this.spso;
  }

  // ---- lookup ----

  /** Index of the last batch starting at or before `offset`, or -1. */
  private floorBatchIndex(offset: number): number {
    let low = 0;
    let high = this.batches.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (this.batches[middle]!.firstOffset <= offset) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  }

  private batchesOverlapping(firstOffset: number, lastOffset: number): InFlightBatch[] {
    const start = Math.max(0, this.floorBatchIndex(firstOffset));
    const overlapping: InFlightBatch[] = [];
    for (let i = start; i < this.batches.length && this.batches[i]!.firstOffset <= lastOffset; i++) {
      if (this.batches[i]!.lastOffset >= firstOffset) overlapping.push(this.batches[i]!);
    }
    return overlapping;
  }

  /** Every in-flight state clipped to offsets at or above the SPSO. */
  private *statesFromStartOffset(): Generator<[number, number, InFlightState]> {
    for (const batch of this.batches) {
      for (const [firstOffset, lastOffset, state] of batch.states()) {
        if (lastOffset >= this.spso) yield [Math.max(firstOffset, this.spso), lastOffset, state];
      }
    }
  }

  /** Exit check of acquire: ranges ascend inside [SPSO, SPEO), and record_limit stays within maxRecords. */
  private assertAcquired(result: readonly AcquiredRecords[], request: AcquireRequest): void {
    let nextOffset = this.spso;
    let count = 0;
    for (const records of result) {
      assert.ok(records.firstOffset >= nextOffset && records.lastOffset >= records.firstOffset, `acquired ${records.firstOffset}-${records.lastOffset} out of order`);
      assert.ok(records.lastOffset < this.speo, 'acquired records lie below the SPEO');
      assert.ok(records.deliveryCount >= 1, 'an acquisition counts a delivery');
      nextOffset = records.lastOffset + 1;
      count += records.lastOffset - records.firstOffset + 1;
    }
    if (request.recordLimit) assert.ok(count <= request.maxRecords, `record_limit acquired ${count} of at most ${request.maxRecords}`);
  }

  private assertInvariants(): void {
    assert.ok(this.spso <= this.speo, `SPSO ${this.spso} is at most SPEO ${this.speo}`);
    const first = this.batches[0];
    const last = this.batches.at(-1);
    if (first === undefined || last === undefined) return;
    assert.ok(first.firstOffset <= this.spso && first.lastOffset >= this.spso, 'the first in-flight batch holds the SPSO');
    assert.equal(last.lastOffset + 1, this.speo, 'the last in-flight batch ends just below the SPEO');
  }
}

interface AcquireRequest {
  memberId: string;
  recordLimit: boolean;
  firstOffset: number;
  lastOffset: number;
  maxRecords: number;
}

function idleState(state: number, deliveryCount: number): InFlightState {
  return { state, deliveryCount, memberId: '', lock: null };
}

/** A persisted delivery state as held in memory: nothing loads as ACQUIRED (no member holds it any more). */
function loadedState(deliveryState: number): number {
  if (deliveryState === RecordState.AVAILABLE || deliveryState === RecordState.ACQUIRED) return RecordState.AVAILABLE;
  if (deliveryState === RecordState.ACKNOWLEDGED) return RecordState.ACKNOWLEDGED;
  assert.ok(deliveryState === RecordState.ARCHIVED || deliveryState === 3, `persisted delivery state ${deliveryState} is known`);
  return RecordState.ARCHIVED;
}

function firstOpenOffset(batch: InFlightBatch, fromOffset: number): number | null {
  for (const [firstOffset, lastOffset, state] of batch.states()) {
    if (lastOffset >= fromOffset && !isTerminal(state.state)) return Math.max(firstOffset, fromOffset);
  }
  return null;
}

/**
 * Cuts [firstOffset, lastOffset] into acquired ranges at log batch boundaries once a range holds
 * batchSize records (share.max.fetch.records' batch size; whole log batches are never cut).
 */
function rangesAtBatchBoundaries(batches: readonly FetchedBatch[], firstOffset: number, lastOffset: number, batchSize: number): [number, number][] {
  const ranges: [number, number][] = [];
  let rangeFirst = firstOffset;
  if (lastOffset - firstOffset + 1 > batchSize) {
    for (const batch of batches) {
      if (batch.baseOffset > lastOffset) break;
      if (batch.baseOffset - rangeFirst < batchSize) continue;
      ranges.push([rangeFirst, batch.baseOffset - 1]);
      rangeFirst = batch.baseOffset;
    }
  }
  ranges.push([rangeFirst, lastOffset]);
  return ranges;
}
