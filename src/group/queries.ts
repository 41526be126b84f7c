/**
 * Read-only views of a shard's groups: ListGroups, DescribeGroups (classic
 * groups), ConsumerGroupDescribe (KIP-848 groups) and ShareGroupDescribe
 * (KIP-932 groups). Reads see the state
 * after every written operation, Kafka's read at the last committed offset.
 */
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ClassicGroup } from './classic-group.js';
import { CONSUMER_PROTOCOL_TYPE } from '../protocol/consumer-protocol.js';
import { assignmentToList, type Assignment, type ConsumerGroup } from './consumer-group.js';
import type { Group, GroupCoordinatorShard } from './shard.js';
import type { ShareGroup } from './share-group.js';
import { SIMPLE_ASSIGNOR_NAME } from './share-assignor.js';

export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: string;
  groupType: string;
}

export interface DescribedClassicGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    memberMetadata: Buffer;
    memberAssignment: Buffer;
  }[];
}

export interface DescribedConsumerGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: {
    memberId: string;
    instanceId: string | null;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    subscribedTopicRegex: string | null;
    assignment: { topicPartitions: { topicId: string; topicName: string; partitions: number[] }[] };
    targetAssignment: { topicPartitions: { topicId: string; topicName: string; partitions: number[] }[] };
    memberType: number;
  }[];
}

/** Kafka's ShareGroup.PROTOCOL_TYPE, as ListGroups shows it. */
export const SHARE_PROTOCOL_TYPE = 'share';

/** ConsumerGroupDescribe v1 member types (KIP-1099). */
const MEMBER_TYPE_CLASSIC = 0;
const MEMBER_TYPE_CONSUMER = 1;

export function listGroups(shard: GroupCoordinatorShard, statesFilter: readonly string[], typesFilter: readonly string[]): ListedGroup[] {
  const states = new Set(statesFilter.map((s) => s.trim().toLowerCase()));
  const types = new Set(typesFilter.map((t) => t.trim().toLowerCase()));
  const out: ListedGroup[] = [];
  for (const group of shard.groups.values()) {
    if (states.size > 0 && !states.has(group.state.toLowerCase())) continue;
    if (types.size > 0 && !types.has(group.type)) continue;
    out.push({ groupId: groupIdOf(group), protocolType: protocolTypeOf(group), groupState: group.state, groupType: group.type });
  }
  return out;
}

function groupIdOf(group: Group): string {
  return group.groupId;
}

function protocolTypeOf(group: Group): string {
  if (group.type === 'share') return SHARE_PROTOCOL_TYPE;
  return group.type === 'classic' ? (group.protocolType ?? '') : CONSUMER_PROTOCOL_TYPE;
}

/**
 * DescribeGroups: a classic group with its members (metadata and assignment
 * only when Stable). A missing group, or one of another type, is Dead with
 * no error before v6 and GROUP_ID_NOT_FOUND from v6 (KIP-1043).
 */
export function describeClassicGroup(shard: GroupCoordinatorShard, groupId: string, apiVersion: number): DescribedClassicGroup {
  const group = shard.groups.get(groupId);
  if (group === undefined || group.type !== 'classic') {
    const message = group === undefined ? `Group ${groupId} not found.` : `Group ${groupId} is not a classic group.`;
    return {
      errorCode: apiVersion >= 6 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NONE,
      errorMessage: apiVersion >= 6 ? message : null,
      groupId,
      groupState: 'Dead',
      protocolType: '',
      protocolData: '',
      members: [],
    };
  }
  return describeClassic(group);
}

function describeClassic(group: ClassicGroup): DescribedClassicGroup {
  const stable = group.isInState('Stable');
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId: group.groupId,
    groupState: group.state,
    protocolType: group.protocolType ?? '',
    protocolData: stable ? (group.protocolName ?? '') : '',
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberMetadata: stable && group.protocolName !== null ? m.metadata(group.protocolName) : Buffer.alloc(0),
      memberAssignment: m.assignment,
    })),
  };
}

export function describeConsumerGroup(shard: GroupCoordinatorShard, groupId: string): DescribedConsumerGroup {
  const group = shard.groups.get(groupId);
  if (group === undefined || group.type !== 'consumer') {
    return {
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: group === undefined ? `Group ${groupId} not found.` : `Group ${groupId} is not a consumer group.`,
      groupId,
      groupState: '',
      groupEpoch: 0,
      assignmentEpoch: 0,
      assignorName: '',
      members: [],
    };
  }
  return describeConsumer(shard, group);
}

function describeConsumer(shard: GroupCoordinatorShard, group: ConsumerGroup): DescribedConsumerGroup {
  const image = shard.image;
  const votes = new Map<string, number>();
  for (const m of group.members.values()) if (m.serverAssignorName !== null) votes.set(m.serverAssignorName, (votes.get(m.serverAssignorName) ?? 0) + 1);
  let assignorName = shard.defaultAssignor.name;
  let best = 0;
  for (const [name, count] of votes) {
    if (count > best) {
      assignorName = name;
      best = count;
    }
  }
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId: group.groupId,
    groupState: group.state,
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.targetAssignmentEpoch,
    assignorName,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      memberEpoch: m.memberEpoch,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      assignment: describeAssignment(m.assignedPartitions, image),
      targetAssignment: describeAssignment(group.targetAssignmentOf(m.memberId), image),
      memberType: m.classicMemberMetadata === null ? MEMBER_TYPE_CONSUMER : MEMBER_TYPE_CLASSIC,
    })),
  };
}

function describeAssignment(assignment: Assignment, image: MetadataImage) {
  return {
    topicPartitions: assignmentToList(assignment).flatMap((entry) => {
      const topic = image.topicsById.get(entry.topicId);
      return topic === undefined ? [] : [{ topicId: entry.topicId, topicName: topic.name, partitions: entry.partitions }];
    }),
  };
}

export interface DescribedShareGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: {
    memberId: string;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    assignment: { topicPartitions: { topicId: string; topicName: string; partitions: number[] }[] };
  }[];
}

/** ShareGroupDescribe: a missing group, or one of another type, is GROUP_ID_NOT_FOUND with Kafka's message. */
export function describeShareGroup(shard: GroupCoordinatorShard, groupId: string): DescribedShareGroup {
  const group = shard.groups.get(groupId);
  if (group === undefined || group.type !== 'share') {
    return {
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: group === undefined ? `Group ${groupId} not found.` : `Group ${groupId} is not a share group.`,
      groupId,
      groupState: '',
      groupEpoch: 0,
      assignmentEpoch: 0,
      assignorName: '',
      members: [],
    };
  }
  return describeShare(shard, group);
}

function describeShare(shard: GroupCoordinatorShard, group: ShareGroup): DescribedShareGroup {
  const image = shard.image;
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId: group.groupId,
    groupState: group.state,
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.targetAssignmentEpoch,
    assignorName: SIMPLE_ASSIGNOR_NAME,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      rackId: m.rackId,
      memberEpoch: m.memberEpoch,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      assignment: describeAssignment(m.assignedPartitions, image),
    })),
  };
}
