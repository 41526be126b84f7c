/**
 * Cleaner: one compaction pass over one log (Kafka's Cleaner).
 *
 * 1. Key map: the dirty section [firstDirtyOffset, firstUncleanableOffset)
 *    is read and every key's latest offset entered into the offset map, until
 *    the map holds slots * log.cleaner.io.buffer.load.factor keys; the pass
 *    then ends where the map stopped (`endOffset`). Batches of aborted
 *    transactions are not entered (their keys must not hide committed ones).
 * 2. Recopy: the segments below `endOffset` are grouped (a group fits in
 *    segment.bytes and both indexes in segment.index.bytes, and its offsets
 *    in one segment's 32-bit range) and each group is copied into one new
 *    `.cleaned` segment, keeping a record when it is the latest for its key
 *    (or past the map), and a tombstone only until its batch's delete
 *    horizon. A batch whose records all stay is copied byte for byte; other
 *    batches are rebuilt with the same base offset, last offset, producer
 *    fields and codec. The last batch of every active producer and the last
 *    batch of the pass stay, emptied if need be, so producer state and the
 *    log end survive. Offsets never change.
 * 3. Swap: the cleaned segment is flushed and swapped in (Log.replaceSegments).
 *
 * Tombstones (KIP-534): the first pass that keeps a tombstone rewrites its
 * batch with a delete horizon (now + delete.retention.ms, attributes bit 6);
 * a later pass drops it once the horizon has passed.
 *
 * Transactions (CleanedTransactionMetadata): the records of aborted
 * transactions go (their batches too, unless one is a producer's last);
 * an ABORT marker stays, with its `.txnindex` entry, while a batch of its
 * transaction remains, and a COMMIT marker while a batch of its transaction
 * does. A marker that may go first gets a delete horizon like a tombstone
 * batch and goes at the first pass after it. Nothing at or past the last
 * stable offset is cleaned, so open transactions are never touched.
 *
 * Work is done in slices of at most SLICE_BYTES_MAX (and
 * log.cleaner.io.buffer.size) bytes, each throttled and followed by a yield
 * to the event loop.
 */
import type { Clock } from '../../io/clock.js';
import type { FileSystem } from '../../io/fs.js';
import { readInt64, writeInt64 } from '../../protocol/int64.js';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  BATCH_OVERHEAD_BYTES,
  CONTROL_MASK,
  MAGIC_V2,
  NO_PRODUCER_ID,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_MASK,
  writeCrc,
  type BatchHeader,
} from '../../protocol/records/batch.js';
import { buildBatch, decodeRecords, type Record } from '../../protocol/records/records.js';
import { segmentOptions, type Log } from '../log.js';
import { LogSegment, type AppendedBatch } from '../log-segment.js';
import type { SkimpyOffsetMap } from './offset-map.js';
import type { Throttler } from './throttler.js';
import { CleanedTransactionMetadata } from './transaction-metadata.js';

const INT32_MAX = 0x7fff_ffff;
/**
 * Most batch bytes handled between two turns of the event loop: requests
 * wait for at most one slice (Kafka's cleaner runs on its own thread; ours
 * shares the loop, so its slices stay well below log.cleaner.io.buffer.size).
 */
const SLICE_BYTES_MAX = 64 * 1024;

/** What the producer-state layer knows of an active producer's last append. */
export interface LastRecord {
  /** Last offset of its last data batch, or null when its last entry is a transaction marker. */
  lastDataOffset: number | null;
  producerEpoch: number;
}

/** A log chosen for cleaning and the range to clean (Kafka's LogToClean). */
export interface LogToClean {
  log: Log;
  firstDirtyOffset: number;
  /** Exclusive: nothing at or past it is cleaned (active segment, LSO, min.compaction.lag.ms). */
  firstUncleanableOffset: number;
}

export interface CleanerStats {
  bytesRead: number;
  bytesWritten: number;
  messagesRead: number;
  messagesRetained: number;
  /** Map slots in use at the end of the key-map phase. */
  bufferUtilization: number;
  startMs: number;
  endMs: number;
}

