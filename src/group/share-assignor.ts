/**
 * The share groups' server-side assignor, `simple` (KIP-932's SimpleAssignor,
 * `group.share.assignors`).
 *
 * Share partitions may be shared: when a topic has fewer assignable
 * partitions than subscribed members, each partition goes to
 * ceil(members / partitions) members, so every member gets work; otherwise
 * each partition goes to one member and members differ by at most one
 * partition. Only partitions whose share state is initialized are
 * assignable. A member keeps the partitions of its previous target where
 * that balance allows (sticky), and a member's load across topics decides
 * who takes a free partition. Kafka's builders have the same goals
 * (sharing degree, balance, stickiness); the exact partition-to-member
 * choice differs, which is not part of any contract.
 *
 * Pure: the records it leads to are replayed without it.
 */
import type { Assignment } from './consumer-group.js';

export interface ShareAssignmentMemberSpec {
  /** Ids of the existing topics the member subscribes to. */
  subscribedTopicIds: ReadonlySet<string>;
  /** The member's previous target assignment. */
  assignment: Assignment;
}

export interface ShareAssignmentSpec {
  members: ReadonlyMap<string, ShareAssignmentMemberSpec>;
  /** The assignable partitions (initialized share state) by topic id. */
  assignablePartitions: ReadonlyMap<string, ReadonlySet<number>>;
}

export const SIMPLE_ASSIGNOR_NAME = 'simple';

export function simpleAssign(spec: ShareAssignmentSpec): Map<string, Assignment> {
  const out = new Map<string, Map<string, Set<number>>>();
  const load = new Map<string, number>();
  for (const memberId of spec.members.keys()) {
    out.set(memberId, new Map());
    load.set(memberId, 0);
  }
  for (const topicId of [...spec.assignablePartitions.keys()].sort()) {
    const subscribers = [...spec.members.keys()].filter((id) => spec.members.get(id)!.subscribedTopicIds.has(topicId)).sort();
    const partitions = [...spec.assignablePartitions.get(topicId)!].sort((a, b) => a - b);
    if (subscribers.length === 0 || partitions.length === 0) continue;
    const holders = assignTopic(spec, { topicId, subscribers, partitions, load });
    for (const [partition, memberIds] of holders) {
      for (const memberId of memberIds) {
        const topics = out.get(memberId)!;
        let set = topics.get(topicId);
        if (set === undefined) topics.set(topicId, (set = new Set()));
        set.add(partition);
      }
    }
  }
  return out as Map<string, Assignment>;
}

interface TopicInput {
  topicId: string;
  subscribers: readonly string[];
  partitions: readonly number[];
  /** Partitions each member holds so far, over every topic (updated). */
  load: Map<string, number>;
}

/** One topic: each partition's holders, `sharing` of them, every member within its quota. */
function assignTopic(spec: ShareAssignmentSpec, input: TopicInput): Map<number, Set<string>> {
  const { topicId, subscribers, partitions, load } = input;
  const sharing = Math.ceil(subscribers.length / partitions.length);
  const slots = sharing * partitions.length;
  const holders = new Map<number, Set<string>>(partitions.map((p) => [p, new Set<string>()]));
  const held = new Map<string, number>(subscribers.map((id) => [id, 0]));
  const previous = (memberId: string) => [...(spec.members.get(memberId)!.assignment.get(topicId) ?? [])].filter((p) => holders.has(p)).sort((a, b) => a - b);
  // Members that held the most keep the larger quotas, so fewer partitions move.
  const byPrevious = [...subscribers].sort((a, b) => previous(b).length - previous(a).length || (a < b ? -1 : a > b ? 1 : 0));
  const base = Math.floor(slots / subscribers.length);
  const extra = slots % subscribers.length;
  const quota = new Map<string, number>(byPrevious.map((id, i) => [id, base + (i < extra ? 1 : 0)]));

  const give = (memberId: string, partition: number) => {
    holders.get(partition)!.add(memberId);
    held.set(memberId, held.get(memberId)! + 1);
    load.set(memberId, load.get(memberId)! + 1);
  };
  for (const memberId of byPrevious) {
    for (const partition of previous(memberId)) {
      if (held.get(memberId)! >= quota.get(memberId)!) break;
      if (holders.get(partition)!.size < sharing) give(memberId, partition);
    }
  }
  for (const partition of partitions) {
    const owners = holders.get(partition)!;
    while (owners.size < sharing) {
      const candidates = subscribers.filter((id) => !owners.has(id));
      const underQuota = candidates.filter((id) => held.get(id)! < quota.get(id)!);
      const pool = underQuota.length > 0 ? underQuota : candidates;
      if (pool.length === 0) break;
      give(leastLoaded(pool, load), partition);
    }
  }
  return holders;
}

function leastLoaded(memberIds: readonly string[], load: ReadonlyMap<string, number>): string {
  let best = memberIds[0]!;
  for (const id of memberIds) if (load.get(id)! < load.get(best)!) best = id;
  return best;
}
