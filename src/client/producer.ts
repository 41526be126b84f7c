/**
 * Spool's producer, behaving as the Java producer does.
 *
 * send() picks a partition (partitioner.ts), appends the record to the
 * accumulator and returns a promise of its offset. A sender drains ready
 * batches, grouped by partition leader, one batch per partition per
 * Produce request, and at most `max.in.flight.requests.per.connection`
 * requests per broker.
 *
 * Idempotence (enable.idempotence, KIP-98; on by default as in Kafka 3+
 * unless acks is not "all" or retries is 0): the producer gets a producer
 * id and epoch from InitProducerId, numbers each partition's batches with
 * sequences when they are first drained, and keeps at most 5 batches in
 * flight per partition. A retriable failure puts the batch back in sequence
 * order with the same bytes, and a retried batch goes out only when nothing
 * else of its partition is in flight, so retries keep order and the broker
 * deduplicates them. OUT_OF_ORDER_SEQUENCE_NUMBER for a batch behind a
 * failed one is retried as well; for the oldest batch it is fatal.
 *
 * Transactions (transactional.id, KIP-98; V2 of KIP-890 where the cluster
 * finalizes transaction.version 2): initTransactions, beginTransaction,
 * send, sendOffsetsToTransaction, commitTransaction, abortTransaction, as
 * Kafka's producer names them; the protocol is in transaction-manager.ts.
 * A transactional producer sends a partition's batches only once the
 * partition is in the transaction (V1), or with its transactional id on
 * Produce v12+ (V2). Fencing (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) is
 * fatal: every call afterwards fails with it.
 * Not done: splitting a batch after MESSAGE_TOO_LARGE, epoch bumps after
 * UNKNOWN_PRODUCER_ID (KIP-360) and after an abortable error in V1.
 */
import { realEnv } from '../io/env.js';
import { ErrorCode } from '../protocol/errors.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE } from '../protocol/records/batch.js';
import { incrementSequence, sequenceBefore } from '../protocol/records/sequence.js';
import { compressionId, type CompressionName } from '../protocol/records/compression.js';
import { buildBatch } from '../protocol/records/records.js';
import { ZERO_UUID } from '../protocol/reader.js';
import type { ResponseOf } from '../protocol/schema.js';
import { Produce } from '../protocol/schemas/00-produce.js';
import { InitProducerId } from '../protocol/schemas/22-init-producer-id.js';
import { Cluster, type ClientOptions, type TopicInfo } from './cluster.js';
import { KafkaError, TimeoutError, TransactionAbortedError, needsMetadataRefresh, throwIfError } from './errors.js';
import type { OffsetToCommit } from './group-coordinator.js';
import { TransactionManager, type ProducerIdAndEpoch, type TransactionGroupMetadata } from './transaction-manager.js';
import { partitionForKey, StickyPartitioner, type Partitioner, type TopicPartitions } from './partitioner.js';
import { RecordAccumulator, recordBytesUpperBound, type AccumulatedRecord, type ProducerBatch, type RecordMetadata } from './record-accumulator.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';

export type { RecordMetadata } from './record-accumulator.js';

export type Acks = 0 | 1 | -1 | 'all';

export interface ProducerOptions extends ClientOptions {
  /** acks: 0, 1 or all (-1). Default all. */
  acks?: Acks;
  /** batch.size, bytes. Default 16384. */
  batchSize?: number;
  /** linger.ms. Default 5 (Kafka 4). */
  lingerMs?: number;
  /** compression.type. Default none. */
  compression?: CompressionName;
  /** compression.<codec>.level (KIP-390). */
  compressionLevel?: number;
  /** enable.idempotence. Default true when acks=all and retries > 0. */
  idempotence?: boolean;
  /** retries. Default 2147483647. */
  retries?: number;
  /** delivery.timeout.ms. Default 120000. */
  deliveryTimeoutMs?: number;
  /** max.request.size. Default 1048576. */
  maxRequestSize?: number;
  /** buffer.memory: bytes of records waiting to be sent. Default 33554432. */
  bufferMemory?: number;
  /** max.block.ms: how long send() waits for metadata or buffer space. Default 60000. */
  maxBlockMs?: number;
  /** A partitioner function; returning null falls back to the built-in one. */
  partitioner?: Partitioner;
  /** partitioner.ignore.keys: spread keyed records like keyless ones. */
  partitionerIgnoreKeys?: boolean;
  /** allow.auto.create.topics (metadata requests). Default true. */
  allowAutoTopicCreation?: boolean;
  /** transactional.id: makes the producer transactional (and idempotent). */
  transactionalId?: string;
  /** transaction.timeout.ms. Default 60000. */
  transactionTimeoutMs?: number;
}

