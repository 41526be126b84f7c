/**
 * Moves one consumer group member from its current assignment towards its
 * target assignment (KIP-848 reconciliation, Kafka's CurrentAssignmentBuilder).
 *
 * The one rule: a partition is assigned to a member only once no other
 * member owns it. So a member first loses (revokes) what it must give up,
 * staying at its epoch in UNREVOKED_PARTITIONS until its heartbeat no longer
 * reports those partitions; then it moves to the target epoch and receives
 * the partitions that are free, waiting in UNRELEASED_PARTITIONS for those
 * another member still holds.
 *
 *   STABLE ──target epoch moved──> compute next
 *   UNREVOKED_PARTITIONS ──owned no longer lists the revoked partitions──> compute next
 *   UNRELEASED_PARTITIONS ──each heartbeat──> compute next (picks up released partitions)
 */
import { GroupApiError } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import { MemberState, partitionAssignmentEpoch, type Assignment, type AssignmentEpochs, type ConsumerGroupMember } from './consumer-group.js';

export interface OwnedTopicPartitions {
  topicId: string;
  partitions: readonly number[];
}

export interface ReconcileInput {
  targetAssignmentEpoch: number;
  targetAssignment: Assignment;
  /** Epoch at which the partition is currently owned by some member, or -1 when free. */
  currentPartitionEpoch: (topicId: string, partition: number) => number;
  /** The partitions the member reports owning, or null when its heartbeat did not say. */
  ownedTopicPartitions: readonly OwnedTopicPartitions[] | null;
}

export function reconcile(member: ConsumerGroupMember, input: ReconcileInput): ConsumerGroupMember {
  switch (member.state) {
    case MemberState.STABLE:
      if (member.memberEpoch !== input.targetAssignmentEpoch) return computeNextAssignment(member, member.memberEpoch, input);
      return member;
    case MemberState.UNREVOKED_PARTITIONS:
      if (ownsAny(input.ownedTopicPartitions, member.partitionsPendingRevocation)) return member;
      // Kafka 4.4 keeps the epoch here (older versions moved to epoch + 1); the target epoch comes once nothing is left to revoke.
      return computeNextAssignment(member, member.memberEpoch, input);
    case MemberState.UNRELEASED_PARTITIONS:
      return computeNextAssignment(member, member.memberEpoch, input);
    default:
      // A state from a newer coordinator: start over from an empty assignment, as Kafka does.
      if (input.ownedTopicPartitions === null || input.ownedTopicPartitions.length > 0) {
        throw new GroupApiError(ErrorCode.FENCED_MEMBER_EPOCH, 'The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.');
      }
      return computeNextAssignment(member, input.targetAssignmentEpoch, input);
  }
}

/** True when the member still reports owning one of `partitions` (or did not report at all). */
function ownsAny(owned: readonly OwnedTopicPartitions[] | null, partitions: Assignment): boolean {
  if (owned === null) return true;
  for (const entry of owned) {
    const pending = partitions.get(entry.topicId);
    if (pending === undefined) continue;
    if (entry.partitions.some((p) => pending.has(p))) return true;
  }
  return false;
}

function computeNextAssignment(member: ConsumerGroupMember, memberEpoch: number, input: ReconcileInput): ConsumerGroupMember {
  let hasUnreleasedPartitions = false;
  const assigned = new Map<string, Set<number>>();
  const pendingRevocation = new Map<string, Set<number>>();
  const pendingAssignment = new Map<string, Set<number>>();
  const topicIds = new Set([...input.targetAssignment.keys(), ...member.assignedPartitions.keys()]);
  for (const topicId of topicIds) {
    const target = input.targetAssignment.get(topicId) ?? new Set<number>();
    const current = member.assignedPartitions.get(topicId) ?? new Set<number>();
    const revoking = member.partitionsPendingRevocation.get(topicId);
    const keep = new Set([...current].filter((p) => target.has(p)));
    const revoke = new Set([...current].filter((p) => !keep.has(p)));
    const add = new Set<number>();
    for (const p of target) {
      if (keep.has(p)) continue;
      // A partition this member is itself revoking may come straight back to it.
      if (input.currentPartitionEpoch(topicId, p) !== -1 && revoking?.has(p) !== true) hasUnreleasedPartitions = true;
      else add.add(p);
    }
    if (keep.size > 0) assigned.set(topicId, keep);
    if (revoke.size > 0) pendingRevocation.set(topicId, revoke);
    if (add.size > 0) pendingAssignment.set(topicId, add);
  }

  // Kept and revoked partitions keep the epoch they were assigned at (KIP-1251).
  const epochs = keptAssignmentEpochs(member, [assigned, pendingRevocation]);
  if (pendingRevocation.size > 0 && ownsAny(input.ownedTopicPartitions, pendingRevocation)) {
    return withAssignment(member, { state: MemberState.UNREVOKED_PARTITIONS, memberEpoch, assigned, pendingRevocation, epochs });
  }
  for (const [topicId, partitions] of pendingAssignment) {
    const set = assigned.get(topicId) ?? new Set<number>();
    const topicEpochs = epochs.get(topicId) ?? new Map<number, number>();
    for (const p of partitions) {
      set.add(p);
      topicEpochs.set(p, input.targetAssignmentEpoch);
    }
    assigned.set(topicId, set);
    epochs.set(topicId, topicEpochs);
  }
  const state = hasUnreleasedPartitions ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE;
  return withAssignment(member, { state, memberEpoch: input.targetAssignmentEpoch, assigned, pendingRevocation: new Map(), epochs });
}

/** The member's current assignment epochs of the partitions in `assignments`. */
function keptAssignmentEpochs(member: ConsumerGroupMember, assignments: readonly Assignment[]): Map<string, Map<number, number>> {
  const epochs = new Map<string, Map<number, number>>();
  for (const assignment of assignments) {
    for (const [topicId, partitions] of assignment) {
      const topicEpochs = epochs.get(topicId) ?? new Map<number, number>();
      for (const p of partitions) {
        const epoch = partitionAssignmentEpoch(member, topicId, p);
        if (epoch === undefined) throw new Error(`member ${member.memberId} holds ${topicId}-${p} without an assignment epoch`);
        topicEpochs.set(p, epoch);
      }
      epochs.set(topicId, topicEpochs);
    }
  }
  return epochs;
}

function withAssignment(
  member: ConsumerGroupMember,
  next: { state: number; memberEpoch: number; assigned: Assignment; pendingRevocation: Assignment; epochs: AssignmentEpochs },
): ConsumerGroupMember {
  return {
    ...member,
    state: next.state,
    previousMemberEpoch: member.memberEpoch,
    memberEpoch: next.memberEpoch,
    assignedPartitions: next.assigned,
    partitionsPendingRevocation: next.pendingRevocation,
    assignmentEpochs: next.epochs,
  };
}
