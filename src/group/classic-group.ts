/**
 * A classic group (JoinGroup / SyncGroup protocol): its members and Kafka's
 * state machine.
 *
 *   Empty ─join─> PreparingRebalance ─all joined / timeout─> CompletingRebalance
 *     ^                 ^    |                                    |
 *     |                 |    └─ nobody left ─> Empty              | leader's SyncGroup stored
 *     |                 └──── join, leave, expiry ──── Stable <───┘
 *   any state ─> Dead (group deleted or unloaded)
 *
 * Durable part: generation, protocol type and name, leader, and each
 * member's id, instance id, client, timeouts, metadata for the chosen
 * protocol and assignment. It is written as a GroupMetadataValue record when
 * a group is created, stabilizes (leader's SyncGroup), becomes Empty, or a
 * static member is replaced, and a group is rebuilt from that record when a
 * coordinator loads (Empty without members, Stable with them).
 *
 * Rebalance part: members waiting on JoinGroup or SyncGroup, pending members
 * (KIP-394 member ids handed out but not yet used), pending syncs, the
 * initial-delay flag. As in Kafka it lives only in memory; a coordinator
 * that restarts mid-rebalance loses it and clients simply rejoin. Join and
 * sync responses are delivered through callbacks stored on the member,
 * Kafka's awaiting futures.
 */
import { ErrorCode } from '../protocol/errors.js';
import { CONSUMER_PROTOCOL_TYPE, decodeSubscription } from '../protocol/consumer-protocol.js';
import { groupRecord, type GroupRecord } from './records.js';

export const ClassicGroupState = {
  EMPTY: 'Empty',
  PREPARING_REBALANCE: 'PreparingRebalance',
  COMPLETING_REBALANCE: 'CompletingRebalance',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
export type ClassicGroupStateName = (typeof ClassicGroupState)[keyof typeof ClassicGroupState];

const VALID_PREVIOUS_STATES: { readonly [S in ClassicGroupStateName]: readonly ClassicGroupStateName[] } = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
};

/** Kafka's JoinGroupRequest.UNKNOWN_MEMBER_ID. */
export const UNKNOWN_MEMBER_ID = '';
export const EMPTY_ASSIGNMENT = Buffer.alloc(0);

export interface JoinGroupProtocol {
  name: string;
  metadata: Buffer;
}

export interface JoinGroupResponseData {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  skipAssignment: boolean;
  memberId: string;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

export interface SyncGroupResponseData {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

/** An error JoinGroup response as Kafka builds it: protocol name at its default "" (null when `nullProtocolName`). */
export function joinGroupError(memberId: string, errorCode: number, options: { nullProtocolName?: boolean } = {}): JoinGroupResponseData {
  const protocolName = options.nullProtocolName === true ? null : '';
  return { errorCode, generationId: -1, protocolType: null, protocolName, leader: '', skipAssignment: false, memberId, members: [] };
}

export function syncGroupError(errorCode: number): SyncGroupResponseData {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY_ASSIGNMENT };
}

export class ClassicGroupMember {
  assignment: Buffer = EMPTY_ASSIGNMENT;
  awaitingJoin: ((response: JoinGroupResponseData) => void) | null = null;
  awaitingSync: ((response: SyncGroupResponseData) => void) | null = null;
  /** Set while a brand-new member waits on its first JoinGroup; such a member can expire while waiting. */
  isNew = false;

  constructor(
    readonly memberId: string,
    readonly groupInstanceId: string | null,
    readonly clientId: string,
    readonly clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public supportedProtocols: readonly JoinGroupProtocol[],
  ) {}

  get isAwaitingJoin(): boolean {
    return this.awaitingJoin !== null;
  }

  get isAwaitingSync(): boolean {
    return this.awaitingSync !== null;
  }

  get isStaticMember(): boolean {
    return this.groupInstanceId !== null;
  }

  /** Members waiting on a rebalance satisfy heartbeats; new members do not (they may expire while waiting). */
  hasSatisfiedHeartbeat(): boolean {
    if (this.isNew) return false;
    return this.isAwaitingJoin || this.isAwaitingSync;
  }

  metadata(protocolName: string): Buffer {
    const protocol = this.supportedProtocols.find((p) => p.name === protocolName);
    if (protocol === undefined) throw new Error(`member ${this.memberId} does not support protocol ${protocolName}`);
    return protocol.metadata;
  }

  /** True when `protocols` equals the member's protocols, in order, names and metadata bytes. */
  matches(protocols: readonly JoinGroupProtocol[]): boolean {
    if (protocols.length !== this.supportedProtocols.length) return false;
    return protocols.every((p, i) => p.name === this.supportedProtocols[i]!.name && p.metadata.equals(this.supportedProtocols[i]!.metadata));
  }