export type HeaderValue = Buffer | string | null;

export interface ProducerRecord {
  topic: string;
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: readonly { key: string; value: HeaderValue }[] | Record<string, HeaderValue>;
  partition?: number;
  timestamp?: number;
}

/** Kafka's producer defaults. */
export const PRODUCER_DEFAULTS = {
  batchSize: 16_384,
  lingerMs: 5,
  retries: 2_147_483_647,
  deliveryTimeoutMs: 120_000,
  maxRequestSize: 1_048_576,
  bufferMemory: 33_554_432,
  maxBlockMs: 60_000,
  inFlightRequestsMax: 5,
  transactionTimeoutMs: 60_000,
} as const;

/** Kafka's limit on in-flight batches per partition with idempotence. */
const IDEMPOTENT_IN_FLIGHT_MAX = 5;

interface ResolvedSettings {
  acks: 0 | 1 | -1;
  compression: number;
  compressionLevel: number | undefined;
  idempotence: boolean;
  retries: number;
  deliveryTimeoutMs: number;
  maxRequestSize: number;
  bufferMemory: number;
  maxBlockMs: number;
  inFlightRequestsMax: number;
  allowAutoTopicCreation: boolean;
}

function resolveSettings(options: ProducerOptions): ResolvedSettings {
  const acks = options.acks === 'all' || options.acks === undefined ? -1 : options.acks;
  if (acks !== 0 && acks !== 1 && acks !== -1) throw new Error(`Invalid value ${String(options.acks)} for configuration acks`);
  const retries = options.retries ?? PRODUCER_DEFAULTS.retries;
  const compression = compressionId(options.compression ?? 'none');
  if (compression === null) throw new Error(`Invalid value ${options.compression} for configuration compression.type`);
  const inFlightRequestsMax = options.inFlightRequestsMax ?? PRODUCER_DEFAULTS.inFlightRequestsMax;
  const compatible = acks === -1 && retries > 0 && inFlightRequestsMax <= IDEMPOTENT_IN_FLIGHT_MAX;
  if (options.transactionalId !== undefined && options.idempotence === false) {
    throw new Error('Cannot set a transactional.id without also enabling idempotence.');
  }
  if ((options.idempotence === true || options.transactionalId !== undefined) && !compatible) {
    throw new Error('enable.idempotence requires acks=all, retries > 0 and max.in.flight.requests.per.connection <= 5');
  }
  return {
    acks,
    compression,
    compressionLevel: options.compressionLevel,
    idempotence: options.idempotence ?? (compatible || options.transactionalId !== undefined),
    retries,
    deliveryTimeoutMs: options.deliveryTimeoutMs ?? PRODUCER_DEFAULTS.deliveryTimeoutMs,
    maxRequestSize: options.maxRequestSize ?? PRODUCER_DEFAULTS.maxRequestSize,
    bufferMemory: options.bufferMemory ?? PRODUCER_DEFAULTS.bufferMemory,
    maxBlockMs: options.maxBlockMs ?? PRODUCER_DEFAULTS.maxBlockMs,
    inFlightRequestsMax,
    allowAutoTopicCreation: options.allowAutoTopicCreation ?? true,
  };
}

function toBuffer(value: Buffer | string | null | undefined): Buffer | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

function normalizeHeaders(headers: ProducerRecord['headers']): { key: string; value: Buffer | null }[] {
  if (headers === undefined) return [];
  const entries = Array.isArray(headers) ? headers : Object.entries(headers).map(([key, value]) => ({ key, value }));
  return (entries as { key: string; value: HeaderValue }[]).map((header) => ({ key: header.key, value: toBuffer(header.value) }));
}

