/**
 * The client's view of a cluster: bootstrap, metadata, and one connection
 * per broker.
 *
 * Bootstrap tries each `bootstrap.servers` address in turn; after the first
 * Metadata response the client talks to brokers by node id at the addresses
 * they advertise (the bootstrap address is only for discovery). Metadata is
 * refreshed on demand (an unknown topic, a stale leader) and when older than
 * `metadata.max.age.ms`. `retry()` runs an operation again after retriable
 * errors, with Kafka's exponential backoff (KIP-580: `retry.backoff.ms`
 * doubling up to `retry.backoff.max.ms`, with 20% jitter), refreshing
 * metadata first when the error says it is stale.
 */
import { realEnv, type Env } from '../io/env.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { Metadata } from '../protocol/schemas/03-metadata.js';
import { BrokerConnection, type ConnectionOptions } from './connection.js';
import { KafkaError, NetworkError, TimeoutError, isRetriableError, needsMetadataRefresh } from './errors.js';

export interface ClientOptions {
  /** `host:port[,host:port...]`, or a list. */
  bootstrapServers: string | readonly string[];
  clientId?: string;
  env?: Env;
  requestTimeoutMs?: number;
  /** retry.backoff.ms and retry.backoff.max.ms (KIP-580). */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  metadataMaxAgeMs?: number;
  /** max.in.flight.requests.per.connection. */
  inFlightRequestsMax?: number;
}

export interface BrokerInfo {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface PartitionInfo {
  partition: number;
  errorCode: number;
  leaderId: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export interface TopicInfo {
  name: string;
  /** Kafka's base64url text form; ZERO_UUID when the broker sends none. */
  topicId: string;
  errorCode: number;
  isInternal: boolean;
  partitions: PartitionInfo[];
}

export type { TopicPartition } from '../protocol/topic-partition.js';

export const CLIENT_DEFAULTS = {
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  metadataMaxAgeMs: 300_000,
  requestTimeoutMs: 30_000,
} as const;

export function parseBootstrapServers(servers: string | readonly string[]): { host: string; port: number }[] {
  const entries = typeof servers === 'string' ? servers.split(',') : servers;
  const out: { host: string; port: number }[] = [];
  for (const raw of entries) {
    const entry = raw.trim().replace(/^[A-Za-z_]+:\/\//, '');
    if (entry === '') continue;
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(entry);
    if (match === null) throw new Error(`Invalid url in bootstrap.servers: ${raw}`);
    out.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) });
  }
  if (out.length === 0) throw new Error('bootstrap.servers is empty');
  return out;
}

export class Cluster {
  readonly env: Env;
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  readonly retryBackoffMs: number;
  readonly retryBackoffMaxMs: number;
  private readonly metadataMaxAgeMs: number;
  private readonly inFlightRequestsMax: number;
  private readonly bootstrap: { host: string; port: number }[];
  private readonly connections = new Map<string, Promise<BrokerConnection>>();
  /** The connections of `connections` that are open and version-negotiated. */
  private readonly ready = new Map<string, BrokerConnection>();
  brokers = new Map<number, BrokerInfo>();
  topics = new Map<string, TopicInfo>();
  clusterId: string | null = null;
  controllerId = -1;
  private metadataAtMs = -Infinity;
  /**
   * Metadata requests for one topic in flight, by topic name and
   * allowAutoTopicCreation: lookups that find the topic missing or stale
   * while one is out wait for it instead of sending their own (Kafka's
   * producer likewise waits on one metadata update). Without this, a
   * producer's first burst of sends asked for the topic once per record:
   * 30,000 Metadata requests for a 1,000-partition topic, and no record was
   * acknowledged for the whole of a 10 s run.
   */
  private readonly topicRefreshes = new Map<string, Promise<void>>();
  private closed = false;

  constructor(options: ClientOptions) {
    this.env = options.env ?? realEnv;
    this.clientId = options.clientId ?? 'spool';
    this.requestTimeoutMs = options.requestTimeoutMs ?? CLIENT_DEFAULTS.requestTimeoutMs;
    this.retryBackoffMs = options.retryBackoffMs ?? CLIENT_DEFAULTS.retryBackoffMs;
    this.retryBackoffMaxMs = options.retryBackoffMaxMs ?? CLIENT_DEFAULTS.retryBackoffMaxMs;
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? CLIENT_DEFAULTS.metadataMaxAgeMs;
    this.inFlightRequestsMax = options.inFlightRequestsMax ?? 5;
    this.bootstrap = parseBootstrapServers(options.bootstrapServers);
  }

