/**
 * Client-side partition assignors of the classic group protocol
 * (`partition.assignment.strategy`): the group leader runs the one the
 * coordinator picked over every member's subscription and hands each member
 * its partitions through SyncGroup.
 *
 * - `range`: per topic, the members subscribed to it in MemberInfo order
 *   (static members by group.instance.id first, then by member id) each take
 *   a contiguous range; the first `partitions % members` take one extra.
 *   Eager.
 * - `roundrobin`: every subscribed partition, topics in name order, dealt
 *   one at a time to the members in MemberInfo order, skipping members not
 *   subscribed to the partition's topic. Eager.
 * - `cooperative-sticky` (group-sticky-assignor.ts): balanced and sticky,
 *   cooperative (KIP-429).
 *
 * Each computes exactly what Kafka's assignor of the same name computes for
 * the same input (racks aside: Spool's client sends no client.rack), so
 * Spool and Java consumers can share a group whoever leads it.
 */
import type { TopicPartition } from './cluster.js';

export type RebalanceProtocol = 'EAGER' | 'COOPERATIVE';

/** A member's decoded ConsumerProtocolSubscription, as the leader sees it. */
export interface MemberSubscription {
  memberId: string;
  groupInstanceId: string | null;
  topics: readonly string[];
  userData: Buffer | null;
  ownedPartitions: readonly TopicPartition[];
  /** ConsumerProtocolSubscription v2+ GenerationId; -1 when absent. */
  generationId: number;
  rackId: string | null;
}

export interface PartitionAssignor {
  readonly name: string;
  /** The protocols this assignor supports, preferred first (Kafka's supportedProtocols). */
  readonly supportedProtocols: readonly RebalanceProtocol[];
  /** The assignor's UserData for this member's subscription. */
  subscriptionUserData(generationId: number): Buffer | null;
  /**
   * Assignment per member id. `partitionsPerTopic` holds only subscribed
   * topics that exist; `subscriptions` is in JoinGroup member order.
   */
  assign(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: readonly MemberSubscription[]): Map<string, TopicPartition[]>;
}

/** Kafka's MemberInfo order: static members by instance id first, then the others by member id. */
export function compareMembers(a: MemberSubscription, b: MemberSubscription): number {
  if (a.groupInstanceId !== null && b.groupInstanceId !== null) return compareStrings(a.groupInstanceId, b.groupInstanceId);
  if (a.groupInstanceId !== null) return -1;
  if (b.groupInstanceId !== null) return 1;
  return compareStrings(a.memberId, b.memberId);
}

/** Java's String.compareTo: UTF-16 code unit order, which is what `<` compares. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function emptyAssignment(subscriptions: readonly MemberSubscription[]): Map<string, TopicPartition[]> {
  return new Map(subscriptions.map((s) => [s.memberId, []]));
}

export const RangeAssignor: PartitionAssignor = {
  name: 'range',
  supportedProtocols: ['EAGER'],
  subscriptionUserData: () => null,
  assign(partitionsPerTopic, subscriptions) {
    const assignment = emptyAssignment(subscriptions);
    for (const [topic, count] of partitionsPerTopic) {
      const members = subscriptions.filter((s) => s.topics.includes(topic)).sort(compareMembers);
      if (members.length === 0 || count === 0) continue;
      const perMember = Math.floor(count / members.length);
      const extra = count % members.length;
      members.forEach((member, index) => {
        const start = perMember * index + Math.min(index, extra);
        const length = perMember + (index < extra ? 1 : 0);
        for (let partition = start; partition < start + length; partition++) assignment.get(member.memberId)!.push({ topic, partition });
      });
    }
    return assignment;
  },
};

export const RoundRobinAssignor: PartitionAssignor = {
  name: 'roundrobin',
  supportedProtocols: ['EAGER'],
  subscriptionUserData: () => null,
  assign(partitionsPerTopic, subscriptions) {
    const assignment = emptyAssignment(subscriptions);
    const members = [...subscriptions].sort(compareMembers);
    const topics = [...new Set(subscriptions.flatMap((s) => s.topics))].sort(compareStrings);
    let next = 0;
    for (const topic of topics) {
      const count = partitionsPerTopic.get(topic);
      if (count === undefined) continue;
      for (let partition = 0; partition < count; partition++) {
        while (!members[next % members.length]!.topics.includes(topic)) next++;
        assignment.get(members[next % members.length]!.memberId)!.push({ topic, partition });
        next++;
      }
    }
    return assignment;
  },
};
