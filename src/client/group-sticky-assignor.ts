/**
 * The `cooperative-sticky` assignor (KIP-429 over KIP-54's sticky assignor):
 * a balanced assignment that keeps as many previously owned partitions as
 * balance allows, minus the partitions that change owner. Those are left
 * out of this round's assignment so their old owner revokes them first; the
 * old owner then rejoins and the next rebalance hands them to the new one.
 *
 * Two builders, chosen as Kafka chooses them:
 * - constrained (every member subscribes to the same topics): members keep
 *   up to their quota (floor or ceil of partitions / members) of owned
 *   partitions, then the rest are dealt round-robin to members under quota;
 * - general (subscriptions differ): keep owned partitions, give each
 *   unassigned partition to the least loaded eligible member, then move
 *   partitions from heavier to lighter members while that improves balance,
 *   preferring a partition's previous owner.
 *
 * Kafka's result depends on the iteration order of Java HashMaps and
 * HashSets at a few points (which member keeps its extra partition first,
 * which partition of a reversed movement is moved). This file reproduces
 * those orders (JavaHashOrder) so the leader's result is the one Kafka's
 * assignor gives for the same subscriptions; the unit tests compare with
 * results captured from kafka-clients 4.4.0. Rack awareness is left out
 * (Spool's client sends no rack).
 */
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { compareStrings, type MemberSubscription, type PartitionAssignor } from './group-assignors.js';

const DEFAULT_GENERATION = -1;

/** Java's String.hashCode. */
export function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0;
  return hash;
}

/** Kafka's TopicPartition.hashCode. */
export function javaTopicPartitionHash(tp: TopicPartition): number {
  return (Math.imul(31, 31 + tp.partition) + javaStringHash(tp.topic)) | 0;
}

/** The table size of a `new HashMap<>()` after `size` puts (16, doubled past 0.75 load). */
export function javaTableSize(size: number): number {
  let capacity = 16;
  while (size > capacity * 0.75) capacity *= 2;
  return capacity;
}

/**
 * `items` in the order a Java HashMap/HashSet with `capacity` buckets
 * iterates them when they were inserted in the given order: by bucket, then
 * by insertion within a bucket.
 */
