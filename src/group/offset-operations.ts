/**
 * Offset and group-lifecycle operations of one shard: OffsetCommit,
 * OffsetFetch, OffsetDelete, DeleteGroups, and the periodic expiry of
 * offsets (offsets.retention.minutes) and of empty groups.
 *
 * Commit rules (Kafka's): a commit with generation/epoch -1 and no member is
 * a "simple" commit, accepted when the group is empty or does not exist (a
 * simple group is created for it); a member's commit must name a current
 * member and its current generation (classic: ILLEGAL_GENERATION,
 * UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS while
 * CompletingRebalance) or member epoch (consumer groups: STALE_MEMBER_EPOCH).
 * KIP-1251: a consumer group member may also commit with an older epoch, for
 * partitions it has held since that epoch (a heartbeat bumped its epoch
 * while the commit was in flight); one partition failing fails the whole
 * request, as in Kafka.
 * A committed offset is the next offset to read.
 */
import { shareGroupTombstones } from './share-group-protocol.js';
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import type { ClassicGroup } from './classic-group.js';
import { partitionAssignmentEpoch, type ConsumerGroup } from './consumer-group.js';
import { GroupApiError } from './errors.js';
import type { OffsetAndMetadata } from './offsets.js';
import { coordinatorResult, type CoordinatorResult } from './operation.js';
import { groupRecord, offsetCommitKey, type GroupRecord } from './records.js';
import { consumerGroupTombstones, type Group, type GroupCoordinatorShard } from './shard.js';

export interface OffsetCommitInput {
  groupId: string;
  generationIdOrMemberEpoch: number;
  memberId: string;
  groupInstanceId: string | null;
  /** -1 (the default) means the broker's offsets.retention.minutes. */
  retentionTimeMs: number;
  topics: readonly {
    name: string;
    partitions: readonly { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; committedMetadata: string | null }[];
  }[];
}

export interface CommitOptions {
  /** TxnOffsetCommit's rules (see validateClassicCommit, validateConsumerCommit). */
  isTransactional?: boolean;
}

export interface PartitionError {
  partitionIndex: number;
  errorCode: number;
}

export interface OffsetFetchInput {
  groupId: string;
  memberId: string | null;
  memberEpoch: number;
  /** null: every partition the group has an offset for. */
  topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null;
  requireStable: boolean;
}

export interface FetchedPartition {
  partitionIndex: number;
  committedOffset: number;
  committedLeaderEpoch: number;
  metadata: string;
  errorCode: number;
}

export interface OffsetFetchResult {
  groupId: string;
  errorCode: number;
  topics: { name: string; partitions: FetchedPartition[] }[];
}

export interface DeleteGroupResult {
  groupId: string;
  errorCode: number;
  errorMessage: string | null;
}

const NO_OFFSET = -1;
/** The OffsetCommit version whose rules TxnOffsetCommit follows (before v9's GROUP_ID_NOT_FOUND for an unknown group). */
const TXN_COMMIT_RULES_VERSION = 8;

export class OffsetOperations {
  constructor(private readonly shard: GroupCoordinatorShard) {}

  // ---- OffsetCommit

