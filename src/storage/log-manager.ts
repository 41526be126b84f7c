/**
 * LogManager: owns one log directory (`log.dirs` entry): loads every
 * partition directory in it, creates and deletes logs, writes the
 * directory's checkpoint files and runs the periodic storage tasks.
 *
 * Files in the log directory (formats in checkpoint-file.ts):
 *   recovery-point-offset-checkpoint  per partition: offset below which all is fsynced
 *   log-start-offset-checkpoint       per partition whose log start is inside its first segment
 *   replication-offset-checkpoint     per partition: high watermark
 *   .kafka_cleanshutdown              present only between a clean shutdown and the next start
 *                                     (content: {"version":0,"brokerEpoch":N}, as Kafka 4 writes)
 *
 * Crash policy: the clean-shutdown marker is written last at shutdown,
 * after every log is flushed and closed and the checkpoints written; it is
 * removed (durably) at start before any log is opened for writing, so a
 * crash at any later moment is seen as unclean. A checkpoint file that does
 * not parse is ignored with a warning: recovery then scans more, which is
 * slower but never wrong. Truncation rewrites the recovery-point checkpoint
 * at once, so a crash cannot trust a recovery point above a truncation.
 *
 * Disk errors: an I/O error anywhere in the directory (a log, a checkpoint,
 * a rename) is reported to the LogDirFailureChannel, which takes the whole
 * directory offline (Kafka's handleLogDirFailure): every log in it fails
 * with KafkaStorageError from then on, its handles are dropped, and nothing
 * more is written there, the clean-shutdown marker included, so the next
 * start recovers it.
 *
 * Periodic tasks (through the Timers seam): recovery-point and log-start
 * checkpoints (log.flush.offset.checkpoint.interval.ms,
 * log.flush.start.offset.checkpoint.interval.ms), retention
 * (log.retention.check.interval.ms), high-watermark checkpoint
 * (replica.high.watermark.checkpoint.interval.ms).
 */
import { posix } from 'node:path';
import type { TimerHandle } from '../io/clock.js';
import {
  CorruptCheckpointError,
  offsetCheckpointFormat,
  readCheckpointFile,
  writeCheckpointFile,
  type TopicPartitionOffset,
} from './checkpoint-file.js';
import { KafkaStorageError, isIoError } from './errors.js';
import { LogDirFailureChannel } from './log-dir-failure-channel.js';
import {
  CLEAN_SHUTDOWN_FILE,
  CLUSTER_METADATA_TOPIC_NAME,
  DELETE_DIR_SUFFIX,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_OFFSET_CHECKPOINT_FILE,
  parseTopicPartitionName,
  partitionDirName,
  type TopicPartition,
} from './file-names.js';
import type { Log, LogEnv } from './log.js';
import { silentStorageLogger, type LogConfig, type StorageLogger } from './log-config.js';
import { loadLog, mkdirDurably } from './log-loader.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';

export interface LogManagerOptions {
  logDir: string;
  /** Config of a partition's log (topic overrides on top of broker defaults). */
  configFor: (topicPartition: TopicPartition) => LogConfig;
  logger?: StorageLogger;
  /** Where I/O errors are reported; default a channel of this directory alone. */
  failureChannel?: LogDirFailureChannel;
  /** Written into the clean-shutdown marker (the broker's epoch at shutdown). Default -1. */
  brokerEpoch?: number | (() => number);
  flushOffsetCheckpointIntervalMs?: number;
  flushStartOffsetCheckpointIntervalMs?: number;
  retentionCheckIntervalMs?: number;
  highWatermarkCheckpointIntervalMs?: number;
}

/**
 * Asked to open `__cluster_metadata-0` as a partition log. The Raft metadata
 * log lives in that directory; a second Log over its files would write into
 * it, and deleting such a "topic" would delete every topic's metadata.
 */
export class MetadataLogDirError extends Error {
  override readonly name = 'MetadataLogDirError';
  constructor(topicPartition: TopicPartition) {
    super(`${partitionDirName(topicPartition)} belongs to the Raft metadata log; it is never opened as a partition log`);
  }
}

const DEFAULT_INTERVALS_MS = {
  flushOffsetCheckpoint: 60_000,
  flushStartOffsetCheckpoint: 60_000,
  retentionCheck: 300_000,
  highWatermarkCheckpoint: 5_000,
};

