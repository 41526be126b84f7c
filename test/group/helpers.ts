/**
 * Test harness for the group coordinator: an in-memory `__consumer_offsets`
 * log, a metadata image with chosen topics, and a coordinator driven by a
 * ManualClock (time moves only when a test advances it) and a seeded random.
 */
import type { CoordinatorLog } from '../../src/coordinator/runtime.js';
import { GroupCoordinator } from '../../src/group/coordinator.js';
import { DEFAULT_GROUP_COORDINATOR_CONFIG, type GroupCoordinatorConfig } from '../../src/group/config.js';
import { ManualClock, SeededRandom, realEnv, type Env, type TimerHandle, type Timers } from '../../src/io/env.js';
import type { MetadataImage, PartitionRegistration, TopicImage } from '../../src/metadata/image.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { iterateBatches, setBaseOffset } from '../../src/protocol/records/batch.js';
import { decodeRecords } from '../../src/protocol/records/records.js';
import { decodeGroupRecord, type GroupRecord } from '../../src/group/records.js';
import type { SharePersister } from '../../src/share/persister.js';
import type { LatestOffsetLookup } from '../../src/group/share-state.js';

/** A partition log kept in memory: append assigns offsets, read returns whole batches. */
export class MemoryLog implements CoordinatorLog {
  readonly batches = new Map<number, Buffer[]>();
  private readonly nextOffsets = new Map<number, number>();
  /** When set, appends fail with this error code. */
  failAppendsWith: number | null = null;
  /** When set, reads wait for this promise (a slow load). */
  readGate: Promise<void> | null = null;

  async append(partition: number, batch: Buffer): Promise<{ errorCode: number; baseOffset: number }> {
    if (this.failAppendsWith !== null) return { errorCode: this.failAppendsWith, baseOffset: -1 };
    const baseOffset = this.nextOffsets.get(partition) ?? 0;
    const copy = Buffer.from(batch);
    setBaseOffset(copy, 0, baseOffset);
    const header = [...iterateBatches(copy)][0]!.header;
    this.nextOffsets.set(partition, header.lastOffset + 1);
    const list = this.batches.get(partition) ?? [];
    list.push(copy);
    this.batches.set(partition, list);
    return { errorCode: ErrorCode.NONE, baseOffset };
  }

  async read(partition: number, fromOffset: number): Promise<{ errorCode: number; records: Buffer }> {
    if (this.readGate !== null) await this.readGate;
    const list = (this.batches.get(partition) ?? []).filter((b) => [...iterateBatches(b)][0]!.header.lastOffset >= fromOffset);
    return { errorCode: ErrorCode.NONE, records: Buffer.concat(list) };
  }

  /** Every record written to the partition, decoded. */
  records(partition: number): GroupRecord[] {
    const out: GroupRecord[] = [];
    for (const batch of this.batches.get(partition) ?? []) {
      const decoded = decodeRecords(batch);
      if (decoded.error !== null) throw new Error(decoded.error.message);
      for (const record of decoded.records) {
        const result = decodeGroupRecord(record.key!, record.value);
        if (result.ok) out.push(result.record);
      }
    }
    return out;
  }

  allRecords(): GroupRecord[] {
    return [...this.batches.keys()].flatMap((p) => this.records(p));
  }
}

export interface TopicSpec {
  name: string;
  partitions: number;
  id?: string;
}

/** A metadata image holding the given topics (ids derived from names unless given). */
export function imageWith(topics: readonly TopicSpec[], offset = 1): MetadataImage {
  const byName = new Map<string, TopicImage>();
  const byId = new Map<string, TopicImage>();
  for (const spec of topics) {
    const id = spec.id ?? topicIdFor(spec.name);
    const partitions = new Map<number, PartitionRegistration>();
    for (let p = 0; p < spec.partitions; p++) {
      partitions.set(p, {
        topicId: id,
        topicName: spec.name,
        partition: p,
        replicas: [1],
        isr: [1],
        elr: [],
        lastKnownElr: [],
        removingReplicas: [],
        addingReplicas: [],
        leader: 1,
        leaderEpoch: 0,
        partitionEpoch: 0,
      });
    }
    const topic: TopicImage = { name: spec.name, id, partitions, configs: new Map() };
    byName.set(spec.name, topic);
    byId.set(id, topic);
  }
  return {
    offset,
    clusterId: 'test-cluster',
    topicsByName: byName,
    topicsById: byId,
    brokers: new Map(),
    features: new Map(),
    brokerConfigs: new Map(), groupConfigs: new Map(),
    controllers: new Map(),
    nextProducerId: 0,
    scramCredentials: new Map(),
    acls: new Map(),
    clientQuotas: new Map(),
  };
}

