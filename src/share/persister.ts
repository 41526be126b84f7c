/**
 * The share-group state persister (KIP-932's Persister): how a
 * share-partition leader, and the group coordinator's share-group offset
 * admin, read and write a share partition's durable delivery state, which
 * the share coordinator keeps in `__share_group_state`.
 *
 * The state of one share partition (group, topic id, partition) is its
 * share-partition start offset (SPSO), a state epoch (bumped when the state
 * is re-initialized, so a stale writer is fenced), the leader epoch of the
 * share-partition leader that last wrote it, and the in-flight batches
 * above the SPSO whose state is not AVAILABLE-with-zero-deliveries.
 *
 * startOffset -1 means the share partition was never initialized: its
 * leader starts at `share.auto.offset.reset` (Kafka's
 * PartitionFactory.UNINITIALIZED_START_OFFSET).
 *
 * Errors are Kafka error codes in the results, never exceptions, as the
 * RPCs 83-87 carry them (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION, ...).
 */

/** Share partitions are keyed by group, topic id and partition, as the coordinator's records are. */
export interface SharePartitionKey {
  groupId: string;
  topicId: string;
  partition: number;
}

/** The share coordinator's key string for FindCoordinator key type 2: `groupId:topicId:partition`. */
export function shareCoordinatorKey(key: SharePartitionKey): string {
  return `${key.groupId}:${key.topicId}:${key.partition}`;
}

/** A run of offsets with one delivery state (RecordState: 0 AVAILABLE, 2 ACKNOWLEDGED, 4 ARCHIVED) and count. */
export interface PersisterStateBatch {
  firstOffset: number;
  lastOffset: number;
  deliveryState: number;
  deliveryCount: number;
}

export const UNINITIALIZED_START_OFFSET = -1;

export interface PersisterResult {
  errorCode: number;
  errorMessage: string | null;
}

export interface ReadStateResult extends PersisterResult {
  stateEpoch: number;
  startOffset: number;
  stateBatches: PersisterStateBatch[];
}

export interface ReadSummaryResult extends PersisterResult {
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: number;
  /** Records at or above the SPSO already acknowledged or archived (KIP-1226); -1 when unknown. */
  deliveryCompleteCount: number;
}

export interface WriteStateInput {
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: number;
  deliveryCompleteCount: number;
  stateBatches: PersisterStateBatch[];
}

export interface SharePersister {
  /** InitializeShareGroupState: sets the SPSO and state epoch, dropping any earlier batches. */
  initializeState(key: SharePartitionKey, input: { stateEpoch: number; startOffset: number }): Promise<PersisterResult>;
  /** ReadShareGroupState, by a share-partition leader at `leaderEpoch` (a lower epoch than the last writer's is fenced). */
  readState(key: SharePartitionKey, input: { leaderEpoch: number }): Promise<ReadStateResult>;
  /** WriteShareGroupState: replaces the state at and above `startOffset` with `stateBatches`. */
  writeState(key: SharePartitionKey, input: WriteStateInput): Promise<PersisterResult>;
  /** DeleteShareGroupState: forgets the share partition (the group's offsets were deleted). */
  deleteState(key: SharePartitionKey): Promise<PersisterResult>;
  /** ReadShareGroupStateSummary: the SPSO and epochs without the batches (DescribeShareGroupOffsets, lag). */
  readSummary(key: SharePartitionKey, input: { leaderEpoch: number }): Promise<ReadSummaryResult>;
}
