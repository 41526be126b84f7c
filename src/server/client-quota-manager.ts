/**
 * Client byte-rate quotas (KIP-13, KIP-55; Kafka's ClientQuotaManager with
 * its default quota callback): one manager per quota key, producer_byte_rate
 * for Produce and consumer_byte_rate for Fetch from consumers.
 *
 * Which quota applies: the most specific entity set in the metadata image
 * for the request's user and client id, in Kafka's order — user+client-id,
 * user+default client-id, user, default user+client-id, default user+default
 * client-id, default user, client-id, default client-id. Bytes are counted
 * per sensor, the (user, client-id) pair that entity is named by: each user
 * under a default user quota has a rate of its own, as in Kafka.
 *
 * The rate is Kafka's Rate over quota.window.num samples of
 * quota.window.size.seconds: the retained bytes divided by the time since
 * the oldest sample began, counted as at least quota.window.num - 1 full
 * windows. A request that takes the rate above the bound is answered with
 * throttle_time_ms = (rate - bound) / bound × window, rounded, and its
 * connection is muted for that long (src/server/socket-server.ts).
 *
 * While no entity sets this manager's key, `quotasEnabled` is false and the
 * request paths skip every other call: the unquotaed path costs one boolean.
 * A sensor idle for an hour is dropped, as Kafka expires its quota sensors.
 */
import { SimpleRate, type ReplicationQuotaConfig } from '../replication/replication-quota.js';
import { ClientQuotaEntityType, type ClientQuotaImage } from '../metadata/client-quotas.js';
import type { MetadataImage, MetadataPublisher } from '../metadata/image.js';

/** Kafka's Rate: SimpleRate's samples, a window of at least `samples - 1` full windows. */
export class Rate extends SimpleRate {
  protected override windowSizeMs(nowMs: number): number {
    const windowMs = this.config.windowSizeMs;
    let elapsedMs = nowMs - this.oldestStartMs(nowMs);
    const fullWindows = Math.floor(elapsedMs / windowMs);
    const fullWindowsMin = this.config.windowCount - 1;
    if (fullWindows < fullWindowsMin) elapsedMs += (fullWindowsMin - fullWindows) * windowMs;
    return Math.max(elapsedMs, 1);
  }

  /** The window the rate is measured over at `nowMs`, in ms (Kafka's Rate.windowSize). */
  windowMs(nowMs: number): number {
    this.measure(nowMs);
    return this.windowSizeMs(nowMs);
  }
}

/**
 * Kafka's Avg over the quota's samples: the mean of the values recorded in
 * the retained windows, 0 with none (a throttle-time metric). The ratio of
 * two windowed sums recorded together, so their windows cancel out.
 */
export class SampledAvg {
  private readonly total: SimpleRate;
  private readonly count: SimpleRate;

  constructor(config: ReplicationQuotaConfig) {
    this.total = new SimpleRate(config);
    this.count = new SimpleRate(config);
  }

  record(value: number, nowMs: number): void {
    this.total.record(value, nowMs);
    this.count.record(1, nowMs);
  }

  measure(nowMs: number): number {
    const count = this.count.measure(nowMs);
    return count === 0 ? 0 : this.total.measure(nowMs) / count;
  }
}

/** One sensor's figures for the metrics: its (user, client-id) tags ('' for a side not counted) and values. */
export interface QuotaSensorMetrics {
  user: string;
  clientId: string;
  /** byte-rate, request-time or mutation-rate: the quota's measured rate. */
  value: number;
  /** throttle-time: the mean throttle time in the window (ms). */
  throttleTimeMs: number;
  /** tokens: what is left in a controller mutation bucket (absent for the other quotas). */
  tokens?: number;
}

/** Kafka's quotaTypesEnabled bits. */
const CLIENT_ID_QUOTA = 1;
const USER_QUOTA = 2;
const USER_CLIENT_ID_QUOTA = 4;

const INT32_MAX = 2_147_483_647;
/** Kafka's INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS. */
const SENSOR_IDLE_MS_MAX = 3_600_000;

/** An entity side: absent (undefined), the default (null), or a name. */
type Side = string | null | undefined;

function entityKey(user: Side, clientId: Side): string {
  const part = (side: Side) => (side === undefined ? '-' : side === null ? '*' : `=${side}`);
  return `${part(user)}\u0000${part(clientId)}`;
}

interface Sensor {
  userTag: string;
  clientTag: string;
  rate: Rate;
  throttle: SampledAvg;
  lastRecordMs: number;
}

/**
 * Quota sensors by (user, client-id) tags, each dropped once idle for
 * SENSOR_IDLE_MS_MAX (Kafka's INACTIVE_SENSOR_EXPIRATION_TIME_SECONDS); the
 * idle ones are looked for when a new sensor is made, at most once a period.
 */
