/**
 * Where a new partition's replicas go: Kafka's StripedReplicaPlacer.
 *
 * Usable brokers are the registered ones not in controlled shutdown, fenced
 * or not, grouped by rack (brokers without a rack form one rack of their
 * own). Racks are taken in name order from a random starting rack, each
 * partition starting one rack further; within a rack brokers are taken in
 * id order from a random offset, advancing each round. A partition's first
 * replica (its preferred leader) is always an unfenced broker; the others
 * are the next brokers of the following racks, one per rack in turn, so
 * replicas spread over racks before any rack gets a second one, unfenced
 * brokers before fenced ones. After as many partitions as there are
 * unfenced brokers, racks and brokers are shuffled so the same
 * assignments do not simply repeat.
 *
 * The algorithm and its refusals are Kafka's; the random draws come from
 * Spool's seeded Random, so the exact assignments differ from Kafka's.
 */
import type { Random } from '../io/random.js';
import type { MetadataImage } from '../metadata/image.js';

export class InvalidReplicationFactorError extends Error {
  override readonly name = 'InvalidReplicationFactorError';
}

interface UsableBroker {
  id: number;
  rack: string | null;
  fenced: boolean;
}

/** Brokers that can take new replicas: registered and not shutting down (a broker fenced after its shutdown is usable again, fenced). */
function usableBrokers(image: MetadataImage): UsableBroker[] {
  return [...image.brokers.values()]
    .filter((broker) => !(broker.inControlledShutdown && !broker.fenced))
    .map((broker) => ({ id: broker.id, rack: broker.rack, fenced: broker.fenced }));
}

/** Java's Collections.shuffle: Fisher-Yates from the end. */
function shuffle<T>(items: T[], random: Random): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.nextInt(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

/** One rack's fenced or unfenced brokers, iterated from an offset that moves each epoch. */
class BrokerList {
  readonly brokers: number[] = [];
  private index = 0;
  private offset = 0;
  private epoch = 0;

  initialize(random: Random): void {
    if (this.brokers.length === 0) return;
    this.brokers.sort((a, b) => a - b);
    this.offset = random.nextInt(this.brokers.length);
  }

  /** The next broker of this epoch, or -1 once every broker was returned in it. */
  next(epoch: number): number {
    if (this.brokers.length === 0) return -1;
    if (this.epoch !== epoch) {
      this.epoch = epoch;
      this.index = 0;
      this.offset = (this.offset + 1) % this.brokers.length;
    }
    if (this.index >= this.brokers.length) return -1;
    const broker = this.brokers[(this.index + this.offset) % this.brokers.length]!;
    this.index++;
    return broker;
  }
}

class Rack {
  readonly fenced = new BrokerList();
  readonly unfenced = new BrokerList();

  /** Unfenced brokers first, then fenced ones. */
  next(epoch: number): number {
    const unfenced = this.unfenced.next(epoch);
    return unfenced >= 0 ? unfenced : this.fenced.next(epoch);
  }
}

/** Racks without a name first, then by name (Kafka's OptionalStringComparator). */
function compareRackNames(a: string | null, b: string | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

class RackList {
  private readonly racks = new Map<string | null, Rack>();
  private readonly rackNames: (string | null)[] = [];
  readonly totalBrokers: number;
  readonly unfencedBrokers: number;
  private epoch = 0;
  private offset: number;

  constructor(
    private readonly random: Random,
    brokers: readonly UsableBroker[],
  ) {
    for (const broker of brokers) {
      let rack = this.racks.get(broker.rack);
      if (rack === undefined) {
        rack = new Rack();
        this.racks.set(broker.rack, rack);
        this.rackNames.push(broker.rack);
      }
      (broker.fenced ? rack.fenced : rack.unfenced).brokers.push(broker.id);
    }
    this.rackNames.sort(compareRackNames);
    for (const name of this.rackNames) {
      const rack = this.racks.get(name)!;
      rack.fenced.initialize(random);
      rack.unfenced.initialize(random);
    }
    this.totalBrokers = brokers.length;
    this.unfencedBrokers = brokers.filter((broker) => !broker.fenced).length;
    this.offset = this.rackNames.length === 0 ? 0 : random.nextInt(this.rackNames.length);
  }

  place(replicationFactor: number): number[] {
    // Once every unfenced broker has led a partition, shuffle so the next round differs (never for a single broker).
    if (this.epoch === this.unfencedBrokers && this.unfencedBrokers > 1) {
      this.shuffle();
      this.epoch = 0;
    }
    if (this.offset === this.rackNames.length) this.offset = 0;
    let firstRackIndex = this.offset;
    let leader = this.rack(firstRackIndex).unfenced.next(this.epoch);
    while (leader < 0) {
      firstRackIndex = (firstRackIndex + 1) % this.rackNames.length;
      leader = this.rack(firstRackIndex).unfenced.next(this.epoch);
    }
    const brokers = [leader];
    let rackIndex = this.offset;
    for (let replica = 1; replica < replicationFactor; replica++) {
      let result = -1;
      while (result < 0) {
        // The leader's rack is skipped once, on the first pass over the racks.
        if (rackIndex === firstRackIndex) firstRackIndex = -1;
        else result = this.rack(rackIndex).next(this.epoch);
        rackIndex = (rackIndex + 1) % this.rackNames.length;
      }
      brokers.push(result);
    }
    this.epoch++;
    this.offset++;
    return brokers;
  }

  private rack(index: number): Rack {
    return this.racks.get(this.rackNames[index]!)!;
  }

  private shuffle(): void {
    shuffle(this.rackNames, this.random);
    for (const rack of this.racks.values()) {
      shuffle(rack.fenced.brokers, this.random);
      shuffle(rack.unfenced.brokers, this.random);
    }
  }
}

/** Replica lists for `count` new partitions of `replicationFactor` replicas each, with Kafka's refusals. */
export function placeReplicas(image: MetadataImage, options: { count: number; replicationFactor: number; random: Random }): number[][] {
  const racks = new RackList(options.random, usableBrokers(image));
  const { replicationFactor } = options;
  if (replicationFactor <= 0) throw new InvalidReplicationFactorError(`Invalid replication factor ${replicationFactor}: the replication factor must be positive.`);
  if (racks.unfencedBrokers === 0) throw new InvalidReplicationFactorError('All brokers are currently fenced.');
  if (replicationFactor > racks.totalBrokers) {
    throw new InvalidReplicationFactorError(`The target replication factor of ${replicationFactor} cannot be reached because only ${racks.totalBrokers} broker(s) are registered.`);
  }
  return Array.from({ length: options.count }, () => racks.place(replicationFactor));
}
