/**
 * A consumer group of the KIP-848 protocol (ConsumerGroupHeartbeat): group
 * epoch, members with their subscriptions and current assignments, the
 * target assignment, and the resolved regular-expression subscriptions.
 *
 * Every field is set only by replaying records (STYLE.md §6): the group
 * epoch and metadata hash (ConsumerGroupMetadataValue), each member's
 * subscription (ConsumerGroupMemberMetadataValue), the target assignment per
 * member and its epoch (ConsumerGroupTargetAssignmentMember/MetadataValue),
 * each member's current assignment and epoch (ConsumerGroupCurrentMember
 * AssignmentValue) and each regex's resolved topics (ConsumerGroupRegular
 * ExpressionValue). Operations read this state and return records.
 *
 * Derived state: the group state (Empty, Assigning, Reconciling, Stable),
 * the epoch at which each partition is currently owned (so a partition is
 * given to a new owner only once its old owner released it), static member
 * ids by instance id, and how many members subscribe to each topic.
 */
import { ZERO_UUID } from '../protocol/reader.js';

/** Partitions by topic id. Treated as immutable: updates build new maps. */
export type Assignment = ReadonlyMap<string, ReadonlySet<number>>;
export const EMPTY_ASSIGNMENT: Assignment = new Map();

/**
 * KIP-1251 (Kafka 4.3): for each partition a member holds (assigned or
 * pending revocation), the epoch at which it was assigned to the member, by
 * topic id. A partition keeps its epoch while the member keeps it across
 * epoch bumps, so a commit carrying an older member epoch is still accepted
 * for it (see validateConsumerCommit).
 */
export type AssignmentEpochs = ReadonlyMap<string, ReadonlyMap<number, number>>;
export const EMPTY_ASSIGNMENT_EPOCHS: AssignmentEpochs = new Map();

export const MemberState = {
  STABLE: 0,
  UNREVOKED_PARTITIONS: 1,
  UNRELEASED_PARTITIONS: 2,
  UNKNOWN: 127,
} as const;

export const ConsumerGroupState = {
  EMPTY: 'Empty',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
export type ConsumerGroupStateName = (typeof ConsumerGroupState)[keyof typeof ConsumerGroupState];

/** A member leaving (or fenced). */
export const LEAVE_GROUP_MEMBER_EPOCH = -1;
/** A static member leaving temporarily (KIP-848: it may come back with the same instance id). */
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

export interface ClassicMemberMetadata {
  sessionTimeoutMs: number;
  supportedProtocols: { name: string; metadata: Buffer }[];
}

export interface ConsumerGroupMember {
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly serverAssignorName: string | null;
  readonly assignedPartitions: Assignment;
  readonly partitionsPendingRevocation: Assignment;
  /** Covers exactly the partitions of assignedPartitions and partitionsPendingRevocation. */
  readonly assignmentEpochs: AssignmentEpochs;
  readonly classicMemberMetadata: ClassicMemberMetadata | null;
}

export function newConsumerGroupMember(memberId: string): ConsumerGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: MemberState.STABLE,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignorName: null,
    assignedPartitions: EMPTY_ASSIGNMENT,
    partitionsPendingRevocation: EMPTY_ASSIGNMENT,
    assignmentEpochs: EMPTY_ASSIGNMENT_EPOCHS,
    classicMemberMetadata: null,
  };
}

export function isReconciledTo(member: ConsumerGroupMember, targetAssignmentEpoch: number): boolean {
  return member.state === MemberState.STABLE && member.memberEpoch === targetAssignmentEpoch;
}

/** The fields a ConsumerGroupMemberMetadataValue carries, compared to decide whether to write one. */
export function sameSubscriptionMetadata(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.instanceId === b.instanceId &&
    a.rackId === b.rackId &&
    a.clientId === b.clientId &&
    a.clientHost === b.clientHost &&
    sameNames(a.subscribedTopicNames, b.subscribedTopicNames) &&
    a.subscribedTopicRegex === b.subscribedTopicRegex &&
    a.rebalanceTimeoutMs === b.rebalanceTimeoutMs &&
    a.serverAssignorName === b.serverAssignorName &&
    a.classicMemberMetadata === b.classicMemberMetadata
  );
}

/** The fields a ConsumerGroupCurrentMemberAssignmentValue carries. */
export function sameCurrentAssignment(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.memberEpoch === b.memberEpoch &&
    a.previousMemberEpoch === b.previousMemberEpoch &&
    a.state === b.state &&
    sameAssignment(a.assignedPartitions, b.assignedPartitions) &&
    sameAssignment(a.partitionsPendingRevocation, b.partitionsPendingRevocation) &&
    sameAssignmentEpochs(a.assignmentEpochs, b.assignmentEpochs)
  );
}

