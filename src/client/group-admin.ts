/**
 * The admin client's group operations, in the words of Kafka's Admin API:
 * listGroups, describeClassicGroups (DescribeGroups), consumerGroupDescribe
 * (ConsumerGroupDescribe), describeConsumerGroups (either, as Kafka's admin
 * does: ConsumerGroupDescribe first, DescribeGroups for the groups it says
 * are not consumer groups; a group that does not exist is GROUP_ID_NOT_FOUND
 * from DescribeGroups v6, state Dead before), listConsumerGroupOffsets, alterConsumerGroupOffsets
 * (an OffsetCommit from a simple consumer: generation -1, no member id; the
 * coordinator refuses it while the group has members), deleteConsumerGroupOffsets
 * (OffsetDelete) and deleteConsumerGroups (DeleteGroups).
 *
 * ListGroups goes to every broker (each lists the groups it coordinates);
 * everything else goes to the group's coordinator.
 */
import { ErrorCode } from '../protocol/errors.js';
import { ListGroups } from '../protocol/schemas/16-list-groups.js';
import { DescribeGroups } from '../protocol/schemas/15-describe-groups.js';
import { DeleteGroups } from '../protocol/schemas/42-delete-groups.js';
import { ConsumerGroupDescribe } from '../protocol/schemas/69-consumer-group-describe.js';
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment } from '../protocol/consumer-protocol.js';
import type { Cluster, TopicPartition } from './cluster.js';
import { KafkaError, throwIfError } from './errors.js';
import { commitOffsets, deleteOffsets, fetchOffsets, GroupCoordinator, SIMPLE_COMMITTER, type CoordinatorNode, type OffsetAndMetadata, type OffsetToCommit } from './group-coordinator.js';
import { sortPartitions } from './group-membership.js';
import { parseTopicPartitionKey } from '../protocol/topic-partition.js';

export interface GroupListing {
  groupId: string;
  protocolType: string;
  /** Null when the broker's ListGroups is older than v4. */
  groupState: string | null;
  /** classic, consumer, share, streams; null before ListGroups v5. */
  type: string | null;
}

export interface ListGroupsOptions {
  /** Only groups in these states (Kafka's names, case-insensitive: Stable, Empty, ...). */
  states?: readonly string[];
  /** Only groups of these types (classic, consumer, share, streams). */
  types?: readonly string[];
  /** Only groups with these protocol types (classic groups); Kafka lists consumer groups with ["consumer", ""]. */
  protocolTypes?: readonly string[];
  /** Ask only these brokers (each lists the groups it coordinates); default every broker. */
  brokerIds?: readonly number[];
}

export interface MemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  host: string;
  assignment: TopicPartition[];
  /** Consumer protocol only: where the member is headed. */
  targetAssignment: TopicPartition[] | null;
  memberEpoch: number | null;
  /** Consumer groups (ConsumerGroupDescribe v1+): true for a consumer-protocol member, false for a classic one in the group. */
  upgraded: boolean | null;
}

export interface ConsumerGroupDescription {
  groupId: string;
  /** A classic group with no protocol type: only offsets committed by simple consumers. */
  isSimpleConsumerGroup: boolean;
  type: 'classic' | 'consumer';
  groupState: string;
  /** The classic group's chosen protocol (the assignor), or the consumer group's server assignor. */
  partitionAssignor: string;
  members: MemberDescription[];
  coordinator: CoordinatorNode;
  groupEpoch: number | null;
  targetAssignmentEpoch: number | null;
}

/** A classic group's members as DescribeGroups reports them. */
export interface ClassicGroupDescription {
  errorCode: number;
  groupId: string;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: { memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; memberMetadata: Buffer; memberAssignment: Buffer }[];
}

async function withCoordinator<T>(cluster: Cluster, groupId: string, work: (coordinator: GroupCoordinator) => Promise<T>): Promise<T> {
  const coordinator = new GroupCoordinator(cluster, groupId);
  try {
    return await work(coordinator);
  } finally {
    await coordinator.close();
  }
}

const sameText = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** ListGroups at every broker, filtered by state and type (by the broker where it can, else here). */
export async function listGroups(cluster: Cluster, options: ListGroupsOptions = {}): Promise<GroupListing[]> {
  await cluster.retry(() => cluster.refreshMetadata([]));
  const states = options.states ?? [];
  const types = options.types ?? [];
  const asked = [...cluster.brokers.values()].filter((broker) => options.brokerIds === undefined || options.brokerIds.includes(broker.nodeId));
  const perBroker = await Promise.all(asked.map((broker) => cluster.retry(async () => {
    const connection = await cluster.connectTo(broker.host, broker.port);
    const { version, response } = await connection.sendVersioned(ListGroups, { statesFilter: [...states], typesFilter: [...types] });
    throwIfError(response.errorCode, `ListGroups at broker ${broker.nodeId}`);
    return response.groups.map((g): GroupListing => ({
      groupId: g.groupId,
      protocolType: g.protocolType,
      groupState: version >= 4 ? g.groupState : null,
      type: version >= 5 ? g.groupType : null,
    }));
  })));
  const seen = new Set<string>();
  return perBroker.flat().filter((g) => {
    if (seen.has(g.groupId)) return false;
    seen.add(g.groupId);
    if (states.length > 0 && g.groupState !== null && !states.some((s) => sameText(s, g.groupState!))) return false;
    if (types.length > 0 && g.type !== null && !types.some((t) => sameText(t, g.type!))) return false;
    if (options.protocolTypes !== undefined && (g.type === null || sameText(g.type, 'classic')) && !options.protocolTypes.includes(g.protocolType)) return false;
    return true;
  });
}

