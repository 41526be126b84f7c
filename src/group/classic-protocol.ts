/**
 * The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup
 * and the timers that drive rebalances, with Kafka's exact rules.
 *
 * A rebalance: members join (a new dynamic member first gets a member id
 * with MEMBER_ID_REQUIRED, KIP-394); the join phase ends when every known
 * member has rejoined, or at the rebalance timeout (the largest among the
 * members), or for a new group after group.initial.rebalance.delay.ms,
 * extended while members keep arriving, within the rebalance timeout;
 * members that did not rejoin are dropped. The generation then moves on,
 * a protocol every member supports is chosen by vote, and every member gets
 * its JoinGroup response (the leader with everyone's metadata). The leader's
 * SyncGroup carries the assignment, which is stored (a GroupMetadataValue
 * record) before anyone gets it. Session timeouts remove silent members;
 * static members (group.instance.id, KIP-345) keep their place across
 * restarts, and a new member id for a known instance fences the old one.
 *
 * These operations change the classic group in memory and write
 * GroupMetadataValue snapshots without replaying them (see operation.ts).
 */
import { ErrorCode } from '../protocol/errors.js';
import {
  ClassicGroup,
  ClassicGroupMember,
  EMPTY_ASSIGNMENT,
  UNKNOWN_MEMBER_ID,
  joinGroupError,
  syncGroupError,
  type JoinGroupProtocol,
  type JoinGroupResponseData,
  type SyncGroupResponseData,
} from './classic-group.js';
import { GroupApiError } from './errors.js';
import { appliedResult, coordinatorResult, EMPTY_RESULT, type CoordinatorResult } from './operation.js';
import type { GroupCoordinatorShard } from './shard.js';

export interface ClassicRequestContext {
  clientId: string;
  clientHost: string;
  apiVersion: number;
}

export interface JoinGroupInput {
  groupId: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string;
  protocols: readonly JoinGroupProtocol[];
  reason: string | null;
}

export interface SyncGroupInput {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: readonly { memberId: string; assignment: Buffer }[];
}

export interface LeaveGroupMemberInput {
  memberId: string;
  groupInstanceId: string | null;
  reason: string | null;
}

export interface LeaveGroupMemberResult {
  memberId: string;
  groupInstanceId: string | null;
  errorCode: number;
}

type Respond<T> = (response: T) => void;

export const heartbeatKey = (groupId: string, memberId: string) => `heartbeat-${groupId}-${memberId}`;
export const joinKey = (groupId: string) => `join-${groupId}`;
export const syncKey = (groupId: string) => `sync-${groupId}`;

/** JoinGroup v4+ hands out member ids before accepting a dynamic member (KIP-394). */
const requiresKnownMemberId = (apiVersion: number) => apiVersion >= 4;
/** JoinGroup v9+ lets a replaced static leader skip the assignment (KIP-814). */
const supportsSkippingAssignment = (apiVersion: number) => apiVersion >= 9;

export class ClassicGroupProtocol {
  constructor(private readonly shard: GroupCoordinatorShard) {}

  private get timer() {
    return this.shard.timer;
  }

  private get config() {
    return this.shard.config;
  }

  private nowMs(): number {
    return this.shard.nowMs();
  }

  // ---- JoinGroup