export function javaHashOrder<T>(items: readonly T[], hash: (item: T) => number, capacity = javaTableSize(items.length)): T[] {
  const bucket = (item: T): number => {
    const h = hash(item);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return items.map((item, index) => ({ item, index, bucket: bucket(item) }))
    .sort((a, b) => a.bucket - b.bucket || a.index - b.index)
    .map((entry) => entry.item);
}

const sameTp = (a: TopicPartition, b: TopicPartition): boolean => a.topic === b.topic && a.partition === b.partition;

interface MemberData {
  partitions: readonly TopicPartition[];
  generation: number | null;
}

/** CooperativeStickyAssignor's member data: the v2+ GenerationId field, else the generation in UserData. */
function memberData(subscription: MemberSubscription): MemberData {
  if (subscription.generationId >= 0) return { partitions: subscription.ownedPartitions, generation: subscription.generationId };
  const userData = subscription.userData;
  if (userData === null) return { partitions: subscription.ownedPartitions, generation: null };
  const generation = userData.length >= 4 ? userData.readInt32BE(0) : DEFAULT_GENERATION;
  return { partitions: subscription.ownedPartitions, generation };
}

/** The UserData Kafka's cooperative-sticky assignor sends: its last generation as an int32. */
export function cooperativeStickyUserData(generationId: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(generationId);
  return buffer;
}

export const CooperativeStickyAssignor: PartitionAssignor = {
  name: 'cooperative-sticky',
  supportedProtocols: ['COOPERATIVE', 'EAGER'],
  subscriptionUserData: (generationId) => cooperativeStickyUserData(generationId),
  assign(partitionsPerTopic, subscriptions) {
    return assignCooperativeSticky(partitionsPerTopic, subscriptions);
  },
};

export function assignCooperativeSticky(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: readonly MemberSubscription[]): Map<string, TopicPartition[]> {
  // The leader's `subscriptions` is a HashMap filled in JoinGroup member order.
  const ordered = javaHashOrder(subscriptions, (s) => javaStringHash(s.memberId));
  const owned = ownedPartitionsOf(partitionsPerTopic, ordered);
  if (owned.allEqual) {
    const builder = new ConstrainedBuilder(partitionsPerTopic, owned.consumerToOwned, owned.multipleOwners);
    const assignment = builder.build();
    return withoutTransfers(assignment, builder.transferring);
  }
  const general = new GeneralBuilder(partitionsPerTopic, owned.consumerToOwned, ordered, owned.maxGeneration);
  const assignment = general.build();
  return withoutTransfers(assignment, transfersOf(ordered, assignment));
}

/** Partitions that move to a member from a member that must revoke them first are withheld this round. */
function withoutTransfers(assignment: Map<string, TopicPartition[]>, transferring: ReadonlyMap<string, string>): Map<string, TopicPartition[]> {
  const out = new Map<string, TopicPartition[]>();
  for (const [member, partitions] of assignment) out.set(member, partitions.filter((tp) => transferring.get(topicPartitionKey(tp)) !== member));
  return out;
}

/** The general case's transfers: partitions newly assigned to one member that another member owned. */
function transfersOf(subscriptions: readonly MemberSubscription[], assignment: Map<string, TopicPartition[]>): Map<string, string> {
  const added = new Map<string, string>();
  const revoked = new Set<string>();
  for (const [member, assigned] of assignment) {
    const ownedList = subscriptions.find((s) => s.memberId === member)?.ownedPartitions ?? [];
    const ownedKeys = new Set(ownedList.map(topicPartitionKey));
    const assignedKeys = new Set(assigned.map(topicPartitionKey));
    for (const tp of assigned) if (!ownedKeys.has(topicPartitionKey(tp))) added.set(topicPartitionKey(tp), member);
    for (const tp of ownedList) if (!assignedKeys.has(topicPartitionKey(tp))) revoked.add(topicPartitionKey(tp));
  }
  for (const key of [...added.keys()]) if (!revoked.has(key)) added.delete(key);
  return added;
}

interface OwnedPartitions {
  allEqual: boolean;
  /** Member -> still-subscribed owned partitions, in HashMap iteration order. */
  consumerToOwned: Map<string, TopicPartition[]>;
  multipleOwners: Set<string>;
  maxGeneration: number;
}

/** Kafka's allSubscriptionsEqual: also settles partitions claimed by several members (the highest generation wins). */
function ownedPartitionsOf(partitionsPerTopic: ReadonlyMap<string, number>, subscriptions: readonly MemberSubscription[]): OwnedPartitions {
  let allEqual = true;
  let subscribed: Set<string> | null = null;
  const consumerToOwned = new Map<string, TopicPartition[]>();
  const multipleOwners = new Set<string>();
  const previousOwner = new Map<string, string>();
  const byId = new Map(subscriptions.map((s) => [s.memberId, s]));
  let maxGeneration = DEFAULT_GENERATION;
  for (const subscription of subscriptions) {
    const consumer = subscription.memberId;
    if (subscribed === null || subscribed.size === 0) subscribed = new Set(subscription.topics);
    else if (allEqual && !(new Set(subscription.topics).size === subscribed.size && subscription.topics.every((t) => subscribed!.has(t)))) allEqual = false;
    const data = memberData(subscription);
    const generation = data.generation ?? DEFAULT_GENERATION;
    maxGeneration = Math.max(maxGeneration, generation);
    const ownedList: TopicPartition[] = [];
    consumerToOwned.set(consumer, ownedList);
    for (const tp of data.partitions) {
      if (!partitionsPerTopic.has(tp.topic)) continue;
      const other = previousOwner.get(topicPartitionKey(tp));
      if (other === undefined) {
        ownedList.push(tp);
        previousOwner.set(topicPartitionKey(tp), consumer);
        continue;
      }
      const otherGeneration = byId.get(other)!.generationId >= 0 ? byId.get(other)!.generationId : DEFAULT_GENERATION;
      if (generation === otherGeneration) {
        multipleOwners.add(topicPartitionKey(tp));
        removeTp(consumerToOwned.get(other)!, tp);
        previousOwner.set(topicPartitionKey(tp), consumer);
      } else if (generation > otherGeneration) {
        ownedList.push(tp);
        removeTp(consumerToOwned.get(other)!, tp);
        previousOwner.set(topicPartitionKey(tp), consumer);
      }
    }
  }
  return { allEqual, consumerToOwned, multipleOwners, maxGeneration };
}

function removeTp(list: TopicPartition[], tp: TopicPartition): void {
  const index = list.findIndex((x) => sameTp(x, tp));
  if (index >= 0) list.splice(index, 1);
}

function totalPartitions(partitionsPerTopic: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const count of partitionsPerTopic.values()) total += count;
  return total;
}

