/**
 * LogSegment: one `.log` file of record batches and its three indexes
 * (`.index`, `.timeindex`, `.txnindex`), all named by the segment's base
 * offset (file-names.ts).
 *
 * Format: the `.log` file is record batches v2 back to back, exactly as they
 * travel on the wire (DESIGN.md §3.3), nothing else: no file header, no
 * padding. Every offset in the segment is >= baseOffset and < baseOffset +
 * 2^31 (index entries store 32-bit relative offsets).
 *
 * Search rule: an offset is found by taking the greatest offset-index entry
 * <= target and scanning batch headers forward to the first batch whose
 * lastOffset >= target. A timestamp is found through the time index, then
 * the same forward scan, then the records of the one batch that holds it.
 *
 * Indexing: after each batch, if more than index.interval.bytes were
 * appended since the last entry, an offset-index entry (batch lastOffset ->
 * batch position) and a time-index entry (max timestamp so far -> its batch's
 * lastOffset) are added, exactly as Kafka does, so the files match Kafka's
 * byte for byte for the same batches.
 *
 * Crash policy: `sizeBytes` counts only bytes whose write completed; readers
 * never see more. `flush` fsyncs the .log before the indexes. `recover`
 * rescans the whole .log, validating size, CRC and offset order of every
 * batch, truncates the file at the first bad one and rebuilds both indexes.
 * `open` trusts nothing: the caller runs `sanityCheck` or `recover`.
 */
import { posix } from 'node:path';
import type { FileHandle, FileSystem } from '../io/fs.js';
import { validateBatch, type BatchHeader } from '../protocol/records/batch.js';
import { decodeRecords } from '../protocol/records/records.js';
import { BatchScanner, type ScanOptions, type ScanStop } from './batch-scanner.js';
import { CorruptIndexError } from './errors.js';
import {
  CLEANED_FILE_SUFFIX,
  DELETED_FILE_SUFFIX,
  INDEX_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
  segmentFilePath,
} from './file-names.js';
import { OffsetIndex } from './offset-index.js';
import { NO_TIMESTAMP, TimeIndex, type TimestampOffset } from './time-index.js';
import { TransactionIndex } from './transaction-index.js';

const INT32_MAX = 0x7fff_ffff;
/** Batches of the active segment remembered for index-free tail lookups (consumers and HW bounds read the tail). */
const RECENT_BATCHES_MAX = 256;

/**
 * The last batches appended to the active segment, as a ring of (baseOffset,
 * lastOffset, position, size): a fetch at the tail or a high-watermark bound
 * resolves without reading batch headers from the file.
 */
class RecentBatches {
  private readonly values = new Float64Array(RECENT_BATCHES_MAX * 4);
  private start = 0;
  private count = 0;

  clear(): void {
    this.start = 0;
    this.count = 0;
  }

  add(baseOffset: number, lastOffset: number, position: number, sizeBytes: number): void {
    const slot = ((this.start + this.count) % RECENT_BATCHES_MAX) * 4;
    this.values[slot] = baseOffset;
    this.values[slot + 1] = lastOffset;
    this.values[slot + 2] = position;
    this.values[slot + 3] = sizeBytes;
    if (this.count < RECENT_BATCHES_MAX) this.count++;
    else this.start = (this.start + 1) % RECENT_BATCHES_MAX;
  }

  /** The remembered batch holding the first offset >= `offset`, or null when the ring cannot tell. */
  find(offset: number): BatchPosition | null {
    if (this.count === 0 || offset < this.field(0, 0) || offset > this.field(this.count - 1, 1)) return null;
    let low = 0;
    let high = this.count - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.field(middle, 1) >= offset) high = middle;
      else low = middle + 1;
    }
    return {
      baseOffset: this.field(low, 0),
      lastOffset: this.field(low, 1),
      position: this.field(low, 2),
      sizeBytes: this.field(low, 3),
    };
  }

  private field(logicalIndex: number, field: number): number {
    return this.values[((this.start + logicalIndex) % RECENT_BATCHES_MAX) * 4 + field]!;
  }
}

