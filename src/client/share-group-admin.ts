/**
 * The admin client's share-group operations (KIP-932), in the words of
 * Kafka's Admin API:
 * - listShareGroups: ListGroups at every broker with typesFilter ["share"];
 * - describeShareGroups: ShareGroupDescribe at the group's coordinator;
 * - listShareGroupOffsets: DescribeShareGroupOffsets (v1 adds lag, KIP-1226);
 *   a partition with no start offset yet (-1) maps to null, a partition the
 *   coordinator answered with an error is left out (Kafka's admin logs and
 *   skips it);
 * - alterShareGroupOffsets: AlterShareGroupOffsets, one result per partition
 *   (a group-level error becomes every partition's error, as in Kafka);
 * - deleteShareGroupOffsets: DeleteShareGroupOffsets for whole topics, the
 *   group-level error and each topic's;
 * - deleteShareGroups: DeleteGroups, the same request consumer groups use.
 *
 * Every call goes to the group's coordinator and is retried (with the
 * cluster's backoff) after NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE (the
 * coordinator is looked up again) and COORDINATOR_LOAD_IN_PROGRESS; alter and
 * delete offsets also retry REBALANCE_IN_PROGRESS, as Kafka's handlers do.
 * Other errors are KafkaErrors carrying the broker's message.
 */
import { ErrorCode } from '../protocol/errors.js';
import { ShareGroupDescribe } from '../protocol/schemas/77-share-group-describe.js';
import { DescribeShareGroupOffsets } from '../protocol/schemas/90-describe-share-group-offsets.js';
import { AlterShareGroupOffsets } from '../protocol/schemas/91-alter-share-group-offsets.js';
import { DeleteShareGroupOffsets } from '../protocol/schemas/92-delete-share-group-offsets.js';
import { groupByTopic, topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { deleteConsumerGroups, listGroups, type GroupListing } from './group-admin.js';
import { GroupCoordinator, type CoordinatorNode } from './group-coordinator.js';
import { sortPartitions } from './group-membership.js';

/** The group type ListGroups filters share groups by (KIP-848's typesFilter), spelt as Kafka's admin sends it (GroupType.SHARE). */
export const SHARE_GROUP_TYPE = 'Share';

/** The states a share group can be in (Kafka's GroupState.groupStatesForType(SHARE)). */
export const SHARE_GROUP_STATES = ['Stable', 'Dead', 'Empty'] as const;

export interface ShareMemberDescription {
  memberId: string;
  rackId: string | null;
  clientId: string;
  host: string;
  memberEpoch: number;
  subscribedTopicNames: string[];
  /** Sorted by topic, then partition. */
  assignment: TopicPartition[];
}

export interface ShareGroupDescription {
  groupId: string;
  /** Kafka's state names: Empty, Stable, Dead (Unknown for anything else). */
  groupState: string;
  groupEpoch: number;
  targetAssignmentEpoch: number;
  assignorName: string;
  members: ShareMemberDescription[];
  coordinator: CoordinatorNode;
  /** The ACL operations bit field, or Kafka's "not asked" (-2147483648). */
  authorizedOperations: number;
}

/** A share partition's start offset (the first offset not yet acknowledged), as the share coordinator keeps it. */
export interface SharePartitionOffsetInfo {
  startOffset: number;
  leaderEpoch: number | null;
  /** Records from the start offset to the high watermark not yet acknowledged; null before DescribeShareGroupOffsets v1, or unknown. */
  lag: number | null;
}

/** One partition of a share group's offsets; `offsetInfo` is null while the partition has no start offset. */
export interface ListedSharePartition extends TopicPartition {
  offsetInfo: SharePartitionOffsetInfo | null;
}

/** DeleteShareGroupOffsets' answer: the group-level error, and each topic's (null when deleted). */
export interface DeletedShareGroupOffsets {
  error: KafkaError | null;
  topics: Map<string, KafkaError | null>;
}

/** A group-level error Kafka's share-offset handlers retry although it is not a retriable error code. */
class RetryLaterError extends KafkaError {
  override readonly retriable = true;
}

/** Errors after which the coordinator is asked again rather than the call failed. */
const COORDINATOR_RETRY = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

/** Throws what makes sendWithRetry ask again: the coordinator moved or is loading (or, for `alsoRetry`, busy). */
function retryIfCoordinatorBusy(coordinator: GroupCoordinator, code: number, alsoRetry: readonly number[] = []): void {
  if (COORDINATOR_RETRY.has(code)) coordinator.check(code);
  if (alsoRetry.includes(code)) throw new RetryLaterError(code);
}

async function withCoordinator<T>(cluster: Cluster, groupId: string, work: (coordinator: GroupCoordinator) => Promise<T>): Promise<T> {
  const coordinator = new GroupCoordinator(cluster, groupId);
  try {
    return await work(coordinator);
  } finally {
    await coordinator.close();
  }
}

/** Share groups as every broker lists them, optionally only those in `states` (Kafka's names, any case). */
export function listShareGroups(cluster: Cluster, options: { states?: readonly string[] } = {}): Promise<GroupListing[]> {
  return listGroups(cluster, { types: [SHARE_GROUP_TYPE], ...(options.states === undefined ? {} : { states: options.states }) });
}

/** Kafka's GroupState.parse: the state's own spelling, or Unknown. */
function shareGroupState(name: string): string {
  return SHARE_GROUP_STATES.find((s) => s.toLowerCase() === name.toLowerCase()) ?? 'Unknown';
}

/** ShareGroupDescribe for one group; a group that does not exist (or is not a share group) is GROUP_ID_NOT_FOUND. */
export function describeShareGroup(cluster: Cluster, groupId: string): Promise<ShareGroupDescription> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const { response } = await coordinator.sendWithRetry(ShareGroupDescribe, { groupIds: [groupId], includeAuthorizedOperations: false }, (answer) => {
      const group = answer.groups.find((g) => g.groupId === groupId);
      if (group !== undefined) retryIfCoordinatorBusy(coordinator, group.errorCode);
    });
    const group = response.groups.find((g) => g.groupId === groupId);
    if (group === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `ShareGroupDescribe did not answer for group ${groupId}`);
    if (group.errorCode !== ErrorCode.NONE) throw new KafkaError(group.errorCode, group.errorMessage);
    return {
      groupId,
      groupState: shareGroupState(group.groupState),
      groupEpoch: group.groupEpoch,
      targetAssignmentEpoch: group.assignmentEpoch,
      assignorName: group.assignorName,
      coordinator: await coordinator.node(),
      authorizedOperations: group.authorizedOperations,
      members: group.members.map((m) => ({
        memberId: m.memberId,
        rackId: m.rackId,
        clientId: m.clientId,
        host: m.clientHost,
        memberEpoch: m.memberEpoch,
        subscribedTopicNames: m.subscribedTopicNames,
        assignment: sortPartitions(m.assignment.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition })))),
      })),
    };
  });
}

