/**
 * Producer state of one partition (Kafka's ProducerStateManager): for every
 * idempotent or transactional producer id that wrote to this log, its epoch,
 * the metadata of its last five batches (sequence range, offsets, timestamp)
 * and its open transaction, if any.
 *
 * It decides three things on the produce path, with Kafka's rules:
 * - a retried batch whose sequence range matches one of the last five is a
 *   duplicate: the append is skipped and the original offsets returned;
 * - a batch from an older epoch is refused (INVALID_PRODUCER_EPOCH);
 * - within an epoch, a batch must continue the sequence (last + 1, wrapping
 *   at Integer.MAX_VALUE), else OUT_OF_ORDER_SEQUENCE_NUMBER; a new epoch must
 *   start at sequence 0, unless the producer is unknown here, in which case
 *   any sequence is accepted (its state may have been removed by retention).
 *
 * State survives restarts through snapshot files (producer-state-snapshot.ts)
 * taken when a segment rolls and at clean shutdown; loading a log restores
 * the newest snapshot at or below the log end and replays the batches after
 * it (rebuildProducerState). Files: `<offset>.snapshot` in the partition
 * directory. Crash policy: snapshots are written atomically; a corrupt one is
 * deleted and the next older one (or a full replay) used instead, so the
 * rebuilt state is always that of the log as recovered.
 */
import type { FileSystem } from '../io/fs.js';
import { ErrorCode } from '../protocol/errors.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, type BatchHeader } from '../protocol/records/batch.js';
import { decrementSequence, inSequence, incrementSequence } from '../protocol/records/sequence.js';
import type { StorageLogger } from './log-config.js';
import { silentStorageLogger } from './log-config.js';
import {
  CorruptSnapshotError,
  decodeProducerSnapshot,
  encodeProducerSnapshot,
  offsetFromSnapshotFileName,
  producerSnapshotPath,
  type ProducerSnapshotEntry,
} from './producer-state-snapshot.js';

/** How many batches per producer are kept for duplicate detection (Kafka's NUM_BATCHES_TO_RETAIN). */
export const BATCHES_RETAINED_PER_PRODUCER = 5;

/** Who appends, in Kafka's AppendOrigin words: only client appends get sequence checks. */
export type ProducerAppendOrigin = 'client' | 'coordinator' | 'replication' | 'log';


/** The last sequence a batch covers, from its header. */
export function lastSequenceOf(header: Pick<BatchHeader, 'baseSequence' | 'lastOffsetDelta'>): number {
  return header.baseSequence === NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(header.baseSequence, header.lastOffsetDelta);
}

/** What is remembered of one appended batch. */
export interface BatchMetadata {
  lastSeq: number;
  lastOffset: number;
  /** lastOffset - firstOffset (also lastSeq - firstSeq). */
  offsetDelta: number;
  timestampMs: number;
}

export function batchFirstSeq(batch: BatchMetadata): number {
  return decrementSequence(batch.lastSeq, batch.offsetDelta);
}

export function batchFirstOffset(batch: BatchMetadata): number {
  return batch.lastOffset - batch.offsetDelta;
}

/** A Kafka error found while validating producer state, as a value. */
export interface ProducerStateError {
  errorCode: number;
  message: string;
}

/** One producer's state (Kafka's ProducerStateEntry). */
export class ProducerStateEntry {
  /** Oldest first, at most BATCHES_RETAINED_PER_PRODUCER. */
  readonly batches: BatchMetadata[] = [];

  constructor(
    readonly producerId: number,
    public producerEpoch: number = NO_PRODUCER_EPOCH,
    public coordinatorEpoch = -1,
    public lastTimestampMs = -1,
    /** First offset of the open transaction, or null. */
    public currentTxnFirstOffset: number | null = null,
  ) {}

  static empty(producerId: number): ProducerStateEntry {
    return new ProducerStateEntry(producerId);
  }

  get isEmpty(): boolean {
    return this.batches.length === 0;
  }

  get firstSeq(): number {
    const first = this.batches[0];
    return first === undefined ? NO_SEQUENCE : batchFirstSeq(first);
  }