  /** A connection to `host:port`, opened (and version-negotiated) on first use, reopened after it closes. */
  connectTo(host: string, port: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(new NetworkError('client is closed'));
    const key = `${host}:${port}`;
    const existing = this.connections.get(key);
    if (existing !== undefined) return existing;
    const options: ConnectionOptions = {
      host,
      port,
      env: this.env,
      clientId: this.clientId,
      requestTimeoutMs: this.requestTimeoutMs,
      inFlightRequestsMax: this.inFlightRequestsMax,
    };
    const opening = BrokerConnection.connect(options);
    this.connections.set(key, opening);
    opening.then(
      (connection) => {
        if (this.connections.get(key) === opening) this.ready.set(key, connection);
        connection.onClose(() => {
          if (this.connections.get(key) === opening) this.connections.delete(key);
          if (this.ready.get(key) === connection) this.ready.delete(key);
        });
      },
      () => {
        if (this.connections.get(key) === opening) this.connections.delete(key);
      },
    );
    return opening;
  }

  /** The connection to broker `nodeId`, refreshing metadata once if the node is unknown. */
  async connection(nodeId: number): Promise<BrokerConnection> {
    let broker = this.brokers.get(nodeId);
    if (broker === undefined) {
      await this.refreshMetadata([]);
      broker = this.brokers.get(nodeId);
    }
    if (broker === undefined) throw new KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, `broker ${nodeId} is not in the metadata`);
    return this.connectTo(broker.host, broker.port);
  }

  /**
   * A connection to some broker: the open one with the fewest requests in
   * flight (Kafka's least loaded node), else the known brokers and bootstrap
   * addresses in turn. A connection still opening is not waited for, nor one
   * busy while an idle one exists: a broker cut off by a network partition
   * accepts connections and answers nothing, and metadata asked there would
   * only time out again (found by test/fault/spool-client-faults.test.ts).
   */
  async anyConnection(): Promise<BrokerConnection> {
    let leastLoaded: BrokerConnection | null = null;
    for (const connection of this.ready.values()) {
      if (connection.closed) continue;
      if (leastLoaded === null || connection.inFlightCount < leastLoaded.inFlightCount) leastLoaded = connection;
    }
    if (leastLoaded !== null) return leastLoaded;
    const candidates = [...this.brokers.values(), ...this.bootstrap];
    let lastError: unknown = new NetworkError('no brokers to connect to');
    for (const candidate of candidates) {
      try {
        return await this.connectTo(candidate.host, candidate.port);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }

  /**
   * Fetches metadata for `topics` (null: every topic; []: brokers only) and
   * merges it into the cache.
   */
  async refreshMetadata(topics: readonly string[] | null, options: { allowAutoTopicCreation?: boolean } = {}): Promise<void> {
    const connection = await this.anyConnection();
    const { version, response } = await connection.sendVersioned(Metadata, {
      topics: topics === null ? null : topics.map((name) => ({ name, topicId: ZERO_UUID })),
      allowAutoTopicCreation: options.allowAutoTopicCreation ?? false,
    });
    if (version >= 13 && response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, 'Metadata');
    this.brokers = new Map(response.brokers.map((b) => [b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }]));
    this.clusterId = response.clusterId;
    this.controllerId = response.controllerId;
    if (topics === null) this.topics.clear();
    for (const topic of response.topics) {
      if (topic.name === null) continue;
      this.topics.set(topic.name, {
        name: topic.name,
        topicId: topic.topicId ?? ZERO_UUID,
        errorCode: topic.errorCode,
        isInternal: topic.isInternal,
        partitions: topic.partitions
          .map((p) => ({
            partition: p.partitionIndex,
            errorCode: p.errorCode,
            leaderId: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            replicas: p.replicaNodes,
            isr: p.isrNodes,
            offlineReplicas: p.offlineReplicas,
          }))
          .sort((a, b) => a.partition - b.partition),
      });
    }
    this.metadataAtMs = this.env.clock.monotonicMs();
  }

  /**
   * Metadata for one topic, fetched when missing, in error, or stale. Throws
   * the topic's error (retriable ones, such as LEADER_NOT_AVAILABLE while a
   * new topic settles, are for retry() to absorb).
   */
  async topic(name: string, options: { allowAutoTopicCreation?: boolean; refresh?: boolean } = {}): Promise<TopicInfo> {
    let info = this.freshTopic(name);
    if (info === undefined || options.refresh === true) {
      await this.refreshTopic(name, options.allowAutoTopicCreation ?? false);
      info = this.topics.get(name);
    }
    if (info === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} is not in the metadata`);
    if (info.errorCode !== ErrorCode.NONE) throw new KafkaError(info.errorCode, `topic ${name}`);
    return info;
  }

  /** One Metadata request for `name` at a time; callers arriving while it is out share its outcome. */
  private refreshTopic(name: string, allowAutoTopicCreation: boolean): Promise<void> {
    const key = `${allowAutoTopicCreation ? 'create' : 'lookup'}:${name}`;
    const inFlight = this.topicRefreshes.get(key);
    if (inFlight !== undefined) return inFlight;
    const refresh = this.refreshMetadata([name], { allowAutoTopicCreation }).finally(() => this.topicRefreshes.delete(key));
    this.topicRefreshes.set(key, refresh);
    return refresh;
  }

  /** The cached metadata of `name` when it is there, without error and not stale; else undefined (topic() would refresh it). */
  freshTopic(name: string): TopicInfo | undefined {
    const info = this.topics.get(name);
    if (info === undefined || info.errorCode !== ErrorCode.NONE) return undefined;
    const stale = this.env.clock.monotonicMs() - this.metadataAtMs > this.metadataMaxAgeMs;
    return stale ? undefined : info;
  }

  /** The leader of a partition from cached metadata, or -1. */
  /**
   * The partition's leader, or -1 when unknown. A leader the last Metadata
   * response did not list among the brokers (fenced, or gone since this
   * topic's entry was fetched) counts as unknown, as in Kafka's client, where
   * such a partition has no leader node: callers refresh the metadata
   * instead of failing on a broker they cannot reach.
   */
  leaderFor(topic: string, partition: number): number {
    const info = this.topics.get(topic)?.partitions[partition];
    if (info === undefined || info.partition !== partition) return -1;
    return this.brokers.has(info.leaderId) ? info.leaderId : -1;
  }

  partitionInfo(topic: string, partition: number): PartitionInfo | undefined {
    return this.topics.get(topic)?.partitions.find((p) => p.partition === partition);
  }

  /** Forgets cached metadata so the next lookup refreshes it. */
  invalidate(): void {
    this.metadataAtMs = -Infinity;
  }

  /** The backoff before retry number `attempt` (0-based), per KIP-580. */
  backoffMs(attempt: number): number {
    const base = Math.min(this.retryBackoffMs * 2 ** attempt, this.retryBackoffMaxMs);
    const jitter = 0.8 + this.env.random.nextFloat() * 0.4;
    return Math.max(0, Math.round(base * jitter));
  }

  sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => this.env.timers.schedule(delayMs, resolve));
  }

  /**
   * Runs `operation`, retrying retriable errors with backoff until it
   * succeeds, `retries` is used up, or `timeoutMs` has passed.
   */
  async retry<T>(operation: (attempt: number) => Promise<T>, options: { retries?: number; timeoutMs?: number } = {}): Promise<T> {
    const retries = options.retries ?? Number.MAX_SAFE_INTEGER;
    const deadlineMs = this.env.clock.monotonicMs() + (options.timeoutMs ?? 60_000);
    for (let attempt = 0; ; attempt++) {
      try {
        return await operation(attempt);
      } catch (error) {
        if (!isRetriableError(error) || attempt >= retries || this.closed) throw error;
        const delayMs = this.backoffMs(attempt);
        if (this.env.clock.monotonicMs() + delayMs >= deadlineMs) {
          throw new TimeoutError(`gave up after ${attempt + 1} attempts: ${(error as Error).message}`);
        }
        if (needsMetadataRefresh((error as KafkaError).code)) this.invalidate();
        await this.sleep(delayMs);
      }
    }
  }

  /**
   * Closes every connection, waiting for in-flight requests; with
   * `abandonInFlight`, at once, failing them (a consumer's long-poll Fetch
   * is not worth waiting for).
   */
  async close(options: { abandonInFlight?: boolean } = {}): Promise<void> {
    this.closed = true;
    const openings = [...this.connections.values()];
    this.connections.clear();
    this.ready.clear();
    await Promise.all(openings.map(async (opening) => {
      const connection = await opening.catch(() => null);
      if (options.abandonInFlight === true) connection?.destroy();
      else await connection?.close();
    }));
  }
}
