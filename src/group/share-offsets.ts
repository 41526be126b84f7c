/**
 * The shard side of a share group's offset administration (KIP-932):
 * DeleteGroups, AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92)
 * change which share partitions the group's state metadata lists, here, as
 * records; the share coordinator's state itself is changed by the
 * persister calls around them (share-state.ts).
 *
 * Deleting moves partitions to `deleting` first and forgets them only once
 * the persister deleted their state, so a failed delete is retried by the
 * next one, as in Kafka.
 */
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { GroupApiError } from './errors.js';
import { coordinatorResult, type CoordinatorResult } from './operation.js';
import type { GroupRecord } from './records.js';
import { EMPTY_STATE_METADATA, ShareGroup, type SharePartitionsOfTopic } from './share-group.js';
import { combine, statePartitionMetadataRecord } from './share-group-protocol.js';
import type { GroupCoordinatorShard } from './shard.js';

/** Share partitions of one topic whose state is to be written or deleted. */
export interface ShareTopicPartitions {
  topicId: string;
  partitions: number[];
}

/** DeleteGroups, first step: for each empty share group, the partitions whose state the persister must delete. */
export type ShareGroupDeletion = { errorCode: number; partitions: ShareTopicPartitions[] };

export function prepareShareGroupDeletion(shard: GroupCoordinatorShard, groupIds: readonly string[]): CoordinatorResult<Map<string, ShareGroupDeletion>> {
  const records: GroupRecord[] = [];
  const out = new Map<string, ShareGroupDeletion>();
  for (const groupId of groupIds) {
    const group = shard.groups.get(groupId);
    if (group?.type !== 'share') continue;
    if (!group.isEmpty) {
      out.set(groupId, { errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: [] });
      continue;
    }
    const current = group.statePartitionMetadata;
    if (current === null) {
      out.set(groupId, { errorCode: ErrorCode.NONE, partitions: [] });
      continue;
    }
    let candidates = combine(current.initialized, current.initializing);
    // Topics a failed deletion left behind are deleted again, all their partitions, if they still exist.
    const retries = new Map<string, SharePartitionsOfTopic>();
    for (const [topicId] of current.deleting) {
      const topic = shard.image.topicsById.get(topicId);
      if (topic !== undefined) retries.set(topicId, { topicName: topic.name, partitions: new Set(topic.partitions.keys()), timestampMs: -1 });
    }
    candidates = combine(candidates, retries);
    const deleting = new Map([...candidates].map(([topicId, entry]) => [topicId, entry.topicName]));
    records.push(statePartitionMetadataRecord(groupId, { initializing: new Map(), initialized: new Map(), deleting }));
    out.set(groupId, { errorCode: ErrorCode.NONE, partitions: toList(candidates) });
  }
  return coordinatorResult(records, out);
}

/** The initialized share partitions of a group (DescribeShareGroupOffsets with no topics named). */
export function initializedSharePartitions(shard: GroupCoordinatorShard, groupId: string): ShareTopicPartitions[] {
  const group = shard.groups.get(groupId);
  if (group?.type !== 'share') return [];
  return toList(group.statePartitionMetadata?.initialized ?? new Map());
}

export interface AlterShareOffsetsTopic {
  topicName: string;
  partitions: readonly { partitionIndex: number; startOffset: number }[];
}

export interface AlterShareOffsetsResponseTopic {
  topicName: string;
  topicId: string;
  partitions: { partitionIndex: number; errorCode: number; errorMessage: string | null }[];
}

export interface AlterShareOffsetsPlan {
  responses: AlterShareOffsetsResponseTopic[];
  /** The state epoch to initialize at: the group epoch, so a share-partition leader of an older epoch is fenced. */
  stateEpoch: number;
  partitions: { topicId: string; partition: number; startOffset: number }[];
}

/**
 * AlterShareGroupOffsets: only an empty group (NON_EMPTY_GROUP, Kafka's
 * GroupNotEmptyException), created when missing; existing partitions are
 * recorded as initializing and returned with their new start offsets.
 */