  /** The member's first protocol (in its preference order) among the candidates. */
  vote(candidates: ReadonlySet<string>): string {
    const choice = this.supportedProtocols.find((p) => candidates.has(p.name));
    if (choice === undefined) throw new Error(`member ${this.memberId} supports none of the candidate protocols`);
    return choice.name;
  }
}

export class ClassicGroup {
  readonly type = 'classic';
  state: ClassicGroupStateName;
  previousState: ClassicGroupStateName = 'Dead';
  currentStateTimestampMs: number | null;
  protocolType: string | null;
  protocolName: string | null;
  generationId: number;
  leaderId: string | null;
  readonly members = new Map<string, ClassicGroupMember>();
  private readonly staticMembers = new Map<string, string>();
  private readonly pendingJoinMembers = new Set<string>();
  private readonly pendingSyncMembers = new Set<string>();
  private readonly supportedProtocolCounts = new Map<string, number>();
  private awaitingJoinCount = 0;
  /** Set when a member joins during the initial rebalance, so the initial delay is extended. */
  newMemberAdded = false;
  /** Topics the members subscribe to, when known (consumer protocol type and a readable subscription). */
  subscribedTopics: ReadonlySet<string> | null = null;

  constructor(
    readonly groupId: string,
    options: {
      state: ClassicGroupStateName;
      nowMs: number | null;
      generationId?: number;
      protocolType?: string | null;
      protocolName?: string | null;
      leaderId?: string | null;
    },
  ) {
    this.state = options.state;
    this.currentStateTimestampMs = options.nowMs;
    this.generationId = options.generationId ?? 0;
    this.protocolType = options.protocolType ?? null;
    this.protocolName = options.protocolName ?? null;
    this.leaderId = options.leaderId ?? null;
  }

  isInState(state: ClassicGroupStateName): boolean {
    return this.state === state;
  }

  /** A simple group holds the offsets of consumers that commit without group membership (no protocol type). */
  get isSimpleGroup(): boolean {
    return this.protocolType === null;
  }

  get isEmpty(): boolean {
    return this.state === 'Empty';
  }

  get usesConsumerGroupProtocol(): boolean {
    return this.protocolType === CONSUMER_PROTOCOL_TYPE;
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  member(memberId: string): ClassicGroupMember {
    const member = this.members.get(memberId);
    if (member === undefined) throw new Error(`group ${this.groupId} has no member ${memberId}`);
    return member;
  }

  get numMembers(): number {
    return this.members.size;
  }

  get numAwaitingJoinResponse(): number {
    return this.awaitingJoinCount;
  }

  get numPendingJoinMembers(): number {
    return this.pendingJoinMembers.size;
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  add(member: ClassicGroupMember, onJoin: ((response: JoinGroupResponseData) => void) | null = null): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) throw new Error(`static member ${member.groupInstanceId} is already in group ${this.groupId}`);
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.protocolType !== member.protocolType) throw new Error('the group and member protocol types differ');
    if (!this.supportsProtocols(member.protocolType, member.supportedProtocols)) throw new Error("none of the member's protocols is supported");
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    this.countProtocols(member, 1);
    member.awaitingJoin = onJoin;
    if (member.isAwaitingJoin) this.awaitingJoinCount++;
    this.pendingJoinMembers.delete(member.memberId);
  }

  remove(memberId: string): void {
    const removed = this.members.get(memberId);
    if (removed !== undefined) {
      this.members.delete(memberId);
      this.countProtocols(removed, -1);
      if (removed.isAwaitingJoin) this.awaitingJoinCount--;
      if (removed.groupInstanceId !== null) this.staticMembers.delete(removed.groupInstanceId);
    }
    if (this.isLeader(memberId)) {
      const next = this.members.keys().next();
      this.leaderId = next.done === true ? null : next.value;
    }
    this.pendingJoinMembers.delete(memberId);
    this.pendingSyncMembers.delete(memberId);
  }