export interface CleanerOptions {
  fs: FileSystem;
  clock: Clock;
  offsetMap: SkimpyOffsetMap;
  /** log.cleaner.io.buffer.size per cleaner thread: the read slice. */
  ioBufferBytes: number;
  /** log.cleaner.io.buffer.load.factor. */
  dedupeBufferLoadFactor: number;
  throttler: Throttler;
  /** Runs between slices: lets the event loop serve requests. */
  yieldSlice: () => Promise<void>;
  /** Throws CleaningAbortedError when the pass must stop (log closed, cleaner stopping). */
  checkDone: (log: Log) => void;
}

export class CleaningAbortedError extends Error {
  override readonly name = 'CleaningAbortedError';
}

export class Cleaner {
  constructor(private readonly options: CleanerOptions) {
    if (options.offsetMap.slots * options.dedupeBufferLoadFactor <= 1) {
      throw new RangeError('the offset map cannot hold a single key: raise log.cleaner.dedupe.buffer.size or lower log.cleaner.threads');
    }
  }

  /** Cleans `cleanable`; returns the offset up to which the log is now clean (the next first dirty offset). */
  async clean(cleanable: LogToClean, producers: ReadonlyMap<number, LastRecord>): Promise<{ endOffset: number; stats: CleanerStats }> {
    const { log } = cleanable;
    const nowMs = this.options.clock.nowMs();
    const stats: CleanerStats = { bytesRead: 0, bytesWritten: 0, messagesRead: 0, messagesRetained: 0, bufferUtilization: 0, startMs: nowMs, endMs: nowMs };
    const truncationCount = log.truncationCount;
    await this.buildOffsetMap(log, { start: cleanable.firstDirtyOffset, end: cleanable.firstUncleanableOffset }, stats);
    const endOffset = this.options.offsetMap.latestOffset + 1;
    stats.bufferUtilization = this.options.offsetMap.utilization;
    const groups = groupSegmentsBySize(segmentsBetween(log, 0, endOffset), {
      segmentBytes: log.config.segmentBytes,
      segmentIndexBytes: log.config.segmentIndexBytes,
      firstUncleanableOffset: cleanable.firstUncleanableOffset,
    });
    const pass: Pass = { log, nowMs, producers, upperBoundOffset: endOffset, stats, truncationCount };
    for (const group of groups) await this.cleanSegments(pass, group);
    stats.endMs = this.options.clock.nowMs();
    return { endOffset, stats };
  }

  // ---- key map ---------------------------------------------------------------------

  private async buildOffsetMap(log: Log, range: { start: number; end: number }, stats: CleanerStats): Promise<void> {
    const map = this.options.offsetMap;
    map.clear();
    const dirty = segmentsBetween(log, range.start, range.end);
    const transactions = new CleanedTransactionMetadata();
    transactions.addAbortedTransactions(log.collectAbortedTransactions(range.start, range.end));
    const mapSizeMax = Math.floor(map.slots * this.options.dedupeBufferLoadFactor);
    for (let index = 0; index < dirty.length; index++) {
      const nextStart = dirty[index + 1]?.baseOffset ?? range.end;
      const full = await this.mapSegment(log, dirty[index]!, { start: range.start, mapSizeMax, transactions, stats });
      if (full) return;
      // Offsets may have gaps: the next segment starts where the map's coverage ends.
      map.updateLatestOffset(nextStart - 1);
    }
  }

