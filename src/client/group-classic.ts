/**
 * Membership in a classic group (group.protocol=classic): JoinGroup /
 * SyncGroup / Heartbeat / LeaveGroup with protocol type "consumer" and the
 * ConsumerProtocol subscription and assignment inside.
 *
 * A rebalance, run from poll():
 * 1. prepare: with auto-commit, commit the positions of owned partitions;
 *    eager protocol: revoke them all (onPartitionsRevoked); partitions of a
 *    lost generation go through onPartitionsLost instead, uncommitted;
 * 2. JoinGroup with one protocol per configured assignor, each carrying the
 *    topics, owned partitions and generation (the first join answers
 *    MEMBER_ID_REQUIRED with a member id, KIP-394; join again with it);
 * 3. the leader runs the chosen assignor over every member's subscription
 *    and SyncGroup hands out the result; the others send an empty SyncGroup;
 * 4. eager: assign what came back. Cooperative (KIP-429, every configured
 *    assignor supports it): revoke owned partitions no longer assigned,
 *    assign the new ones, and if anything was revoked rejoin at once so the
 *    revoked partitions can go to their new owners.
 * Heartbeats go every heartbeat.interval.ms while stable; REBALANCE_IN_PROGRESS
 * asks for a rejoin, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID lose the
 * partitions and rejoin (the latter with a new member id),
 * FENCED_INSTANCE_ID is fatal. A consumer that does not poll within
 * max.poll.interval.ms leaves the group from the heartbeat timer and
 * rejoins on its next poll(). close() commits, revokes and sends LeaveGroup
 * (static members, with group.instance.id, do not leave: KIP-345).
 */
import type { TimerHandle } from '../io/env.js';
import { ErrorCode } from '../protocol/errors.js';
import { Heartbeat } from '../protocol/schemas/12-heartbeat.js';
import { JoinGroup } from '../protocol/schemas/11-join-group.js';
import { LeaveGroup } from '../protocol/schemas/13-leave-group.js';
import { SyncGroup } from '../protocol/schemas/14-sync-group.js';
import type { ResponseOf } from '../protocol/schema.js';
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../protocol/consumer-protocol.js';
import type { TopicPartition } from './cluster.js';
import { KafkaError } from './errors.js';
import type { MemberSubscription, PartitionAssignor, RebalanceProtocol } from './group-assignors.js';
import { isCoordinatorMoved, type CommitIdentity, type GroupCoordinator } from './group-coordinator.js';
import { groupByTopic } from '../protocol/topic-partition.js';
import { invokeListener, minus, Signal, untilDeadline, type GroupSettings, type Membership, type MembershipHost } from './group-membership.js';

/** JoinGroup and SyncGroup errors after which the member just joins again (after a backoff). */
const REJOIN_AFTER_BACKOFF = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REBALANCE_IN_PROGRESS]);

type JoinResponse = ResponseOf<typeof JoinGroup>;

export class ClassicMembership implements Membership {
  memberId = '';
  generationId = -1;
  readonly changed: Signal;
  private readonly protocol: RebalanceProtocol;
  private rejoinNeeded = true;
  private partitionsLost = false;
  private stable = false;
  private joining: Promise<void> | null = null;
  private fatal: KafkaError | null = null;
  private heartbeatTimer: TimerHandle | null = null;
  private closed = false;
  /** Set while leave() runs: an ongoing rebalance finishes its round but starts no other. */
  private leaving = false;
  private joinedTopics: string[] = [];
  /** The generation the cooperative-sticky assignor reports in its UserData (its last assignment's). */
  private assignorGeneration = -1;

  constructor(
    private readonly host: MembershipHost,
    private readonly coordinator: GroupCoordinator,
    private readonly settings: GroupSettings,
  ) {
    this.changed = new Signal(host.cluster.env);
    // Kafka's consumer runs the newest protocol every configured assignor supports.
    this.protocol = settings.assignors.every((a) => a.supportedProtocols.includes('COOPERATIVE')) ? 'COOPERATIVE' : 'EAGER';
  }

  get active(): boolean {
    return this.stable && this.generationId >= 0;
  }

  identity(): CommitIdentity {
    return { generationIdOrMemberEpoch: this.generationId, memberId: this.memberId, groupInstanceId: this.settings.groupInstanceId };
  }