/** What the segment needs to know of each appended batch (from its header). */
export interface AppendedBatch {
  baseOffset: number;
  sizeBytes: number;
  lastOffset: number;
  maxTimestamp: number;
}

/** A batch located in the segment file. */
export interface BatchPosition {
  baseOffset: number;
  lastOffset: number;
  position: number;
  sizeBytes: number;
}

export interface SegmentReadResult {
  /** Bytes read from the file: whole batches, except possibly a partial last one (as Kafka returns). */
  records: Buffer;
  /** Position of the first batch in the segment file. */
  position: number;
  /** Base offset of the first batch returned. */
  firstBatchBaseOffset: number;
  /** The size limit cut the first batch (maxBytes below its size without minOneMessage). */
  firstEntryIncomplete: boolean;
}

export interface RecoveryResult {
  truncatedBytes: number;
  stop: ScanStop | { kind: 'invalid'; position: number; reason: string };
}

export interface TimestampAndOffset {
  timestamp: number;
  offset: number;
  leaderEpoch: number;
}

export interface SegmentOptions {
  indexIntervalBytes: number;
  segmentIndexBytes: number;
}

export class LogSegment {
  /** Bytes of the .log file whose writes completed. */
  sizeBytes: number;
  maxTimestampSoFar = NO_TIMESTAMP;
  /** Last offset of the first batch that reached maxTimestampSoFar. */
  offsetOfMaxTimestampSoFar: number;
  private bytesSinceLastIndexEntry = 0;
  /** maxTimestamp of the first batch (segment.ms counts from it), null while unknown. */
  rollingBasedTimestamp: number | null = null;
  private closed = false;
  /** Tail lookups; null once the segment is no longer active. */
  private recentBatches: RecentBatches | null = new RecentBatches();

  private constructor(
    private readonly fs: FileSystem,
    private dir: string,
    readonly baseOffset: number,
    private log: FileHandle,
    private logPath: string,
    sizeBytes: number,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    readonly txnIndex: TransactionIndex,
    private options: SegmentOptions,
    /** When the segment was created or opened (segment.ms fallback when batches carry no timestamp). */
    readonly createdMs: number,
  ) {
    this.sizeBytes = sizeBytes;
    this.offsetOfMaxTimestampSoFar = baseOffset;
  }

  /** Creates an empty segment, replacing stale files of the same name (left by a crash or a truncation). */
  static async create(fs: FileSystem, dir: string, baseOffset: number, options: SegmentOptions, nowMs: number): Promise<LogSegment> {
    for (const suffix of [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX]) {
      const path = segmentFilePath(dir, baseOffset, suffix);
      if ((await fs.stat(path)) !== null) await fs.unlink(path);
    }
    return LogSegment.openFiles(fs, dir, baseOffset, options, nowMs);
  }

  /**
   * Creates the empty destination of a cleaning pass: every file named with
   * the `.cleaned` suffix, so a crash before the swap leaves only files that
   * recovery deletes.
   */
  static async createCleaned(fs: FileSystem, dir: string, baseOffset: number, options: SegmentOptions, nowMs: number): Promise<LogSegment> {
    for (const suffix of [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX]) {
      const path = segmentFilePath(dir, baseOffset, suffix) + CLEANED_FILE_SUFFIX;
      if ((await fs.stat(path)) !== null) await fs.unlink(path);
    }
    return LogSegment.openFiles(fs, dir, baseOffset, options, nowMs, CLEANED_FILE_SUFFIX);
  }

