/**
 * Server-side partition assignors of the KIP-848 consumer protocol
 * (`group.consumer.assignors`, a member picks one with `serverAssignor`).
 *
 * - `uniform` (the default): spreads all subscribed partitions so that any
 *   two members eligible for the same partitions differ by at most one
 *   partition, and keeps each member's previous target partitions where
 *   that balance allows (sticky). Kafka's UniformAssignor has the same goals
 *   (balance first, then stickiness, homogeneous or heterogeneous
 *   subscriptions); the exact partition-to-member choice differs, which is
 *   not part of any contract (clients only see their own partitions).
 * - `range`: per topic, members in order (static members by instance id
 *   first, then by member id) each take a contiguous range; the first
 *   `partitions % members` members take one extra. Members subscribed to the
 *   same topics with the same partition counts get co-partitioned ranges.
 *   This is Kafka's RangeAssignor exactly.
 *
 * Assignors are pure functions of their input, so replaying the records
 * they produced never needs them again.
 */
import { EMPTY_ASSIGNMENT, type Assignment } from './consumer-group.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';

export interface AssignmentMemberSpec {
  instanceId: string | null;
  rackId: string | null;
  /** Ids of the existing topics the member subscribes to. */
  subscribedTopicIds: ReadonlySet<string>;
  /** The member's previous target assignment (stickiness). */
  assignment: Assignment;
}

export interface AssignmentSpec {
  members: ReadonlyMap<string, AssignmentMemberSpec>;
  /** Partition counts of the subscribed topics, by topic id. */
  partitionCounts: ReadonlyMap<string, number>;
}

export interface PartitionAssignor {
  readonly name: string;
  assign(spec: AssignmentSpec): Map<string, Assignment>;
}

type Partition = { topicId: string; partition: number };

export const uniformAssignor: PartitionAssignor = {
  name: 'uniform',
  assign(spec) {
    const owned = new Map<string, Partition[]>();
    const taken = new Set<string>();
    const memberIds = [...spec.members.keys()].sort();
    for (const memberId of memberIds) {
      const member = spec.members.get(memberId)!;
      const kept: Partition[] = [];
      for (const [topicId, partitions] of member.assignment) {
        const count = spec.partitionCounts.get(topicId);
        if (count === undefined || !member.subscribedTopicIds.has(topicId)) continue;
        for (const partition of [...partitions].sort((a, b) => a - b)) {
          const key = topicPartitionKey({ topic: topicId, partition });
          if (partition >= count || taken.has(key)) continue;
          taken.add(key);
          kept.push({ topicId, partition });
        }
      }
      owned.set(memberId, kept);
    }
    const eligible = eligibleMembers(spec, memberIds);
    trimToQuota(spec, owned, eligible);
    const retained = new Set([...owned.values()].flat().map((p) => topicPartitionKey({ topic: p.topicId, partition: p.partition })));
    assignFree(spec, owned, eligible, retained);
    rebalance(owned, eligible);
    return toAssignments(owned);
  },
};

/** Members subscribed to each topic, in member id order. */
function eligibleMembers(spec: AssignmentSpec, memberIds: readonly string[]): Map<string, string[]> {
  const eligible = new Map<string, string[]>();
  for (const topicId of spec.partitionCounts.keys()) eligible.set(topicId, []);
  for (const memberId of memberIds) {
    for (const topicId of spec.members.get(memberId)!.subscribedTopicIds) eligible.get(topicId)?.push(memberId);
  }
  return eligible;
}

/**
 * When every member is eligible for every subscribed partition (the usual,
 * homogeneous case), caps what each member keeps at its fair share so the
 * freed partitions go to members below it; the `total % members` members
 * holding the most keep one extra.
 */
function trimToQuota(spec: AssignmentSpec, owned: Map<string, Partition[]>, eligible: Map<string, string[]>): void {
  const memberCount = owned.size;
  if (memberCount === 0) return;
  const homogeneous = [...eligible.values()].every((members) => members.length === memberCount);
  if (!homogeneous) return;
  let total = 0;
  for (const count of spec.partitionCounts.values()) total += count;
  const minQuota = Math.floor(total / memberCount);
  let extra = total % memberCount;
  const byOwnedDesc = [...owned.keys()].sort((a, b) => owned.get(b)!.length - owned.get(a)!.length || (a < b ? -1 : 1));
  for (const memberId of byOwnedDesc) {
    const partitions = owned.get(memberId)!;
    let quota = minQuota;
    if (extra > 0 && partitions.length > minQuota) {
      quota++;
      extra--;
    }
    if (partitions.length > quota) partitions.length = quota;
  }
}

