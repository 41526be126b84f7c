/**
 * Log: one partition's log, the directory `<log.dir>/<topic>-<partition>`
 * holding its segments (log-segment.ts) and its leader-epoch-checkpoint.
 *
 * Format: segments ordered by base offset; each one's offsets lie in
 * [its baseOffset, next segment's baseOffset). Only the last (active)
 * segment is appended to. Offsets visible to readers are
 * [logStartOffset, logEndOffset); logStartOffset may sit inside the first
 * segment (DeleteRecords moves it; retention then drops whole segments).
 *
 * Search rule: a read or lookup picks the segment with the greatest base
 * offset <= target, then searches inside it (LogSegment).
 *
 * Write path: appends are serialised; each is validated batch by batch
 * (framing, CRC), gets its offsets and leader epoch written into the batch
 * headers in place, and reaches the file in one write of the caller's
 * buffer. No record is looked at.
 *
 * Crash policy: nothing is fsynced on append unless flush.messages /
 * flush.ms say so (Kafka's default leaves it to the OS); a roll flushes the
 * finished segment in the background. The recovery point is the offset
 * below which everything is known durable; after an unclean shutdown the
 * loader (log-loader.ts) rescans every segment from the one holding it. A
 * disk error during a write takes the log offline: the failed write is cut
 * back, in-memory state stays at the last good append, and every later call
 * fails with KafkaStorageError.
 */
import type { Clock, Timers } from '../io/clock.js';
import type { FileSystem } from '../io/fs.js';
import { ErrorCode } from '../protocol/errors.js';
import { readInt64 } from '../protocol/int64.js';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  MAGIC_V2,
  batchSizeAt,
  setBaseOffset,
  setLogAppendTime,
  setPartitionLeaderEpoch,
  validateBatch,
  type AppendOrigin,
} from '../protocol/records/batch.js';
import {
  InvalidRecordError,
  KafkaStorageError,
  OffsetOutOfRangeError,
  RecordBatchTooLargeError,
  RecordTooLargeError,
  UnexpectedAppendOffsetError,
  isIoError,
} from './errors.js';
import type { TopicPartition } from './file-names.js';
import type { LeaderEpochFileCache, EpochEndOffset } from './leader-epoch-cache.js';
import type { LogConfig, StorageLogger } from './log-config.js';
import { LogSegment, type AppendedBatch, type TimestampAndOffset } from './log-segment.js';
import { NO_TIMESTAMP } from './time-index.js';
import type { AbortedTxn } from './transaction-index.js';
import { CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX } from './file-names.js';

/** ListOffsets special timestamps (Kafka's ListOffsetsRequest constants). */
export const EARLIEST_TIMESTAMP = -2;
export const LATEST_TIMESTAMP = -1;
export const MAX_TIMESTAMP = -3;
export const EARLIEST_LOCAL_TIMESTAMP = -4;

export interface LogEnv {
  fs: FileSystem;
  clock: Clock;
  timers: Timers;
  /** Told how long each flush that fsynced something took (Kafka's LogFlushStats.logFlushTimer). */
  flushStats?: { logFlushed(durationMs: number): void };
}

export interface AppendOptions {
  /** Leader appends: the leader epoch stamped into every batch. */
  leaderEpoch: number;
  /** true on the leader (the log assigns offsets); false for replicated batches that carry theirs. */
  assignOffsets: boolean;
  /** Who appends (validation rules). Default 'client' when assigning offsets, else 'replication'. */
  origin?: AppendOrigin;
  /**
   * Default true: check each batch (CRC, framing, max.message.bytes) and stamp
   * LogAppendTime. False when the caller already ran Kafka's LogValidator
   * rules (src/replication/record-validator.ts); the log then only walks the
   * batch headers.
   */
  validateRecords?: boolean;
}

export interface LogAppendInfo {
  firstOffset: number;
  lastOffset: number;
  /** Largest batch maxTimestamp of the append (-1 when none carries one). */
  maxTimestamp: number;
  /** Last offset of the batch holding maxTimestamp. */
  offsetOfMaxTimestamp: number;
  /** The time stamped under message.timestamp.type=LogAppendTime, else -1. */
  logAppendTimeMs: number;
  logStartOffset: number;
  batchCount: number;
  /** Sum of the batches' record counts (from the headers). */
  recordCount: number;
  validBytes: number;
}

export interface LogReadOptions {
  maxBytes: number;
  /** Exclusive upper bound: the high watermark or the last stable offset. Default: the log end offset. */
  maxOffset?: number;
  /** Return the first batch whole even if larger than maxBytes (KIP-74). Default false. */
  minOneMessage?: boolean;
  /** Also collect the aborted transactions overlapping the read (read_committed). Default false. */
  includeAbortedTransactions?: boolean;
}

export interface LogReadResult {
  /** Bytes of whole batches, but the last may be partial (as Kafka returns); empty when nothing to read. */
  records: Buffer;
  /** Base offset of the first batch in `records` (it may start before the requested offset), or null. */
  firstBatchBaseOffset: number | null;
  /** The first batch did not fit maxBytes and minOneMessage was off. */
  firstEntryIncomplete: boolean;
  abortedTransactions: AbortedTxn[] | null;
}