  /**
   * Opens an existing segment: the .log as found, indexes loaded into memory
   * unchecked. Returns the segment and whether its indexes must be rebuilt
   * (missing or malformed file).
   */
  static async open(
    fs: FileSystem,
    dir: string,
    baseOffset: number,
    options: SegmentOptions,
    nowMs: number,
  ): Promise<{ segment: LogSegment; indexesNeedRebuild: boolean }> {
    const segment = await LogSegment.openFiles(fs, dir, baseOffset, options, nowMs);
    let indexesNeedRebuild = false;
    for (const index of [segment.offsetIndex, segment.timeIndex, segment.txnIndex]) {
      try {
        const found = await index.load();
        if (!found && index !== segment.txnIndex) indexesNeedRebuild = true;
      } catch (error) {
        if (!(error instanceof CorruptIndexError)) throw error;
        index.reset();
        indexesNeedRebuild = true;
      }
    }
    if (!indexesNeedRebuild) segment.restoreMaxTimestampFromIndex();
    return { segment, indexesNeedRebuild };
  }

  private static async openFiles(
    fs: FileSystem,
    dir: string,
    baseOffset: number,
    options: SegmentOptions,
    nowMs: number,
    fileSuffix = '',
  ): Promise<LogSegment> {
    const logPath = segmentFilePath(dir, baseOffset, LOG_FILE_SUFFIX) + fileSuffix;
    const log = await fs.open(logPath, 'readWrite');
    const sizeBytes = await log.size();
    const indexPath = (suffix: string) => segmentFilePath(dir, baseOffset, suffix) + fileSuffix;
    const offsetIndex = new OffsetIndex(fs, indexPath(INDEX_FILE_SUFFIX), baseOffset, options.segmentIndexBytes);
    const timeIndex = new TimeIndex(fs, indexPath(TIME_INDEX_FILE_SUFFIX), baseOffset, options.segmentIndexBytes);
    const txnIndex = new TransactionIndex(fs, indexPath(TXN_INDEX_FILE_SUFFIX), baseOffset);
    return new LogSegment(fs, dir, baseOffset, log, logPath, sizeBytes, offsetIndex, timeIndex, txnIndex, options, nowMs);
  }

