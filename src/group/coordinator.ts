/**
 * The group coordinator as the broker sees it (Kafka's GroupCoordinatorService):
 * routes each request to the shard of its group's `__consumer_offsets`
 * partition, validates what Kafka validates before a shard is involved
 * (empty group ids, session timeout bounds), turns a shard's refusal into
 * the response's error fields, and follows partition leadership through
 * metadata updates (a shard loads when this node becomes the partition's
 * leader and unloads when it stops being it).
 *
 * Share groups (KIP-932) also call the share-group state persister around
 * their shard operations (share-state.ts).
 */
import type { Env } from '../io/env.js';
import type { MetadataDelta, MetadataImage, MetadataPublisher } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import { assignorsByName } from './assignors.js';
import { UNKNOWN_MEMBER_ID, joinGroupError, syncGroupError, type JoinGroupResponseData, type SyncGroupResponseData } from './classic-group.js';
import type { ClassicRequestContext, JoinGroupInput, LeaveGroupMemberInput, LeaveGroupMemberResult, SyncGroupInput } from './classic-protocol.js';
import type { GroupCoordinatorConfig } from './config.js';
import type { ConsumerGroupHeartbeatInput, ConsumerGroupHeartbeatResponseData, HeartbeatContext } from './consumer-group-protocol.js';
import type { DeleteGroupResult, OffsetCommitInput, OffsetFetchInput, OffsetFetchResult, PartitionError } from './offset-operations.js';
import { CONSUMER_OFFSETS_TOPIC, partitionFor } from './placement.js';
import {
  describeClassicGroup,
  describeConsumerGroup,
  describeShareGroup,
  listGroups,
  type DescribedClassicGroup,
  type DescribedConsumerGroup,
  type DescribedShareGroup,
  type ListedGroup,
} from './queries.js';
import type { CoordinatorResult } from './operation.js';
import { GroupCoordinatorShard, type GroupTimeoutsLookup } from './shard.js';
import { CoordinatorRuntime, type CoordinatorLog, type RuntimeLogger, type WriteOutcome } from '../coordinator/runtime.js';
import { decodeGroupRecord, encodeGroupRecord, type GroupRecord } from './records.js';
import type { SharePersister } from '../share/persister.js';
import type { ShareGroupHeartbeatInput, ShareGroupHeartbeatResponseData } from './share-group-protocol.js';
import type { AlterShareOffsetsResponseTopic, AlterShareOffsetsTopic, DeleteShareOffsetsResponseTopic } from './share-offsets.js';
import {
  NO_OP_SHARE_PERSISTER,
  alterShareOffsets,
  deleteShareGroupsState,
  deleteShareOffsets,
  describeShareGroupOffsets,
  initializeShareState,
  type DescribedShareOffsetsTopic,
  type LatestOffsetLookup,
  type ShareStateContext,
} from './share-state.js';

export interface GroupCoordinatorOptions {
  nodeId: number;
  config: GroupCoordinatorConfig;
  env: Env;
  log: CoordinatorLog;
  logger: RuntimeLogger;
  /** The broker's current metadata image. */
  image: () => MetadataImage;
  /** The share-group state persister (the share coordinator's); Kafka's no-op persister when absent. */
  persister?: SharePersister;
  /** A partition's end offset, for share-group lag (DescribeShareGroupOffsets v1); lag is -1 without it. */
  latestOffset?: LatestOffsetLookup;
  /** Group-level session timeouts and heartbeat intervals (GROUP config resources); the broker's values without it. */
  groupTimeouts?: GroupTimeoutsLookup;
}

const GROUP_RECORD_CODEC = {
  encode: encodeGroupRecord,
  decode(key: Buffer, value: Buffer | null): GroupRecord | null {
    const result = decodeGroupRecord(key, value);
    return result.ok ? result.record : null;
  },
};

type TopicPartitionErrors = { name: string; partitions: PartitionError[] }[];

