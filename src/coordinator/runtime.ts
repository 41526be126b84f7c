/**
 * The coordinator runtime (Kafka 4's CoordinatorRuntime), shared by the
 * group coordinator on `__consumer_offsets` and the transaction coordinator
 * on `__transaction_state`: one shard per partition of the coordinator's
 * topic that this node leads, each with a serialized operation queue, keyed
 * timers, and the load that rebuilds it from its log. What differs between
 * coordinators is given to it: the shard, the record codec, the topic.
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
 * `replay` the writes use; control batches end the producer's transaction
 * in the shard. Requests meanwhile get COORDINATOR_LOAD_IN_PROGRESS;
 * requests for a partition this node does not lead get NOT_COORDINATOR.
 * Records the codec does not know are skipped; a record of a known type it
 * cannot read (a value version out of range, a truncated value) or cannot
 * replay fails the load, as in Kafka 4.4 (CoordinatorLoaderImpl): the shard
 * is dropped and answers NOT_COORDINATOR, like any partition this node does
 * not serve, until the partition's next leader epoch loads it again.
 * Unloading (leadership lost) cancels the shard's timers and lets the shard
 * answer what it parked.
 */
import type { Env } from '../io/env.js';
import type { MetadataDelta } from '../metadata/image.js';
import type { TimerHandle } from '../io/clock.js';
import { ErrorCode } from '../protocol/errors.js';
import { iterateBatches } from '../protocol/records/batch.js';
import { buildControlBatch, readControlRecord } from '../protocol/records/control.js';
import { buildBatch, decodeRecords } from '../protocol/records/records.js';
import { isCoordinatorApiError } from './errors.js';
import { appendErrorToResponseError, type CoordinatorResult, type CoordinatorTimer } from './operation.js';

/** What the runtime needs from the broker: the coordinator topic's partitions' logs. */
export interface CoordinatorLog {
  /**
   * Appends one v2 batch (offsets unassigned) to the partition as its
   * leader with acks=all semantics; resolves once the batch is committed,
   * with the offset given to its first record, or a Kafka error code.
   */
  append(partition: number, batch: Buffer, options?: { transactionVersion?: number }): Promise<{ errorCode: number; baseOffset: number }>;
  /**
   * Reads whole batches of the partition from `fromOffset`, at most about
   * `maxBytes` (at least one batch), up to the log end offset, as Kafka's
   * coordinator loaders read (FetchIsolation.LOG_END). Not the high
   * watermark: a new leader's high watermark may still be below records
   * the old leader had committed (its followers have not fetched yet), and
   * a load that stopped there would act on stale state, and write after
   * records it never replayed (a transaction in PrepareCommit loaded as
   * Ongoing, then aborted while its offsets were committed).
   */
  read(partition: number, fromOffset: number, maxBytes: number): Promise<{ errorCode: number; records: Buffer }>;
}

export interface RuntimeLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type WriteOutcome<T> = { ok: true; response: T } | { ok: false; errorCode: number; message: string | null };
export type ReadOutcome<T> = WriteOutcome<T>;

type ShardStatus = 'loading' | 'active' | 'failed' | 'closed';

/** Where a replayed record sits: its offset and, for transactional writes, its producer id. */
export interface RecordPosition {
  offset: number;
  producerId: number;
}

/** What the runtime asks of a coordinator's shard (Kafka's CoordinatorShard). */
export interface CoordinatorShard<R> {
  replay(record: R, position: RecordPosition): void;
  /** A COMMIT or ABORT marker in the partition ends the producer's transaction. */
  replayEndTransaction(producerId: number, committed: boolean): void;
  onLoaded(): void;
  onUnloaded(): void;
}

/**
 * A coordinator's record layout. `decode` returns null for a record type the
 * coordinator does not own (skipped) and throws for one it cannot read
 * (the load fails).
 */
export interface RecordCodec<R> {
  encode(record: R): { key: Buffer; value: Buffer | null };
  decode(key: Buffer, value: Buffer | null): R | null;
}

/** What the runtime gives a new shard: its timers and a way to queue a result produced outside a request. */
export interface ShardContextServices<R> {
  partition: number;
  /** The partition's leader epoch this shard was loaded at (the transaction coordinator's coordinator epoch). */
  leaderEpoch: number;
  timer: CoordinatorTimer<R>;
  appendLater: (result: CoordinatorResult<unknown, R>) => void;
}

export interface PeriodicOperation<S, R> {
  intervalMs: number;
  operation: (shard: S) => CoordinatorResult<unknown, R>;
}

