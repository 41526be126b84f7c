/**
 * ReplicaManager: the partitions this broker hosts and the data plane over
 * them (Kafka's ReplicaManager). It is a metadata publisher: each metadata
 * delta opens, creates or deletes logs and makes this broker leader or
 * follower of its partitions, so partitions change only through the
 * metadata log (DESIGN.md §3.5).
 *
 * Start: opens every log directory in log.dirs (a LogManager each: recovery
 * after an unclean shutdown, checkpoints, retention) and rebuilds each log's
 * producer state; the logs wait until the first metadata image claims them,
 * and logs the image does not claim (topics deleted while the broker was
 * down) are deleted then. Stop: completes waiting requests, snapshots
 * producer state, flushes and closes every log, writes the checkpoints and
 * the clean-shutdown marker.
 *
 * Disk errors (Kafka's handleLogDirFailure): an I/O error in a log
 * directory reaches the LogDirFailureChannel; the directory's logs go
 * offline, its partitions answer KAFKA_STORAGE_ERROR to every request and
 * waiting requests on them complete with it, DescribeLogDirs reports the
 * directory with KAFKA_STORAGE_ERROR. Stopping the broker once no directory
 * is left is the broker's part (it listens on the same channel).
 *
 * Requests: appends with acks 0/1/all (acks=all waits in the produce
 * purgatory for the high watermark), fetches with fetch.min.bytes /
 * max.wait.ms (the fetch purgatory, woken by appends), offsets by timestamp,
 * OffsetForLeaderEpoch, DeleteRecords, DescribeLogDirs, DescribeProducers.
 *
 * Fetch from follower (KIP-392): with replica.selector.class set, a v11+
 * consumer's fetch on a leader may be answered with a preferred read
 * replica (findPreferredReadReplica); followers serve consumers below their
 * own high watermark. Replication throttles (KIP-73, replication-quota.ts):
 * the leader quota empties throttled fetches of out-of-sync followers, the
 * follower quota is the fetchers'; both follow the topic and broker configs
 * in the metadata image.
 */
import { posix } from 'node:path';
import type { Env } from '../io/env.js';
import type { TimerHandle } from '../io/clock.js';
import { ErrorCode } from '../protocol/errors.js';
import type { MetadataDelta, MetadataImage, MetadataPublisher, PartitionRegistration, TopicImage } from '../metadata/image.js';
import { brokerConfigLayers, resolveTopicConfig, staticBrokerLayers, type TopicConfig } from '../metadata/topic-config.js';
import { BrokerConfig } from '../common/config.js';
import { parseConfigValue } from '../common/config-value.js';
import { LOG_CLEANER_RECONFIGURABLE_CONFIGS } from '../metadata/config-schema.js';
import type { Logger } from '../common/logger.js';
import { LogManager, MetadataLogDirError } from '../storage/log-manager.js';
import type { LastRecord } from '../storage/cleaner/cleaner.js';
import type { CleanerSource } from '../storage/cleaner/log-cleaner-manager.js';
import { LogCleaner, type CleanerConfig } from '../storage/cleaner/log-cleaner.js';
import type { Log } from '../storage/log.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { StorageKafkaError } from '../storage/errors.js';
import { LogDirFailureChannel } from '../storage/log-dir-failure-channel.js';
import { ProducerStateManager } from '../storage/producer-state.js';
import { rebuildProducerState } from '../storage/producer-state-loader.js';
import type { AbortedTxn } from '../storage/transaction-index.js';
import { DelayedOperationPurgatory } from './purgatory.js';
import { DelayedProduce, type ProducePartitionStatus } from './delayed-produce.js';
import { DelayedFetch, endOffsetFor, type ClientMetadata, type FetchParams, type FetchPartitionStatus } from './delayed-fetch.js';
import { FetchManager, FetchSessionCache, FETCH_SESSION_EVICTION_MS } from './fetch-session.js';
import { Partition, type PartitionError } from './partition.js';
import { readPartitionMetadata, writePartitionMetadata } from './partition-metadata-file.js';
import type { RecordError } from './record-validator.js';
import { ReplicaFetcherManager, type ReplicaFetcherManagerOptions } from './replica-fetcher.js';
import { interBrokerEndpoint } from '../server/listeners.js';
import { replicaSelectorFor, type ReplicaSelector, type ReplicaView } from './replica-selector.js';
import { ReplicationQuotaManager, type ReplicationQuotaConfig } from './replication-quota.js';
import type { AlterPartitionReply, AlterPartitionRequest } from '../controller/replication-control.js';
import type { IsrChangeContext, IsrChangeOutcome, IsrChangeProposal } from './partition.js';
import { NO_REPLICATION_STATS, type ReplicationStats } from './replication-stats.js';

/** What the replica manager needs of the broker (Broker satisfies it). */
export interface ReplicaManagerContext {
  readonly nodeId: number;
  readonly config: BrokerConfig;
  readonly env: Env;
  readonly log: Logger;
  readonly metadata: { readonly image: MetadataImage };
  /** Where I/O errors in log directories are reported; default a channel of the replica manager's own. */
  readonly logDirFailureChannel?: LogDirFailureChannel;
  /** The controller, for ISR changes (AlterPartition); without it the ISR never changes from this broker. */
  readonly alterPartition?: (request: AlterPartitionRequest) => Promise<AlterPartitionReply>;
  /** This broker's epoch from its registration (-1 before). */
  readonly brokerEpoch?: () => number;
  /** The listener followers fetch over (inter.broker.listener.name); default the first of each broker's. */
  readonly interBrokerListenerName?: string;
  /** How followers connect to leaders; default a BrokerConnection (tests route it in-process). */
  readonly connectToLeader?: ReplicaFetcherManagerOptions['connect'];
}

/** Topics only coordinators and the admin client may write (Kafka's Topic.isInternal). */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__share_group_state']);

/** Kafka's default producer.id.expiration.check.interval.ms. */
const PRODUCER_EXPIRATION_CHECK_INTERVAL_MS = 600_000;
/** First and largest wait before an AlterPartition that found no controller is sent again. */
const ALTER_PARTITION_BACKOFF_MS = 100;
const ALTER_PARTITION_BACKOFF_MAX_MS = 10_000;
/** Most requests waiting in each purgatory (DESIGN.md §3.7). */
const DELAYED_OPERATIONS_MAX = 10_000;

export interface ProducePartitionResult {
  errorCode: number;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: RecordError[];
  errorMessage: string | null;
}

export interface ProduceEntry {
  topicPartition: TopicPartition;
  records: Buffer;
}

export interface FetchPartitionInfo {
  topicPartition: TopicPartition;
  fetchOffset: number;
  logStartOffset: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** A follower's own high watermark (Fetch v18, KIP-1166); absent or Infinity when not sent. */
  replicaHighWatermark?: number;
}

export interface FetchPartitionData {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Buffer;
  abortedTransactions: AbortedTxn[] | null;
  divergingEpoch: { epoch: number; endOffset: number } | null;
  preferredReadReplica: number;
}

export interface LogDirDescription {
  logDir: string;
  /** KAFKA_STORAGE_ERROR for an offline directory (then no partitions). */
  errorCode: number;
  partitions: { topicPartition: TopicPartition; sizeBytes: number; offsetLag: number }[];
}

export interface ListOffsetsResult {
  errorCode: number;
  timestamp: number;
  offset: number;
  leaderEpoch: number;
}

interface LoadedLog {
  log: Log;
  manager: LogManager;
  producerState: ProducerStateManager;
}