export class Producer {
  readonly cluster: Cluster;
  readonly settings: ResolvedSettings;
  private readonly accumulator: RecordAccumulator;
  private readonly partitioner: Partitioner | undefined;
  private readonly partitionerIgnoreKeys: boolean;
  private readonly sticky = new Map<string, StickyPartitioner>();
  private readonly partitionsByTopicInfo = new WeakMap<TopicInfo, TopicPartitions>();
  private readonly batchSizeBytes: number;
  private producerId = NO_PRODUCER_ID;
  private producerEpoch = NO_PRODUCER_EPOCH;
  private producerIdPending: Promise<void> | null = null;
  private readonly nextSequence = new Map<string, number>();
  private readonly inFlightByNode = new Map<number, number>();
  private bufferedBytes = 0;
  private readonly bufferWaiters: (() => void)[] = [];
  private flushing = 0;
  private closing = false;
  private drainScheduled = false;
  private wakeTimer: { cancel(): void; atMs: number } | null = null;
  private fatalError: Error | null = null;
  /**
   * No waiting batch reaches delivery.timeout.ms before this monotonic time:
   * a lower bound kept by every batch that starts waiting (new or retried),
   * so drains before it skip the expiry scan.
   */
  private nextExpiryCheckMs = 0;
  private readonly preparing = new Set<Promise<void>>();
  /**
   * Settles once the latest send() is in the accumulator (or failed). Each
   * send waits for the one before it, so records reach the accumulator in
   * call order even when some wait for metadata or buffer.memory: Kafka's
   * send() blocks its caller for those, which keeps one thread's records in
   * order within a partition.
   */
  private previousSend: Promise<void> = Promise.resolve();
  private readonly txn: TransactionManager | null;

  constructor(options: ProducerOptions) {
    this.settings = resolveSettings(options);
    this.cluster = new Cluster({ ...options, env: options.env ?? realEnv, inFlightRequestsMax: this.settings.inFlightRequestsMax });
    this.batchSizeBytes = options.batchSize ?? PRODUCER_DEFAULTS.batchSize;
    this.accumulator = new RecordAccumulator({
      clock: this.cluster.env.clock,
      batchSizeBytes: this.batchSizeBytes,
      lingerMs: options.lingerMs ?? PRODUCER_DEFAULTS.lingerMs,
    });
    this.partitioner = options.partitioner;
    this.partitionerIgnoreKeys = options.partitionerIgnoreKeys ?? false;
    this.txn = options.transactionalId === undefined ? null : new TransactionManager(this.cluster, options.transactionalId, options.transactionTimeoutMs ?? PRODUCER_DEFAULTS.transactionTimeoutMs);
  }

  // ---- transactions

  /** Registers the transactional id with its coordinator: fences older producers of the id and ends their open transaction. */
  async initTransactions(): Promise<void> {
    this.setProducerIdAndEpoch(await this.transactions().initProducerId());
    this.scheduleDrain();
  }

  beginTransaction(): void {
    this.transactions().begin();
  }

  /** Commits these consumer offsets in the transaction (consume-transform-produce, KIP-447's group metadata). */
  async sendOffsetsToTransaction(offsets: readonly OffsetToCommit[], group: TransactionGroupMetadata): Promise<void> {
    await this.transactions().sendOffsets(offsets, group, this.producerIdAndEpoch());
  }

  /** Flushes the transaction's records, then commits it; a failed record fails the commit (abort, then retry the work). */
  async commitTransaction(): Promise<void> {
    const txn = this.transactions();
    txn.expect('commit a transaction', 'inTransaction');
    txn.state = 'committing';
    await this.flush();
    // A record that failed during the flush made the transaction abortable (or the producer fenced).
    if (txn.failed()) throw txn.lastError!;
    this.setProducerIdAndEpoch(await txn.end(true, this.producerIdAndEpoch()));
  }

  /** Drops the transaction's records not yet sent, waits for those in flight, then aborts it. */
  async abortTransaction(): Promise<void> {
    const txn = this.transactions();
    txn.expect('abort a transaction', 'inTransaction', 'abortableError');
    txn.state = 'aborting';
    for (const batch of this.accumulator.allBatches()) {
      if (batch.encoded === null && !batch.inFlight) this.failBatch(batch, new TransactionAbortedError());
    }
    await this.flush();
    if (txn.fenced()) throw txn.lastError!;
    this.setProducerIdAndEpoch(await txn.end(false, this.producerIdAndEpoch()));
  }

  private transactions(): TransactionManager {
    if (this.txn === null) throw new KafkaError(ErrorCode.INVALID_TXN_STATE, 'Transactional method invoked on a non-transactional producer.');
    return this.txn;
  }