  /** Enters one segment's keys; true when the map filled up (it then covers only part of the segment). */
  private async mapSegment(
    log: Log,
    segment: LogSegment,
    context: { start: number; mapSizeMax: number; transactions: CleanedTransactionMetadata; stats: CleanerStats },
  ): Promise<boolean> {
    const map = this.options.offsetMap;
    const scanner = segment.scan({ startPosition: segment.offsetIndex.lookup(context.start).position, mode: 'whole', blockBytes: this.options.ioBufferBytes });
    let sliceBytes = 0;
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) {
      const header = batch.header;
      const bytes = batch.buffer.subarray(batch.offsetInBuffer, batch.offsetInBuffer + header.sizeBytes);
      if (header.isControl) context.transactions.onControlBatchRead(header, decodeBatch(bytes, segment));
      else if (!context.transactions.onBatchRead(header)) {
        for (const record of decodeBatch(bytes, segment)) {
          if (record.key === null || record.offset < context.start) continue;
          if (map.size >= context.mapSizeMax) return true;
          map.put(record.key, record.offset);
        }
      }
      if (header.lastOffset >= context.start) map.updateLatestOffset(header.lastOffset);
      sliceBytes += header.sizeBytes;
      if (sliceBytes >= this.sliceBytesMax) sliceBytes = await this.endSlice(log, sliceBytes);
    }
    await this.endSlice(log, sliceBytes);
    return false;
  }

  private get sliceBytesMax(): number {
    return Math.min(this.options.ioBufferBytes, SLICE_BYTES_MAX);
  }

  /** Throttles for the bytes of the slice, yields to the event loop, checks for an abort; returns 0. */
  private async endSlice(log: Log, bytes: number): Promise<number> {
    await this.options.throttler.maybeThrottle(bytes);
    await this.options.yieldSlice();
    this.options.checkDone(log);
    return 0;
  }

  // ---- recopy ----------------------------------------------------------------------

  private async cleanSegments(pass: Pass, group: readonly LogSegment[]): Promise<void> {
    const { log } = pass;
    const first = group[0]!;
    const cleaned = await LogSegment.createCleaned(this.options.fs, log.dir, first.baseOffset, segmentOptions(log.config), pass.nowMs);
    // Aborted transactions whose ABORT marker the cleaned segment keeps go into its .txnindex.
    const transactions = new CleanedTransactionMetadata((abortedTxn) => cleaned.txnIndex.append(abortedTxn));
    try {
      for (const segment of group) {
        transactions.addAbortedTransactions(log.collectAbortedTransactions(segment.baseOffset, nextSegmentBaseOffset(log, segment)));
        await this.cleanInto({ ...pass, transactions }, segment, cleaned);
      }
      cleaned.onBecomeInactiveSegment();
      await cleaned.flush();
      const swapped = await log.replaceSegments(cleaned, group, { truncationCount: pass.truncationCount });
      if (!swapped) throw new CleaningAbortedError(`${log.name} changed while it was being cleaned`);
    } catch (error) {
      await cleaned.deleteFiles().catch(() => {});
      throw error;
    }
  }

  /** Copies what `source` keeps into `dest`, one slice at a time. */
  private async cleanInto(pass: GroupPass, source: LogSegment, dest: LogSegment): Promise<void> {
    const scanner = source.scan({ startPosition: 0, mode: 'whole', blockBytes: this.options.ioBufferBytes });
    let output: Buffer[] = [];
    let appended: AppendedBatch[] = [];
    let sliceBytes = 0;
    const flush = async () => {
      if (output.length > 0) {
        const records = Buffer.concat(output);
        await dest.append(records, appended);
        pass.stats.bytesWritten += records.length;
        await this.options.throttler.maybeThrottle(records.length);
      }
      output = [];
      appended = [];
      sliceBytes = await this.endSlice(pass.log, sliceBytes);
    };
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) {
      const bytes = batch.buffer.subarray(batch.offsetInBuffer, batch.offsetInBuffer + batch.header.sizeBytes);
      const kept = this.filterBatch(pass, bytes, batch.header, source);
      pass.stats.bytesRead += bytes.length;
      sliceBytes += bytes.length;
      if (kept !== null) {
        if (!dest.canConvertToRelativeOffset(batch.header.lastOffset)) throw new Error(`${dest}: offset ${batch.header.lastOffset} outside the segment`);
        output.push(kept);
        appended.push({ baseOffset: batch.header.baseOffset, lastOffset: batch.header.lastOffset, sizeBytes: kept.length, maxTimestamp: readInt64(kept, BATCH_FIELD.maxTimestamp) });
      }
      if (sliceBytes >= this.sliceBytesMax) await flush();
    }
    await flush();
  }

  /**
   * The bytes to keep for one batch (the batch itself, a rebuilt one, an
   * empty one), or null to drop it (Kafka's checkBatchRetention and filterTo).
   */
  private filterBatch(pass: GroupPass, bytes: Buffer, header: BatchHeader, source: LogSegment): Buffer | null {
    const records = decodeBatch(bytes, source);
    const canDiscardBatch = header.isControl ? pass.transactions.onControlBatchRead(header, records) : pass.transactions.onBatchRead(header);
    // A discardable marker waits for its delete horizon, as a tombstone does.
    const discardRecords = header.isControl ? canDiscardBatch && header.hasDeleteHorizon && header.baseTimestamp <= pass.nowMs : canDiscardBatch;
    const retainEmpty = this.isLastBatchOfProducer(pass, header) || header.lastOffset + 1 === pass.upperBoundOffset;
    pass.stats.messagesRead += records.length;
    const retained = discardRecords ? [] : header.isControl ? records : records.filter((record) => this.shouldRetainRecord(pass, header, record));
    pass.stats.messagesRetained += retained.length;
    if (retained.length === 0) return retainEmpty ? emptyBatch(header) : null;
    const containsTombstones = retained.some((record) => record.value === null);
    const containsMarkerForEmptyTxn = canDiscardBatch && header.isControl;
    const needsDeleteHorizon = (containsTombstones || containsMarkerForEmptyTxn) && !header.hasDeleteHorizon;
    if (retained.length === records.length && !needsDeleteHorizon) return bytes;
    const deleteHorizonMs = needsDeleteHorizon ? pass.nowMs + pass.log.config.deleteRetentionMs : header.hasDeleteHorizon ? header.baseTimestamp : null;
    return rebuildBatch(header, retained, deleteHorizonMs);
  }

  /**
   * Kafka keeps the batch holding an active producer's last sequence (or,
   * when its last entry is a marker, that marker, which carries its epoch).
   */
  private isLastBatchOfProducer(pass: Pass, header: BatchHeader): boolean {
    if (header.producerId === NO_PRODUCER_ID) return false;
    const last = pass.producers.get(header.producerId);
    if (last === undefined) return false;
    if (last.lastDataOffset !== null) return header.lastOffset === last.lastDataOffset;
    return header.isControl && header.producerEpoch === last.producerEpoch;
  }

  private shouldRetainRecord(pass: Pass, header: BatchHeader, record: Record): boolean {
    const map = this.options.offsetMap;
    if (record.offset > map.latestOffset) return true;
    // A compacted topic refuses keyless records at produce; one found here (written before) goes.
    if (record.key === null) return false;
    if (record.offset < map.get(record.key)) return false;
    if (record.value !== null) return true;
    return !header.hasDeleteHorizon || pass.nowMs < header.baseTimestamp;
  }
}