export interface LogState {
  dir: string;
  topicPartition: TopicPartition;
  config: LogConfig;
  segments: LogSegment[];
  logStartOffset: number;
  logEndOffset: number;
  recoveryPoint: number;
  highWatermark: number;
  leaderEpochCache: LeaderEpochFileCache;
  logger: StorageLogger;
  /** Called after a truncation lowered the recovery point (the owner rewrites its checkpoint). */
  onRecoveryPointLowered?: () => Promise<void>;
  /** Called when an I/O error takes this log offline (the owner takes its log directory offline). */
  onIoError?: (error: NodeJS.ErrnoException) => void;
}

interface AnalyzedBatch extends AppendedBatch {
  position: number;
  partitionLeaderEpoch: number;
  lastOffsetDelta: number;
  recordCount: number;
}

/** Kafka's INT32 relative-offset limit per segment. */
const INT32_MAX = 0x7fff_ffff;

export class Log {
  readonly dir: string;
  readonly topicPartition: TopicPartition;
  private configValue: LogConfig;
  /** Replaced whole (never spliced) by a compaction swap, so a read in flight keeps a consistent list. */
  private segments: LogSegment[];
  private logStartOffsetValue: number;
  private nextOffset: number;
  private recoveryPointValue: number;
  private highWatermarkValue: number;
  readonly leaderEpochCache: LeaderEpochFileCache;
  private readonly logger: StorageLogger;
  private readonly onRecoveryPointLowered: (() => Promise<void>) | undefined;
  private readonly onIoError: ((error: NodeJS.ErrnoException) => void) | undefined;
  private offlineError: KafkaStorageError | null = null;
  private lock: Promise<unknown> = Promise.resolve();
  private flushing: Promise<unknown> = Promise.resolve();
  /** Bumped by every truncation, so a flush that raced one does not raise the recovery point. */
  private truncations = 0;
  private directoryNeedsSync = false;
  private lastFlushMs: number;
  private flushTimer: { cancel(): void } | null = null;
  private readonly pendingDeletes = new Set<Promise<void>>();
  private readonly deleteTimers = new Set<{ cancel(): void }>();
  private closed = false;

  constructor(
    private readonly env: LogEnv,
    state: LogState,
  ) {
    this.dir = state.dir;
    this.topicPartition = state.topicPartition;
    this.configValue = state.config;
    this.segments = state.segments;
    this.logStartOffsetValue = state.logStartOffset;
    this.nextOffset = state.logEndOffset;
    this.recoveryPointValue = state.recoveryPoint;
    this.highWatermarkValue = state.highWatermark;
    this.leaderEpochCache = state.leaderEpochCache;
    this.logger = state.logger;
    this.onRecoveryPointLowered = state.onRecoveryPointLowered;
    this.onIoError = state.onIoError;
    this.lastFlushMs = env.clock.nowMs();
    if (this.segments.length === 0) throw new Error(`${this.dir}: a log needs at least one segment`);
  }

  // ---- state ------------------------------------------------------------------

  get config(): LogConfig {
    return this.configValue;
  }

  get logStartOffset(): number {
    return this.logStartOffsetValue;
  }

  get logEndOffset(): number {
    return this.nextOffset;
  }

  get recoveryPoint(): number {
    return this.recoveryPointValue;
  }

  get highWatermark(): number {
    return this.highWatermarkValue;
  }