export class ReplicaManager implements MetadataPublisher {
  readonly name = 'ReplicaManager';
  readonly producePurgatory: DelayedOperationPurgatory<DelayedProduce>;
  private readonly partitionStateListeners: ((key: string) => void)[] = [];
  readonly fetchPurgatory: DelayedOperationPurgatory<DelayedFetch>;
  readonly fetchManager: FetchManager;
  readonly logDirFailureChannel: LogDirFailureChannel;
  private readonly partitions = new Map<string, Partition>();
  /** Logs found on disk at start, not yet claimed by the metadata image. */
  private readonly unclaimed = new Map<string, LoadedLog>();
  private readonly managerOf = new Map<Log, LogManager>();
  private logManagers: LogManager[] = [];
  private metadataChain: Promise<void> = Promise.resolve();
  private firstImageApplied = false;
  private expirationTimer: TimerHandle | null = null;
  /** Compacts logs with cleanup.policy=compact; null when log.cleaner.enable=false. */
  private logCleaner: LogCleaner | null = null;
  private state: 'new' | 'started' | 'stopped' = 'new';
  private shuttingDown = false;
  /** Copies the partitions this broker follows from their leaders. */
  readonly replicaFetcherManager: ReplicaFetcherManager;
  private isrExpirationTimer: TimerHandle | null = null;
  /** replica.selector.class: null serves consumers from the leader only (KIP-392). */
  private readonly replicaSelector: ReplicaSelector | null;
  /** Record bytes this broker returned to consumers from partitions it follows (KIP-392; for tests and tools). */
  consumerBytesServedAsFollower = 0;
  /** Replication throttles (KIP-73): what this broker sends as leader, and fetches as follower. */
  readonly leaderQuota: ReplicationQuotaManager;
  readonly followerQuota: ReplicationQuotaManager;
  /** Where bytes in and out, failed requests, ISR changes and log flushes are reported (the metrics set it when enabled). */
  stats: ReplicationStats = NO_REPLICATION_STATS;

  constructor(private readonly context: ReplicaManagerContext) {
    const { env, config } = context;
    this.producePurgatory = new DelayedOperationPurgatory('Produce', env.timers, { operationsMax: DELAYED_OPERATIONS_MAX });
    this.fetchPurgatory = new DelayedOperationPurgatory('Fetch', env.timers, { operationsMax: DELAYED_OPERATIONS_MAX });
    const cache = new FetchSessionCache({
      sessionsMax: config.int('max.incremental.fetch.session.cache.slots'),
      evictionMs: FETCH_SESSION_EVICTION_MS,
      random: env.random,
    });
    this.fetchManager = new FetchManager(cache, () => env.clock.monotonicMs());
    this.replicaSelector = replicaSelectorFor(config.string('replica.selector.class'));
    const quotaConfig: ReplicationQuotaConfig = {
      windowCount: config.int('replication.quota.window.num'),
      windowSizeMs: config.int('replication.quota.window.size.seconds') * 1000,
    };
    this.leaderQuota = new ReplicationQuotaManager(quotaConfig, () => env.clock.monotonicMs());
    this.followerQuota = new ReplicationQuotaManager(quotaConfig, () => env.clock.monotonicMs());
    this.logDirFailureChannel = context.logDirFailureChannel ?? new LogDirFailureChannel(context.log);
    this.logDirFailureChannel.onOfflineLogDir((logDir) => this.handleLogDirFailure(logDir));
    this.replicaFetcherManager = new ReplicaFetcherManager({
      nodeId: context.nodeId,
      env,
      logger: context.log,
      config: {
        numReplicaFetchers: config.int('num.replica.fetchers'),
        fetchMaxBytes: config.int('replica.fetch.max.bytes'),
        fetchMinBytes: config.int('replica.fetch.min.bytes'),
        fetchWaitMaxMs: config.int('replica.fetch.wait.max.ms'),
        fetchResponseMaxBytes: config.int('replica.fetch.response.max.bytes'),
        fetchBackoffMs: config.int('replica.fetch.backoff.ms'),
        socketTimeoutMs: config.int('replica.socket.timeout.ms'),
      },
      leaderAddress: (leaderId) => this.leaderAddress(leaderId),
      brokerEpoch: () => context.brokerEpoch?.() ?? -1,
      // A consumer's fetch waiting on a follower (KIP-392) completes once the follower's high watermark moves.
      onFollowerHighWatermark: (partition) => this.fetchPurgatory.checkAndComplete(topicPartitionKey(partition.topicPartition)),
      quota: this.followerQuota,
      onReplicationBytesIn: (bytes) => this.stats.replicationBytesIn(bytes),
      ...(context.connectToLeader === undefined ? {} : { connect: context.connectToLeader }),
    });
  }

  /** Whether consumers may be sent to another replica (replica.selector.class is set): the Fetch handler then passes client metadata. */
  get selectsReplicas(): boolean {
    return this.replicaSelector !== null;
  }

  /** A leader's endpoint on the inter-broker listener, from the metadata image. */
  private leaderAddress(leaderId: number): { host: string; port: number } | null {
    return interBrokerEndpoint(this.image, leaderId, this.context.interBrokerListenerName);
  }

  /** What a partition needs to change its ISR through the controller. */
  private isrChangeContext(key: string): IsrChangeContext | undefined {
    const send = this.context.alterPartition;
    if (send === undefined) return undefined;
    return {
      submit: (proposal) => this.submitAlterPartition(send, proposal),
      isReplicaIsrEligible: (brokerId, brokerEpoch) => {
        const broker = this.image.brokers.get(brokerId);
        if (broker === undefined || broker.fenced || broker.inControlledShutdown) return false;
        return brokerEpoch === -1 || broker.epoch === brokerEpoch;
      },
      onStateChange: () => this.completeDelayedRequests(key),
      onIsrUpdated: (update) => this.stats.isrUpdated(update),
    };
  }