interface Pass {
  log: Log;
  nowMs: number;
  producers: ReadonlyMap<number, LastRecord>;
  /** The pass's end offset: its last batch is kept, so the log end survives. */
  upperBoundOffset: number;
  stats: CleanerStats;
  truncationCount: number;
}

/** A pass while it recopies one group: the group's transaction state. */
interface GroupPass extends Pass {
  transactions: CleanedTransactionMetadata;
}

/** Where the segment's offsets end: the next segment's base offset (the log end for the last). */
function nextSegmentBaseOffset(log: Log, segment: LogSegment): number {
  const segments = log.logSegments;
  const index = segments.indexOf(segment);
  return segments[index + 1]?.baseOffset ?? log.logEndOffset;
}

/** Segments holding offsets in [from, to): from the one holding `from`, while base offset < `to`. */
export function segmentsBetween(log: Log, from: number, to: number): LogSegment[] {
  const segments = log.logSegments;
  let first = 0;
  for (let index = 0; index < segments.length; index++) if (segments[index]!.baseOffset <= from) first = index;
  const result: LogSegment[] = [];
  for (let index = first; index < segments.length && segments[index]!.baseOffset < to; index++) result.push(segments[index]!);
  return result;
}

/**
 * Kafka's groupSegmentsBySize: consecutive segments whose .log sizes sum to
 * at most segment.bytes, whose offset and time indexes each sum to at most
 * segment.index.bytes, and whose offsets fit one segment's 32-bit range.
 */