interface TimerEntry<R> {
  handle: TimerHandle;
  operation: () => CoordinatorResult<unknown, R>;
}

interface ShardContext<S, R> {
  partition: number;
  leaderEpoch: number;
  status: ShardStatus;
  shard: S;
  timers: Map<string, TimerEntry<R>>;
  tail: Promise<void>;
  periodicTimers: TimerHandle[];
}

const LOAD_READ_BYTES = 5 * 1024 * 1024;

export interface RuntimeOptions<S, R> {
  env: Env;
  log: CoordinatorLog;
  logger: RuntimeLogger;
  /** The coordinator's topic, for messages: `__consumer_offsets`, `__transaction_state`. */
  topic: string;
  /** The coordinator's name, for messages: "group coordinator". */
  name: string;
  codec: RecordCodec<R>;
  newShard: (services: ShardContextServices<R>) => S;
  /** How long a write waits for its append before answering (offsets.commit.timeout.ms, transaction's request timeout). */
  writeTimeoutMs: number;
  /** Operations run periodically on every active shard (offsets retention, timed-out transactions, expired ids). */
  periodic: readonly PeriodicOperation<S, R>[];
}

export class CoordinatorRuntime<S extends CoordinatorShard<R>, R> {
  private readonly shards = new Map<number, ShardContext<S, R>>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly options: RuntimeOptions<S, R>) {}

  /** Partitions this node coordinates and has loaded. */
  activePartitions(): number[] {
    return [...this.shards.values()].filter((c) => c.status === 'active').map((c) => c.partition);
  }

  status(partition: number): ShardStatus | 'none' {
    return this.shards.get(partition)?.status ?? 'none';
  }

  /** The shard, for tests and read views; undefined unless active. */
  shard(partition: number): S | undefined {
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

  /** Loads or unloads shards as this node gains or loses the leadership of the topic's partitions, or the topic is deleted. */
  followLeadership(delta: Pick<MetadataDelta, 'changedPartitions' | 'deletedTopics'>, nodeId: number): void {
    for (const partition of delta.changedPartitions) {
      if (partition.topicName !== this.options.topic) continue;
      if (partition.leader === nodeId) this.becomeLeader(partition.partition, partition.leaderEpoch);
      else this.resign(partition.partition);
    }
    for (const topic of delta.deletedTopics) {
      if (topic.name === this.options.topic) for (const partition of topic.partitions.keys()) this.resign(partition);
    }
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

  private newContext(partition: number, leaderEpoch: number): ShardContext<S, R> {
    const timers = new Map<string, TimerEntry<R>>();
    const context: ShardContext<S, R> = {
      partition,
      leaderEpoch,
      status: 'loading',
      timers,
      tail: Promise.resolve(),
      periodicTimers: [],
      shard: undefined as unknown as S,
    };
    context.shard = this.options.newShard({
      partition,
      leaderEpoch,
      timer: this.timerFor(context),
      appendLater: (result) => this.track(this.enqueue(context, () => result)),
    });
    return context;
  }

  private close(context: ShardContext<S, R>): void {
    if (context.status === 'closed') return;
    this.unload(context, 'closed');
    if (this.shards.get(context.partition) === context) this.shards.delete(context.partition);
  }

  /** Stops the shard's timers and drops what it parked; a failed shard stays known (with its epoch) but serves nothing. */
  private unload(context: ShardContext<S, R>, status: 'closed' | 'failed'): void {
    context.status = status;
    for (const entry of context.timers.values()) entry.handle.cancel();
    context.timers.clear();
    for (const handle of context.periodicTimers) handle.cancel();
    context.periodicTimers = [];
    context.shard.onUnloaded();
  }

  private async load(context: ShardContext<S, R>): Promise<void> {
    const startedMs = this.options.env.clock.monotonicMs();
    let offset = 0;
    let count = 0;
    try {
      for (;;) {
        const read = await this.options.log.read(context.partition, offset, LOAD_READ_BYTES);
        if (context.status !== 'loading') return;
        if (read.errorCode !== ErrorCode.NONE) throw new Error(`reading ${this.options.topic}-${context.partition} failed with error ${read.errorCode}`);
        let end = offset;
        for (const { position, header } of iterateBatches(read.records)) {
          if (header.lastOffset < offset) continue;
          const batch = read.records.subarray(position, position + header.sizeBytes);
          count += this.replayBatch(context.shard, batch, header.isControl, header.isTransactional ? header.producerId : -1);
          end = header.lastOffset + 1;
        }
        if (end === offset) break;
        offset = end;
      }
    } catch (error) {
      this.unload(context, 'failed');
      this.options.logger.error(`loading ${this.options.name} ${this.options.topic}-${context.partition} failed: ${(error as Error).message}`);
      return;
    }
    // Active before onLoaded: what it starts must find the shard serving (the markers of a
    // transaction loaded in PrepareCommit were dropped when the shard still looked unloaded).
    context.status = 'active';
    context.shard.onLoaded();
    for (const periodic of this.options.periodic) this.schedulePeriodic(context, periodic);
    const tookMs = Math.round(this.options.env.clock.monotonicMs() - startedMs);
    this.options.logger.info(`loaded ${this.options.name} ${this.options.topic}-${context.partition} (epoch ${context.leaderEpoch}, ${count} records, ${tookMs} ms)`);
  }

  /** Replays one batch of the log; returns how many records it held. */
  private replayBatch(shard: S, batch: Buffer, isControl: boolean, producerId: number): number {
    const decoded = decodeRecords(batch);
    if (decoded.error !== null) throw new Error(`corrupt batch in ${this.options.topic}: ${decoded.error.message}`);
    for (const record of decoded.records) {
      if (isControl) {
        const marker = readControlRecord(record);
        if (!('type' in marker)) throw new Error(`bad control record: ${marker.message}`);
        if (marker.type === 'COMMIT' || marker.type === 'ABORT') shard.replayEndTransaction(producerId, marker.type === 'COMMIT');
        continue;
      }
      if (record.key === null) continue;
      const decodedRecord = this.options.codec.decode(record.key, record.value);
      if (decodedRecord !== null) shard.replay(decodedRecord, { offset: record.offset, producerId });
    }
    return decoded.records.length;
  }

  private schedulePeriodic(context: ShardContext<S, R>, periodic: PeriodicOperation<S, R>): void {
    if (context.status !== 'active') return;
    const handle = this.options.env.timers.schedule(periodic.intervalMs, () => {
      context.periodicTimers = context.periodicTimers.filter((h) => h !== handle);
      if (context.status !== 'active') return;
      this.track(this.enqueue(context, periodic.operation).then(() => this.schedulePeriodic(context, periodic)));
    });
    context.periodicTimers.push(handle);
  }

  // ---- operations

  /** Runs a write operation on the partition's shard, after every operation queued before it. */
  write<T>(partition: number, operation: (shard: S) => CoordinatorResult<T, R>): Promise<WriteOutcome<T>> {
    const context = this.shards.get(partition);
    const unavailable = unavailableError(context);
    if (unavailable !== null) return Promise.resolve({ ok: false, errorCode: unavailable, message: null });
    const promise = this.enqueue(context!, operation);
    this.track(promise);
    return promise;
  }

  /** Runs a read against the partition's current state. */
  read<T>(partition: number, view: (shard: S) => T): ReadOutcome<T> {
    const context = this.shards.get(partition);
    const unavailable = unavailableError(context);
    if (unavailable !== null) return { ok: false, errorCode: unavailable, message: null };
    try {
      return { ok: true, response: view(context!.shard) };
    } catch (error) {
      if (isCoordinatorApiError(error)) return { ok: false, errorCode: error.errorCode, message: error.message };
      throw error;
    }
  }

  private enqueue<T>(context: ShardContext<S, R>, operation: (shard: S) => CoordinatorResult<T, R>): Promise<WriteOutcome<T>> {
    return new Promise((resolve, reject) => {
      this.serialize(context, () => this.run(context, operation, resolve)).catch(reject);
    });
  }

  /** Runs `task` after everything queued on the shard before it. */
  private serialize<T>(context: ShardContext<S, R>, task: () => Promise<T>): Promise<T> {
    const run = context.tail.then(task);
    context.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Writes a transaction's COMMIT or ABORT marker into the partition and
   * replays it into the shard (Kafka's scheduleTransactionCompletion), in
   * turn with the shard's operations. Resolves with the partition's error
   * code, as WriteTxnMarkers reports it.
   */
  completeTransaction(partition: number, marker: { producerId: number; producerEpoch: number; coordinatorEpoch: number; committed: boolean; transactionVersion?: number }): Promise<number> {
    const context = this.shards.get(partition);
    const unavailable = unavailableError(context);
    if (unavailable !== null) return Promise.resolve(unavailable);
    const promise = this.serialize(context!, async () => {
      if (context!.status !== 'active') return unavailableError(context) ?? ErrorCode.NOT_COORDINATOR;
      const batch = buildControlBatch({ ...marker, type: marker.committed ? 'COMMIT' : 'ABORT', timestamp: this.options.env.clock.nowMs() });
      // A late V2 marker is refused by the partition's producer state (INVALID_PRODUCER_EPOCH) and so never ends the producer's next offsets.
      const appended = await this.options.log.append(partition, batch, { transactionVersion: marker.transactionVersion ?? 0 });
      if (appended.errorCode !== ErrorCode.NONE) return appended.errorCode;
      if (context!.status === 'active') context!.shard.replayEndTransaction(marker.producerId, marker.committed);
      return ErrorCode.NONE;
    });
    this.track(promise);
    return promise;
  }

  /**
   * Runs one operation: computes it, writes its records, replays them. The
   * outcome goes to `respond` when the write completes, or earlier with
   * COORDINATOR_NOT_AVAILABLE when it outlives the write timeout;
   * the queue still waits for the write (and its replay) before the next
   * operation, so state and log never disagree.
   */
  private async run<T>(
    context: ShardContext<S, R>,
    operation: (shard: S) => CoordinatorResult<T, R>,
    respond: (outcome: WriteOutcome<T>) => void,
  ): Promise<void> {
    if (context.status !== 'active') {
      respond({ ok: false, errorCode: context.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NOT_COORDINATOR, message: null });
      return;
    }
    let result: CoordinatorResult<T, R>;
    try {
      result = operation(context.shard);
    } catch (error) {
      if (!isCoordinatorApiError(error)) throw error;
      respond({ ok: false, errorCode: error.errorCode, message: error.message });
      return;
    }
    if (result.records.length === 0) {
      result.onAppend?.(ErrorCode.NONE);
      respond({ ok: true, response: result.response });
      return;
    }
    const timeout = this.options.env.timers.schedule(this.options.writeTimeoutMs, () => {
      respond({ ok: false, errorCode: appendErrorToResponseError(ErrorCode.REQUEST_TIMED_OUT), message: null });
    });
    const appendError = await this.appendRecords(context, result);
    timeout.cancel();
    result.onAppend?.(appendError);
    respond(appendError === ErrorCode.NONE ? { ok: true, response: result.response } : { ok: false, errorCode: appendError, message: null });
  }

  /** Writes the records as one batch and replays them; returns the response error (NONE on success). */
  private async appendRecords(context: ShardContext<S, R>, result: CoordinatorResult<unknown, R>): Promise<number> {
    const { records, transaction } = result;
    const nowMs = this.options.env.clock.nowMs();
    let batch: Buffer;
    try {
      batch = buildBatch({
        records: records.map((record) => {
          const { key, value } = this.options.codec.encode(record);
          return { key, value, timestamp: nowMs };
        }),
        ...(transaction === undefined ? {} : { producerId: transaction.producerId, producerEpoch: transaction.producerEpoch, isTransactional: true }),
      });
    } catch (error) {
      // A field the record layout cannot hold (a string over 32767 bytes): Kafka's serializer fails the same way.
      this.options.logger.warn(`cannot encode ${this.options.name} records: ${(error as Error).message}`);
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    const appended = await this.options.log.append(context.partition, batch);
    if (appended.errorCode !== ErrorCode.NONE) return appendErrorToResponseError(appended.errorCode);
    if (context.status !== 'active') return ErrorCode.NOT_COORDINATOR;
    const producerId = transaction?.producerId ?? -1;
    if (result.replayRecords) records.forEach((record, i) => context.shard.replay(record, { offset: appended.baseOffset + i, producerId }));
    return ErrorCode.NONE;
  }

  private timerFor(context: ShardContext<S, R>): CoordinatorTimer<R> {
    const { timers } = context;
    const schedule = (key: string, delayMs: number, operation: () => CoordinatorResult<unknown, R>) => {
      timers.get(key)?.handle.cancel();
      const entry: TimerEntry<R> = {
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
        this.options.logger.error(`${this.options.name} operation failed: ${(error as Error).stack ?? String(error)}`);
      },
    );
  }
}

function unavailableError<S, R>(context: ShardContext<S, R> | undefined): number | null {
  if (context === undefined || context.status === 'closed' || context.status === 'failed') return ErrorCode.NOT_COORDINATOR;
  if (context.status === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
  return null;
}
