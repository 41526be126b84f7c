/**
 * Choosing a partition for a record, exactly as the Java producer does.
 *
 * - A record with an explicit partition goes there.
 * - A keyed record goes to `toPositive(murmur2(keyBytes)) % partitionCount`,
 *   over all partitions, available or not (so a key's partition never
 *   moves while the count stays the same).
 * - A record without a key (or with `partitioner.ignore.keys`) goes to the
 *   topic's current sticky partition (KIP-480, uniform sticky since KIP-794):
 *   a partition drawn at random among those with a leader, kept until about
 *   `batch.size` bytes have gone to it, then drawn again. The switch waits
 *   until the partition's open batch is full, but not past 2 x batch.size,
 *   so batches are not cut short. Spool draws uniformly: Kafka's adaptive
 *   weighting by queue length (partitioner.adaptive.partitioning.enable) is
 *   not done.
 */
import type { Random } from '../io/env.js';

/**
 * Kafka's murmur2 (the 32-bit MurmurHash2 with seed 0x9747b28c that
 * org.apache.kafka.common.utils.Utils.murmur2 computes), as a signed int32.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = (data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24)) | 0;
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest >= 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's Utils.toPositive: clears the sign bit (not Math.abs, which fails on MIN_VALUE). */
export function toPositive(value: number): number {
  return value & 0x7fffffff;
}

/** The partition of a keyed record. */
export function partitionForKey(keyBytes: Uint8Array, partitionCount: number): number {
  return toPositive(murmur2(keyBytes)) % partitionCount;
}

/** A user partitioner: returns a partition, or null to let the sticky partitioner choose. */
export type Partitioner = (record: { topic: string; key: Buffer | null; value: Buffer | null; partitionCount: number }) => number | null;

export interface TopicPartitions {
  /** All partitions, by number. */
  partitionCount: number;
  /** Partitions with a leader (a subset of 0..partitionCount-1). */
  available: readonly number[];
}

/** The per-topic sticky partition state (Kafka's BuiltInPartitioner). */
export class StickyPartitioner {
  private current = -1;
  private producedBytes = 0;

  constructor(
    private readonly random: Random,
    /** batch.size: bytes to send to one partition before switching. */
    private readonly stickyBatchBytes: number,
  ) {}

  /** The partition the next keyless record goes to. */
  partition(topic: TopicPartitions): number {
    if (this.current < 0 || this.current >= topic.partitionCount) this.switchPartition(topic);
    return this.current;
  }

  /**
   * Counts `appendedBytes` towards the current partition and switches when
   * enough has gone to it. `batchFull` says whether the partition's batches
   * were all full before the append (Kafka's enableSwitch).
   */
  recordAppended(topic: TopicPartitions, appendedBytes: number, batchFull: boolean): void {
    this.producedBytes += appendedBytes;
    const enough = this.producedBytes >= this.stickyBatchBytes && batchFull;
    if (enough || this.producedBytes >= this.stickyBatchBytes * 2) this.switchPartition(topic);
  }

  private switchPartition(topic: TopicPartitions): void {
    const candidates = topic.available.length > 0 ? topic.available : null;
    this.current = candidates !== null ? candidates[this.random.nextInt(candidates.length)]! : this.random.nextInt(topic.partitionCount);
    this.producedBytes = 0;
  }
}