  get isOffline(): boolean {
    return this.offlineError !== null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Changes with every truncation: a cleaning pass begun before one must not swap its result in. */
  get truncationCount(): number {
    return this.truncations;
  }

  get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1]!;
  }

  /** The segments in offset order (read-only view for tools and tests). */
  get logSegments(): readonly LogSegment[] {
    return this.segments;
  }

  get sizeBytes(): number {
    let total = 0;
    for (const segment of this.segments) total += segment.sizeBytes;
    return total;
  }

  /** Messages appended since the last flush (flush.messages counts these). */
  get unflushedMessages(): number {
    return this.nextOffset - this.recoveryPointValue;
  }

  updateConfig(config: LogConfig): void {
    this.configValue = config;
    for (const segment of this.segments) segment.updateOptions(segmentOptions(config));
  }

  /** Sets the high watermark, clamped to [logStartOffset, logEndOffset]; returns the value kept. */
  updateHighWatermark(offset: number): number {
    this.highWatermarkValue = Math.min(Math.max(offset, this.logStartOffsetValue), this.nextOffset);
    return this.highWatermarkValue;
  }

  // ---- append -----------------------------------------------------------------

  /**
   * Appends `records` (one or more whole v2 batches). On the leader the log
   * assigns offsets from the log end offset and stamps `leaderEpoch`, by
   * rewriting the headers inside `records`; a follower's batches keep their
   * offsets, which must start at or after the log end offset.
   */
  async append(records: Buffer, options: AppendOptions): Promise<LogAppendInfo> {
    const origin = options.origin ?? (options.assignOffsets ? 'client' : 'replication');
    const validate = options.validateRecords !== false;
    const batches = analyzeAndValidate(records, { origin, maxMessageBytes: this.configValue.maxMessageBytes, checkCrc: validate });
    return this.withLock(() => this.appendLocked(records, batches, { ...options, validateRecords: validate }));
  }

  private async appendLocked(records: Buffer, batches: AnalyzedBatch[], options: AppendOptions): Promise<LogAppendInfo> {
    this.checkOnline();
    if (records.length > this.configValue.segmentBytes) {
      throw new RecordBatchTooLargeError(
        `${records.length} bytes of batches exceed segment.bytes ${this.configValue.segmentBytes} for ${this.name}`,
      );
    }
    const logAppendTimeMs = options.assignOffsets
      ? this.assignOffsets(records, batches, { leaderEpoch: options.leaderEpoch, stampLogAppendTime: options.validateRecords === true })
      : -1;
    if (!options.assignOffsets) this.checkReplicatedOffsets(batches);
    const info = summarize(batches, logAppendTimeMs);
    try {
      const segment = this.shouldRoll(records.length, info) ? await this.rollLocked(info.firstOffset) : this.activeSegment;
      await segment.append(records, batches);
    } catch (error) {
      throw this.offlineOnIoError(error);
    }
    this.nextOffset = info.lastOffset + 1;
    if (this.assignEpochStarts(batches)) await this.maybeHandleIOException(() => this.leaderEpochCache.flush());
    if (this.unflushedMessages >= this.configValue.flushMessages) await this.flush();
    else this.armFlushTimer();
    return { ...info, logStartOffset: this.logStartOffsetValue, validBytes: records.length };
  }

  /** Rewrites baseOffset and partitionLeaderEpoch of every batch (and maxTimestamp under LogAppendTime). */
  private assignOffsets(records: Buffer, batches: AnalyzedBatch[], options: { leaderEpoch: number; stampLogAppendTime: boolean }): number {
    const leaderEpoch = options.leaderEpoch;
    const logAppendTime = options.stampLogAppendTime && this.configValue.messageTimestampType === 'LogAppendTime';
    const nowMs = logAppendTime ? this.env.clock.nowMs() : -1;
    let offset = this.nextOffset;
    for (const batch of batches) {
      setBaseOffset(records, batch.position, offset);
      setPartitionLeaderEpoch(records, batch.position, leaderEpoch);
      if (logAppendTime) {
        setLogAppendTime(records, batch.position, nowMs);
        batch.maxTimestamp = nowMs;
      }
      batch.baseOffset = offset;
      batch.lastOffset = offset + batch.lastOffsetDelta;
      batch.partitionLeaderEpoch = leaderEpoch;
      offset = batch.lastOffset + 1;
    }
    return nowMs;
  }

  private checkReplicatedOffsets(batches: readonly AnalyzedBatch[]): void {
    const first = batches[0]!;
    const last = batches[batches.length - 1]!;
    if (first.baseOffset < this.nextOffset) {
      throw new UnexpectedAppendOffsetError(
        `${this.name}: replicated batches start at ${first.baseOffset}, below the log end offset ${this.nextOffset}`,
        first.baseOffset,
        last.lastOffset,
      );
    }
    let previous = first.baseOffset - 1;
    for (const batch of batches) {
      if (batch.baseOffset <= previous) {
        throw new InvalidRecordError(ErrorCode.CORRUPT_MESSAGE, `${this.name}: replicated batch offsets do not increase at ${batch.baseOffset}`);
      }
      previous = batch.lastOffset;
    }
  }

  /** Records a new leader epoch's start offset for batches of an epoch newer than the cache's latest; true if it changed. */
  private assignEpochStarts(batches: readonly AnalyzedBatch[]): boolean {
    let changed = false;
    for (const batch of batches) {
      const latest = this.leaderEpochCache.latestEpoch;
      if (batch.partitionLeaderEpoch >= 0 && (latest === null || batch.partitionLeaderEpoch > latest)) {
        changed = this.leaderEpochCache.assign(batch.partitionLeaderEpoch, batch.baseOffset) || changed;
      }
    }
    return changed;
  }

  /** Kafka's roll rule: the active segment is too big or old, an index is full, or the offsets would not fit. */
  private shouldRoll(messagesBytes: number, info: { lastOffset: number; maxTimestamp: number }): boolean {
    const segment = this.activeSegment;
    const config = this.configValue;
    const rollingBase = segment.rollingBasedTimestamp;
    const waitedMs =
      rollingBase !== null && rollingBase >= 0 ? info.maxTimestamp - rollingBase : this.env.clock.nowMs() - segment.createdMs;
    return (
      segment.sizeBytes > config.segmentBytes - messagesBytes ||
      (segment.sizeBytes > 0 && waitedMs > config.segmentMs) ||
      segment.offsetIndex.isFull ||
      segment.timeIndex.isFull ||
      !segment.canConvertToRelativeOffset(info.lastOffset)
    );
  }

  /**
   * Starts a new active segment at max(expectedNextOffset, logEndOffset). The
   * finished segment gets its final time-index entry and is flushed in the
   * background (Kafka's flush-on-roll), which advances the recovery point.
   */
  roll(): Promise<LogSegment> {
    return this.withLock(async () => {
      this.checkOnline();
      return this.maybeHandleIOException(() => this.rollLocked(0));
    });
  }

  private async rollLocked(expectedNextOffset: number): Promise<LogSegment> {
    const newOffset = Math.max(expectedNextOffset, this.nextOffset);
    const previous = this.activeSegment;
    if (newOffset - previous.baseOffset > INT32_MAX && previous.sizeBytes === 0) {
      // An empty active segment that cannot hold the offsets: replace it.
      this.segments.pop();
      await previous.deleteFiles();
    } else if (previous.baseOffset === newOffset) {
      return previous;
    } else {
      previous.onBecomeInactiveSegment();
    }
    const segment = await LogSegment.create(this.env.fs, this.dir, newOffset, segmentOptions(this.configValue), this.env.clock.nowMs());
    this.segments.push(segment);
    this.directoryNeedsSync = true;
    this.logger.debug(`${this.name}: rolled new segment at offset ${newOffset}`);
    this.flushInBackground(newOffset);
    return segment;
  }

  // ---- read -------------------------------------------------------------------

  /**
   * Reads batches from the one holding `fromOffset`, at most `maxBytes`
   * (or the first batch whole with minOneMessage), none at or past
   * `maxOffset`. Reads one segment's bytes with one file read.
   */
  async read(fromOffset: number, options: LogReadOptions): Promise<LogReadResult> {
    this.checkOnline();
    const logEndOffset = this.nextOffset;
    const maxOffset = Math.min(options.maxOffset ?? logEndOffset, logEndOffset);
    if (fromOffset > logEndOffset || fromOffset < this.logStartOffsetValue) {
      throw new OffsetOutOfRangeError(
        `${this.name}: offset ${fromOffset} is outside [${this.logStartOffsetValue}, ${logEndOffset}]`,
      );
    }
    const empty: LogReadResult = { records: Buffer.alloc(0), firstBatchBaseOffset: null, firstEntryIncomplete: false, abortedTransactions: null };
    if (fromOffset >= maxOffset) return options.includeAbortedTransactions === true ? { ...empty, abortedTransactions: [] } : empty;
    return this.maybeHandleIOException(async () => {
      const segments = this.segments;
      const firstIndex = this.floorSegmentIndex(fromOffset);
      const bound = await this.positionOf(maxOffset);
      for (let index = firstIndex; index < segments.length; index++) {
        const segment = segments[index]!;
        if (bound !== null && segment.baseOffset > bound.segment.baseOffset) break;
        const maxPosition = bound !== null && bound.segment === segment ? bound.position : segment.sizeBytes;
        const read = await segment.read(fromOffset, { maxBytes: options.maxBytes, maxPosition, minOneMessage: options.minOneMessage === true });
        if (read === null) continue;
        return {
          records: read.records,
          firstBatchBaseOffset: read.records.length > 0 ? read.firstBatchBaseOffset : null,
          firstEntryIncomplete: read.firstEntryIncomplete,
          abortedTransactions: options.includeAbortedTransactions === true ? this.collectAbortedTransactions(fromOffset, maxOffset) : null,
        };
      }
      return options.includeAbortedTransactions === true ? { ...empty, abortedTransactions: [] } : empty;
    });
  }

  /** Segment and file position where the batch holding `offset` starts; null when `offset` is the log end. */
  private async positionOf(offset: number): Promise<{ segment: LogSegment; position: number } | null> {
    if (offset >= this.nextOffset) return null;
    const segment = this.segments[this.floorSegmentIndex(offset)]!;
    if (offset === segment.baseOffset) return { segment, position: 0 };
    const batch = await segment.translateOffset(offset);
    return { segment, position: batch?.position ?? segment.sizeBytes };
  }

  /** Aborted transactions overlapping [startOffset, upperBoundOffset), from the segment holding startOffset on. */
  collectAbortedTransactions(startOffset: number, upperBoundOffset: number): AbortedTxn[] {
    const result: AbortedTxn[] = [];
    for (let index = this.floorSegmentIndex(startOffset); index < this.segments.length; index++) {
      const search = this.segments[index]!.txnIndex.collectAbortedTxns(startOffset, upperBoundOffset);
      result.push(...search.abortedTransactions);
      if (search.isComplete) break;
    }
    return result;
  }

  /**
   * Records an aborted transaction in the segment holding its abort marker
   * (the partition calls this when it appends the marker) and writes it to
   * the .txnindex file at once, as Kafka's channel write does: a killed
   * process keeps it (only a power cut before the next flush can lose it).
   */
  async appendAbortedTransaction(abortedTxn: AbortedTxn): Promise<void> {
    const segment = this.segments[this.floorSegmentIndex(abortedTxn.lastOffset)]!;
    segment.txnIndex.append(abortedTxn);
    await this.maybeHandleIOException(() => segment.txnIndex.writeOut());
  }

  // ---- lookups ----------------------------------------------------------------

  /**
   * ListOffsets: for a real timestamp, the first record with timestamp >=
   * `targetTimestamp` at or after the log start; for EARLIEST / LATEST /
   * MAX_TIMESTAMP / EARLIEST_LOCAL the corresponding offset. Null when no
   * record qualifies.
   */
  async fetchOffsetByTimestamp(targetTimestamp: number): Promise<TimestampAndOffset | null> {
    this.checkOnline();
    if (targetTimestamp === EARLIEST_TIMESTAMP || targetTimestamp === EARLIEST_LOCAL_TIMESTAMP) {
      return this.specialOffset(this.logStartOffsetValue);
    }
    if (targetTimestamp === LATEST_TIMESTAMP) return this.specialOffset(this.nextOffset);
    if (targetTimestamp === MAX_TIMESTAMP) return this.maybeHandleIOException(() => this.maxTimestampRecord());
    if (targetTimestamp < 0) return null;
    return this.maybeHandleIOException(async () => {
      for (const segment of this.segments) {
        if (segment.maxTimestampSoFar < targetTimestamp) continue;
        const found = await segment.findOffsetByTimestamp(targetTimestamp, this.logStartOffsetValue);
        if (found !== null) return found;
      }
      return null;
    });
  }

  private specialOffset(offset: number): TimestampAndOffset {
    return { timestamp: NO_TIMESTAMP, offset, leaderEpoch: this.leaderEpochCache.epochForOffset(offset) ?? -1 };
  }

  private async maxTimestampRecord(): Promise<TimestampAndOffset | null> {
    let best: LogSegment | null = null;
    for (const segment of this.segments) {
      if (best === null || segment.maxTimestampSoFar > best.maxTimestampSoFar) best = segment;
    }
    return best === null ? null : best.findMaxTimestampRecord();
  }

  /** OffsetForLeaderEpoch: the end offset of `leaderEpoch` in this log (see LeaderEpochFileCache.endOffsetFor). */
  endOffsetForEpoch(leaderEpoch: number): EpochEndOffset {
    return this.leaderEpochCache.endOffsetFor(leaderEpoch, this.nextOffset);
  }

  // ---- truncation and log start ----------------------------------------------------

  /**
   * Removes everything at and after `targetOffset` (a batch holding it goes
   * whole). Returns true when anything was removed. Used by followers whose
   * tail diverged from the leader's.
   */
  async truncateTo(targetOffset: number): Promise<boolean> {
    if (targetOffset < 0) throw new RangeError(`cannot truncate ${this.name} to negative offset ${targetOffset}`);
    return this.withLock(async () => {
      this.checkOnline();
      if (targetOffset >= this.nextOffset) {
        // Nothing to remove, but an epoch this replica began as leader without appending to it may still end the
        // cache at the log end: Kafka's UnifiedLog.truncateTo drops it too, or the replica keeps fetching with that
        // epoch and the leader keeps answering with a diverging epoch (a truncation loop found by test/fault/).
        if (this.leaderEpochCache.truncateFromEnd(this.nextOffset)) await this.maybeHandleIOException(() => this.leaderEpochCache.flush());
        return false;
      }
      if (this.segments[0]!.baseOffset > targetOffset) {
        await this.truncateFullyAndStartAtLocked(targetOffset);
        return true;
      }
      this.truncations++;
      await this.maybeHandleIOException(async () => {
        const doomed = this.segments.filter((segment) => segment.baseOffset > targetOffset);
        await this.removeSegments(doomed);
        const active = this.activeSegment;
        await active.truncateTo(targetOffset);
        this.nextOffset = await active.readNextOffset();
      });
      this.afterTruncation();
      if (this.leaderEpochCache.truncateFromEnd(this.nextOffset)) await this.maybeHandleIOException(() => this.leaderEpochCache.flush());
      await this.onRecoveryPointLowered?.();
      return true;
    });
  }

  /** Deletes every segment and restarts the log empty at `newOffset` (a follower far behind, or a replaced replica). */
  async truncateFullyAndStartAt(newOffset: number): Promise<void> {
    await this.withLock(async () => {
      this.checkOnline();
      await this.truncateFullyAndStartAtLocked(newOffset);
    });
  }

  private async truncateFullyAndStartAtLocked(newOffset: number): Promise<void> {
    this.truncations++;
    await this.maybeHandleIOException(async () => {
      const doomed = [...this.segments];
      const segment = await LogSegment.create(this.env.fs, this.dir, newOffset, segmentOptions(this.configValue), this.env.clock.nowMs());
      this.segments.splice(0, this.segments.length, segment);
      this.directoryNeedsSync = true;
      for (const old of doomed) await this.markForDeletion(old);
    });
    this.nextOffset = newOffset;
    this.logStartOffsetValue = newOffset;
    this.afterTruncation();
    if (this.leaderEpochCache.clear()) await this.maybeHandleIOException(() => this.leaderEpochCache.flush());
    await this.onRecoveryPointLowered?.();
  }

  private afterTruncation(): void {
    this.recoveryPointValue = Math.min(this.recoveryPointValue, this.nextOffset);
    this.highWatermarkValue = Math.min(this.highWatermarkValue, this.nextOffset);
    this.logStartOffsetValue = Math.min(this.logStartOffsetValue, this.nextOffset);
  }

  /**
   * DeleteRecords: moves the log start offset up to `offset` (at most the
   * high watermark). Whole segments below it are removed by the next
   * retention pass. Returns the new log start offset.
   */
  async deleteRecordsBefore(offset: number): Promise<number> {
    return this.withLock(async () => {
      this.checkOnline();
      if (offset > this.highWatermarkValue) {
        throw new OffsetOutOfRangeError(
          `${this.name}: cannot move the log start offset to ${offset}, past the high watermark ${this.highWatermarkValue}`,
        );
      }
      if (offset > this.logStartOffsetValue) await this.advanceLogStartOffset(offset);
      return this.logStartOffsetValue;
    });
  }

  private async advanceLogStartOffset(offset: number): Promise<void> {
    this.logStartOffsetValue = offset;
    if (this.recoveryPointValue < offset) this.recoveryPointValue = offset;
    if (this.leaderEpochCache.truncateFromStart(offset)) await this.maybeHandleIOException(() => this.leaderEpochCache.flush());
  }

  // ---- retention ----------------------------------------------------------------

  /**
   * One retention pass (cleanup.policy=delete): drops the oldest segments
   * that are past retention.ms, beyond retention.bytes, or wholly below the
   * log start offset. Never the active segment, never data at or above the
   * high watermark. Returns the number of segments deleted.
   */
  async deleteOldSegments(): Promise<number> {
    return this.withLock(async () => {
      this.checkOnline();
      let deleted = await this.deleteSegmentsWhile(async (segment, next) => next.baseOffset <= this.logStartOffsetValue);
      if (!this.configValue.cleanupPolicy.includes('delete')) return deleted;
      const retentionMs = this.configValue.retentionMs;
      if (retentionMs >= 0) {
        const nowMs = this.env.clock.nowMs();
        deleted += await this.deleteSegmentsWhile(async (segment) => nowMs - (await segment.largestTimestamp()) > retentionMs);
      }
      const retentionBytes = this.configValue.retentionBytes;
      if (retentionBytes >= 0) {
        let excessBytes = this.sizeBytes - retentionBytes;
        deleted += await this.deleteSegmentsWhile(async (segment) => {
          if (excessBytes - segment.sizeBytes < 0) return false;
          excessBytes -= segment.sizeBytes;
          return true;
        });
      }
      return deleted;
    });
  }

  private async deleteSegmentsWhile(predicate: (segment: LogSegment, next: LogSegment) => Promise<boolean>): Promise<number> {
    const doomed: LogSegment[] = [];
    for (let index = 0; index < this.segments.length - 1; index++) {
      const segment = this.segments[index]!;
      const next = this.segments[index + 1]!;
      if (next.baseOffset > this.highWatermarkValue || !(await predicate(segment, next))) break;
      doomed.push(segment);
    }
    if (doomed.length === 0) return 0;
    await this.maybeHandleIOException(() => this.removeSegments(doomed));
    const newStart = this.segments[0]!.baseOffset;
    if (newStart > this.logStartOffsetValue) await this.advanceLogStartOffset(newStart);
    this.logger.info(`${this.name}: deleted ${doomed.length} segment(s); log start offset ${this.logStartOffsetValue}`);
    return doomed.length;
  }

  /** Takes segments out of the log and schedules their files' deletion. */
  private async removeSegments(doomed: readonly LogSegment[]): Promise<void> {
    for (const segment of doomed) {
      const index = this.segments.indexOf(segment);
      if (index >= 0) this.segments.splice(index, 1);
      await this.markForDeletion(segment);
    }
  }

  /** Renames the segment's files to `.deleted` and removes them after file.delete.delay.ms. */
  private async markForDeletion(segment: LogSegment): Promise<void> {
    await segment.markDeleted();
    // Long.MAX_VALUE means never while running; the next start removes `.deleted` files.
    if (!Number.isFinite(this.configValue.fileDeleteDelayMs)) return;
    const timer = this.env.timers.schedule(this.configValue.fileDeleteDelayMs, () => {
      this.deleteTimers.delete(timer);
      const deletion = segment
        .deleteFiles()
        .catch((error: unknown) => this.logger.warn(`${this.name}: could not delete ${segment}: ${String(error)}`))
        .finally(() => this.pendingDeletes.delete(deletion));
      this.pendingDeletes.add(deletion);
    });
    this.deleteTimers.add(timer);
  }

  /** Resolves when file deletions that have started are done (tests and shutdown). */
  async awaitPendingDeletes(): Promise<void> {
    await Promise.all([...this.pendingDeletes]);
  }

  // ---- compaction ----------------------------------------------------------------------

  /**
   * Swaps `cleaned` (files named `.cleaned`, flushed) in for `old`, the
   * contiguous non-active segments it was cleaned from (Kafka's
   * replaceSegments). Crash order: cleaned -> `.swap` (the commit point,
   * made durable), old segments -> `.deleted`, `.swap` -> final names, so
   * recovery (log-loader.ts) either finds no swap and the old segments
   * whole, or a swap it completes. Returns false, changing nothing, when the
   * log moved under the cleaner (closed, truncated, one of `old` removed or
   * become the active segment); the caller then deletes `cleaned`.
   */
  async replaceSegments(cleaned: LogSegment, old: readonly LogSegment[], options: { truncationCount: number }): Promise<boolean> {
    return this.withLock(async () => {
      if (this.closed || this.offlineError !== null || options.truncationCount !== this.truncations) return false;
      const first = this.segments.indexOf(old[0]!);
      const unchanged = first >= 0 && old.every((segment, index) => this.segments[first + index] === segment);
      if (!unchanged || first + old.length >= this.segments.length) return false;
      await this.maybeHandleIOException(async () => {
        await cleaned.changeFileSuffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
        await this.env.fs.syncDir(this.dir);
        this.segments = [...this.segments.slice(0, first), cleaned, ...this.segments.slice(first + old.length)];
        for (const segment of old) await this.markForDeletion(segment);
        await cleaned.changeFileSuffixes(SWAP_FILE_SUFFIX, '');
        await this.env.fs.syncDir(this.dir);
      });
      return true;
    });
  }

  // ---- durability ----------------------------------------------------------------------

  /**
   * fsyncs every segment holding offsets in [recoveryPoint, upToOffset),
   * the directory if segments were created, then raises the recovery point.
   * Flushes run one at a time and outside the append lock.
   */
  async flush(upToOffset = this.nextOffset): Promise<void> {
    const run = this.flushing.then(() => this.flushNow(upToOffset));
    this.flushing = run.catch(() => {});
    return run;
  }

  private async flushNow(upToOffset: number): Promise<void> {
    this.checkOnline();
    const target = Math.min(upToOffset, this.nextOffset);
    if (target <= this.recoveryPointValue) return;
    const truncations = this.truncations;
    const start = this.recoveryPointValue;
    const segments = this.segments.filter((segment, index) => {
      const next = this.segments[index + 1];
      return segment.baseOffset < target && (next === undefined || next.baseOffset > start);
    });
    const startMs = this.env.clock.monotonicMs();
    await this.maybeHandleIOException(async () => {
      for (const segment of segments) if (!segment.isClosed) await segment.flush();
      if (this.directoryNeedsSync) {
        this.directoryNeedsSync = false;
        await this.env.fs.syncDir(this.dir);
      }
    });
    this.env.flushStats?.logFlushed(this.env.clock.monotonicMs() - startMs);
    this.lastFlushMs = this.env.clock.nowMs();
    if (truncations === this.truncations && target > this.recoveryPointValue) this.recoveryPointValue = target;
  }

  private flushInBackground(upToOffset: number): void {
    this.flush(upToOffset).catch((error: unknown) => {
      this.logger.error(`${this.name}: background flush failed: ${String(error)}`);
    });
  }

  /** flush.ms: schedules a flush that far after the last one, once data is unflushed. */
  private armFlushTimer(): void {
    const flushMs = this.configValue.flushMs;
    if (!Number.isFinite(flushMs) || this.flushTimer !== null) return;
    const delayMs = Math.max(0, this.lastFlushMs + flushMs - this.env.clock.nowMs());
    this.flushTimer = this.env.timers.schedule(delayMs, () => {
      this.flushTimer = null;
      if (!this.closed) this.flushInBackground(this.nextOffset);
    });
  }

  // ---- life cycle -------------------------------------------------------------------------

  /**
   * Clean close: the active segment records its final time-index entry,
   * everything is flushed, index files are trimmed and handles released.
   * Pending `.deleted` files stay for the next start to remove.
   */
  async close(): Promise<void> {
    await this.withLock(async () => {
      if (this.closed) return;
      this.cancelTimers();
      if (this.offlineError === null) {
        this.activeSegment.onBecomeInactiveSegment();
        await this.flush(this.nextOffset);
        await this.flushAllIndexes();
      }
      this.closed = true;
      for (const segment of this.segments) {
        if (this.offlineError === null) await this.maybeHandleIOException(() => segment.close());
        else await segment.closeHandles();
      }
      await this.awaitPendingDeletes();
    });
  }

  /** Drops handles without flushing (the process is going away uncleanly, or the log is offline). */
  async closeUncleanly(): Promise<void> {
    this.cancelTimers();
    this.closed = true;
    for (const segment of this.segments) await segment.closeHandles();
  }

  private async flushAllIndexes(): Promise<void> {
    await this.maybeHandleIOException(async () => {
      for (const segment of this.segments) {
        await segment.offsetIndex.flush();
        await segment.timeIndex.flush();
        await segment.txnIndex.flush();
      }
    });
  }

  private cancelTimers(): void {
    this.flushTimer?.cancel();
    this.flushTimer = null;
    for (const timer of this.deleteTimers) timer.cancel();
    this.deleteTimers.clear();
  }

  get name(): string {
    return `${this.topicPartition.topic}-${this.topicPartition.partition}`;
  }

  // ---- helpers -------------------------------------------------------------------------

  /** Index of the segment with the greatest base offset <= offset (0 when all are greater). */
  private floorSegmentIndex(offset: number): number {
    let low = 0;
    let high = this.segments.length - 1;
    let found = 0;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (this.segments[middle]!.baseOffset <= offset) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found;
  }

  private checkOnline(): void {
    if (this.offlineError !== null) throw this.offlineError;
    if (this.closed) throw new KafkaStorageError(`${this.name} is closed`);
  }

  /**
   * Runs file I/O of this log or of what lives in its directory (producer
   * snapshots, the leader-epoch checkpoint): an I/O error takes the log
   * offline, is reported to the owner (which takes the whole log directory
   * offline) and surfaces as KafkaStorageError (Kafka's maybeHandleIOException).
   */
  async maybeHandleIOException<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw this.offlineOnIoError(error);
    }
  }

  /** Its log directory went offline: every later call fails with KafkaStorageError. */
  markOffline(cause: Error): void {
    if (this.offlineError !== null) return;
    this.offlineError = new KafkaStorageError(`${this.name} is offline: ${cause.message}`, { cause });
    this.cancelTimers();
  }

  /** The error to throw for `error`: an I/O error takes the log offline (KafkaStorageError); others pass. */
  private offlineOnIoError(error: unknown): unknown {
    if (!isIoError(error)) return error;
    if (this.offlineError === null) {
      this.offlineError = new KafkaStorageError(`${this.name} is offline after a disk error: ${error.message}`, { cause: error });
      this.cancelTimers();
      this.logger.error(this.offlineError.message);
      this.onIoError?.(error);
    }
    return this.offlineError;
  }

  private withLock<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.lock.then(operation);
    this.lock = run.catch(() => {});
    return run;
  }
}

