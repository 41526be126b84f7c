/**
 * Follower fetchers (Kafka's ReplicaFetcherManager, ReplicaFetcherThread
 * and AbstractFetcherThread): a follower copies its leader's log by
 * fetching, like a consumer but from the log end and with its broker id.
 *
 * Partitions are spread over `num.replica.fetchers` fetchers per leader
 * broker by Kafka's rule (abs(31 * hash(topic) + partition) %
 * num.replica.fetchers). Each fetcher is one loop over one connection to
 * its leader's inter-broker listener: a Fetch (full, no session: fetch
 * sessions are optional for followers) with the ReplicaState (replica id
 * and broker epoch, KIP-903), replica.fetch.wait.max.ms,
 * replica.fetch.min.bytes, replica.fetch.response.max.bytes, and per
 * partition replica.fetch.max.bytes, the current leader epoch (KIP-320) and
 * the last fetched epoch (KIP-595).
 *
 * Each answer is applied in Kafka's order: a diverging epoch truncates the
 * log first (to the end of the largest common epoch, AbstractFetcherThread
 * .getOffsetTruncationState); otherwise the whole batches are appended
 * with their offsets, then the follower's high watermark becomes
 * min(leader's, own log end) and the log start offset follows the
 * leader's. OFFSET_OUT_OF_RANGE asks the leader for its end and start
 * offsets (ListOffsets as a replica) and truncates or restarts the log;
 * other errors back the partition off for replica.fetch.backoff.ms, as a
 * lost connection backs off the whole fetcher. A partition whose leader or
 * epoch changes is removed and added again by the replica manager.
 *
 * Follower throttle (Kafka's shouldFollowerThrottle): a partition of
 * follower.replication.throttled.replicas that is not caught up (its lag
 * behind the leader's high watermark at the last answer is not 0, or no
 * answer came yet) is left out of the fetch while the follower quota's rate
 * is over follower.replication.throttled.rate; the bytes appended for
 * throttled partitions are recorded against it. A fetcher with only such
 * partitions waits replica.fetch.backoff.ms, as Kafka's does.
 */
import type { Env } from '../io/env.js';
import type { TimerHandle } from '../io/clock.js';
import type { Logger } from '../common/logger.js';
import { BrokerConnection } from '../client/connection.js';
import { ErrorCode } from '../protocol/errors.js';
import { iterateBatches } from '../protocol/records/batch.js';
import { Fetch } from '../protocol/schemas/01-fetch.js';
import { ListOffsets } from '../protocol/schemas/02-list-offsets.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from '../storage/leader-epoch-cache.js';
import type { Partition } from './partition.js';
import type { ReplicaQuota } from './replication-quota.js';

/** The replica.* settings of the fetchers, with Kafka's defaults where the broker gives none. */
export interface ReplicaFetcherConfig {
  numReplicaFetchers: number;
  fetchMaxBytes: number;
  fetchMinBytes: number;
  fetchWaitMaxMs: number;
  fetchResponseMaxBytes: number;
  fetchBackoffMs: number;
  socketTimeoutMs: number;
}

/** How a fetcher reaches a leader: its inter-broker endpoint, or null while the image has none. */
export type LeaderAddress = (leaderId: number) => { host: string; port: number } | null;

/** A connection able to send Fetch and ListOffsets (BrokerConnection; tests may pass another). */
export interface LeaderConnection {
  send: BrokerConnection['send'];
  destroy(): void;
  readonly closed: boolean;
}

export interface ReplicaFetcherManagerOptions {
  nodeId: number;
  env: Env;
  logger: Logger;
  config: ReplicaFetcherConfig;
  leaderAddress: LeaderAddress;
  /** This broker's epoch for the ReplicaState of its fetches (-1 before registration). */
  brokerEpoch: () => number;
  /** Opens a connection to a leader; default a BrokerConnection. */
  connect?: (address: { host: string; port: number }) => Promise<LeaderConnection>;
  /** Called when a follower's high watermark moved (consumer fetches waiting on it re-check, KIP-392). */
  onFollowerHighWatermark?: (partition: Partition) => void;
  /** Bytes of whole batches appended as follower (ReplicationBytesInPerSec). */
  onReplicationBytesIn?: (bytes: number) => void;
  /** The follower side's replication throttle; default none. */
  quota?: ReplicaQuota;
}