  get path(): string {
    return this.logPath;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  updateOptions(options: SegmentOptions): void {
    this.options = options;
  }

  /** True when `offset` can be stored in this segment (relative offset fits 32 bits). */
  canConvertToRelativeOffset(offset: number): boolean {
    const relative = offset - this.baseOffset;
    return relative >= 0 && relative <= INT32_MAX;
  }

  // ---- append --------------------------------------------------------------

  /**
   * Writes `records` (whole batches, offsets already assigned) at the end of
   * the file in one write, then indexes them in memory. On a write error the
   * file is cut back to its previous size (best effort) and the error is
   * rethrown; the segment's state is unchanged.
   */
  async append(records: Buffer, batches: readonly AppendedBatch[]): Promise<void> {
    const startPosition = this.sizeBytes;
    try {
      await this.log.write([records], startPosition);
    } catch (error) {
      // Cut back a short write and make the cut durable, so the failed batches cannot reappear after a crash.
      await this.log
        .truncate(startPosition)
        .then(() => this.log.sync())
        .catch(() => {});
      throw error;
    }
    let position = startPosition;
    for (const batch of batches) {
      this.indexBatch(batch, position);
      this.recentBatches?.add(batch.baseOffset, batch.lastOffset, position, batch.sizeBytes);
      position += batch.sizeBytes;
    }
    this.sizeBytes = position;
  }

  /** Updates max timestamp and sparse indexes for the batch written at `position` (Kafka's rule). */
  private indexBatch(batch: AppendedBatch, position: number): void {
    if (this.rollingBasedTimestamp === null) this.rollingBasedTimestamp = batch.maxTimestamp;
    if (batch.maxTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = batch.maxTimestamp;
      this.offsetOfMaxTimestampSoFar = batch.lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.options.indexIntervalBytes) {
      // A full index only costs longer scans; the log rolls before appending to a full one.
      if (!this.offsetIndex.isFull) this.offsetIndex.append(batch.lastOffset, position);
      if (!this.timeIndex.isFull) this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += batch.sizeBytes;
  }

  // ---- lookup --------------------------------------------------------------

  /** The first batch at or after `startingPosition` whose lastOffset >= `offset`, or null if none. */
  async translateOffset(offset: number, startingPosition = 0): Promise<BatchPosition | null> {
    const recent = this.recentBatches?.find(offset) ?? null;
    if (recent !== null && recent.position >= startingPosition) return recent;
    const indexed = this.offsetIndex.lookup(offset);
    const scanner = new BatchScanner(this.log, {
      startPosition: Math.max(indexed.position, startingPosition),
      endPosition: this.sizeBytes,
      mode: 'headers',
    });
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) {
      if (batch.header.lastOffset >= offset) {
        return {
          baseOffset: batch.header.baseOffset,
          lastOffset: batch.header.lastOffset,
          position: batch.position,
          sizeBytes: batch.header.sizeBytes,
        };
      }
    }
    return null;
  }

  /**
   * Reads from the batch holding `startOffset`: at most `maxBytes` (or the
   * whole first batch with `minOneMessage`), never at or past `maxPosition`.
   * Null when the segment holds nothing at or after `startOffset`.
   */
  async read(
    startOffset: number,
    options: { maxBytes: number; maxPosition: number; minOneMessage: boolean },
  ): Promise<SegmentReadResult | null> {
    const start = await this.translateOffset(startOffset);
    if (start === null) return null;
    const limitBytes = options.minOneMessage ? Math.max(options.maxBytes, start.sizeBytes) : options.maxBytes;
    const endPosition = Math.min(options.maxPosition, this.sizeBytes);
    const length = Math.max(0, Math.min(endPosition - start.position, limitBytes));
    const records = Buffer.allocUnsafe(length);
    const read = length === 0 ? 0 : await this.log.read(records, start.position);
    return {
      records: records.subarray(0, read),
      position: start.position,
      firstBatchBaseOffset: start.baseOffset,
      firstEntryIncomplete: limitBytes < start.sizeBytes,
    };
  }

  /** Reads `length` bytes at `position` (for callers that already know a range). */
  async readBytes(position: number, length: number): Promise<Buffer> {
    const bytes = Buffer.allocUnsafe(Math.max(0, Math.min(length, this.sizeBytes - position)));
    const read = await this.log.read(bytes, position);
    return bytes.subarray(0, read);
  }

  /** Offset after the last batch (the segment's log end offset); baseOffset when empty. */
  async readNextOffset(): Promise<number> {
    const last = await this.lastBatch();
    return last === null ? this.baseOffset : last.lastOffset + 1;
  }

  /** The header of the last batch, found by scanning from the last offset-index entry. */
  async lastBatch(): Promise<BatchHeader | null> {
    const scanner = new BatchScanner(this.log, {
      startPosition: this.offsetIndex.lastEntry.position,
      endPosition: this.sizeBytes,
      mode: 'headers',
    });
    let last: BatchHeader | null = null;
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) last = batch.header;
    return last;
  }

  /** Header of the first batch, or null when empty. */
  async firstBatch(): Promise<BatchHeader | null> {
    const scanner = new BatchScanner(this.log, { startPosition: 0, endPosition: this.sizeBytes, mode: 'headers' });
    return (await scanner.next())?.header ?? null;
  }

