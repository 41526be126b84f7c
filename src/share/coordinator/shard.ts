/**
 * One `__share_group_state` partition's share coordinator state (Kafka
 * 4.4's ShareCoordinatorShard): the durable state of every share partition
 * whose key hashes to this partition, rebuilt by replaying the partition's
 * records and changed only by replaying the records an operation returns.
 *
 * Per share partition (group, topic id, partition): the state (SPSO, state
 * epoch, leader epoch, in-flight batches, ...), the highest leader and
 * state epochs seen (what fences a stale writer), and how many update
 * records were written since its last snapshot.
 *
 * A write becomes a ShareUpdate record with only the batches it sent; after
 * share.coordinator.snapshot.update.records.per.snapshot updates it becomes
 * a ShareSnapshot of the merged state instead, so a load replays at most
 * that many updates after a snapshot. Initialize writes a fresh snapshot
 * (snapshot epoch + 1, no batches); delete writes a tombstone.
 *
 * Validation and errors as Kafka 4.4's shard: INVALID_REQUEST for negative
 * ids and epochs and for a read or write of a share partition never
 * initialized, FENCED_LEADER_EPOCH for a leader epoch below the last one,
 * FENCED_STATE_EPOCH for a state epoch below the current one,
 * UNKNOWN_TOPIC_OR_PARTITION when the metadata has no such partition. A
 * read at a newer leader epoch records it (an update record with no
 * batches), so the previous leader's writes are fenced from then on.
 */
import type { Clock } from '../../io/clock.js';
import type { MetadataImage } from '../../metadata/image.js';
import { CoordinatorApiError } from '../../coordinator/errors.js';
import type { CoordinatorResult } from '../../coordinator/operation.js';
import type { CoordinatorShard } from '../../coordinator/runtime.js';
import { ErrorCode } from '../../protocol/errors.js';
import { shareCoordinatorKey, UNINITIALIZED_START_OFFSET, type PersisterStateBatch, type SharePartitionKey, type WriteStateInput } from '../persister.js';
import { combineStateBatches } from './batch-combiner.js';
import type { ShareCoordinatorRecord, ShareSnapshotValue, ShareStateKey, ShareUpdateValue } from './records.js';

/** A share partition's state as the coordinator keeps it (Kafka's ShareGroupOffset). */
export interface ShareGroupOffset {
  snapshotEpoch: number;
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: number;
  deliveryCompleteCount: number;
  stateBatches: PersisterStateBatch[];
  createTimestamp: number;
  writeTimestamp: number;
}

export interface ReadStateResponse {
  stateEpoch: number;
  startOffset: number;
  stateBatches: PersisterStateBatch[];
}

export interface ReadSummaryResponse {
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: number;
  deliveryCompleteCount: number;
}

type Result<T> = CoordinatorResult<T, ShareCoordinatorRecord>;

export const NEGATIVE_PARTITION_ID = 'The partition id cannot be a negative number.';
export const NEGATIVE_LEADER_EPOCH = 'The leader epoch cannot be a negative number.';
export const NEGATIVE_STATE_EPOCH = 'The state epoch cannot be a negative number.';
export const WRITE_UNINITIALIZED_SHARE_PARTITION = 'Write operation on uninitialized share partition not allowed.';
export const READ_UNINITIALIZED_SHARE_PARTITION = 'Read operation on uninitialized share partition not allowed.';

export interface ShareCoordinatorShardOptions {
  clock: Clock;
  image: () => MetadataImage;
  /** share.coordinator.snapshot.update.records.per.snapshot */
  snapshotUpdateRecordsPerSnapshot: number;
  /** share.coordinator.cold.partition.snapshot.interval.ms */
  coldPartitionSnapshotIntervalMs: number;
}

interface Entry {
  key: SharePartitionKey;
  offset: ShareGroupOffset;
}

export class ShareCoordinatorShard implements CoordinatorShard<ShareCoordinatorRecord> {
  private readonly states = new Map<string, Entry>();
  private readonly leaderEpochs = new Map<string, number>();
  private readonly stateEpochs = new Map<string, number>();
  private readonly updatesSinceSnapshot = new Map<string, number>();

  constructor(private readonly options: ShareCoordinatorShardOptions) {}

