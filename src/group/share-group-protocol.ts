/**
 * The KIP-932 share group protocol inside one coordinator shard:
 * ShareGroupHeartbeat, the members' session timers, and the share-partition
 * state metadata that says which share partitions the share coordinator
 * holds state for.
 *
 * One heartbeat runs the consumer protocol's three steps, simplified:
 *   1. the member's subscription: a new or changed member is written
 *      (ShareGroupMemberMetadataValue); a changed subscription, changed
 *      topic metadata, or newly initialized share partitions not yet in the
 *      target assignment bump the group epoch (ShareGroupMetadataValue);
 *   2. the target assignment: when the group epoch is ahead of the target's,
 *      the `simple` assignor assigns the initialized share partitions;
 *   3. the member takes its target at once (a share partition is never
 *      revoked first: several members may hold it) and its current
 *      assignment is written (ShareGroupCurrentMemberAssignmentValue).
 * Then, as Kafka's GroupMetadataManager does, the subscribed partitions
 * without share state (or whose initialization is older than
 * group.share.initialize.retry.interval.ms) are written as initializing
 * (ShareGroupStatePartitionMetadataValue) and returned as an initialization
 * for the coordinator to send to the persister once the records are
 * written; its outcome comes back as initializeState / uninitializeState.
 * Nothing here changes the group: the records do, when replayed.
 */
import { ErrorCode } from '../protocol/errors.js';
import { UNINITIALIZED_START_OFFSET } from '../share/persister.js';
import { EMPTY_ASSIGNMENT, LEAVE_GROUP_MEMBER_EPOCH, assignmentToList, sameAssignment, sameNames, type Assignment } from './consumer-group.js';
import { sessionTimeoutKey, topicsMetadataHash } from './consumer-group-protocol.js';
import { GroupApiError } from './errors.js';
import { coordinatorResult, type CoordinatorResult } from './operation.js';
import { groupRecord, type GroupRecord } from './records.js';
import { simpleAssign, type ShareAssignmentMemberSpec } from './share-assignor.js';
import {
  EMPTY_STATE_METADATA,
  SHARE_MEMBER_STATE_STABLE,
  ShareGroup,
  newShareGroupMember,
  sameShareCurrentAssignment,
  sameShareSubscriptionMetadata,
  type SharePartitionStateMetadata,
  type SharePartitionsOfTopic,
  type ShareGroupMember,
} from './share-group.js';
import type { GroupCoordinatorShard } from './shard.js';

export interface ShareGroupHeartbeatInput {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  rackId: string | null;
  subscribedTopicNames: readonly string[] | null;
}

export interface ShareGroupHeartbeatResponseData {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
}

/** Share partitions to initialize in the persister: state epoch and start offset for each. */
export interface ShareStateInitialization {
  groupId: string;
  partitions: { topicId: string; partition: number; stateEpoch: number; startOffset: number }[];
}

export interface ShareHeartbeatResult {
  response: ShareGroupHeartbeatResponseData;
  initialization: ShareStateInitialization | null;
}

/** Partitions by topic id, as the persister's outcomes come back. */
export type TopicPartitionSets = ReadonlyMap<string, ReadonlySet<number>>;

export class ShareGroupProtocol {
  constructor(private readonly shard: GroupCoordinatorShard) {}

  private get config() {
    return this.shard.config;
  }

