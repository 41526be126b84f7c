/**
 * LogCleaner: the background compaction of logs with cleanup.policy
 * containing `compact` (Kafka's LogCleaner and its CleanerThreads).
 *
 * log.cleaner.threads loops run concurrently on the event loop, each with
 * its own offset map (log.cleaner.dedupe.buffer.size / threads bytes,
 * allocated when the loop first has work) and read slice
 * (log.cleaner.io.buffer.size / threads / 2 bytes, as Kafka splits it
 * between its read and write buffers). A loop cleans the filthiest log, or
 * sleeps log.cleaner.backoff.ms when none needs it. Every slice of work is
 * throttled to log.cleaner.io.max.bytes.per.second (shared by all loops)
 * and followed by a yield, so requests are served between slices.
 *
 * Stopping: `shutdown` makes every pass abort at its next slice (its
 * `.cleaned` files are deleted; the log is untouched) and waits for the
 * loops to end.
 *
 * Reconfiguring (the log.cleaner.* settings Kafka lets AlterConfigs change,
 * LOG_CLEANER_RECONFIGURABLE_CONFIGS): the loops stop as at shutdown and
 * start again with the new settings, as Kafka's LogCleaner.reconfigure
 * restarts its threads; checkpoints and uncleanable logs are kept.
 */
import type { Clock, TimerHandle, Timers } from '../../io/clock.js';
import type { FileSystem } from '../../io/fs.js';
import { isIoError } from '../errors.js';
import type { Log } from '../log.js';
import type { StorageLogger } from '../log-config.js';
import { Cleaner, CleaningAbortedError, type CleanerStats } from './cleaner.js';
import { LogCleanerManager, type CleanerSource } from './log-cleaner-manager.js';
import { SkimpyOffsetMap } from './offset-map.js';
import { Throttler } from './throttler.js';

/** The log.cleaner.* broker settings, Kafka's defaults in DEFAULT_CLEANER_CONFIG. */
export interface CleanerConfig {
  /** log.cleaner.threads. */
  threads: number;
  /** log.cleaner.dedupe.buffer.size: offset map memory, shared by the threads. */
  dedupeBufferBytes: number;
  /** log.cleaner.io.buffer.load.factor: how full an offset map may get. */
  dedupeBufferLoadFactor: number;
  /** log.cleaner.io.buffer.size: I/O buffer memory, shared by the threads. */
  ioBufferBytes: number;
  /** log.cleaner.io.max.bytes.per.second (Infinity: unthrottled). */
  ioBytesPerSecondMax: number;
  /** log.cleaner.backoff.ms: sleep when no log needs cleaning. */
  backoffMs: number;
}

export const DEFAULT_CLEANER_CONFIG: Readonly<CleanerConfig> = Object.freeze({
  threads: 1,
  dedupeBufferBytes: 128 * 1024 * 1024,
  dedupeBufferLoadFactor: 0.9,
  ioBufferBytes: 512 * 1024,
  ioBytesPerSecondMax: Infinity,
  backoffMs: 15_000,
});

export interface LogCleanerEnv {
  fs: FileSystem;
  clock: Clock;
  timers: Timers;
}

export interface LogCleanerOptions {
  config: CleanerConfig;
  source: CleanerSource;
  logger: StorageLogger;
  /** Between slices; default: the next turn of the event loop (Timers.defer). */
  yieldSlice?: () => Promise<void>;
}

export class LogCleaner {
  readonly manager: LogCleanerManager;
  private cleaners: (Cleaner | null)[];
  private throttler: Throttler;
  private loops: Promise<void>[] = [];
  private readonly sleeps = new Map<number, { timer: TimerHandle; wake: () => void }>();
  private stopping = false;
  /** Stats of the last pass (dump-log, describe and the benchmark report them). */
  lastStats: CleanerStats | null = null;

  constructor(
    private readonly env: LogCleanerEnv,
    private options: LogCleanerOptions,
  ) {
    this.manager = new LogCleanerManager(env.fs, options.source, options.logger);
    this.throttler = new Throttler(options.config.ioBytesPerSecondMax, env);
    this.cleaners = Array.from({ length: options.config.threads }, () => null);
  }

  /** Starts the cleaner loops. */
  startup(): void {
    for (let thread = 0; thread < this.cleaners.length; thread++) this.loops.push(this.loop(thread));
  }

  /** The settings the loops run with. */
  get config(): Readonly<CleanerConfig> {
    return this.options.config;
  }

