/**
 * The producer's record accumulator: per partition, a queue of batches that
 * fill up to `batch.size` bytes and become sendable when full, when the
 * oldest record has waited `linger.ms`, or when a flush or close asks.
 *
 * Sizes are upper-bound estimates of the uncompressed v2 record encoding
 * (as Kafka's estimateSizeInBytesUpperBound), so a batch never exceeds
 * `batch.size` before compression; a record larger than `batch.size` gets a
 * batch of its own. A batch that failed with a retriable error goes back to
 * the front of its queue, in sequence order, and waits out its backoff.
 */
import type { Clock } from '../io/env.js';
import { BATCH_HEADER_BYTES, NO_SEQUENCE } from '../protocol/records/batch.js';
import { sequenceBefore } from '../protocol/records/sequence.js';
import type { RecordInput } from '../protocol/records/records.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';

export interface RecordMetadata {
  topic: string;
  partition: number;
  /** -1 with acks=0, where the broker says nothing. */
  offset: number;
  timestamp: number;
}

export interface AccumulatedRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
}

interface Completion {
  timestamp: number;
  resolve(metadata: RecordMetadata): void;
  reject(error: Error): void;
}

/** Upper bound of one record's encoded size (varints at their widest). */
export function recordBytesUpperBound(record: AccumulatedRecord): number {
  let bytes = 5 + 1 + 10 + 5 + 5 + (record.key?.length ?? 0) + 5 + (record.value?.length ?? 0) + 5;
  for (const header of record.headers) bytes += 5 + Buffer.byteLength(header.key) + 5 + (header.value?.length ?? 0);
  return bytes;
}

export class ProducerBatch {
  readonly records: RecordInput[] = [];
  readonly completions: Completion[] = [];
  estimatedBytes = BATCH_HEADER_BYTES;
  /** Sends so far. */
  attempts = 0;
  /** Not sendable before this (monotonic ms): retry backoff. */
  retryAfterMs = 0;
  /** Assigned when first drained (idempotence); kept across retries. */
  baseSequence = NO_SEQUENCE;
  /** The encoded batch, built once at first drain so retries resend the same bytes. */
  encoded: Buffer | null = null;
  inFlight = false;

  constructor(
    readonly topicPartition: TopicPartition,
    /** Monotonic ms of creation: linger and delivery timeout count from here. */
    readonly createdMs: number,
  ) {}

  get recordCount(): number {
    return this.records.length;
  }

  /** Appends when the record fits in `batchSizeBytes` (or the batch is empty); returns the bytes added, or 0. */
  tryAppend(record: AccumulatedRecord, completion: Completion, batchSizeBytes: number): number {
    const bytes = recordBytesUpperBound(record);
    if (this.encoded !== null) return 0;
    if (this.records.length > 0 && this.estimatedBytes + bytes > batchSizeBytes) return 0;
    this.records.push({ key: record.key, value: record.value, headers: record.headers, timestamp: record.timestamp });
    this.completions.push(completion);
    this.estimatedBytes += bytes;
    return bytes;
  }

  isFull(batchSizeBytes: number): boolean {
    return this.encoded !== null || this.estimatedBytes >= batchSizeBytes;
  }

  /** Resolves each record with its offset. */
  complete(baseOffset: number, logAppendTimeMs: number): void {
    this.completions.forEach((completion, index) => {
      completion.resolve({
        topic: this.topicPartition.topic,
        partition: this.topicPartition.partition,
        offset: baseOffset < 0 ? -1 : baseOffset + index,
        timestamp: logAppendTimeMs >= 0 ? logAppendTimeMs : completion.timestamp,
      });
    });
  }

  fail(error: Error): void {
    for (const completion of this.completions) completion.reject(error);
  }
}

export interface AccumulatorOptions {
  clock: Clock;
  /** batch.size */
  batchSizeBytes: number;
  /** linger.ms */
  lingerMs: number;
}

export interface AppendResult {
  batch: ProducerBatch;
  appendedBytes: number;
  /** Every batch of the partition was full before this append (the sticky partitioner may switch). */
  batchFullBefore: boolean;
}

interface PartitionQueue {
  topicPartition: TopicPartition;
  batches: ProducerBatch[];
}

export class RecordAccumulator {
  private readonly queues = new Map<string, PartitionQueue>();
  private readonly clock: Clock;
  readonly batchSizeBytes: number;
  readonly lingerMs: number;

  constructor(options: AccumulatorOptions) {
    this.clock = options.clock;
    this.batchSizeBytes = options.batchSizeBytes;
    this.lingerMs = options.lingerMs;
  }