  get lastSeq(): number {
    const last = this.batches.at(-1);
    return last === undefined ? NO_SEQUENCE : last.lastSeq;
  }

  get lastDataOffset(): number {
    return this.batches.at(-1)?.lastOffset ?? -1;
  }

  get firstDataOffset(): number {
    const first = this.batches[0];
    return first === undefined ? -1 : batchFirstOffset(first);
  }

  get lastOffsetDelta(): number {
    return this.batches.at(-1)?.offsetDelta ?? 0;
  }

  clone(): ProducerStateEntry {
    const copy = new ProducerStateEntry(this.producerId, this.producerEpoch, this.coordinatorEpoch, this.lastTimestampMs, this.currentTxnFirstOffset);
    copy.batches.push(...this.batches);
    return copy;
  }

  /** A new epoch forgets the batches of the old one. */
  maybeUpdateProducerEpoch(producerEpoch: number): void {
    if (this.producerEpoch === producerEpoch) return;
    this.batches.length = 0;
    this.producerEpoch = producerEpoch;
  }

  addBatch(producerEpoch: number, batch: BatchMetadata): void {
    this.maybeUpdateProducerEpoch(producerEpoch);
    if (this.batches.length === BATCHES_RETAINED_PER_PRODUCER) this.batches.shift();
    this.batches.push(batch);
    this.lastTimestampMs = batch.timestampMs;
  }

  /** The retained batch with exactly this sequence range in the current epoch, if any. */
  findDuplicateBatch(header: Pick<BatchHeader, 'producerEpoch' | 'baseSequence' | 'lastOffsetDelta'>): BatchMetadata | null {
    if (header.producerEpoch !== this.producerEpoch) return null;
    const lastSeq = lastSequenceOf(header);
    return this.batches.find((batch) => batch.lastSeq === lastSeq && batchFirstSeq(batch) === header.baseSequence) ?? null;
  }
}

/** A transaction opened by a producer in this log. */
export interface TxnMetadata {
  producerId: number;
  firstOffset: number;
  /** Offset of its end marker once completed. */
  lastOffset: number | null;
}

/** A transaction ended by a marker in this append. */
export interface CompletedTxn {
  producerId: number;
  firstOffset: number;
  lastOffset: number;
  isAborted: boolean;
}

/**
 * Validates the batches one producer appends in one call against its state,
 * accumulating the updated state (Kafka's ProducerAppendInfo). Nothing
 * changes in the manager until `ProducerStateManager.update(appendInfo)`.
 */
export class ProducerAppendInfo {
  readonly updatedEntry: ProducerStateEntry;
  readonly startedTransactions: TxnMetadata[] = [];

  constructor(
    readonly producerId: number,
    private readonly currentEntry: ProducerStateEntry,
    private readonly origin: ProducerAppendOrigin,
  ) {
    this.updatedEntry = new ProducerStateEntry(producerId, currentEntry.producerEpoch, currentEntry.coordinatorEpoch, currentEntry.lastTimestampMs, currentEntry.currentTxnFirstOffset);
  }

  /** Validates and records one data batch. `firstOffset` / `lastOffset` are the offsets it gets in the log. */
  appendDataBatch(batch: {
    producerEpoch: number;
    firstSeq: number;
    lastSeq: number;
    maxTimestampMs: number;
    firstOffset: number;
    lastOffset: number;
    isTransactional: boolean;
  }): ProducerStateError | null {
    const epochError = this.checkProducerEpoch(batch.producerEpoch, batch.firstOffset);
    if (epochError !== null) return epochError;
    if (this.origin === 'client') {
      const sequenceError = this.checkSequence(batch.producerEpoch, batch.firstSeq, batch.firstOffset);
      if (sequenceError !== null) return sequenceError;
    }
    this.updatedEntry.addBatch(batch.producerEpoch, {
      lastSeq: batch.lastSeq,
      lastOffset: batch.lastOffset,
      offsetDelta: batch.lastOffset - batch.firstOffset,
      timestampMs: batch.maxTimestampMs,
    });
    const openTxn = this.updatedEntry.currentTxnFirstOffset;
    if (openTxn !== null && !batch.isTransactional) {
      return { errorCode: ErrorCode.INVALID_TXN_STATE, message: `expected a transactional write from producer ${this.producerId} at offset ${batch.firstOffset}` };
    }
    if (openTxn === null && batch.isTransactional) {
      this.updatedEntry.currentTxnFirstOffset = batch.firstOffset;
      this.startedTransactions.push({ producerId: this.producerId, firstOffset: batch.firstOffset, lastOffset: null });
    }
    return null;
  }