  async poll(deadlineMs: number): Promise<void> {
    if (this.fatal !== null) throw this.fatal;
    if (this.stable && !this.rejoinNeeded) await this.checkSubscription();
    if (this.rejoinNeeded && this.joining === null && !this.leaving) {
      this.joining = this.joinUntilStable().finally(() => { this.joining = null; });
    }
    if (this.joining !== null) await untilDeadline(this.host.cluster.env, this.joining, deadlineMs);
    if (this.fatal !== null) throw this.fatal;
  }

  /** A pattern that now matches other topics, or a subscription changed by subscribe(), needs a rejoin. */
  private async checkSubscription(): Promise<void> {
    const topics = await this.host.subscribedTopics();
    if (topics.join('\u0000') !== this.joinedTopics.join('\u0000')) this.requestRejoin();
  }

  requestRejoin(): void {
    this.rejoinNeeded = true;
    this.changed.notify();
  }

  private async joinUntilStable(): Promise<void> {
    try {
      while (this.rejoinNeeded && !this.closed && !this.leaving) {
        await this.prepareJoin();
        const joined = await this.joinGroup();
        if (joined === null) continue;
        const assignment = await this.syncGroup(joined);
        if (assignment === null) continue;
        await this.completeJoin(joined, assignment);
      }
    } catch (error) {
      this.fatal = error instanceof KafkaError ? error : new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, (error as Error).message);
    }
  }

  private async prepareJoin(): Promise<void> {
    const owned = this.host.owned();
    this.stopHeartbeats();
    if (this.partitionsLost) {
      this.partitionsLost = false;
      if (owned.length > 0) {
        this.host.removePartitions(owned);
        await invokeListener(this.host.listener, 'lost', owned, this.host);
      }
    } else if (owned.length > 0 && this.generationId >= 0) {
      await this.host.commitBeforeRevocation(owned, this.identity());
      if (this.protocol === 'EAGER') {
        this.host.removePartitions(owned);
        await invokeListener(this.host.listener, 'revoked', owned, this.host);
      }
    }
    this.stable = false;
  }

  private subscriptionMetadata(assignor: PartitionAssignor, topics: readonly string[]): Buffer {
    return encodeSubscription({
      topics: [...topics],
      userData: assignor.subscriptionUserData(this.assignorGeneration),
      ownedPartitions: groupByTopic(this.host.owned()),
      generationId: this.generationId,
      rackId: null,
    });
  }

  /** One JoinGroup; null when the member should simply try again. */
  private async joinGroup(): Promise<JoinResponse | null> {
    const topics = await this.host.subscribedTopics({ refresh: true });
    this.joinedTopics = topics;
    let response: JoinResponse;
    try {
      ({ response } = await this.coordinator.send(JoinGroup, {
        groupId: this.settings.groupId,
        sessionTimeoutMs: this.settings.sessionTimeoutMs,
        rebalanceTimeoutMs: this.settings.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupInstanceId: this.settings.groupInstanceId,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocols: this.settings.assignors.map((assignor) => ({ name: assignor.name, metadata: this.subscriptionMetadata(assignor, topics) })),
        reason: this.generationId < 0 ? 'joining the group' : 'rebalance requested',
      }));
    } catch (error) {
      return this.retryAfter(error);
    }
    return this.onJoinResponse(response);
  }

  private async onJoinResponse(response: JoinResponse): Promise<JoinResponse | null> {
    switch (response.errorCode) {
      case ErrorCode.NONE:
        return response;
      case ErrorCode.MEMBER_ID_REQUIRED:
        this.memberId = response.memberId;
        return null;
      case ErrorCode.UNKNOWN_MEMBER_ID:
        this.resetGeneration({ memberId: true });
        return null;
      case ErrorCode.ILLEGAL_GENERATION:
        this.resetGeneration({ memberId: false });
        return null;
      default:
        if (REJOIN_AFTER_BACKOFF.has(response.errorCode) || isCoordinatorMoved(response.errorCode)) {
          return this.retryAfter(new KafkaError(response.errorCode, 'JoinGroup'));
        }
        throw new KafkaError(response.errorCode, `JoinGroup for group ${this.settings.groupId}`);
    }
  }

  /** Backs off after a retriable failure; rethrows anything else. */
  private async retryAfter(error: unknown): Promise<null> {
    if (!(error instanceof KafkaError)) throw error;
    if (isCoordinatorMoved(error.code)) this.coordinator.markUnknown();
    else if (!error.retriable && !REJOIN_AFTER_BACKOFF.has(error.code)) throw error;
    await this.host.cluster.sleep(this.host.cluster.retryBackoffMs);
    return null;
  }

  private resetGeneration(options: { memberId: boolean }): void {
    if (options.memberId) this.memberId = '';
    this.generationId = -1;
    this.partitionsLost = true;
    this.rejoinNeeded = true;
    this.stable = false;
  }

  /** SyncGroup (the leader's carries everyone's assignment); the member's assignment bytes, or null to rejoin. */
  private async syncGroup(joined: JoinResponse): Promise<Buffer | null> {
    const isLeader = joined.leader === joined.memberId;
    const assignments = isLeader ? await this.performAssignment(joined) : [];
    let response: ResponseOf<typeof SyncGroup>;
    try {
      ({ response } = await this.coordinator.send(SyncGroup, {
        groupId: this.settings.groupId,
        generationId: joined.generationId,
        memberId: joined.memberId,
        groupInstanceId: this.settings.groupInstanceId,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocolName: joined.protocolName,
        assignments,
      }));
    } catch (error) {
      return this.retryAfter(error);
    }
    if (response.errorCode === ErrorCode.NONE) return response.assignment;
    if (response.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) this.resetGeneration({ memberId: true });
    else if (response.errorCode === ErrorCode.ILLEGAL_GENERATION) this.resetGeneration({ memberId: false });
    else if (response.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) return null;
    else if (isCoordinatorMoved(response.errorCode) || response.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) return this.retryAfter(new KafkaError(response.errorCode, 'SyncGroup'));
    else throw new KafkaError(response.errorCode, `SyncGroup for group ${this.settings.groupId}`);
    return null;
  }

  /** The leader's work: the chosen assignor over every member's subscription, with metadata for all their topics. */
  private async performAssignment(joined: JoinResponse): Promise<{ memberId: string; assignment: Buffer }[]> {
    const assignor = this.settings.assignors.find((a) => a.name === joined.protocolName);
    if (assignor === undefined) throw new KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `the coordinator chose assignor ${joined.protocolName}, which this consumer does not have`);
    const subscriptions: MemberSubscription[] = joined.members.map((member) => {
      const decoded = decodeSubscription(member.metadata);
      if (decoded === null) throw new KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `member ${member.memberId} sent a subscription that does not decode`);
      return {
        memberId: member.memberId,
        groupInstanceId: member.groupInstanceId,
        topics: decoded.topics,
        userData: decoded.userData,
        ownedPartitions: decoded.ownedPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
        generationId: decoded.generationId,
        rackId: decoded.rackId,
      };
    });
    const partitionsPerTopic = await this.partitionCounts([...new Set(subscriptions.flatMap((s) => s.topics))]);
    const assignment = assignor.assign(partitionsPerTopic, subscriptions);
    return subscriptions.map((s) => ({
      memberId: s.memberId,
      assignment: encodeAssignment({ assignedPartitions: groupByTopic(assignment.get(s.memberId) ?? []), userData: null }),
    }));
  }

  /** Partition counts of the topics that exist (others are left out of the assignment, as Kafka does). */
  private async partitionCounts(topics: readonly string[]): Promise<Map<string, number>> {
    const cluster = this.host.cluster;
    if (topics.length > 0) await cluster.retry(() => cluster.refreshMetadata(topics));
    const counts = new Map<string, number>();
    for (const topic of topics) {
      const info = cluster.topics.get(topic);
      if (info !== undefined && info.errorCode === ErrorCode.NONE && info.partitions.length > 0) counts.set(topic, info.partitions.length);
    }
    return counts;
  }

  private async completeJoin(joined: JoinResponse, assignmentBytes: Buffer): Promise<void> {
    this.generationId = joined.generationId;
    this.memberId = joined.memberId;
    this.assignorGeneration = joined.generationId;
    this.stable = true;
    this.rejoinNeeded = false;
    const decoded = assignmentBytes.length === 0 ? { assignedPartitions: [] } : decodeAssignment(assignmentBytes);
    if (decoded === null) throw new KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, 'the assignment from SyncGroup does not decode');
    const assigned: TopicPartition[] = decoded.assignedPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
    const owned = this.host.owned();
    const revoked = minus(owned, assigned);
    const added = minus(assigned, owned);
    if (revoked.length > 0) {
      await this.host.commitBeforeRevocation(revoked, this.identity());
      this.host.removePartitions(revoked);
      await invokeListener(this.host.listener, 'revoked', revoked, this.host);
      // KIP-429: rejoin so the partitions given up here reach their new owner.
      this.rejoinNeeded = true;
    }
    this.host.addPartitions(added);
    await invokeListener(this.host.listener, 'assigned', added, this.host);
    this.startHeartbeats();
    this.changed.notify();
  }

  private startHeartbeats(): void {
    this.stopHeartbeats();
    this.heartbeatTimer = this.host.cluster.env.timers.schedule(this.settings.heartbeatIntervalMs, () => void this.heartbeat());
  }

  private stopHeartbeats(): void {
    this.heartbeatTimer?.cancel();
    this.heartbeatTimer = null;
  }

  private async heartbeat(): Promise<void> {
    this.heartbeatTimer = null;
    if (!this.stable || this.closed || this.leaving) return;
    const env = this.host.cluster.env;
    if (env.clock.monotonicMs() - this.host.lastPollMs() > this.settings.rebalanceTimeoutMs) {
      this.host.log(`consumer poll timeout has expired: poll() was not called within max.poll.interval.ms (${this.settings.rebalanceTimeoutMs} ms); leaving the group`);
      await this.sendLeaveGroup('consumer poll timeout has expired');
      this.resetGeneration({ memberId: true });
      return;
    }
    const generationId = this.generationId;
    let errorCode: number;
    try {
      const { response } = await this.coordinator.send(Heartbeat, {
        groupId: this.settings.groupId,
        generationId,
        memberId: this.memberId,
        groupInstanceId: this.settings.groupInstanceId,
      });
      errorCode = response.errorCode;
    } catch (error) {
      errorCode = error instanceof KafkaError ? error.code : ErrorCode.NETWORK_EXCEPTION;
    }
    if (generationId !== this.generationId || !this.stable) return;
    this.onHeartbeatError(errorCode);
    // A heartbeat that was in flight when leave() began must not restart the timer: nothing follows LeaveGroup.
    if (this.stable && !this.closed && !this.leaving && this.heartbeatTimer === null) this.startHeartbeats();
  }

  private onHeartbeatError(errorCode: number): void {
    switch (errorCode) {
      case ErrorCode.NONE:
        return;
      case ErrorCode.REBALANCE_IN_PROGRESS:
        this.requestRejoin();
        return;
      case ErrorCode.ILLEGAL_GENERATION:
        this.resetGeneration({ memberId: false });
        this.changed.notify();
        return;
      case ErrorCode.UNKNOWN_MEMBER_ID:
        this.resetGeneration({ memberId: true });
        this.changed.notify();
        return;
      case ErrorCode.FENCED_INSTANCE_ID:
        this.fatal = new KafkaError(errorCode, `group.instance.id ${this.settings.groupInstanceId} was fenced by another member`);
        this.stable = false;
        this.changed.notify();
        return;
      default:
        if (isCoordinatorMoved(errorCode)) this.coordinator.markUnknown();
        else this.host.log(`heartbeat failed: ${new KafkaError(errorCode).message}`);
    }
  }

  async leave(reason: string): Promise<void> {
    this.leaving = true;
    try {
      await this.leaveGroup(reason);
    } finally {
      this.leaving = false;
    }
  }

  private async leaveGroup(reason: string): Promise<void> {
    await this.joining;
    this.stopHeartbeats();
    const owned = this.host.owned();
    if (owned.length > 0) {
      const valid = this.generationId >= 0 && !this.partitionsLost;
      if (valid) await this.host.commitBeforeRevocation(owned, this.identity());
      this.host.removePartitions(owned);
      await invokeListener(this.host.listener, valid ? 'revoked' : 'lost', owned, this.host);
    }
    // KIP-345: a static member keeps its place over restarts and never sends LeaveGroup on close.
    if (this.settings.groupInstanceId === null && this.memberId !== '') await this.sendLeaveGroup(reason);
    this.memberId = '';
    this.generationId = -1;
    this.stable = false;
    this.rejoinNeeded = true;
    this.partitionsLost = false;
  }

  private async sendLeaveGroup(reason: string): Promise<void> {
    try {
      const { response } = await this.coordinator.send(LeaveGroup, {
        groupId: this.settings.groupId,
        memberId: this.memberId,
        members: [{ memberId: this.memberId, groupInstanceId: this.settings.groupInstanceId, reason }],
      });
      if (response.errorCode !== ErrorCode.NONE) this.host.log(`LeaveGroup: ${new KafkaError(response.errorCode).message}`);
    } catch (error) {
      this.host.log(`LeaveGroup failed: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopHeartbeats();
    this.changed.notify();
  }
}