  /**
   * Kafka's AlterPartitionManager, one partition per request: AlterPartition
   * v3 with the members' broker epochs. No controller, or NOT_CONTROLLER for
   * the whole request, is retried with a doubling backoff (100 ms up to
   * 10 s) while the broker runs; any other answer goes back to the partition.
   */
  private async submitAlterPartition(send: NonNullable<ReplicaManagerContext['alterPartition']>, proposal: IsrChangeProposal): Promise<IsrChangeOutcome> {
    let reply: AlterPartitionReply | null = null;
    for (let attempt = 0; reply === null; attempt++) {
      if (this.state !== 'started' || this.shuttingDown) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
      try {
        const answer = await send({
          brokerId: this.nodeId,
          brokerEpoch: this.context.brokerEpoch?.() ?? -1,
          topics: [{ topicId: proposal.topicId, partitions: [{ partitionIndex: proposal.topicPartition.partition, leaderEpoch: proposal.leaderEpoch, newIsrWithEpochs: proposal.newIsrWithEpochs, leaderRecoveryState: proposal.leaderRecoveryState ?? 0, partitionEpoch: proposal.partitionEpoch }] }],
        });
        if (answer.errorCode !== ErrorCode.NOT_CONTROLLER) reply = answer;
      } catch (error) {
        this.context.log.warn(`AlterPartition of ${proposal.topicPartition.topic}-${proposal.topicPartition.partition} could not be sent: ${(error as Error).message}`);
      }
      if (reply === null) await new Promise<void>((resolve) => this.context.env.timers.schedule(Math.min(ALTER_PARTITION_BACKOFF_MAX_MS, ALTER_PARTITION_BACKOFF_MS * 2 ** Math.min(attempt, 10)), resolve));
    }
    if (reply.errorCode !== ErrorCode.NONE) return { errorCode: reply.errorCode };
    const answer = reply.topics[0]?.partitions[0];
    if (answer === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
    if (answer.errorCode !== ErrorCode.NONE) {
      this.context.log.info(`AlterPartition of ${proposal.topicPartition.topic}-${proposal.topicPartition.partition} refused with error ${answer.errorCode}`);
      return { errorCode: answer.errorCode };
    }
    return { errorCode: 0, isr: answer.isr, leaderEpoch: answer.leaderEpoch, partitionEpoch: answer.partitionEpoch };
  }

  private get nodeId(): number {
    return this.context.nodeId;
  }

  private get image(): MetadataImage {
    return this.context.metadata.image;
  }

  // ---- life cycle ----------------------------------------------------------------------------

  /** Opens every log directory and rebuilds producer state; logs are served once metadata claims them. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`replica manager already ${this.state}`);
    const { env, config } = this.context;
    const defaults = resolveTopicConfig(new Map(), staticBrokerLayers(config));
    for (const logDir of config.logDirs) {
      // Flushes are timed for Kafka's LogFlushStats through whatever `stats` is when they happen.
      const logEnv = { fs: env.fs, clock: env.clock, timers: env.timers, flushStats: { logFlushed: (durationMs: number) => this.stats.logFlushed(durationMs) } };
      const manager = await LogManager.open(logEnv, {
        logDir,
        configFor: () => defaults,
        logger: this.context.log,
        failureChannel: this.logDirFailureChannel,
        retentionCheckIntervalMs: config.int('log.retention.check.interval.ms'),
        brokerEpoch: () => this.context.brokerEpoch?.() ?? -1,
      });
      this.logManagers.push(manager);
      for (const log of manager.allLogs()) {
        const producerState = await this.openProducerState(log, manager.hadCleanShutdown);
        this.unclaimed.set(topicPartitionKey(log.topicPartition), { log, manager, producerState });
        this.managerOf.set(log, manager);
      }
      manager.startBackgroundTasks();
    }
    if (config.bool('log.cleaner.enable')) {
      this.logCleaner = new LogCleaner(env, { config: cleanerConfig(config), source: this.cleanerSource(), logger: this.context.log });
      this.logCleaner.startup();
    }
    this.scheduleProducerExpiration();
    this.scheduleIsrExpiration();
    this.state = 'started';
  }

  /** The cleaner sees the logs of partitions this broker serves (it needs their last stable offset and producers). */
  private cleanerSource(): CleanerSource {
    const partitionOf = (log: Log) => {
      const partition = this.partitions.get(topicPartitionKey(log.topicPartition));
      return partition?.log === log ? partition : undefined;
    };
    return {
      logDirs: () =>
        this.logManagers
          .filter((manager) => manager.isOnline)
          .map((manager) => ({
            logDir: manager.logDir,
            logs: manager.allLogs().filter((log) => partitionOf(log) !== undefined),
            maybeHandleIOException: <T>(what: string, operation: () => Promise<T>) => manager.maybeHandleIOException(what, operation),
          })),
      lastStableOffset: (log) => partitionOf(log)?.lastStableOffset() ?? log.logStartOffset,
      activeProducers: (log) => {
        const producers = new Map<number, LastRecord>();
        for (const [producerId, entry] of partitionOf(log)?.producerState.activeProducers() ?? []) {
          producers.set(producerId, { lastDataOffset: entry.lastDataOffset >= 0 ? entry.lastDataOffset : null, producerEpoch: entry.producerEpoch });
        }
        return producers;
      },
    };
  }

  private async openProducerState(log: Log, hadCleanShutdown: boolean): Promise<ProducerStateManager> {
    const producerState = await ProducerStateManager.open({
      dir: log.dir,
      fs: this.context.env.fs,
      producerIdExpirationMs: this.context.config.int('producer.id.expiration.ms'),
      logger: this.context.log,
    });
    await rebuildProducerState(log, producerState, { nowMs: this.context.env.clock.nowMs(), hadCleanShutdown });
    return producerState;
  }

  /** Kafka's isr-expiration task: every replica.lag.time.max.ms / 2 the leaders drop followers that fell behind. */
  private scheduleIsrExpiration(): void {
    const periodMs = Math.max(1, Math.floor(this.context.config.int('replica.lag.time.max.ms') / 2));
    this.isrExpirationTimer = this.context.env.timers.schedule(periodMs, () => {
      this.isrExpirationTimer = null;
      this.maybeShrinkIsr();
      if (this.state === 'started') this.scheduleIsrExpiration();
    });
  }

  /** Runs the ISR shrink check of every partition led here (the isr-expiration task's body). */
  maybeShrinkIsr(): void {
    for (const partition of this.partitions.values()) if (!partition.log.isOffline) partition.maybeShrinkIsr();
  }

  private scheduleProducerExpiration(): void {
    this.expirationTimer = this.context.env.timers.schedule(PRODUCER_EXPIRATION_CHECK_INTERVAL_MS, () => {
      this.expirationTimer = null;
      void this.expireProducers().finally(() => {
        if (this.state === 'started') this.scheduleProducerExpiration();
      });
    });
  }

  /** Forgets idle producers and drops snapshots below each log's first segment. */
  private async expireProducers(): Promise<void> {
    const nowMs = this.context.env.clock.nowMs();
    for (const partition of this.partitions.values()) {
      if (partition.log.isOffline) continue;
      await partition.serialized(async () => {
        partition.producerState.removeExpiredProducers(nowMs);
        await partition.log.maybeHandleIOException(() => partition.producerState.deleteSnapshotsBefore(partition.log.logSegments[0]!.baseOffset));
      }).catch((error: unknown) => this.context.log.warn(`producer expiration for ${partition.name} failed: ${String(error)}`));
    }
  }

  /**
   * First step of a broker stop: waiting fetches and acks=all produces are
   * answered now with what they have, and new fetches stop waiting, so
   * in-flight requests finish without sitting out max.wait.ms.
   */
  beginShutdown(): void {
    this.shuttingDown = true;
    this.producePurgatory.shutdown();
    this.fetchPurgatory.shutdown();
  }

  /** Clean stop: answers waiting requests, snapshots producer state, closes every log. */
  async stop(): Promise<void> {
    if (this.state !== 'started') return;
    this.state = 'stopped';
    this.expirationTimer?.cancel();
    this.isrExpirationTimer?.cancel();
    await this.metadataChain;
    await this.replicaFetcherManager.shutdown();
    this.producePurgatory.shutdown();
    this.fetchPurgatory.shutdown();
    await this.logCleaner?.shutdown();
    const snapshot = async (log: Log, producerState: ProducerStateManager) => {
      if (log.isOffline) return;
      producerState.updateMapEndOffset(log.logEndOffset);
      await log
        .maybeHandleIOException(() => producerState.takeSnapshot())
        .catch((error: unknown) => this.context.log.warn(`producer snapshot of ${log.name} at shutdown failed: ${String(error)}`));
    };
    for (const partition of this.partitions.values()) await partition.serialized(() => snapshot(partition.log, partition.producerState));
    for (const loaded of this.unclaimed.values()) await snapshot(loaded.log, loaded.producerState);
    for (const manager of this.logManagers) await manager.close();
  }

  // ---- metadata --------------------------------------------------------------------------------

  /** Applies deltas one at a time, in order; a failure is logged (the partition stays as it was), never thrown at the publisher. */
  onMetadataUpdate(delta: MetadataDelta, image: MetadataImage): Promise<void> {
    this.metadataChain = this.metadataChain
      .then(() => this.applyDelta(delta, image))
      .catch((error: unknown) => this.context.log.error(`applying metadata at offset ${delta.offset} failed: ${(error as Error).stack ?? String(error)}`));
    return this.metadataChain;
  }

  private async applyDelta(delta: MetadataDelta, image: MetadataImage): Promise<void> {
    if (this.state !== 'started') return;
    if (delta.brokersChanged || !this.firstImageApplied) this.updateReplicationQuotas(image);
    for (const topic of delta.deletedTopics) {
      this.leaderQuota.removeThrottle(topic.name);
      this.followerQuota.removeThrottle(topic.name);
      for (const registration of topic.partitions.values()) await this.stopPartition(registration, { deleteLog: true });
    }
    for (const registration of delta.changedPartitions) {
      if (registration.replicas.includes(this.nodeId)) await this.applyPartition(registration, image);
      else if (this.partitions.has(keyOf(registration))) await this.stopPartition(registration, { deleteLog: true });
    }
    for (const topic of delta.changedTopicConfigs) this.updateTopicConfig(topic, image);
    if (delta.brokersChanged) for (const topic of image.topicsByName.values()) this.updateTopicConfig(topic, image);
    if (delta.brokersChanged) await this.reconfigureLogCleaner(image);
    if (!this.firstImageApplied) {
      this.firstImageApplied = true;
      await this.deleteStrayLogs();
    }
  }

  private async applyPartition(registration: PartitionRegistration, image: MetadataImage): Promise<void> {
    let partition: Partition;
    try {
      partition = await this.getOrCreatePartition(registration, image);
    } catch (error) {
      if (!(error instanceof MetadataLogDirError)) throw error;
      // Only an image written before the controller refused that name holds such a topic: serve everything else.
      this.context.log.error(`not serving ${registration.topicName}-${registration.partition}: ${error.message}`);
      return;
    }
    const key = keyOf(registration);
    if (registration.leader === this.nodeId) {
      // A disk error here leaves the partition offline (its requests answer KAFKA_STORAGE_ERROR), as in Kafka.
      await partition.makeLeader(registration).catch((error: unknown) => {
        if (!(error instanceof StorageKafkaError)) throw error;
        this.context.log.error(`${partition.name} cannot become leader: ${error.message}`);
      });
      this.replicaFetcherManager.removePartition(partition.topicPartition);
    } else {
      const fetcherOffset = this.replicaFetcherManager.fetchOffsetOf(partition.topicPartition);
      const changed = partition.makeFollower(registration);
      if (registration.leader < 0) this.replicaFetcherManager.removePartition(partition.topicPartition);
      else if (changed || fetcherOffset === null) this.replicaFetcherManager.addPartition(partition, registration.leader);
    }
    // Waiting requests re-check: a produce or fetch on a partition no longer led here completes with an error.
    this.producePurgatory.checkAndComplete(key);
    this.fetchPurgatory.checkAndComplete(key);
  }

  private async getOrCreatePartition(registration: PartitionRegistration, image: MetadataImage): Promise<Partition> {
    const key = keyOf(registration);
    const existing = this.partitions.get(key);
    if (existing !== undefined && existing.topicId === registration.topicId) return existing;
    if (existing !== undefined) await this.stopPartition(registration, { deleteLog: true });
    const topicPartition = { topic: registration.topicName, partition: registration.partition };
    const config = this.topicConfig(image.topicsById.get(registration.topicId), image);
    const loaded = (await this.claimLoadedLog(key, registration.topicId)) ?? (await this.createLog(topicPartition, registration.topicId, config));
    loaded.log.updateConfig(config);
    const isrChange = this.isrChangeContext(key);
    const partition = new Partition({
      topicPartition,
      topicId: registration.topicId,
      localBrokerId: this.nodeId,
      log: loaded.log,
      producerState: loaded.producerState,
      config,
      nowMs: () => this.context.env.clock.nowMs(),
      replicaLagTimeMaxMs: this.context.config.int('replica.lag.time.max.ms'),
      ...(isrChange === undefined ? {} : { isrChange }),
    });
    this.partitions.set(key, partition);
    return partition;
  }

  /** A log found at start for this partition, unless it belongs to an older topic of the same name. */
  private async claimLoadedLog(key: string, topicId: string): Promise<LoadedLog | null> {
    const loaded = this.unclaimed.get(key);
    if (loaded === undefined) return null;
    this.unclaimed.delete(key);
    const { fs } = this.context.env;
    const recorded = await loaded.manager.maybeHandleIOException('reading partition.metadata', () => readPartitionMetadata(fs, loaded.log.dir));
    if (recorded !== null && recorded !== topicId) {
      this.context.log.info(`deleting ${loaded.log.name}: it belongs to topic id ${recorded}, not ${topicId}`);
      await loaded.manager.deleteLog(loaded.log.topicPartition);
      return null;
    }
    if (recorded === null) {
      await loaded.manager.maybeHandleIOException('writing partition.metadata', () => writePartitionMetadata(fs, loaded.log.dir, topicId));
    }
    return loaded;
  }

  private async createLog(topicPartition: TopicPartition, topicId: string, config: TopicConfig): Promise<LoadedLog> {
    const online = this.logManagers.filter((candidate) => candidate.isOnline);
    const manager = online.reduce((best, candidate) => (candidate.allLogs().length < best.allLogs().length ? candidate : best), online[0] ?? this.logManagers[0]!);
    const log = await manager.getOrCreateLog(topicPartition, config);
    this.managerOf.set(log, manager);
    const producerState = await log.maybeHandleIOException(async () => {
      await writePartitionMetadata(this.context.env.fs, log.dir, topicId);
      const opened = await ProducerStateManager.open({
        dir: log.dir,
        fs: this.context.env.fs,
        producerIdExpirationMs: this.context.config.int('producer.id.expiration.ms'),
        logger: this.context.log,
      });
      await opened.truncateFullyAndStartAt(log.logEndOffset);
      return opened;
    });
    return { log, manager, producerState };
  }

  private async stopPartition(registration: { topicName: string; partition: number }, options: { deleteLog: boolean }): Promise<void> {
    const key = topicPartitionKey({ topic: registration.topicName, partition: registration.partition });
    const partition = this.partitions.get(key);
    if (partition === undefined) return;
    this.partitions.delete(key);
    this.replicaFetcherManager.removePartition(partition.topicPartition);
    this.producePurgatory.checkAndComplete(key);
    this.fetchPurgatory.checkAndComplete(key);
    const manager = this.managerOf.get(partition.log);
    if (!options.deleteLog || manager === undefined) return;
    await partition.serialized(async () => {
      this.managerOf.delete(partition.log);
      await manager.deleteLog(partition.topicPartition);
    });
  }

  private async deleteStrayLogs(): Promise<void> {
    for (const [key, loaded] of this.unclaimed) {
      this.unclaimed.delete(key);
      this.context.log.info(`deleting stray log ${loaded.log.name}: its partition is not in the metadata image`);
      this.managerOf.delete(loaded.log);
      await loaded.manager.deleteLog(loaded.log.topicPartition);
    }
  }

  /**
   * Dynamic log.cleaner.* settings (this broker's, else the cluster default,
   * else server.properties): a change restarts the cleaner's loops with them.
   * A value the static config would refuse is logged and ignored, as Kafka's
   * DynamicBrokerConfig does with an update it cannot apply.
   */
  private async reconfigureLogCleaner(image: MetadataImage): Promise<void> {
    if (this.logCleaner === null) return;
    const layers = brokerConfigLayers(this.context.config, image.brokerConfigs, this.nodeId);
    const explicit = new Map(this.context.config.explicit);
    for (const name of LOG_CLEANER_RECONFIGURABLE_CONFIGS) {
      const value = layers.perBroker.get(name) ?? layers.clusterDefault.get(name);
      if (value !== undefined) explicit.set(name, value);
    }
    let next: CleanerConfig;
    try {
      next = cleanerConfig(new BrokerConfig(explicit));
    } catch (error) {
      this.context.log.error(`log cleaner: ignoring dynamic settings: ${(error as Error).message}`);
      return;
    }
    const current = this.logCleaner.config;
    if ((Object.keys(next) as (keyof CleanerConfig)[]).every((name) => next[name] === current[name])) return;
    if (next.threads < 1) {
      this.context.log.error('log cleaner: ignoring dynamic settings: Log cleaner threads should be at least 1');
      return;
    }
    this.context.log.info(`log cleaner: restarting with ${JSON.stringify(next)}`);
    await this.logCleaner.reconfigure(next);
  }

  private updateTopicConfig(topic: TopicImage, image: MetadataImage): void {
    const config = this.topicConfig(topic, image);
    for (const partitionIndex of topic.partitions.keys()) {
      this.partitions.get(topicPartitionKey({ topic: topic.name, partition: partitionIndex }))?.updateConfig(config);
    }
    this.leaderQuota.markThrottled(topic.name, config.leaderReplicationThrottledReplicas, this.nodeId);
    this.followerQuota.markThrottled(topic.name, config.followerReplicationThrottledReplicas, this.nodeId);
  }

  /**
   * leader/follower.replication.throttled.rate: this broker's dynamic
   * value, else the cluster default, else Long.MAX_VALUE (Kafka's
   * DynamicReplicationQuota; the controller validated them).
   */
  private updateReplicationQuotas(image: MetadataImage): void {
    const layers = brokerConfigLayers(this.context.config, image.brokerConfigs, this.nodeId);
    const rateOf = (name: string) => {
      const text = layers.perBroker.get(name) ?? layers.clusterDefault.get(name);
      const parsed = text === undefined ? null : parseConfigValue(name, 'long', text);
      return parsed !== null && 'value' in parsed ? (parsed.value as number) : Infinity;
    };
    this.leaderQuota.updateQuota(rateOf('leader.replication.throttled.rate'));
    this.followerQuota.updateQuota(rateOf('follower.replication.throttled.rate'));
  }

  /** The effective config of a topic: its overrides over the broker's dynamic and static configs. */
  topicConfig(topic: TopicImage | undefined, image: MetadataImage = this.image): TopicConfig {
    const layers = brokerConfigLayers(this.context.config, image.brokerConfigs, this.nodeId);
    return resolveTopicConfig(topic?.configs ?? new Map(), layers);
  }

  // ---- partitions ------------------------------------------------------------------------------

  /** The hosted partition, or Kafka's error for it (Kafka's getPartitionOrError). */
  getPartitionOrError(topicPartition: TopicPartition): Partition | PartitionError {
    const partition = this.partitions.get(topicPartitionKey(topicPartition));
    if (partition !== undefined) {
      if (partition.log.isOffline) return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, message: `the log of ${partition.name} is offline` };
      return partition;
    }
    const topic = this.image.topicsByName.get(topicPartition.topic);
    if (topic?.partitions.has(topicPartition.partition) === true) {
      return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, message: `broker ${this.nodeId} does not host ${topicPartitionKey(topicPartition)}` };
    }
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `unknown partition ${topicPartitionKey(topicPartition)}` };
  }

  /** Hosted partitions (read-only view for DescribeLogDirs, tools and tests). */
  hostedPartitions(): readonly Partition[] {
    return [...this.partitions.values()];
  }

  /**
   * The broker epoch of the last clean shutdown, when every log directory
   * shut down cleanly with the same one; else -1 (KIP-966: the controller
   * then takes this broker out of every ELR).
   */
  get previousBrokerEpoch(): number {
    const epochs = new Set(this.logManagers.map((manager) => (manager.hadCleanShutdown ? manager.previousBrokerEpoch : -1)));
    return epochs.size === 1 ? [...epochs][0]! : -1;
  }

  get logDirManagers(): readonly LogManager[] {
    return this.logManagers;
  }

  managerOfPartition(partition: Partition): LogManager | undefined {
    return this.managerOf.get(partition.log);
  }

  /**
   * A log directory went offline (Kafka's handleLogDirFailure): its logs
   * stop, and requests waiting on its partitions complete with
   * KAFKA_STORAGE_ERROR. Partitions stay listed, answering that error,
   * until the broker restarts.
   */
  private handleLogDirFailure(logDir: string): void {
    const manager = this.logManagers.find((candidate) => candidate.logDir === logDir);
    if (manager === undefined) return;
    manager.handleLogDirFailure();
    const offline = [...this.partitions.values()].filter((partition) => this.managerOf.get(partition.log) === manager);
    this.context.log.warn(`stopped serving ${offline.map((partition) => partition.name).join(', ') || 'no partitions'} in the failed log directory ${logDir}`);
    for (const partition of offline) this.completeDelayedRequests(topicPartitionKey(partition.topicPartition));
  }

  /** Wakes requests waiting on `key` after its high watermark or leadership changed. */
  private completeDelayedRequests(key: string): void {
    this.producePurgatory.checkAndComplete(key);
    this.fetchPurgatory.checkAndComplete(key);
    for (const listener of this.partitionStateListeners) listener(key);
  }

  /**
   * Calls `listener` with a partition's key (topicPartitionKey) whenever its
   * high watermark, log or leadership changed, as the purgatories here are
   * woken: for requests waiting elsewhere (share fetches).
   */
  onPartitionStateChange(listener: (key: string) => void): void {
    this.partitionStateListeners.push(listener);
  }

  // ---- produce --------------------------------------------------------------------------------

  /**
   * Appends each entry as leader. With acks=all the result waits until the
   * high watermark covers every successful append, or `timeoutMs` passes.
   * With acks=0 the caller drops the result (or closes the connection on error).
   */
  async appendRecords(request: {
    timeoutMs: number;
    requiredAcks: number;
    internalTopicsAllowed: boolean;
    entries: readonly ProduceEntry[];
    /** 'coordinator' for the group and transaction coordinators' own writes (no client-only checks). Default 'client'. */
    origin?: 'client' | 'coordinator';
    /** A transaction marker's transaction version (WriteTxnMarkers v2): V2 markers must raise the producer epoch. */
    transactionVersion?: number;
  }): Promise<Map<string, ProducePartitionResult>> {
    const results = new Map<string, ProducePartitionResult>();
    if (![-1, 0, 1].includes(request.requiredAcks)) {
      for (const entry of request.entries) results.set(topicPartitionKey(entry.topicPartition), produceError(ErrorCode.INVALID_REQUIRED_ACKS));
      return results;
    }
    const waiting: ProducePartitionStatus[] = [];
    await Promise.all(
      request.entries.map(async (entry) => {
        const key = topicPartitionKey(entry.topicPartition);
        const { result, requiredOffset } = await this.appendToLocalLog(entry, request);
        results.set(key, result);
        if (result.errorCode === ErrorCode.NONE) waiting.push({ key, requiredOffset, acksPending: false, errorCode: ErrorCode.NONE });
      }),
    );
    if (request.requiredAcks !== -1 || waiting.length === 0) return results;
    const topicPartitions = new Map(request.entries.map((entry) => [topicPartitionKey(entry.topicPartition), entry.topicPartition]));
    return this.awaitAcks(results, waiting, topicPartitions, request.timeoutMs);
  }

  private async appendToLocalLog(
    entry: ProduceEntry,
    request: { requiredAcks: number; internalTopicsAllowed: boolean; origin?: 'client' | 'coordinator'; transactionVersion?: number },
  ): Promise<{ result: ProducePartitionResult; requiredOffset: number }> {
    const { topicPartition } = entry;
    if (INTERNAL_TOPICS.has(topicPartition.topic) && !request.internalTopicsAllowed && request.origin !== 'coordinator') {
      return { result: produceError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${topicPartition.topic}`), requiredOffset: -1 };
    }
    this.stats.produceRequest(topicPartition.topic);
    const partition = this.getPartitionOrError(topicPartition);
    if (!(partition instanceof Partition)) return { result: produceError(partition.errorCode), requiredOffset: -1 };
    const outcome = await partition.appendRecordsToLeader(entry.records, { requiredAcks: request.requiredAcks, origin: request.origin ?? 'client', transactionVersion: request.transactionVersion ?? 0 });
    if (!outcome.ok) {
      const { errorCode, recordErrors, message } = outcome.error;
      if (!KNOWN_APPEND_ERRORS.has(errorCode)) this.stats.failedProduce(topicPartition.topic);
      const result = {
        errorCode,
        baseOffset: -1,
        logAppendTimeMs: -1,
        logStartOffset: KNOWN_APPEND_ERRORS.has(errorCode) ? -1 : outcome.logStartOffset,
        recordErrors: recordErrors ?? [],
        errorMessage: recordErrors !== undefined ? message : null,
      };
      return { result, requiredOffset: -1 };
    }
    if (!outcome.result.duplicate) {
      this.stats.appended(topicPartition.topic, entry.records.length, outcome.result.recordCount);
      this.completeDelayedRequests(topicPartitionKey(topicPartition));
    }
    const result = {
      errorCode: ErrorCode.NONE,
      baseOffset: outcome.result.firstOffset,
      logAppendTimeMs: outcome.result.logAppendTimeMs,
      logStartOffset: outcome.result.logStartOffset,
      recordErrors: [],
      errorMessage: null,
    };
    return { result, requiredOffset: outcome.result.lastOffset + 1 };
  }

  /** acks=all: waits in the produce purgatory for the high watermark of every appended partition. */
  private awaitAcks(
    results: Map<string, ProducePartitionResult>,
    statuses: ProducePartitionStatus[],
    topicPartitions: ReadonlyMap<string, TopicPartition>,
    timeoutMs: number,
  ): Promise<Map<string, ProducePartitionResult>> {
    return new Promise((resolve) => {
      const operation = new DelayedProduce(
        Math.max(0, timeoutMs),
        statuses,
        (key) => {
          const found = this.getPartitionOrError(topicPartitions.get(key)!);
          return found instanceof Partition ? found : { errorCode: found.errorCode };
        },
        (done) => {
          for (const status of done) {
            const result = results.get(status.key)!;
            if (status.errorCode !== ErrorCode.NONE) results.set(status.key, { ...result, errorCode: status.errorCode });
          }
          resolve(results);
        },
      );
      this.producePurgatory.tryCompleteElseWatch(operation, statuses.map((status) => status.key));
    });
  }

  // ---- fetch ----------------------------------------------------------------------------------

  /**
   * Reads the partitions; answers at once when maxWaitMs is 0, minBytes are
   * there, or a partition had an error or a diverging epoch; otherwise waits
   * in the fetch purgatory until enough bytes arrive or maxWaitMs passes.
   */
  fetchMessages(params: FetchParams, infos: readonly FetchPartitionInfo[]): Promise<FetchPartitionData[]> {
    const pending = this.readOrWait(params, infos);
    // No extra promise on a fetch the throttles cannot concern.
    if (params.replicaId < 0 || !this.leaderQuota.hasThrottledPartitions) return pending;
    return pending.then((results) => {
      this.recordLeaderThrottledBytes(infos, results);
      return results;
    });
  }

  private async readOrWait(params: FetchParams, infos: readonly FetchPartitionInfo[]): Promise<FetchPartitionData[]> {
    const visibleBytesAtRead = infos.map((info) => this.partitions.get(topicPartitionKey(info.topicPartition))?.readableBytes(params.isolation) ?? 0);
    const first = await this.readFromLog(params, infos);
    const bytesReadable = first.reduce((sum, data) => sum + data.records.length, 0);
    // KIP-1166: a follower whose high watermark is behind the leader's learns it now rather than after max.wait.ms.
    const followerBehind = (data: FetchPartitionData, index: number) =>
      params.replicaId >= 0 && data.errorCode === ErrorCode.NONE && data.highWatermark > (infos[index]!.replicaHighWatermark ?? Infinity);
    const mustAnswer = first.some(
      (data, index) => data.errorCode !== ErrorCode.NONE || data.divergingEpoch !== null || data.preferredReadReplica >= 0 || followerBehind(data, index),
    );
    if (params.maxWaitMs <= 0 || infos.length === 0 || bytesReadable >= params.minBytes || mustAnswer || this.shuttingDown) return first;
    return new Promise((resolve, reject) => {
      const statuses: FetchPartitionStatus[] = infos.map((info, index) => {
        const key = topicPartitionKey(info.topicPartition);
        return {
          key,
          fetchOffset: info.fetchOffset,
          currentLeaderEpoch: info.currentLeaderEpoch,
          partitionMaxBytes: info.maxBytes,
          partition: this.partitions.get(key) ?? null,
          bytesRead: first[index]!.records.length,
          visibleBytesAtRead: visibleBytesAtRead[index]!,
          replicaHighWatermark: params.replicaId >= 0 ? (info.replicaHighWatermark ?? Infinity) : Infinity,
        };
      });
      const leaderThrottled = params.replicaId >= 0 && this.leaderQuota.hasThrottledPartitions ? (partition: Partition) => this.shouldLeaderThrottle(partition, params.replicaId) : null;
      const operation = new DelayedFetch(
        params,
        statuses,
        (key) => this.partitions.get(key) ?? null,
        () => {
          this.readFromLog(params, infos).then(resolve, reject);
        },
        leaderThrottled,
      );
      this.fetchPurgatory.tryCompleteElseWatch(operation, statuses.map((status) => status.key));
    });
  }

  /**
   * Reads the partitions within the response's byte budget, with exactly
   * the result of reading them one after another: each gets
   * min(its maxBytes, what earlier ones left), and the first partition with
   * data may exceed that by one batch (KIP-74). The reads of a round start
   * together, each limited as if every earlier partition of the round took
   * its whole maxBytes (so a round reads at most the remaining budget, plus
   * one oversized batch); a read is kept when the sequential read would give
   * the same bytes (see `sameAsSequential`), and the first that might not
   * starts the next round with the budget actually left.
   */
  async readFromLog(params: FetchParams, infos: readonly FetchPartitionInfo[]): Promise<FetchPartitionData[]> {
    const out: FetchPartitionData[] = [];
    let limitBytes = params.maxBytes;
    let minOneMessage = true;
    while (out.length < infos.length) {
      const round = await this.readRound(params, infos, out.length, limitBytes, minOneMessage);
      for (const read of round) {
        const targetBytes = Math.min(infos[out.length]!.maxBytes, limitBytes);
        if (read !== round[0] && !sameAsSequential(read, targetBytes, minOneMessage)) break;
        if (read.data.records.length > 0) minOneMessage = false;
        limitBytes = Math.max(0, limitBytes - read.data.records.length);
        out.push(read.data);
      }
    }
    return out;
  }

  /** Starts the reads of infos[from..] together; the first with the exact limit, the rest speculatively. */
  private async readRound(
    params: FetchParams,
    infos: readonly FetchPartitionInfo[],
    from: number,
    limitBytes: number,
    minOneMessage: boolean,
  ): Promise<SpeculativeRead[]> {
    let assumedBytes = limitBytes;
    const reads: Promise<SpeculativeRead>[] = [];
    for (let index = from; index < infos.length; index++) {
      const info = infos[index]!;
      const maxBytes = Math.min(info.maxBytes, Math.max(0, assumedBytes));
      const first = index === from;
      assumedBytes -= info.maxBytes;
      reads.push(this.readPartition(params, info, maxBytes, first && minOneMessage));
    }
    return Promise.all(reads);
  }

  private async readPartition(params: FetchParams, info: FetchPartitionInfo, maxBytes: number, minOneMessage: boolean): Promise<SpeculativeRead> {
    const read = { maxBytes, minOneMessage };
    const partition = this.getPartitionOrError(info.topicPartition);
    if (!(partition instanceof Partition)) return { ...read, data: fetchError(partition.errorCode), drained: true };
    const fromFollower = params.replicaId >= 0;
    // Kafka refuses a replica outside the assignment (NotLeaderOrFollowerException).
    if (fromFollower && partition.isLeader && !partition.remoteReplicas.has(params.replicaId)) return { ...read, data: fetchError(ErrorCode.NOT_LEADER_OR_FOLLOWER), drained: true };
    const fetchTimeMs = this.context.env.clock.nowMs();
    if (params.clientMetadata != null) {
      const preferred = this.findPreferredReadReplica(partition, params.clientMetadata, info.fetchOffset, fetchTimeMs);
      if (preferred >= 0) return { ...read, data: this.preferredReadReplicaAnswer(partition, info, preferred), drained: true };
    }
    const result = await partition.readRecords({
      fetchOffset: info.fetchOffset,
      currentLeaderEpoch: info.currentLeaderEpoch,
      lastFetchedEpoch: info.lastFetchedEpoch,
      maxBytes,
      minOneMessage,
      isolation: params.isolation,
      fetchOnlyFromLeader: params.fetchOnlyFromLeader,
    });
    if ('error' in result) return { ...read, data: fetchError(result.error.errorCode), drained: true };
    const got = result.read;
    if (fromFollower && got.divergingEpoch === null) {
      // Kafka's Replica.updateFetchStateOrThrow: a fetch from an older incarnation of the follower is refused.
      const replicaEpoch = params.replicaEpoch ?? -1;
      const registered = this.image.brokers.get(params.replicaId);
      if (replicaEpoch !== -1 && registered !== undefined && !registered.fenced && registered.epoch > replicaEpoch) {
        return { ...read, data: fetchError(ErrorCode.NOT_LEADER_OR_FOLLOWER), drained: true };
      }
      const moved = partition.updateFollowerFetchState(params.replicaId, {
        fetchOffset: info.fetchOffset,
        logStartOffset: info.logStartOffset,
        brokerEpoch: params.replicaEpoch ?? -1,
        fetchTimeMs,
        leaderEndOffset: got.logEndOffset,
      });
      if (moved) this.completeDelayedRequests(topicPartitionKey(info.topicPartition));
    }
    // Kafka's shouldLeaderThrottle: an out-of-sync follower of a throttled partition gets nothing while the rate is over the bound.
    const throttled = fromFollower && this.leaderQuota.hasThrottledPartitions && this.shouldLeaderThrottle(partition, params.replicaId);
    const records = throttled ? EMPTY_RECORDS : got.records;
    const bytes = records.length;
    if (!fromFollower && !partition.isLeader) this.consumerBytesServedAsFollower += bytes;
    const nothingToRead = got.divergingEpoch !== null || info.fetchOffset >= endOffsetFor(params.isolation, got);
    const data: FetchPartitionData = {
      errorCode: ErrorCode.NONE,
      highWatermark: got.highWatermark,
      lastStableOffset: got.lastStableOffset,
      logStartOffset: got.logStartOffset,
      records,
      abortedTransactions: got.abortedTransactions,
      divergingEpoch: got.divergingEpoch === null ? null : { epoch: got.divergingEpoch.leaderEpoch, endOffset: got.divergingEpoch.endOffset },
      preferredReadReplica: -1,
    };
    // A throttled read gives nothing at any limit.
    return { ...read, data, drained: throttled || nothingToRead || (bytes > 0 && bytes < maxBytes) };
  }

  /** Kafka's shouldLeaderThrottle: in-sync followers are never throttled (no ISR thrashing). */
  private shouldLeaderThrottle(partition: Partition, replicaId: number): boolean {
    return !partition.isr.has(replicaId) && this.leaderQuota.isThrottled(partition.topicPartition) && this.leaderQuota.isQuotaExceeded();
  }

  /** The bytes of throttled partitions a follower's fetch returned count against the leader's rate (Kafka's KafkaApis). */
  private recordLeaderThrottledBytes(infos: readonly FetchPartitionInfo[], results: readonly FetchPartitionData[]): void {
    let bytes = 0;
    infos.forEach((info, index) => {
      if (this.leaderQuota.isThrottled(info.topicPartition)) bytes += results[index]!.records.length;
    });
    this.leaderQuota.record(bytes);
  }

  /**
   * Kafka's findPreferredReadReplica: as leader, the replica the selector
   * picks for this consumer among the in-sync replicas holding
   * `fetchOffset` and the leader itself; -1 to serve the fetch here.
   */
  private findPreferredReadReplica(partition: Partition, client: ClientMetadata, fetchOffset: number, nowMs: number): number {
    const selector = this.replicaSelector;
    if (selector === null || !partition.isLeader) return -1;
    const candidates: ReplicaView[] = [];
    for (const remote of partition.remoteReplicas.values()) {
      // Out-of-sync followers may lag without end; Kafka never offers them.
      if (!partition.isr.has(remote.brokerId) || remote.logEndOffset < fetchOffset || remote.logStartOffset > fetchOffset) continue;
      candidates.push({
        brokerId: remote.brokerId,
        rack: this.rackOnListener(remote.brokerId, client.listenerName),
        logEndOffset: remote.logEndOffset,
        timeSinceLastCaughtUpMs: nowMs - remote.lastCaughtUpTimeMs,
      });
    }
    const leader: ReplicaView = { brokerId: this.nodeId, rack: this.rackOnListener(this.nodeId, client.listenerName), logEndOffset: partition.log.logEndOffset, timeSinceLastCaughtUpMs: 0 };
    candidates.push(leader);
    const selected = selector(client.rackId, candidates, leader);
    return selected === null || selected === leader ? -1 : selected.brokerId;
  }

  /** A broker's rack when it has an endpoint on `listenerName` (else null, as Kafka's Node.noNode()). */
  private rackOnListener(brokerId: number, listenerName: string): string | null {
    const broker = this.image.brokers.get(brokerId);
    if (broker === undefined || !broker.listeners.some((listener) => listener.name === listenerName)) return null;
    return broker.rack;
  }

  /** The leader's answer naming a preferred read replica: no records, the leader's offsets (Kafka skips the read). */
  private preferredReadReplicaAnswer(partition: Partition, info: FetchPartitionInfo, preferredReadReplica: number): FetchPartitionData {
    const snapshot = partition.fetchOffsetSnapshot(info.currentLeaderEpoch, false);
    if ('error' in snapshot) return fetchError(snapshot.error.errorCode);
    return {
      errorCode: ErrorCode.NONE,
      highWatermark: snapshot.snapshot.highWatermark,
      lastStableOffset: snapshot.snapshot.lastStableOffset,
      logStartOffset: snapshot.snapshot.logStartOffset,
      records: EMPTY_RECORDS,
      abortedTransactions: null,
      divergingEpoch: null,
      preferredReadReplica,
    };
  }

  // ---- offsets ---------------------------------------------------------------------------------

  /**
   * ListOffsets for one partition (Kafka's fetchOffsetForTimestamp): the
   * special timestamps -1 latest (bounded by the isolation level), -2
   * earliest, -3 max timestamp, -4 earliest local, -5 latest tiered and -6
   * earliest pending upload (no tiered storage: -1), or the first offset
   * whose timestamp is >= `timestamp`. A result at or past the readable end
   * answers offset -1.
   */
  async fetchOffsetForTimestamp(request: {
    topicPartition: TopicPartition;
    timestamp: number;
    currentLeaderEpoch: number;
    /** null for a replica or debugging request: no isolation bound. */
    isolationLevel: number | null;
    fetchOnlyFromLeader: boolean;
  }): Promise<ListOffsetsResult> {
    const partition = this.getPartitionOrError(request.topicPartition);
    if (!(partition instanceof Partition)) return listOffsetsError(partition.errorCode);
    const error = partition.checkLocalLog(request.currentLeaderEpoch, request.fetchOnlyFromLeader);
    if (error !== null) return listOffsetsError(error.errorCode);
    const log = partition.log;
    const lastFetchableOffset =
      request.isolationLevel === null ? log.logEndOffset : request.isolationLevel === 1 ? partition.lastStableOffset() : log.highWatermark;
    const timestamp = request.timestamp;
    if (timestamp === -1) return { errorCode: ErrorCode.NONE, timestamp: -1, offset: lastFetchableOffset, leaderEpoch: partition.leaderEpoch };
    if (timestamp === -5 || timestamp === -6) return { errorCode: ErrorCode.NONE, timestamp: -1, offset: -1, leaderEpoch: -1 };
    if (timestamp === -2 || timestamp === -4) {
      const earliest = log.leaderEpochCache.epochEntries[0];
      const leaderEpoch = earliest !== undefined && earliest.startOffset <= log.logStartOffset ? earliest.epoch : -1;
      return { errorCode: ErrorCode.NONE, timestamp: -1, offset: log.logStartOffset, leaderEpoch };
    }
    try {
      const found = await log.fetchOffsetByTimestamp(timestamp);
      if (found === null || found.offset >= lastFetchableOffset) return { errorCode: ErrorCode.NONE, timestamp: -1, offset: -1, leaderEpoch: -1 };
      return { errorCode: ErrorCode.NONE, timestamp: found.timestamp, offset: found.offset, leaderEpoch: found.leaderEpoch };
    } catch (caught) {
      if (caught instanceof StorageKafkaError) return listOffsetsError(caught.errorCode);
      throw caught;
    }
  }

  /** OffsetForLeaderEpoch for one partition, as the leader answers it. */
  lastOffsetForLeaderEpoch(request: { topicPartition: TopicPartition; currentLeaderEpoch: number; leaderEpoch: number; fetchOnlyFromLeader: boolean }): {
    errorCode: number;
    leaderEpoch: number;
    endOffset: number;
  } {
    const partition = this.getPartitionOrError(request.topicPartition);
    if (!(partition instanceof Partition)) return { errorCode: partition.errorCode, leaderEpoch: -1, endOffset: -1 };
    const error = partition.checkLocalLog(request.currentLeaderEpoch, request.fetchOnlyFromLeader);
    if (error !== null) return { errorCode: error.errorCode, leaderEpoch: -1, endOffset: -1 };
    const found = partition.lastOffsetForLeaderEpoch(request.leaderEpoch);
    return { errorCode: ErrorCode.NONE, leaderEpoch: found.leaderEpoch, endOffset: found.endOffset };
  }

  /**
   * DeleteRecords on one partition (Kafka's deleteRecordsOnLeader): offset -1
   * means the high watermark; the log start offset moves up to it. Returns
   * the low watermark (the smallest log start offset of the replicas).
   */
  async deleteRecords(topicPartition: TopicPartition, offset: number): Promise<{ errorCode: number; lowWatermark: number }> {
    const partition = this.getPartitionOrError(topicPartition);
    if (!(partition instanceof Partition)) return { errorCode: partition.errorCode, lowWatermark: -1 };
    if (!partition.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1 };
    if (!partition.config.cleanupPolicy.includes('delete')) return { errorCode: ErrorCode.POLICY_VIOLATION, lowWatermark: -1 };
    const target = offset === -1 ? partition.highWatermark : offset;
    if (target < 0) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1 };
    try {
      const logStartOffset = await partition.serialized(async () => {
        const moved = await partition.log.deleteRecordsBefore(target);
        partition.producerState.onLogStartOffsetIncremented(moved);
        return moved;
      });
      this.fetchPurgatory.checkAndComplete(topicPartitionKey(topicPartition));
      let lowWatermark = logStartOffset;
      for (const remote of partition.remoteReplicas.values()) if (remote.logStartOffset >= 0) lowWatermark = Math.min(lowWatermark, remote.logStartOffset);
      return { errorCode: ErrorCode.NONE, lowWatermark };
    } catch (caught) {
      if (caught instanceof StorageKafkaError) return { errorCode: caught.errorCode, lowWatermark: -1 };
      throw caught;
    }
  }

  /** The log directories with the partitions in each, for DescribeLogDirs; an offline one with KAFKA_STORAGE_ERROR. */
  describeLogDirs(): LogDirDescription[] {
    return this.logManagers.map((manager) => ({
      logDir: posix.normalize(manager.logDir),
      errorCode: manager.isOnline ? ErrorCode.NONE : ErrorCode.KAFKA_STORAGE_ERROR,
      partitions: !manager.isOnline ? [] : manager
        .allLogs()
        .filter((log) => this.partitions.has(topicPartitionKey(log.topicPartition)))
        .map((log) => ({ topicPartition: log.topicPartition, sizeBytes: log.sizeBytes, offsetLag: 0 })),
    }));
  }
}

/** Errors Kafka reports without the partition's log start offset (its "known exceptions"). */
const KNOWN_APPEND_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

function keyOf(registration: { topicName: string; partition: number }): string {
  return topicPartitionKey({ topic: registration.topicName, partition: registration.partition });
}

export function produceError(errorCode: number, errorMessage: string | null = null): ProducePartitionResult {
  return { errorCode, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage };
}

/** A fetch partition answer carrying only an error. */
/** One partition's read, with the limit and flag it was read with. */
interface SpeculativeRead {
  data: FetchPartitionData;
  maxBytes: number;
  minOneMessage: boolean;
  /**
   * The read returned all there was (an error, a diverging epoch, nothing
   * below the isolation's end offset, or fewer bytes than the limit), so
   * any limit at least as large gives the same bytes.
   */
  drained: boolean;
}

/**
 * Whether a read gives what reading with `targetBytes` and `minOneMessage`
 * would: it returned everything there was and the target allows all of it,
 * or it used the same limit and the minOneMessage flag made no difference
 * (that flag only matters when the first batch is larger than the limit:
 * returned whole with it, left out without).
 */
function sameAsSequential(read: SpeculativeRead, targetBytes: number, minOneMessage: boolean): boolean {
  const bytes = read.data.records.length;
  if (read.drained && bytes <= targetBytes) return true;
  if (read.maxBytes !== targetBytes) return false;
  return read.minOneMessage === minOneMessage || (bytes > 0 && bytes <= targetBytes);
}

const EMPTY_RECORDS = Buffer.alloc(0);

export function fetchError(errorCode: number): FetchPartitionData {
  return {
    errorCode,
    highWatermark: -1,
    lastStableOffset: -1,
    logStartOffset: -1,
    records: EMPTY_RECORDS,
    abortedTransactions: null,
    divergingEpoch: null,
    preferredReadReplica: -1,
  };
}

function listOffsetsError(errorCode: number): ListOffsetsResult {
  return { errorCode, timestamp: -1, offset: -1, leaderEpoch: -1 };
}

/** The log.cleaner.* broker settings (Kafka splits the two buffers between the threads). */
function cleanerConfig(config: BrokerConfig): CleanerConfig {
  return {
    threads: config.int('log.cleaner.threads'),
    dedupeBufferBytes: config.int('log.cleaner.dedupe.buffer.size'),
    dedupeBufferLoadFactor: config.int('log.cleaner.io.buffer.load.factor'),
    ioBufferBytes: config.int('log.cleaner.io.buffer.size'),
    ioBytesPerSecondMax: config.int('log.cleaner.io.max.bytes.per.second'),
    backoffMs: config.int('log.cleaner.backoff.ms'),
  };
}
