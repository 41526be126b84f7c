/**
 * LogLoader: opens a partition directory and returns a Log whose files can
 * be trusted.
 *
 * Files found in the directory: `*.deleted`, `*.cleaned` and `*.tmp` are
 * leftovers of interrupted work and are removed; index files without a
 * `.log` are removed. A `<base>.log.swap` is a cleaned segment whose swap
 * was committed (Log.replaceSegments): the swap is completed, as Kafka's
 * loader does: the old segments it replaces (base offsets in [base, the
 * swap's next offset)) are deleted, its index `.swap` files replace the old
 * indexes, and everything loses the `.swap` suffix. An index `.swap` with no
 * `.log.swap` belongs to a swap that never committed and is deleted; so are
 * `.swap` files above the lowest `.cleaned` offset (Kafka's rule for an
 * interrupted segment split, KAFKA-6264).
 *
 * Crash policy:
 * - After an unclean shutdown, every segment from the one holding the
 *   recovery point onwards is recovered: each batch is checked (size, CRC,
 *   offsets increasing), the segment is cut at the first bad batch, later
 *   segments are deleted, and indexes are rebuilt. Leader epochs of the
 *   recovered batches are re-entered into the epoch cache.
 * - Every other segment's indexes are sanity-checked (see
 *   LogSegment.sanityCheck); a missing or failing index is rebuilt by the
 *   same recovery of that segment. Indexes are never trusted unchecked.
 * - After a clean shutdown nothing is scanned.
 * - A log start offset checkpoint past the recovered log end empties the
 *   log and restarts it at the log start offset (Kafka does the same).
 */
import { posix } from 'node:path';
import type { FileSystem } from '../io/fs.js';
import type { BatchHeader } from '../protocol/records/batch.js';
import { BatchScanner } from './batch-scanner.js';
import { CorruptIndexError } from './errors.js';
import {
  CLEANED_FILE_SUFFIX,
  DELETED_FILE_SUFFIX,
  INDEX_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  SWAP_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
  offsetFromFileName,
  segmentFilePath,
  type TopicPartition,
} from './file-names.js';
import { LeaderEpochFileCache } from './leader-epoch-cache.js';
import { Log, segmentOptions, type LogEnv } from './log.js';
import { silentStorageLogger, type LogConfig, type StorageLogger } from './log-config.js';
import { LogSegment } from './log-segment.js';

export interface LoadLogOptions {
  dir: string;
  topicPartition: TopicPartition;
  config: LogConfig;
  /** From recovery-point-offset-checkpoint; 0 when absent. */
  recoveryPoint?: number;
  /** From log-start-offset-checkpoint; 0 when absent. */
  logStartOffset?: number;
  /** From replication-offset-checkpoint; 0 when absent. */
  highWatermark?: number;
  /** The log dir held a clean-shutdown marker. */
  hadCleanShutdown: boolean;
  logger?: StorageLogger;
  onRecoveryPointLowered?: () => Promise<void>;
  /** Called when an I/O error takes the loaded log offline. */
  onIoError?: (error: NodeJS.ErrnoException) => void;
}

interface OpenedSegment {
  segment: LogSegment;
  indexesNeedRebuild: boolean;
}

/** Opens (creating if needed) the partition directory and loads, checks and recovers its segments. */
export async function loadLog(env: LogEnv, options: LoadLogOptions): Promise<Log> {
  const logger = options.logger ?? silentStorageLogger;
  const name = `${options.topicPartition.topic}-${options.topicPartition.partition}`;
  await ensureDirectory(env, options.dir);
  const baseOffsets = await cleanDirectory(env, options.dir, logger);
  const opened: OpenedSegment[] = [];
  for (const baseOffset of baseOffsets) {
    opened.push(await LogSegment.open(env.fs, options.dir, baseOffset, segmentOptions(options.config), env.clock.nowMs()));
  }
  const epochCache = await LeaderEpochFileCache.load(env.fs, options.dir, logger);
  let segments = opened.map((entry) => entry.segment);
  const checkpointStart = options.logStartOffset ?? 0;
  if (segments.length === 0) {
    segments = [await LogSegment.create(env.fs, options.dir, checkpointStart, segmentOptions(options.config), env.clock.nowMs())];
    opened.push({ segment: segments[0]!, indexesNeedRebuild: false });
    await env.fs.syncDir(options.dir);
  }
  const recoveryPoint = options.recoveryPoint ?? 0;
  segments = await checkAndRecover(opened, { recoveryPoint, hadCleanShutdown: options.hadCleanShutdown, epochCache, logger, name });
  let logEndOffset = await segments[segments.length - 1]!.readNextOffset();
  let logStartOffset = Math.max(checkpointStart, segments[0]!.baseOffset);
  if (logStartOffset > logEndOffset) {
    logger.warn(`${name}: log start offset ${logStartOffset} is past the recovered log end ${logEndOffset}; restarting the log there`);
    for (const segment of segments) await segment.deleteFiles();
    segments = [await LogSegment.create(env.fs, options.dir, logStartOffset, segmentOptions(options.config), env.clock.nowMs())];
    logEndOffset = logStartOffset;
    await env.fs.syncDir(options.dir);
  }
  logStartOffset = Math.min(logStartOffset, logEndOffset);
  const epochsChanged = [epochCache.truncateFromEnd(logEndOffset), epochCache.truncateFromStart(logStartOffset)].some(Boolean);
  if (epochsChanged || !options.hadCleanShutdown) await epochCache.flush();
  await segments[segments.length - 1]!.loadRollingBasedTimestamp();
  const highWatermark = Math.min(Math.max(options.highWatermark ?? 0, logStartOffset), logEndOffset);
  logger.info(`${name}: loaded ${segments.length} segment(s), log start ${logStartOffset}, log end ${logEndOffset}`);
  return new Log(env, {
    dir: options.dir,
    topicPartition: options.topicPartition,
    config: options.config,
    segments,
    logStartOffset,
    logEndOffset,
    recoveryPoint: options.hadCleanShutdown ? logEndOffset : Math.min(recoveryPoint, logEndOffset),
    highWatermark,
    leaderEpochCache: epochCache,
    logger,
    ...(options.onRecoveryPointLowered === undefined ? {} : { onRecoveryPointLowered: options.onRecoveryPointLowered }),
    ...(options.onIoError === undefined ? {} : { onIoError: options.onIoError }),
  });
}