  private producerIdAndEpoch(): ProducerIdAndEpoch {
    return { producerId: this.producerId, producerEpoch: this.producerEpoch };
  }

  /** A new producer id or epoch starts every partition's sequences again at 0. */
  private setProducerIdAndEpoch(id: ProducerIdAndEpoch): void {
    if (id.producerId !== this.producerId || id.producerEpoch !== this.producerEpoch) this.nextSequence.clear();
    this.producerId = id.producerId;
    this.producerEpoch = id.producerEpoch;
  }

  /** Sends a record; resolves once the broker acknowledged it (per acks). */
  send(record: ProducerRecord): Promise<RecordMetadata> {
    if (this.closing) return Promise.reject(new Error('Cannot send after the producer is closed.'));
    if (this.fatalError !== null) return Promise.reject(this.fatalError);
    try {
      this.txn?.expect('send', 'inTransaction');
    } catch (error) {
      return Promise.reject(error as Error);
    }
    // Until the record is in the accumulator, flush() must wait for this send too.
    let appended!: () => void;
    const preparing = new Promise<void>((resolve) => { appended = resolve; });
    this.preparing.add(preparing);
    const done = (): void => {
      this.preparing.delete(preparing);
      appended();
    };
    const previous = this.previousSend;
    this.previousSend = preparing;
    const result = this.prepareAndAppend(record, previous, done);
    result.catch(done);
    return result;
  }

  private async prepareAndAppend(record: ProducerRecord, previous: Promise<void>, appended: () => void): Promise<RecordMetadata> {
    const deadlineMs = this.cluster.env.clock.monotonicMs() + this.settings.maxBlockMs;
    await previous;
    const topic = await this.topicMetadata(record.topic, this.settings.maxBlockMs);
    const accumulated: AccumulatedRecord = {
      key: toBuffer(record.key),
      value: toBuffer(record.value),
      headers: normalizeHeaders(record.headers),
      timestamp: record.timestamp ?? this.cluster.env.clock.nowMs(),
    };
    const sizeBytes = recordBytesUpperBound(accumulated);
    if (sizeBytes > this.settings.maxRequestSize) {
      throw new KafkaError(ErrorCode.MESSAGE_TOO_LARGE, `the record is ${sizeBytes} bytes, above max.request.size ${this.settings.maxRequestSize}`);
    }
    if (sizeBytes > this.settings.bufferMemory) {
      throw new KafkaError(ErrorCode.MESSAGE_TOO_LARGE, `the record is ${sizeBytes} bytes, above buffer.memory ${this.settings.bufferMemory}`);
    }
    await this.reserveBuffer(sizeBytes, deadlineMs);
    const { partition, sticky } = this.choosePartition(record, accumulated, topic);
    return new Promise<RecordMetadata>((resolve, reject) => {
      const release = (): void => this.releaseBuffer(sizeBytes);
      const completion = {
        timestamp: accumulated.timestamp,
        resolve: (metadata: RecordMetadata) => { release(); resolve(metadata); },
        reject: (error: Error) => { release(); reject(error); },
      };
      const result = this.accumulator.append({ topic: record.topic, partition }, accumulated, completion);
      this.noteWaiting(result.batch);
      appended();
      // Only the built-in partitioner counts bytes; a record placed by the user's partitioner leaves it alone.
      if (sticky) this.stickyFor(record.topic).recordAppended(this.partitionsOf(topic), result.appendedBytes, result.batchFullBefore);
      this.scheduleDrain();
    });
  }

  /** Sends everything buffered now and waits until it is acknowledged (or failed). */
  async flush(): Promise<void> {
    await Promise.all([...this.preparing]);
    const batches = this.accumulator.allBatches();
    if (batches.length === 0) return;
    const settled = batches.flatMap((batch) => batch.completions.map((c) => new Promise<void>((done) => {
      const { resolve, reject } = c;
      c.resolve = (metadata) => { resolve(metadata); done(); };
      c.reject = (error) => { reject(error); done(); };
    })));
    this.flushing++;
    this.scheduleDrain();
    try {
      await Promise.all(settled);
    } finally {
      this.flushing--;
    }
  }

  /** Flushes, then closes every connection. */
  async close(): Promise<void> {
    if (this.closing) return;
    await this.flush();
    this.closing = true;
    this.wakeTimer?.cancel();
    await this.txn?.close();
    await this.cluster.close();
  }

