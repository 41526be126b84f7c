/**
 * The KIP-848 consumer protocol: ConsumerGroupHeartbeat, the session and
 * rebalance timers of its members, and the upgrade of an empty classic
 * group.
 *
 * One heartbeat runs three steps, each writing records only when something
 * changed:
 *   1. the member's subscription: a new or changed member is written
 *      (ConsumerGroupMemberMetadataValue); a changed subscription, a new
 *      regex resolution or changed topic metadata bumps the group epoch
 *      (ConsumerGroupMetadataValue);
 *   2. the target assignment: when the group epoch is ahead of the target's,
 *      the server-side assignor computes a new one for everybody;
 *   3. reconciliation: the member moves towards its target (reconciliation.ts)
 *      and its current assignment is written
 *      (ConsumerGroupCurrentMemberAssignmentValue).
 * Nothing here changes the group: the records do, when replayed.
 *
 * Regular expressions (subscribedTopicRegex, KIP-848 v1): Kafka uses RE2/J
 * full-match semantics; Spool compiles the text with JavaScript's RegExp as
 * `^(?:regex)$` (no unicode flag, so escaped punctuation such as \- is
 * accepted as RE2/J accepts it). The syntaxes agree on the usual constructs
 * (classes, alternation, quantifiers, anchors); RE2-only syntax is refused
 * ((?P<name>)) or read with JavaScript's meaning (\pN, \Q..\E), and
 * JS-only syntax (lookarounds, backreferences) is accepted where Kafka
 * would refuse it. See docs/SKIPPED.md.
 * Internal topics match like any other (Kafka 4.4's TopicRegexResolver does
 * not exclude them). Resolution happens inline (Kafka resolves in
 * the background) and is written as ConsumerGroupRegularExpressionValue.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { MetadataImage } from '../metadata/image.js';
import {
  ConsumerGroup,
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  MemberState,
  assignmentEpochsAt,
  assignmentFromList,
  assignmentToList,
  newConsumerGroupMember,
  partitionAssignmentEpoch,
  sameAssignment,
  sameCurrentAssignment,
  sameNames,
  sameSubscriptionMetadata,
  type Assignment,
  type ConsumerGroupMember,
  type ResolvedRegularExpression,
} from './consumer-group.js';
import { GroupApiError } from './errors.js';
import { coordinatorResult, type CoordinatorResult } from './operation.js';
import { reconcile, type OwnedTopicPartitions } from './reconciliation.js';
import { groupRecord, type GroupRecord } from './records.js';
import type { GroupCoordinatorShard } from './shard.js';
import { buildTargetAssignment } from './target-assignment.js';

export interface ConsumerGroupHeartbeatInput {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: readonly string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: readonly OwnedTopicPartitions[] | null;
}

export interface ConsumerGroupHeartbeatResponseData {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
}

export interface HeartbeatContext {
  clientId: string;
  clientHost: string;
  apiVersion: number;
}

/** ConsumerGroupHeartbeat v1 requires the client to generate its member id (KIP-1082). */
const CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1;

export const sessionTimeoutKey = (groupId: string, memberId: string) => `session-timeout-${groupId}-${memberId}`;
export const rebalanceTimeoutKey = (groupId: string, memberId: string) => `rebalance-timeout-${groupId}-${memberId}`;

/** Compiles a subscription regex with Kafka's full-match semantics, or null when it is invalid. */
export function compileTopicRegex(regex: string): RegExp | null {
  try {
    // No 'u' flag: RE2/J accepts escaped punctuation such as \- outside classes, which unicode mode refuses.
    return new RegExp(`^(?:${regex})$`);
  } catch {
    return null;
  }
}

export class ConsumerGroupProtocol {
  constructor(private readonly shard: GroupCoordinatorShard) {}

  private get config() {
    return this.shard.config;
  }

  heartbeat(context: HeartbeatContext, request: ConsumerGroupHeartbeatInput): CoordinatorResult<ConsumerGroupHeartbeatResponseData> {
    this.validate(context, request);
    if (request.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || request.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) return this.leave(request);
    return this.join(context, request);
  }