  heartbeat(context: { clientId: string; clientHost: string }, request: ShareGroupHeartbeatInput): CoordinatorResult<ShareHeartbeatResult> {
    if (request.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) return this.leave(request);
    const group = this.groupForHeartbeat(request.groupId, request.memberEpoch === 0);
    if (group.members.size >= this.config.shareGroupMaxSize && !group.hasMember(request.memberId)) {
      throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The share group has reached its maximum capacity of ${this.config.shareGroupMaxSize} members.`);
    }
    const member = this.memberForHeartbeat(group, request);
    const records: GroupRecord[] = [];
    const updated: ShareGroupMember = {
      ...member,
      rackId: request.rackId ?? member.rackId,
      subscribedTopicNames: request.subscribedTopicNames === null ? member.subscribedTopicNames : [...new Set(request.subscribedTopicNames)].sort(),
      clientId: context.clientId,
      clientHost: context.clientHost,
    };
    let subscriptionChanged = false;
    if (!group.hasMember(updated.memberId) || !sameShareSubscriptionMetadata(member, updated)) {
      records.push(shareMemberMetadataRecord(group.groupId, updated));
      subscriptionChanged = !sameNames(member.subscribedTopicNames, updated.subscribedTopicNames);
    }
    const members = new Map(group.members).set(updated.memberId, updated);
    const subscribed = subscribedTopicNames(members.values());
    let bumpGroupEpoch = subscriptionChanged || (group.targetAssignmentEpoch >= group.groupEpoch && this.initializedAssignmentPending(group, subscribed));
    const metadataHash = topicsMetadataHash(subscribed, this.shard.image);
    if (metadataHash !== group.metadataHash) bumpGroupEpoch = true;
    const groupEpoch = bumpGroupEpoch ? group.groupEpoch + 1 : group.groupEpoch;
    if (bumpGroupEpoch) records.push(groupRecord('ShareGroupMetadata', { groupId: group.groupId }, { epoch: groupEpoch, metadataHash }));

    const target = this.maybeUpdateTargetAssignment(group, { groupEpoch, members, records });
    const next = this.reconcile(updated, { ...target, subscriptionChanged });
    if (!sameShareCurrentAssignment(updated, next)) records.push(shareCurrentAssignmentRecord(group.groupId, next));
    this.scheduleSessionTimeout(group.groupId, next.memberId);

    const sendAssignment = request.memberEpoch === 0 || request.subscribedTopicNames !== null || !sameAssignment(member.assignedPartitions, next.assignedPartitions);
    const response: ShareGroupHeartbeatResponseData = {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: next.memberId,
      memberEpoch: next.memberEpoch,
      heartbeatIntervalMs: this.shard.timeouts(group.groupId, 'share').heartbeatIntervalMs,
      assignment: sendAssignment ? { topicPartitions: assignmentToList(next.assignedPartitions) } : null,
    };
    const initialization = this.maybeInitialize(group, { groupEpoch, subscribed, records });
    return coordinatorResult(records, { response, initialization });
  }

  private groupForHeartbeat(groupId: string, create: boolean): ShareGroup {
    const group = this.shard.groups.get(groupId);
    if (group === undefined) {
      if (!create) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Share group ${groupId} not found.`);
      return new ShareGroup(groupId);
    }
    if (group.type !== 'share') throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a share group.`);
    return group;
  }

  private memberForHeartbeat(group: ShareGroup, request: ShareGroupHeartbeatInput): ShareGroupMember {
    const member = group.members.get(request.memberId);
    if (member === undefined) {
      if (request.memberEpoch !== 0) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${request.memberId} is not a member of group ${group.groupId}.`);
      return newShareGroupMember(request.memberId);
    }
    const received = request.memberEpoch;
    if (received === 0) return member;
    if (received > member.memberEpoch) {
      throw new GroupApiError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The share group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
    if (received < member.memberEpoch && received !== member.previousMemberEpoch) {
      throw new GroupApiError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The share group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}), and it does not match the previous member epoch (${member.previousMemberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
    return member;
  }

  /** True when a subscribed topic has initialized share partitions the target assignment does not hand out yet. */
  private initializedAssignmentPending(group: ShareGroup, subscribed: ReadonlySet<string>): boolean {
    if (group.isEmpty || subscribed.size === 0) return false;
    const assigned = new Map<string, Set<number>>();
    for (const assignment of group.targetAssignment.values()) {
      for (const [topicId, partitions] of assignment) {
        const set = assigned.get(topicId) ?? new Set<number>();
        for (const p of partitions) set.add(p);
        assigned.set(topicId, set);
      }
    }
    for (const [topicId, entry] of group.statePartitionMetadata?.initialized ?? []) {
      if (!subscribed.has(entry.topicName)) continue;
      const current = assigned.get(topicId);
      if (current === undefined || current.size !== entry.partitions.size || [...entry.partitions].some((p) => !current.has(p))) return true;
    }
    return false;
  }

  private maybeUpdateTargetAssignment(
    group: ShareGroup,
    input: { groupEpoch: number; members: ReadonlyMap<string, ShareGroupMember>; records: GroupRecord[] },
  ): { targetAssignmentEpoch: number; assignments: ReadonlyMap<string, Assignment> } {
    if (group.targetAssignmentEpoch >= input.groupEpoch) return { targetAssignmentEpoch: group.targetAssignmentEpoch, assignments: group.targetAssignment };
    const image = this.shard.image;
    const specs = new Map<string, ShareAssignmentMemberSpec>();
    for (const member of input.members.values()) {
      const subscribedTopicIds = new Set<string>();
      for (const name of member.subscribedTopicNames) {
        const topic = image.topicsByName.get(name);
        if (topic !== undefined) subscribedTopicIds.add(topic.id);
      }
      specs.set(member.memberId, { subscribedTopicIds, assignment: group.targetAssignmentOf(member.memberId) });
    }
    const assignable = new Map<string, Set<number>>();
    for (const [topicId, partitions] of group.initializedPartitions()) {
      const topic = image.topicsById.get(topicId);
      if (topic !== undefined) assignable.set(topicId, new Set([...partitions].filter((p) => p < topic.partitions.size)));
    }
    const assignments = simpleAssign({ members: specs, assignablePartitions: assignable });
    for (const [memberId, assignment] of assignments) {
      const previous = group.targetAssignment.get(memberId);
      if (previous !== undefined && sameAssignment(previous, assignment)) continue;
      input.records.push(shareTargetAssignmentRecord(group.groupId, memberId, assignment));
    }
    input.records.push(
      groupRecord('ShareGroupTargetAssignmentMetadata', { groupId: group.groupId }, { assignmentEpoch: input.groupEpoch, assignmentTimestamp: this.shard.nowMs() }),
    );
    return { targetAssignmentEpoch: input.groupEpoch, assignments };
  }

  /** Kafka's ShareGroupAssignmentBuilder: the member takes its target at once, limited to the topics it subscribes to. */
  private reconcile(
    member: ShareGroupMember,
    input: { targetAssignmentEpoch: number; assignments: ReadonlyMap<string, Assignment>; subscriptionChanged: boolean },
  ): ShareGroupMember {
    const reconciled = member.state === SHARE_MEMBER_STATE_STABLE && member.memberEpoch === input.targetAssignmentEpoch;
    if (!input.subscriptionChanged && reconciled) return member;
    const assignedPartitions = this.subscribedOnly(input.assignments.get(member.memberId) ?? EMPTY_ASSIGNMENT, member.subscribedTopicNames);
    if (input.targetAssignmentEpoch !== member.memberEpoch) {
      return { ...member, state: SHARE_MEMBER_STATE_STABLE, assignedPartitions, previousMemberEpoch: member.memberEpoch, memberEpoch: input.targetAssignmentEpoch };
    }
    return { ...member, assignedPartitions };
  }

  private subscribedOnly(assignment: Assignment, topicNames: readonly string[]): Assignment {
    const image = this.shard.image;
    const ids = new Set(topicNames.flatMap((name) => image.topicsByName.get(name)?.id ?? []));
    return new Map([...assignment].filter(([topicId]) => ids.has(topicId)));
  }

  // ---- share-partition state initialization

  /**
   * The subscribed share partitions to initialize: those neither initialized
   * nor initializing within the retry interval. Records them as initializing
   * and returns them with Kafka's start offsets: -1 (the leader applies
   * share.auto.offset.reset) for a topic new to the group, 0 for new
   * partitions of a topic the group already knows (added partitions are read
   * from their start).
   */
  private maybeInitialize(group: ShareGroup, input: { groupEpoch: number; subscribed: ReadonlySet<string>; records: GroupRecord[] }): ShareStateInitialization | null {
    const image = this.shard.image;
    const nowMs = this.shard.nowMs();
    const current = group.statePartitionMetadata ?? EMPTY_STATE_METADATA;
    const retryMs = this.config.shareGroupInitializeRetryIntervalMs;
    const changes = new Map<string, SharePartitionsOfTopic>();
    for (const name of [...input.subscribed].sort()) {
      const topic = image.topicsByName.get(name);
      if (topic === undefined) continue;
      const done = new Set<number>(current.initialized.get(topic.id)?.partitions ?? []);
      const initializing = current.initializing.get(topic.id);
      if (initializing !== undefined && nowMs - initializing.timestampMs < retryMs) for (const p of initializing.partitions) done.add(p);
      const missing = [...topic.partitions.keys()].filter((p) => !done.has(p)).sort((a, b) => a - b);
      if (missing.length > 0) changes.set(topic.id, { topicName: name, partitions: new Set(missing), timestampMs: nowMs });
    }
    if (changes.size === 0) return null;
    const deleting = new Map([...current.deleting].filter(([topicId]) => !changes.has(topicId)));
    const initializing = combine(current.initializing, changes);
    input.records.push(statePartitionMetadataRecord(group.groupId, { initializing, initialized: current.initialized, deleting }));
    const known = (topicId: string) => current.initialized.has(topicId) || current.initializing.has(topicId);
    return {
      groupId: group.groupId,
      partitions: [...changes].flatMap(([topicId, entry]) =>
        [...entry.partitions].map((partition) => ({ topicId, partition, stateEpoch: input.groupEpoch, startOffset: known(topicId) ? 0 : UNINITIALIZED_START_OFFSET })),
      ),
    };
  }

  /** The persister holds state for these partitions now: they move from initializing to initialized. */
  initializeState(groupId: string, partitions: TopicPartitionSets): CoordinatorResult<void> {
    const group = this.shard.groups.get(groupId);
    if (group?.type !== 'share' || partitions.size === 0) return coordinatorResult([], undefined);
    const current = group.statePartitionMetadata ?? EMPTY_STATE_METADATA;
    const added = this.withNames(partitions);
    const initialized = combine(current.initialized, added);
    const initializing = subtract(current.initializing, partitions);
    return coordinatorResult([statePartitionMetadataRecord(groupId, { initializing, initialized, deleting: current.deleting })], undefined);
  }

  /** The persister failed: the partitions are no longer initializing (the next heartbeat asks again). */
  uninitializeState(groupId: string, partitions: TopicPartitionSets): CoordinatorResult<void> {
    const group = this.shard.groups.get(groupId);
    const current = group?.type === 'share' ? group.statePartitionMetadata : null;
    if (current === null || current.initializing.size === 0 || partitions.size === 0) return coordinatorResult([], undefined);
    const initializing = subtract(current.initializing, partitions);
    return coordinatorResult([statePartitionMetadataRecord(groupId, { initializing, initialized: current.initialized, deleting: current.deleting })], undefined);
  }

  /** Deleted topics leave every share group's state metadata (Kafka's maybeCleanupShareGroupState). */
  cleanupDeletedTopics(topicIds: ReadonlySet<string>): CoordinatorResult<void> {
    const records: GroupRecord[] = [];
    for (const group of this.shard.groups.values()) {
      const current = group.type === 'share' ? group.statePartitionMetadata : null;
      if (current === null) continue;
      const touched = [current.initializing.keys(), current.initialized.keys(), current.deleting.keys()].some((ids) => [...ids].some((id) => topicIds.has(id)));
      if (!touched) continue;
      const keep = <V>(map: ReadonlyMap<string, V>) => new Map([...map].filter(([id]) => !topicIds.has(id)));
      records.push(statePartitionMetadataRecord(group.groupId, { initializing: keep(current.initializing), initialized: keep(current.initialized), deleting: keep(current.deleting) }));
    }
    return coordinatorResult(records, undefined);
  }

  private withNames(partitions: TopicPartitionSets): Map<string, SharePartitionsOfTopic> {
    const image = this.shard.image;
    const nowMs = this.shard.nowMs();
    return new Map([...partitions].map(([topicId, set]) => [topicId, { topicName: image.topicsById.get(topicId)?.name ?? '<UNKNOWN>', partitions: set, timestampMs: nowMs }]));
  }

  // ---- leaving and fencing

  private leave(request: ShareGroupHeartbeatInput): CoordinatorResult<ShareHeartbeatResult> {
    const group = this.shard.groups.get(request.groupId);
    if (group === undefined) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${request.groupId} not found.`);
    if (group.type !== 'share') throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${request.groupId} is not a share group.`);
    const member = group.members.get(request.memberId);
    if (member === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${request.memberId} is not a member of group ${group.groupId}.`);
    const response: ShareGroupHeartbeatResponseData = {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      heartbeatIntervalMs: 0,
      assignment: null,
    };
    return coordinatorResult(this.fenceMemberRecords(group, member), { response, initialization: null });
  }

  /** Removes a member (it left or its session expired) and bumps the group epoch so the others are reassigned. */
  fenceMemberRecords(group: ShareGroup, member: ShareGroupMember): GroupRecord[] {
    const records = shareMemberRemovalRecords(group.groupId, member.memberId);
    const others = [...group.members.values()].filter((m) => m.memberId !== member.memberId);
    const metadataHash = topicsMetadataHash(subscribedTopicNames(others), this.shard.image);
    const groupEpoch = group.groupEpoch + 1;
    records.push(groupRecord('ShareGroupMetadata', { groupId: group.groupId }, { epoch: groupEpoch, metadataHash }));
    // The last member gone: the (empty) target assignment is at the new epoch, so the group needs no assignment.
    if (others.length === 0) records.push(groupRecord('ShareGroupTargetAssignmentMetadata', { groupId: group.groupId }, { assignmentEpoch: groupEpoch, assignmentTimestamp: 0 }));
    this.shard.timer.cancel(sessionTimeoutKey(group.groupId, member.memberId));
    return records;
  }

  private fenceOperation(groupId: string, memberId: string): CoordinatorResult<void> {
    const group = this.shard.groups.get(groupId);
    const member = group?.type === 'share' ? group.members.get(memberId) : undefined;
    if (group?.type !== 'share' || member === undefined) return coordinatorResult([], undefined);
    return coordinatorResult(this.fenceMemberRecords(group, member), undefined);
  }

  scheduleSessionTimeout(groupId: string, memberId: string): void {
    this.shard.timer.schedule(sessionTimeoutKey(groupId, memberId), this.shard.timeouts(groupId, 'share').sessionTimeoutMs, () => this.fenceOperation(groupId, memberId));
  }

  /** After a load: every member's session starts now. */
  onLoaded(group: ShareGroup): void {
    for (const memberId of group.members.keys()) this.scheduleSessionTimeout(group.groupId, memberId);
  }
}

function subscribedTopicNames(members: Iterable<ShareGroupMember>): Set<string> {
  const names = new Set<string>();
  for (const member of members) for (const name of member.subscribedTopicNames) names.add(name);
  return names;
}

/** Kafka's combineInitMaps: the union by topic, the second map's name and timestamp winning. */
export function combine(a: ReadonlyMap<string, SharePartitionsOfTopic>, b: ReadonlyMap<string, SharePartitionsOfTopic>): Map<string, SharePartitionsOfTopic> {
  const out = new Map(a);
  for (const [topicId, entry] of b) {
    const existing = out.get(topicId);
    out.set(topicId, existing === undefined ? entry : { ...entry, partitions: new Set([...existing.partitions, ...entry.partitions]) });
  }
  return out;
}

/** `a` less the partitions of `partitions`; a topic left with none is dropped. */
export function subtract(a: ReadonlyMap<string, SharePartitionsOfTopic>, partitions: TopicPartitionSets): Map<string, SharePartitionsOfTopic> {
  const out = new Map<string, SharePartitionsOfTopic>();
  for (const [topicId, entry] of a) {
    const removed = partitions.get(topicId);
    const left = removed === undefined ? entry.partitions : new Set([...entry.partitions].filter((p) => !removed.has(p)));
    if (left.size > 0) out.set(topicId, { ...entry, partitions: left });
  }
  return out;
}

export function shareMemberMetadataRecord(groupId: string, member: ShareGroupMember): GroupRecord {
  return groupRecord('ShareGroupMemberMetadata', { groupId, memberId: member.memberId }, {
    rackId: member.rackId,
    clientId: member.clientId,
    clientHost: member.clientHost,
    subscribedTopicNames: [...member.subscribedTopicNames],
  });
}

export function shareCurrentAssignmentRecord(groupId: string, member: ShareGroupMember): GroupRecord {
  return groupRecord('ShareGroupCurrentMemberAssignment', { groupId, memberId: member.memberId }, {
    memberEpoch: member.memberEpoch,
    previousMemberEpoch: member.previousMemberEpoch,
    state: member.state,
    assignedPartitions: assignmentToList(member.assignedPartitions),
  });
}

export function shareTargetAssignmentRecord(groupId: string, memberId: string, assignment: Assignment): GroupRecord {
  return groupRecord('ShareGroupTargetAssignmentMember', { groupId, memberId }, { topicPartitions: assignmentToList(assignment) });
}

export function statePartitionMetadataRecord(groupId: string, metadata: SharePartitionStateMetadata): GroupRecord {
  const topics = (map: ReadonlyMap<string, SharePartitionsOfTopic>) =>
    [...map]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([topicId, entry]) => ({ topicId, topicName: entry.topicName, partitions: [...entry.partitions].sort((x, y) => x - y) }));
  return groupRecord('ShareGroupStatePartitionMetadata', { groupId }, {
    initializingTopics: topics(metadata.initializing),
    initializedTopics: topics(metadata.initialized),
    deletingTopics: [...metadata.deleting].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([topicId, topicName]) => ({ topicId, topicName })),
  });
}

/** The three tombstones that remove a member, in the order replay expects. */
export function shareMemberRemovalRecords(groupId: string, memberId: string): GroupRecord[] {
  return [
    groupRecord('ShareGroupCurrentMemberAssignment', { groupId, memberId }, null),
    groupRecord('ShareGroupTargetAssignmentMember', { groupId, memberId }, null),
    groupRecord('ShareGroupMemberMetadata', { groupId, memberId }, null),
  ];
}

/** The records that delete an empty share group, in Kafka's order (ShareGroup.createGroupTombstoneRecords). */
export function shareGroupTombstones(group: ShareGroup): GroupRecord[] {
  const groupId = group.groupId;
  const records: GroupRecord[] = [];
  for (const memberId of group.members.keys()) records.push(groupRecord('ShareGroupCurrentMemberAssignment', { groupId, memberId }, null));
  for (const memberId of group.targetAssignment.keys()) records.push(groupRecord('ShareGroupTargetAssignmentMember', { groupId, memberId }, null));
  records.push(groupRecord('ShareGroupTargetAssignmentMetadata', { groupId }, null));
  for (const memberId of group.members.keys()) records.push(groupRecord('ShareGroupMemberMetadata', { groupId, memberId }, null));
  records.push(groupRecord('ShareGroupStatePartitionMetadata', { groupId }, null));
  records.push(groupRecord('ShareGroupMetadata', { groupId }, null));
  return records;
}