  /** Records an end-transaction marker (COMMIT or ABORT control batch). */
  appendEndTxnMarker(marker: {
    producerEpoch: number;
    coordinatorEpoch: number;
    isAborted: boolean;
    offset: number;
    timestampMs: number;
    /** The coordinator's transaction version (WriteTxnMarkers v2); absent when replicated or replayed, as the batch does not carry it. */
    transactionVersion?: number;
  }): {
    error: ProducerStateError | null;
    completed: CompletedTxn | null;
  } {
    const epochError = this.checkMarkerEpoch(marker.producerEpoch, marker.offset, marker.transactionVersion ?? 0);
    if (epochError !== null) return { error: epochError, completed: null };
    if (this.updatedEntry.coordinatorEpoch > marker.coordinatorEpoch && this.origin !== 'replication') {
      return {
        error: { errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED, message: `coordinator epoch ${marker.coordinatorEpoch} is older than ${this.updatedEntry.coordinatorEpoch}` },
        completed: null,
      };
    }
    this.updatedEntry.maybeUpdateProducerEpoch(marker.producerEpoch);
    const firstOffset = this.updatedEntry.currentTxnFirstOffset;
    this.updatedEntry.currentTxnFirstOffset = null;
    this.updatedEntry.coordinatorEpoch = marker.coordinatorEpoch;
    this.updatedEntry.lastTimestampMs = marker.timestampMs;
    const completed = firstOffset === null ? null : { producerId: this.producerId, firstOffset, lastOffset: marker.offset, isAborted: marker.isAborted };
    return { error: null, completed };
  }

  /**
   * A marker's epoch. Transactions V2 bump the epoch before every marker, so
   * a V2 marker must carry an epoch above the producer's: one at or below it
   * is late (a retry that overtook, a deposed coordinator's) and would end
   * the producer's *next* transaction on this partition with the previous
   * one's result, committing aborted records or aborting committed ones.
   * The one exception, as Kafka's: an equal epoch with no transaction open
   * is a retry of a marker already written, harmless to write again. V0/V1
   * markers share the data's epoch, so an equal one is accepted.
   */
  private checkMarkerEpoch(producerEpoch: number, offset: number, transactionVersion: number): ProducerStateError | null {
    if (transactionVersion < 2 || this.origin === 'replication') return this.checkProducerEpoch(producerEpoch, offset);
    const current = this.updatedEntry.producerEpoch;
    if (producerEpoch > current) return null;
    if (producerEpoch === current && this.updatedEntry.currentTxnFirstOffset === null) return null;
    return {
      errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
      message: `epoch of producer ${this.producerId} at offset ${offset} is ${producerEpoch}, not above the last seen epoch ${current} (transaction version ${transactionVersion})`,
    };
  }

  private checkProducerEpoch(producerEpoch: number, offset: number): ProducerStateError | null {
    if (producerEpoch >= this.updatedEntry.producerEpoch || this.origin === 'replication') return null;
    return {
      errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
      message: `epoch of producer ${this.producerId} at offset ${offset} is ${producerEpoch}, older than the last seen epoch ${this.updatedEntry.producerEpoch}`,
    };
  }