export class QuotaSensors<S extends { readonly userTag: string; readonly clientTag: string; lastRecordMs: number }> {
  private readonly sensors = new Map<string, S>();
  private lastExpiryMs = 0;

  get(userTag: string, clientTag: string): S | undefined {
    return this.sensors.get(`${userTag}\u0000${clientTag}`);
  }

  /** The tags' sensor, made by `create` (after dropping the idle ones) when there is none. */
  getOrCreate(userTag: string, clientTag: string, nowMs: number, create: () => S): S {
    const key = `${userTag}\u0000${clientTag}`;
    let sensor = this.sensors.get(key);
    if (sensor === undefined) {
      this.expireIdle(nowMs);
      sensor = create();
      this.sensors.set(key, sensor);
    }
    return sensor;
  }

  values(): IterableIterator<S> {
    return this.sensors.values();
  }

  private expireIdle(nowMs: number): void {
    if (nowMs - this.lastExpiryMs < SENSOR_IDLE_MS_MAX) return;
    this.lastExpiryMs = nowMs;
    for (const [key, sensor] of this.sensors) if (nowMs - sensor.lastRecordMs >= SENSOR_IDLE_MS_MAX) this.sensors.delete(key);
  }
}

/** A principal's user name, as Kafka's quota entities name users (`User:alice` → `alice`). */
export function quotaUserOf(principal: string): string {
  const colon = principal.indexOf(':');
  return colon === -1 ? principal : principal.slice(colon + 1);
}

export class ClientQuotaManager {
  private overrides = new Map<string, number>();
  private enabledTypes = 0;
  private readonly sensors = new QuotaSensors<Sensor>();

  constructor(
    readonly quotaKey: string,
    protected readonly config: ReplicationQuotaConfig,
    protected readonly nowMs: () => number,
  ) {}

  get quotasEnabled(): boolean {
    return this.enabledTypes !== 0;
  }

  /** Takes this manager's key from every user/client-id entity of the image. */
  update(quotas: ReadonlyMap<string, ClientQuotaImage>): void {
    const overrides = new Map<string, number>();
    let enabled = 0;
    for (const { entity, quotas: values } of quotas.values()) {
      const bound = values.get(this.quotaKey);
      if (bound === undefined || entity.has(ClientQuotaEntityType.IP)) continue;
      const user = entity.get(ClientQuotaEntityType.USER);
      const clientId = entity.get(ClientQuotaEntityType.CLIENT_ID);
      overrides.set(entityKey(user, clientId), bound);
      enabled |= user !== undefined && clientId !== undefined ? USER_CLIENT_ID_QUOTA : user !== undefined ? USER_QUOTA : CLIENT_ID_QUOTA;
    }
    this.overrides = overrides;
    this.enabledTypes = enabled;
  }

  /** Kafka's quotaMetricTags: the (user, client-id) pair whose sensor counts this client's bytes; '' for a side not counted. */
  protected sensorTags(user: string, clientId: string): [string, string] {
    switch (this.enabledTypes) {
      case 0:
      case CLIENT_ID_QUOTA:
        return ['', clientId];
      case USER_QUOTA:
        return [user, ''];
      case USER_CLIENT_ID_QUOTA:
        return [user, clientId];
    }
    const has = (u: Side, c: Side) => this.overrides.has(entityKey(u, c));
    if (has(user, clientId) || has(user, null)) return [user, clientId];
    if (has(user, undefined)) return [user, ''];
    if (has(null, clientId) || has(null, null)) return [user, clientId];
    if (has(null, undefined)) return [user, ''];
    return ['', clientId];
  }

  /** Kafka's DefaultQuotaCallback.quotaLimit for a sensor's tags; Infinity where none applies. */
  protected boundOf(userTag: string, clientTag: string): number {
    const find = (...candidates: [Side, Side][]) => {
      for (const [u, c] of candidates) {
        const bound = this.overrides.get(entityKey(u, c));
        if (bound !== undefined) return bound;
      }
      return Infinity;
    };
    if (userTag !== '' && clientTag !== '') return find([userTag, clientTag], [userTag, null], [null, clientTag], [null, null]);
    if (userTag !== '') return find([userTag, undefined], [null, undefined]);
    if (clientTag !== '') return find([undefined, clientTag], [undefined, null]);
    return Infinity;
  }

  private sensorOf(userTag: string, clientTag: string, nowMs: number): Sensor {
    return this.sensors.getOrCreate(userTag, clientTag, nowMs, () => ({ userTag, clientTag, rate: new Rate(this.config), throttle: new SampledAvg(this.config), lastRecordMs: nowMs }));
  }