export class LogManager {
  private readonly logs = new Map<string, Log>();
  private readonly logger: StorageLogger;
  private readonly timers: TimerHandle[] = [];
  private checkpointing: Promise<void> = Promise.resolve();
  private readonly runningTasks = new Set<Promise<unknown>>();
  private closed = false;
  private offlineHandled = false;
  private readonly failureChannel: LogDirFailureChannel;
  /** Set when the log dir had a clean-shutdown marker at start. */
  hadCleanShutdown = false;
  /** The broker epoch the clean-shutdown marker held (KIP-966's previousBrokerEpoch); -1 after an unclean shutdown. */
  previousBrokerEpoch = -1;

  private constructor(
    private readonly env: LogEnv,
    private readonly options: LogManagerOptions,
  ) {
    this.logger = options.logger ?? silentStorageLogger;
    this.failureChannel = options.failureChannel ?? new LogDirFailureChannel(this.logger);
    this.failureChannel.onOfflineLogDir((logDir) => {
      if (logDir === this.logDir) this.handleLogDirFailure();
    });
  }

  /** Loads every partition directory of `options.logDir` (creating the directory if needed). */
  static async open(env: LogEnv, options: LogManagerOptions): Promise<LogManager> {
    const manager = new LogManager(env, options);
    await manager.loadLogs();
    return manager;
  }

  get logDir(): string {
    return this.options.logDir;
  }

  getLog(topicPartition: TopicPartition): Log | undefined {
    return this.logs.get(topicPartitionKey(topicPartition));
  }

  allLogs(): Log[] {
    return [...this.logs.values()];
  }

  /** False once an I/O error took this directory offline (until the process restarts). */
  get isOnline(): boolean {
    return !this.failureChannel.hasOfflineLogDir(this.logDir);
  }

  /** The partition's log, created empty (at offset 0) if it does not exist yet. Never `__cluster_metadata`'s. */
  async getOrCreateLog(topicPartition: TopicPartition, config?: LogConfig): Promise<Log> {
    if (topicPartition.topic === CLUSTER_METADATA_TOPIC_NAME) throw new MetadataLogDirError(topicPartition);
    const existing = this.getLog(topicPartition);
    if (existing !== undefined) return existing;
    this.checkOnline();
    return this.maybeHandleIOException(`creating the log of ${topicPartitionKey(topicPartition)}`, () =>
      this.load(topicPartition, { hadCleanShutdown: true, config: config ?? this.options.configFor(topicPartition) }),
    );
  }