/** One partition a fetcher copies. */
interface PartitionFetchState {
  partition: Partition;
  topicPartition: TopicPartition;
  fetchOffset: number;
  currentLeaderEpoch: number;
  /** Monotonic time before which the partition is not fetched (after an error). */
  delayedUntilMs: number;
  /** The leader's high watermark less the fetch offset at the last answer; null before one (Kafka's PartitionFetchState.lag). */
  lag: number | null;
}

/** Kafka's Java String.hashCode, for Kafka's fetcher id rule. */
function javaStringHash(text: string): number {
  let hash = 0;
  for (let index = 0; index < text.length; index++) hash = (Math.imul(31, hash) + text.charCodeAt(index)) | 0;
  return hash;
}

/** Kafka's AbstractFetcherManager.getFetcherId. */
export function fetcherIdFor(topicPartition: TopicPartition, numReplicaFetchers: number): number {
  const hash = (Math.imul(31, javaStringHash(topicPartition.topic)) + topicPartition.partition) | 0;
  // Kafka's Utils.abs: Integer.MIN_VALUE maps to 0.
  const abs = hash === -2147483648 ? 0 : Math.abs(hash);
  return abs % Math.max(1, numReplicaFetchers);
}

/** What the fetchers count, for tests and tools. */
export interface ReplicaFetcherStats {
  /** Times a partition was left out of a fetch by the follower throttle. */
  throttledPartitionSkips: number;
}

export class ReplicaFetcherManager {
  readonly stats: ReplicaFetcherStats = { throttledPartitionSkips: 0 };
  private readonly fetchers = new Map<string, ReplicaFetcherThread>();
  private readonly fetcherOf = new Map<string, ReplicaFetcherThread>();

  constructor(private readonly options: ReplicaFetcherManagerOptions) {}

  /** Starts (or restarts) copying `partition` from `leaderId`, at the follower's log end. */
  addPartition(partition: Partition, leaderId: number): void {
    const key = topicPartitionKey(partition.topicPartition);
    this.removePartition(partition.topicPartition);
    const fetcherKey = `${leaderId}:${fetcherIdFor(partition.topicPartition, this.options.config.numReplicaFetchers)}`;
    let fetcher = this.fetchers.get(fetcherKey);
    if (fetcher === undefined) {
      fetcher = new ReplicaFetcherThread(this.options, leaderId, fetcherKey, this.stats);
      this.fetchers.set(fetcherKey, fetcher);
    }
    fetcher.add({
      partition,
      topicPartition: partition.topicPartition,
      fetchOffset: partition.log.logEndOffset,
      currentLeaderEpoch: partition.leaderEpoch,
      delayedUntilMs: 0,
      lag: null,
    });
    this.fetcherOf.set(key, fetcher);
  }

  removePartition(topicPartition: TopicPartition): void {
    const key = topicPartitionKey(topicPartition);
    const fetcher = this.fetcherOf.get(key);
    if (fetcher === undefined) return;
    this.fetcherOf.delete(key);
    fetcher.remove(key);
    if (fetcher.size === 0) {
      fetcher.shutdown();
      for (const [fetcherKey, candidate] of this.fetchers) if (candidate === fetcher) this.fetchers.delete(fetcherKey);
    }
  }

  /** The fetch position of a followed partition (tests and tools), or null. */
  fetchOffsetOf(topicPartition: TopicPartition): number | null {
    return this.fetcherOf.get(topicPartitionKey(topicPartition))?.fetchOffsetOf(topicPartitionKey(topicPartition)) ?? null;
  }

  /**
   * Each followed partition's lag behind its leader at the last answer
   * (Kafka's FetcherLagMetrics ConsumerLag), with the fetcher's Kafka
   * name, `ReplicaFetcherThread-<fetcher id>-<leader id>`. Partitions not
   * answered yet since they were added are left out, as Kafka creates the
   * gauge at the first answer.
   */
  *fetcherLags(): Generator<{ clientId: string; topicPartition: TopicPartition; lag: number }> {
    for (const fetcher of this.fetchers.values()) yield* fetcher.lags();
  }

  get fetcherCount(): number {
    return this.fetchers.size;
  }

  async shutdown(): Promise<void> {
    const all = [...this.fetchers.values()];
    this.fetchers.clear();
    this.fetcherOf.clear();
    await Promise.all(all.map((fetcher) => fetcher.shutdown()));
  }
}