  commit(request: OffsetCommitInput, apiVersion: number, options: CommitOptions = {}): CoordinatorResult<{ name: string; partitions: PartitionError[] }[]> {
    const group = this.validateCommit(request, apiVersion, options.isTransactional === true);
    if (group?.type === 'classic' && (group.isInState('Stable') || group.isInState('PreparingRebalance')) && group.hasMember(request.memberId)) {
      // A classic member's commit keeps its session alive.
      this.shard.classic.rescheduleHeartbeat(group, group.member(request.memberId));
    }
    const nowMs = this.shard.nowMs();
    const expireTimestampMs = request.retentionTimeMs === -1 ? -1 : nowMs + request.retentionTimeMs;
    const records: GroupRecord[] = [];
    const image = this.shard.image;
    const response = request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((p) => {
        if (p.committedMetadata !== null && p.committedMetadata.length > this.shard.config.offsetMetadataMaxBytes) {
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
        }
        records.push(
          groupRecord('OffsetCommit', offsetCommitKey(request.groupId, topic.name, p.partitionIndex), {
            offset: p.committedOffset,
            // An explicit expiry is written as OffsetCommitValue v1, which has no leader epoch (as in Kafka).
            leaderEpoch: expireTimestampMs === -1 ? p.committedLeaderEpoch : -1,
            metadata: p.committedMetadata ?? '',
            commitTimestamp: nowMs,
            expireTimestamp: expireTimestampMs,
            topicId: image.topicsByName.get(topic.name)?.id ?? ZERO_UUID,
          }),
        );
        return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
      }),
    }));
    return coordinatorResult(records, response);
  }

  /**
   * TxnOffsetCommit (Kafka's commitTransactionalOffset): the commit rules of
   * OffsetCommit, except that a group that does not exist is
   * ILLEGAL_GENERATION for a member and a stale member epoch is
   * ILLEGAL_GENERATION too; the records go in the producer's transaction.
   */
  commitTransactional(
    request: OffsetCommitInput,
    producer: { producerId: number; producerEpoch: number },
  ): CoordinatorResult<{ name: string; partitions: PartitionError[] }[]> {
    let result: CoordinatorResult<{ name: string; partitions: PartitionError[] }[]>;
    try {
      result = this.commit(request, TXN_COMMIT_RULES_VERSION, { isTransactional: true });
    } catch (error) {
      if (error instanceof GroupApiError && error.errorCode === ErrorCode.STALE_MEMBER_EPOCH) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION);
      throw error;
    }
    return { ...result, transaction: producer };
  }

  /** The group a commit goes to (null for a simple commit to a group that does not exist yet). */
  private validateCommit(request: OffsetCommitInput, apiVersion: number, isTransactional: boolean): Group | null {
    const group = this.shard.groups.get(request.groupId);
    if (group === undefined) {
      if (request.generationIdOrMemberEpoch < 0) return null;
      // v9+ says so plainly; older clients expect ILLEGAL_GENERATION.
      throw new GroupApiError(apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION, `Group ${request.groupId} not found.`);
    }
    if (group.type === 'share') throw notConsumerGroup(request.groupId);
    if (group.type === 'classic') validateClassicCommit(group, request, isTransactional);
    else validateConsumerCommit(group, request, { apiVersion, image: this.shard.image, isTransactional });
    return group;
  }

  // ---- OffsetFetch

  fetch(request: OffsetFetchInput): OffsetFetchResult {
    const groupId = request.groupId;
    const group = this.shard.groups.get(groupId);
    const groupExists = group !== undefined && !(group.type === 'classic' && group.isInState('Dead'));
    if (groupExists && group.type === 'share') throw notConsumerGroup(groupId);
    if (groupExists && group.type === 'consumer') validateConsumerFetch(group, request);
    if (request.topics === null) return this.fetchAll(request, groupExists);
    const topics = request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitionIndexes.map((partitionIndex) => {
        if (request.requireStable && this.shard.offsets.hasPendingTransactionalOffset(groupId, topic.name, partitionIndex)) {
          return noOffset(partitionIndex, ErrorCode.UNSTABLE_OFFSET_COMMIT);
        }
        const offset = groupExists ? this.shard.offsets.get(groupId, topic.name, partitionIndex) : undefined;
        return offset === undefined ? noOffset(partitionIndex, ErrorCode.NONE) : fetched(partitionIndex, offset);
      }),
    }));
    return { groupId, errorCode: ErrorCode.NONE, topics };
  }

  private fetchAll(request: OffsetFetchInput, groupExists: boolean): OffsetFetchResult {
    const groupId = request.groupId;
    const offsets = groupExists ? this.shard.offsets.groupOffsets(groupId) : undefined;
    const topics: OffsetFetchResult['topics'] = [];
    for (const [name, partitions] of offsets ?? []) {
      topics.push({
        name,
        partitions: [...partitions].map(([partitionIndex, offset]) =>
          request.requireStable && this.shard.offsets.hasPendingTransactionalOffset(groupId, name, partitionIndex)
            ? noOffset(partitionIndex, ErrorCode.UNSTABLE_OFFSET_COMMIT)
            : fetched(partitionIndex, offset),
        ),
      });
    }
    return { groupId, errorCode: ErrorCode.NONE, topics };
  }

  // ---- OffsetDelete

  deleteOffsets(request: { groupId: string; topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[] }): CoordinatorResult<{
    name: string;
    partitions: PartitionError[];
  }[]> {
    const group = this.shard.groupOrThrow(request.groupId);
    if (group.type === 'share') throw notConsumerGroup(request.groupId);
    if (group.type === 'classic') {
      if (group.isInState('Dead')) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${request.groupId} is in dead state.`);
      const active = group.isInState('Stable') || group.isInState('PreparingRebalance') || group.isInState('CompletingRebalance');
      if (active && !group.usesConsumerGroupProtocol) throw new GroupApiError(ErrorCode.NON_EMPTY_GROUP);
    }
    const records: GroupRecord[] = [];
    const response = request.topics.map((topic) => {
      if (group.isSubscribedToTopic(topic.name)) {
        return { name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC })) };
      }
      for (const p of topic.partitions) {
        const present =
          this.shard.offsets.get(request.groupId, topic.name, p.partitionIndex) !== undefined ||
          this.shard.offsets.hasPendingTransactionalOffset(request.groupId, topic.name, p.partitionIndex);
        if (present) records.push(groupRecord('OffsetCommit', offsetCommitKey(request.groupId, topic.name, p.partitionIndex), null));
      }
      return { name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE })) };
    });
    return coordinatorResult(records, response);
  }

  // ---- DeleteGroups

  deleteGroups(groupIds: readonly string[]): CoordinatorResult<DeleteGroupResult[]> {
    const records: GroupRecord[] = [];
    const results = groupIds.map((groupId) => {
      const group = this.shard.groups.get(groupId);
      if (group === undefined || (group.type === 'classic' && group.isInState('Dead'))) {
        return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.` };
      }
      if (!group.isEmpty) return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: 'The group is not empty.' };
      records.push(...this.allOffsetTombstones(groupId), ...groupTombstones(group));
      return { groupId, errorCode: ErrorCode.NONE, errorMessage: null };
    });
    return coordinatorResult(records, results);
  }

  private allOffsetTombstones(groupId: string): GroupRecord[] {
    const records: GroupRecord[] = [];
    for (const [topic, partitions] of this.shard.offsets.groupOffsets(groupId) ?? []) {
      for (const partition of partitions.keys()) records.push(groupRecord('OffsetCommit', offsetCommitKey(groupId, topic, partition), null));
    }
    for (const { topic, partition } of this.shard.offsets.pendingOnlyPartitions(groupId)) {
      records.push(groupRecord('OffsetCommit', offsetCommitKey(groupId, topic, partition), null));
    }
    return records;
  }

  /** Tombstones for every group's offsets of a deleted topic (Kafka's onPartitionsDeleted). */
  deleteTopicOffsets(topic: string): CoordinatorResult<void> {
    const records: GroupRecord[] = [];
    for (const groupId of [...this.shard.offsets.groupIds()]) {
      for (const partition of this.shard.offsets.groupOffsets(groupId)?.get(topic)?.keys() ?? []) {
        records.push(groupRecord('OffsetCommit', offsetCommitKey(groupId, topic, partition), null));
      }
    }
    return coordinatorResult(records, undefined);
  }

  // ---- expiry

  /**
   * Tombstones for expired offsets, and for empty groups left without
   * offsets (Kafka's cleanupGroupMetadata). An offset expires
   * offsets.retention.minutes after: its commit, for a simple group, for a
   * topic a live group no longer subscribes to, and for consumer groups; the
   * moment the group became Empty, for an empty classic group; or at its
   * explicit expire timestamp (OffsetCommit v2-v4 retention time).
   */
  cleanupExpired(): CoordinatorResult<void> {
    const records: GroupRecord[] = [];
    const nowMs = this.shard.nowMs();
    for (const [groupId, group] of [...this.shard.groups]) {
      // A share group never expires (Kafka's ShareGroup.shouldExpire): its state lives in the share coordinator.
      if (group.type === 'share') continue;
      const allExpired = this.expireGroupOffsets(groupId, group, nowMs, records);
      if (allExpired && group.isEmpty) records.push(...groupTombstones(group));
    }
    return coordinatorResult(records, undefined);
  }

  private expireGroupOffsets(groupId: string, group: Group, nowMs: number, records: GroupRecord[]): boolean {
    const offsets = this.shard.offsets.groupOffsets(groupId);
    if (offsets === undefined) return true;
    const baseTimestamp = expirationBase(group);
    if (baseTimestamp === null) return false;
    const retentionMs = this.shard.config.offsetsRetentionMs;
    let allExpired = true;
    for (const [topic, partitions] of offsets) {
      if (group.isSubscribedToTopic(topic)) {
        allExpired = false;
        continue;
      }
      for (const [partition, offset] of partitions) {
        const expired = offset.expireTimestampMs !== null ? nowMs >= offset.expireTimestampMs : nowMs - baseTimestamp(offset) >= retentionMs;
        if (expired && !this.shard.offsets.hasPendingTransactionalOffset(groupId, topic, partition)) {
          records.push(groupRecord('OffsetCommit', offsetCommitKey(groupId, topic, partition), null));
        } else {
          allExpired = false;
        }
      }
    }
    return allExpired && !this.shard.offsets.hasOpenTransactions(groupId);
  }
}