export class GroupCoordinator implements MetadataPublisher {
  readonly name = 'GroupCoordinator';
  readonly runtime: CoordinatorRuntime<GroupCoordinatorShard, GroupRecord>;
  private active = true;
  private readonly shareState: ShareStateContext;
  /** Persister initializations started by heartbeats, still running. */
  private readonly shareInitializations = new Set<Promise<unknown>>();

  constructor(private readonly options: GroupCoordinatorOptions) {
    const assignors = assignorsByName(options.config.consumerGroupAssignors);
    this.runtime = new CoordinatorRuntime({
      env: options.env,
      log: options.log,
      logger: options.logger,
      topic: CONSUMER_OFFSETS_TOPIC,
      name: 'group coordinator',
      codec: GROUP_RECORD_CODEC,
      writeTimeoutMs: options.config.offsetCommitTimeoutMs,
      periodic: [{ intervalMs: options.config.offsetsRetentionCheckIntervalMs, operation: (shard) => shard.offsetOps.cleanupExpired() }],
      newShard: (services) =>
        new GroupCoordinatorShard({
          ...services,
          config: options.config,
          clock: options.env.clock,
          random: options.env.random,
          image: options.image,
          assignors,
          ...(options.groupTimeouts === undefined ? {} : { groupTimeouts: options.groupTimeouts }),
        }),
    });
    this.shareState = {
      persister: options.persister ?? NO_OP_SHARE_PERSISTER,
      latestOffset: options.latestOffset ?? null,
      image: options.image,
      write: (groupId, operation) => this.write(groupId, operation),
      read: (groupId, view) => this.runtime.read(this.partitionFor(groupId), view),
    };
  }

  get config(): GroupCoordinatorConfig {
    return this.options.config;
  }

  /** The `__consumer_offsets` partition that holds the group. */
  partitionFor(groupId: string): number {
    return partitionFor(groupId, this.options.config.offsetsTopicPartitions);
  }

  get consumerProtocolEnabled(): boolean {
    return this.options.config.rebalanceProtocols.includes('consumer');
  }

  async shutdown(): Promise<void> {
    this.active = false;
    await this.runtime.shutdown();
  }

  // ---- leadership

  onMetadataUpdate(delta: MetadataDelta, image: MetadataImage): void {
    this.runtime.followLeadership(delta, this.options.nodeId);
    const deletedTopicIds = new Set(delta.deletedTopics.map((topic) => topic.id));
    if (deletedTopicIds.size > 0) {
      for (const partition of this.runtime.activePartitions()) void this.runtime.write(partition, (shard) => shard.share.cleanupDeletedTopics(deletedTopicIds));
    }
    for (const topic of delta.deletedTopics) {
      if (topic.name === CONSUMER_OFFSETS_TOPIC) continue;
      // Offsets of a deleted topic are deleted too (Kafka's onPartitionsDeleted).
      for (const partition of this.runtime.activePartitions()) {
        void this.runtime.write(partition, (shard) => shard.offsetOps.deleteTopicOffsets(topic.name));
      }
    }
    void image;
  }

  // ---- classic protocol

