/**
 * One coordinator shard: the groups and offsets stored in one partition of
 * `__consumer_offsets`, with the replay function that builds them.
 *
 * `replay(record)` is how durable state changes: a loading coordinator
 * replays the partition's log through it, and the runtime replays each
 * operation's records after they are written. The protocol objects
 * (classic, consumer, offsets) compute operations against this state.
 */
import type { Clock } from '../io/clock.js';
import type { Random } from '../io/random.js';
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import type { PartitionAssignor } from './assignors.js';
import { ClassicGroup, ClassicGroupMember } from './classic-group.js';
import { ClassicGroupProtocol } from './classic-protocol.js';
import type { GroupCoordinatorConfig } from './config.js';
import { assignmentEpochsFromList, assignmentFromList, ConsumerGroup, LEAVE_GROUP_MEMBER_EPOCH, newConsumerGroupMember, type ConsumerGroupMember } from './consumer-group.js';
import { ConsumerGroupProtocol, memberRemovalRecords } from './consumer-group-protocol.js';
import { GroupApiError } from './errors.js';
import { OffsetOperations } from './offset-operations.js';
import { OffsetStore } from './offsets.js';
import type { CoordinatorShard, RecordPosition } from '../coordinator/runtime.js';
import type { CoordinatorResult, CoordinatorTimer } from './operation.js';
import { groupRecord, type GroupRecord, type GroupRecordOf } from './records.js';
import { ShareGroup, newShareGroupMember, type SharePartitionsOfTopic } from './share-group.js';
import { ShareGroupProtocol } from './share-group-protocol.js';

export type Group = ClassicGroup | ConsumerGroup | ShareGroup;

export interface ShardEnvironment {
  /** The `__consumer_offsets` partition this shard owns. */
  partition: number;
  config: GroupCoordinatorConfig;
  clock: Clock;
  random: Random;
  timer: CoordinatorTimer;
  /** The current metadata image (topics, ids, partition counts). */
  image: () => MetadataImage;
  assignors: ReadonlyMap<string, PartitionAssignor>;
  /** Queues an operation result produced outside a request (an append callback, a load) for writing. */
  appendLater: (result: CoordinatorResult<unknown>) => void;
  /** A group's session timeout and heartbeat interval from its group-level configs; the broker's values when absent. */
  groupTimeouts?: GroupTimeoutsLookup;
}

/** The session timeout and heartbeat interval a consumer or share group runs with. */
export interface GroupTimeouts {
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
}

/** consumer.session.timeout.ms / share.heartbeat.interval.ms ... for one group (its overrides, else the broker's). */
export type GroupTimeoutsLookup = (groupId: string, type: 'consumer' | 'share') => GroupTimeouts;

export class GroupCoordinatorShard implements CoordinatorShard<GroupRecord> {
  readonly groups = new Map<string, Group>();
  readonly offsets = new OffsetStore();
  readonly classic: ClassicGroupProtocol;
  readonly consumer: ConsumerGroupProtocol;
  readonly share: ShareGroupProtocol;
  readonly offsetOps: OffsetOperations;

  constructor(private readonly env: ShardEnvironment) {
    if (env.assignors.size === 0) throw new Error('group.consumer.assignors names no known assignor');
    this.classic = new ClassicGroupProtocol(this);
    this.consumer = new ConsumerGroupProtocol(this);
    this.share = new ShareGroupProtocol(this);
    this.offsetOps = new OffsetOperations(this);
  }

  get partition(): number {
    return this.env.partition;
  }

  get config(): GroupCoordinatorConfig {
    return this.env.config;
  }

  /** The group's session timeout and heartbeat interval: its group-level configs, else group.consumer.* / group.share.*. */
  timeouts(groupId: string, type: 'consumer' | 'share'): GroupTimeouts {
    if (this.env.groupTimeouts !== undefined) return this.env.groupTimeouts(groupId, type);
    const config = this.env.config;
    return type === 'consumer'
      ? { sessionTimeoutMs: config.consumerGroupSessionTimeoutMs, heartbeatIntervalMs: config.consumerGroupHeartbeatIntervalMs }
      : { sessionTimeoutMs: config.shareGroupSessionTimeoutMs, heartbeatIntervalMs: config.shareGroupHeartbeatIntervalMs };
  }

  get timer(): CoordinatorTimer {
    return this.env.timer;
  }

