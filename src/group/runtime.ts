/**
 * The coordinator runtime: one shard per `__consumer_offsets` partition this
 * node leads, each with a serialized operation queue, keyed timers, and the
 * load that rebuilds it from its log.
 *
 * Write operations on a shard run one at a time, in arrival order: the
 * operation computes {records, response} from the current state; the
 * records go to the partition as one batch (the log's append waits for
 * acks=all); when the append succeeds they are replayed into the shard and
 * the response is released. So the state an operation reads always
 * reflects every earlier operation, and only written records change it.
 * Reads run against the state directly.
 *
 * Loading (this node became the partition's leader): the partition is read
 * from its start to its end and every record replayed through the same
 * `replay` the writes use; control batches commit or abort transactional
 * offsets. Requests meanwhile get COORDINATOR_LOAD_IN_PROGRESS; requests
 * for a partition this node does not lead get NOT_COORDINATOR. Records of a
 * type Spool does not know are skipped; a record of a known type it cannot
 * read (a value version out of range, a truncated value) or cannot replay
 * fails the load, as in Kafka 4.4 (CoordinatorLoaderImpl): the shard is
 * dropped and its groups answer NOT_COORDINATOR, like any partition this
 * node does not serve, until the partition's next leader epoch loads it
 * again. Unloading
 * (leadership lost) cancels the shard's timers and answers parked
 * JoinGroup/SyncGroup calls with NOT_COORDINATOR.
 */
import type { Env } from '../io/env.js';
import type { TimerHandle } from '../io/clock.js';
import { ErrorCode } from '../protocol/errors.js';
import { iterateBatches } from '../protocol/records/batch.js';
import { readControlRecord } from '../protocol/records/control.js';
import { buildBatch, decodeRecords } from '../protocol/records/records.js';
import { isGroupApiError } from './errors.js';
import { appendErrorToResponseError, type CoordinatorResult, type CoordinatorTimer } from './operation.js';
import { decodeGroupRecord, encodeGroupRecord, type GroupRecord } from './records.js';
import { GroupCoordinatorShard, type ShardEnvironment } from './shard.js';

/** What the runtime needs from the broker: the `__consumer_offsets` partitions' logs. */
export interface CoordinatorLog {
  /**
   * Appends one v2 batch (offsets unassigned) to the partition as its
   * leader with acks=all semantics; resolves once the batch is committed,
   * with the offset given to its first record, or a Kafka error code.
   */
  append(partition: number, batch: Buffer): Promise<{ errorCode: number; baseOffset: number }>;
  /**
   * Reads whole batches of the partition from `fromOffset`, at most about
   * `maxBytes` (at least one batch), up to the high watermark.
   */
  read(partition: number, fromOffset: number, maxBytes: number): Promise<{ errorCode: number; records: Buffer; highWatermark: number }>;
}

export interface RuntimeLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type WriteOutcome<T> = { ok: true; response: T } | { ok: false; errorCode: number; message: string | null };
export type ReadOutcome<T> = WriteOutcome<T>;

type ShardStatus = 'loading' | 'active' | 'failed' | 'closed';

interface TimerEntry {
  handle: TimerHandle;
  operation: () => CoordinatorResult<unknown>;
}

interface ShardContext {
  partition: number;
  leaderEpoch: number;
  status: ShardStatus;
  shard: GroupCoordinatorShard;
  timers: Map<string, TimerEntry>;
  tail: Promise<void>;
  cleanupTimer: TimerHandle | null;
}

const LOAD_READ_BYTES = 5 * 1024 * 1024;

export interface RuntimeOptions {
  env: Env;
  log: CoordinatorLog;
  logger: RuntimeLogger;
  /** Builds a shard's environment, minus what the runtime supplies itself. */
  shardEnvironment: (partition: number) => Omit<ShardEnvironment, 'timer' | 'appendLater' | 'partition'>;
  offsetCommitTimeoutMs: number;
  offsetsRetentionCheckIntervalMs: number;
}