  private validate(context: HeartbeatContext, request: ConsumerGroupHeartbeatInput): void {
    const invalid = (message: string) => new GroupApiError(ErrorCode.INVALID_REQUEST, message);
    if (
      (context.apiVersion >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION || request.memberEpoch > 0 || request.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) &&
      request.memberId === ''
    ) {
      throw invalid("MemberId can't be empty.");
    }
    if (request.groupId === '') throw invalid("GroupId can't be empty.");
    if (request.instanceId === '') throw invalid("InstanceId can't be empty.");
    if (request.rackId === '') throw invalid("RackId can't be empty.");
    if (request.memberEpoch === 0) {
      if (request.rebalanceTimeoutMs === -1) throw invalid('RebalanceTimeoutMs must be provided in first request.');
      if (request.topicPartitions === null || request.topicPartitions.length > 0) throw invalid('TopicPartitions must be empty when (re-)joining.');
      if (request.subscribedTopicNames === null && request.subscribedTopicRegex === null) {
        throw invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
      }
    } else if (request.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      if (request.instanceId === null) throw invalid("InstanceId can't be null.");
    } else if (request.memberEpoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      throw invalid('MemberEpoch is invalid.');
    }
    if (request.subscribedTopicRegex !== null && compileTopicRegex(request.subscribedTopicRegex) === null) {
      throw new GroupApiError(ErrorCode.INVALID_REGULAR_EXPRESSION, `SubscribedTopicRegex \`${request.subscribedTopicRegex}\` is not a valid regular expression.`);
    }
    if (request.serverAssignor !== null && !this.shard.assignors.has(request.serverAssignor)) {
      throw new GroupApiError(
        ErrorCode.UNSUPPORTED_ASSIGNOR,
        `ServerAssignor ${request.serverAssignor} is not supported. Supported assignors: ${[...this.shard.assignors.keys()].join(', ')}.`,
      );
    }
  }

  // ---- joining and heartbeating