/** Consumer groups as kafka-consumer-groups.sh lists them: classic with protocol type consumer (or none), and KIP-848 groups. */
export function listConsumerGroups(cluster: Cluster, options: { states?: readonly string[]; types?: readonly string[]; brokerIds?: readonly number[] } = {}): Promise<GroupListing[]> {
  return listGroups(cluster, {
    ...(options.states === undefined ? {} : { states: options.states }),
    ...(options.brokerIds === undefined ? {} : { brokerIds: options.brokerIds }),
    types: options.types ?? ['classic', 'consumer'],
    protocolTypes: [CONSUMER_PROTOCOL_TYPE, ''],
  });
}

/** DescribeGroups for one classic group (a missing group comes back as state Dead, or GROUP_ID_NOT_FOUND from v6). */
export function describeClassicGroup(cluster: Cluster, groupId: string): Promise<ClassicGroupDescription & { coordinator: CoordinatorNode }> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const { response } = await coordinator.sendWithRetry(DescribeGroups, { groups: [groupId], includeAuthorizedOperations: false }, (answer) => {
      const group = answer.groups[0];
      if (group !== undefined && (group.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || group.errorCode === ErrorCode.NOT_COORDINATOR || group.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE)) coordinator.check(group.errorCode);
    });
    const group = response.groups.find((g) => g.groupId === groupId);
    if (group === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `DescribeGroups did not answer for group ${groupId}`);
    return { ...group, coordinator: await coordinator.node() };
  });
}

type DescribedConsumerGroup = NonNullable<Awaited<ReturnType<typeof consumerGroupDescribeRaw>>>;

async function consumerGroupDescribeRaw(coordinator: GroupCoordinator, groupId: string) {
  const connection = await coordinator.connection();
  if (connection.versionFor(ConsumerGroupDescribe) === null) return null;
  const { response } = await coordinator.sendWithRetry(ConsumerGroupDescribe, { groupIds: [groupId], includeAuthorizedOperations: false }, (answer) => {
    const group = answer.groups[0];
    if (group !== undefined && (group.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || group.errorCode === ErrorCode.NOT_COORDINATOR || group.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE)) coordinator.check(group.errorCode);
  });
  return response.groups.find((g) => g.groupId === groupId) ?? null;
}

/** ConsumerGroupDescribe for one KIP-848 group. */
export function consumerGroupDescribe(cluster: Cluster, groupId: string): Promise<DescribedConsumerGroup & { coordinator: CoordinatorNode }> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const group = await consumerGroupDescribeRaw(coordinator, groupId);
    if (group === null) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'the coordinator does not serve ConsumerGroupDescribe');
    return { ...group, coordinator: await coordinator.node() };
  });
}

/**
 * Describes a consumer group of either protocol: ConsumerGroupDescribe, and
 * DescribeGroups when it answers GROUP_ID_NOT_FOUND (a classic group, or
 * none) or is not served. A group that does not exist is GROUP_ID_NOT_FOUND
 * (DescribeGroups v6+, with the coordinator's message) or, from older
 * coordinators, state "Dead" with no members.
 */
export function describeConsumerGroup(cluster: Cluster, groupId: string): Promise<ConsumerGroupDescription> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const modern = await consumerGroupDescribeRaw(coordinator, groupId);
    if (modern !== null && modern.errorCode !== ErrorCode.GROUP_ID_NOT_FOUND) {
      throwIfError(modern.errorCode, modern.errorMessage ?? `ConsumerGroupDescribe for group ${groupId}`);
      return fromConsumerGroup(modern, await coordinator.node());
    }
    const { response } = await coordinator.sendWithRetry(DescribeGroups, { groups: [groupId], includeAuthorizedOperations: false }, (answer) => {
      const group = answer.groups[0];
      if (group !== undefined && (group.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || group.errorCode === ErrorCode.NOT_COORDINATOR || group.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE)) coordinator.check(group.errorCode);
    });
    const classic = response.groups.find((g) => g.groupId === groupId);
    if (classic === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `DescribeGroups did not answer for group ${groupId}`);
    const node = await coordinator.node();
    throwIfError(classic.errorCode, classic.errorMessage ?? `DescribeGroups for group ${groupId}`);
    if (classic.protocolType !== '' && classic.protocolType !== CONSUMER_PROTOCOL_TYPE) {
      throw new KafkaError(ErrorCode.INVALID_GROUP_ID, `Group ${groupId} is not a consumer group (protocol type ${classic.protocolType})`);
    }
    return fromClassicGroup(classic, node);
  });
}