  private checkSequence(producerEpoch: number, appendFirstSeq: number, offset: number): ProducerStateError | null {
    if (producerEpoch !== this.updatedEntry.producerEpoch) {
      if (appendFirstSeq !== 0 && this.updatedEntry.producerEpoch !== NO_PRODUCER_EPOCH) {
        return outOfOrder(`invalid sequence number ${appendFirstSeq} for new epoch ${producerEpoch} of producer ${this.producerId} at offset ${offset} (current epoch ${this.updatedEntry.producerEpoch})`);
      }
      return null;
    }
    const currentLastSeq = !this.updatedEntry.isEmpty
      ? this.updatedEntry.lastSeq
      : producerEpoch === this.currentEntry.producerEpoch
        ? this.currentEntry.lastSeq
        : NO_SEQUENCE;
    // With no known epoch (state removed by retention or DeleteRecords) any sequence is accepted.
    if (this.currentEntry.producerEpoch === NO_PRODUCER_EPOCH || inSequence(currentLastSeq, appendFirstSeq)) return null;
    return outOfOrder(`out of order sequence number for producer ${this.producerId} at offset ${offset}: ${appendFirstSeq} (incoming), ${currentLastSeq} (current end)`);
  }
}

function outOfOrder(message: string): ProducerStateError {
  return { errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, message };
}

export interface ProducerStateManagerOptions {
  /** The partition directory holding the snapshot files. */
  dir: string;
  fs: FileSystem;
  /** producer.id.expiration.ms: producers idle this long (and not in a transaction) are forgotten. */
  producerIdExpirationMs: number;
  logger?: StorageLogger;
}

export class ProducerStateManager {
  private readonly producers = new Map<number, ProducerStateEntry>();
  /** Open transactions by first offset. */
  private readonly ongoingTxns = new Map<number, TxnMetadata>();
  /** Completed transactions whose markers are not yet below the high watermark. */
  private readonly unreplicatedTxns = new Map<number, TxnMetadata>();
  /** Snapshot offsets present on disk, ascending. */
  private snapshotOffsets: number[] = [];
  private lastMapOffset = 0;
  private lastSnapOffset = 0;
  private readonly log: StorageLogger;

  private constructor(private readonly options: ProducerStateManagerOptions) {
    this.log = options.logger ?? silentStorageLogger;
  }

  /** Opens the manager over `dir`, listing its snapshot files (nothing is loaded yet). */
  static async open(options: ProducerStateManagerOptions): Promise<ProducerStateManager> {
    const manager = new ProducerStateManager(options);
    await manager.listSnapshots();
    return manager;
  }

  private async listSnapshots(): Promise<void> {
    const names = await this.options.fs.readdir(this.options.dir);
    const offsets: number[] = [];
    for (const name of names) {
      const offset = offsetFromSnapshotFileName(name);
      if (offset !== null) offsets.push(offset);
      else if (name.endsWith('.snapshot.tmp')) await this.options.fs.unlink(`${this.options.dir}/${name}`);
    }
    this.snapshotOffsets = offsets.sort((a, b) => a - b);
  }

  /** The offset up to which the state reflects the log (exclusive). */
  get mapEndOffset(): number {
    return this.lastMapOffset;
  }

  get producerIdCount(): number {
    return this.producers.size;
  }

  activeProducers(): ReadonlyMap<number, ProducerStateEntry> {
    return this.producers;
  }

  lastEntry(producerId: number): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  /**
   * Kafka's UnifiedLog.hasOngoingTransaction: the producer has a transaction
   * open here at this epoch. A Transactions V2 producer bumps its epoch every
   * transaction, so its next transaction's first batch can arrive before the
   * previous one's marker: at the new epoch it opens a transaction (and must
   * be added at the coordinator), it does not join the old one.
   */
  hasOngoingTransaction(producerId: number, producerEpoch: number): boolean {
    const entry = this.producers.get(producerId);
    return entry !== undefined && entry.currentTxnFirstOffset !== null && entry.producerEpoch === producerEpoch;
  }

  isEmpty(): boolean {
    return this.producers.size === 0 && this.unreplicatedTxns.size === 0;
  }

  latestSnapshotOffset(): number | null {
    return this.snapshotOffsets.at(-1) ?? null;
  }

  oldestSnapshotOffset(): number | null {
    return this.snapshotOffsets[0] ?? null;
  }