  /** After a join phase, keeps the leader if it rejoined, else picks a member that did; false when nobody rejoined. */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    const leader = this.member(this.leaderId);
    if (leader.isAwaitingJoin) return true;
    for (const member of this.members.values()) {
      if (member.isAwaitingJoin) {
        this.leaderId = member.memberId;
        return true;
      }
    }
    return false;
  }

  /** A static member rejoining with a new member id takes the old member's place; the old id is fenced. */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): ClassicGroupMember {
    const removed = this.members.get(oldMemberId);
    if (removed === undefined) throw new Error(`cannot replace unknown member ${oldMemberId}`);
    this.members.delete(oldMemberId);
    this.completeJoin(removed, joinGroupError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID, { nullProtocolName: true }));
    this.completeSync(removed, syncGroupError(ErrorCode.FENCED_INSTANCE_ID));
    const replacement = new ClassicGroupMember(
      newMemberId,
      removed.groupInstanceId,
      removed.clientId,
      removed.clientHost,
      removed.rebalanceTimeoutMs,
      removed.sessionTimeoutMs,
      removed.protocolType,
      removed.supportedProtocols,
    );
    replacement.assignment = removed.assignment;
    this.members.set(newMemberId, replacement);
    if (this.isLeader(oldMemberId)) this.leaderId = newMemberId;
    this.staticMembers.set(groupInstanceId, newMemberId);
    return replacement;
  }

  isPendingMember(memberId: string): boolean {
    return this.pendingJoinMembers.has(memberId);
  }

  addPendingMember(memberId: string): void {
    if (this.hasMember(memberId)) throw new Error(`pending member ${memberId} is already a member`);
    this.pendingJoinMembers.add(memberId);
  }

  addPendingSyncMember(memberId: string): void {
    if (!this.hasMember(memberId)) throw new Error(`pending sync member ${memberId} is not a member`);
    this.pendingSyncMembers.add(memberId);
  }

  removePendingSyncMember(memberId: string): void {
    this.pendingSyncMembers.delete(memberId);
  }

  hasReceivedSyncFromAllMembers(): boolean {
    return this.pendingSyncMembers.size === 0;
  }

  allPendingSyncMembers(): string[] {
    return [...this.pendingSyncMembers];
  }

  clearPendingSyncMembers(): void {
    this.pendingSyncMembers.clear();
  }

  hasStaticMember(groupInstanceId: string): boolean {
    return this.staticMembers.has(groupInstanceId);
  }

  staticMemberId(groupInstanceId: string): string | null {
    return this.staticMembers.get(groupInstanceId) ?? null;
  }

  notYetRejoinedMembers(): ClassicGroupMember[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin);
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.awaitingJoinCount && this.pendingJoinMembers.size === 0;
  }

  /** The largest rebalance timeout among the members: how long a join phase may last. */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const member of this.members.values()) max = Math.max(max, member.rebalanceTimeoutMs);
    return max;
  }

  /**
   * The error for a request naming `memberId` (and `groupInstanceId`), or
   * NONE: an unknown instance or member id is UNKNOWN_MEMBER_ID; a known
   * instance id held by another member id is FENCED_INSTANCE_ID (KIP-345).
   */
  validateMember(memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const existing = this.staticMemberId(groupInstanceId);
      if (existing === null) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (existing !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return this.hasMember(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  canRebalance(): boolean {
    return VALID_PREVIOUS_STATES.PreparingRebalance.includes(this.state);
  }

  transitionTo(state: ClassicGroupStateName, nowMs: number): void {
    if (!VALID_PREVIOUS_STATES[state].includes(this.state)) {
      throw new Error(`group ${this.groupId} cannot go from ${this.state} to ${state}`);
    }
    this.previousState = this.state;
    this.state = state;
    this.currentStateTimestampMs = nowMs;
  }

  /** The protocol every member supports that most members prefer. */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error(`cannot select a protocol for empty group ${this.groupId}`);
    const candidates = new Set([...this.supportedProtocolCounts].filter(([, count]) => count === this.members.size).map(([name]) => name));
    const votes = new Map<string, number>();
    for (const member of this.members.values()) {
      const choice = member.vote(candidates);
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = -1;
    for (const [name, count] of votes) {
      if (count > bestVotes) {
        best = name;
        bestVotes = count;
      }
    }
    return best!;
  }

  /**
   * Whether a member with this protocol type and protocols may join: an Empty
   * group takes any non-empty type and list; otherwise the type must match
   * and one of the protocols must be supported by every current member.
   */
  supportsProtocols(protocolType: string, protocols: readonly JoinGroupProtocol[]): boolean {
    if (this.isInState('Empty')) return protocolType !== '' && protocols.length > 0;
    return this.protocolType === protocolType && protocols.some((p) => (this.supportedProtocolCounts.get(p.name) ?? 0) === this.members.size);
  }

  /** True when the group consumes `topic` (unknown subscriptions count as subscribed for consumer groups). */
  isSubscribedToTopic(topic: string): boolean {
    if (this.subscribedTopics !== null) return this.subscribedTopics.has(topic);
    return this.usesConsumerGroupProtocol;
  }

  computeSubscribedTopics(): ReadonlySet<string> | null {
    if (this.protocolType !== CONSUMER_PROTOCOL_TYPE) return null;
    if (this.members.size === 0) return new Set();
    if (this.protocolName === null) return null;
    const topics = new Set<string>();
    for (const member of this.members.values()) {
      const protocol = member.supportedProtocols.find((p) => p.name === this.protocolName);
      const subscription = protocol === undefined ? null : decodeSubscription(protocol.metadata);
      if (subscription === null) return null;
      for (const topic of subscription.topics) topics.add(topic);
    }
    return topics;
  }

  updateMember(
    member: ClassicGroupMember,
    update: { protocols: readonly JoinGroupProtocol[]; rebalanceTimeoutMs: number; sessionTimeoutMs: number },
    onJoin: ((response: JoinGroupResponseData) => void) | null,
  ): void {
    this.countProtocols(member, -1);
    member.supportedProtocols = update.protocols;
    this.countProtocols(member, 1);
    member.rebalanceTimeoutMs = update.rebalanceTimeoutMs;
    member.sessionTimeoutMs = update.sessionTimeoutMs;
    if (onJoin !== null && !member.isAwaitingJoin) this.awaitingJoinCount++;
    else if (onJoin === null && member.isAwaitingJoin) this.awaitingJoinCount--;
    member.awaitingJoin = onJoin;
  }

  /** Delivers a JoinGroup response to a waiting member; false when it was not waiting. */
  completeJoin(member: ClassicGroupMember, response: JoinGroupResponseData): boolean {
    const callback = member.awaitingJoin;
    if (callback === null) return false;
    member.awaitingJoin = null;
    this.awaitingJoinCount--;
    callback(response);
    return true;
  }

  completeAllJoins(errorCode: number): void {
    for (const member of [...this.members.values()]) this.completeJoin(member, joinGroupError(member.memberId, errorCode));
  }

  /** Delivers a SyncGroup response to a waiting member; false when it was not waiting. */
  completeSync(member: ClassicGroupMember, response: SyncGroupResponseData): boolean {
    const callback = member.awaitingSync;
    if (callback === null) return false;
    member.awaitingSync = null;
    callback(response);
    return true;
  }

  completeAllSyncs(errorCode: number): void {
    for (const member of [...this.members.values()]) this.completeSync(member, syncGroupError(errorCode));
  }

  /** Starts the next generation: CompletingRebalance with a chosen protocol, or Empty when nobody is left. */
  initNextGeneration(nowMs: number): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo('CompletingRebalance', nowMs);
    } else {
      this.protocolName = null;
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo('Empty', nowMs);
    }
    this.clearPendingSyncMembers();
  }

  /** The member list the leader receives in its JoinGroup response. */
  currentMembersForLeader(): JoinGroupResponseData['members'] {
    if (this.state === 'Dead' || this.state === 'PreparingRebalance') {
      throw new Error(`group ${this.groupId} has no current member metadata in state ${this.state}`);
    }
    return [...this.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata(this.protocolName ?? '') }));
  }

  groupAssignment(): Map<string, Buffer> {
    return new Map([...this.members.values()].map((m) => [m.memberId, m.assignment]));
  }

  /** The GroupMetadataValue record for the group's current durable state with `assignment`. */
  metadataRecord(assignment: ReadonlyMap<string, Buffer>): GroupRecord {
    const members = [...this.members.values()].map((m) => {
      if (this.protocolName === null) throw new Error(`group ${this.groupId} has members but no protocol`);
      const memberAssignment = assignment.get(m.memberId);
      if (memberAssignment === undefined) throw new Error(`member ${m.memberId} of ${this.groupId} has no assignment`);
      return {
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: m.metadata(this.protocolName),
        assignment: memberAssignment,
      };
    });
    return groupRecord('GroupMetadata', { group: this.groupId }, {
      protocolType: this.protocolType ?? '',
      generation: this.generationId,
      protocol: this.protocolName,
      leader: this.leaderId,
      currentStateTimestamp: this.currentStateTimestampMs ?? -1,
      members,
    });
  }

  /** The record a new group is created with (no members, generation 0). */
  emptyMetadataRecord(): GroupRecord {
    return groupRecord('GroupMetadata', { group: this.groupId }, {
      protocolType: '',
      generation: 0,
      protocol: null,
      leader: null,
      currentStateTimestamp: this.currentStateTimestampMs ?? -1,
      members: [],
    });
  }

  tombstone(): GroupRecord {
    return groupRecord('GroupMetadata', { group: this.groupId }, null);
  }

  private countProtocols(member: ClassicGroupMember, delta: 1 | -1): void {
    for (const protocol of member.supportedProtocols) {
      this.supportedProtocolCounts.set(protocol.name, (this.supportedProtocolCounts.get(protocol.name) ?? 0) + delta);
    }
  }
}
