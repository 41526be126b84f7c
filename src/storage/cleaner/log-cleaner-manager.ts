/**
 * LogCleanerManager: which log to clean next, and how far each log is clean
 * (Kafka's LogCleanerManager).
 *
 * File `<log.dir>/cleaner-offset-checkpoint` (Kafka's format, see
 * checkpoint-file.ts): version 0, a count, then `<topic> <partition>
 * <offset>` lines; the offset is each log's first dirty offset, where the
 * next pass starts. Written whole and atomically after every pass; a
 * missing or unreadable file means "nothing is clean yet" (more work, never
 * wrong data).
 *
 * Choice: among the logs with cleanup.policy containing `compact` that are
 * neither being cleaned nor marked uncleanable, the one with the greatest
 * dirty ratio (cleanable bytes / total bytes) above its
 * min.cleanable.dirty.ratio, or any with cleanable bytes whose oldest dirty
 * batch is older than max.compaction.lag.ms. Nothing at or past the first
 * uncleanable offset is cleaned: the active segment, the last stable offset,
 * and segments whose newest record is younger than min.compaction.lag.ms.
 */
import { posix } from 'node:path';
import type { FileSystem } from '../../io/fs.js';
import { topicPartitionKey } from '../../protocol/topic-partition.js';
import { CorruptCheckpointError, offsetCheckpointFormat, readCheckpointFile, writeCheckpointFile } from '../checkpoint-file.js';
import { isIoError } from '../errors.js';
import type { Log } from '../log.js';
import type { StorageLogger } from '../log-config.js';
import type { LogSegment } from '../log-segment.js';
import type { LastRecord, LogToClean } from './cleaner.js';
import { segmentsBetween } from './cleaner.js';

export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';

/** What the cleaner needs from the broker: the logs by directory and each log's transactional state. */
export interface CleanerSource {
  /** Each online directory; `maybeHandleIOException` takes it offline on a disk error (LogManager's). */
  logDirs(): readonly { logDir: string; logs: readonly Log[]; maybeHandleIOException?: <T>(what: string, operation: () => Promise<T>) => Promise<T> }[];
  /** Nothing at or past it is cleaned (Kafka: the last stable offset, at most the high watermark). */
  lastStableOffset(log: Log): number;
  /** Active producers' last appends: their batches survive cleaning. */
  activeProducers(log: Log): ReadonlyMap<number, LastRecord>;
}

/** A candidate with its byte counts (Kafka's LogToClean fields). */
export interface CleaningCandidate extends LogToClean {
  logDir: string;
  cleanBytes: number;
  cleanableBytes: number;
  cleanableRatio: number;
  needCompactionNow: boolean;
}

