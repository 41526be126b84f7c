/**
 * Controller mutation quotas (KIP-599; Kafka's ControllerMutationQuotaManager):
 * CreateTopics, CreatePartitions and DeleteTopics count the partitions they
 * create, add or delete against the requester's controller_mutation_rate
 * (partitions per second), resolved over the user/client-id entities as the
 * byte-rate quotas are (ClientQuotaManager's order and sensors).
 *
 * The measure is Kafka's TokenBucket: a bucket of burst = quota ×
 * quota.window.num × quota.window.size.seconds tokens, full for a new
 * sensor, refilled at `quota` tokens a second up to the burst; a mutation
 * takes its partitions out and may leave the bucket below zero. A bucket
 * below zero means the quota is exceeded; the throttle time is the time to
 * refill to zero, -tokens / quota seconds.
 *
 * Two behaviours, by request version (Kafka's newQuotaFor with
 * strictSinceVersion: CreateTopics v6, CreatePartitions v3, DeleteTopics v5):
 * - strict: a topic whose mutation finds the bucket already below zero is
 *   refused (THROTTLING_QUOTA_EXCEEDED) and nothing is taken; the others go
 *   on, and the response's throttle_time_ms is the time left to refill;
 * - permissive (older clients, which do not know the error): every mutation
 *   is taken and accepted; the request is only throttled.
 *
 * Applied where Kafka 4.x applies it: by the controller (ControllerApis),
 * with the principal and client id of the request it serves, the client's
 * own for a forwarded request (the Envelope's). Kafka's controller checks
 * the quota of a validateOnly request too, and so does this.
 */
import { ClientQuotaManager, QuotaSensors, Rate, SampledAvg, quotaUserOf, type QuotaSensorMetrics } from './client-quota-manager.js';
import type { ReplicationQuotaConfig } from '../replication/replication-quota.js';
import type { PartitionChangeQuota } from '../controller/replication-control.js';
import type { ClientQuotaImage } from '../metadata/client-quotas.js';
import type { MetadataImage, MetadataPublisher } from '../metadata/image.js';

const INT32_MAX = 2_147_483_647;

/** Kafka's TokenBucket stat: `tokens` refilled at `quota` a second up to `burst`. */
export class TokenBucket {
  private tokens: number;
  private lastUpdateMs: number;

  constructor(burst: number, nowMs: number) {
    this.tokens = burst;
    this.lastUpdateMs = nowMs;
  }

  private refill(quota: number, burst: number, nowMs: number): void {
    this.tokens = Math.min(burst, this.tokens + (quota * Math.max(0, nowMs - this.lastUpdateMs)) / 1000);
    this.lastUpdateMs = nowMs;
  }

  /** The tokens left at `nowMs` (negative once the quota is exceeded). */
  measure(quota: number, burst: number, nowMs: number): number {
    this.refill(quota, burst, nowMs);
    return this.tokens;
  }

  record(value: number, quota: number, burst: number, nowMs: number): void {
    this.refill(quota, burst, nowMs);
    this.tokens = Math.min(burst, this.tokens - value);
  }
}

/** One request's quota (Kafka's ControllerMutationQuota): records its mutations and knows its throttle time. */
export interface ControllerMutationQuota {
  /** Counts a topic's partitions; false when the strict quota refuses them. */
  readonly record: PartitionChangeQuota;
  /** The response's throttle_time_ms (Kafka's throttleTime): the last violation's time, less what has passed since. */
  throttleTimeMs(): number;
  /** Counts the throttle time the response carries in the throttle-time metric. */
  recordThrottle(throttleTimeMs: number): void;
}

/** Kafka's UNBOUNDED_CONTROLLER_MUTATION_QUOTA: nothing counted, never throttled. */
export const UNBOUNDED_CONTROLLER_MUTATION_QUOTA: ControllerMutationQuota = { record: () => true, throttleTimeMs: () => 0, recordThrottle: () => {} };

/** What the quota needs of a request: who sent it and at which version. */
export interface MutationRequester {
  principal: string;
  clientId: string;
  apiVersion: number;
}

interface BucketSensor {
  userTag: string;
  clientTag: string;
  bucket: TokenBucket;
  /** mutation-rate: the partitions accepted, a second. */
  rate: Rate;
  throttle: SampledAvg;
  lastRecordMs: number;
}

/** The controller's quota manager, kept in step with the metadata image (a publisher on the controller's loader). */
export class ControllerMutationQuotaManager extends ClientQuotaManager implements MetadataPublisher {
  readonly name = 'ControllerMutationQuotas';
  private readonly buckets = new QuotaSensors<BucketSensor>();
  private published: ReadonlyMap<string, ClientQuotaImage> | null = null;

  constructor(config: ReplicationQuotaConfig, nowMs: () => number) {
    super('controller_mutation_rate', config, nowMs);
  }