export function segmentOptions(config: LogConfig): { indexIntervalBytes: number; segmentIndexBytes: number } {
  return { indexIntervalBytes: config.indexIntervalBytes, segmentIndexBytes: config.segmentIndexBytes };
}

/**
 * Walks the batches of an append, checking each as Kafka's LogValidator does
 * (framing, magic, CRC, counts; max.message.bytes) unless `checkCrc` is off
 * (then only the framing), and collects what the segment needs from each
 * header. Throws InvalidRecordError or RecordTooLargeError; the buffer is not
 * modified.
 */
export function analyzeAndValidate(
  records: Buffer,
  options: { origin: AppendOrigin; maxMessageBytes: number; checkCrc: boolean },
): AnalyzedBatch[] {
  const batches: AnalyzedBatch[] = [];
  let position = 0;
  while (position < records.length) {
    const sizeBytes = batchSizeAt(records, position);
    if (sizeBytes !== null && sizeBytes > options.maxMessageBytes && options.checkCrc) {
      throw new RecordTooLargeError(`batch of ${sizeBytes} bytes exceeds max.message.bytes ${options.maxMessageBytes}`);
    }
    const error = options.checkCrc ? validateBatch(records, position, { origin: options.origin }) : checkFraming(records, position);
    if (error !== null) throw new InvalidRecordError(ErrorCode[error.code], error.message);
    // Only the fields the log needs, read in place (no header object per batch).
    const baseOffset = readInt64(records, position + BATCH_FIELD.baseOffset);
    const lastOffsetDelta = records.readInt32BE(position + BATCH_FIELD.lastOffsetDelta);
    const batchBytes = sizeBytes!;
    batches.push({
      position,
      baseOffset,
      lastOffset: baseOffset + lastOffsetDelta,
      lastOffsetDelta,
      sizeBytes: batchBytes,
      maxTimestamp: readInt64(records, position + BATCH_FIELD.maxTimestamp),
      partitionLeaderEpoch: records.readInt32BE(position + BATCH_FIELD.partitionLeaderEpoch),
      recordCount: records.readInt32BE(position + BATCH_FIELD.recordCount),
    });
    position += batchBytes;
  }
  if (batches.length === 0) throw new InvalidRecordError(ErrorCode.CORRUPT_MESSAGE, 'an append needs at least one record batch');
  return batches;
}