export class LogCleanerManager {
  private readonly checkpoints = new Map<string, Map<string, number>>();
  private readonly inProgress = new Set<Log>();
  private readonly uncleanable = new Set<Log>();
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly fs: FileSystem,
    private readonly source: CleanerSource,
    private readonly logger: StorageLogger,
  ) {}

  /** Picks the filthiest cleanable log and marks it in progress; null when none needs cleaning. */
  async grabFilthiestCompactedLog(nowMs: number): Promise<CleaningCandidate | null> {
    let filthiest: CleaningCandidate | null = null;
    for (const dir of this.source.logDirs()) {
      const { logDir, logs } = dir;
      const checkpoint = await this.readableCheckpointOf(dir);
      if (checkpoint === null) continue;
      for (const log of logs) {
        if (!this.isCandidate(log)) continue;
        const candidate = await this.candidate(log, { logDir, checkpoint, nowMs });
        if (candidate === null) continue;
        const cleanable = (candidate.needCompactionNow && candidate.cleanableBytes > 0) || candidate.cleanableRatio > log.config.minCleanableDirtyRatio;
        if (cleanable && (filthiest === null || candidate.cleanableRatio > filthiest.cleanableRatio)) filthiest = candidate;
      }
    }
    if (filthiest !== null) this.inProgress.add(filthiest.log);
    return filthiest;
  }

  /** The dirty ratio and first dirty offset of a compacted log, for operators (describe, metrics). */
  async describe(log: Log, logDir: string, nowMs: number): Promise<CleaningCandidate | null> {
    return this.candidate(log, { logDir, checkpoint: await this.checkpointOf(logDir), nowMs });
  }

  private isCandidate(log: Log): boolean {
    return (
      log.config.cleanupPolicy.includes('compact') && !log.isClosed && !log.isOffline && !this.inProgress.has(log) && !this.uncleanable.has(log)
    );
  }

  private async candidate(log: Log, context: { logDir: string; checkpoint: Map<string, number>; nowMs: number }): Promise<CleaningCandidate | null> {
    const key = topicPartitionKey(log.topicPartition);
    const { firstDirtyOffset, reset } = this.firstDirtyOffset(log, context.checkpoint.get(key));
    if (reset) context.checkpoint.set(key, firstDirtyOffset);
    const uncleanableOffset = Math.max(firstDirtyOffset, await this.firstUncleanableDirtyOffset(log, firstDirtyOffset, context.nowMs));
    // Kafka counts from the segment holding the uncleanable offset (or the active one).
    const segments = log.logSegments;
    const firstUncleanableOffset = floorSegment(log, uncleanableOffset).baseOffset;
    const cleanBytes = sumBytes(segments.filter((segment) => segment.baseOffset < firstDirtyOffset));
    const cleanableBytes = sumBytes(segmentsBetween(log, Math.min(firstDirtyOffset, firstUncleanableOffset), firstUncleanableOffset));
    const totalBytes = cleanBytes + cleanableBytes;
    if (totalBytes === 0) return null;
    return {
      log,
      logDir: context.logDir,
      firstDirtyOffset,
      firstUncleanableOffset: uncleanableOffset,
      cleanBytes,
      cleanableBytes,
      cleanableRatio: cleanableBytes / totalBytes,
      needCompactionNow: (await this.maxCompactionDelayMs(log, firstDirtyOffset, context.nowMs)) > 0,
    };
  }

  /** The checkpointed first dirty offset, reset to the log start when it lies outside the log (Kafka's rule). */
  private firstDirtyOffset(log: Log, checkpointed: number | undefined): { firstDirtyOffset: number; reset: boolean } {
    const offset = checkpointed ?? log.logStartOffset;
    if (offset < log.logStartOffset || offset > log.logEndOffset) {
      if (!log.config.cleanupPolicy.includes('delete') || offset > log.logEndOffset) {
        this.logger.warn(`${log.name}: resetting the first dirty offset ${offset} to the log start offset ${log.logStartOffset}`);
      }
      return { firstDirtyOffset: log.logStartOffset, reset: true };
    }
    return { firstDirtyOffset: offset, reset: false };
  }

  /** The lowest of: the last stable offset, the active segment's base, the first segment inside min.compaction.lag.ms. */
  private async firstUncleanableDirtyOffset(log: Log, firstDirtyOffset: number, nowMs: number): Promise<number> {
    let offset = Math.min(this.source.lastStableOffset(log), log.activeSegment.baseOffset);
    const lagMs = Math.max(log.config.minCompactionLagMs, 0);
    if (lagMs > 0) {
      for (const segment of nonActiveSegmentsFrom(log, firstDirtyOffset)) {
        if ((await segment.largestTimestamp()) > nowMs - lagMs) {
          offset = Math.min(offset, segment.baseOffset);
          break;
        }
      }
    }
    return offset;
  }

  /** How long past max.compaction.lag.ms the oldest dirty batch is (0 when none is). */
  private async maxCompactionDelayMs(log: Log, firstDirtyOffset: number, nowMs: number): Promise<number> {
    const lagMs = Math.max(log.config.maxCompactionLagMs, 0);
    if (!Number.isFinite(lagMs)) return 0;
    let earliestMs = Infinity;
    for (const segment of nonActiveSegmentsFrom(log, firstDirtyOffset)) {
      const timestamp = (await segment.firstBatch())?.maxTimestamp ?? -1;
      if (timestamp > 0) earliestMs = Math.min(earliestMs, timestamp);
    }
    const cleanUntilMs = nowMs - lagMs;
    return earliestMs < cleanUntilMs ? cleanUntilMs - earliestMs : 0;
  }

  /** A pass ended: records the new first dirty offset (null when it failed or was aborted). */
  async doneCleaning(candidate: CleaningCandidate, endOffset: number | null): Promise<void> {
    this.inProgress.delete(candidate.log);
    if (endOffset === null) return;
    (await this.checkpointOf(candidate.logDir)).set(topicPartitionKey(candidate.log.topicPartition), endOffset);
    await this.writeCheckpoint(candidate.logDir);
  }

  /** A pass failed on bad data: the log is skipped until restart, as Kafka does. */
  markUncleanable(log: Log): void {
    this.uncleanable.add(log);
  }

  get uncleanableCount(): number {
    return this.uncleanable.size;
  }

  /**
   * The directory's checkpoint, or null when a disk error made it
   * unreadable: that takes the directory offline, as Kafka's
   * allCleanerCheckpoints does through its LogDirFailureChannel.
   */
  private async readableCheckpointOf(dir: ReturnType<CleanerSource['logDirs']>[number]): Promise<Map<string, number> | null> {
    try {
      return await this.checkpointOf(dir.logDir);
    } catch (error) {
      if (!isIoError(error)) throw error;
      const guard = dir.maybeHandleIOException ?? ((_what, operation) => (dir.logs[0] === undefined ? operation() : dir.logs[0].maybeHandleIOException(operation)));
      await guard('reading the cleaner checkpoint', () => Promise.reject(error)).catch(() => {});
      return null;
    }
  }

  /** The cleaner checkpoint of a log directory, read once. */
  private async checkpointOf(logDir: string): Promise<Map<string, number>> {
    const known = this.checkpoints.get(logDir);
    if (known !== undefined) return known;
    let entries: Map<string, number>;
    try {
      const read = (await readCheckpointFile(this.fs, posix.join(logDir, CLEANER_OFFSET_CHECKPOINT_FILE), offsetCheckpointFormat)) ?? [];
      entries = new Map(read.map((entry) => [topicPartitionKey(entry), entry.offset]));
    } catch (error) {
      if (!(error instanceof CorruptCheckpointError)) throw error;
      this.logger.warn(`${error.message}; cleaning every compacted log from its start`);
      entries = new Map();
    }
    this.checkpoints.set(logDir, entries);
    return entries;
  }

  /** Writes the directory's checkpoint, listing only logs it still holds. */
  private writeCheckpoint(logDir: string): Promise<void> {
    const run = this.writing.then(async () => {
      const checkpoint = await this.checkpointOf(logDir);
      const logs = this.source.logDirs().find((dir) => dir.logDir === logDir)?.logs ?? [];
      const entries = logs.flatMap((log) => {
        const offset = checkpoint.get(topicPartitionKey(log.topicPartition));
        return offset === undefined ? [] : [{ ...log.topicPartition, offset }];
      });
      await writeCheckpointFile(this.fs, posix.join(logDir, CLEANER_OFFSET_CHECKPOINT_FILE), entries, offsetCheckpointFormat);
    });
    this.writing = run.catch(() => {});
    return run;
  }
}

/** The segment holding `offset`: the greatest base offset <= it (the first segment when all are greater). */
function floorSegment(log: Log, offset: number): LogSegment {
  let found = log.logSegments[0]!;
  for (const segment of log.logSegments) if (segment.baseOffset <= offset) found = segment;
  return found;
}

function nonActiveSegmentsFrom(log: Log, offset: number): LogSegment[] {
  return segmentsBetween(log, offset, log.activeSegment.baseOffset);
}

function sumBytes(segments: readonly LogSegment[]): number {
  let total = 0;
  for (const segment of segments) total += segment.sizeBytes;
  return total;
}