  /**
   * Runs I/O in this directory that no Log guards (checkpoints, renames,
   * partition metadata): an I/O error takes the directory offline and
   * surfaces as KafkaStorageError.
   */
  async maybeHandleIOException<T>(what: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (!isIoError(error)) throw error;
      this.failureChannel.maybeAddOfflineLogDir(this.logDir, `${this.logDir}: ${what} failed`, error);
      throw new KafkaStorageError(`log directory ${this.logDir} is offline after a disk error: ${error.message}`, { cause: error });
    }
  }

  private checkOnline(): void {
    const cause = this.failureChannel.offlineCause(this.logDir);
    if (cause !== undefined) throw new KafkaStorageError(`log directory ${this.logDir} is offline: ${cause.message}`, { cause });
  }

  /**
   * The directory went offline: background tasks stop, every log fails from
   * now on and drops its handles. Idempotent; the replica manager calls it
   * before it answers for the directory's partitions.
   */
  handleLogDirFailure(): void {
    const cause = this.failureChannel.offlineCause(this.logDir);
    if (cause === undefined || this.offlineHandled) return;
    this.offlineHandled = true;
    this.logger.warn(`${this.logDir}: stopping serving logs in the failed log directory`);
    for (const timer of this.timers) timer.cancel();
    for (const log of this.logs.values()) {
      log.markOffline(cause);
      void log.closeUncleanly();
    }
  }

  /**
   * Removes a partition's log: closes it, renames its directory to
   * `<topic>-<partition>.<id>-delete` and removes that after file.delete.delay.ms.
   */
  async deleteLog(topicPartition: TopicPartition): Promise<void> {
    const key = topicPartitionKey(topicPartition);
    const log = this.logs.get(key);
    if (log === undefined) return;
    this.logs.delete(key);
    await log.closeUncleanly();
    this.checkOnline();
    const deletedDir = `${log.dir}.${this.env.clock.nowMs().toString(16)}${DELETE_DIR_SUFFIX}`;
    await this.maybeHandleIOException(`deleting ${log.name}`, async () => {
      await this.env.fs.rename(log.dir, deletedDir);
      await this.env.fs.syncDir(this.options.logDir);
    });
    // Long.MAX_VALUE means never while running; the next start removes `.deleted` directories.
    if (Number.isFinite(log.config.fileDeleteDelayMs)) this.env.timers.schedule(log.config.fileDeleteDelayMs, () => {
      this.env.fs.removeTree(deletedDir).catch((error: unknown) => this.logger.warn(`could not remove ${deletedDir}: ${String(error)}`));
    });
    await this.checkpointAll();
  }

  /** Starts the periodic checkpoint and retention tasks. */
  startBackgroundTasks(): void {
    const every = (intervalMs: number, task: () => Promise<unknown>) => {
      if (!Number.isFinite(intervalMs)) return; // Long.MAX_VALUE: never
      const run = () => {
        if (this.closed || !this.isOnline) return;
        const running: Promise<unknown> = task()
          .catch((error: unknown) => this.logger.error(`storage task failed: ${String(error)}`))
          .finally(() => {
            this.runningTasks.delete(running);
            if (!this.closed && this.isOnline) this.timers.push(this.env.timers.schedule(intervalMs, run));
          });
        this.runningTasks.add(running);
      };
      this.timers.push(this.env.timers.schedule(intervalMs, run));
    };
    every(this.options.flushOffsetCheckpointIntervalMs ?? DEFAULT_INTERVALS_MS.flushOffsetCheckpoint, () => this.checkpointRecoveryPoints());
    every(this.options.flushStartOffsetCheckpointIntervalMs ?? DEFAULT_INTERVALS_MS.flushStartOffsetCheckpoint, () =>
      this.checkpointLogStartOffsets(),
    );
    every(this.options.retentionCheckIntervalMs ?? DEFAULT_INTERVALS_MS.retentionCheck, () => this.cleanupLogs());
    every(this.options.highWatermarkCheckpointIntervalMs ?? DEFAULT_INTERVALS_MS.highWatermarkCheckpoint, () =>
      this.checkpointHighWatermarks(),
    );
  }

  /** Resolves when the background tasks started so far have finished (tests, shutdown). */
  async awaitBackgroundTasks(): Promise<void> {
    await Promise.all([...this.runningTasks]);
  }

  /** One retention pass over every online log; returns the segments deleted. */
  async cleanupLogs(): Promise<number> {
    let deleted = 0;
    for (const log of this.logs.values()) {
      if (log.isOffline) continue;
      deleted += await log.deleteOldSegments().catch((error: unknown) => {
        if (error instanceof KafkaStorageError) return 0;
        throw error;
      });
    }
    if (deleted > 0) await this.checkpointLogStartOffsets();
    return deleted;
  }

  // ---- checkpoints -----------------------------------------------------------------

  checkpointRecoveryPoints(): Promise<void> {
    return this.writeOffsets(RECOVERY_POINT_CHECKPOINT_FILE, (log) => log.recoveryPoint);
  }

  /** Kafka lists only logs whose start offset lies inside their first segment. */
  checkpointLogStartOffsets(): Promise<void> {
    return this.writeOffsets(LOG_START_OFFSET_CHECKPOINT_FILE, (log) =>
      log.logStartOffset > log.logSegments[0]!.baseOffset ? log.logStartOffset : null,
    );
  }

  checkpointHighWatermarks(): Promise<void> {
    return this.writeOffsets(REPLICATION_OFFSET_CHECKPOINT_FILE, (log) => log.highWatermark);
  }

  async checkpointAll(): Promise<void> {
    await this.checkpointRecoveryPoints();
    await this.checkpointLogStartOffsets();
    await this.checkpointHighWatermarks();
  }

  /** Writes one offset checkpoint file, one write at a time; nothing once the directory is offline. */
  private writeOffsets(file: string, offsetOf: (log: Log) => number | null): Promise<void> {
    const run = this.checkpointing.then(async () => {
      if (!this.isOnline) return;
      const entries: TopicPartitionOffset[] = [];
      for (const log of this.logs.values()) {
        if (log.isOffline) continue;
        const offset = offsetOf(log);
        if (offset !== null) entries.push({ ...log.topicPartition, offset });
      }
      await this.maybeHandleIOException(`writing ${file}`, () =>
        writeCheckpointFile(this.env.fs, posix.join(this.options.logDir, file), entries, offsetCheckpointFormat),
      );
    });
    this.checkpointing = run.catch(() => {});
    return run;
  }

  // ---- life cycle ----------------------------------------------------------------------

  /**
   * Clean shutdown: flushes and closes every log, writes the checkpoints,
   * then the clean-shutdown marker (only if no log went offline).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) timer.cancel();
    await this.awaitBackgroundTasks();
    let allClean = true;
    for (const log of this.logs.values()) {
      try {
        await log.close();
      } catch (error) {
        if (!(error instanceof KafkaStorageError)) throw error;
      }
      if (log.isOffline) allClean = false;
    }
    await this.checkpointAll().catch((error: unknown) => {
      if (!(error instanceof KafkaStorageError)) throw error;
    });
    if (!allClean || !this.isOnline) {
      this.logger.warn(`${this.options.logDir}: the log directory is offline; not marking the shutdown clean`);
      return;
    }
    const epoch = this.options.brokerEpoch;
    const marker = JSON.stringify({ version: 0, brokerEpoch: (typeof epoch === 'function' ? epoch() : epoch) ?? -1 });
    await this.maybeHandleIOException('writing the clean-shutdown marker', async () => {
      await this.env.fs.writeFileAtomic(posix.join(this.options.logDir, CLEAN_SHUTDOWN_FILE), Buffer.from(marker));
      await this.env.fs.syncDir(this.options.logDir);
    }).catch(() => undefined);
  }

  // ---- loading ------------------------------------------------------------------------------

  private async loadLogs(): Promise<void> {
    const dir = this.options.logDir;
    await mkdirDurably(this.env.fs, dir);
    const markerPath = posix.join(dir, CLEAN_SHUTDOWN_FILE);
    this.hadCleanShutdown = (await this.env.fs.stat(markerPath)) !== null;
    if (this.hadCleanShutdown) {
      this.previousBrokerEpoch = brokerEpochOfMarker(await this.env.fs.readFile(markerPath));
      await this.env.fs.unlink(markerPath);
      await this.env.fs.syncDir(dir);
    }
    const checkpoints = {
      recoveryPoints: await this.readOffsets(RECOVERY_POINT_CHECKPOINT_FILE),
      logStartOffsets: await this.readOffsets(LOG_START_OFFSET_CHECKPOINT_FILE),
      highWatermarks: await this.readOffsets(REPLICATION_OFFSET_CHECKPOINT_FILE),
    };
    for (const name of await this.env.fs.readdir(dir)) {
      const path = posix.join(dir, name);
      if (name.endsWith(DELETE_DIR_SUFFIX)) {
        await this.env.fs.removeTree(path);
        continue;
      }
      const topicPartition = parseTopicPartitionName(name);
      // The Raft log of __cluster_metadata lives here too but belongs to src/raft (Kafka's LogManager skips it as well).
      if (topicPartition === null || topicPartition.topic === CLUSTER_METADATA_TOPIC_NAME) continue;
      if (!(await this.env.fs.stat(path))?.isDirectory) continue;
      const key = topicPartitionKey(topicPartition);
      await this.load(topicPartition, {
        hadCleanShutdown: this.hadCleanShutdown,
        config: this.options.configFor(topicPartition),
        recoveryPoint: checkpoints.recoveryPoints.get(key) ?? 0,
        logStartOffset: checkpoints.logStartOffsets.get(key) ?? 0,
        highWatermark: checkpoints.highWatermarks.get(key) ?? 0,
      });
    }
  }

  private async load(
    topicPartition: TopicPartition,
    options: { hadCleanShutdown: boolean; config: LogConfig; recoveryPoint?: number; logStartOffset?: number; highWatermark?: number },
  ): Promise<Log> {
    const log = await loadLog(this.env, {
      dir: posix.join(this.options.logDir, partitionDirName(topicPartition)),
      topicPartition,
      logger: this.logger,
      onRecoveryPointLowered: () => this.checkpointRecoveryPoints(),
      onIoError: (error) => this.failureChannel.maybeAddOfflineLogDir(this.logDir, `${this.logDir}: I/O error in ${partitionDirName(topicPartition)}`, error),
      ...options,
    });
    this.logs.set(topicPartitionKey(topicPartition), log);
    return log;
  }

  /** A checkpoint file's offsets by `topic-partition`; empty when the file is absent or unreadable. */
  private async readOffsets(file: string): Promise<Map<string, number>> {
    const path = posix.join(this.options.logDir, file);
    try {
      const entries = (await readCheckpointFile(this.env.fs, path, offsetCheckpointFormat)) ?? [];
      return new Map(entries.map((entry) => [topicPartitionKey(entry), entry.offset]));
    } catch (error) {
      if (!(error instanceof CorruptCheckpointError)) throw error;
      this.logger.warn(`${error.message}; ignoring it`);
      return new Map();
    }
  }
}

/** The brokerEpoch of a clean-shutdown marker, -1 when it does not parse (Kafka's CleanShutdownFileHandler reads it so). */
function brokerEpochOfMarker(content: Buffer): number {
  try {
    const parsed = JSON.parse(content.toString('utf8')) as { brokerEpoch?: unknown };
    return typeof parsed.brokerEpoch === 'number' && Number.isSafeInteger(parsed.brokerEpoch) ? parsed.brokerEpoch : -1;
  } catch {
    return -1;
  }
}