function fromClassicGroup(group: ClassicGroupDescription, coordinator: CoordinatorNode): ConsumerGroupDescription {
  return {
    groupId: group.groupId,
    isSimpleConsumerGroup: group.protocolType === '',
    type: 'classic',
    groupState: group.groupState,
    partitionAssignor: group.protocolData,
    coordinator,
    groupEpoch: null,
    targetAssignmentEpoch: null,
    members: group.members.map((m) => {
      const decoded = m.memberAssignment.length === 0 ? null : decodeAssignment(m.memberAssignment);
      return {
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        host: m.clientHost,
        assignment: sortPartitions((decoded?.assignedPartitions ?? []).flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })))),
        targetAssignment: null,
        memberEpoch: null,
        upgraded: null,
      };
    }),
  };
}

function partitionsOf(assignment: { topicPartitions: { topicName: string; partitions: number[] }[] }): TopicPartition[] {
  return sortPartitions(assignment.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition }))));
}

function fromConsumerGroup(group: DescribedConsumerGroup, coordinator: CoordinatorNode): ConsumerGroupDescription {
  return {
    groupId: group.groupId,
    isSimpleConsumerGroup: false,
    type: 'consumer',
    groupState: group.groupState,
    partitionAssignor: group.assignorName,
    coordinator,
    groupEpoch: group.groupEpoch,
    targetAssignmentEpoch: group.assignmentEpoch,
    members: group.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      host: m.clientHost,
      assignment: partitionsOf(m.assignment),
      targetAssignment: partitionsOf(m.targetAssignment),
      memberEpoch: m.memberEpoch,
      // KIP-1099: memberType 1 is a consumer-protocol member, 0 a classic member of a consumer group.
      upgraded: m.memberType === 1 ? true : m.memberType === 0 ? false : null,
    })),
  };
}

/** The group's committed offsets (all of them, or those of `partitions`), sorted by topic and partition. */
export function listConsumerGroupOffsets(cluster: Cluster, groupId: string, partitions: readonly TopicPartition[] | null = null): Promise<(TopicPartition & OffsetAndMetadata)[]> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const found = await fetchOffsets(coordinator, partitions, { requireStable: true });
    return sortPartitions([...found.values()]) as (TopicPartition & OffsetAndMetadata)[];
  });
}

/** Commits offsets for a group that has no active members (as Kafka's admin, a simple consumer's OffsetCommit). */
export function alterConsumerGroupOffsets(cluster: Cluster, groupId: string, offsets: readonly OffsetToCommit[]): Promise<void> {
  return withCoordinator(cluster, groupId, async (coordinator) => {
    const errors = await commitOffsets(coordinator, SIMPLE_COMMITTER, offsets);
    for (const [key, code] of errors) {
      const { topic, partition } = parseTopicPartitionKey(key);
      throwIfError(code, code === ErrorCode.UNKNOWN_MEMBER_ID ? `Commit failed for group ${groupId}: the group has active members` : `OffsetCommit for ${topic}-${partition}`);
    }
  });
}

/** OffsetDelete: the group-level error code and each partition's. */
export function deleteConsumerGroupOffsets(cluster: Cluster, groupId: string, partitions: readonly TopicPartition[]): Promise<{ errorCode: number; partitions: Map<string, number> }> {
  return withCoordinator(cluster, groupId, (coordinator) => deleteOffsets(coordinator, partitions));
}

/** DeleteGroups, each group at its coordinator; per group, null or the error. */
export async function deleteConsumerGroups(cluster: Cluster, groupIds: readonly string[]): Promise<Map<string, KafkaError | null>> {
  const out = new Map<string, KafkaError | null>();
  for (const groupId of groupIds) {
    const result = await withCoordinator(cluster, groupId, async (coordinator) => {
      const { response } = await coordinator.sendWithRetry(DeleteGroups, { groupsNames: [groupId] }, (answer) => {
        const entry = answer.results.find((r) => r.groupId === groupId);
        if (entry !== undefined && (entry.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || entry.errorCode === ErrorCode.NOT_COORDINATOR || entry.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE)) coordinator.check(entry.errorCode);
      });
      const entry = response.results.find((r) => r.groupId === groupId);
      if (entry === undefined) return new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `DeleteGroups did not answer for group ${groupId}`);
      return entry.errorCode === ErrorCode.NONE ? null : new KafkaError(entry.errorCode, entry.errorMessage);
    });
    out.set(groupId, result);
  }
  return out;
}