/** What an offset's age is measured from, or null when the group's offsets do not expire now. */
function expirationBase(group: Group): ((offset: OffsetAndMetadata) => number) | null {
  if (group.type === 'consumer') return (offset) => offset.commitTimestampMs;
  // Share groups keep no offsets here (their state is in __share_group_state).
  if (group.type === 'share') return null;
  if (group.protocolType === null) return (offset) => offset.commitTimestampMs;
  if (group.isInState('Empty')) {
    const since = group.currentStateTimestampMs;
    return (offset) => since ?? offset.commitTimestampMs;
  }
  if (group.usesConsumerGroupProtocol && group.subscribedTopics !== null && group.isInState('Stable')) return (offset) => offset.commitTimestampMs;
  return null;
}

function groupTombstones(group: Group): GroupRecord[] {
  if (group.type === 'share') return shareGroupTombstones(group);
  return group.type === 'classic' ? [group.tombstone()] : consumerGroupTombstones(group);
}

/** Kafka's ShareGroup refuses offset commits, fetches and deletes in `__consumer_offsets`. */
function notConsumerGroup(groupId: string): GroupApiError {
  return new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
}

/**
 * A TxnOffsetCommit (isTransactional) before v3 carries no member or
 * generation, so one without them is accepted from a group that is not
 * empty, and none waits for CompletingRebalance (Kafka's ClassicGroup).
 */