/** Every partition of `topics`, in the given topic order. */
function partitionsOfTopics(partitionsPerTopic: ReadonlyMap<string, number>, topics: readonly string[]): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const topic of topics) for (let partition = 0; partition < partitionsPerTopic.get(topic)!; partition++) out.push({ topic, partition });
  return out;
}

/** Kafka's ConstrainedAssignmentBuilder, without racks. */
class ConstrainedBuilder {
  /** Partition -> member it moves to from a member that still owns it. */
  readonly transferring = new Map<string, string>();
  private readonly maybeRevoked = new Map<string, string>();
  private unfilledUnderMin: string[] = [];
  private unfilledExactlyMin: string[] = [];
  private readonly minQuota: number;
  private readonly maxQuota: number;
  private readonly expectedOverMin: number;
  private currentOverMin = 0;
  private readonly assignment = new Map<string, TopicPartition[]>();
  private readonly assigned: TopicPartition[] = [];

  constructor(
    private readonly partitionsPerTopic: ReadonlyMap<string, number>,
    private readonly currentAssignment: Map<string, TopicPartition[]>,
    private readonly multipleOwners: Set<string>,
  ) {
    const total = totalPartitions(partitionsPerTopic);
    const consumers = currentAssignment.size;
    this.minQuota = Math.floor(total / consumers);
    this.maxQuota = Math.ceil(total / consumers);
    this.expectedOverMin = total % consumers;
    for (const consumer of currentAssignment.keys()) this.assignment.set(consumer, []);
  }

  build(): Map<string, TopicPartition[]> {
    this.assignOwned();
    const unassigned = this.unassignedPartitions();
    this.unfilledUnderMin.sort(compareStrings);
    this.unfilledExactlyMin.sort(compareStrings);
    this.assignRoundRobin(unassigned);
    return this.assignment;
  }

  private assignOwned(): void {
    for (const [consumer, ownedList] of this.currentAssignment) {
      const owned = [...ownedList]
        .sort((a, b) => a.partition - b.partition || compareStrings(a.topic, b.topic))
        .filter((tp) => !this.multipleOwners.has(topicPartitionKey(tp)));
      const target = this.assignment.get(consumer)!;
      if (owned.length < this.minQuota) {
        target.push(...owned);
        this.assigned.push(...owned);
        this.unfilledUnderMin.push(consumer);
      } else if (owned.length >= this.maxQuota && this.currentOverMin < this.expectedOverMin) {
        this.currentOverMin++;
        if (this.currentOverMin === this.expectedOverMin) this.unfilledExactlyMin = [];
        this.keep(consumer, owned, this.maxQuota);
      } else {
        this.keep(consumer, owned, this.minQuota);
        if (this.currentOverMin < this.expectedOverMin) this.unfilledExactlyMin.push(consumer);
      }
    }
  }