  /** The state of a share partition, for tests and read views. */
  state(key: SharePartitionKey): ShareGroupOffset | undefined {
    return this.states.get(shareCoordinatorKey(key))?.offset;
  }

  /** Every share partition this shard holds. */
  keys(): SharePartitionKey[] {
    return [...this.states.values()].map((entry) => entry.key);
  }

  updatesSince(key: SharePartitionKey): number {
    return this.updatesSinceSnapshot.get(shareCoordinatorKey(key)) ?? 0;
  }

  // ---- replay

  replay(record: ShareCoordinatorRecord): void {
    const key = { groupId: record.key.groupId, topicId: record.key.topicId, partition: record.key.partition };
    if (record.type === 'ShareSnapshot') this.replaySnapshot(key, record.value);
    else this.replayUpdate(key, record.value);
  }

  private replaySnapshot(key: SharePartitionKey, value: ShareSnapshotValue | null): void {
    const id = shareCoordinatorKey(key);
    if (value === null) {
      this.states.delete(id);
      this.leaderEpochs.delete(id);
      this.stateEpochs.delete(id);
      this.updatesSinceSnapshot.delete(id);
      return;
    }
    raiseTo(this.leaderEpochs, id, value.leaderEpoch);
    raiseTo(this.stateEpochs, id, value.stateEpoch);
    this.states.set(id, { key, offset: { ...value, stateBatches: value.stateBatches.map(toBatch) } });
    // A snapshot written because the updates reached the limit starts the count again.
    if ((this.updatesSinceSnapshot.get(id) ?? 0) >= this.options.snapshotUpdateRecordsPerSnapshot) this.updatesSinceSnapshot.set(id, 0);
  }

  private replayUpdate(key: SharePartitionKey, value: ShareUpdateValue): void {
    const id = shareCoordinatorKey(key);
    raiseTo(this.leaderEpochs, id, value.leaderEpoch);
    const soFar = this.states.get(id)?.offset;
    const batches = value.stateBatches.map(toBatch);
    const merged: ShareGroupOffset =
      soFar === undefined
        ? { snapshotEpoch: value.snapshotEpoch, stateEpoch: 0, leaderEpoch: value.leaderEpoch, startOffset: value.startOffset, deliveryCompleteCount: value.deliveryCompleteCount, stateBatches: batches, createTimestamp: 0, writeTimestamp: 0 }
        : mergeUpdate(soFar, value, batches);
    this.states.set(id, { key, offset: merged });
    this.updatesSinceSnapshot.set(id, (this.updatesSinceSnapshot.get(id) ?? 0) + 1);
  }

  replayEndTransaction(): void {
    // The share coordinator never writes transactionally.
  }

  onLoaded(): void {}

  onUnloaded(): void {}

  // ---- operations