  /** Starts validating an append by `producerId` against its current state. */
  prepareUpdate(producerId: number, origin: ProducerAppendOrigin): ProducerAppendInfo {
    const current = this.producers.get(producerId) ?? ProducerStateEntry.empty(producerId);
    return new ProducerAppendInfo(producerId, current, origin);
  }

  /** Applies a validated append. */
  update(appendInfo: ProducerAppendInfo): void {
    if (appendInfo.producerId === NO_PRODUCER_ID) throw new Error('producer state update without a producer id');
    const updated = appendInfo.updatedEntry;
    const current = this.producers.get(appendInfo.producerId);
    if (current === undefined) {
      this.producers.set(appendInfo.producerId, updated);
    } else {
      current.maybeUpdateProducerEpoch(updated.producerEpoch);
      for (const batch of updated.batches) current.addBatch(updated.producerEpoch, batch);
      current.coordinatorEpoch = updated.coordinatorEpoch;
      current.currentTxnFirstOffset = updated.currentTxnFirstOffset;
      current.lastTimestampMs = updated.lastTimestampMs;
    }
    for (const txn of appendInfo.startedTransactions) this.ongoingTxns.set(txn.firstOffset, txn);
  }

  updateMapEndOffset(offset: number): void {
    this.lastMapOffset = offset;
  }

  /** Marks a transaction complete; it stays unstable until the high watermark passes its marker. */
  completeTxn(completed: CompletedTxn): void {
    const txn = this.ongoingTxns.get(completed.firstOffset);
    if (txn === undefined) throw new Error(`completing transaction at ${completed.firstOffset} that was never started`);
    this.ongoingTxns.delete(completed.firstOffset);
    txn.lastOffset = completed.lastOffset;
    this.unreplicatedTxns.set(completed.firstOffset, txn);
  }

  /**
   * The last stable offset once `completed` ends: the first offset of the
   * oldest other open transaction, else just past the marker.
   */
  lastStableOffsetAfter(completed: CompletedTxn): number {
    let first: number | null = null;
    for (const txn of this.ongoingTxns.values()) {
      if (txn.producerId !== completed.producerId && (first === null || txn.firstOffset < first)) first = txn.firstOffset;
    }
    return first ?? completed.lastOffset + 1;
  }

  onHighWatermarkUpdated(highWatermark: number): void {
    this.removeUnreplicatedTransactions(highWatermark);
  }

  /** The first offset of an open or not-yet-replicated transaction: the last stable offset bound. */
  firstUnstableOffset(): number | null {
    let first: number | null = null;
    for (const offset of this.ongoingTxns.keys()) if (first === null || offset < first) first = offset;
    for (const offset of this.unreplicatedTxns.keys()) if (first === null || offset < first) first = offset;
    return first;
  }

  private removeUnreplicatedTransactions(offset: number): void {
    for (const [firstOffset, txn] of this.unreplicatedTxns) {
      if (txn.lastOffset !== null && txn.lastOffset < offset) this.unreplicatedTxns.delete(firstOffset);
    }
  }

  /** Forgets producers idle for producer.id.expiration.ms that have no open transaction. */
  removeExpiredProducers(nowMs: number): void {
    for (const [producerId, entry] of this.producers) {
      if (this.isExpired(nowMs, entry)) this.producers.delete(producerId);
    }
  }

  private isExpired(nowMs: number, entry: ProducerStateEntry): boolean {
    return entry.currentTxnFirstOffset === null && nowMs - entry.lastTimestampMs >= this.options.producerIdExpirationMs;
  }

  /** Writes `<mapEndOffset>.snapshot` unless the state has not moved since the last one. */
  async takeSnapshot(): Promise<number | null> {
    if (this.lastMapOffset <= this.lastSnapOffset) return null;
    const offset = this.lastMapOffset;
    await this.options.fs.writeFileAtomic(producerSnapshotPath(this.options.dir, offset), encodeProducerSnapshot(this.snapshotEntries()));
    if (!this.snapshotOffsets.includes(offset)) {
      this.snapshotOffsets.push(offset);
      this.snapshotOffsets.sort((a, b) => a - b);
    }
    this.lastSnapOffset = offset;
    this.log.debug(`wrote producer snapshot at offset ${offset} with ${this.producers.size} producer ids`);
    return offset;
  }