  private keep(consumer: string, owned: readonly TopicPartition[], count: number): void {
    const kept = owned.slice(0, count);
    this.assignment.get(consumer)!.push(...kept);
    this.assigned.push(...kept);
    for (const tp of owned.slice(count)) this.maybeRevoked.set(topicPartitionKey(tp), consumer);
  }

  private unassignedPartitions(): TopicPartition[] {
    const topics = [...this.partitionsPerTopic.keys()].sort(compareStrings);
    const taken = new Set(this.assigned.map(topicPartitionKey));
    return partitionsOfTopics(this.partitionsPerTopic, topics).filter((tp) => !taken.has(topicPartitionKey(tp)));
  }

  /** Deals partitions to members under quota in turn, then to members at minQuota that may take one more. */
  private assignRoundRobin(unassigned: readonly TopicPartition[]): void {
    let position = 0;
    for (const tp of unassigned) {
      let consumer: string;
      if (position < this.unfilledUnderMin.length) {
        consumer = this.unfilledUnderMin[position++]!;
      } else if (this.unfilledUnderMin.length === 0 && this.unfilledExactlyMin.length === 0) {
        throw new Error('cooperative-sticky: no more unfilled consumers to be assigned');
      } else if (this.unfilledUnderMin.length === 0) {
        consumer = this.unfilledExactlyMin.shift()!;
      } else {
        position = 0;
        consumer = this.unfilledUnderMin[position++]!;
      }
      const count = this.assignNew(tp, consumer);
      if (count === this.minQuota) {
        this.unfilledUnderMin.splice(--position, 1);
        this.unfilledExactlyMin.push(consumer);
      } else if (count === this.maxQuota) {
        this.currentOverMin++;
      }
    }
  }

  private assignNew(tp: TopicPartition, consumer: string): number {
    const list = this.assignment.get(consumer)!;
    list.push(tp);
    const previous = this.maybeRevoked.get(topicPartitionKey(tp));
    if ((previous !== undefined && previous !== consumer) || this.multipleOwners.has(topicPartitionKey(tp))) this.transferring.set(topicPartitionKey(tp), consumer);
    return list.length;
  }
}

/**
 * A Java HashSet<TopicPartition>'s iteration order: bucket by
 * TopicPartition.hashCode, insertion order within a bucket; the table only
 * grows.
 */
class JavaTopicPartitionSet {
  private items: TopicPartition[] = [];
  private capacity = 16;

  get size(): number {
    return this.items.length;
  }

  add(tp: TopicPartition): void {
    if (this.items.some((x) => sameTp(x, tp))) return;
    this.items.push(tp);
    while (this.items.length > this.capacity * 0.75) this.capacity *= 2;
  }

  delete(tp: TopicPartition): void {
    this.items = this.items.filter((x) => !sameTp(x, tp));
  }

  first(): TopicPartition {
    return javaHashOrder(this.items, javaTopicPartitionHash, this.capacity)[0]!;
  }
}

/** Kafka's PartitionMovements: where each partition moved during this assignment. */
class PartitionMovements {
  private readonly byTopic = new Map<string, Map<string, JavaTopicPartitionSet>>();
  private readonly movements = new Map<string, { src: string; dst: string }>();

  private remove(tp: TopicPartition): { src: string; dst: string } {
    const pair = this.movements.get(topicPartitionKey(tp))!;
    this.movements.delete(topicPartitionKey(tp));
    const topicMoves = this.byTopic.get(tp.topic)!;
    const pairKey = `${pair.src}\u0000${pair.dst}`;
    topicMoves.get(pairKey)!.delete(tp);
    if (topicMoves.get(pairKey)!.size === 0) topicMoves.delete(pairKey);
    if (topicMoves.size === 0) this.byTopic.delete(tp.topic);
    return pair;
  }