  /** quota.window.num and quota.window.size.seconds of the node's config. */
  static fromConfig(config: { int(name: string): number }, nowMs: () => number): ControllerMutationQuotaManager {
    return new ControllerMutationQuotaManager({ windowCount: config.int('quota.window.num'), windowSizeMs: config.int('quota.window.size.seconds') * 1000 }, nowMs);
  }

  /** Images share the quota map until a ClientQuotaRecord changes it. */
  onMetadataUpdate(_delta: unknown, image: MetadataImage): void {
    if (image.clientQuotas === this.published) return;
    this.published = image.clientQuotas;
    this.update(image.clientQuotas);
  }

  /** Kafka's newQuotaFor: strict from `strictSinceVersion`, permissive before; unbounded while no entity sets the key. */
  newQuotaFor(requester: MutationRequester, options: { strictSinceVersion: number }): ControllerMutationQuota {
    if (!this.quotasEnabled) return UNBOUNDED_CONTROLLER_MUTATION_QUOTA;
    const [userTag, clientTag] = this.sensorTags(quotaUserOf(requester.principal), requester.clientId);
    const strict = requester.apiVersion >= options.strictSinceVersion;
    let lastThrottleTimeMs = 0;
    let lastRecordedTimeMs = 0;
    const violated = (tokens: number, quota: number, nowMs: number) => {
      lastThrottleTimeMs = Math.min(Math.round((-tokens / quota) * 1000), INT32_MAX);
      lastRecordedTimeMs = nowMs;
    };
    return {
      record: (partitions) => {
        const nowMs = this.nowMs();
        const quota = this.boundOf(userTag, clientTag);
        const burst = quota * this.config.windowCount * (this.config.windowSizeMs / 1000);
        const sensor = this.bucketOf(userTag, clientTag, burst, nowMs);
        sensor.lastRecordMs = nowMs;
        if (quota === Infinity) return true;
        if (strict) {
          const tokens = sensor.bucket.measure(quota, burst, nowMs);
          if (tokens < 0) {
            violated(tokens, quota, nowMs);
            return false;
          }
          sensor.bucket.record(partitions, quota, burst, nowMs);
          sensor.rate.record(partitions, nowMs);
          return true;
        }
        sensor.bucket.record(partitions, quota, burst, nowMs);
        sensor.rate.record(partitions, nowMs);
        const tokens = sensor.bucket.measure(quota, burst, nowMs);
        if (tokens < 0) violated(tokens, quota, nowMs);
        return true;
      },
      throttleTimeMs: () => (lastThrottleTimeMs === 0 ? 0 : Math.max(0, lastThrottleTimeMs - (this.nowMs() - lastRecordedTimeMs))),
      recordThrottle: (throttleTimeMs) => this.buckets.get(userTag, clientTag)?.throttle.record(throttleTimeMs, this.nowMs()),
    };
  }

  /** Every live bucket's mutation rate, tokens and mean throttle time now (the quota metrics). */
  override sensorMetrics(): QuotaSensorMetrics[] {
    const nowMs = this.nowMs();
    return [...this.buckets.values()].map((s) => {
      const quota = this.boundOf(s.userTag, s.clientTag);
      const burst = quota * this.config.windowCount * (this.config.windowSizeMs / 1000);
      const tokens = quota === Infinity ? Number.MAX_SAFE_INTEGER : s.bucket.measure(quota, burst, nowMs);
      return { user: s.userTag, clientId: s.clientTag, value: s.rate.measure(nowMs), throttleTimeMs: s.throttle.measure(nowMs), tokens };
    });
  }

  private bucketOf(userTag: string, clientTag: string, burst: number, nowMs: number): BucketSensor {
    return this.buckets.getOrCreate(userTag, clientTag, nowMs, () => ({
      userTag, clientTag, bucket: new TokenBucket(burst, nowMs), rate: new Rate(this.config), throttle: new SampledAvg(this.config), lastRecordMs: nowMs,
    }));
  }
}

/** A request's quota from the node's controller; unbounded where the node has none. */
export function mutationQuotaFor(manager: ControllerMutationQuotaManager | undefined, requester: MutationRequester, options: { strictSinceVersion: number }): ControllerMutationQuota {
  return manager === undefined ? UNBOUNDED_CONTROLLER_MUTATION_QUOTA : manager.newQuotaFor(requester, options);
}

/**
 * Kafka's sendResponseMaybeThrottleWithControllerQuota: the throttle time
 * the response carries, and the connection muted for it (not for a
 * forwarded request, whose context has nothing to mute: the forwarding
 * broker mutes its client's connection when the response comes back).
 */
export function controllerQuotaThrottleTimeMs(quota: ControllerMutationQuota, throttle: ((throttleTimeMs: number) => void) | undefined): number {
  const throttleTimeMs = quota.throttleTimeMs();
  if (throttleTimeMs === 0) return 0;
  quota.recordThrottle(throttleTimeMs);
  throttle?.(throttleTimeMs);
  return throttleTimeMs;
}