export function groupSegmentsBySize(
  segments: readonly LogSegment[],
  limits: { segmentBytes: number; segmentIndexBytes: number; firstUncleanableOffset: number },
): LogSegment[][] {
  const groups: LogSegment[][] = [];
  let index = 0;
  while (index < segments.length) {
    const group = [segments[index]!];
    let logBytes = group[0]!.sizeBytes;
    let offsetIndexBytes = group[0]!.offsetIndex.sizeBytes;
    let timeIndexBytes = group[0]!.timeIndex.sizeBytes;
    for (index++; index < segments.length; index++) {
      const next = segments[index]!;
      const lastOffsetOfNext = (segments[index + 1]?.baseOffset ?? limits.firstUncleanableOffset) - 1;
      const fits =
        logBytes + next.sizeBytes <= limits.segmentBytes &&
        offsetIndexBytes + next.offsetIndex.sizeBytes <= limits.segmentIndexBytes &&
        timeIndexBytes + next.timeIndex.sizeBytes <= limits.segmentIndexBytes &&
        (next.sizeBytes === 0 || lastOffsetOfNext - group[0]!.baseOffset <= INT32_MAX);
      if (!fits) break;
      group.push(next);
      logBytes += next.sizeBytes;
      offsetIndexBytes += next.offsetIndex.sizeBytes;
      timeIndexBytes += next.timeIndex.sizeBytes;
    }
    groups.push(group);
  }
  return groups;
}

function decodeBatch(bytes: Buffer, segment: LogSegment): Record[] {
  const decoded = decodeRecords(bytes, { checkCrc: false });
  if (decoded.error !== null) throw new Error(`${segment}: cannot clean a batch at offset ${bytes.readBigInt64BE(0)}: ${decoded.error.message}`);
  return decoded.records;
}

/** The kept records in a batch like the original: same base and last offset, producer fields, codec, epoch. */
function rebuildBatch(header: BatchHeader, retained: readonly Record[], deleteHorizonMs: number | null): Buffer {
  return buildBatch({
    records: retained.map((record) => ({ key: record.key, value: record.value, headers: record.headers, timestamp: record.timestamp, offset: record.offset })),
    compression: header.compression,
    baseOffset: header.baseOffset,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    isControl: header.isControl,
    timestampType: header.timestampType,
    ...(header.timestampType === 1 ? { logAppendTimeMs: header.maxTimestamp } : {}),
    // The last offset (and with it the producer's last sequence) stays what it was.
    lastOffsetDelta: header.lastOffsetDelta,
    ...(deleteHorizonMs === null ? {} : { deleteHorizonMs }),
  });
}

/**
 * A batch with no records that keeps the original's offsets, producer
 * fields and timestamp (Kafka's DefaultRecordBatch.writeEmptyHeader).
 */
function emptyBatch(header: BatchHeader): Buffer {
  const batch = Buffer.alloc(BATCH_HEADER_BYTES);
  let attributes = header.timestampType === 1 ? TIMESTAMP_TYPE_MASK : 0;
  if (header.isTransactional) attributes |= TRANSACTIONAL_MASK;
  if (header.isControl) attributes |= CONTROL_MASK;
  writeInt64(batch, BATCH_FIELD.baseOffset, header.baseOffset);
  batch.writeInt32BE(BATCH_HEADER_BYTES - BATCH_OVERHEAD_BYTES, BATCH_FIELD.batchLength);
  batch.writeInt32BE(header.partitionLeaderEpoch, BATCH_FIELD.partitionLeaderEpoch);
  batch.writeInt8(MAGIC_V2, BATCH_FIELD.magic);
  batch.writeInt16BE(attributes, BATCH_FIELD.attributes);
  batch.writeInt32BE(header.lastOffsetDelta, BATCH_FIELD.lastOffsetDelta);
  writeInt64(batch, BATCH_FIELD.baseTimestamp, header.maxTimestamp);
  writeInt64(batch, BATCH_FIELD.maxTimestamp, header.maxTimestamp);
  writeInt64(batch, BATCH_FIELD.producerId, header.producerId);
  batch.writeInt16BE(header.producerEpoch, BATCH_FIELD.producerEpoch);
  batch.writeInt32BE(header.baseSequence, BATCH_FIELD.baseSequence);
  batch.writeInt32BE(0, BATCH_FIELD.recordCount);
  writeCrc(batch, 0);
  return batch;
}