function validateClassicCommit(group: ClassicGroup, request: OffsetCommitInput, isTransactional: boolean): void {
  if (group.isInState('Dead')) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const generation = request.generationIdOrMemberEpoch;
  // Generation -1: the admin client or a consumer without group management; fine while the group is empty.
  if (generation < 0 && group.isInState('Empty')) return;
  if (generation >= 0 || request.memberId !== '' || request.groupInstanceId !== null) {
    const error = group.validateMember(request.memberId, request.groupInstanceId);
    if (error !== ErrorCode.NONE) throw new GroupApiError(error);
    if (generation !== group.generationId) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION);
  } else if (!isTransactional && !group.isInState('Empty')) {
    throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID);
  }
  // The member has its new generation from JoinGroup but not its assignment yet.
  if (!isTransactional && group.isInState('CompletingRebalance')) throw new GroupApiError(ErrorCode.REBALANCE_IN_PROGRESS);
}

/** A TxnOffsetCommit names no member before v3: accepted without one, and from any protocol version. */
function validateConsumerCommit(group: ConsumerGroup, request: OffsetCommitInput, context: { apiVersion: number; image: MetadataImage; isTransactional: boolean }): void {
  const epoch = request.generationIdOrMemberEpoch;
  if (epoch < 0 && group.members.size === 0) return;
  if (context.isTransactional && epoch === -1 && request.memberId === '' && request.groupInstanceId === null) return;
  const member = group.members.get(request.memberId);
  if (member === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${request.memberId} is not a member of group ${group.groupId}.`);
  const classic = member.classicMemberMetadata !== null;
  if (!classic && !context.isTransactional && context.apiVersion < 9) {
    throw new GroupApiError(ErrorCode.UNSUPPORTED_VERSION, 'OffsetCommit version 9 or above must be used by members using the modern group protocol');
  }
  const epochError = classic ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.STALE_MEMBER_EPOCH;
  if (epoch === member.memberEpoch) return;
  if (epoch > member.memberEpoch) {
    throw new GroupApiError(epochError, `Received member epoch ${epoch} is newer than current member epoch ${member.memberEpoch}.`);
  }
  // KIP-1251: an older epoch is fine for a partition the member has held (assigned or pending revocation) since that epoch or before.
  for (const topic of request.topics) {
    const topicId = context.image.topicsByName.get(topic.name)?.id;
    for (const { partitionIndex } of topic.partitions) {
      const assignmentEpoch = topicId === undefined ? undefined : partitionAssignmentEpoch(member, topicId, partitionIndex);
      if (assignmentEpoch === undefined) {
        throw new GroupApiError(epochError, `Partition ${topic.name}-${partitionIndex} is not assigned or pending revocation for member.`);
      }
      if (epoch < assignmentEpoch) {
        throw new GroupApiError(epochError, `Received member epoch ${epoch} is older than assignment epoch ${assignmentEpoch} for partition ${topic.name}-${partitionIndex}.`);
      }
    }
  }
}

function validateConsumerFetch(group: ConsumerGroup, request: OffsetFetchInput): void {
  if (request.memberId === null && request.memberEpoch < 0) return;
  const member = request.memberId === null ? undefined : group.members.get(request.memberId);
  if (member === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${request.memberId} is not a member of group ${group.groupId}.`);
  if (request.memberEpoch !== member.memberEpoch) {
    throw new GroupApiError(
      member.classicMemberMetadata !== null ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.STALE_MEMBER_EPOCH,
      `The received member epoch ${request.memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`,
    );
  }
}

function noOffset(partitionIndex: number, errorCode: number): FetchedPartition {
  return { partitionIndex, committedOffset: NO_OFFSET, committedLeaderEpoch: -1, metadata: '', errorCode };
}

function fetched(partitionIndex: number, offset: OffsetAndMetadata): FetchedPartition {
  return { partitionIndex, committedOffset: offset.committedOffset, committedLeaderEpoch: offset.leaderEpoch, metadata: offset.metadata, errorCode: ErrorCode.NONE };
}