/** One fetcher: a loop of Fetch requests to one leader for its partitions. */
class ReplicaFetcherThread {
  private readonly partitions = new Map<string, PartitionFetchState>();
  private connection: LeaderConnection | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  private sleepTimer: TimerHandle | null = null;
  private readonly loop: Promise<void>;

  constructor(
    private readonly options: ReplicaFetcherManagerOptions,
    private readonly leaderId: number,
    readonly name: string,
    private readonly stats: ReplicaFetcherStats,
  ) {
    this.loop = this.run().catch((error: unknown) => this.options.logger.error(`replica fetcher ${this.name} stopped: ${(error as Error).stack ?? String(error)}`));
  }

  get size(): number {
    return this.partitions.size;
  }

  add(state: PartitionFetchState): void {
    this.partitions.set(topicPartitionKey(state.topicPartition), state);
    this.interrupt();
  }

  remove(key: string): void {
    this.partitions.delete(key);
  }

  fetchOffsetOf(key: string): number | null {
    return this.partitions.get(key)?.fetchOffset ?? null;
  }

  *lags(): Generator<{ clientId: string; topicPartition: TopicPartition; lag: number }> {
    // Kafka's thread name, `ReplicaFetcherThread-<fetcher id>-<leader id>` (this.name is `<leader id>:<fetcher id>`).
    const clientId = `ReplicaFetcherThread-${this.name.slice(this.name.indexOf(':') + 1)}-${this.leaderId}`;
    for (const state of this.partitions.values()) if (state.lag !== null) yield { clientId, topicPartition: state.topicPartition, lag: state.lag };
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    this.connection?.destroy();
    this.connection = null;
    this.interrupt();
    await this.loop;
  }

  private interrupt(): void {
    this.sleepTimer?.cancel();
    this.sleepTimer = null;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Waits `ms` (or until a partition is added or the fetcher stops). */
  private sleep(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      if (ms !== null) {
        this.sleepTimer = this.options.env.timers.schedule(ms, () => {
          this.sleepTimer = null;
          this.wake = null;
          resolve();
        });
      }
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const nowMs = this.options.env.clock.monotonicMs();
      const fetchable = [...this.partitions.values()].filter((state) => state.delayedUntilMs <= nowMs && !state.partition.log.isOffline);
      const quota = this.options.quota;
      const ready = quota?.hasThrottledPartitions === true ? fetchable.filter((state) => !shouldFollowerThrottle(quota, state)) : fetchable;
      this.stats.throttledPartitionSkips += fetchable.length - ready.length;
      if (ready.length === 0 && fetchable.length > 0) {
        await this.sleep(this.options.config.fetchBackoffMs);
        continue;
      }
      if (ready.length === 0) {
        const next = Math.min(...[...this.partitions.values()].map((state) => state.delayedUntilMs));
        await this.sleep(Number.isFinite(next) ? Math.max(1, next - nowMs) : null);
        continue;
      }
      let connection: LeaderConnection;
      try {
        connection = await this.connectionToLeader();
        await this.fetchOnce(connection, ready);
      } catch (error) {
        if (this.stopped) return;
        this.options.logger.warn(`replica fetcher ${this.name} for leader ${this.leaderId}: ${(error as Error).message}; backing off ${this.options.config.fetchBackoffMs} ms`);
        this.connection?.destroy();
        this.connection = null;
        await this.sleep(this.options.config.fetchBackoffMs);
      }
    }
  }

  private async connectionToLeader(): Promise<LeaderConnection> {
    if (this.connection !== null && !this.connection.closed) return this.connection;
    const address = this.options.leaderAddress(this.leaderId);
    if (address === null) throw new Error(`no inter-broker endpoint known for broker ${this.leaderId}`);
    const connect =
      this.options.connect ??
      ((to: { host: string; port: number }) =>
        BrokerConnection.connect({
          ...to,
          env: this.options.env,
          clientId: `broker-${this.options.nodeId}-fetcher-${this.name}`,
          requestTimeoutMs: this.options.config.socketTimeoutMs + this.options.config.fetchWaitMaxMs,
        }));
    this.connection = await connect(address);
    return this.connection;
  }