  private queue(topicPartition: TopicPartition): PartitionQueue {
    const key = topicPartitionKey(topicPartition);
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = { topicPartition, batches: [] };
      this.queues.set(key, queue);
    }
    return queue;
  }

  append(topicPartition: TopicPartition, record: AccumulatedRecord, completion: Completion): AppendResult {
    const queue = this.queue(topicPartition);
    const last = queue.batches[queue.batches.length - 1];
    const batchFullBefore = last === undefined || last.isFull(this.batchSizeBytes);
    if (last !== undefined && !last.inFlight) {
      const appendedBytes = last.tryAppend(record, completion, this.batchSizeBytes);
      if (appendedBytes > 0) return { batch: last, appendedBytes, batchFullBefore };
    }
    const batch = new ProducerBatch(topicPartition, this.clock.monotonicMs());
    const appendedBytes = batch.tryAppend(record, completion, this.batchSizeBytes);
    queue.batches.push(batch);
    return { batch, appendedBytes, batchFullBefore };
  }

  /**
   * Whether the head batch of a partition may be sent now: it is not backing
   * off, and the partition has more than one batch, or the batch is full, or
   * it has lingered long enough, or `flushing` says not to wait.
   */
  isReady(batch: ProducerBatch, queueLength: number, nowMs: number, flushing: boolean): boolean {
    if (batch.inFlight) return false;
    if (batch.attempts > 0) return nowMs >= batch.retryAfterMs;
    if (flushing || queueLength > 1 || batch.isFull(this.batchSizeBytes)) return true;
    return nowMs - batch.createdMs >= this.lingerMs;
  }

  /**
   * Head batches that may be sent now, one per partition. A partition with
   * `inFlightPerPartitionMax` batches in flight sends nothing more; a batch
   * being retried goes out only when nothing of its partition is in flight,
   * so retries cannot overtake each other. `nowMs` is the caller's reading
   * of the clock, so that it can compare nextReadyMs() with the same one.
   */
  readyBatches(options: { flushing: boolean; inFlightPerPartitionMax: number }, nowMs = this.clock.monotonicMs()): ProducerBatch[] {
    const ready: ProducerBatch[] = [];
    for (const queue of this.queues.values()) {
      // One pass per queue, no allocation: this runs for every partition on every drain.
      let inFlight = 0;
      let head: ProducerBatch | undefined;
      for (const batch of queue.batches) {
        if (batch.inFlight) inFlight++;
        else head ??= batch;
      }
      const waiting = queue.batches.length - inFlight;
      if (head === undefined || inFlight >= options.inFlightPerPartitionMax) continue;
      if (head.attempts > 0 && inFlight > 0) continue;
      if (this.isReady(head, waiting, nowMs, options.flushing)) ready.push(head);
    }
    return ready;
  }

  /** The monotonic time at which some waiting batch becomes ready, or Infinity. */
  nextReadyMs(): number {
    let next = Infinity;
    for (const queue of this.queues.values()) {
      const head = queue.batches.find((batch) => !batch.inFlight);
      if (head === undefined) continue;
      next = Math.min(next, head.attempts > 0 ? head.retryAfterMs : head.createdMs + this.lingerMs);
    }
    return next;
  }

  /** Batches of a partition not yet acknowledged (queued or in flight), oldest first. */
  batchesOf(topicPartition: TopicPartition): readonly ProducerBatch[] {
    return this.queues.get(topicPartitionKey(topicPartition))?.batches ?? [];
  }

  /** Removes an acknowledged or failed batch. */
  remove(batch: ProducerBatch): void {
    const key = topicPartitionKey(batch.topicPartition);
    const queue = this.queues.get(key);
    if (queue === undefined) return;
    const index = queue.batches.indexOf(batch);
    if (index >= 0) queue.batches.splice(index, 1);
    if (queue.batches.length === 0) this.queues.delete(key);
  }

  /**
   * Puts a batch back for a retry: it stays in its queue, ordered by
   * sequence among batches that have one, ahead of new batches.
   */
  reenqueue(batch: ProducerBatch, retryAfterMs: number): void {
    batch.inFlight = false;
    batch.retryAfterMs = retryAfterMs;
    const queue = this.queue(batch.topicPartition);
    const index = queue.batches.indexOf(batch);
    if (index >= 0) queue.batches.splice(index, 1);
    let at = 0;
    while (at < queue.batches.length && queue.batches[at]!.encoded !== null && precedes(queue.batches[at]!, batch)) at++;
    queue.batches.splice(at, 0, batch);
  }

  /** Every batch not yet acknowledged. */
  allBatches(): ProducerBatch[] {
    return [...this.queues.values()].flatMap((queue) => queue.batches);
  }

  get isEmpty(): boolean {
    return this.queues.size === 0;
  }
}

/** Order of two already-drained batches of one partition: by sequence when idempotent, else by creation. */
function precedes(a: ProducerBatch, b: ProducerBatch): boolean {
  if (a.baseSequence !== NO_SEQUENCE && b.baseSequence !== NO_SEQUENCE) return sequenceBefore(a.baseSequence, b.baseSequence);
  return a.createdMs <= b.createdMs;
}
