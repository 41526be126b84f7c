/**
 * A share group (KIP-932, ShareGroupHeartbeat): group epoch, members with
 * their subscriptions and assignments, the target assignment, and which of
 * its share partitions have durable state in the share coordinator.
 *
 * As for consumer groups, every field is set only by replaying records:
 * the group epoch and metadata hash (ShareGroupMetadataValue), each
 * member's subscription (ShareGroupMemberMetadataValue), the target
 * assignment and its epoch (ShareGroupTargetAssignmentMember/MetadataValue),
 * each member's current assignment (ShareGroupCurrentMemberAssignmentValue)
 * and the share-partition state metadata (ShareGroupStatePartitionMetadata
 * Value: initializing, initialized and deleting topics).
 *
 * A share partition may be assigned to several members at once (records are
 * handed out by the share-partition leader one acquisition at a time), so
 * there is no revocation: a member moves to its target assignment in one
 * step, and the group is Stable as soon as it has members.
 */
import { EMPTY_ASSIGNMENT, sameAssignment, sameNames, type Assignment } from './consumer-group.js';

export const ShareGroupState = {
  EMPTY: 'Empty',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
export type ShareGroupStateName = (typeof ShareGroupState)[keyof typeof ShareGroupState];

/** Kafka's MemberState.STABLE: the only state a share group member is ever in. */
export const SHARE_MEMBER_STATE_STABLE = 0;

export interface ShareGroupMember {
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: number;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  /** Sorted, as Kafka keeps them in a set. */
  readonly subscribedTopicNames: readonly string[];
  readonly assignedPartitions: Assignment;
}

export function newShareGroupMember(memberId: string): ShareGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: SHARE_MEMBER_STATE_STABLE,
    rackId: null,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    assignedPartitions: EMPTY_ASSIGNMENT,
  };
}

/** The fields ShareGroupMemberMetadataValue carries. */
export function sameShareSubscriptionMetadata(a: ShareGroupMember, b: ShareGroupMember): boolean {
  return (
    a.rackId === b.rackId &&
    a.clientId === b.clientId &&
    a.clientHost === b.clientHost &&
    sameNames(a.subscribedTopicNames, b.subscribedTopicNames)
  );
}

/** The fields ShareGroupCurrentMemberAssignmentValue carries. */
export function sameShareCurrentAssignment(a: ShareGroupMember, b: ShareGroupMember): boolean {
  return a.memberEpoch === b.memberEpoch && a.previousMemberEpoch === b.previousMemberEpoch && a.state === b.state && sameAssignment(a.assignedPartitions, b.assignedPartitions);
}

/** A topic's partitions in one state of the share-partition state metadata (Kafka's InitMapValue). */
export interface SharePartitionsOfTopic {
  readonly topicName: string;
  readonly partitions: ReadonlySet<number>;
  /** When this node replayed (or wrote) the entry: an initialization older than the retry interval is tried again. */
  readonly timestampMs: number;
}

/**
 * ShareGroupStatePartitionMetadataValue: the share partitions whose state
 * the share coordinator is being asked to create (initializing), holds
 * (initialized: only these are assigned to members), or is being asked to
 * delete (deleting, by topic), each by topic id.
 */
export interface SharePartitionStateMetadata {
  readonly initializing: ReadonlyMap<string, SharePartitionsOfTopic>;
  readonly initialized: ReadonlyMap<string, SharePartitionsOfTopic>;
  readonly deleting: ReadonlyMap<string, string>;
}

export const EMPTY_STATE_METADATA: SharePartitionStateMetadata = { initializing: new Map(), initialized: new Map(), deleting: new Map() };

export class ShareGroup {
  readonly type = 'share';
  groupEpoch = 0;
  metadataHash = 0;
  targetAssignmentEpoch = -1;
  assignmentTimestampMs = 0;
  readonly members = new Map<string, ShareGroupMember>();
  readonly targetAssignment = new Map<string, Assignment>();
  /** Null until the group's first ShareGroupStatePartitionMetadataValue. */
  statePartitionMetadata: SharePartitionStateMetadata | null = null;

  constructor(readonly groupId: string) {}

  get state(): ShareGroupStateName {
    return this.members.size === 0 ? ShareGroupState.EMPTY : ShareGroupState.STABLE;
  }

  get isEmpty(): boolean {
    return this.members.size === 0;
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  targetAssignmentOf(memberId: string): Assignment {
    return this.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT;
  }

  isSubscribedToTopic(topic: string): boolean {
    for (const member of this.members.values()) if (member.subscribedTopicNames.includes(topic)) return true;
    return false;
  }

  /** Share partitions with initialized state, by topic id (the assignable ones). */
  initializedPartitions(): ReadonlyMap<string, ReadonlySet<number>> {
    const out = new Map<string, ReadonlySet<number>>();
    for (const [topicId, entry] of this.statePartitionMetadata?.initialized ?? []) out.set(topicId, entry.partitions);
    return out;
  }

  // ---- replay-only mutators

  setGroupEpoch(epoch: number, metadataHash: number): void {
    this.groupEpoch = epoch;
    this.metadataHash = metadataHash;
  }

  setTargetAssignmentMetadata(epoch: number, timestampMs: number): void {
    this.targetAssignmentEpoch = epoch;
    this.assignmentTimestampMs = timestampMs;
  }

  updateTargetAssignment(memberId: string, assignment: Assignment): void {
    this.targetAssignment.set(memberId, assignment);
  }

  removeTargetAssignment(memberId: string): void {
    this.targetAssignment.delete(memberId);
  }

  updateMember(member: ShareGroupMember): void {
    this.members.set(member.memberId, member);
  }

  removeMember(memberId: string): void {
    this.members.delete(memberId);
  }
}