async function ensureDirectory(env: LogEnv, dir: string): Promise<void> {
  await mkdirDurably(env.fs, dir);
}

/** Creates `dir` and any missing parents, fsyncing each parent so the new entries survive a crash. */
export async function mkdirDurably(fs: FileSystem, dir: string): Promise<void> {
  const missing: string[] = [];
  for (let path = dir; (await fs.stat(path)) === null; path = posix.dirname(path)) missing.push(path);
  if (missing.length === 0) return;
  await fs.mkdir(dir);
  for (const path of missing.reverse()) await fs.syncDir(posix.dirname(path));
}

/** Removes leftovers and orphan indexes, completes swaps; returns the base offsets of the .log files, ascending. */
async function cleanDirectory(env: LogEnv, dir: string, logger: StorageLogger): Promise<number[]> {
  await completeSwaps(env, dir, logger);
  const names = await env.fs.readdir(dir);
  const logOffsets = new Set<number>();
  for (const name of names) {
    const offset = offsetFromFileName(name);
    if (offset !== null && name.endsWith(LOG_FILE_SUFFIX)) logOffsets.add(offset);
  }
  for (const name of names) {
    const path = posix.join(dir, name);
    if (name.endsWith(DELETED_FILE_SUFFIX) || name.endsWith('.tmp')) {
      await env.fs.unlink(path);
    } else if (isIndexFile(name) && !logOffsets.has(offsetFromFileName(name) ?? -1)) {
      logger.info(`${path}: index without a log segment, removed`);
      await env.fs.unlink(path);
    }
  }
  return [...logOffsets].sort((a, b) => a - b);
}

const SEGMENT_SUFFIXES = [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX];

/**
 * Deletes `.cleaned` files and uncommitted `.swap` files, then completes
 * every committed swap (see the file comment). Idempotent, so a crash in the
 * middle of it is completed by the next load.
 */
async function completeSwaps(env: LogEnv, dir: string, logger: StorageLogger): Promise<void> {
  const names = await env.fs.readdir(dir);
  const cleanedOffsets = names.filter((name) => name.endsWith(CLEANED_FILE_SUFFIX)).map((name) => offsetFromFileName(name) ?? -1);
  const minCleanedOffset = Math.min(Infinity, ...cleanedOffsets.filter((offset) => offset >= 0));
  const committed = new Set(
    names.filter((name) => name.endsWith(LOG_FILE_SUFFIX + SWAP_FILE_SUFFIX)).map((name) => offsetFromFileName(name) ?? -1),
  );
  for (const name of names) {
    const offset = offsetFromFileName(name) ?? -1;
    const stale = name.endsWith(SWAP_FILE_SUFFIX) && (!committed.has(offset) || offset > minCleanedOffset);
    if (name.endsWith(CLEANED_FILE_SUFFIX) || stale) {
      await env.fs.unlink(posix.join(dir, name));
      committed.delete(stale ? offset : -1);
    }
  }
  const swaps = [...committed].filter((offset) => offset >= 0).sort((a, b) => a - b);
  for (const baseOffset of swaps) await completeSwap(env, dir, baseOffset, logger);
  await env.fs.syncDir(dir);
}