/** Gives every unowned partition to the eligible member holding the fewest partitions. */
function assignFree(spec: AssignmentSpec, owned: Map<string, Partition[]>, eligible: Map<string, string[]>, retained: ReadonlySet<string>): void {
  const topics = [...spec.partitionCounts.keys()]
    .filter((topicId) => eligible.get(topicId)!.length > 0)
    .sort((a, b) => eligible.get(a)!.length - eligible.get(b)!.length || (a < b ? -1 : 1));
  for (const topicId of topics) {
    const candidates = eligible.get(topicId)!;
    const count = spec.partitionCounts.get(topicId)!;
    for (let partition = 0; partition < count; partition++) {
      if (retained.has(topicPartitionKey({ topic: topicId, partition }))) continue;
      let best = candidates[0]!;
      for (const memberId of candidates) if (owned.get(memberId)!.length < owned.get(best)!.length) best = memberId;
      owned.get(best)!.push({ topicId, partition });
    }
  }
}

/** Moves partitions from the fullest members to eligible members holding at least two fewer, until none can move. */
function rebalance(owned: Map<string, Partition[]>, eligible: Map<string, string[]>): void {
  const limit = [...owned.values()].reduce((sum, list) => sum + list.length, 0) * Math.max(1, owned.size);
  for (let moves = 0; moves < limit; moves++) {
    if (!moveOne(owned, eligible)) return;
  }
}

function moveOne(owned: Map<string, Partition[]>, eligible: Map<string, string[]>): boolean {
  const fullestFirst = [...owned.keys()].sort((a, b) => owned.get(b)!.length - owned.get(a)!.length || (a < b ? -1 : 1));
  for (const from of fullestFirst) {
    const partitions = owned.get(from)!;
    for (let i = partitions.length - 1; i >= 0; i--) {
      const p = partitions[i]!;
      let target: string | null = null;
      for (const candidate of eligible.get(p.topicId)!) {
        if (owned.get(candidate)!.length <= partitions.length - 2 && (target === null || owned.get(candidate)!.length < owned.get(target)!.length)) target = candidate;
      }
      if (target === null) continue;
      partitions.splice(i, 1);
      owned.get(target)!.push(p);
      return true;
    }
  }
  return false;
}

function toAssignments(owned: Map<string, Partition[]>): Map<string, Assignment> {
  const out = new Map<string, Assignment>();
  for (const [memberId, partitions] of owned) {
    const assignment = new Map<string, Set<number>>();
    for (const p of partitions) {
      const set = assignment.get(p.topicId) ?? new Set<number>();
      set.add(p.partition);
      assignment.set(p.topicId, set);
    }
    out.set(memberId, assignment.size === 0 ? EMPTY_ASSIGNMENT : assignment);
  }
  return out;
}

export const rangeAssignor: PartitionAssignor = {
  name: 'range',
  assign(spec) {
    const memberIds = [...spec.members.keys()].sort((a, b) => compareForRange(spec, a, b));
    const subscriberCounts = new Map<string, number>();
    for (const member of spec.members.values()) {
      for (const topicId of member.subscribedTopicIds) {
        if (spec.partitionCounts.has(topicId)) subscriberCounts.set(topicId, (subscriberCounts.get(topicId) ?? 0) + 1);
      }
    }
    const nextStart = new Map<string, number>();
    const extraLeft = new Map<string, number>();
    const out = new Map<string, Assignment>();
    for (const memberId of memberIds) {
      const assignment = new Map<string, Set<number>>();
      for (const topicId of spec.members.get(memberId)!.subscribedTopicIds) {
        const partitionCount = spec.partitionCounts.get(topicId);
        if (partitionCount === undefined) continue;
        const subscribers = subscriberCounts.get(topicId)!;
        if (!extraLeft.has(topicId)) extraLeft.set(topicId, partitionCount % subscribers);
        let quota = Math.floor(partitionCount / subscribers);
        if (extraLeft.get(topicId)! > 0) {
          quota++;
          extraLeft.set(topicId, extraLeft.get(topicId)! - 1);
        }
        const start = nextStart.get(topicId) ?? 0;
        const end = Math.min(start + quota, partitionCount);
        nextStart.set(topicId, end);
        if (start < end) assignment.set(topicId, new Set(Array.from({ length: end - start }, (_, i) => start + i)));
      }
      out.set(memberId, assignment.size === 0 ? EMPTY_ASSIGNMENT : assignment);
    }
    return out;
  },
};

/** Kafka's range order: static members by instance id first, then dynamic members by member id. */
function compareForRange(spec: AssignmentSpec, a: string, b: string): number {
  const ia = spec.members.get(a)!.instanceId;
  const ib = spec.members.get(b)!.instanceId;
  if (ia !== null && ib !== null) return ia < ib ? -1 : ia > ib ? 1 : 0;
  if (ia !== null) return -1;
  if (ib !== null) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export const SERVER_ASSIGNORS: readonly PartitionAssignor[] = [uniformAssignor, rangeAssignor];

/** The assignors named by `group.consumer.assignors`, in order; the first is the default. */
export function assignorsByName(names: readonly string[]): Map<string, PartitionAssignor> {
  const out = new Map<string, PartitionAssignor>();
  for (const name of names) {
    const assignor = SERVER_ASSIGNORS.find((a) => a.name === name || `org.apache.kafka.coordinator.group.assignor.${a.name === 'uniform' ? 'UniformAssignor' : 'RangeAssignor'}` === name);
    if (assignor !== undefined) out.set(assignor.name, assignor);
  }
  return out;
}