  /**
   * Records `value` bytes for the client and returns how long it must be
   * throttled (Kafka's recordAndGetThrottleTimeMs); 0 within its quota.
   */
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number): number {
    if (!this.quotasEnabled) return 0;
    const nowMs = this.nowMs();
    const [userTag, clientTag] = this.sensorTags(user, clientId);
    const sensor = this.sensorOf(userTag, clientTag, nowMs);
    sensor.rate.record(value, nowMs);
    sensor.lastRecordMs = nowMs;
    const bound = this.boundOf(userTag, clientTag);
    if (bound === Infinity) return 0;
    const rate = sensor.rate.measure(nowMs);
    if (rate <= bound) return 0;
    const throttleTimeMs = this.boundedThrottleTimeMs(Math.min(Math.round(((rate - bound) / bound) * sensor.rate.windowMs(nowMs)), INT32_MAX));
    sensor.throttle.record(throttleTimeMs, nowMs);
    return throttleTimeMs;
  }

  /** The throttle time given for `throttleTimeMs` over the quota (Kafka's request quota caps it at one window). */
  protected boundedThrottleTimeMs(throttleTimeMs: number): number {
    return throttleTimeMs;
  }

  /** Every live sensor's rate and mean throttle time now (the quota metrics). */
  sensorMetrics(): QuotaSensorMetrics[] {
    const nowMs = this.nowMs();
    return [...this.sensors.values()].map((s) => ({ user: s.userTag, clientId: s.clientTag, value: s.rate.measure(nowMs), throttleTimeMs: s.throttle.measure(nowMs) }));
  }

  /** Takes back bytes recorded for a response that was not sent (a throttled fetch answers empty). */
  unrecord(user: string, clientId: string, value: number): void {
    if (!this.quotasEnabled) return;
    const nowMs = this.nowMs();
    const [userTag, clientTag] = this.sensorTags(user, clientId);
    this.sensorOf(userTag, clientTag, nowMs).rate.record(-value, nowMs);
  }

  /** The most bytes the quota allows over its window (Kafka's maxValueInQuotaWindow): a cap on fetch.max.bytes. */
  maxValueInQuotaWindow(user: string, clientId: string): number {
    if (!this.quotasEnabled) return Number.MAX_VALUE;
    const [userTag, clientTag] = this.sensorTags(user, clientId);
    const bound = this.boundOf(userTag, clientTag);
    if (bound === Infinity) return Number.MAX_VALUE;
    return bound * (this.config.windowCount - 1) * (this.config.windowSizeMs / 1000);
  }
}

/** Kafka's NANOS_TO_PERCENTAGE_PER_SECOND, for milliseconds: 100% of a second is 1000 ms. */
const MS_TO_PERCENTAGE_PER_SECOND = 100 / 1000;

/**
 * request_percentage (KIP-124; Kafka's ClientRequestQuotaManager): request
 * time as a percentage of one thread, Spool's event loop; what a request is
 * charged and what is exempt is in src/server/client-request-quota.ts.
 */
export class ClientRequestQuotaManager extends ClientQuotaManager {
  constructor(config: ReplicationQuotaConfig, nowMs: () => number) {
    super('request_percentage', config, nowMs);
  }

  /** Records `requestTimeMs` of the loop for the client; its throttle time, at most one window (Kafka's boundedThrottleTime). */
  recordRequestTimeAndGetThrottleTimeMs(principal: string, clientId: string, requestTimeMs: number): number {
    return this.recordAndGetThrottleTimeMs(quotaUserOf(principal), clientId, requestTimeMs * MS_TO_PERCENTAGE_PER_SECOND);
  }

  protected override boundedThrottleTimeMs(throttleTimeMs: number): number {
    return Math.min(throttleTimeMs, this.config.windowSizeMs);
  }
}

/** The broker's client quota managers, kept in step with the metadata image. */
export class ClientQuotas implements MetadataPublisher {
  readonly name = 'ClientQuotas';
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  /** request_percentage (applied by the request handler table, src/server/request-handler.ts). */
  readonly request: ClientRequestQuotaManager;

  constructor(config: { int(name: string): number }, nowMs: () => number) {
    const windows: ReplicationQuotaConfig = { windowCount: config.int('quota.window.num'), windowSizeMs: config.int('quota.window.size.seconds') * 1000 };
    this.produce = new ClientQuotaManager('producer_byte_rate', windows, nowMs);
    this.fetch = new ClientQuotaManager('consumer_byte_rate', windows, nowMs);
    this.request = new ClientRequestQuotaManager(windows, nowMs);
  }

  private published: ReadonlyMap<string, ClientQuotaImage> | null = null;

  update(quotas: ReadonlyMap<string, ClientQuotaImage>): void {
    this.published = quotas;
    this.produce.update(quotas);
    this.fetch.update(quotas);
    this.request.update(quotas);
  }

  /** Images share the quota map until a ClientQuotaRecord changes it, so most updates are one comparison. */
  onMetadataUpdate(_delta: unknown, image: MetadataImage): void {
    if (image.clientQuotas !== this.published) this.update(image.clientQuotas);
  }
}