/** Replaces the old segments in [baseOffset, the swap's next offset) by the swap segment. */
async function completeSwap(env: LogEnv, dir: string, baseOffset: number, logger: StorageLogger): Promise<void> {
  const swapLog = segmentFilePath(dir, baseOffset, LOG_FILE_SUFFIX) + SWAP_FILE_SUFFIX;
  const nextOffset = await nextOffsetOfFile(env.fs, swapLog, baseOffset);
  for (const name of await env.fs.readdir(dir)) {
    const offset = offsetFromFileName(name);
    const old = offset !== null && offset > baseOffset && offset < nextOffset && !name.endsWith(SWAP_FILE_SUFFIX);
    if (old) await env.fs.unlink(posix.join(dir, name));
  }
  for (const suffix of SEGMENT_SUFFIXES) {
    const finalPath = segmentFilePath(dir, baseOffset, suffix);
    // An index already renamed (no .swap left) is the cleaned one: indexes lose .swap before the .log does.
    if ((await env.fs.stat(finalPath + SWAP_FILE_SUFFIX)) === null) continue;
    if ((await env.fs.stat(finalPath)) !== null) await env.fs.unlink(finalPath);
    await env.fs.rename(finalPath + SWAP_FILE_SUFFIX, finalPath);
  }
  logger.info(`${dir}: completed the swap of cleaned segment ${baseOffset} (replacing offsets up to ${nextOffset})`);
}

/** The offset after the last whole batch of a .log file (its base offset when it has none). */
async function nextOffsetOfFile(fs: FileSystem, path: string, baseOffset: number): Promise<number> {
  const handle = await fs.open(path, 'read');
  try {
    const scanner = new BatchScanner(handle, { startPosition: 0, endPosition: await handle.size(), mode: 'headers' });
    let nextOffset = baseOffset;
    for (let batch = await scanner.next(); batch !== null; batch = await scanner.next()) nextOffset = batch.header.lastOffset + 1;
    return nextOffset;
  } finally {
    await handle.close();
  }
}

function isIndexFile(name: string): boolean {
  return [INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX].some((suffix) => name.endsWith(suffix));
}

interface RecoveryContext {
  recoveryPoint: number;
  hadCleanShutdown: boolean;
  epochCache: LeaderEpochFileCache;
  logger: StorageLogger;
  name: string;
}

/**
 * Recovers the unflushed segments (unclean shutdown) and checks the indexes
 * of the others. Returns the segments that remain.
 */
async function checkAndRecover(opened: OpenedSegment[], context: RecoveryContext): Promise<LogSegment[]> {
  const segments = opened.map((entry) => entry.segment);
  const firstUnflushed = context.hadCleanShutdown ? segments.length : floorIndex(segments, context.recoveryPoint);
  if (firstUnflushed < segments.length) {
    // The batches scanned below are the truth about epochs from here on.
    context.epochCache.truncateFromEnd(segments[firstUnflushed]!.baseOffset);
  }
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    const nextBaseOffset = segments[index + 1]?.baseOffset ?? null;
    const mustRecover = index >= firstUnflushed;
    if (!mustRecover && !opened[index]!.indexesNeedRebuild && (await indexesPass(segment, nextBaseOffset, context))) continue;
    const result = await segment.recover({
      nextSegmentBaseOffset: nextBaseOffset,
      onBatch: mustRecover ? (header) => assignEpoch(context.epochCache, header) : () => {},
    });
    if (result.truncatedBytes > 0) {
      context.logger.warn(`${context.name}: ${segment} truncated by ${result.truncatedBytes} bytes at ${describeStop(result.stop)}`);
      if (mustRecover && index < segments.length - 1) {
        for (const later of segments.splice(index + 1)) await later.deleteFiles();
        break;
      }
    }
  }
  return segments;
}

async function indexesPass(segment: LogSegment, nextBaseOffset: number | null, context: RecoveryContext): Promise<boolean> {
  try {
    await segment.sanityCheck(nextBaseOffset);
    return true;
  } catch (error) {
    if (!(error instanceof CorruptIndexError)) throw error;
    context.logger.warn(`${context.name}: ${error.message}; rebuilding the indexes of ${segment}`);
    return false;
  }
}

function assignEpoch(cache: LeaderEpochFileCache, header: BatchHeader): void {
  const latest = cache.latestEpoch;
  if (header.partitionLeaderEpoch >= 0 && (latest === null || header.partitionLeaderEpoch > latest)) {
    cache.assign(header.partitionLeaderEpoch, header.baseOffset);
  }
}

function describeStop(stop: { kind: string; position?: number; reason?: string }): string {
  return `position ${stop.position ?? '?'} (${stop.kind}${stop.reason === undefined ? '' : `: ${stop.reason}`})`;
}

/** Index of the segment holding `offset`: the greatest base offset <= it (0 when all are greater). */
function floorIndex(segments: readonly LogSegment[], offset: number): number {
  let found = 0;
  for (let index = 0; index < segments.length; index++) if (segments[index]!.baseOffset <= offset) found = index;
  return found;
}