  get image(): MetadataImage {
    return this.env.image();
  }

  get assignors(): ReadonlyMap<string, PartitionAssignor> {
    return this.env.assignors;
  }

  get defaultAssignor(): PartitionAssignor {
    return this.env.assignors.values().next().value!;
  }

  nowMs(): number {
    return this.env.clock.nowMs();
  }

  /** A java.util.UUID-style random id (classic member ids are `clientId-<uuid>`). */
  randomUuidText(): string {
    const hex = this.env.random.uuid().toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** Kafka's Uuid.randomUuid().toString(): base64url, never starting with '-'. */
  randomUuidBase64(): string {
    for (;;) {
      const text = this.env.random.uuid().toString('base64url');
      if (!text.startsWith('-')) return text;
    }
  }

  appendLater(result: CoordinatorResult<unknown>): void {
    if (result.records.length > 0 || result.onAppend !== undefined) this.env.appendLater(result);
  }

  /** Alias kept for the classic protocol's callbacks. */
  applyTimerResult(result: CoordinatorResult<unknown>): void {
    this.appendLater(result);
  }

  /** The classic group, created Empty when asked; null when missing (and not created) or of another type. */
  classicGroupOrNull(groupId: string, createIfNotExists: boolean): ClassicGroup | null {
    const group = this.groups.get(groupId);
    if (group === undefined) {
      if (!createIfNotExists) return null;
      const created = new ClassicGroup(groupId, { state: 'Empty', nowMs: this.nowMs() });
      this.groups.set(groupId, created);
      return created;
    }
    return group.type === 'classic' ? group : null;
  }

  /** Removes an empty consumer group in memory and returns its tombstones (a classic join takes its id). */
  deleteEmptyConsumerGroup(group: ConsumerGroup): GroupRecord[] {
    const records = consumerGroupTombstones(group);
    this.groups.delete(group.groupId);
    return records;
  }

  groupOrThrow(groupId: string): Group {
    const group = this.groups.get(groupId);
    if (group === undefined) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
    return group;
  }

  // ---- replay

  replay(record: GroupRecord, position: RecordPosition): void {
    switch (record.type) {
      case 'OffsetCommit':
        return this.replayOffsetCommit(record, position);
      case 'GroupMetadata':
        return this.replayGroupMetadata(record);
      case 'ConsumerGroupMetadata':
        return this.replayConsumerGroupMetadata(record);
      case 'ConsumerGroupPartitionMetadata':
        // Replaced by ConsumerGroupMetadataValue.metadataHash (KIP-1101); older logs may still hold it.
        return;
      case 'ConsumerGroupMemberMetadata':
        return this.replayMemberMetadata(record);
      case 'ConsumerGroupTargetAssignmentMetadata':
        return this.replayTargetAssignmentMetadata(record);
      case 'ConsumerGroupTargetAssignmentMember':
        return this.replayTargetAssignmentMember(record);
      case 'ConsumerGroupCurrentMemberAssignment':
        return this.replayCurrentAssignment(record);
      case 'ConsumerGroupRegularExpression':
        return this.replayRegularExpression(record);
      case 'ShareGroupMemberMetadata':
        return this.replayShareMemberMetadata(record);
      case 'ShareGroupMetadata':
        return this.replayShareGroupMetadata(record);
      case 'ShareGroupTargetAssignmentMetadata':
        return this.replayShareTargetAssignmentMetadata(record);
      case 'ShareGroupTargetAssignmentMember':
        return this.replayShareTargetAssignmentMember(record);
      case 'ShareGroupCurrentMemberAssignment':
        return this.replayShareCurrentAssignment(record);
      case 'ShareGroupStatePartitionMetadata':
        return this.replayStatePartitionMetadata(record);
    }
  }

  /** A transaction marker in the partition: commits or aborts the producer's pending offsets. */
  replayEndTransaction(producerId: number, committed: boolean): void {
    this.offsets.replayEndTransaction(producerId, committed);
  }

  private replayOffsetCommit(record: GroupRecordOf<'OffsetCommit'>, position: RecordPosition): void {
    const { group: groupId, topic, partition } = record.key;
    if (record.value === null) {
      this.offsets.replayCommit(groupId, topic, partition, null, position.producerId);
      return;
    }
    // Offsets of a consumer without group membership live in a "simple" group: an empty classic group without protocol type.
    if (!this.groups.has(groupId)) this.groups.set(groupId, new ClassicGroup(groupId, { state: 'Empty', nowMs: null }));
    const value = record.value;
    this.offsets.replayCommit(
      groupId,
      topic,
      partition,
      {
        committedOffset: value.offset,
        leaderEpoch: value.leaderEpoch,
        metadata: value.metadata,
        commitTimestampMs: value.commitTimestamp,
        expireTimestampMs: value.expireTimestamp === -1 ? null : value.expireTimestamp,
        recordOffset: position.offset,
      },
      position.producerId,
    );
  }

  private replayGroupMetadata(record: GroupRecordOf<'GroupMetadata'>): void {
    const groupId = record.key.group;
    const value = record.value;
    if (value === null) {
      const existing = this.groups.get(groupId);
      if (existing?.type === 'classic') existing.state = 'Dead';
      this.groups.delete(groupId);
      return;
    }
    const group = new ClassicGroup(groupId, {
      state: value.members.length === 0 ? 'Empty' : 'Stable',
      nowMs: value.currentStateTimestamp === -1 ? null : value.currentStateTimestamp,
      generationId: value.generation,
      protocolType: value.protocolType === '' ? null : value.protocolType,
      protocolName: value.protocol,
      leaderId: value.leader,
    });
    for (const m of value.members) {
      const member = new ClassicGroupMember(
        m.memberId,
        m.groupInstanceId,
        m.clientId,
        m.clientHost,
        m.rebalanceTimeout === -1 ? m.sessionTimeout : m.rebalanceTimeout,
        m.sessionTimeout,
        value.protocolType,
        [{ name: value.protocol ?? '', metadata: m.subscription }],
      );
      member.assignment = m.assignment;
      group.add(member);
    }
    // add() elects the first member as leader when none is set; the record's leader wins.
    group.leaderId = value.leader;
    group.subscribedTopics = group.computeSubscribedTopics();
    this.groups.set(groupId, group);
  }

  /** The consumer group to replay a record into, created when `create` (replacing a simple classic group). */
  private consumerGroupForReplay(groupId: string, create: boolean): ConsumerGroup | null {
    const group = this.groups.get(groupId);
    if (group?.type === 'consumer') return group;
    if (!create) return null;
    if (group?.type === 'share') throw new Error(`group ${groupId} is a share group, not a consumer group`);
    if (group !== undefined && !group.isSimpleGroup && !group.isEmpty) throw new Error(`group ${groupId} is a non-empty classic group, not a consumer group`);
    const created = new ConsumerGroup(groupId);
    this.groups.set(groupId, created);
    return created;
  }

  private replayConsumerGroupMetadata(record: GroupRecordOf<'ConsumerGroupMetadata'>): void {
    const group = this.consumerGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    if (record.value !== null) {
      group.setGroupEpoch(record.value.epoch, record.value.metadataHash);
      return;
    }
    if (group.members.size > 0) throw new Error(`tombstone for group ${group.groupId} which still has ${group.members.size} members`);
    if (group.targetAssignment.size > 0) throw new Error(`tombstone for group ${group.groupId} which still has a target assignment`);
    this.groups.delete(group.groupId);
  }

  private replayMemberMetadata(record: GroupRecordOf<'ConsumerGroupMemberMetadata'>): void {
    const group = this.consumerGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    const memberId = record.key.memberId;
    const value = record.value;
    if (value === null) {
      const member = group.members.get(memberId);
      if (member === undefined) return;
      if (member.memberEpoch !== LEAVE_GROUP_MEMBER_EPOCH) throw new Error(`member ${memberId} removed before its current assignment tombstone`);
      if (group.targetAssignment.has(memberId)) throw new Error(`member ${memberId} removed before its target assignment tombstone`);
      group.removeMember(memberId);
      return;
    }
    const old: ConsumerGroupMember = group.members.get(memberId) ?? newConsumerGroupMember(memberId);
    group.updateMember({
      ...old,
      instanceId: value.instanceId,
      rackId: value.rackId,
      clientId: value.clientId,
      clientHost: value.clientHost,
      subscribedTopicNames: value.subscribedTopicNames,
      subscribedTopicRegex: value.subscribedTopicRegex,
      rebalanceTimeoutMs: value.rebalanceTimeoutMs,
      serverAssignorName: value.serverAssignor,
      classicMemberMetadata: value.classicMemberMetadata,
    });
  }

  private replayTargetAssignmentMetadata(record: GroupRecordOf<'ConsumerGroupTargetAssignmentMetadata'>): void {
    const group = this.consumerGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    if (record.value !== null) {
      group.setTargetAssignmentEpoch(record.value.assignmentEpoch);
      return;
    }
    if (group.targetAssignment.size > 0) throw new Error(`target assignment epoch of ${group.groupId} removed before its members`);
    group.setTargetAssignmentEpoch(-1);
  }

  private replayTargetAssignmentMember(record: GroupRecordOf<'ConsumerGroupTargetAssignmentMember'>): void {
    const group = this.consumerGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    if (record.value === null) group.removeTargetAssignment(record.key.memberId);
    else group.updateTargetAssignment(record.key.memberId, assignmentFromList(record.value.topicPartitions));
  }

  private replayCurrentAssignment(record: GroupRecordOf<'ConsumerGroupCurrentMemberAssignment'>): void {
    const group = this.consumerGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    const memberId = record.key.memberId;
    const old = group.members.get(memberId);
    const value = record.value;
    if (value === null) {
      if (old === undefined) return;
      group.updateMember({
        ...old,
        memberEpoch: LEAVE_GROUP_MEMBER_EPOCH,
        previousMemberEpoch: LEAVE_GROUP_MEMBER_EPOCH,
        assignedPartitions: new Map(),
        partitionsPendingRevocation: new Map(),
        assignmentEpochs: new Map(),
      });
      return;
    }
    group.updateMember({
      ...(old ?? newConsumerGroupMember(memberId)),
      memberEpoch: value.memberEpoch,
      previousMemberEpoch: value.previousMemberEpoch,
      state: value.state,
      assignedPartitions: assignmentFromList(value.assignedPartitions),
      partitionsPendingRevocation: assignmentFromList(value.partitionsPendingRevocation),
      assignmentEpochs: assignmentEpochsFromList([...value.assignedPartitions, ...value.partitionsPendingRevocation], value.memberEpoch),
    });
  }

  private replayRegularExpression(record: GroupRecordOf<'ConsumerGroupRegularExpression'>): void {
    const group = this.consumerGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    const value = record.value;
    group.setResolvedRegularExpression(
      record.key.regularExpression,
      value === null ? null : { topics: value.topics, version: value.version, timestampMs: value.timestamp },
    );
  }

  // ---- share groups (KIP-932)

  /** The share group to replay a record into, created when `create`; a group of another type is a corrupt log. */
  private shareGroupForReplay(groupId: string, create: boolean): ShareGroup | null {
    const group = this.groups.get(groupId);
    if (group?.type === 'share') return group;
    if (!create) return null;
    if (group !== undefined) throw new Error(`group ${groupId} is a ${group.type} group, not a share group`);
    const created = new ShareGroup(groupId);
    this.groups.set(groupId, created);
    return created;
  }

  private replayShareMemberMetadata(record: GroupRecordOf<'ShareGroupMemberMetadata'>): void {
    const group = this.shareGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    const memberId = record.key.memberId;
    const value = record.value;
    if (value === null) {
      const member = group.members.get(memberId);
      if (member === undefined) return;
      if (member.memberEpoch !== LEAVE_GROUP_MEMBER_EPOCH) throw new Error(`share member ${memberId} removed before its current assignment tombstone`);
      if (group.targetAssignment.has(memberId)) throw new Error(`share member ${memberId} removed before its target assignment tombstone`);
      group.removeMember(memberId);
      return;
    }
    const old = group.members.get(memberId) ?? newShareGroupMember(memberId);
    group.updateMember({ ...old, rackId: value.rackId, clientId: value.clientId, clientHost: value.clientHost, subscribedTopicNames: [...value.subscribedTopicNames].sort() });
  }

  private replayShareGroupMetadata(record: GroupRecordOf<'ShareGroupMetadata'>): void {
    const group = this.shareGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    if (record.value !== null) {
      group.setGroupEpoch(record.value.epoch, record.value.metadataHash);
      return;
    }
    if (group.members.size > 0) throw new Error(`tombstone for share group ${group.groupId} which still has ${group.members.size} members`);
    if (group.targetAssignment.size > 0) throw new Error(`tombstone for share group ${group.groupId} which still has a target assignment`);
    this.groups.delete(group.groupId);
  }

  private replayShareTargetAssignmentMetadata(record: GroupRecordOf<'ShareGroupTargetAssignmentMetadata'>): void {
    const group = this.shareGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    if (record.value !== null) {
      group.setTargetAssignmentMetadata(record.value.assignmentEpoch, record.value.assignmentTimestamp);
      return;
    }
    if (group.targetAssignment.size > 0) throw new Error(`target assignment epoch of share group ${group.groupId} removed before its members`);
    group.setTargetAssignmentMetadata(-1, 0);
  }

  private replayShareTargetAssignmentMember(record: GroupRecordOf<'ShareGroupTargetAssignmentMember'>): void {
    const group = this.shareGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    if (record.value === null) group.removeTargetAssignment(record.key.memberId);
    else group.updateTargetAssignment(record.key.memberId, assignmentFromList(record.value.topicPartitions));
  }

  private replayShareCurrentAssignment(record: GroupRecordOf<'ShareGroupCurrentMemberAssignment'>): void {
    const group = this.shareGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    const memberId = record.key.memberId;
    const old = group.members.get(memberId);
    const value = record.value;
    if (value === null) {
      if (old !== undefined) group.updateMember({ ...old, memberEpoch: LEAVE_GROUP_MEMBER_EPOCH, previousMemberEpoch: LEAVE_GROUP_MEMBER_EPOCH, assignedPartitions: new Map() });
      return;
    }
    group.updateMember({
      ...(old ?? newShareGroupMember(memberId)),
      memberEpoch: value.memberEpoch,
      previousMemberEpoch: value.previousMemberEpoch,
      state: value.state,
      assignedPartitions: assignmentFromList(value.assignedPartitions),
    });
  }

  private replayStatePartitionMetadata(record: GroupRecordOf<'ShareGroupStatePartitionMetadata'>): void {
    const group = this.shareGroupForReplay(record.key.groupId, record.value !== null);
    if (group === null) return;
    const value = record.value;
    if (value === null) {
      group.statePartitionMetadata = null;
      return;
    }
    // Kafka stamps the entries with the replay time: an initialization is retried that long after this node learnt of it.
    const nowMs = this.nowMs();
    const topics = (list: readonly { topicId: string; topicName: string; partitions: readonly number[] }[]) =>
      new Map<string, SharePartitionsOfTopic>(list.map((t) => [t.topicId, { topicName: t.topicName, partitions: new Set(t.partitions), timestampMs: nowMs }]));
    group.statePartitionMetadata = {
      initializing: topics(value.initializingTopics),
      initialized: topics(value.initializedTopics),
      deleting: new Map(value.deletingTopics.map((t) => [t.topicId, t.topicName])),
    };
  }

  // ---- load and unload

  /** After the log is replayed: members' sessions start, timers resume. */
  onLoaded(): void {
    for (const group of this.groups.values()) {
      if (group.type === 'classic') this.classic.onLoaded(group);
      else if (group.type === 'consumer') this.consumer.onLoaded(group);
      else this.share.onLoaded(group);
    }
  }

  /** The shard is no longer the coordinator: every parked JoinGroup and SyncGroup gets NOT_COORDINATOR. */
  onUnloaded(): void {
    for (const group of this.groups.values()) {
      if (group.type !== 'classic') continue;
      group.completeAllJoins(ErrorCode.NOT_COORDINATOR);
      group.completeAllSyncs(ErrorCode.NOT_COORDINATOR);
      group.state = 'Dead';
    }
    this.groups.clear();
  }
}

/** The records that delete a consumer group, members first, in the order replay expects. */
export function consumerGroupTombstones(group: ConsumerGroup): GroupRecord[] {
  const records: GroupRecord[] = [];
  for (const memberId of group.members.keys()) records.push(...memberRemovalRecords(group.groupId, memberId));
  for (const memberId of group.targetAssignment.keys()) {
    if (!group.members.has(memberId)) records.push(groupRecord('ConsumerGroupTargetAssignmentMember', { groupId: group.groupId, memberId }, null));
  }
  for (const regex of group.resolvedRegularExpressions.keys()) {
    records.push(groupRecord('ConsumerGroupRegularExpression', { groupId: group.groupId, regularExpression: regex }, null));
  }
  records.push(groupRecord('ConsumerGroupTargetAssignmentMetadata', { groupId: group.groupId }, null));
  records.push(groupRecord('ConsumerGroupMetadata', { groupId: group.groupId }, null));
  return records;
}