  private async topicMetadata(name: string, timeoutMs: number): Promise<TopicInfo> {
    return this.cluster.retry(async () => {
      const topic = await this.cluster.topic(name, { allowAutoTopicCreation: this.settings.allowAutoTopicCreation });
      if (topic.partitions.length === 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `topic ${name} has no partitions yet`);
      return topic;
    }, { timeoutMs });
  }

  /**
   * The partitions of a topic and those with a leader, computed once per
   * metadata snapshot (a refresh replaces the TopicInfo): built per record,
   * they cost O(partitions) per send, 2 arrays of 1,000 entries per record
   * with 1,000 partitions.
   */
  private partitionsOf(topic: TopicInfo): TopicPartitions {
    let partitions = this.partitionsByTopicInfo.get(topic);
    if (partitions === undefined) {
      partitions = {
        partitionCount: topic.partitions.length,
        available: topic.partitions.filter((p) => p.leaderId >= 0).map((p) => p.partition),
      };
      this.partitionsByTopicInfo.set(topic, partitions);
    }
    return partitions;
  }

  private stickyFor(topic: string): StickyPartitioner {
    let sticky = this.sticky.get(topic);
    if (sticky === undefined) {
      sticky = new StickyPartitioner(this.cluster.env.random, this.batchSizeBytes);
      this.sticky.set(topic, sticky);
    }
    return sticky;
  }