  private add(tp: TopicPartition, pair: { src: string; dst: string }): void {
    this.movements.set(topicPartitionKey(tp), pair);
    let topicMoves = this.byTopic.get(tp.topic);
    if (topicMoves === undefined) this.byTopic.set(tp.topic, topicMoves = new Map());
    const pairKey = `${pair.src}\u0000${pair.dst}`;
    let set = topicMoves.get(pairKey);
    if (set === undefined) topicMoves.set(pairKey, set = new JavaTopicPartitionSet());
    set.add(tp);
  }

  move(tp: TopicPartition, oldConsumer: string, newConsumer: string): void {
    if (!this.movements.has(topicPartitionKey(tp))) {
      this.add(tp, { src: oldConsumer, dst: newConsumer });
      return;
    }
    const existing = this.remove(tp);
    if (existing.src !== newConsumer) this.add(tp, { src: existing.src, dst: newConsumer });
  }

  /** If a partition of the same topic moved the opposite way, move that one back instead. */
  actualPartitionToMove(tp: TopicPartition, oldConsumer: string, newConsumer: string): TopicPartition {
    const topicMoves = this.byTopic.get(tp.topic);
    if (topicMoves === undefined) return tp;
    const source = this.movements.get(topicPartitionKey(tp))?.src ?? oldConsumer;
    const reverse = topicMoves.get(`${newConsumer}\u0000${source}`);
    return reverse === undefined ? tp : reverse.first();
  }
}

/** Kafka's GeneralAssignmentBuilder, without racks. */
class GeneralBuilder {
  private readonly topicConsumers = new Map<string, string[]>();
  private readonly consumerTopics = new Map<string, string[]>();
  private readonly partitionConsumer = new Map<string, string>();
  private readonly sortedAllPartitions: TopicPartition[];
  /** Kafka's TreeSet ordered by (assignment size, member id); kept sorted by re-inserting around every change. */
  private sortedConsumers: string[] = [];
  private readonly movements = new PartitionMovements();
  private readonly total: number;
  private revocationRequired = false;

  constructor(
    private readonly partitionsPerTopic: ReadonlyMap<string, number>,
    private readonly current: Map<string, TopicPartition[]>,
    private readonly subscriptions: readonly MemberSubscription[],
    private readonly maxGeneration: number,
  ) {
    this.total = totalPartitions(partitionsPerTopic);
    for (const topic of partitionsPerTopic.keys()) this.topicConsumers.set(topic, []);
    for (const subscription of subscriptions) {
      const topics = subscription.topics.filter((t) => partitionsPerTopic.has(t));
      this.consumerTopics.set(subscription.memberId, topics);
      for (const topic of topics) this.topicConsumers.get(topic)!.push(subscription.memberId);
      if (!current.has(subscription.memberId)) current.set(subscription.memberId, []);
    }
    for (const [consumer, list] of current) for (const tp of list) this.partitionConsumer.set(topicPartitionKey(tp), consumer);
    const topics = [...this.topicConsumers.keys()].sort((a, b) => this.topicConsumers.get(a)!.length - this.topicConsumers.get(b)!.length || compareStrings(a, b));
    this.sortedAllPartitions = partitionsOfTopics(partitionsPerTopic, topics);
  }

  private compareConsumers = (a: string, b: string): number => this.current.get(a)!.length - this.current.get(b)!.length || compareStrings(a, b);