  async joinGroup(context: ClassicRequestContext, request: JoinGroupInput): Promise<JoinGroupResponseData> {
    const error = this.precheck(request.groupId, request.groupInstanceId);
    if (error !== null) return joinGroupError(request.memberId, error);
    const { classicGroupMinSessionTimeoutMs: min, classicGroupMaxSessionTimeoutMs: max } = this.options.config;
    if (request.sessionTimeoutMs < min || request.sessionTimeoutMs > max) return joinGroupError(request.memberId, ErrorCode.INVALID_SESSION_TIMEOUT);
    const input = context.apiVersion === 0 ? { ...request, rebalanceTimeoutMs: request.sessionTimeoutMs } : request;
    return new Promise((resolve) => {
      const respond = once(resolve);
      this.runtime.write(this.partitionFor(request.groupId), (shard) => shard.classic.join(context, input, respond)).then(
        (outcome) => {
          if (!outcome.ok) respond(joinGroupError(UNKNOWN_MEMBER_ID, outcome.errorCode));
        },
        () => respond(joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_SERVER_ERROR)),
      );
    });
  }

  async syncGroup(request: SyncGroupInput): Promise<SyncGroupResponseData> {
    const error = this.precheck(request.groupId);
    if (error !== null) return syncGroupError(error);
    return new Promise((resolve) => {
      const respond = once(resolve);
      this.runtime.write(this.partitionFor(request.groupId), (shard) => shard.classic.sync(request, respond)).then(
        (outcome) => {
          if (!outcome.ok) respond(syncGroupError(outcome.errorCode));
        },
        () => respond(syncGroupError(ErrorCode.UNKNOWN_SERVER_ERROR)),
      );
    });
  }

  async heartbeat(request: { groupId: string; memberId: string; groupInstanceId: string | null; generationId: number }): Promise<number> {
    const error = this.precheck(request.groupId);
    if (error !== null) return error;
    const outcome = await this.write(request.groupId, (shard) => shard.classic.heartbeat(request));
    if (outcome.ok) return outcome.response;
    // While the group loads, a heartbeat is answered blindly (Kafka does the same).
    return outcome.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.NONE : outcome.errorCode;
  }

  async leaveGroup(request: { groupId: string; members: readonly LeaveGroupMemberInput[] }): Promise<{ errorCode: number; members: LeaveGroupMemberResult[] }> {
    const error = this.precheck(request.groupId);
    if (error !== null) return { errorCode: error, members: [] };
    const outcome = await this.write(request.groupId, (shard) => shard.classic.leave(request));
    if (outcome.ok) return outcome.response;
    if (outcome.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
      // The group does not exist: every member is unknown.
      return { errorCode: ErrorCode.NONE, members: request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })) };
    }
    return { errorCode: outcome.errorCode, members: [] };
  }

  // ---- offsets

  async commitOffsets(request: OffsetCommitInput, apiVersion: number): Promise<TopicPartitionErrors> {
    if (!this.active) return allPartitions(request.topics, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (tooLongForRecords(request.groupId)) return allPartitions(request.topics, ErrorCode.UNKNOWN_SERVER_ERROR);
    const outcome = await this.write(request.groupId, (shard) => shard.offsetOps.commit(request, apiVersion));
    return outcome.ok ? outcome.response : allPartitions(request.topics, outcome.errorCode);
  }

  /**
   * TxnOffsetCommit: the offsets are written in the producer's transaction
   * and stay pending (invisible to OffsetFetch, UNSTABLE_OFFSET_COMMIT with
   * require_stable) until its COMMIT marker; an ABORT drops them.
   */
  async commitTransactionalOffsets(request: OffsetCommitInput, producer: { producerId: number; producerEpoch: number }): Promise<TopicPartitionErrors> {
    const error = this.precheck(request.groupId, request.groupInstanceId);
    if (error !== null) return allPartitions(request.topics, error);
    const outcome = await this.write(request.groupId, (shard) => shard.offsetOps.commitTransactional(request, producer));
    return outcome.ok ? outcome.response : allPartitions(request.topics, outcome.errorCode);
  }

  /** WriteTxnMarkers to a `__consumer_offsets` partition: the marker is written and ends the producer's pending offsets. */
  completeTransaction(partition: number, marker: { producerId: number; producerEpoch: number; coordinatorEpoch: number; committed: boolean; transactionVersion?: number }): Promise<number> {
    if (!this.active) return Promise.resolve(ErrorCode.NOT_COORDINATOR);
    return this.runtime.completeTransaction(partition, marker);
  }

  /** One group's offsets (OffsetFetch). */
  fetchOffsets(request: OffsetFetchInput): OffsetFetchResult {
    if (!this.active) return { groupId: request.groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, topics: [] };
    const outcome = this.runtime.read(this.partitionFor(request.groupId), (shard) => shard.offsetOps.fetch(request));
    return outcome.ok ? outcome.response : { groupId: request.groupId, errorCode: outcome.errorCode, topics: [] };
  }

  async deleteOffsets(request: { groupId: string; topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[] }): Promise<{
    errorCode: number;
    topics: TopicPartitionErrors;
  }> {
    const error = this.precheck(request.groupId);
    if (error !== null) return { errorCode: error, topics: [] };
    const outcome = await this.write(request.groupId, (shard) => shard.offsetOps.deleteOffsets(request));
    return outcome.ok ? { errorCode: ErrorCode.NONE, topics: outcome.response } : { errorCode: outcome.errorCode, topics: [] };
  }

  // ---- group administration

  async deleteGroups(groupIds: readonly string[]): Promise<DeleteGroupResult[]> {
    if (!this.active) return groupIds.map((groupId) => ({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null }));
    const byPartition = this.groupByPartition(groupIds);
    const results = new Map<string, DeleteGroupResult>();
    await Promise.all(
      [...byPartition].map(async ([partition, ids]) => {
        // Share groups first lose their share state (Kafka's deleteShareGroups); a failure keeps the group.
        const shareErrors = await deleteShareGroupsState(this.shareState, ids);
        for (const [groupId, errorCode] of shareErrors) if (errorCode !== ErrorCode.NONE) results.set(groupId, { groupId, errorCode, errorMessage: null });
        const retained = ids.filter((groupId) => !results.has(groupId));
        if (retained.length === 0) return;
        const outcome = await this.runtime.write(partition, (shard) => shard.offsetOps.deleteGroups(retained));
        const list = outcome.ok ? outcome.response : retained.map((groupId) => ({ groupId, errorCode: outcome.errorCode, errorMessage: null }));
        for (const result of list) results.set(result.groupId, result);
      }),
    );
    return groupIds.map((groupId) => results.get(groupId)!);
  }

  describeGroups(groupIds: readonly string[], apiVersion: number): DescribedClassicGroup[] {
    return groupIds.map((groupId) => {
      const outcome = this.active
        ? this.runtime.read(this.partitionFor(groupId), (shard) => describeClassicGroup(shard, groupId, apiVersion))
        : ({ ok: false, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, message: null } as const);
      if (outcome.ok) return outcome.response;
      return { errorCode: outcome.errorCode, errorMessage: null, groupId, groupState: '', protocolType: '', protocolData: '', members: [] };
    });
  }

  /** ListGroups over every shard this node has loaded; one still loading fails the whole answer. */
  listGroups(statesFilter: readonly string[], typesFilter: readonly string[]): { errorCode: number; groups: ListedGroup[] } {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const groups: ListedGroup[] = [];
    for (let partition = 0; partition < this.options.config.offsetsTopicPartitions; partition++) {
      const status = this.runtime.status(partition);
      if (status === 'none' || status === 'closed') continue;
      const outcome = this.runtime.read(partition, (shard) => listGroups(shard, statesFilter, typesFilter));
      if (!outcome.ok) return { errorCode: outcome.errorCode, groups: [] };
      groups.push(...outcome.response);
    }
    return { errorCode: ErrorCode.NONE, groups };
  }

  // ---- consumer protocol

  async consumerGroupHeartbeat(context: HeartbeatContext, request: ConsumerGroupHeartbeatInput): Promise<ConsumerGroupHeartbeatResponseData> {
    const fail = (errorCode: number, errorMessage: string | null): ConsumerGroupHeartbeatResponseData => ({
      errorCode,
      errorMessage,
      memberId: null,
      memberEpoch: 0,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (!this.active) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
    if (request.groupId === '') return fail(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.");
    if (tooLongForRecords(request.groupId)) return fail(ErrorCode.UNKNOWN_SERVER_ERROR, "'groupId' field is too long to be serialized");
    const outcome = await this.write(request.groupId, (shard) => shard.consumer.heartbeat(context, request));
    return outcome.ok ? outcome.response : fail(outcome.errorCode, outcome.message);
  }

  consumerGroupDescribe(groupIds: readonly string[]): DescribedConsumerGroup[] {
    return groupIds.map((groupId) => {
      const failed = (errorCode: number, errorMessage: string | null): DescribedConsumerGroup => ({
        errorCode,
        errorMessage,
        groupId,
        groupState: '',
        groupEpoch: 0,
        assignmentEpoch: 0,
        assignorName: '',
        members: [],
      });
      if (!this.active) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
      if (groupId === '') return failed(ErrorCode.INVALID_GROUP_ID, null);
      const outcome = this.runtime.read(this.partitionFor(groupId), (shard) => describeConsumerGroup(shard, groupId));
      return outcome.ok ? outcome.response : failed(outcome.errorCode, outcome.message);
    });
  }

  // ---- share groups (KIP-932)

  /**
   * ShareGroupHeartbeat. Answers once the shard's records are written;
   * share partitions new to the group are then initialized in the persister
   * in the background (Kafka does it on a timer task), and the member gets
   * them on a later heartbeat.
   */
  async shareGroupHeartbeat(context: { clientId: string; clientHost: string }, request: ShareGroupHeartbeatInput): Promise<ShareGroupHeartbeatResponseData> {
    const fail = (errorCode: number, errorMessage: string | null): ShareGroupHeartbeatResponseData => ({
      errorCode,
      errorMessage,
      memberId: null,
      memberEpoch: 0,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (!this.active) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
    const invalid = invalidShareHeartbeat(request);
    if (invalid !== null) return fail(ErrorCode.INVALID_REQUEST, invalid);
    if (tooLongForRecords(request.groupId)) return fail(ErrorCode.UNKNOWN_SERVER_ERROR, "'groupId' field is too long to be serialized");
    const outcome = await this.write(request.groupId, (shard) => shard.share.heartbeat(context, request));
    if (!outcome.ok) return fail(outcome.errorCode, outcome.message);
    const { response, initialization } = outcome.response;
    if (initialization !== null) {
      const running: Promise<unknown> = initializeShareState(this.shareState, initialization).finally(() => this.shareInitializations.delete(running));
      this.shareInitializations.add(running);
    }
    return response;
  }

  /** Resolves once every share-state initialization started so far has finished (tests; shutdown). */
  async shareInitializationsSettled(): Promise<void> {
    while (this.shareInitializations.size > 0) await Promise.allSettled([...this.shareInitializations]);
  }

  shareGroupDescribe(groupIds: readonly string[]): DescribedShareGroup[] {
    return groupIds.map((groupId) => {
      const failed = (errorCode: number, errorMessage: string | null): DescribedShareGroup => ({
        errorCode,
        errorMessage,
        groupId,
        groupState: '',
        groupEpoch: 0,
        assignmentEpoch: 0,
        assignorName: '',
        members: [],
      });
      if (!this.active) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
      if (groupId === '') return failed(ErrorCode.INVALID_GROUP_ID, null);
      const outcome = this.runtime.read(this.partitionFor(groupId), (shard) => describeShareGroup(shard, groupId));
      return outcome.ok ? outcome.response : failed(outcome.errorCode, outcome.message);
    });
  }

  /** DescribeShareGroupOffsets for one group: the named topics' partitions, or every initialized one when topics is null. */
  async describeShareGroupOffsets(
    groupId: string,
    topics: readonly { topicName: string; partitions: readonly number[] }[] | null,
  ): Promise<{ errorCode: number; errorMessage: string | null; topics: DescribedShareOffsetsTopic[] }> {
    const error = this.precheck(groupId);
    if (error !== null) return { errorCode: error, errorMessage: null, topics: [] };
    return describeShareGroupOffsets(this.shareState, groupId, topics);
  }

  async alterShareGroupOffsets(groupId: string, topics: readonly AlterShareOffsetsTopic[]): Promise<{ errorCode: number; errorMessage: string | null; responses: AlterShareOffsetsResponseTopic[] }> {
    const error = this.precheck(groupId);
    if (error !== null) return { errorCode: error, errorMessage: null, responses: [] };
    return alterShareOffsets(this.shareState, groupId, topics);
  }

  async deleteShareGroupOffsets(groupId: string, topicNames: readonly string[]): Promise<{ errorCode: number; errorMessage: string | null; responses: DeleteShareOffsetsResponseTopic[] }> {
    const error = this.precheck(groupId);
    if (error !== null) return { errorCode: error, errorMessage: null, responses: [] };
    return deleteShareOffsets(this.shareState, groupId, topicNames);
  }

  // ---- helpers

  /**
   * Errors given before a shard is involved: inactive coordinator, empty
   * group id, and a group id too long for the records' int16 string length
   * (Kafka's record serializer fails on it, which clients see as
   * UNKNOWN_SERVER_ERROR; checking first keeps the shard untouched).
   */
  private precheck(groupId: string, instanceId: string | null = null): number | null {
    if (!this.active) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID;
    if (tooLongForRecords(groupId) || (instanceId !== null && tooLongForRecords(instanceId))) return ErrorCode.UNKNOWN_SERVER_ERROR;
    return null;
  }

  private async write<T>(groupId: string, operation: (shard: GroupCoordinatorShard) => CoordinatorResult<T>): Promise<WriteOutcome<T>> {
    try {
      return await this.runtime.write(this.partitionFor(groupId), operation);
    } catch {
      return { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, message: null };
    }
  }

  private groupByPartition(groupIds: readonly string[]): Map<number, string[]> {
    const out = new Map<number, string[]>();
    for (const groupId of groupIds) {
      const partition = this.partitionFor(groupId);
      const list = out.get(partition) ?? [];
      list.push(groupId);
      out.set(partition, list);
    }
    return out;
  }
}

/** Record keys and classic member fields are int16-length strings. */
const RECORD_STRING_BYTES_MAX = 32767;

function tooLongForRecords(text: string): boolean {
  return text.length > RECORD_STRING_BYTES_MAX / 3 && Buffer.byteLength(text, 'utf8') > RECORD_STRING_BYTES_MAX;
}

function once<T>(resolve: (value: T) => void): (value: T) => void {
  let done = false;
  return (value) => {
    if (done) return;
    done = true;
    resolve(value);
  };
}

function allPartitions(topics: OffsetCommitInput['topics'], errorCode: number): TopicPartitionErrors {
  return topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) }));
}

/** Kafka's member id bound (KafkaApis.isMemberIdValid): a client-generated UUID fits in 36 characters. */
const SHARE_MEMBER_ID_CHARS_MAX = 36;

/** What Kafka's GroupCoordinatorService (and KafkaApis, for the member id) refuses as INVALID_REQUEST, or null. */
function invalidShareHeartbeat(request: ShareGroupHeartbeatInput): string | null {
  if (request.memberId.trim() === '') return "MemberId can't be empty.";
  if (request.memberId.length > SHARE_MEMBER_ID_CHARS_MAX) return 'Invalid member id in the request.';
  if (request.groupId.trim() === '') return "GroupId can't be empty.";
  if (request.rackId !== null && request.rackId.trim() === '') return "RackId can't be empty.";
  if (request.memberEpoch === 0) {
    if (request.subscribedTopicNames === null || request.subscribedTopicNames.length === 0) return 'SubscribedTopicNames must be set in first request.';
  } else if (request.memberEpoch < -1) {
    return 'MemberEpoch is invalid.';
  }
  return null;
}