  /** Restarts the loops with new settings (passes in progress are aborted and redone later). */
  async reconfigure(config: CleanerConfig): Promise<void> {
    await this.shutdown();
    this.options = { ...this.options, config };
    this.throttler = new Throttler(config.ioBytesPerSecondMax, this.env);
    this.cleaners = Array.from({ length: config.threads }, () => null);
    this.loops = [];
    this.stopping = false;
    this.startup();
  }

  /** Aborts passes in progress and waits for the loops to end. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const { timer, wake } of this.sleeps.values()) {
      timer.cancel();
      wake();
    }
    await Promise.all(this.loops);
  }

  private async loop(thread: number): Promise<void> {
    while (!this.stopping) {
      const cleaned = await this.cleanFilthiestLog(thread).catch((error: unknown) => {
        this.options.logger.error(`log cleaner ${thread}: ${String(error)}`);
        return false;
      });
      if (!cleaned && !this.stopping) await this.sleep(thread, this.options.config.backoffMs);
    }
  }

  private sleep(thread: number, delayMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        this.sleeps.delete(thread);
        resolve();
      };
      this.sleeps.set(thread, { timer: this.env.timers.schedule(delayMs, wake), wake });
    });
  }

  /**
   * One pass of one cleaner on the filthiest log; false when no log needed
   * cleaning. A pass that fails on the log's data marks the log uncleanable
   * until restart (Kafka does the same); a disk error takes the log offline;
   * an aborted pass changes nothing.
   */
  async cleanFilthiestLog(thread = 0): Promise<boolean> {
    const candidate = await this.manager.grabFilthiestCompactedLog(this.env.clock.nowMs());
    if (candidate === null) return false;
    const { log } = candidate;
    let endOffset: number | null = null;
    try {
      const result = await this.cleanerOf(thread).clean(candidate, this.options.source.activeProducers(log));
      endOffset = result.endOffset;
      this.lastStats = result.stats;
      this.options.logger.info(describePass(log, candidate.cleanableRatio, result.stats));
    } catch (error) {
      // A disk error takes the log (and its directory) offline, as any other I/O on it does.
      if (isIoError(error)) await log.maybeHandleIOException(() => Promise.reject(error)).catch(() => {});
      else if (!(error instanceof CleaningAbortedError) && !log.isClosed && !log.isOffline) {
        this.options.logger.error(`${log.name}: cleaning failed, the log is not cleaned again until restart: ${String(error)}`);
        this.manager.markUncleanable(log);
      }
    } finally {
      await log.maybeHandleIOException(() => this.manager.doneCleaning(candidate, endOffset));
    }
    return true;
  }

  private cleanerOf(thread: number): Cleaner {
    const existing = this.cleaners[thread];
    if (existing !== null && existing !== undefined) return existing;
    const config = this.options.config;
    const cleaner = new Cleaner({
      fs: this.env.fs,
      clock: this.env.clock,
      offsetMap: new SkimpyOffsetMap(Math.floor(config.dedupeBufferBytes / config.threads)),
      ioBufferBytes: Math.max(1, Math.floor(config.ioBufferBytes / config.threads / 2)),
      dedupeBufferLoadFactor: config.dedupeBufferLoadFactor,
      throttler: this.throttler,
      yieldSlice: this.options.yieldSlice ?? (() => new Promise<void>((resolve) => this.env.timers.defer(resolve))),
      checkDone: (log) => this.checkDone(log),
    });
    this.cleaners[thread] = cleaner;
    return cleaner;
  }

  private checkDone(log: Log): void {
    if (this.stopping) throw new CleaningAbortedError('the log cleaner is stopping');
    if (log.isClosed || log.isOffline) throw new CleaningAbortedError(`${log.name} was closed`);
  }
}

function describePass(log: Log, cleanableRatio: number, stats: CleanerStats): string {
  const seconds = Math.max(stats.endMs - stats.startMs, 1) / 1000;
  const megabytes = stats.bytesRead / (1024 * 1024);
  return (
    `${log.name}: cleaned (dirty ratio ${(cleanableRatio * 100).toFixed(1)}%): read ${megabytes.toFixed(1)} MB, ` +
    `wrote ${(stats.bytesWritten / (1024 * 1024)).toFixed(1)} MB in ${seconds.toFixed(1)} s (${(megabytes / seconds).toFixed(1)} MB/s); ` +
    `kept ${stats.messagesRetained} of ${stats.messagesRead} messages`
  );
}