  /** InitializeShareGroupState: a fresh snapshot at the given state epoch and start offset, no batches. */
  initializeState(key: SharePartitionKey, input: { stateEpoch: number; startOffset: number }): Result<void> {
    this.checkPartitionId(key);
    if (input.stateEpoch < 0) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, NEGATIVE_STATE_EPOCH);
    const id = shareCoordinatorKey(key);
    if ((this.stateEpochs.get(id) ?? -1) > input.stateEpoch) throw new CoordinatorApiError(ErrorCode.FENCED_STATE_EPOCH);
    this.checkTopicPartition(key);
    const current = this.states.get(id)?.offset;
    const nowMs = this.options.clock.nowMs();
    const value: ShareSnapshotValue = {
      snapshotEpoch: current === undefined ? 0 : current.snapshotEpoch + 1,
      stateEpoch: input.stateEpoch,
      leaderEpoch: 0,
      startOffset: input.startOffset,
      deliveryCompleteCount: input.startOffset === UNINITIALIZED_START_OFFSET ? -1 : 0,
      stateBatches: [],
      createTimestamp: nowMs,
      writeTimestamp: nowMs,
    };
    return { records: [snapshotRecord(key, value)], response: undefined, replayRecords: true };
  }

  /** ReadShareGroupState: the state, recording a newer leader epoch with an update record. */
  readState(key: SharePartitionKey, leaderEpoch: number): Result<ReadStateResponse> {
    this.checkPartitionId(key);
    if (leaderEpoch < 0) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH);
    const id = shareCoordinatorKey(key);
    const current = this.states.get(id)?.offset;
    if (current === undefined) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED_SHARE_PARTITION);
    if ((this.leaderEpochs.get(id) ?? -1) > leaderEpoch) throw new CoordinatorApiError(ErrorCode.FENCED_LEADER_EPOCH);
    this.checkTopicPartition(key);
    const response = { stateEpoch: current.stateEpoch, startOffset: current.startOffset, stateBatches: current.stateBatches };
    if (this.leaderEpochs.get(id) === leaderEpoch) return { records: [], response, replayRecords: true };
    const record = this.stateRecord(key, current, {
      stateEpoch: current.stateEpoch,
      leaderEpoch,
      startOffset: current.startOffset,
      deliveryCompleteCount: current.deliveryCompleteCount,
      stateBatches: [],
    }, { updateLeaderEpoch: true });
    return { records: [record], response, replayRecords: true };
  }

  /** WriteShareGroupState: an update record (or a snapshot, every N updates) with the batches sent. */
  writeState(key: SharePartitionKey, input: WriteStateInput): Result<void> {
    this.checkPartitionId(key);
    if (input.leaderEpoch < 0) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH);
    if (input.stateEpoch < 0) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, NEGATIVE_STATE_EPOCH);
    const id = shareCoordinatorKey(key);
    const current = this.states.get(id)?.offset;
    if (current === undefined) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED_SHARE_PARTITION);
    if ((this.leaderEpochs.get(id) ?? -1) > input.leaderEpoch) throw new CoordinatorApiError(ErrorCode.FENCED_LEADER_EPOCH);
    if ((this.stateEpochs.get(id) ?? -1) > input.stateEpoch) throw new CoordinatorApiError(ErrorCode.FENCED_STATE_EPOCH);
    this.checkTopicPartition(key);
    return { records: [this.stateRecord(key, current, input, { updateLeaderEpoch: false })], response: undefined, replayRecords: true };
  }

  /** ReadShareGroupStateSummary: no leader-epoch check, as Kafka 4.4; an unknown share partition reads as start offset -1. */
  readSummary(key: SharePartitionKey): ReadSummaryResponse {
    this.checkPartitionId(key);
    this.checkTopicPartition(key);
    const current = this.states.get(shareCoordinatorKey(key))?.offset;
    if (current === undefined) return { startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1, leaderEpoch: 0, stateEpoch: 0 };
    return { startOffset: current.startOffset, deliveryCompleteCount: current.deliveryCompleteCount, leaderEpoch: current.leaderEpoch, stateEpoch: current.stateEpoch };
  }

  /** DeleteShareGroupState: a tombstone; deleting what is not there succeeds and writes nothing. */
  deleteState(key: SharePartitionKey): Result<void> {
    this.checkPartitionId(key);
    this.checkTopicPartition(key);
    if (!this.states.has(shareCoordinatorKey(key))) return { records: [], response: undefined, replayRecords: true };
    return { records: [tombstone(key)], response: undefined, replayRecords: true };
  }

  /** Snapshots again every share partition not written for coldPartitionSnapshotIntervalMs, so old records can be pruned. */
  snapshotColdPartitions(): Result<void> {
    const nowMs = this.options.clock.nowMs();
    const records: ShareCoordinatorRecord[] = [];
    // As Kafka 4.4: nothing while every state was already snapshotted cold once (its write time moved off its create time).
    const entries = [...this.states.values()];
    if (entries.every(({ offset }) => offset.createTimestamp !== offset.writeTimestamp)) return { records, response: undefined, replayRecords: true };
    for (const { key, offset } of entries) {
      if (nowMs - offset.writeTimestamp < this.options.coldPartitionSnapshotIntervalMs) continue;
      records.push(snapshotRecord(key, { ...offset, snapshotEpoch: offset.snapshotEpoch + 1, writeTimestamp: nowMs }));
    }
    return { records, response: undefined, replayRecords: true };
  }

  /** Tombstones for every share partition of the deleted topics. */
  deleteTopics(topicIds: ReadonlySet<string>): Result<void> {
    const records = [...this.states.values()].filter(({ key }) => topicIds.has(key.topicId)).map(({ key }) => tombstone(key));
    return { records, response: undefined, replayRecords: true };
  }

  // ---- helpers

  private checkPartitionId(key: SharePartitionKey): void {
    if (key.partition < 0) throw new CoordinatorApiError(ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION_ID);
  }

  private checkTopicPartition(key: SharePartitionKey): void {
    const topic = this.options.image().topicsById.get(key.topicId);
    if (topic === undefined || topic.partitions.size <= key.partition) throw new CoordinatorApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }

  /** The record of a write: an update with the sent batches, or a snapshot of the merged state once enough updates were written. */
  private stateRecord(key: SharePartitionKey, current: ShareGroupOffset, input: WriteStateInput, options: { updateLeaderEpoch: boolean }): ShareCoordinatorRecord {
    const leaderEpoch = options.updateLeaderEpoch ? input.leaderEpoch : current.leaderEpoch;
    const startOffset = Math.max(input.startOffset, current.startOffset);
    const deliveryCompleteCount = mergedDeliveryCompleteCount(current, input);
    const updates = this.updatesSinceSnapshot.get(shareCoordinatorKey(key)) ?? 0;
    if (updates >= this.options.snapshotUpdateRecordsPerSnapshot) {
      const nowMs = this.options.clock.nowMs();
      return snapshotRecord(key, {
        snapshotEpoch: current.snapshotEpoch + 1,
        stateEpoch: current.stateEpoch,
        leaderEpoch,
        startOffset,
        deliveryCompleteCount,
        stateBatches: combineStateBatches(current.stateBatches, input.stateBatches, startOffset),
        createTimestamp: nowMs,
        writeTimestamp: nowMs,
      });
    }
    const value: ShareUpdateValue = {
      snapshotEpoch: current.snapshotEpoch,
      leaderEpoch,
      startOffset,
      deliveryCompleteCount,
      stateBatches: combineStateBatches([], input.stateBatches, startOffset),
    };
    return { type: 'ShareUpdate', key: stateKey(key), value };
  }
}