  private join(context: HeartbeatContext, request: ConsumerGroupHeartbeatInput): CoordinatorResult<ConsumerGroupHeartbeatResponseData> {
    const groupId = request.groupId;
    const records: GroupRecord[] = [];
    const createIfNotExists = request.memberEpoch === 0;
    const group = this.groupForHeartbeat(groupId, createIfNotExists, records);
    const memberId = request.memberId === '' ? this.shard.randomUuidBase64() : request.memberId;
    if (group.numMembers >= this.config.consumerGroupMaxSize && (request.memberId === '' || !group.hasMember(memberId))) {
      throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.config.consumerGroupMaxSize} members.`);
    }
    const { member, replacedMemberId } =
      request.instanceId === null
        ? { member: this.dynamicMember(group, memberId, request, createIfNotExists), replacedMemberId: null }
        : this.staticMember(group, memberId, request, createIfNotExists, records);

    const updatedMember: ConsumerGroupMember = {
      ...member,
      instanceId: request.instanceId ?? member.instanceId,
      rackId: request.rackId ?? member.rackId,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs !== -1 ? request.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignorName: request.serverAssignor ?? member.serverAssignorName,
      subscribedTopicNames: request.subscribedTopicNames ?? member.subscribedTopicNames,
      subscribedTopicRegex: request.subscribedTopicRegex ?? member.subscribedTopicRegex,
      clientId: context.clientId,
      clientHost: context.clientHost,
      classicMemberMetadata: null,
    };

    const subscription = this.updateSubscription(group, member, updatedMember, replacedMemberId, records);
    const target = this.targetAssignmentFor(group, updatedMember, replacedMemberId, subscription, records);
    const { targetAssignmentEpoch, targetAssignment } = target;

    const reconciled = this.maybeReconcile(group, updatedMember, {
      targetAssignmentEpoch,
      targetAssignment,
      ownedTopicPartitions: request.topicPartitions,
      records,
    });
    this.scheduleSessionTimeout(groupId, memberId);

    // A full request (joining, or resending everything after an error) always gets the assignment back.
    const isFullRequest =
      request.memberEpoch === 0 ||
      (request.rebalanceTimeoutMs !== -1 && (request.subscribedTopicNames !== null || request.subscribedTopicRegex !== null) && request.topicPartitions !== null);
    const changed = !sameAssignment(member.assignedPartitions, reconciled.assignedPartitions);
    return coordinatorResult(records, {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: reconciled.memberId,
      memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.shard.timeouts(group.groupId, 'consumer').heartbeatIntervalMs,
      assignment: isFullRequest || changed ? { topicPartitions: assignmentToList(reconciled.assignedPartitions) } : null,
    });
  }

  /**
   * Step 1: writes the member's subscription when it changed and bumps the
   * group epoch when the subscriptions, a regex resolution or the subscribed
   * topics' metadata changed.
   */
  private updateSubscription(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    updatedMember: ConsumerGroupMember,
    replacedMemberId: string | null,
    records: GroupRecord[],
  ): { members: ReadonlyMap<string, ConsumerGroupMember>; groupEpoch: number; topicNamesOf: (m: ConsumerGroupMember) => string[] } {
    let bumpGroupEpoch = false;
    if (!sameSubscriptionMetadata(member, updatedMember)) {
      records.push(memberMetadataRecord(group.groupId, updatedMember));
      if (!sameNames(member.subscribedTopicNames, updatedMember.subscribedTopicNames) || member.subscribedTopicRegex !== updatedMember.subscribedTopicRegex) {
        bumpGroupEpoch = true;
      }
    }
    const members = new Map(group.members);
    if (replacedMemberId !== null) members.delete(replacedMemberId);
    members.set(updatedMember.memberId, updatedMember);
    const regexes = this.refreshRegularExpressions(group, members, records);
    if (regexes.changed) bumpGroupEpoch = true;
    const topicNamesOf = (m: ConsumerGroupMember) => memberTopicNames(m, regexes.resolved);
    const metadataHash = topicsMetadataHash(subscribedTopicNames(members.values(), topicNamesOf), this.shard.image);
    if (metadataHash !== group.metadataHash) bumpGroupEpoch = true;
    if (!bumpGroupEpoch) return { members, groupEpoch: group.groupEpoch, topicNamesOf };
    const groupEpoch = group.groupEpoch + 1;
    records.push(groupRecord('ConsumerGroupMetadata', { groupId: group.groupId }, { epoch: groupEpoch, metadataHash }));
    return { members, groupEpoch, topicNamesOf };
  }

  /** Step 2: a new target assignment when the group epoch moved past the target's, else the current one. */
  private targetAssignmentFor(
    group: ConsumerGroup,
    updatedMember: ConsumerGroupMember,
    replacedMemberId: string | null,
    subscription: { members: ReadonlyMap<string, ConsumerGroupMember>; groupEpoch: number; topicNamesOf: (m: ConsumerGroupMember) => string[] },
    records: GroupRecord[],
  ): { targetAssignmentEpoch: number; targetAssignment: Assignment } {
    if (subscription.groupEpoch <= group.targetAssignmentEpoch) {
      return { targetAssignmentEpoch: group.targetAssignmentEpoch, targetAssignment: group.targetAssignmentOf(updatedMember.memberId, updatedMember.instanceId) };
    }
    const built = buildTargetAssignment({
      group,
      groupEpoch: subscription.groupEpoch,
      assignor: this.preferredAssignor(subscription.members),
      image: this.shard.image,
      updatedMember,
      removedMemberIds: replacedMemberId === null ? [] : [replacedMemberId],
      topicNamesOf: subscription.topicNamesOf,
      nowMs: this.shard.nowMs(),
    });
    records.push(...built.records);
    return { targetAssignmentEpoch: subscription.groupEpoch, targetAssignment: built.assignments.get(updatedMember.memberId) ?? new Map() };
  }

  /** The consumer group for a heartbeat; joining replaces an empty classic group (records its tombstone). */
  private groupForHeartbeat(groupId: string, createIfNotExists: boolean, records: GroupRecord[]): ConsumerGroup {
    const group = this.shard.groups.get(groupId);
    if (group === undefined) {
      if (!createIfNotExists) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`);
      return new ConsumerGroup(groupId);
    }
    if (group.type === 'consumer') return group;
    if (createIfNotExists && group.type === 'classic' && group.isEmpty) {
      // Upgrade: an empty classic group (or a simple one holding offsets) becomes a consumer group.
      records.push(group.tombstone());
      return new ConsumerGroup(groupId);
    }
    throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
  }

  private dynamicMember(group: ConsumerGroup, memberId: string, request: ConsumerGroupHeartbeatInput, createIfNotExists: boolean): ConsumerGroupMember {
    const existing = group.members.get(memberId);
    if (existing === undefined) {
      if (!createIfNotExists) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`);
      return newConsumerGroupMember(memberId);
    }
    throwIfMemberEpochIsInvalid(existing, request.memberEpoch, request.topicPartitions);
    return existing;
  }

  private staticMember(
    group: ConsumerGroup,
    memberId: string,
    request: ConsumerGroupHeartbeatInput,
    createIfNotExists: boolean,
    records: GroupRecord[],
  ): { member: ConsumerGroupMember; replacedMemberId: string | null } {
    const instanceId = request.instanceId!;
    const existing = group.staticMember(instanceId);
    if (createIfNotExists) {
      if (existing === null) return { member: group.members.get(memberId) ?? newConsumerGroupMember(memberId), replacedMemberId: null };
      if (existing.memberId === memberId) return { member: existing, replacedMemberId: null };
      if (existing.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
        throw new GroupApiError(
          ErrorCode.UNRELEASED_INSTANCE_ID,
          `Static member ${memberId} with instance id ${instanceId} cannot join the group because the instance id is owned by ${existing.memberId} member.`,
        );
      }
      // The instance comes back under a new member id: it takes over its predecessor's assignment at epoch 0.
      const replacement: ConsumerGroupMember = { ...existing, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
      records.push(...memberRemovalRecords(group.groupId, existing.memberId));
      records.push(memberMetadataRecord(group.groupId, replacement));
      records.push(targetAssignmentRecord(group.groupId, memberId, group.targetAssignmentOf(existing.memberId)));
      records.push(currentAssignmentRecord(group.groupId, replacement));
      this.cancelTimers(group.groupId, existing.memberId);
      return { member: replacement, replacedMemberId: existing.memberId };
    }
    if (existing === null) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${instanceId} is unknown.`);
    if (existing.memberId !== memberId) {
      throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${instanceId} was fenced by member ${existing.memberId}.`);
    }
    throwIfMemberEpochIsInvalid(existing, request.memberEpoch, request.topicPartitions);
    return { member: existing, replacedMemberId: null };
  }

  private maybeReconcile(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    input: { targetAssignmentEpoch: number; targetAssignment: Assignment; ownedTopicPartitions: readonly OwnedTopicPartitions[] | null; records: GroupRecord[] },
  ): ConsumerGroupMember {
    if (member.state === MemberState.STABLE && member.memberEpoch === input.targetAssignmentEpoch) return member;
    const updated = reconcile(member, {
      targetAssignmentEpoch: input.targetAssignmentEpoch,
      targetAssignment: input.targetAssignment,
      currentPartitionEpoch: (topicId, partition) => group.currentPartitionEpoch(topicId, partition),
      ownedTopicPartitions: input.ownedTopicPartitions,
    });
    if (sameCurrentAssignment(member, updated)) return member;
    input.records.push(currentAssignmentRecord(group.groupId, updated));
    if (updated.state === MemberState.UNREVOKED_PARTITIONS) this.scheduleRebalanceTimeout(group.groupId, updated.memberId, updated.memberEpoch, updated.rebalanceTimeoutMs);
    else this.shard.timer.cancel(rebalanceTimeoutKey(group.groupId, updated.memberId));
    return updated;
  }

  /**
   * Resolves the regexes the members use: new ones, and old ones whose
   * resolution predates the current metadata image. Records a resolution
   * whose topics changed and a tombstone for regexes nobody uses any more.
   */
  private refreshRegularExpressions(
    group: ConsumerGroup,
    members: ReadonlyMap<string, ConsumerGroupMember>,
    records: GroupRecord[],
  ): { resolved: ReadonlyMap<string, ResolvedRegularExpression>; changed: boolean } {
    const image = this.shard.image;
    const used = new Set<string>();
    for (const m of members.values()) if (m.subscribedTopicRegex !== null && m.subscribedTopicRegex !== '') used.add(m.subscribedTopicRegex);
    const resolved = new Map<string, ResolvedRegularExpression>();
    let changed = false;
    for (const regex of used) {
      const previous = group.resolvedRegularExpressions.get(regex);
      if (previous !== undefined && previous.version === image.offset) {
        resolved.set(regex, previous);
        continue;
      }
      const topics = resolveRegex(regex, image);
      if (previous !== undefined && sameNames(previous.topics, topics)) {
        // Same topics: keep the stored resolution (re-resolving is cheap; rewriting it is not).
        resolved.set(regex, previous);
        continue;
      }
      const next = { topics, version: image.offset, timestampMs: this.shard.nowMs() };
      resolved.set(regex, next);
      changed = true;
      records.push(groupRecord('ConsumerGroupRegularExpression', { groupId: group.groupId, regularExpression: regex }, { topics, version: next.version, timestamp: next.timestampMs }));
    }
    for (const regex of group.resolvedRegularExpressions.keys()) {
      if (used.has(regex)) continue;
      records.push(groupRecord('ConsumerGroupRegularExpression', { groupId: group.groupId, regularExpression: regex }, null));
    }
    return { resolved, changed };
  }

  /** The assignor most members asked for, else the first configured one. */
  private preferredAssignor(members: ReadonlyMap<string, ConsumerGroupMember>) {
    const votes = new Map<string, number>();
    for (const m of members.values()) if (m.serverAssignorName !== null) votes.set(m.serverAssignorName, (votes.get(m.serverAssignorName) ?? 0) + 1);
    let best = this.shard.defaultAssignor;
    let bestVotes = 0;
    for (const assignor of this.shard.assignors.values()) {
      const count = votes.get(assignor.name) ?? 0;
      if (count > bestVotes) {
        best = assignor;
        bestVotes = count;
      }
    }
    return best;
  }

  // ---- leaving and fencing

  private leave(request: ConsumerGroupHeartbeatInput): CoordinatorResult<ConsumerGroupHeartbeatResponseData> {
    const group = this.shard.groups.get(request.groupId);
    if (group === undefined || group.type !== 'consumer') throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${request.groupId} not found.`);
    const response = (memberId: string, memberEpoch: number): ConsumerGroupHeartbeatResponseData => ({
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId,
      memberEpoch,
      heartbeatIntervalMs: 0,
      assignment: null,
    });
    if (request.instanceId === null) {
      const member = group.members.get(request.memberId);
      if (member === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${request.memberId} is not a member of group ${group.groupId}.`);
      return coordinatorResult(this.fenceMemberRecords(group, member), response(request.memberId, request.memberEpoch));
    }
    const member = group.staticMember(request.instanceId);
    if (member === null) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${request.instanceId} is unknown.`);
    if (member.memberId !== request.memberId) {
      throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${request.memberId} with instance id ${request.instanceId} was fenced by member ${member.memberId}.`);
    }
    if (request.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      // A temporary leave: the member keeps its partitions (nobody else gets them) until it returns or its session ends.
      // Its partitions' assignment epochs drop to 0, so the instance may commit for them under its next member id (KIP-1251).
      const leaving: ConsumerGroupMember = {
        ...member,
        memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH,
        partitionsPendingRevocation: new Map(),
        assignmentEpochs: assignmentEpochsAt(member.assignedPartitions, 0),
      };
      return coordinatorResult([currentAssignmentRecord(group.groupId, leaving)], response(member.memberId, LEAVE_GROUP_STATIC_MEMBER_EPOCH));
    }
    return coordinatorResult(this.fenceMemberRecords(group, member), response(request.memberId, request.memberEpoch));
  }

  /** Removes a member (it left, or its session or rebalance timed out) and bumps the group epoch. */
  fenceMemberRecords(group: ConsumerGroup, member: ConsumerGroupMember): GroupRecord[] {
    const records = memberRemovalRecords(group.groupId, member.memberId);
    const members = new Map(group.members);
    members.delete(member.memberId);
    const resolved = group.resolvedRegularExpressions;
    if (member.subscribedTopicRegex !== null && ![...members.values()].some((m) => m.subscribedTopicRegex === member.subscribedTopicRegex)) {
      if (resolved.has(member.subscribedTopicRegex)) {
        records.push(groupRecord('ConsumerGroupRegularExpression', { groupId: group.groupId, regularExpression: member.subscribedTopicRegex }, null));
      }
    }
    const metadataHash = topicsMetadataHash(subscribedTopicNames(members.values(), (m) => memberTopicNames(m, resolved)), this.shard.image);
    records.push(groupRecord('ConsumerGroupMetadata', { groupId: group.groupId }, { epoch: group.groupEpoch + 1, metadataHash }));
    this.cancelTimers(group.groupId, member.memberId);
    return records;
  }

  private fenceOperation(groupId: string, memberId: string, expectedEpoch: number | null): CoordinatorResult<void> {
    const group = this.shard.groups.get(groupId);
    if (group === undefined || group.type !== 'consumer') return coordinatorResult([], undefined);
    const member = group.members.get(memberId);
    if (member === undefined || (expectedEpoch !== null && member.memberEpoch !== expectedEpoch)) return coordinatorResult([], undefined);
    return coordinatorResult(this.fenceMemberRecords(group, member), undefined);
  }

  scheduleSessionTimeout(groupId: string, memberId: string): void {
    this.shard.timer.schedule(sessionTimeoutKey(groupId, memberId), this.shard.timeouts(groupId, 'consumer').sessionTimeoutMs, () => this.fenceOperation(groupId, memberId, null));
  }

  private scheduleRebalanceTimeout(groupId: string, memberId: string, memberEpoch: number, rebalanceTimeoutMs: number): void {
    // A member that does not revoke its partitions within its rebalance timeout is fenced.
    this.shard.timer.schedule(rebalanceTimeoutKey(groupId, memberId), rebalanceTimeoutMs, () => this.fenceOperation(groupId, memberId, memberEpoch));
  }

  cancelTimers(groupId: string, memberId: string): void {
    this.shard.timer.cancel(sessionTimeoutKey(groupId, memberId));
    this.shard.timer.cancel(rebalanceTimeoutKey(groupId, memberId));
  }

  /** After a load: every member's session starts now; members mid-revocation get their rebalance timeout again. */
  onLoaded(group: ConsumerGroup): void {
    for (const member of group.members.values()) {
      this.scheduleSessionTimeout(group.groupId, member.memberId);
      if (member.state === MemberState.UNREVOKED_PARTITIONS) this.scheduleRebalanceTimeout(group.groupId, member.memberId, member.memberEpoch, member.rebalanceTimeoutMs);
    }
  }
}

function throwIfMemberEpochIsInvalid(member: ConsumerGroupMember, receivedEpoch: number, owned: readonly OwnedTopicPartitions[] | null): void {
  if (receivedEpoch > member.memberEpoch) {
    throw new GroupApiError(
      ErrorCode.FENCED_MEMBER_EPOCH,
      `The consumer group member has a greater member epoch (${receivedEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
    );
  }
  if (receivedEpoch < member.memberEpoch) {
    // The previous epoch is accepted when the member owns a subset of its assignment: the response with the bump was lost.
    if (receivedEpoch !== member.previousMemberEpoch || !isSubset(owned, member.assignedPartitions)) {
      throw new GroupApiError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a smaller member epoch (${receivedEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
  }
}

function isSubset(owned: readonly OwnedTopicPartitions[] | null, assignment: Assignment): boolean {
  if (owned === null) return false;
  return owned.every((entry) => {
    const partitions = assignment.get(entry.topicId);
    return partitions !== undefined && entry.partitions.every((p) => partitions.has(p));
  });
}

/** Topics of the image matching a regex (full match), internal ones included as in Kafka, sorted. */
export function resolveRegex(regex: string, image: MetadataImage): string[] {
  const pattern = compileTopicRegex(regex);
  if (pattern === null) return [];
  return [...image.topicsByName.keys()].filter((name) => pattern.test(name)).sort();
}

export function memberTopicNames(member: ConsumerGroupMember, resolved: ReadonlyMap<string, ResolvedRegularExpression>): string[] {
  if (member.subscribedTopicRegex === null || member.subscribedTopicRegex === '') return [...member.subscribedTopicNames];
  return [...new Set([...member.subscribedTopicNames, ...(resolved.get(member.subscribedTopicRegex)?.topics ?? [])])];
}

function subscribedTopicNames(members: Iterable<ConsumerGroupMember>, topicNamesOf: (m: ConsumerGroupMember) => Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const member of members) for (const name of topicNamesOf(member)) names.add(name);
  return names;
}

/**
 * A hash of the subscribed topics' metadata (name, id, partition count), as
 * KIP-1101's MetadataHash: when it changes (a topic created, deleted or
 * grown) the group epoch moves and the group is reassigned. Spool's own
 * function (two FNV-1a 32-bit hashes folded into 53 bits): the value is only
 * ever compared with values Spool computed.
 */
export function topicsMetadataHash(names: Iterable<string>, image: MetadataImage): number {
  const parts: string[] = [];
  for (const name of [...names].sort()) {
    const topic = image.topicsByName.get(name);
    if (topic !== undefined) parts.push(`${name}\u0000${topic.id}\u0000${topic.partitions.size}`);
  }
  if (parts.length === 0) return 0;
  const text = parts.join('\u0001');
  let low = 0x811c9dc5;
  let high = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    low = Math.imul(low ^ c, 0x01000193) >>> 0;
    high = Math.imul(high ^ c, 0x01000193) >>> 0;
  }
  return (high & 0x1fffff) * 0x1_0000_0000 + low;
}

export function memberMetadataRecord(groupId: string, member: ConsumerGroupMember): GroupRecord {
  return groupRecord('ConsumerGroupMemberMetadata', { groupId, memberId: member.memberId }, {
    instanceId: member.instanceId,
    rackId: member.rackId,
    clientId: member.clientId,
    clientHost: member.clientHost,
    subscribedTopicNames: [...member.subscribedTopicNames],
    subscribedTopicRegex: member.subscribedTopicRegex,
    rebalanceTimeoutMs: member.rebalanceTimeoutMs,
    serverAssignor: member.serverAssignorName,
    classicMemberMetadata: member.classicMemberMetadata,
  });
}

export function currentAssignmentRecord(groupId: string, member: ConsumerGroupMember): GroupRecord {
  return groupRecord('ConsumerGroupCurrentMemberAssignment', { groupId, memberId: member.memberId }, {
    memberEpoch: member.memberEpoch,
    previousMemberEpoch: member.previousMemberEpoch,
    state: member.state,
    assignedPartitions: withAssignmentEpochs(member, member.assignedPartitions),
    partitionsPendingRevocation: withAssignmentEpochs(member, member.partitionsPendingRevocation),
  });
}

/** Record form of `assignment`, each partition with the epoch it was assigned at (KIP-1251's tagged AssignmentEpochs). */
function withAssignmentEpochs(member: ConsumerGroupMember, assignment: Assignment): { topicId: string; partitions: number[]; assignmentEpochs: number[] }[] {
  return assignmentToList(assignment).map(({ topicId, partitions }) => ({
    topicId,
    partitions,
    assignmentEpochs: partitions.map((p) => {
      const epoch = partitionAssignmentEpoch(member, topicId, p);
      if (epoch === undefined) throw new Error(`member ${member.memberId} holds ${topicId}-${p} without an assignment epoch`);
      return epoch;
    }),
  }));
}

export function targetAssignmentRecord(groupId: string, memberId: string, assignment: Assignment): GroupRecord {
  return groupRecord('ConsumerGroupTargetAssignmentMember', { groupId, memberId }, { topicPartitions: assignmentToList(assignment) });
}

/** The three tombstones that remove a member, in the order replay expects. */
export function memberRemovalRecords(groupId: string, memberId: string): GroupRecord[] {
  return [
    groupRecord('ConsumerGroupCurrentMemberAssignment', { groupId, memberId }, null),
    groupRecord('ConsumerGroupTargetAssignmentMember', { groupId, memberId }, null),
    groupRecord('ConsumerGroupMemberMetadata', { groupId, memberId }, null),
  ];
}

export { assignmentFromList };