  join(context: ClassicRequestContext, request: JoinGroupInput, respond: Respond<JoinGroupResponseData>): CoordinatorResult<void> {
    const existing = this.shard.groups.get(request.groupId);
    if (existing?.type === 'share') {
      // A share group's id cannot be taken by a classic member (Kafka's classicGroupJoin).
      respond(joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return EMPTY_RESULT;
    }
    if (existing !== undefined && existing.type === 'consumer' && !existing.isEmpty) {
      // Classic members inside a consumer group (KIP-848 online migration) are not served.
      respond(joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return EMPTY_RESULT;
    }
    const records = existing !== undefined && existing.type === 'consumer' ? this.shard.deleteEmptyConsumerGroup(existing) : [];
    const isUnknownMember = request.memberId === UNKNOWN_MEMBER_ID;
    const isNewGroup = !this.shard.groups.has(request.groupId);
    const group = this.shard.classicGroupOrNull(request.groupId, isUnknownMember);
    if (group === null) {
      respond(joinGroupError(request.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
      return appliedResult(records, undefined);
    }
    let result: CoordinatorResult<void> = EMPTY_RESULT;
    if (!this.acceptJoiningMember(group, request.memberId)) {
      group.remove(request.memberId);
      respond(joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED));
    } else if (isUnknownMember) {
      result = this.joinNewMember(context, request, group, respond);
    } else {
      result = this.joinExistingMember(context, request, group, respond);
    }
    if (isNewGroup && result === EMPTY_RESULT) {
      // Commit the new group to the log so that it exists after a reload too.
      return appliedResult([...records, group.emptyMetadataRecord()], undefined, (errorCode) => {
        if (errorCode !== ErrorCode.NONE) respond(joinGroupError(UNKNOWN_MEMBER_ID, errorCode));
      });
    }
    return records.length === 0 ? result : { ...result, records: [...records, ...result.records] };
  }

  private joinNewMember(context: ClassicRequestContext, request: JoinGroupInput, group: ClassicGroup, respond: Respond<JoinGroupResponseData>): CoordinatorResult<void> {
    if (group.isInState('Dead')) {
      respond(joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return EMPTY_RESULT;
    }
    if (!group.supportsProtocols(request.protocolType, request.protocols)) {
      respond(joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return EMPTY_RESULT;
    }
    const newMemberId = `${request.groupInstanceId ?? context.clientId}-${this.shard.randomUuidText()}`;
    if (request.groupInstanceId !== null) {
      const existingMemberId = group.staticMemberId(request.groupInstanceId);
      if (existingMemberId !== null) return this.updateStaticMember(context, request, group, existingMemberId, newMemberId, respond);
      return this.addMemberThenRebalanceOrCompleteJoin(context, request, group, newMemberId, respond);
    }
    if (requiresKnownMemberId(context.apiVersion)) {
      group.addPendingMember(newMemberId);
      this.timer.schedule(heartbeatKey(group.groupId, newMemberId), request.sessionTimeoutMs, () => this.expireMemberHeartbeat(group.groupId, newMemberId));
      respond(joinGroupError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
      return EMPTY_RESULT;
    }
    return this.addMemberThenRebalanceOrCompleteJoin(context, request, group, newMemberId, respond);
  }

  private joinExistingMember(context: ClassicRequestContext, request: JoinGroupInput, group: ClassicGroup, respond: Respond<JoinGroupResponseData>): CoordinatorResult<void> {
    const memberId = request.memberId;
    if (group.isInState('Dead')) {
      respond(joinGroupError(memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return EMPTY_RESULT;
    }
    if (!group.supportsProtocols(request.protocolType, request.protocols)) {
      respond(joinGroupError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return EMPTY_RESULT;
    }
    if (group.isPendingMember(memberId)) {
      if (request.groupInstanceId !== null) throw new Error(`pending member ${memberId} joined with instance id ${request.groupInstanceId}`);
      return this.addMemberThenRebalanceOrCompleteJoin(context, request, group, memberId, respond);
    }
    const error = group.validateMember(memberId, request.groupInstanceId);
    if (error !== ErrorCode.NONE) {
      respond(joinGroupError(memberId, error, { nullProtocolName: true }));
      return EMPTY_RESULT;
    }
    const member = group.member(memberId);
    switch (group.state) {
      case 'PreparingRebalance':
        return this.updateMemberThenRebalanceOrCompleteJoin(request, group, member, respond);
      case 'CompletingRebalance':
        if (member.matches(request.protocols)) {
          // The member lost its JoinGroup response: give it the current generation again.
          respond(this.joinResponse(group, memberId, group.isLeader(memberId)));
          return EMPTY_RESULT;
        }
        return this.updateMemberThenRebalanceOrCompleteJoin(request, group, member, respond);
      case 'Stable':
        // A leader's rejoin forces a rebalance (it may have seen metadata change); so do new protocols.
        if (group.isLeader(memberId) || !member.matches(request.protocols)) {
          return this.updateMemberThenRebalanceOrCompleteJoin(request, group, member, respond);
        }
        respond(this.joinResponse(group, memberId, false));
        return EMPTY_RESULT;
      default:
        respond(joinGroupError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        return EMPTY_RESULT;
    }
  }

  private joinResponse(group: ClassicGroup, memberId: string, withMembers: boolean, skipAssignment = false): JoinGroupResponseData {
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? '',
      skipAssignment,
      memberId,
      members: withMembers ? group.currentMembersForLeader() : [],
    };
  }

  /** Whether the group can take this member (group.max.size). */
  private acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    const maxSize = this.config.classicGroupMaxSize;
    switch (group.state) {
      case 'Empty':
      case 'Dead':
        return true;
      case 'PreparingRebalance':
        // Counting members awaiting a join keeps the last rejoiners out when the group is over the limit.
        return (group.hasMember(memberId) && group.member(memberId).isAwaitingJoin) || group.numAwaitingJoinResponse < maxSize;
      default:
        return group.hasMember(memberId) || group.numMembers < maxSize;
    }
  }

  private addMemberThenRebalanceOrCompleteJoin(
    context: ClassicRequestContext,
    request: JoinGroupInput,
    group: ClassicGroup,
    memberId: string,
    respond: Respond<JoinGroupResponseData>,
  ): CoordinatorResult<void> {
    const member = new ClassicGroupMember(
      memberId,
      request.groupInstanceId,
      context.clientId,
      context.clientHost,
      request.rebalanceTimeoutMs,
      request.sessionTimeoutMs,
      request.protocolType,
      request.protocols,
    );
    member.isNew = true;
    if (group.isInState('PreparingRebalance') && group.previousState === 'Empty') group.newMemberAdded = true;
    group.add(member, respond);
    // A parked JoinGroup of a new member cannot heartbeat; bound its wait so abandoned joins do not pile up.
    this.rescheduleHeartbeat(group, member, this.config.classicGroupNewMemberJoinTimeoutMs);
    return this.maybePrepareRebalanceOrCompleteJoin(group);
  }

  private updateMemberThenRebalanceOrCompleteJoin(
    request: JoinGroupInput,
    group: ClassicGroup,
    member: ClassicGroupMember,
    respond: Respond<JoinGroupResponseData>,
  ): CoordinatorResult<void> {
    group.updateMember(member, { protocols: request.protocols, rebalanceTimeoutMs: request.rebalanceTimeoutMs, sessionTimeoutMs: request.sessionTimeoutMs }, respond);
    return this.maybePrepareRebalanceOrCompleteJoin(group);
  }

  /** A known static member rejoins with a new member id: the new id replaces the old one. */
  private updateStaticMember(
    context: ClassicRequestContext,
    request: JoinGroupInput,
    group: ClassicGroup,
    oldMemberId: string,
    newMemberId: string,
    respond: Respond<JoinGroupResponseData>,
  ): CoordinatorResult<void> {
    const currentLeader = group.leaderId;
    const member = group.replaceStaticMember(request.groupInstanceId!, oldMemberId, newMemberId);
    this.rescheduleHeartbeat(group, member);
    const previous = { protocols: member.supportedProtocols, rebalanceTimeoutMs: member.rebalanceTimeoutMs, sessionTimeoutMs: member.sessionTimeoutMs };
    group.updateMember(member, { protocols: request.protocols, rebalanceTimeoutMs: request.rebalanceTimeoutMs, sessionTimeoutMs: request.sessionTimeoutMs }, respond);

    if (group.isInState('Stable')) {
      if (group.protocolName !== group.selectProtocol()) return this.maybePrepareRebalanceOrCompleteJoin(group);
      // Same protocol: persist the new member id and hand back the current assignment without a rebalance.
      const record = group.metadataRecord(group.groupAssignment());
      return appliedResult([record], undefined, (errorCode) => {
        if (errorCode !== ErrorCode.NONE) {
          group.updateMember(member, previous, null);
          const restored = group.replaceStaticMember(request.groupInstanceId!, newMemberId, oldMemberId);
          this.rescheduleHeartbeat(group, restored);
          respond({ ...joinGroupError(UNKNOWN_MEMBER_ID, errorCode), generationId: group.generationId, protocolType: group.protocolType, protocolName: group.protocolName, leader: currentLeader ?? '' });
          return;
        }
        if (supportsSkippingAssignment(context.apiVersion)) {
          const isLeader = group.isLeader(newMemberId);
          group.completeJoin(member, { ...this.joinResponse(group, newMemberId, isLeader), skipAssignment: isLeader });
        } else {
          group.completeJoin(member, { ...this.joinResponse(group, newMemberId, false), leader: currentLeader ?? '' });
        }
      });
    }
    if (group.isInState('CompletingRebalance')) {
      // The leader may already hold the old member id in its assignment: start over.
      return this.prepareRebalance(group);
    }
    if (group.isInState('Empty') || group.isInState('Dead')) throw new Error(`static member rejoined group ${group.groupId} in state ${group.state}`);
    return this.maybeCompleteJoinPhase(group);
  }

  private maybePrepareRebalanceOrCompleteJoin(group: ClassicGroup): CoordinatorResult<void> {
    return group.canRebalance() ? this.prepareRebalance(group) : this.maybeCompleteJoinPhase(group);
  }

  private maybeCompleteJoinPhase(group: ClassicGroup): CoordinatorResult<void> {
    if (!group.isInState('PreparingRebalance')) return EMPTY_RESULT;
    // The initial rebalance of a new group waits for its delay to pass.
    if (group.previousState === 'Empty') return EMPTY_RESULT;
    if (!group.hasAllMembersJoined()) return EMPTY_RESULT;
    return this.completeJoin(group);
  }

  prepareRebalance(group: ClassicGroup): CoordinatorResult<void> {
    if (group.isInState('CompletingRebalance')) {
      for (const member of group.members.values()) member.assignment = EMPTY_ASSIGNMENT;
      this.propagateAssignment(group, ErrorCode.REBALANCE_IN_PROGRESS);
    }
    this.removeSyncExpiration(group);
    const isInitialRebalance = group.isInState('Empty');
    if (isInitialRebalance) {
      const delayMs = this.config.classicGroupInitialRebalanceDelayMs;
      const remainingMs = Math.max(group.rebalanceTimeoutMs() - delayMs, 0);
      this.timer.schedule(joinKey(group.groupId), delayMs, () => this.tryCompleteInitialRebalanceElseSchedule(group.groupId, delayMs, remainingMs));
    }
    group.transitionTo('PreparingRebalance', this.nowMs());
    return isInitialRebalance ? EMPTY_RESULT : this.maybeCompleteJoinElseSchedule(group);
  }

  private maybeCompleteJoinElseSchedule(group: ClassicGroup): CoordinatorResult<void> {
    if (group.hasAllMembersJoined()) return this.completeJoin(group);
    this.timer.schedule(joinKey(group.groupId), group.rebalanceTimeoutMs(), () => this.completeJoinById(group.groupId));
    return EMPTY_RESULT;
  }

  private tryCompleteInitialRebalanceElseSchedule(groupId: string, delayMs: number, remainingMs: number): CoordinatorResult<void> {
    const group = this.shard.classicGroupOrNull(groupId, false);
    if (group === null) return EMPTY_RESULT;
    if (group.newMemberAdded && remainingMs !== 0) {
      // Members keep arriving: wait another delay, within what the rebalance timeout leaves.
      group.newMemberAdded = false;
      const nextDelayMs = Math.min(this.config.classicGroupInitialRebalanceDelayMs, remainingMs);
      const nextRemainingMs = Math.max(remainingMs - delayMs, 0);
      this.timer.schedule(joinKey(groupId), nextDelayMs, () => this.tryCompleteInitialRebalanceElseSchedule(groupId, nextDelayMs, nextRemainingMs));
      return EMPTY_RESULT;
    }
    return this.completeJoin(group);
  }

  private completeJoinById(groupId: string): CoordinatorResult<void> {
    const group = this.shard.classicGroupOrNull(groupId, false);
    return group === null ? EMPTY_RESULT : this.completeJoin(group);
  }

  /** Ends the join phase: drops dynamic members that did not rejoin and starts the next generation. */
  private completeJoin(group: ClassicGroup): CoordinatorResult<void> {
    this.timer.cancel(joinKey(group.groupId));
    for (const member of group.notYetRejoinedMembers()) {
      if (member.isStaticMember) continue;
      group.remove(member.memberId);
      this.timer.cancel(heartbeatKey(group.groupId, member.memberId));
    }
    if (group.isInState('Dead')) return EMPTY_RESULT;
    if (!group.maybeElectNewJoinedLeader() && group.numMembers > 0) {
      // Only static members that have not rejoined remain: wait for them or for their sessions to end.
      this.timer.schedule(joinKey(group.groupId), group.rebalanceTimeoutMs(), () => this.completeJoinById(group.groupId));
      return EMPTY_RESULT;
    }
    group.initNextGeneration(this.nowMs());
    if (group.isInState('Empty')) return appliedResult([group.metadataRecord(new Map())], undefined);
    for (const member of [...group.members.values()]) {
      group.completeJoin(member, this.joinResponse(group, member.memberId, group.isLeader(member.memberId)));
      this.rescheduleHeartbeat(group, member);
      member.isNew = false;
      group.addPendingSyncMember(member.memberId);
    }
    this.schedulePendingSync(group);
    return EMPTY_RESULT;
  }

  private schedulePendingSync(group: ClassicGroup): void {
    const generationId = group.generationId;
    this.timer.schedule(syncKey(group.groupId), group.rebalanceTimeoutMs(), () => this.expirePendingSync(group.groupId, generationId));
  }

  private expirePendingSync(groupId: string, generationId: number): CoordinatorResult<void> {
    const group = this.shard.classicGroupOrNull(groupId, false);
    if (group === null || generationId !== group.generationId) return EMPTY_RESULT;
    if (!(group.isInState('CompletingRebalance') || group.isInState('Stable')) || group.hasReceivedSyncFromAllMembers()) return EMPTY_RESULT;
    for (const memberId of group.allPendingSyncMembers()) {
      group.remove(memberId);
      this.timer.cancel(heartbeatKey(groupId, memberId));
    }
    return this.prepareRebalance(group);
  }

  private removeSyncExpiration(group: ClassicGroup): void {
    group.clearPendingSyncMembers();
    this.timer.cancel(syncKey(group.groupId));
  }

  rescheduleHeartbeat(group: ClassicGroup, member: ClassicGroupMember, timeoutMs = member.sessionTimeoutMs): void {
    const groupId = group.groupId;
    const memberId = member.memberId;
    this.timer.schedule(heartbeatKey(groupId, memberId), timeoutMs, () => this.expireMemberHeartbeat(groupId, memberId));
  }

  private expireMemberHeartbeat(groupId: string, memberId: string): CoordinatorResult<void> {
    const group = this.shard.classicGroupOrNull(groupId, false);
    if (group === null || group.isInState('Dead')) return EMPTY_RESULT;
    if (group.isPendingMember(memberId)) {
      group.remove(memberId);
      if (group.isInState('PreparingRebalance') && group.hasAllMembersJoined()) return this.completeJoin(group);
      return EMPTY_RESULT;
    }
    if (!group.hasMember(memberId)) return EMPTY_RESULT;
    const member = group.member(memberId);
    if (member.hasSatisfiedHeartbeat()) return EMPTY_RESULT;
    return this.removeMemberAndUpdateGroup(group, member);
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, member: ClassicGroupMember): CoordinatorResult<void> {
    // A new member may time out while its JoinGroup is parked: answer it so the client rejoins.
    group.completeJoin(member, joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(member.memberId);
    if (group.isInState('Stable') || group.isInState('CompletingRebalance')) return this.maybePrepareRebalanceOrCompleteJoin(group);
    if (group.isInState('PreparingRebalance') && group.hasAllMembersJoined()) return this.completeJoin(group);
    return EMPTY_RESULT;
  }

  // ---- SyncGroup

  sync(request: SyncGroupInput, respond: Respond<SyncGroupResponseData>): CoordinatorResult<void> {
    const group = this.shard.groups.get(request.groupId);
    if (group === undefined || group.isEmpty || group.type !== 'classic') {
      respond(syncGroupError(ErrorCode.UNKNOWN_MEMBER_ID));
      return EMPTY_RESULT;
    }
    const error = this.validateSync(group, request);
    if (error !== ErrorCode.NONE) {
      respond(syncGroupError(error));
      return EMPTY_RESULT;
    }
    switch (group.state) {
      case 'PreparingRebalance':
        respond(syncGroupError(ErrorCode.REBALANCE_IN_PROGRESS));
        return EMPTY_RESULT;
      case 'CompletingRebalance':
        group.member(request.memberId).awaitingSync = respond;
        this.removePendingSyncMember(group, request.memberId);
        return group.isLeader(request.memberId) ? this.storeLeaderAssignment(group, request) : EMPTY_RESULT;
      case 'Stable': {
        this.removePendingSyncMember(group, request.memberId);
        const member = group.member(request.memberId);
        respond({ errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment });
        return EMPTY_RESULT;
      }
      default:
        throw new Error(`SyncGroup reached group ${group.groupId} in state ${group.state}`);
    }
  }

  private validateSync(group: ClassicGroup, request: SyncGroupInput): number {
    if (group.isInState('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const memberError = group.validateMember(request.memberId, request.groupInstanceId);
    if (memberError !== ErrorCode.NONE) return memberError;
    if (request.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (isProtocolInconsistent(request.protocolType, group.protocolType) || isProtocolInconsistent(request.protocolName, group.protocolName)) {
      return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    }
    return ErrorCode.NONE;
  }

  /** The leader's assignment: written to the log first, then handed to every member waiting on SyncGroup. */
  private storeLeaderAssignment(group: ClassicGroup, request: SyncGroupInput): CoordinatorResult<void> {
    const assignment = new Map<string, Buffer>();
    for (const entry of request.assignments) assignment.set(entry.memberId, entry.assignment);
    for (const memberId of group.members.keys()) if (!assignment.has(memberId)) assignment.set(memberId, EMPTY_ASSIGNMENT);
    const record = group.metadataRecord(assignment);
    return appliedResult([record], undefined, (errorCode) => {
      // Another join may have moved the group on while the record was written.
      if (!group.isInState('CompletingRebalance') || request.generationId !== group.generationId) return;
      if (errorCode !== ErrorCode.NONE) {
        for (const member of group.members.values()) member.assignment = EMPTY_ASSIGNMENT;
        this.propagateAssignment(group, errorCode);
        this.shard.applyTimerResult(this.maybePrepareRebalanceOrCompleteJoin(group));
        return;
      }
      for (const member of group.members.values()) member.assignment = assignment.get(member.memberId) ?? EMPTY_ASSIGNMENT;
      this.propagateAssignment(group, ErrorCode.NONE);
      group.transitionTo('Stable', this.nowMs());
    });
  }

  private propagateAssignment(group: ClassicGroup, errorCode: number): void {
    const ok = errorCode === ErrorCode.NONE;
    for (const member of [...group.members.values()]) {
      const delivered = group.completeSync(member, {
        errorCode,
        protocolType: ok ? group.protocolType : null,
        protocolName: ok ? group.protocolName : null,
        assignment: member.assignment,
      });
      // Sessions paused while waiting on the leader or the write start again now.
      if (delivered) this.rescheduleHeartbeat(group, member);
    }
  }

  private removePendingSyncMember(group: ClassicGroup, memberId: string): void {
    group.removePendingSyncMember(memberId);
    const waiting = group.isInState('CompletingRebalance') || group.isInState('Stable');
    if (!waiting || group.hasReceivedSyncFromAllMembers()) this.timer.cancel(syncKey(group.groupId));
  }

  // ---- Heartbeat

  heartbeat(request: { groupId: string; memberId: string; groupInstanceId: string | null; generationId: number }): CoordinatorResult<number> {
    const group = this.shard.groups.get(request.groupId);
    if (group === undefined || group.type !== 'classic') throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${request.groupId} not found.`);
    if (group.isInState('Dead')) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const memberError = group.validateMember(request.memberId, request.groupInstanceId);
    if (memberError !== ErrorCode.NONE) throw new GroupApiError(memberError);
    if (request.generationId !== group.generationId) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION);
    switch (group.state) {
      case 'Empty':
        return coordinatorResult([], ErrorCode.UNKNOWN_MEMBER_ID);
      case 'PreparingRebalance':
        this.rescheduleHeartbeat(group, group.member(request.memberId));
        return coordinatorResult([], ErrorCode.REBALANCE_IN_PROGRESS);
      default:
        // Heartbeats may arrive between the JoinGroup response and SyncGroup: they count.
        this.rescheduleHeartbeat(group, group.member(request.memberId));
        return coordinatorResult([], ErrorCode.NONE);
    }
  }

  // ---- LeaveGroup

  leave(request: { groupId: string; members: readonly LeaveGroupMemberInput[] }): CoordinatorResult<{ errorCode: number; members: LeaveGroupMemberResult[] }> {
    const group = this.shard.groups.get(request.groupId);
    if (group === undefined || group.type !== 'classic') throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${request.groupId} not found.`);
    if (group.isInState('Dead')) return coordinatorResult([], { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] });
    const results = request.members.map((member) => this.leaveOne(group, member));
    let result: CoordinatorResult<void> = EMPTY_RESULT;
    if (results.some((r) => r.errorCode === ErrorCode.NONE)) {
      if (group.isInState('Stable') || group.isInState('CompletingRebalance')) result = this.maybePrepareRebalanceOrCompleteJoin(group);
      else if (group.isInState('PreparingRebalance')) result = this.maybeCompleteJoinPhase(group);
    }
    return { ...result, response: { errorCode: ErrorCode.NONE, members: results } };
  }

  private leaveOne(group: ClassicGroup, member: LeaveGroupMemberInput): LeaveGroupMemberResult {
    const answer = (errorCode: number) => ({ memberId: member.memberId, groupInstanceId: member.groupInstanceId, errorCode });
    if (member.memberId === UNKNOWN_MEMBER_ID) {
      // Administrative removal by instance id (KIP-345): no member id needed.
      const memberId = member.groupInstanceId === null ? null : group.staticMemberId(member.groupInstanceId);
      if (memberId === null) return answer(ErrorCode.UNKNOWN_MEMBER_ID);
      this.removeCurrentMember(group, memberId);
      return answer(ErrorCode.NONE);
    }
    if (group.isPendingMember(member.memberId)) {
      group.remove(member.memberId);
      this.timer.cancel(heartbeatKey(group.groupId, member.memberId));
      return answer(ErrorCode.NONE);
    }
    const error = group.validateMember(member.memberId, member.groupInstanceId);
    if (error !== ErrorCode.NONE) return answer(error);
    this.removeCurrentMember(group, member.memberId);
    return answer(ErrorCode.NONE);
  }

  private removeCurrentMember(group: ClassicGroup, memberId: string): void {
    const member = group.member(memberId);
    this.timer.cancel(heartbeatKey(group.groupId, memberId));
    group.completeJoin(member, joinGroupError(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(memberId);
  }

  // ---- loading

  /** After a load: every member's session starts now; an over-full group rebalances. */
  onLoaded(group: ClassicGroup): void {
    for (const member of group.members.values()) this.rescheduleHeartbeat(group, member);
    if (group.numMembers > this.config.classicGroupMaxSize) this.shard.applyTimerResult(this.prepareRebalance(group));
  }
}

function isProtocolInconsistent(requested: string | null, current: string | null): boolean {
  return requested !== null && current !== null && requested !== current;
}