function sameAssignmentEpochs(a: AssignmentEpochs, b: AssignmentEpochs): boolean {
  if (a.size !== b.size) return false;
  for (const [topicId, epochs] of a) {
    const other = b.get(topicId);
    if (other === undefined || other.size !== epochs.size) return false;
    for (const [p, epoch] of epochs) if (other.get(p) !== epoch) return false;
  }
  return true;
}

/** The epoch at which the member was given the partition (still assigned or pending revocation), or undefined. */
export function partitionAssignmentEpoch(member: ConsumerGroupMember, topicId: string, partition: number): number | undefined {
  return member.assignmentEpochs.get(topicId)?.get(partition);
}

/** Every partition of `assignment` at `epoch`. */
export function assignmentEpochsAt(assignment: Assignment, epoch: number): AssignmentEpochs {
  return new Map([...assignment].map(([topicId, partitions]) => [topicId, new Map([...partitions].map((p) => [p, epoch]))]));
}

export function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}

export function sameAssignment(a: Assignment, b: Assignment): boolean {
  if (a.size !== b.size) return false;
  for (const [topicId, partitions] of a) {
    const other = b.get(topicId);
    if (other === undefined || other.size !== partitions.size) return false;
    for (const p of partitions) if (!other.has(p)) return false;
  }
  return true;
}

export function assignmentPartitionCount(assignment: Assignment): number {
  let count = 0;
  for (const partitions of assignment.values()) count += partitions.size;
  return count;
}

/** Record form: [{topicId, partitions}] sorted by topic id and partition, for stable bytes. */
export function assignmentToList(assignment: Assignment): { topicId: string; partitions: number[] }[] {
  return [...assignment.entries()]
    .filter(([, partitions]) => partitions.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([topicId, partitions]) => ({ topicId, partitions: [...partitions].sort((x, y) => x - y) }));
}

export function assignmentFromList(list: readonly { topicId: string; partitions: readonly number[] }[]): Assignment {
  const out = new Map<string, Set<number>>();
  for (const entry of list) {
    if (entry.topicId === ZERO_UUID || entry.partitions.length === 0) continue;
    const set = out.get(entry.topicId) ?? new Set<number>();
    for (const p of entry.partitions) set.add(p);
    out.set(entry.topicId, set);
  }
  return out;
}

/**
 * Assignment epochs from the record form. A topic whose AssignmentEpochs
 * are missing (written before KIP-1251) or do not match its partitions
 * takes the member epoch (never below 0) for all of them, as Kafka does.
 */
export function assignmentEpochsFromList(
  list: readonly { topicId: string; partitions: readonly number[]; assignmentEpochs: readonly number[] | null }[],
  memberEpoch: number,
): AssignmentEpochs {
  const fallbackEpoch = Math.max(memberEpoch, 0);
  const out = new Map<string, Map<number, number>>();
  for (const { topicId, partitions, assignmentEpochs } of list) {
    if (topicId === ZERO_UUID || partitions.length === 0) continue;
    const epochs = out.get(topicId) ?? new Map<number, number>();
    const matching = assignmentEpochs !== null && assignmentEpochs.length === partitions.length;
    partitions.forEach((p, i) => epochs.set(p, matching ? assignmentEpochs[i]! : fallbackEpoch));
    out.set(topicId, epochs);
  }
  return out;
}

export interface ResolvedRegularExpression {
  topics: readonly string[];
  /** The metadata image offset the regex was resolved against. */
  version: number;
  timestampMs: number;
}

export class ConsumerGroup {
  readonly type = 'consumer';
  groupEpoch = 0;
  metadataHash = 0;
  targetAssignmentEpoch = -1;
  readonly members = new Map<string, ConsumerGroupMember>();
  readonly targetAssignment = new Map<string, Assignment>();
  readonly resolvedRegularExpressions = new Map<string, ResolvedRegularExpression>();
  private readonly staticMembers = new Map<string, string>();
  private readonly partitionEpochs = new Map<string, Map<number, number>>();
  private readonly topicSubscriberCounts = new Map<string, number>();
  private readonly regexSubscriberCounts = new Map<string, number>();
  private currentState: ConsumerGroupStateName = 'Empty';

  constructor(readonly groupId: string) {}

  get state(): ConsumerGroupStateName {
    return this.currentState;
  }

  get isEmpty(): boolean {
    return this.currentState === 'Empty';
  }

  get numMembers(): number {
    return this.members.size;
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  staticMemberId(instanceId: string | null): string | null {
    if (instanceId === null) return null;
    return this.staticMembers.get(instanceId) ?? null;
  }

  staticMember(instanceId: string): ConsumerGroupMember | null {
    const memberId = this.staticMembers.get(instanceId);
    return memberId === undefined ? null : (this.members.get(memberId) ?? null);
  }

  /** The epoch of the member currently owning the partition (assigned or pending revocation), or -1. */
  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1;
  }