  private snapshotEntries(): ProducerSnapshotEntry[] {
    return [...this.producers.values()].map((entry) => ({
      producerId: entry.producerId,
      epoch: entry.producerEpoch,
      lastSequence: entry.lastSeq,
      lastOffset: entry.lastDataOffset,
      offsetDelta: entry.lastOffsetDelta,
      timestampMs: entry.lastTimestampMs,
      coordinatorEpoch: entry.coordinatorEpoch,
      currentTxnFirstOffset: entry.currentTxnFirstOffset ?? -1,
    }));
  }

  /**
   * Drops snapshots outside (logStartOffset, logEndOffset] and, unless the
   * state already ends at logEndOffset, reloads the newest remaining
   * snapshot (the caller then replays the log from mapEndOffset).
   */
  async truncateAndReload(logStartOffset: number, logEndOffset: number, nowMs: number): Promise<void> {
    for (const offset of [...this.snapshotOffsets]) {
      if (offset > logEndOffset || offset <= logStartOffset) await this.removeAndDeleteSnapshot(offset);
    }
    if (logEndOffset === this.lastMapOffset) {
      this.onLogStartOffsetIncremented(logStartOffset);
      return;
    }
    this.producers.clear();
    this.ongoingTxns.clear();
    this.unreplicatedTxns.clear();
    await this.loadFromSnapshot(logStartOffset, nowMs);
  }

  private async loadFromSnapshot(logStartOffset: number, nowMs: number): Promise<void> {
    for (;;) {
      const offset = this.latestSnapshotOffset();
      if (offset === null) {
        this.lastSnapOffset = logStartOffset;
        this.lastMapOffset = logStartOffset;
        return;
      }
      try {
        const entries = decodeProducerSnapshot(await this.options.fs.readFile(producerSnapshotPath(this.options.dir, offset)));
        for (const entry of entries) this.loadSnapshotEntry(entry, nowMs);
        this.lastSnapOffset = offset;
        this.lastMapOffset = offset;
        this.log.info(`loaded producer state from snapshot at offset ${offset} (${entries.length} producer ids)`);
        return;
      } catch (error) {
        if (!(error instanceof CorruptSnapshotError)) throw error;
        this.log.warn(`deleting corrupt producer snapshot at offset ${offset}: ${error.message}`);
        await this.removeAndDeleteSnapshot(offset);
      }
    }
  }

  private loadSnapshotEntry(snapshot: ProducerSnapshotEntry, nowMs: number): void {
    const txnFirstOffset = snapshot.currentTxnFirstOffset >= 0 ? snapshot.currentTxnFirstOffset : null;
    const entry = new ProducerStateEntry(snapshot.producerId, snapshot.epoch, snapshot.coordinatorEpoch, snapshot.timestampMs, txnFirstOffset);
    if (snapshot.lastOffset >= 0) {
      entry.batches.push({ lastSeq: snapshot.lastSequence, lastOffset: snapshot.lastOffset, offsetDelta: snapshot.offsetDelta, timestampMs: snapshot.timestampMs });
    }
    if (this.isExpired(nowMs, entry)) return;
    this.producers.set(entry.producerId, entry);
    if (txnFirstOffset !== null) this.ongoingTxns.set(txnFirstOffset, { producerId: entry.producerId, firstOffset: txnFirstOffset, lastOffset: null });
  }

  onLogStartOffsetIncremented(logStartOffset: number): void {
    this.removeUnreplicatedTransactions(logStartOffset);
    if (this.lastMapOffset < logStartOffset) this.lastMapOffset = logStartOffset;
    this.lastSnapOffset = this.latestSnapshotOffset() ?? logStartOffset;
  }