/** Size and magic only: what must hold for the log to stay walkable. */
function checkFraming(records: Buffer, position: number): { code: 'CORRUPT_MESSAGE'; message: string } | null {
  const sizeBytes = batchSizeAt(records, position);
  if (sizeBytes === null || sizeBytes < BATCH_HEADER_BYTES || position + sizeBytes > records.length) {
    return { code: 'CORRUPT_MESSAGE', message: `record batch at byte ${position} is truncated or has an impossible size` };
  }
  if (records.readInt8(position + BATCH_FIELD.magic) !== MAGIC_V2) {
    return { code: 'CORRUPT_MESSAGE', message: `record batch at byte ${position} is not magic ${MAGIC_V2}` };
  }
  return null;
}

function summarize(batches: readonly AnalyzedBatch[], logAppendTimeMs: number): Omit<LogAppendInfo, 'logStartOffset' | 'validBytes'> {
  let maxTimestamp = NO_TIMESTAMP;
  let offsetOfMaxTimestamp = batches[0]!.lastOffset;
  let recordCount = 0;
  for (const batch of batches) {
    if (batch.maxTimestamp > maxTimestamp) {
      maxTimestamp = batch.maxTimestamp;
      offsetOfMaxTimestamp = batch.lastOffset;
    }
    recordCount += batch.recordCount;
  }
  return {
    firstOffset: batches[0]!.baseOffset,
    lastOffset: batches[batches.length - 1]!.lastOffset,
    maxTimestamp,
    offsetOfMaxTimestamp,
    logAppendTimeMs,
    batchCount: batches.length,
    recordCount,
  };
}