  /** One Fetch round trip and its processing (Kafka's processFetchRequest). */
  private async fetchOnce(connection: LeaderConnection, ready: readonly PartitionFetchState[]): Promise<void> {
    const { config } = this.options;
    const sent = ready.map((state) => ({ state, fetchOffset: state.fetchOffset, currentLeaderEpoch: state.currentLeaderEpoch }));
    const byTopic = new Map<string, { topicId: string; topic: string; partitions: object[] }>();
    for (const { state } of sent) {
      const partition = state.partition;
      let entry = byTopic.get(partition.topicPartition.topic);
      if (entry === undefined) byTopic.set(partition.topicPartition.topic, (entry = { topicId: partition.topicId, topic: partition.topicPartition.topic, partitions: [] }));
      entry.partitions.push({
        partition: partition.topicPartition.partition,
        currentLeaderEpoch: state.currentLeaderEpoch,
        fetchOffset: state.fetchOffset,
        lastFetchedEpoch: partition.log.leaderEpochCache.latestEpoch ?? -1,
        logStartOffset: partition.log.logStartOffset,
        partitionMaxBytes: config.fetchMaxBytes,
        highWatermark: partition.log.highWatermark,
      });
    }
    const brokerEpoch = this.options.brokerEpoch();
    const response = await connection.send(Fetch, {
      replicaId: this.options.nodeId,
      replicaState: { replicaId: this.options.nodeId, replicaEpoch: brokerEpoch },
      maxWaitMs: config.fetchWaitMaxMs,
      minBytes: config.fetchMinBytes,
      maxBytes: config.fetchResponseMaxBytes,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [...byTopic.values()],
      forgottenTopicsData: [],
      rackId: '',
    } as never);
    if (response.errorCode !== ErrorCode.NONE) throw new Error(`Fetch failed with error ${response.errorCode}`);
    const answers = new Map<string, (typeof response.responses)[number]['partitions'][number]>();
    for (const topic of response.responses) {
      const name = topic.topic !== '' && topic.topic !== null ? topic.topic : [...byTopic.values()].find((entry) => entry.topicId === topic.topicId)?.topic;
      if (name === undefined) continue;
      for (const answer of topic.partitions) answers.set(topicPartitionKey({ topic: name, partition: answer.partitionIndex }), answer);
    }
    for (const { state, fetchOffset, currentLeaderEpoch } of sent) {
      const key = topicPartitionKey(state.topicPartition);
      // The partition was removed or re-added (new leader or epoch) while the request was out: its answer is stale.
      if (this.partitions.get(key) !== state || state.fetchOffset !== fetchOffset || state.currentLeaderEpoch !== currentLeaderEpoch) continue;
      const answer = answers.get(key);
      if (answer === undefined) continue;
      await this.processPartition(connection, state, answer);
    }
  }

  private async processPartition(
    connection: LeaderConnection,
    state: PartitionFetchState,
    answer: { errorCode: number; highWatermark: number; logStartOffset: number; divergingEpoch: { epoch: number; endOffset: number }; records: Buffer | null },
  ): Promise<void> {
    const partition = state.partition;
    try {
      if (answer.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
        await this.handleOutOfRange(connection, state);
        return;
      }
      if (answer.errorCode !== ErrorCode.NONE) {
        this.options.logger.debug(`replica fetcher ${this.name}: ${partition.name} answered error ${answer.errorCode}; backing off`);
        state.delayedUntilMs = this.options.env.clock.monotonicMs() + this.options.config.fetchBackoffMs;
        return;
      }
      if (answer.divergingEpoch.epoch >= 0 || answer.divergingEpoch.endOffset >= 0) {
        await this.truncateOnDivergence(state, answer.divergingEpoch);
        return;
      }
      const records = answer.records ?? Buffer.alloc(0);
      const whole = wholeBatches(records);
      if (whole.length > 0) {
        const appended = await partition.appendRecordsAsFollower(whole);
        if (appended !== null) state.fetchOffset = appended.lastOffset + 1;
        this.options.onReplicationBytesIn?.(whole.length);
        const quota = this.options.quota;
        if (quota?.hasThrottledPartitions === true && quota.isThrottled(state.topicPartition)) quota.record(whole.length);
      }
      state.lag = Math.max(0, answer.highWatermark - state.fetchOffset);
      const highWatermarkMoved = partition.updateFollowerHighWatermark(answer.highWatermark);
      if (answer.logStartOffset >= 0) await partition.maybeIncrementLogStartOffset(answer.logStartOffset);
      if (highWatermarkMoved) this.options.onFollowerHighWatermark?.(partition);
    } catch (error) {
      this.options.logger.warn(`replica fetcher ${this.name}: ${partition.name} failed: ${(error as Error).message}`);
      state.delayedUntilMs = this.options.env.clock.monotonicMs() + this.options.config.fetchBackoffMs;
      state.fetchOffset = partition.log.isOffline ? state.fetchOffset : partition.log.logEndOffset;
    }
  }

