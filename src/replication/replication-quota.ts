/**
 * Replication throttles (KIP-73; Kafka's ReplicationQuotaManager): one
 * manager for this broker's leader side, one for its follower side.
 *
 * Which partitions are throttled comes from the topic configs
 * leader.replication.throttled.replicas and
 * follower.replication.throttled.replicas: `*` throttles every partition
 * of the topic, else the `partition:broker` items naming this broker.
 * The bound is the dynamic broker config leader.replication.throttled.rate
 * or follower.replication.throttled.rate, in bytes per second (default
 * Long.MAX_VALUE: never exceeded).
 *
 * The rate is Kafka's SimpleRate over replication.quota.window.num samples
 * of replication.quota.window.size.seconds each, on the injected clock: the
 * bytes recorded in the retained samples divided by the time since the
 * oldest sample began, counted as at least one window (so a first burst is
 * not measured over a few milliseconds). A sample with no event for all the
 * windows' span is reset. The quota is exceeded while that rate is above
 * the bound; bytes are recorded even then (Kafka records and checks apart).
 */

/** What the fetch paths ask of a replication quota (Kafka's ReplicaQuota). */
export interface ReplicaQuota {
  /** False while no partition is throttled: the fetch paths then skip every other check. */
  readonly hasThrottledPartitions: boolean;
  isThrottled(topicPartition: { topic: string; partition: number }): boolean;
  isQuotaExceeded(): boolean;
  record(bytes: number): void;
}

export interface ReplicationQuotaConfig {
  /** replication.quota.window.num. */
  windowCount: number;
  /** replication.quota.window.size.seconds, in ms. */
  windowSizeMs: number;
}

/** Kafka's SampledStat.Sample. */
interface Sample {
  startMs: number;
  lastEventMs: number;
  value: number;
}

/** Kafka's SimpleRate over a WindowedSum, in units per second. */
export class SimpleRate {
  private readonly samples: Sample[] = [];
  private current = 0;

  constructor(protected readonly config: ReplicationQuotaConfig) {}

  record(value: number, nowMs: number): void {
    let sample = this.currentSample(nowMs);
    if (nowMs - sample.startMs >= this.config.windowSizeMs) sample = this.advance(nowMs);
    sample.value += value;
    sample.lastEventMs = nowMs;
  }

  /** Units per second at `nowMs`. */
  measure(nowMs: number): number {
    this.purgeObsoleteSamples(nowMs);
    let total = 0;
    for (const sample of this.samples) total += sample.value;
    return total / (this.windowSizeMs(nowMs) / 1000);
  }

  /** The time the recorded total is divided by; Kafka's Rate counts it differently (src/server/client-quota-manager.ts). */
  protected windowSizeMs(nowMs: number): number {
    return Math.max(nowMs - this.oldestStartMs(nowMs), this.config.windowSizeMs);
  }

  protected oldestStartMs(nowMs: number): number {
    let oldest = this.currentSample(nowMs);
    for (const sample of this.samples) if (sample.startMs < oldest.startMs) oldest = sample;
    return oldest.startMs;
  }

  private currentSample(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push({ startMs: nowMs, lastEventMs: nowMs, value: 0 });
    return this.samples[this.current]!;
  }

  /** Kafka keeps one sample more than configured: the one overlapping the window's start. */
  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % (this.config.windowCount + 1);
    if (this.current >= this.samples.length) {
      const sample = { startMs: nowMs, lastEventMs: nowMs, value: 0 };
      this.samples.push(sample);
      return sample;
    }
    const sample = this.samples[this.current]!;
    reset(sample, nowMs);
    return sample;
  }

  private purgeObsoleteSamples(nowMs: number): void {
    const expireAgeMs = this.config.windowCount * this.config.windowSizeMs;
    for (const sample of this.samples) if (nowMs - sample.lastEventMs >= expireAgeMs) reset(sample, nowMs);
  }
}

function reset(sample: Sample, nowMs: number): void {
  sample.startMs = nowMs;
  sample.lastEventMs = nowMs;
  sample.value = 0;
}

/** Every partition of a topic (Kafka's AllReplicas). */
const ALL_PARTITIONS = 'all';

export class ReplicationQuotaManager implements ReplicaQuota {
  private boundBytesPerSecond = Infinity;
  private readonly throttled = new Map<string, ReadonlySet<number> | typeof ALL_PARTITIONS>();
  private readonly rate: SimpleRate;

  constructor(
    config: ReplicationQuotaConfig,
    private readonly nowMs: () => number,
  ) {
    this.rate = new SimpleRate(config);
  }

  /** The bound in bytes per second (Infinity for Long.MAX_VALUE). */
  updateQuota(bytesPerSecond: number): void {
    this.boundBytesPerSecond = bytesPerSecond;
  }

  get upperBound(): number {
    return this.boundBytesPerSecond;
  }

  get hasThrottledPartitions(): boolean {
    return this.throttled.size > 0;
  }

  /**
   * The topic's throttled replicas as its config lists them (Kafka's
   * TopicConfigHandler.parseThrottledPartitions): `*`, or the partitions
   * of the `partition:broker` items naming `brokerId`. An empty list lifts
   * the throttle.
   */
  markThrottled(topic: string, replicas: readonly string[], brokerId: number): void {
    if (replicas.join('').trim() === '*') {
      this.throttled.set(topic, ALL_PARTITIONS);
      return;
    }
    const partitions = new Set<number>();
    for (const item of replicas) {
      const [partition, broker] = item.trim().split(':');
      if (partition !== undefined && broker !== undefined && Number(broker) === brokerId) partitions.add(Number(partition));
    }
    if (partitions.size === 0) this.throttled.delete(topic);
    else this.throttled.set(topic, partitions);
  }

  removeThrottle(topic: string): void {
    this.throttled.delete(topic);
  }

  isThrottled(topicPartition: { topic: string; partition: number }): boolean {
    const partitions = this.throttled.get(topicPartition.topic);
    return partitions !== undefined && (partitions === ALL_PARTITIONS || partitions.has(topicPartition.partition));
  }

  isQuotaExceeded(): boolean {
    if (this.boundBytesPerSecond === Infinity) return false;
    return this.rate.measure(this.nowMs()) > this.boundBytesPerSecond;
  }

  record(bytes: number): void {
    this.rate.record(bytes, this.nowMs());
  }
}