/**
 * The delivery-complete count a write leaves (KIP-1226): the sent one when
 * the start offset moved on, the larger of the two at the same start offset,
 * the current one when the writer is behind.
 */
function mergedDeliveryCompleteCount(current: ShareGroupOffset, input: WriteStateInput): number {
  if (input.startOffset === current.startOffset) return Math.max(input.deliveryCompleteCount, current.deliveryCompleteCount);
  if (input.startOffset < current.startOffset) return current.deliveryCompleteCount;
  return input.deliveryCompleteCount;
}

/** An update replayed onto the state so far (Kafka's ShareCoordinatorShard.merge). */
function mergeUpdate(soFar: ShareGroupOffset, value: ShareUpdateValue, batches: PersisterStateBatch[]): ShareGroupOffset {
  const startOffset = value.startOffset === UNINITIALIZED_START_OFFSET ? soFar.startOffset : value.startOffset;
  return {
    ...soFar,
    startOffset,
    deliveryCompleteCount: value.deliveryCompleteCount,
    leaderEpoch: value.leaderEpoch === -1 ? soFar.leaderEpoch : value.leaderEpoch,
    stateBatches: combineStateBatches(soFar.stateBatches, batches, startOffset),
  };
}

function raiseTo(map: Map<string, number>, id: string, epoch: number): void {
  if ((map.get(id) ?? Number.MIN_SAFE_INTEGER) < epoch) map.set(id, epoch);
}

function toBatch(batch: PersisterStateBatch): PersisterStateBatch {
  return { firstOffset: batch.firstOffset, lastOffset: batch.lastOffset, deliveryState: batch.deliveryState, deliveryCount: batch.deliveryCount };
}

function stateKey(key: SharePartitionKey): ShareStateKey {
  return { groupId: key.groupId, topicId: key.topicId, partition: key.partition };
}

function snapshotRecord(key: SharePartitionKey, value: ShareSnapshotValue): ShareCoordinatorRecord {
  return { type: 'ShareSnapshot', key: stateKey(key), value: { ...value, stateBatches: value.stateBatches.map(toBatch) } };
}

function tombstone(key: SharePartitionKey): ShareCoordinatorRecord {
  return { type: 'ShareSnapshot', key: stateKey(key), value: null };
}
