/**
 * Committed offsets of the groups one coordinator shard owns, built only by
 * replaying OffsetCommit records (and transaction markers).
 *
 * A committed offset is the next offset the group will read (DESIGN.md §1).
 * Offsets committed inside a transaction (TxnOffsetCommit, KIP-98) are kept
 * apart, by producer id, until the transaction's COMMIT marker moves them in
 * or its ABORT marker drops them; a regular commit and a transactional one
 * for the same partition resolve to whichever record is later in the log, as
 * in Kafka, so compaction of `__consumer_offsets` cannot reorder them.
 */

export interface OffsetAndMetadata {
  committedOffset: number;
  /** -1 when the committer did not know the leader epoch. */
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: number;
  /** Set only by OffsetCommit v2-v4 with an explicit retention time. */
  expireTimestampMs: number | null;
  /** Offset of the record in `__consumer_offsets` that committed it. */
  recordOffset: number;
}

type TopicOffsets = Map<string, Map<number, OffsetAndMetadata>>;

class Offsets {
  readonly byGroup = new Map<string, TopicOffsets>();

  get(groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.byGroup.get(groupId)?.get(topic)?.get(partition);
  }

  put(groupId: string, topic: string, partition: number, offset: OffsetAndMetadata): void {
    let topics = this.byGroup.get(groupId);
    if (topics === undefined) this.byGroup.set(groupId, (topics = new Map()));
    let partitions = topics.get(topic);
    if (partitions === undefined) topics.set(topic, (partitions = new Map()));
    partitions.set(partition, offset);
  }

  remove(groupId: string, topic: string, partition: number): boolean {
    const topics = this.byGroup.get(groupId);
    const partitions = topics?.get(topic);
    if (partitions === undefined || !partitions.delete(partition)) return false;
    if (partitions.size === 0) topics!.delete(topic);
    if (topics!.size === 0) this.byGroup.delete(groupId);
    return true;
  }
}

export class OffsetStore {
  private readonly committed = new Offsets();
  private readonly pendingByProducer = new Map<number, Offsets>();
  private readonly openTransactionsByGroup = new Map<string, Set<number>>();

  get(groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.committed.get(groupId, topic, partition);
  }

  /** The group's committed offsets by topic and partition (live view; do not mutate). */
  groupOffsets(groupId: string): ReadonlyMap<string, ReadonlyMap<number, OffsetAndMetadata>> | undefined {
    return this.committed.byGroup.get(groupId);
  }

  groupIds(): IterableIterator<string> {
    return this.committed.byGroup.keys();
  }

  hasOpenTransactions(groupId: string): boolean {
    return this.openTransactionsByGroup.has(groupId);
  }

  hasPendingTransactionalOffset(groupId: string, topic: string, partition: number): boolean {
    const producers = this.openTransactionsByGroup.get(groupId);
    if (producers === undefined) return false;
    for (const producerId of producers) {
      if (this.pendingByProducer.get(producerId)?.get(groupId, topic, partition) !== undefined) return true;
    }
    return false;
  }

  /** Partitions with pending transactional offsets and no committed one (each needs its own tombstone). */
  pendingOnlyPartitions(groupId: string): { topic: string; partition: number }[] {
    const out: { topic: string; partition: number }[] = [];
    for (const producerId of this.openTransactionsByGroup.get(groupId) ?? []) {
      for (const [topic, partitions] of this.pendingByProducer.get(producerId)?.byGroup.get(groupId) ?? []) {
        for (const partition of partitions.keys()) {
          if (this.get(groupId, topic, partition) === undefined && !out.some((p) => p.topic === topic && p.partition === partition)) out.push({ topic, partition });
        }
      }
    }
    return out;
  }

  /** Replays an OffsetCommit record: a value commits (pending when transactional), a tombstone deletes. */
  replayCommit(groupId: string, topic: string, partition: number, offset: OffsetAndMetadata | null, producerId: number): void {
    if (offset === null) {
      this.committed.remove(groupId, topic, partition);
      for (const openProducerId of this.openTransactionsByGroup.get(groupId) ?? []) {
        this.pendingByProducer.get(openProducerId)?.remove(groupId, topic, partition);
      }
      return;
    }
    if (producerId < 0) {
      this.committed.put(groupId, topic, partition, offset);
      return;
    }
    let pending = this.pendingByProducer.get(producerId);
    if (pending === undefined) this.pendingByProducer.set(producerId, (pending = new Offsets()));
    pending.put(groupId, topic, partition, offset);
    let producers = this.openTransactionsByGroup.get(groupId);
    if (producers === undefined) this.openTransactionsByGroup.set(groupId, (producers = new Set()));
    producers.add(producerId);
  }

  /** Replays a transaction marker: COMMIT makes the producer's pending offsets committed, ABORT drops them. */
  replayEndTransaction(producerId: number, committed: boolean): void {
    const pending = this.pendingByProducer.get(producerId);
    if (pending === undefined) return;
    this.pendingByProducer.delete(producerId);
    for (const groupId of pending.byGroup.keys()) {
      const producers = this.openTransactionsByGroup.get(groupId);
      producers?.delete(producerId);
      if (producers !== undefined && producers.size === 0) this.openTransactionsByGroup.delete(groupId);
    }
    if (!committed) return;
    for (const [groupId, topics] of pending.byGroup) {
      for (const [topic, partitions] of topics) {
        for (const [partition, offset] of partitions) {
          const existing = this.committed.get(groupId, topic, partition);
          if (existing === undefined || offset.recordOffset > existing.recordOffset) this.committed.put(groupId, topic, partition, offset);
        }
      }
    }
  }

  /** Drops everything a group holds (after its deletion records were replayed). */
  hasOffsets(groupId: string): boolean {
    return this.committed.byGroup.has(groupId);
  }
}