export class CoordinatorRuntime {
  private readonly shards = new Map<number, ShardContext>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly options: RuntimeOptions) {}

  /** Partitions this node coordinates and has loaded. */
  activePartitions(): number[] {
    return [...this.shards.values()].filter((c) => c.status === 'active').map((c) => c.partition);
  }

  status(partition: number): ShardStatus | 'none' {
    return this.shards.get(partition)?.status ?? 'none';
  }

  /** The shard, for tests and read views; undefined unless active. */
  shard(partition: number): GroupCoordinatorShard | undefined {
    const context = this.shards.get(partition);
    return context?.status === 'active' ? context.shard : undefined;
  }

  // ---- leadership

  /** This node leads the partition at `leaderEpoch`: load its shard (again, if the epoch moved on). */
  becomeLeader(partition: number, leaderEpoch: number): void {
    const existing = this.shards.get(partition);
    // A failed load is retried only at a newer leader epoch, as Kafka's runtime does.
    if (existing !== undefined && existing.leaderEpoch >= leaderEpoch && existing.status !== 'closed') return;
    if (existing !== undefined) this.close(existing);
    const context = this.newContext(partition, leaderEpoch);
    this.shards.set(partition, context);
    this.track(this.load(context));
  }

  /** This node no longer leads the partition. */
  resign(partition: number): void {
    const existing = this.shards.get(partition);
    if (existing !== undefined) this.close(existing);
  }

  async shutdown(): Promise<void> {
    for (const context of [...this.shards.values()]) this.close(context);
    await this.drain();
  }

  /** Resolves when every queued operation and load has finished (tests, shutdown). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private newContext(partition: number, leaderEpoch: number): ShardContext {
    const timers = new Map<string, TimerEntry>();
    const context: ShardContext = {
      partition,
      leaderEpoch,
      status: 'loading',
      timers,
      tail: Promise.resolve(),
      cleanupTimer: null,
      shard: undefined as unknown as GroupCoordinatorShard,
    };
    context.shard = new GroupCoordinatorShard({
      ...this.options.shardEnvironment(partition),
      partition,
      timer: this.timerFor(context),
      appendLater: (result) => this.track(this.enqueue(context, () => result)),
    });
    return context;
  }

  private close(context: ShardContext): void {
    if (context.status === 'closed') return;
    this.unload(context, 'closed');
    if (this.shards.get(context.partition) === context) this.shards.delete(context.partition);
  }

  /** Stops the shard's timers and drops what it parked; a failed shard stays known (with its epoch) but serves nothing. */
  private unload(context: ShardContext, status: 'closed' | 'failed'): void {
    context.status = status;
    for (const entry of context.timers.values()) entry.handle.cancel();
    context.timers.clear();
    context.cleanupTimer?.cancel();
    context.shard.onUnloaded();
  }

  private async load(context: ShardContext): Promise<void> {
    const startedMs = this.options.env.clock.monotonicMs();
    let offset = 0;
    let count = 0;
    try {
      for (;;) {
        const read = await this.options.log.read(context.partition, offset, LOAD_READ_BYTES);
        if (context.status !== 'loading') return;
        if (read.errorCode !== ErrorCode.NONE) throw new Error(`reading __consumer_offsets-${context.partition} failed with error ${read.errorCode}`);
        let end = offset;
        for (const { position, header } of iterateBatches(read.records)) {
          if (header.lastOffset < offset) continue;
          const batch = read.records.subarray(position, position + header.sizeBytes);
          count += this.replayBatch(context.shard, batch, header.isControl, header.isTransactional ? header.producerId : -1);
          end = header.lastOffset + 1;
        }
        if (end >= read.highWatermark || end === offset) break;
        offset = end;
      }
    } catch (error) {
      this.unload(context, 'failed');
      this.options.logger.error(`loading group coordinator __consumer_offsets-${context.partition} failed: ${(error as Error).message}`);
      return;
    }
    context.shard.onLoaded();
    context.status = 'active';
    this.scheduleCleanup(context);
    const tookMs = Math.round(this.options.env.clock.monotonicMs() - startedMs);
    this.options.logger.info(`loaded group coordinator __consumer_offsets-${context.partition} (epoch ${context.leaderEpoch}, ${count} records, ${tookMs} ms)`);
  }

  /** Replays one batch of the log; returns how many records it held. */
  private replayBatch(shard: GroupCoordinatorShard, batch: Buffer, isControl: boolean, producerId: number): number {
    const decoded = decodeRecords(batch);
    if (decoded.error !== null) throw new Error(`corrupt batch in __consumer_offsets: ${decoded.error.message}`);
    for (const record of decoded.records) {
      if (isControl) {
        const marker = readControlRecord(record);
        if (!('type' in marker)) throw new Error(`bad control record: ${marker.message}`);
        if (marker.type === 'COMMIT' || marker.type === 'ABORT') shard.replayEndTransaction(producerId, marker.type === 'COMMIT');
        continue;
      }
      if (record.key === null) continue;
      const result = decodeGroupRecord(record.key, record.value);
      if (result.ok) shard.replay(result.record, { offset: record.offset, producerId });
    }
    return decoded.records.length;
  }

  private scheduleCleanup(context: ShardContext): void {
    if (context.status !== 'active') return;
    context.cleanupTimer = this.options.env.timers.schedule(this.options.offsetsRetentionCheckIntervalMs, () => {
      if (context.status !== 'active') return;
      this.track(this.enqueue(context, (shard) => shard.offsetOps.cleanupExpired()).then(() => this.scheduleCleanup(context)));
    });
  }

  // ---- operations

  /** Runs a write operation on the partition's shard, after every operation queued before it. */
  write<T>(partition: number, operation: (shard: GroupCoordinatorShard) => CoordinatorResult<T>): Promise<WriteOutcome<T>> {
    const context = this.shards.get(partition);
    const unavailable = unavailableError(context);
    if (unavailable !== null) return Promise.resolve({ ok: false, errorCode: unavailable, message: null });
    const promise = this.enqueue(context!, operation);
    this.track(promise);
    return promise;
  }

  /** Runs a read against the partition's current state. */
  read<T>(partition: number, view: (shard: GroupCoordinatorShard) => T): ReadOutcome<T> {
    const context = this.shards.get(partition);
    const unavailable = unavailableError(context);
    if (unavailable !== null) return { ok: false, errorCode: unavailable, message: null };
    try {
      return { ok: true, response: view(context!.shard) };
    } catch (error) {
      if (isGroupApiError(error)) return { ok: false, errorCode: error.errorCode, message: error.message };
      throw error;
    }
  }

  private enqueue<T>(context: ShardContext, operation: (shard: GroupCoordinatorShard) => CoordinatorResult<T>): Promise<WriteOutcome<T>> {
    return new Promise((resolve, reject) => {
      const run = context.tail.then(() => this.run(context, operation, resolve));
      context.tail = run.then(
        () => undefined,
        () => undefined,
      );
      run.catch(reject);
    });
  }

  /**
   * Runs one operation: computes it, writes its records, replays them. The
   * outcome goes to `respond` when the write completes, or earlier with
   * COORDINATOR_NOT_AVAILABLE when it outlives offsets.commit.timeout.ms;
   * the queue still waits for the write (and its replay) before the next
   * operation, so state and log never disagree.
   */
  private async run<T>(
    context: ShardContext,
    operation: (shard: GroupCoordinatorShard) => CoordinatorResult<T>,
    respond: (outcome: WriteOutcome<T>) => void,
  ): Promise<void> {
    if (context.status !== 'active') {
      respond({ ok: false, errorCode: context.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NOT_COORDINATOR, message: null });
      return;
    }
    let result: CoordinatorResult<T>;
    try {
      result = operation(context.shard);
    } catch (error) {
      if (!isGroupApiError(error)) throw error;
      respond({ ok: false, errorCode: error.errorCode, message: error.message });
      return;
    }
    if (result.records.length === 0) {
      result.onAppend?.(ErrorCode.NONE);
      respond({ ok: true, response: result.response });
      return;
    }
    const timeout = this.options.env.timers.schedule(this.options.offsetCommitTimeoutMs, () => {
      respond({ ok: false, errorCode: appendErrorToResponseError(ErrorCode.REQUEST_TIMED_OUT), message: null });
    });
    const appendError = await this.appendRecords(context, result.records, result.replayRecords);
    timeout.cancel();
    result.onAppend?.(appendError);
    respond(appendError === ErrorCode.NONE ? { ok: true, response: result.response } : { ok: false, errorCode: appendError, message: null });
  }

  /** Writes the records as one batch and replays them; returns the response error (NONE on success). */
  private async appendRecords(context: ShardContext, records: readonly GroupRecord[], replay: boolean): Promise<number> {
    const nowMs = this.options.env.clock.nowMs();
    let batch: Buffer;
    try {
      batch = buildBatch({
        records: records.map((record) => {
          const { key, value } = encodeGroupRecord(record);
          return { key, value, timestamp: nowMs };
        }),
      });
    } catch (error) {
      // A field the record layout cannot hold (a string over 32767 bytes): Kafka's serializer fails the same way.
      this.options.logger.warn(`cannot encode group coordinator records: ${(error as Error).message}`);
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    const appended = await this.options.log.append(context.partition, batch);
    if (appended.errorCode !== ErrorCode.NONE) return appendErrorToResponseError(appended.errorCode);
    if (context.status !== 'active') return ErrorCode.NOT_COORDINATOR;
    if (replay) records.forEach((record, i) => context.shard.replay(record, { offset: appended.baseOffset + i, producerId: -1 }));
    return ErrorCode.NONE;
  }

  private timerFor(context: ShardContext): CoordinatorTimer {
    const { timers } = context;
    const schedule = (key: string, delayMs: number, operation: () => CoordinatorResult<unknown>) => {
      timers.get(key)?.handle.cancel();
      const entry: TimerEntry = {
        operation,
        handle: this.options.env.timers.schedule(delayMs, () => {
          if (timers.get(key) !== entry || context.status !== 'active') return;
          this.track(
            this.enqueue(context, () => {
              // Rescheduled or cancelled while queued: the newer timer wins.
              if (timers.get(key) !== entry) return { records: [], response: undefined, replayRecords: true };
              timers.delete(key);
              return entry.operation();
            }),
          );
        }),
      };
      timers.set(key, entry);
    };
    return {
      schedule,
      scheduleIfAbsent: (key, delayMs, operation) => {
        if (!timers.has(key)) schedule(key, delayMs, operation);
      },
      cancel: (key) => {
        timers.get(key)?.handle.cancel();
        timers.delete(key);
      },
      isScheduled: (key) => timers.has(key),
    };
  }

  private track<T>(promise: Promise<T>): void {
    this.pending.add(promise);
    promise.then(
      () => this.pending.delete(promise),
      (error: unknown) => {
        this.pending.delete(promise);
        this.options.logger.error(`group coordinator operation failed: ${(error as Error).stack ?? String(error)}`);
      },
    );
  }
}

function unavailableError(context: ShardContext | undefined): number | null {
  if (context === undefined || context.status === 'closed' || context.status === 'failed') return ErrorCode.NOT_COORDINATOR;
  if (context.status === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
  return null;
}