  /**
   * The first record with timestamp >= `timestampMs` and offset >=
   * `startingOffset`, or null when every record of the segment is older.
   */
  async findOffsetByTimestamp(timestampMs: number, startingOffset: number): Promise<TimestampAndOffset | null> {
    const indexed = this.timeIndex.lookup(timestampMs);
    const position = this.offsetIndex.lookup(Math.max(indexed.offset, startingOffset)).position;
    const scanner = new BatchScanner(this.log, { startPosition: position, endPosition: this.sizeBytes, mode: 'headers' });
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) {
      const header = batch.header;
      if (header.maxTimestamp < timestampMs || header.lastOffset < startingOffset) continue;
      const bytes = await this.readBytes(batch.position, header.sizeBytes);
      const found = firstRecordAtOrAfter(bytes, timestampMs, startingOffset);
      if (found !== null) return found;
    }
    return null;
  }

  /** The record holding this segment's max timestamp (ListOffsets MAX_TIMESTAMP), or null when none. */
  async findMaxTimestampRecord(): Promise<TimestampAndOffset | null> {
    if (this.maxTimestampSoFar === NO_TIMESTAMP) return null;
    const batch = await this.translateOffset(this.offsetOfMaxTimestampSoFar);
    if (batch === null) return null;
    const bytes = await this.readBytes(batch.position, batch.sizeBytes);
    return firstRecordAtOrAfter(bytes, this.maxTimestampSoFar, 0);
  }

  /** Newest timestamp in the segment, or the file's mtime when no batch carries one (retention.ms). */
  async largestTimestamp(): Promise<number> {
    if (this.maxTimestampSoFar >= 0) return this.maxTimestampSoFar;
    return (await this.fs.stat(this.logPath))?.mtimeMs ?? 0;
  }

  // ---- truncation and recovery --------------------------------------------

  /**
   * Removes every batch whose lastOffset >= `offset` (a batch holding
   * `offset` goes whole). Returns the bytes removed. Index files are trimmed
   * at once so they never point past the log.
   */
  async truncateTo(offset: number): Promise<number> {
    const from = await this.translateOffset(offset);
    if (from === null) return 0;
    this.offsetIndex.truncateTo(offset);
    this.timeIndex.truncateTo(offset);
    this.txnIndex.truncateTo(offset);
    await Promise.all([this.offsetIndex.writeOut(), this.timeIndex.writeOut(), this.txnIndex.writeOut()]);
    const truncatedBytes = this.sizeBytes - from.position;
    this.recentBatches?.clear();
    await this.log.truncate(from.position);
    this.sizeBytes = from.position;
    this.bytesSinceLastIndexEntry = 0;
    if (this.sizeBytes === 0) this.rollingBasedTimestamp = null;
    await this.recomputeMaxTimestamp();
    return truncatedBytes;
  }

  /**
   * Rescans the whole file: validates each batch (size, CRC, offsets
   * increasing from the segment's base and below `nextSegmentBaseOffset`),
   * rebuilds the offset and time indexes, and truncates at the first invalid
   * batch. `onBatch` sees every valid batch (leader epochs, producer state).
   */
  async recover(options: {
    nextSegmentBaseOffset: number | null;
    onBatch?: (header: BatchHeader) => void;
  }): Promise<RecoveryResult> {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    this.maxTimestampSoFar = NO_TIMESTAMP;
    this.offsetOfMaxTimestampSoFar = this.baseOffset;
    this.bytesSinceLastIndexEntry = 0;
    this.rollingBasedTimestamp = null;
    this.recentBatches?.clear();
    const scanner = new BatchScanner(this.log, { startPosition: 0, endPosition: this.sizeBytes, mode: 'whole' });
    let previousLastOffset = this.baseOffset - 1;
    let stop: RecoveryResult['stop'] | null = null;
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) {
      const reason = this.invalidReason(batch.buffer, batch.offsetInBuffer, batch.header, previousLastOffset, options.nextSegmentBaseOffset);
      if (reason !== null) {
        stop = { kind: 'invalid', position: batch.position, reason };
        break;
      }
      this.indexBatch(batch.header, batch.position);
      options.onBatch?.(batch.header);
      previousLastOffset = batch.header.lastOffset;
    }
    stop ??= scanner.stop ?? { kind: 'end' };
    const validBytes = stop.kind === 'end' ? this.sizeBytes : stop.position;
    const truncatedBytes = this.sizeBytes - validBytes;
    if (truncatedBytes > 0) await this.log.truncate(validBytes);
    this.sizeBytes = validBytes;
    this.txnIndex.truncateTo(previousLastOffset + 1);
    // Replace the untrusted files now (no fsync: a crash before the next flush just recovers again).
    await Promise.all([this.offsetIndex.writeOut(), this.timeIndex.writeOut(), this.txnIndex.writeOut()]);
    return { truncatedBytes, stop };
  }

  private invalidReason(
    buffer: Buffer,
    offsetInBuffer: number,
    header: BatchHeader,
    previousLastOffset: number,
    nextSegmentBaseOffset: number | null,
  ): string | null {
    const error = validateBatch(buffer.subarray(offsetInBuffer, offsetInBuffer + header.sizeBytes), 0, { origin: 'log' });
    if (error !== null) return error.message;
    if (header.baseOffset <= previousLastOffset) return `batch base offset ${header.baseOffset} does not follow ${previousLastOffset}`;
    if (!this.canConvertToRelativeOffset(header.lastOffset)) return `batch last offset ${header.lastOffset} outside the segment`;
    if (nextSegmentBaseOffset !== null && header.lastOffset >= nextSegmentBaseOffset) {
      return `batch last offset ${header.lastOffset} reaches the next segment at ${nextSegmentBaseOffset}`;
    }
    return null;
  }

  /**
   * Verifies loaded indexes against the log without trusting them: ordering,
   * positions inside the file, the last offset-index entry naming the batch
   * it points at, time-index and txn-index offsets below the segment end
   * (`nextOffset`, or read from the file when null). Throws
   * CorruptIndexError; returns the segment's next offset.
   */
  async sanityCheck(nextOffset: number | null): Promise<number> {
    this.offsetIndex.sanityCheck(this.sizeBytes);
    if (this.offsetIndex.entries > 0) {
      const last = this.offsetIndex.lastEntry;
      const scanner = new BatchScanner(this.log, { startPosition: last.position, endPosition: this.sizeBytes, mode: 'headers' });
      const batch = await scanner.next();
      if (batch === null || batch.header.lastOffset !== last.offset) {
        throw new CorruptIndexError(`${this.offsetIndex.path}: last entry (${last.offset}, ${last.position}) does not name a batch`);
      }
    }
    const end = nextOffset ?? (await this.readNextOffset());
    this.timeIndex.sanityCheck(end);
    this.txnIndex.sanityCheck(end);
    return end;
  }

  /** Restores the max timestamp from the time index and the batches after its last entry. */
  async recomputeMaxTimestamp(): Promise<void> {
    this.restoreMaxTimestampFromIndex();
    const from = this.offsetIndex.lookup(this.offsetOfMaxTimestampSoFar).position;
    const scanner = new BatchScanner(this.log, { startPosition: from, endPosition: this.sizeBytes, mode: 'headers' });
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) {
      if (batch.header.maxTimestamp > this.maxTimestampSoFar) {
        this.maxTimestampSoFar = batch.header.maxTimestamp;
        this.offsetOfMaxTimestampSoFar = batch.header.lastOffset;
      }
    }
  }

  private restoreMaxTimestampFromIndex(): void {
    const last: TimestampOffset = this.timeIndex.lastEntry;
    this.maxTimestampSoFar = last.timestamp;
    this.offsetOfMaxTimestampSoFar = last.offset;
  }

  /** Loads the first batch's timestamp, which segment.ms counts from. */
  async loadRollingBasedTimestamp(): Promise<void> {
    if (this.rollingBasedTimestamp !== null || this.sizeBytes === 0) return;
    this.rollingBasedTimestamp = (await this.firstBatch())?.maxTimestamp ?? null;
  }

  // ---- life cycle -----------------------------------------------------------

  /** Called when a newer segment takes over: records the final max-timestamp entry, as Kafka does. */
  onBecomeInactiveSegment(): void {
    this.recentBatches = null;
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, { skipFullCheck: true });
  }

  /** fsyncs the .log, then the indexes. */
  async flush(): Promise<void> {
    await this.log.sync();
    await this.offsetIndex.flush();
    await this.timeIndex.flush();
    await this.txnIndex.flush();
  }

  /** Writes indexes out (trimmed) and releases every handle. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.offsetIndex.close();
    await this.timeIndex.close();
    await this.txnIndex.close();
    await this.log.close();
  }

  /** Releases handles without writing anything (after a disk error or a simulated crash). */
  async closeHandles(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const index of [this.offsetIndex, this.timeIndex, this.txnIndex]) await index.closeHandle().catch(() => {});
    await this.log.close().catch(() => {});
  }

  /**
   * Moves every file of the segment from `oldSuffix` to `newSuffix` (either
   * may be ''): the indexes first, the .log last, so the .log's name tells
   * recovery how far a swap got (log-loader.ts).
   */
  async changeFileSuffixes(oldSuffix: string, newSuffix: string): Promise<void> {
    const renamed = (path: string) => path.slice(0, path.length - oldSuffix.length) + newSuffix;
    for (const index of [this.offsetIndex, this.timeIndex, this.txnIndex]) {
      if (!index.path.endsWith(oldSuffix)) throw new Error(`${index.path} does not end in '${oldSuffix}'`);
      await index.renameTo(renamed(index.path));
    }
    if (!this.logPath.endsWith(oldSuffix)) throw new Error(`${this.logPath} does not end in '${oldSuffix}'`);
    await this.fs.rename(this.logPath, renamed(this.logPath));
    this.logPath = renamed(this.logPath);
  }

  /** A scanner over this segment's batches (the cleaner reads whole batches through it). */
  scan(options: Omit<ScanOptions, 'endPosition'>): BatchScanner {
    return new BatchScanner(this.log, { ...options, endPosition: this.sizeBytes });
  }

  /** Renames every file of the segment by appending `.deleted`; the .log handle stays open for in-flight reads. */
  async markDeleted(): Promise<void> {
    await this.offsetIndex.renameTo(this.offsetIndex.path + DELETED_FILE_SUFFIX);
    await this.timeIndex.renameTo(this.timeIndex.path + DELETED_FILE_SUFFIX);
    await this.txnIndex.renameTo(this.txnIndex.path + DELETED_FILE_SUFFIX);
    await this.fs.rename(this.logPath, this.logPath + DELETED_FILE_SUFFIX);
    this.logPath += DELETED_FILE_SUFFIX;
  }

  /** Closes and removes every file of the segment. */
  async deleteFiles(): Promise<void> {
    await this.closeHandles();
    await this.offsetIndex.deleteIfExists();
    await this.timeIndex.deleteIfExists();
    await this.txnIndex.deleteIfExists();
    if ((await this.fs.stat(this.logPath)) !== null) await this.fs.unlink(this.logPath);
  }

  get directory(): string {
    return this.dir;
  }

  toString(): string {
    return `LogSegment(${posix.basename(this.logPath)}, size=${this.sizeBytes})`;
  }
}

/**
 * The first record of a batch with timestamp >= `timestampMs` and offset >=
 * `startingOffset`, found by decoding its records (decompressing if needed;
 * under LogAppendTime every record carries the batch's maxTimestamp).
 */
function firstRecordAtOrAfter(
  batch: Buffer,
  timestampMs: number,
  startingOffset: number,
): TimestampAndOffset | null {
  const decoded = decodeRecords(batch, { checkCrc: false });
  if (decoded.error !== null) return null;
  const leaderEpoch = batch.readInt32BE(12);
  for (const record of decoded.records) {
    if (record.timestamp >= timestampMs && record.offset >= startingOffset) {
      return { timestamp: record.timestamp, offset: record.offset, leaderEpoch };
    }
  }
  return null;
}