export function alterShareGroupOffsets(shard: GroupCoordinatorShard, groupId: string, topics: readonly AlterShareOffsetsTopic[]): CoordinatorResult<AlterShareOffsetsPlan> {
  const existing = shard.groups.get(groupId);
  if (existing !== undefined && existing.type !== 'share') throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a share group.`);
  const group = existing ?? new ShareGroup(groupId);
  if (!group.isEmpty) throw new GroupApiError(ErrorCode.NON_EMPTY_GROUP, messageOf(ErrorCode.NON_EMPTY_GROUP));
  const nowMs = shard.nowMs();
  const responses: AlterShareOffsetsResponseTopic[] = [];
  const partitions: AlterShareOffsetsPlan['partitions'] = [];
  const initializing = new Map<string, SharePartitionsOfTopic>();
  const unknown = { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: messageOf(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) };
  for (const topic of topics) {
    const metadata = shard.image.topicsByName.get(topic.topicName);
    if (metadata === undefined) {
      responses.push({ topicName: topic.topicName, topicId: ZERO_UUID, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, ...unknown })) });
      continue;
    }
    const known = topic.partitions.filter((p) => p.partitionIndex >= 0 && p.partitionIndex < metadata.partitions.size);
    for (const p of known) partitions.push({ topicId: metadata.id, partition: p.partitionIndex, startOffset: p.startOffset });
    initializing.set(metadata.id, { topicName: topic.topicName, partitions: new Set(known.map((p) => p.partitionIndex)), timestampMs: nowMs });
    responses.push({
      topicName: topic.topicName,
      topicId: metadata.id,
      partitions: topic.partitions.map((p) =>
        known.includes(p) ? { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null } : { partitionIndex: p.partitionIndex, ...unknown },
      ),
    });
  }
  const records: GroupRecord[] = [];
  if (initializing.size > 0) {
    const current = group.statePartitionMetadata ?? EMPTY_STATE_METADATA;
    const deleting = new Map([...current.deleting].filter(([topicId]) => !initializing.has(topicId)));
    records.push(statePartitionMetadataRecord(groupId, { initializing: combine(current.initializing, initializing), initialized: current.initialized, deleting }));
  }
  return coordinatorResult(records, { responses, stateEpoch: group.groupEpoch, partitions });
}

export interface DeleteShareOffsetsResponseTopic {
  topicName: string;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface DeleteShareOffsetsPlan {
  errorTopics: DeleteShareOffsetsResponseTopic[];
  partitions: ShareTopicPartitions[];
}

/**
 * DeleteShareGroupOffsets, first step: an empty share group
 * (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP); each named topic's initialized
 * partitions (or, for a topic whose deletion failed before, all of them)
 * move to deleting; a topic with no state is UNKNOWN_TOPIC_OR_PARTITION.
 */
export function initiateDeleteShareGroupOffsets(shard: GroupCoordinatorShard, groupId: string, topicNames: readonly string[]): CoordinatorResult<DeleteShareOffsetsPlan> {
  const group = shareGroupOrThrow(shard, groupId);
  if (!group.isEmpty) throw new GroupApiError(ErrorCode.NON_EMPTY_GROUP, messageOf(ErrorCode.NON_EMPTY_GROUP));
  const errorTopics: DeleteShareOffsetsResponseTopic[] = [];
  const current = group.statePartitionMetadata;
  if (current === null) return coordinatorResult([], { errorTopics, partitions: [] });
  const initialized = new Map(current.initialized);
  const deleting = new Map(current.deleting);
  const partitions: ShareTopicPartitions[] = [];
  for (const topicName of topicNames) {
    const metadata = shard.image.topicsByName.get(topicName);
    if (metadata === undefined) {
      errorTopics.push({ topicName, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: messageOf(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) });
      continue;
    }
    const entry = initialized.get(metadata.id);
    if (entry !== undefined) {
      partitions.push({ topicId: metadata.id, partitions: [...entry.partitions].sort((a, b) => a - b) });
      initialized.delete(metadata.id);
      deleting.set(metadata.id, topicName);
    } else if (deleting.has(metadata.id)) {
      partitions.push({ topicId: metadata.id, partitions: [...metadata.partitions.keys()].sort((a, b) => a - b) });
    } else {
      errorTopics.push({ topicName, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' });
    }
  }
  const record = statePartitionMetadataRecord(groupId, { initializing: current.initializing, initialized, deleting });
  return coordinatorResult([record], { errorTopics, partitions });
}

/** DeleteShareGroupOffsets, last step: the topics the persister deleted leave `deleting`. */
export function completeDeleteShareGroupOffsets(shard: GroupCoordinatorShard, groupId: string, topicIds: readonly string[]): CoordinatorResult<void> {
  const group = shard.groups.get(groupId);
  const current = group?.type === 'share' ? group.statePartitionMetadata : null;
  if (current === null) return coordinatorResult([], undefined);
  const deleting = new Map([...current.deleting].filter(([topicId]) => !topicIds.includes(topicId)));
  return coordinatorResult([statePartitionMetadataRecord(groupId, { initializing: current.initializing, initialized: current.initialized, deleting })], undefined);
}

function shareGroupOrThrow(shard: GroupCoordinatorShard, groupId: string): ShareGroup {
  const group = shard.groups.get(groupId);
  if (group === undefined) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
  if (group.type !== 'share') throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a share group.`);
  return group;
}

function toList(map: ReadonlyMap<string, SharePartitionsOfTopic>): ShareTopicPartitions[] {
  return [...map].map(([topicId, entry]) => ({ topicId, partitions: [...entry.partitions].sort((a, b) => a - b) }));
}

function messageOf(code: number): string {
  return errorInfo(code).message;
}