  private insertSorted(consumer: string): void {
    if (this.sortedConsumers.includes(consumer)) return;
    let low = 0;
    let high = this.sortedConsumers.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.compareConsumers(this.sortedConsumers[mid]!, consumer) < 0) low = mid + 1;
      else high = mid;
    }
    this.sortedConsumers.splice(low, 0, consumer);
  }

  private removeSorted(consumer: string): void {
    const index = this.sortedConsumers.indexOf(consumer);
    if (index >= 0) this.sortedConsumers.splice(index, 1);
  }

  build(): Map<string, TopicPartition[]> {
    const previous = this.previousAssignment();
    const assigned = this.keepOwned();
    const taken = new Set(assigned.map(topicPartitionKey));
    const unassigned = assigned.length === 0 ? this.sortedAllPartitions : this.sortedAllPartitions.filter((tp) => !taken.has(topicPartitionKey(tp)));
    for (const consumer of this.current.keys()) this.insertSorted(consumer);
    this.balance(previous, unassigned);
    return this.current;
  }

  /** Partitions' owners in the generation before the newest one (a partition prefers to return there). */
  private previousAssignment(): Map<string, { consumer: string; generation: number }> {
    const previous = new Map<string, { consumer: string; generation: number }>();
    const update = (partitions: readonly TopicPartition[], consumer: string, generation: number): void => {
      for (const tp of partitions) {
        const existing = previous.get(topicPartitionKey(tp));
        if (existing === undefined || generation > existing.generation) previous.set(topicPartitionKey(tp), { consumer, generation });
      }
    };
    for (const subscription of this.subscriptions) {
      const data = memberData(subscription);
      if (data.generation !== null && data.generation < this.maxGeneration) update(data.partitions, subscription.memberId, data.generation);
      else if (data.generation === null && this.maxGeneration > DEFAULT_GENERATION) update(data.partitions, subscription.memberId, DEFAULT_GENERATION);
    }
    return previous;
  }

  private keepOwned(): TopicPartition[] {
    const assigned: TopicPartition[] = [];
    for (const [consumer, list] of this.current) {
      const subscription = this.subscriptions.find((s) => s.memberId === consumer)!;
      const kept: TopicPartition[] = [];
      for (const tp of list) {
        if (!this.topicConsumers.has(tp.topic)) {
          this.partitionConsumer.delete(topicPartitionKey(tp));
        } else if (!subscription.topics.includes(tp.topic)) {
          this.revocationRequired = true;
        } else {
          kept.push(tp);
          assigned.push(tp);
        }
      }
      list.splice(0, list.length, ...kept);
    }
    return assigned;
  }

  private maxAssignmentSize(topics: readonly string[]): number {
    if (topics.length === this.partitionsPerTopic.size) return this.total;
    return topics.reduce((sum, topic) => sum + this.partitionsPerTopic.get(topic)!, 0);
  }

  private isBalanced(): boolean {
    const min = this.current.get(this.sortedConsumers[0]!)!.length;
    const max = this.current.get(this.sortedConsumers[this.sortedConsumers.length - 1]!)!.length;
    if (min >= max - 1) return true;
    const owners = new Map<string, string>();
    for (const [consumer, list] of this.current) for (const tp of list) owners.set(topicPartitionKey(tp), consumer);
    for (const consumer of this.sortedConsumers) {
      const mine = this.current.get(consumer)!;
      const topics = this.consumerTopics.get(consumer)!;
      if (mine.length === this.maxAssignmentSize(topics)) continue;
      const mineKeys = new Set(mine.map(topicPartitionKey));
      for (const topic of topics) {
        for (let partition = 0; partition < this.partitionsPerTopic.get(topic)!; partition++) {
          const key = topicPartitionKey({ topic, partition });
          if (mineKeys.has(key)) continue;
          const other = owners.get(key)!;
          if (mine.length + 1 < this.current.get(other)!.length) return false;
        }
      }
    }
    return true;
  }

  private balanceScore(assignment: ReadonlyMap<string, readonly TopicPartition[]>): number {
    const sizes = [...assignment.values()].map((list) => list.length);
    let score = 0;
    for (let i = 0; i < sizes.length; i++) for (let j = i + 1; j < sizes.length; j++) score += Math.abs(sizes[i]! - sizes[j]!);
    return score;
  }

  private assignToLeastLoaded(tp: TopicPartition): void {
    for (const consumer of this.sortedConsumers) {
      if (!this.consumerTopics.get(consumer)!.includes(tp.topic)) continue;
      this.removeSorted(consumer);
      this.current.get(consumer)!.push(tp);
      this.partitionConsumer.set(topicPartitionKey(tp), consumer);
      this.insertSorted(consumer);
      return;
    }
  }

  private canTopicMove(topic: string): boolean {
    return this.topicConsumers.get(topic)!.length >= 2;
  }

  private canConsumerMove(consumer: string): boolean {
    const list = this.current.get(consumer)!;
    if (list.length < this.maxAssignmentSize(this.consumerTopics.get(consumer)!)) return true;
    return list.some((tp) => this.canTopicMove(tp.topic));
  }

  private balance(previous: Map<string, { consumer: string; generation: number }>, unassignedInput: TopicPartition[]): void {
    const initializing = this.current.get(this.sortedConsumers[this.sortedConsumers.length - 1]!)!.length === 0;
    for (const tp of unassignedInput) if (this.topicConsumers.get(tp.topic)!.length > 0) this.assignToLeastLoaded(tp);
    const movable = (tp: TopicPartition): boolean => this.canTopicMove(tp.topic);
    const sortedAll = this.sortedAllPartitions.filter(movable);
    const unassigned = unassignedInput.filter(movable);
    const fixed = new Map<string, TopicPartition[]>();
    for (const consumer of this.consumerTopics.keys()) {
      if (this.canConsumerMove(consumer)) continue;
      this.removeSorted(consumer);
      fixed.set(consumer, this.current.get(consumer)!);
      this.current.delete(consumer);
    }
    const before = new Map([...this.current].map(([c, list]) => [c, [...list]]));
    const beforeOwners = new Map(this.partitionConsumer);
    if (!this.revocationRequired) this.performReassignments(unassigned, previous);
    const moved = this.performReassignments(sortedAll, previous);
    if (!initializing && moved && this.balanceScore(this.current) >= this.balanceScore(before)) {
      this.current.clear();
      for (const [c, list] of before) this.current.set(c, list);
      this.partitionConsumer.clear();
      for (const [k, v] of beforeOwners) this.partitionConsumer.set(k, v);
    }
    for (const [consumer, list] of fixed) {
      this.current.set(consumer, list);
      this.sortedConsumers.push(consumer);
    }
  }

  private performReassignments(partitions: readonly TopicPartition[], previous: Map<string, { consumer: string; generation: number }>): boolean {
    let performed = false;
    let modified: boolean;
    do {
      modified = false;
      for (const tp of partitions) {
        if (this.isBalanced()) break;
        const consumer = this.partitionConsumer.get(topicPartitionKey(tp))!;
        const before = previous.get(topicPartitionKey(tp));
        if (before !== undefined && this.current.get(consumer)!.length > this.current.get(before.consumer)!.length + 1) {
          this.reassign(tp, before.consumer);
          performed = modified = true;
          continue;
        }
        for (const other of this.topicConsumers.get(tp.topic)!) {
          if (this.current.get(consumer)!.length > this.current.get(other)!.length + 1) {
            this.reassign(tp, this.sortedConsumers.find((c) => this.consumerTopics.get(c)!.includes(tp.topic))!);
            performed = modified = true;
            break;
          }
        }
      }
    } while (modified);
    return performed;
  }

  private reassign(tp: TopicPartition, newConsumer: string): void {
    const consumer = this.partitionConsumer.get(topicPartitionKey(tp))!;
    const actual = this.movements.actualPartitionToMove(tp, consumer, newConsumer);
    const oldConsumer = this.partitionConsumer.get(topicPartitionKey(actual))!;
    this.removeSorted(oldConsumer);
    this.removeSorted(newConsumer);
    this.movements.move(actual, oldConsumer, newConsumer);
    removeTp(this.current.get(oldConsumer)!, actual);
    this.current.get(newConsumer)!.push(actual);
    this.partitionConsumer.set(topicPartitionKey(actual), newConsumer);
    this.insertSorted(newConsumer);
    this.insertSorted(oldConsumer);
  }
}