/**
 * DescribeShareGroupOffsets for one group: every partition it has state for
 * (`partitions` null), or those asked. Sorted by topic, then partition.
 */
export function listShareGroupOffsets(cluster: Cluster, groupId: string, partitions: readonly TopicPartition[] | null = null): Promise<ListedSharePartition[]> {
  const topics = partitions === null ? null : groupByTopic(partitions).map((t) => ({ topicName: t.topic, partitions: t.partitions }));
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const { version, response } = await coordinator.sendWithRetry(DescribeShareGroupOffsets, { groups: [{ groupId, topics }] }, (answer) => {
      const group = answer.groups.find((g) => g.groupId === groupId);
      if (group !== undefined) retryIfCoordinatorBusy(coordinator, group.errorCode);
    });
    const group = response.groups.find((g) => g.groupId === groupId);
    if (group === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `DescribeShareGroupOffsets did not answer for group ${groupId}`);
    if (group.errorCode !== ErrorCode.NONE) throw new KafkaError(group.errorCode, group.errorMessage);
    const listed = group.topics.flatMap((t) => t.partitions
      .filter((p) => p.errorCode === ErrorCode.NONE)
      .map((p): ListedSharePartition => ({
        topic: t.topicName,
        partition: p.partitionIndex,
        offsetInfo: p.startOffset < 0 ? null : {
          startOffset: p.startOffset,
          leaderEpoch: p.leaderEpoch < 0 ? null : p.leaderEpoch,
          lag: version >= 1 && p.lag >= 0 ? p.lag : null,
        },
      })));
    return sortPartitions(listed) as ListedSharePartition[];
  });
}

/** AlterShareGroupOffsets: sets an empty group's start offsets; per partition (topicPartitionKey), null or the error. */
export function alterShareGroupOffsets(cluster: Cluster, groupId: string, offsets: readonly (TopicPartition & { startOffset: number })[]): Promise<Map<string, KafkaError | null>> {
  const topics = new Map<string, { partitionIndex: number; startOffset: number }[]>();
  for (const o of offsets) topics.set(o.topic, [...(topics.get(o.topic) ?? []), { partitionIndex: o.partition, startOffset: o.startOffset }]);
  const request = { groupId, topics: [...topics].map(([topicName, partitions]) => ({ topicName, partitions })) };
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const { response } = await coordinator.sendWithRetry(AlterShareGroupOffsets, request, (answer) => {
      retryIfCoordinatorBusy(coordinator, answer.errorCode, [ErrorCode.REBALANCE_IN_PROGRESS]);
    });
    const out = new Map<string, KafkaError | null>();
    if (response.errorCode !== ErrorCode.NONE) {
      for (const o of offsets) out.set(topicPartitionKey(o), new KafkaError(response.errorCode, response.errorMessage));
      return out;
    }
    for (const t of response.responses) {
      for (const p of t.partitions) {
        out.set(topicPartitionKey({ topic: t.topicName, partition: p.partitionIndex }), p.errorCode === ErrorCode.NONE ? null : new KafkaError(p.errorCode, p.errorMessage));
      }
    }
    return out;
  });
}

/** DeleteShareGroupOffsets: removes an empty group's state for whole topics. */
export function deleteShareGroupOffsets(cluster: Cluster, groupId: string, topics: readonly string[]): Promise<DeletedShareGroupOffsets> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const { response } = await coordinator.sendWithRetry(DeleteShareGroupOffsets, { groupId, topics: topics.map((topicName) => ({ topicName })) }, (answer) => {
      retryIfCoordinatorBusy(coordinator, answer.errorCode, [ErrorCode.REBALANCE_IN_PROGRESS]);
    });
    if (response.errorCode !== ErrorCode.NONE) return { error: new KafkaError(response.errorCode, response.errorMessage), topics: new Map() };
    return {
      error: null,
      topics: new Map(response.responses.map((t) => [t.topicName, t.errorCode === ErrorCode.NONE ? null : new KafkaError(t.errorCode, t.errorMessage)])),
    };
  });
}

/** DeleteGroups for share groups (Kafka's DeleteShareGroupsHandler is its DeleteGroupsHandler); per group, null or the error. */
export function deleteShareGroups(cluster: Cluster, groupIds: readonly string[]): Promise<Map<string, KafkaError | null>> {
  return deleteConsumerGroups(cluster, groupIds);
}