  /** The record's partition, and whether the built-in sticky partitioner chose it. */
  private choosePartition(record: ProducerRecord, accumulated: AccumulatedRecord, topic: TopicInfo): { partition: number; sticky: boolean } {
    const partitionCount = topic.partitions.length;
    if (record.partition !== undefined) {
      if (!Number.isInteger(record.partition) || record.partition < 0 || record.partition >= partitionCount) {
        throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${record.partition} is not among the ${partitionCount} partitions of ${record.topic}`);
      }
      return { partition: record.partition, sticky: false };
    }
    const chosen = this.partitioner?.({ topic: record.topic, key: accumulated.key, value: accumulated.value, partitionCount }) ?? null;
    if (chosen !== null) {
      if (!Number.isInteger(chosen) || chosen < 0 || chosen >= partitionCount) throw new Error(`the partitioner chose partition ${chosen}, but ${record.topic} has ${partitionCount}`);
      return { partition: chosen, sticky: false };
    }
    if (accumulated.key !== null && !this.partitionerIgnoreKeys) return { partition: partitionForKey(accumulated.key, partitionCount), sticky: false };
    return { partition: this.stickyFor(record.topic).partition(this.partitionsOf(topic)), sticky: true };
  }

  private async reserveBuffer(bytes: number, deadlineMs: number): Promise<void> {
    while (this.bufferedBytes + bytes > this.settings.bufferMemory) {
      const remainingMs = deadlineMs - this.cluster.env.clock.monotonicMs();
      if (remainingMs <= 0) throw new TimeoutError(`no room in buffer.memory within max.block.ms ${this.settings.maxBlockMs}`);
      await new Promise<void>((resolve) => {
        const timer = this.cluster.env.timers.schedule(remainingMs, resolve);
        this.bufferWaiters.push(() => { timer.cancel(); resolve(); });
      });
    }
    this.bufferedBytes += bytes;
  }

  private releaseBuffer(bytes: number): void {
    this.bufferedBytes -= bytes;
    for (const wake of this.bufferWaiters.splice(0)) wake();
  }

  // ---- the sender

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    this.cluster.env.timers.defer(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  /** Schedules a drain at the monotonic time `atMs`, unless one is due sooner. */
  private wakeAt(atMs: number): void {
    if (atMs === Infinity) return;
    if (this.wakeTimer !== null && this.wakeTimer.atMs <= atMs) return;
    this.wakeTimer?.cancel();
    const delayMs = Math.max(0, atMs - this.cluster.env.clock.monotonicMs());
    const handle = this.cluster.env.timers.schedule(delayMs, () => {
      this.wakeTimer = null;
      this.drain();
    });
    this.wakeTimer = { cancel: () => handle.cancel(), atMs };
  }

  private drain(): void {
    if (this.settings.idempotence && this.producerId === NO_PRODUCER_ID) {
      // A transactional producer gets its id from initTransactions().
      if (this.txn === null) this.ensureProducerId();
      return;
    }
    this.expireBatches();
    // One reading of the clock for "ready now" and "ready later": with two, a batch not ready at the first could be
    // due by the second, and no timer would be left to send it (a producer stalled for good under load).
    const nowMs = this.cluster.env.clock.monotonicMs();
    const readyAll = this.accumulator.readyBatches({
      flushing: this.flushing > 0 || this.closing,
      inFlightPerPartitionMax: this.settings.idempotence ? IDEMPOTENT_IN_FLIGHT_MAX : Number.MAX_SAFE_INTEGER,
    }, nowMs);
    const ready = this.txn === null ? readyAll : this.txn.sendable(readyAll, this.producerIdAndEpoch(), () => this.scheduleDrain());
    const byNode = this.groupByLeader(ready);
    for (const [nodeId, batches] of byNode) {
      if ((this.inFlightByNode.get(nodeId) ?? 0) >= this.settings.inFlightRequestsMax) continue;
      const chosen = this.fitRequest(batches);
      for (const batch of chosen) this.prepare(batch);
      void this.sendProduce(nodeId, chosen);
    }
    // A batch that is ready now and still here waits on an in-flight request or a metadata refresh, whose end drains
    // again: a timer for it would fire at once, over and over (a busy loop while a leader does not answer).
    const nextReadyMs = this.accumulator.nextReadyMs();
    if (nextReadyMs > nowMs) this.wakeAt(nextReadyMs);
  }

  /** Leader of each ready batch's partition; batches without a known leader trigger a metadata refresh. */
  private groupByLeader(ready: readonly ProducerBatch[]): Map<number, ProducerBatch[]> {
    const byNode = new Map<number, ProducerBatch[]>();
    let unknownLeader = false;
    for (const batch of ready) {
      const leader = this.cluster.leaderFor(batch.topicPartition.topic, batch.topicPartition.partition);
      if (leader < 0) {
        unknownLeader = true;
        continue;
      }
      const list = byNode.get(leader) ?? [];
      list.push(batch);
      byNode.set(leader, list);
    }
    if (unknownLeader) this.refreshMetadataSoon(ready.map((b) => b.topicPartition.topic));
    return byNode;
  }

  private metadataRefresh: Promise<void> | null = null;
  /** Topics whose metadata a coming refresh asks for (gathered while one is out, so none is dropped). */
  private readonly staleTopics = new Set<string>();

  private refreshMetadataSoon(topics: readonly string[]): void {
    for (const topic of topics) this.staleTopics.add(topic);
    if (this.metadataRefresh !== null || this.staleTopics.size === 0) return;
    let asked: string[] = [];
    this.metadataRefresh = this.cluster
      .sleep(this.cluster.retryBackoffMs)
      .then(() => {
        asked = [...this.staleTopics];
        this.staleTopics.clear();
        return this.cluster.refreshMetadata(asked, { allowAutoTopicCreation: this.settings.allowAutoTopicCreation });
      })
      .catch(() => { for (const topic of asked) this.staleTopics.add(topic); })
      .finally(() => {
        this.metadataRefresh = null;
        this.scheduleDrain();
      });
  }

  /** Batches that fit in one request of max.request.size (at least one). */
  private fitRequest(batches: readonly ProducerBatch[]): ProducerBatch[] {
    const chosen: ProducerBatch[] = [];
    let bytes = 0;
    for (const batch of batches) {
      const size = batch.encoded?.length ?? batch.estimatedBytes;
      if (chosen.length > 0 && bytes + size > this.settings.maxRequestSize) break;
      chosen.push(batch);
      bytes += size;
    }
    return chosen;
  }

  /** Assigns the sequence (first drain only) and encodes the batch. */
  private prepare(batch: ProducerBatch): void {
    batch.inFlight = true;
    batch.attempts++;
    if (batch.encoded !== null) return;
    let baseSequence = NO_SEQUENCE;
    if (this.settings.idempotence) {
      const key = topicPartitionKey(batch.topicPartition);
      baseSequence = this.nextSequence.get(key) ?? 0;
      this.nextSequence.set(key, incrementSequence(baseSequence, batch.recordCount));
    }
    batch.baseSequence = baseSequence;
    batch.encoded = buildBatch({
      records: batch.records,
      compression: this.settings.compression,
      ...(this.settings.compressionLevel === undefined ? {} : { compressionLevel: this.settings.compressionLevel }),
      producerId: this.settings.idempotence ? this.producerId : NO_PRODUCER_ID,
      producerEpoch: this.settings.idempotence ? this.producerEpoch : NO_PRODUCER_EPOCH,
      baseSequence,
      isTransactional: this.txn !== null,
    });
  }

  private ensureProducerId(): void {
    if (this.producerIdPending !== null) return;
    this.producerIdPending = this.cluster
      .retry(async () => {
        const connection = await this.cluster.anyConnection();
        const response = await connection.send(InitProducerId, { transactionalId: null, transactionTimeoutMs: 60_000 });
        throwIfError(response.errorCode, 'InitProducerId');
        this.producerId = response.producerId;
        this.producerEpoch = response.producerEpoch;
      }, { timeoutMs: this.settings.deliveryTimeoutMs })
      .catch((error: Error) => {
        this.fatalError = error;
        for (const batch of this.accumulator.allBatches()) this.failBatch(batch, error);
      })
      .finally(() => {
        this.producerIdPending = null;
        this.scheduleDrain();
      });
  }

  /** A batch waits in the accumulator (appended to, or back for a retry): it may expire from createdMs + delivery.timeout.ms. */
  private noteWaiting(batch: ProducerBatch): void {
    this.nextExpiryCheckMs = Math.min(this.nextExpiryCheckMs, batch.createdMs + this.settings.deliveryTimeoutMs);
  }

  /**
   * Fails the waiting batches that reached delivery.timeout.ms. Scans only
   * once the earliest deadline may have passed (about once per timeout in
   * steady traffic, not on every drain: with many partitions a scan per
   * send grew with the square of the queue), and keeps the next one.
   */
  private expireBatches(): void {
    const nowMs = this.cluster.env.clock.monotonicMs();
    if (nowMs < this.nextExpiryCheckMs) return;
    // Batches that start waiting during the scan lower the bound themselves.
    this.nextExpiryCheckMs = Infinity;
    let nextExpiryMs = Infinity;
    for (const batch of this.accumulator.allBatches()) {
      if (batch.inFlight) continue;
      if (nowMs - batch.createdMs < this.settings.deliveryTimeoutMs) {
        nextExpiryMs = Math.min(nextExpiryMs, batch.createdMs + this.settings.deliveryTimeoutMs);
        continue;
      }
      const tp = batch.topicPartition;
      this.failBatch(batch, new TimeoutError(`Expiring ${batch.recordCount} record(s) for ${tp.topic}-${tp.partition}: ${nowMs - batch.createdMs} ms has passed since batch creation (delivery.timeout.ms ${this.settings.deliveryTimeoutMs})`));
    }
    this.nextExpiryCheckMs = Math.min(this.nextExpiryCheckMs, nextExpiryMs);
  }

  private failBatch(batch: ProducerBatch, error: Error): void {
    this.accumulator.remove(batch);
    batch.fail(error);
  }

  private async sendProduce(nodeId: number, batches: ProducerBatch[]): Promise<void> {
    this.inFlightByNode.set(nodeId, (this.inFlightByNode.get(nodeId) ?? 0) + 1);
    try {
      const connection = await this.cluster.connection(nodeId);
      const useTopicIds = batches.every((b) => (this.cluster.topics.get(b.topicPartition.topic)?.topicId ?? ZERO_UUID) !== ZERO_UUID);
      const { version, response } = await connection.sendVersioned(Produce, this.produceRequest(batches), {
        versionMax: Math.min(useTopicIds ? Infinity : 12, this.txn?.produceVersionMax ?? Infinity),
        expectResponse: this.settings.acks !== 0,
      });
      if (this.settings.acks === 0) {
        for (const batch of batches) this.onBatchResult(batch, { errorCode: ErrorCode.NONE, baseOffset: -1, logAppendTimeMs: -1, errorMessage: null });
        return;
      }
      this.onProduceResponse(batches, version, response);
    } catch (error) {
      // No answer within request.timeout.ms is a disconnection, as Kafka's NetworkClient reports it (NETWORK_EXCEPTION):
      // the batches retry after a metadata refresh. Retried at a stale leader that answers nothing (a SIGSTOPped
      // broker), they would otherwise time out there for ever (found by test/fault/spool-client-faults.test.ts).
      const failure = error instanceof TimeoutError ? new KafkaError(ErrorCode.NETWORK_EXCEPTION, error.message)
        : error instanceof KafkaError ? error : new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, (error as Error).message);
      for (const batch of batches) this.onBatchResult(batch, { errorCode: failure.code, baseOffset: -1, logAppendTimeMs: -1, errorMessage: failure.message });
    } finally {
      this.inFlightByNode.set(nodeId, (this.inFlightByNode.get(nodeId) ?? 1) - 1);
      this.scheduleDrain();
    }
  }

  private produceRequest(batches: readonly ProducerBatch[]) {
    const byTopic = new Map<string, ProducerBatch[]>();
    for (const batch of batches) {
      const list = byTopic.get(batch.topicPartition.topic) ?? [];
      list.push(batch);
      byTopic.set(batch.topicPartition.topic, list);
    }
    return {
      transactionalId: this.txn?.transactionalId ?? null,
      acks: this.settings.acks,
      timeoutMs: this.cluster.requestTimeoutMs,
      topicData: [...byTopic].map(([name, list]) => ({
        name,
        topicId: this.cluster.topics.get(name)?.topicId ?? ZERO_UUID,
        partitionData: list.map((batch) => ({ index: batch.topicPartition.partition, records: batch.encoded })),
      })),
    };
  }

  private onProduceResponse(batches: readonly ProducerBatch[], version: number, response: ResponseOf<typeof Produce>): void {
    const topicNames = new Map([...this.cluster.topics.values()].map((t) => [t.topicId, t.name]));
    const results = new Map<string, { errorCode: number; baseOffset: number; logAppendTimeMs: number; errorMessage: string | null }>();
    for (const topic of response.responses) {
      const name = version >= 13 ? topicNames.get(topic.topicId) : topic.name;
      if (name === undefined) continue;
      for (const partition of topic.partitionResponses) results.set(topicPartitionKey({ topic: name, partition: partition.index }), partition);
    }
    for (const batch of batches) {
      const result = results.get(topicPartitionKey(batch.topicPartition));
      this.onBatchResult(batch, result ?? { errorCode: ErrorCode.NETWORK_EXCEPTION, baseOffset: -1, logAppendTimeMs: -1, errorMessage: 'no result for the partition in the Produce response' });
    }
  }

  private onBatchResult(batch: ProducerBatch, result: { errorCode: number; baseOffset: number; logAppendTimeMs: number; errorMessage: string | null }): void {
    const code = result.errorCode;
    if (code === ErrorCode.NONE || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
      this.accumulator.remove(batch);
      batch.complete(result.baseOffset, result.logAppendTimeMs);
      return;
    }
    const error = new KafkaError(code, result.errorMessage);
    if (this.canRetry(batch, code)) {
      if (needsMetadataRefresh(code)) this.refreshMetadataSoon([batch.topicPartition.topic]);
      const nowMs = this.cluster.env.clock.monotonicMs();
      this.accumulator.reenqueue(batch, nowMs + this.cluster.backoffMs(batch.attempts - 1));
      this.noteWaiting(batch);
      return;
    }
    this.failBatch(batch, error);
    if (this.txn !== null) {
      this.txn.onBatchFailed(error);
      if (this.txn.fenced()) {
        this.fatalError ??= this.txn.lastError;
        for (const waiting of this.accumulator.allBatches()) if (!waiting.inFlight) this.failBatch(waiting, this.fatalError!);
      }
    }
  }

  private canRetry(batch: ProducerBatch, code: number): boolean {
    const nowMs = this.cluster.env.clock.monotonicMs();
    if (batch.attempts > this.settings.retries) return false;
    if (nowMs - batch.createdMs >= this.settings.deliveryTimeoutMs) return false;
    if (code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) return this.settings.idempotence && this.hasEarlierUnacked(batch);
    return new KafkaError(code).retriable;
  }

  /** Whether an older batch of the same partition is still unacknowledged (this one failed only because of it). */
  private hasEarlierUnacked(batch: ProducerBatch): boolean {
    return this.accumulator
      .batchesOf(batch.topicPartition)
      .some((other) => other !== batch && other.baseSequence !== NO_SEQUENCE && sequenceBefore(other.baseSequence, batch.baseSequence));
  }
}