  /** The target assignment of a member; a static member's replacement inherits its predecessor's. */
  targetAssignmentOf(memberId: string, instanceId: string | null = null): Assignment {
    const own = this.targetAssignment.get(memberId);
    if (own !== undefined) return own;
    const previous = this.staticMemberId(instanceId);
    if (previous !== null) return this.targetAssignment.get(previous) ?? EMPTY_ASSIGNMENT;
    return EMPTY_ASSIGNMENT;
  }

  /** Topic names subscribed by name by at least one member. */
  subscribedTopicNames(): ReadonlySet<string> {
    return new Set(this.topicSubscriberCounts.keys());
  }

  /** Regular expressions used by at least one member. */
  subscribedRegularExpressions(): ReadonlySet<string> {
    return new Set(this.regexSubscriberCounts.keys());
  }

  /** True when a member subscribes to the topic by name or through a resolved regex. */
  isSubscribedToTopic(topic: string): boolean {
    if (this.topicSubscriberCounts.has(topic)) return true;
    for (const regex of this.regexSubscriberCounts.keys()) {
      if (this.resolvedRegularExpressions.get(regex)?.topics.includes(topic) === true) return true;
    }
    return false;
  }

  // ---- replay-only mutators

  setGroupEpoch(epoch: number, metadataHash: number): void {
    this.groupEpoch = epoch;
    this.metadataHash = metadataHash;
    this.updateState();
  }

  setTargetAssignmentEpoch(epoch: number): void {
    this.targetAssignmentEpoch = epoch;
    this.updateState();
  }

  updateTargetAssignment(memberId: string, assignment: Assignment): void {
    this.targetAssignment.set(memberId, assignment);
  }

  removeTargetAssignment(memberId: string): void {
    this.targetAssignment.delete(memberId);
  }

  updateMember(member: ConsumerGroupMember): void {
    const old = this.members.get(member.memberId);
    this.members.set(member.memberId, member);
    this.countSubscriptions(old, -1);
    this.countSubscriptions(member, 1);
    if (old !== undefined) this.removePartitionEpochs(old);
    this.addPartitionEpochs(member.assignedPartitions, member.memberEpoch);
    this.addPartitionEpochs(member.partitionsPendingRevocation, member.memberEpoch);
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId);
    this.updateState();
  }

  removeMember(memberId: string): void {
    const old = this.members.get(memberId);
    if (old === undefined) return;
    this.members.delete(memberId);
    this.countSubscriptions(old, -1);
    this.removePartitionEpochs(old);
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId) this.staticMembers.delete(old.instanceId);
    this.updateState();
  }

  setResolvedRegularExpression(regex: string, resolved: ResolvedRegularExpression | null): void {
    if (resolved === null) this.resolvedRegularExpressions.delete(regex);
    else this.resolvedRegularExpressions.set(regex, resolved);
  }

  // ---- derived state

  private updateState(): void {
    if (this.members.size === 0) this.currentState = 'Empty';
    else if (this.groupEpoch > this.targetAssignmentEpoch) this.currentState = 'Assigning';
    else if ([...this.members.values()].some((m) => !isReconciledTo(m, this.targetAssignmentEpoch))) this.currentState = 'Reconciling';
    else this.currentState = 'Stable';
  }

  private countSubscriptions(member: ConsumerGroupMember | undefined, delta: 1 | -1): void {
    if (member === undefined) return;
    for (const name of member.subscribedTopicNames) adjustCount(this.topicSubscriberCounts, name, delta);
    if (member.subscribedTopicRegex !== null && member.subscribedTopicRegex !== '') adjustCount(this.regexSubscriberCounts, member.subscribedTopicRegex, delta);
  }

  private addPartitionEpochs(assignment: Assignment, epoch: number): void {
    for (const [topicId, partitions] of assignment) {
      let epochs = this.partitionEpochs.get(topicId);
      if (epochs === undefined) this.partitionEpochs.set(topicId, (epochs = new Map()));
      for (const p of partitions) {
        const previous = epochs.get(p);
        if (previous !== undefined) throw new Error(`partition ${topicId}-${p} of ${this.groupId} is still owned at epoch ${previous}`);
        epochs.set(p, epoch);
      }
    }
  }

  private removePartitionEpochs(member: ConsumerGroupMember): void {
    for (const assignment of [member.assignedPartitions, member.partitionsPendingRevocation]) {
      for (const [topicId, partitions] of assignment) {
        const epochs = this.partitionEpochs.get(topicId);
        for (const p of partitions) {
          const owned = epochs?.get(p);
          if (owned !== member.memberEpoch) throw new Error(`partition ${topicId}-${p} of ${this.groupId} is owned at epoch ${owned}, not ${member.memberEpoch}`);
          epochs!.delete(p);
        }
        if (epochs !== undefined && epochs.size === 0) this.partitionEpochs.delete(topicId);
      }
    }
  }
}

function adjustCount(counts: Map<string, number>, key: string, delta: 1 | -1): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