  /** Forgets everything and deletes every snapshot: the log now starts empty at `offset`. */
  async truncateFullyAndStartAt(offset: number): Promise<void> {
    this.producers.clear();
    this.ongoingTxns.clear();
    this.unreplicatedTxns.clear();
    for (const snapshot of [...this.snapshotOffsets]) await this.removeAndDeleteSnapshot(snapshot);
    this.lastSnapOffset = 0;
    this.lastMapOffset = offset;
  }

  async deleteSnapshotsBefore(offset: number): Promise<void> {
    for (const snapshot of [...this.snapshotOffsets]) {
      if (snapshot < offset) await this.removeAndDeleteSnapshot(snapshot);
    }
  }

  /**
   * Removes snapshots that match no segment base offset, except the newest
   * one when it lies beyond every segment (the clean-shutdown snapshot).
   */
  async removeStraySnapshots(segmentBaseOffsets: readonly number[]): Promise<void> {
    const bases = new Set(segmentBaseOffsets);
    const maxBase = segmentBaseOffsets.length === 0 ? null : Math.max(...segmentBaseOffsets);
    const strays = this.snapshotOffsets.filter((offset) => !bases.has(offset));
    const newestStray = strays.at(-1);
    for (const offset of strays) {
      if (offset !== newestStray || (maxBase !== null && offset < maxBase)) await this.removeAndDeleteSnapshot(offset);
    }
  }

  private async removeAndDeleteSnapshot(offset: number): Promise<void> {
    const index = this.snapshotOffsets.indexOf(offset);
    if (index < 0) return;
    this.snapshotOffsets.splice(index, 1);
    const path = producerSnapshotPath(this.options.dir, offset);
    if ((await this.options.fs.stat(path)) !== null) await this.options.fs.unlink(path);
  }
}

/** A batch as replay sees it: its header and, for control batches, the decoded marker. */
export interface ReplayedBatch {
  header: BatchHeader;
  /** For control batches: the end-transaction marker they carry (null for an empty control batch). */
  endTxnMarker?: { coordinatorEpoch: number; isAborted: boolean } | null;
}

/**
 * Replays batches (in offset order) into the manager, without sequence
 * checks, as Kafka does when loading a log; used after loading a snapshot to
 * catch the state up with the log end. Returns the transactions completed.
 */
export function loadProducersFromBatches(manager: ProducerStateManager, batches: Iterable<ReplayedBatch>): CompletedTxn[] {
  const { infos, completed } = collectProducerUpdates(manager, batches);
  for (const info of infos) manager.update(info);
  for (const txn of completed) manager.completeTxn(txn);
  return completed;
}

/**
 * The producers' updates that batches (in offset order) make, without
 * sequence checks (log loading and follower appends), and the transactions
 * their markers complete; nothing is applied to the manager yet.
 */
export function collectProducerUpdates(manager: ProducerStateManager, batches: Iterable<ReplayedBatch>): { infos: ProducerAppendInfo[]; completed: CompletedTxn[] } {
  const infos = new Map<number, ProducerAppendInfo>();
  const completed: CompletedTxn[] = [];
  for (const { header, endTxnMarker } of batches) {
    if (header.producerId <= NO_PRODUCER_ID) continue;
    let info = infos.get(header.producerId);
    if (info === undefined) {
      info = manager.prepareUpdate(header.producerId, 'replication');
      infos.set(header.producerId, info);
    }
    if (header.isControl) {
      if (endTxnMarker === undefined || endTxnMarker === null) continue;
      const result = info.appendEndTxnMarker({ producerEpoch: header.producerEpoch, offset: header.baseOffset, timestampMs: header.maxTimestamp, ...endTxnMarker });
      if (result.completed !== null) completed.push(result.completed);
      continue;
    }
    info.appendDataBatch({
      producerEpoch: header.producerEpoch,
      firstSeq: header.baseSequence,
      lastSeq: lastSequenceOf(header),
      maxTimestampMs: header.maxTimestamp,
      firstOffset: header.baseOffset,
      lastOffset: header.lastOffset,
      isTransactional: header.isTransactional,
    });
  }
  return { infos: [...infos.values()], completed };
}