/** A stable 16-byte id per topic name, base64url like Kafka's Uuid text. */
export function topicIdFor(name: string): string {
  const bytes = Buffer.alloc(16);
  Buffer.from(name).copy(bytes, 0, 0, 16);
  bytes[15] = name.length;
  return bytes.toString('base64url');
}

export interface Harness {
  clock: ManualClock;
  log: MemoryLog;
  coordinator: GroupCoordinator;
  config: GroupCoordinatorConfig;
  setImage(image: MetadataImage): void;
  /** Advances time and waits for every operation the timers queued. */
  advance(ms: number): Promise<void>;
  drain(): Promise<void>;
  /** Stops this coordinator and loads a new one from the same log (a restart or a coordinator move). */
  reload(): Promise<GroupCoordinator>;
}

export const silent = { info() {}, warn() {}, error() {} };

export async function harness(
  options: { config?: Partial<GroupCoordinatorConfig>; topics?: readonly TopicSpec[]; log?: MemoryLog; seed?: number; persister?: SharePersister; latestOffset?: LatestOffsetLookup } = {},
): Promise<Harness> {
  const clock = new ManualClock();
  const timers = new DueTimers(clock);
  const log = options.log ?? new MemoryLog();
  const config: GroupCoordinatorConfig = { ...DEFAULT_GROUP_COORDINATOR_CONFIG, offsetsTopicPartitions: 4, ...options.config };
  let image = imageWith(options.topics ?? [{ name: 'events', partitions: 6 }]);
  const env: Env = { ...realEnv, clock, timers, random: new SeededRandom(options.seed ?? 7) };
  const build = async () => {
    const shareOptions = { ...(options.persister === undefined ? {} : { persister: options.persister }), ...(options.latestOffset === undefined ? {} : { latestOffset: options.latestOffset }) };
    const coordinator = new GroupCoordinator({ nodeId: 1, config, env, log, logger: silent, image: () => image, ...shareOptions });
    for (let p = 0; p < config.offsetsTopicPartitions; p++) coordinator.runtime.becomeLeader(p, 0);
    await coordinator.runtime.drain();
    return coordinator;
  };
  const coordinator = await build();
  const h: Harness = {
    clock,
    log,
    coordinator,
    config,
    setImage: (next) => {
      image = next;
    },
    drain: async () => {
      await coordinator.runtime.drain();
      await settle();
    },
    advance: async (ms) => {
      // Step from one due timer to the next, letting the operations each one queues run before time moves on.
      const targetMs = clock.nowMs() + ms;
      for (;;) {
        await coordinator.runtime.drain();
        await settle();
        const nextMs = timers.nextDueMs();
        if (nextMs === null || nextMs > targetMs) break;
        clock.advance(Math.max(0, nextMs - clock.nowMs()));
      }
      clock.advance(targetMs - clock.nowMs());
      await coordinator.runtime.drain();
      await settle();
    },
    reload: async () => {
      await coordinator.shutdown();
      return build();
    },
  };
  return h;
}

/** ManualClock timers that also tell when the next one is due, so a test can step through them. */
class DueTimers implements Timers {
  private readonly due = new Map<number, number>();
  private sequence = 0;

  constructor(private readonly clock: ManualClock) {}

  schedule(delayMs: number, callback: () => void): TimerHandle {
    const id = ++this.sequence;
    this.due.set(id, this.clock.nowMs() + Math.max(0, delayMs));
    const handle = this.clock.schedule(delayMs, () => {
      this.due.delete(id);
      callback();
    });
    return {
      cancel: () => {
        this.due.delete(id);
        handle.cancel();
      },
    };
  }

  defer(callback: () => void): void {
    this.schedule(0, callback);
  }

  nextDueMs(): number | null {
    let next: number | null = null;
    for (const dueMs of this.due.values()) if (next === null || dueMs < next) next = dueMs;
    return next;
  }
}

/** Lets queued promise callbacks run (operations settle on microtasks). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