  /**
   * Kafka's getOffsetTruncationState for a diverging epoch: truncate to
   * the end of the largest epoch both logs share, no further than either
   * log's end; when this log does not know the leader's epoch, truncate to
   * the end of its own largest earlier epoch and fetch again (the leader
   * then answers for that epoch).
   */
  private async truncateOnDivergence(state: PartitionFetchState, diverging: { epoch: number; endOffset: number }): Promise<void> {
    const partition = state.partition;
    const replicaEndOffset = partition.log.logEndOffset;
    let offset: number;
    if (diverging.endOffset === UNDEFINED_EPOCH_OFFSET) offset = state.fetchOffset;
    else if (diverging.epoch === UNDEFINED_EPOCH) offset = Math.min(diverging.endOffset, replicaEndOffset);
    else {
      const local = partition.log.endOffsetForEpoch(diverging.epoch);
      if (local.leaderEpoch === UNDEFINED_EPOCH) offset = Math.min(diverging.endOffset, replicaEndOffset);
      else if (local.leaderEpoch !== diverging.epoch) offset = Math.min(local.endOffset, replicaEndOffset);
      else offset = Math.min(local.endOffset, diverging.endOffset, replicaEndOffset);
    }
    this.options.logger.info(`${partition.name}: truncating from ${replicaEndOffset} to ${offset} (leader ${this.leaderId} diverged at epoch ${diverging.epoch}, end offset ${diverging.endOffset})`);
    await partition.truncateTo(offset);
    state.fetchOffset = partition.log.logEndOffset;
  }

  /** Kafka's fetchOffsetAndTruncate: the follower is past the leader's end, or below its start. */
  private async handleOutOfRange(connection: LeaderConnection, state: PartitionFetchState): Promise<void> {
    const partition = state.partition;
    const replicaEndOffset = partition.log.logEndOffset;
    const leaderEndOffset = await this.listOffset(connection, state, -1);
    if (leaderEndOffset < replicaEndOffset) {
      await partition.truncateTo(leaderEndOffset);
      state.fetchOffset = leaderEndOffset;
      return;
    }
    const leaderStartOffset = await this.listOffset(connection, state, -2);
    if (leaderStartOffset > replicaEndOffset) await partition.truncateFullyAndStartAt(leaderStartOffset);
    state.fetchOffset = Math.max(leaderStartOffset, replicaEndOffset);
  }

  private async listOffset(connection: LeaderConnection, state: PartitionFetchState, timestamp: number): Promise<number> {
    const response = await connection.send(ListOffsets, {
      replicaId: this.options.nodeId,
      isolationLevel: 0,
      topics: [{ name: state.topicPartition.topic, partitions: [{ partitionIndex: state.topicPartition.partition, currentLeaderEpoch: state.currentLeaderEpoch, timestamp }] }],
    } as never);
    const answer = response.topics[0]?.partitions[0];
    if (answer === undefined || answer.errorCode !== ErrorCode.NONE) throw new Error(`ListOffsets ${timestamp} for ${state.partition.name} failed with error ${answer?.errorCode}`);
    return answer.offset;
  }
}

/** Kafka's shouldFollowerThrottle: caught-up replicas are never throttled. */
function shouldFollowerThrottle(quota: ReplicaQuota, state: PartitionFetchState): boolean {
  const inSync = state.lag !== null && state.lag <= 0;
  return !inSync && quota.isThrottled(state.topicPartition) && quota.isQuotaExceeded();
}

/** The leading whole batches of a fetch answer (a leader may end it with a partial batch). */
function wholeBatches(records: Buffer): Buffer {
  let end = 0;
  for (const { position, header } of iterateBatches(records)) end = position + header.sizeBytes;
  return records.subarray(0, end);
}
