/**
 * One partition hosted by this broker (Kafka's Partition): its log, its
 * producer state, and its replication state as leader or follower.
 *
 * As leader it accepts client appends (validated against the topic config
 * and the producer state, serialised per partition), keeps the in-sync
 * replica set and the state of every remote replica, and advances the high
 * watermark to the smallest log end offset among the ISR. With RF=1 the ISR
 * is this broker alone, so the high watermark follows the log end offset
 * right after each append. As follower it appends what the replica fetcher
 * copies, takes the leader's high watermark, and serves consumers below it
 * (fetch from follower, KIP-392).
 *
 * Reads check the fetcher's view of the leader epoch first: an older epoch
 * gets FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH (KIP-320).
 *
 * Visible-bytes accounting: the partition counts the bytes of batches that
 * fell below the high watermark since it was opened, so a waiting fetch can
 * tell how much became readable without reading the log (fetch.min.bytes).
 */
import { ErrorCode } from '../protocol/errors.js';
import { NO_PRODUCER_ID, iterateBatches } from '../protocol/records/batch.js';
import { StorageKafkaError } from '../storage/errors.js';
import type { TopicPartition } from '../storage/file-names.js';
import type { Log, LogReadResult } from '../storage/log.js';
import type { AbortedTxn } from '../storage/transaction-index.js';
import type { EpochEndOffset } from '../storage/leader-epoch-cache.js';
import { UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from '../storage/leader-epoch-cache.js';
import {
  batchFirstOffset,
  collectProducerUpdates,
  lastSequenceOf,
  type CompletedTxn,
  type ProducerStateError,
  type ProducerStateManager,
} from '../storage/producer-state.js';
import { endTxnMarkerOf, rebuildProducerState } from '../storage/producer-state-loader.js';
import type { PartitionRegistration } from '../metadata/image.js';
import type { TopicConfig } from '../metadata/topic-config.js';
import { validateLeaderBatch, type AppendError, type ValidatedBatch } from './record-validator.js';
import type { IsrUpdate } from './replication-stats.js';

/** Which offset bounds a read (Kafka's FetchIsolation). */
export type FetchIsolation = 'logEnd' | 'highWatermark' | 'txnCommitted';

/** What the leader knows of another replica (Kafka's ReplicaState). */
export interface RemoteReplicaState {
  brokerId: number;
  logEndOffset: number;
  logStartOffset: number;
  lastCaughtUpTimeMs: number;
  lastFetchTimeMs: number;
  /** The leader's log end offset at the replica's previous fetch. */
  lastFetchLeaderLogEndOffset: number;
  /** The broker epoch the replica's fetches carry (Fetch v15+ ReplicaState), -1 when not sent. */
  brokerEpoch: number;
}

/** Kafka's LeaderRecoveryState values. */
const LEADER_RECOVERED = 0;
const LEADER_RECOVERING = 1;

/** What the leader sends the controller to change the ISR (one partition of an AlterPartition request). */
export interface IsrChangeProposal {
  topicPartition: TopicPartition;
  topicId: string;
  leaderEpoch: number;
  partitionEpoch: number;
  newIsrWithEpochs: { brokerId: number; brokerEpoch: number }[];
  /** KIP-704: 0 (RECOVERED) once an unclean leader may take followers; absent means 0. */
  leaderRecoveryState?: number;
}

/** The controller's answer to a proposal: the partition as it now is, or an error code. */
export type IsrChangeOutcome = { errorCode: 0; isr: number[]; leaderEpoch: number; partitionEpoch: number } | { errorCode: number };

/** How the leader reaches the controller and reads the cluster's broker registrations. */
export interface IsrChangeContext {
  /** Sends the proposal (Kafka's AlterPartitionManager); resolves with the controller's answer. */
  submit(proposal: IsrChangeProposal): Promise<IsrChangeOutcome>;
  /** A replica may join the ISR: registered, unfenced, not shutting down, and (when given) with this broker epoch. */
  isReplicaIsrEligible(brokerId: number, brokerEpoch: number): boolean;
  /** Called when the ISR or the high watermark changed, so waiting requests re-check. */
  onStateChange(): void;
  /** How a proposed change ended: a committed shrink or expansion, or a failure (Kafka's AlterPartitionListener, for the ISR meters). */
  onIsrUpdated?(update: IsrUpdate): void;
}

export interface LeaderAppendResult {
  firstOffset: number;
  lastOffset: number;
  /** Append time under LogAppendTime, else -1 (for a duplicate: the original batch's max timestamp). */
  logAppendTimeMs: number;
  logStartOffset: number;
  recordCount: number;
  /** True when this append was a retry of a batch already in the log. */
  duplicate: boolean;
}

export type AppendOutcome = { ok: true; result: LeaderAppendResult } | { ok: false; error: AppendError; logStartOffset: number };

export interface OffsetSnapshot {
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  lastStableOffset: number;
}

export interface PartitionReadResult {
  records: Buffer;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  logEndOffset: number;
  abortedTransactions: AbortedTxn[] | null;
  divergingEpoch: EpochEndOffset | null;
}

export type PartitionError = { errorCode: number; message: string };

export interface PartitionOptions {
  topicPartition: TopicPartition;
  topicId: string;
  localBrokerId: number;
  log: Log;
  producerState: ProducerStateManager;
  config: TopicConfig;
  nowMs: () => number;
  /** replica.lag.time.max.ms. */
  replicaLagTimeMaxMs?: number;
  isrChange?: IsrChangeContext;
}

export class Partition {
  readonly topicPartition: TopicPartition;
  topicId: string;
  readonly log: Log;
  readonly producerState: ProducerStateManager;
  private readonly localBrokerId: number;
  private readonly nowMs: () => number;
  configValue: TopicConfig;

  leaderId = -1;
  leaderEpoch = -1;
  partitionEpoch = -1;
  replicas: readonly number[] = [];
  isr: ReadonlySet<number> = new Set();
  /**
   * Kafka's maximal ISR: the committed ISR plus a member being added while
   * an expansion is in flight. The high watermark waits for all of it, so a
   * replica is never counted out before the controller agrees.
   */
  maximalIsr: ReadonlySet<number> = new Set();
  /** An AlterPartition is in flight: no other ISR change until it is answered. */
  isrChangeInFlight = false;
  /** Other replicas, as seen by the leader. */
  readonly remoteReplicas = new Map<number, RemoteReplicaState>();
  /** The offset where this broker's leader epoch began (followers must reach it to join the ISR). */
  private leaderEpochStartOffset = -1;
  private readonly replicaLagTimeMaxMs: number;
  private readonly isrChange: IsrChangeContext | null;

  private appendChain: Promise<unknown> = Promise.resolve();
  /** Bytes of batches below the high watermark, counted since this object was created. */
  private visibleBytes = 0;
  /** Appended batches above the high watermark, oldest first: their last offset and size. */
  private readonly pendingVisible: { lastOffset: number; sizeBytes: number }[] = [];
  /** Bytes appended to the log since this object was created. */
  private appendedBytes = 0;

  constructor(options: PartitionOptions) {
    this.topicPartition = options.topicPartition;
    this.topicId = options.topicId;
    this.localBrokerId = options.localBrokerId;
    this.log = options.log;
    this.producerState = options.producerState;
    this.configValue = options.config;
    this.nowMs = options.nowMs;
    // Kafka's updateHighWatermark on opening the log: transactions the
    // producer-state rebuild replayed to their markers stay unstable until the
    // high watermark passes them, and the checkpointed one may already have.
    this.producerState.onHighWatermarkUpdated(this.log.highWatermark);
    this.replicaLagTimeMaxMs = options.replicaLagTimeMaxMs ?? 30_000;
    this.isrChange = options.isrChange ?? null;
  }

  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId;
  }

  get config(): TopicConfig {
    return this.configValue;
  }

  get logStartOffset(): number {
    return this.log.logStartOffset;
  }

  get highWatermark(): number {
    return this.log.highWatermark;
  }

  /** Bytes that became readable below the high watermark since the partition was opened. */
  get highWatermarkBytes(): number {
    return this.visibleBytes;
  }

  /** Bytes readable by a fetch of `isolation` since the partition was opened (followers read to the log end). */
  readableBytes(isolation: FetchIsolation): number {
    return isolation === 'logEnd' ? this.appendedBytes : this.visibleBytes;
  }

  updateConfig(config: TopicConfig): void {
    this.configValue = config;
    this.log.updateConfig(config);
  }

  // ---- leadership ---------------------------------------------------------------------

  /**
   * Becomes leader for `registration` (leader == this broker): records the
   * new epoch's start offset in the leader-epoch cache, resets the remote
   * replica states and recomputes the high watermark.
   */
  async makeLeader(registration: PartitionRegistration): Promise<boolean> {
    const isNewLeaderEpoch = registration.leaderEpoch > this.leaderEpoch || !this.isLeader;
    this.applyRegistration(registration);
    if (isNewLeaderEpoch) {
      await this.serialized(async () => {
        this.leaderEpochStartOffset = this.log.logEndOffset;
        if (this.log.leaderEpochCache.assign(registration.leaderEpoch, this.log.logEndOffset)) {
          await this.log.maybeHandleIOException(() => this.log.leaderEpochCache.flush());
        }
      });
      // Kafka resets every remote replica on a new leader epoch; ISR members count as caught up now.
      this.remoteReplicas.clear();
      const nowMs = this.nowMs();
      for (const brokerId of registration.replicas) {
        if (brokerId === this.localBrokerId) continue;
        const lastCaughtUpTimeMs = registration.isr.includes(brokerId) ? nowMs : 0;
        this.remoteReplicas.set(brokerId, { brokerId, logEndOffset: -1, logStartOffset: -1, lastCaughtUpTimeMs, lastFetchTimeMs: 0, lastFetchLeaderLogEndOffset: -1, brokerEpoch: -1 });
      }
    } else {
      for (const brokerId of registration.replicas) {
        if (brokerId === this.localBrokerId || this.remoteReplicas.has(brokerId)) continue;
        this.remoteReplicas.set(brokerId, { brokerId, logEndOffset: -1, logStartOffset: -1, lastCaughtUpTimeMs: 0, lastFetchTimeMs: 0, lastFetchLeaderLogEndOffset: -1, brokerEpoch: -1 });
      }
    }
    this.maybeIncrementLeaderHighWatermark();
    this.maybeEndLeaderRecovery(registration);
    return isNewLeaderEpoch;
  }

  /**
   * KIP-704: a leader elected uncleanly starts RECOVERING; once it leads (its
   * log is the partition's from now on) it reports RECOVERED through
   * AlterPartition with the ISR unchanged, as Kafka's Partition does.
   */
  private maybeEndLeaderRecovery(registration: PartitionRegistration): void {
    if ((registration.leaderRecoveryState ?? 0) !== LEADER_RECOVERING || this.isrChangeInFlight || this.isrChange === null) return;
    this.submitIsrChange([...this.isr], { leaderRecoveryState: LEADER_RECOVERED });
  }

  /**
   * Becomes a follower of `registration.leader` (Kafka's makeFollower).
   * Returns true when the leader or its epoch changed: the fetcher then
   * restarts from the log end, and truncation happens through the leader's
   * diverging-epoch answer (KIP-595) before anything is appended.
   */
  makeFollower(registration: PartitionRegistration): boolean {
    const changed = registration.leaderEpoch > this.leaderEpoch || registration.leader !== this.leaderId;
    this.applyRegistration(registration);
    this.remoteReplicas.clear();
    this.leaderEpochStartOffset = -1;
    return changed;
  }

  private applyRegistration(registration: PartitionRegistration): void {
    this.leaderId = registration.leader;
    this.leaderEpoch = registration.leaderEpoch;
    this.replicas = [...registration.replicas];
    // A metadata record at or after the partition epoch we know replaces any ISR change in flight.
    if (registration.partitionEpoch >= this.partitionEpoch) {
      this.partitionEpoch = registration.partitionEpoch;
      this.isr = new Set(registration.isr);
      this.maximalIsr = this.isr;
      this.isrChangeInFlight = false;
    }
  }

  /** Kafka's checkCurrentLeaderEpoch: -1 means the fetcher did not say. */
  checkCurrentLeaderEpoch(currentLeaderEpoch: number): number {
    if (currentLeaderEpoch < 0) return ErrorCode.NONE;
    if (this.leaderEpoch > currentLeaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (this.leaderEpoch < currentLeaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
    return ErrorCode.NONE;
  }

  /** The epoch check, then leadership when required. */
  checkLocalLog(currentLeaderEpoch: number, requireLeader: boolean): PartitionError | null {
    const epochError = this.checkCurrentLeaderEpoch(currentLeaderEpoch);
    if (epochError !== ErrorCode.NONE) {
      return { errorCode: epochError, message: `leader epoch ${currentLeaderEpoch} does not match the current epoch ${this.leaderEpoch} of ${this.name}` };
    }
    if (requireLeader && !this.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, message: `broker ${this.localBrokerId} is not the leader of ${this.name}` };
    if (this.log.isOffline) return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, message: `the log of ${this.name} is offline` };
    return null;
  }

  // ---- high watermark -------------------------------------------------------------------

  /**
   * Raises the high watermark to the smallest log end offset among the
   * in-sync replicas (just the local log while the ISR is this broker).
   * Returns true when it moved.
   */
  maybeIncrementLeaderHighWatermark(): boolean {
    if (!this.isLeader) return false;
    const leaderEndOffset = this.log.logEndOffset;
    const nowMs = this.nowMs();
    let newHighWatermark = leaderEndOffset;
    for (const remote of this.remoteReplicas.values()) {
      // Kafka waits for the maximal ISR, and for a caught-up eligible replica about to join it.
      const waitFor =
        this.maximalIsr.has(remote.brokerId) ||
        (this.isCaughtUp(remote, leaderEndOffset, nowMs) && this.isrChange?.isReplicaIsrEligible(remote.brokerId, remote.brokerEpoch) === true);
      if (waitFor && remote.logEndOffset < newHighWatermark) newHighWatermark = remote.logEndOffset;
    }
    if (newHighWatermark <= this.log.highWatermark) return false;
    const kept = this.log.updateHighWatermark(newHighWatermark);
    this.producerState.onHighWatermarkUpdated(kept);
    this.countVisibleBytes(kept);
    return true;
  }

  /** Batches now below the high watermark count as readable (fetch.min.bytes of waiting consumer fetches). */
  private countVisibleBytes(highWatermark: number): void {
    while (this.pendingVisible.length > 0 && this.pendingVisible[0]!.lastOffset < highWatermark) this.visibleBytes += this.pendingVisible.shift()!.sizeBytes;
  }

  /** Whether acks=all can be answered for an append ending before `requiredOffset` (Kafka's checkEnoughReplicasReachOffset). */
  checkEnoughReplicasReachOffset(requiredOffset: number): { hasEnough: boolean; errorCode: number } {
    if (!this.isLeader) return { hasEnough: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (this.log.highWatermark < requiredOffset) return { hasEnough: false, errorCode: ErrorCode.NONE };
    if (this.configValue.minInsyncReplicas <= this.maximalIsr.size) return { hasEnough: true, errorCode: ErrorCode.NONE };
    return { hasEnough: true, errorCode: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND };
  }

  lastStableOffset(): number {
    const firstUnstable = this.producerState.firstUnstableOffset();
    const highWatermark = this.log.highWatermark;
    return firstUnstable === null ? highWatermark : Math.min(Math.max(firstUnstable, this.log.logStartOffset), highWatermark);
  }

  fetchOffsetSnapshot(currentLeaderEpoch: number, fetchOnlyFromLeader: boolean): { snapshot: OffsetSnapshot } | { error: PartitionError } {
    const error = this.checkLocalLog(currentLeaderEpoch, fetchOnlyFromLeader);
    if (error !== null) return { error };
    return {
      snapshot: {
        logStartOffset: this.log.logStartOffset,
        logEndOffset: this.log.logEndOffset,
        highWatermark: this.log.highWatermark,
        lastStableOffset: this.lastStableOffset(),
      },
    };
  }

  // ---- append -------------------------------------------------------------------------

  /**
   * A client's batch, appended as leader: min.insync.replicas for acks=all,
   * validation, duplicate and sequence checks, then the log append and the
   * producer-state update, all serialised with other appends to this
   * partition.
   */
  async appendRecordsToLeader(records: Buffer, options: { requiredAcks: number; origin?: 'client' | 'coordinator'; transactionVersion?: number }): Promise<AppendOutcome> {
    const origin = options.origin ?? 'client';
    const notLeader = this.checkLocalLog(-1, true);
    if (notLeader !== null) return this.failure(notLeader.errorCode, notLeader.message);
    if (options.requiredAcks === -1 && this.isr.size < this.configValue.minInsyncReplicas) {
      return this.failure(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `the in-sync replicas of ${this.name} (${this.isr.size}) are fewer than min.insync.replicas ${this.configValue.minInsyncReplicas}`,
      );
    }
    const checked = validateLeaderBatch(records, {
      config: {
        maxMessageBytes: this.configValue.maxMessageBytes,
        compacted: this.configValue.cleanupPolicy.includes('compact'),
        messageTimestampType: this.configValue.messageTimestampType,
        messageTimestampBeforeMaxMs: this.configValue.messageTimestampBeforeMaxMs,
        messageTimestampAfterMaxMs: this.configValue.messageTimestampAfterMaxMs,
        compressionType: this.configValue.compressionType,
        maxDecompressedMessageBytes: this.configValue.maxDecompressedMessageBytes,
      },
      nowMs: this.nowMs(),
      leaderEpoch: this.leaderEpoch,
      origin,
      topicPartition: this.name,
    });
    if ('error' in checked) return { ok: false, error: checked.error, logStartOffset: this.log.logStartOffset };
    return this.serialized(() => this.appendValidated(checked.validated, origin, options.transactionVersion ?? 0));
  }

  private async appendValidated(validated: ValidatedBatch, origin: 'client' | 'coordinator', transactionVersion: number): Promise<AppendOutcome> {
    const { batch, header } = validated;
    if (!this.isLeader) return this.failure(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.localBrokerId} is no longer the leader of ${this.name}`);
    const hasProducer = header.producerId > NO_PRODUCER_ID;
    if (hasProducer && origin === 'client') {
      const duplicate = this.producerState.lastEntry(header.producerId)?.findDuplicateBatch(header) ?? null;
      if (duplicate !== null) {
        return {
          ok: true,
          result: {
            firstOffset: batchFirstOffset(duplicate),
            lastOffset: duplicate.lastOffset,
            logAppendTimeMs: duplicate.timestampMs,
            logStartOffset: this.log.logStartOffset,
            recordCount: duplicate.offsetDelta + 1,
            duplicate: true,
          },
        };
      }
    }
    const firstOffset = this.log.logEndOffset;
    const appendInfo = hasProducer ? this.producerState.prepareUpdate(header.producerId, origin) : null;
    let completedTxn: CompletedTxn | null = null;
    let producerError: ProducerStateError | null = null;
    if (appendInfo !== null && header.isControl) {
      const marker = endTxnMarkerOf(batch);
      if (marker !== null) {
        const ended = appendInfo.appendEndTxnMarker({ producerEpoch: header.producerEpoch, offset: firstOffset, timestampMs: header.maxTimestamp, transactionVersion, ...marker });
        producerError = ended.error;
        completedTxn = ended.completed;
      }
    } else if (appendInfo !== null) {
      producerError = appendInfo.appendDataBatch({
        producerEpoch: header.producerEpoch,
        firstSeq: header.baseSequence,
        lastSeq: lastSequenceOf(header),
        maxTimestampMs: header.maxTimestamp,
        firstOffset,
        lastOffset: firstOffset + header.lastOffsetDelta,
        isTransactional: header.isTransactional,
      });
    }
    if (producerError !== null) return this.failure(producerError.errorCode, producerError.message);
    const activeBaseBefore = this.log.activeSegment.baseOffset;
    let info;
    try {
      // validateLeaderBatch above already checked framing and CRC and stamped
      // LogAppendTime; checking again in the log would double the CRC cost.
      info = await this.log.append(batch, { leaderEpoch: this.leaderEpoch, assignOffsets: true, origin, validateRecords: false });
    } catch (error) {
      if (error instanceof StorageKafkaError) return this.failure(error.errorCode, error.message);
      throw error;
    }
    if (info.firstOffset !== firstOffset) throw new Error(`${this.name}: append landed at ${info.firstOffset}, expected ${firstOffset}`);
    // A roll happened in this append: snapshot the producer state as of the new segment's base offset.
    if (this.log.activeSegment.baseOffset !== activeBaseBefore && this.producerState.mapEndOffset === this.log.activeSegment.baseOffset) {
      // A failed snapshot takes the log directory offline and fails the append, as a failed roll does in
      // Kafka: the batch is not acknowledged, and its retry is refused rather than appended a second time.
      try {
        await this.log.maybeHandleIOException(() => this.producerState.takeSnapshot());
      } catch (error) {
        if (error instanceof StorageKafkaError) return this.failure(error.errorCode, error.message);
        throw error;
      }
    }
    if (appendInfo !== null) this.producerState.update(appendInfo);
    if (completedTxn !== null) {
      try {
        await this.completeTxn(completedTxn);
      } catch (error) {
        if (error instanceof StorageKafkaError) return this.failure(error.errorCode, error.message);
        throw error;
      }
    }
    this.producerState.updateMapEndOffset(info.lastOffset + 1);
    this.pendingVisible.push({ lastOffset: info.lastOffset, sizeBytes: batch.length });
    this.appendedBytes += batch.length;
    this.maybeIncrementLeaderHighWatermark();
    return {
      ok: true,
      result: {
        firstOffset: info.firstOffset,
        lastOffset: info.lastOffset,
        logAppendTimeMs: validated.logAppendTimeMs,
        logStartOffset: info.logStartOffset,
        recordCount: info.recordCount,
        duplicate: false,
      },
    };
  }

  /**
   * A COMMIT or ABORT marker ended a transaction: an aborted one goes into
   * the transaction index with the last stable offset it leaves (Kafka's
   * ProducerStateManager.lastStableOffset), then leaves the open set.
   */
  private async completeTxn(completed: CompletedTxn): Promise<void> {
    if (completed.isAborted) {
      const lastStableOffset = this.producerState.lastStableOffsetAfter(completed);
      await this.log.appendAbortedTransaction({ producerId: completed.producerId, firstOffset: completed.firstOffset, lastOffset: completed.lastOffset, lastStableOffset });
    }
    this.producerState.completeTxn(completed);
  }

  private failure(errorCode: number, message: string): AppendOutcome {
    return { ok: false, error: { errorCode, message }, logStartOffset: this.log.isOffline ? -1 : this.log.logStartOffset };
  }

  /** Runs `operation` after every earlier append or leadership change of this partition. */
  serialized<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.appendChain.then(operation);
    this.appendChain = run.catch(() => {});
    return run;
  }

  // ---- the leader's view of its followers ----------------------------------------------

  /**
   * A follower fetched from `fetchOffset` (Kafka's updateFollowerFetchState):
   * its log end offset is the fetch offset, it caught up when that reached
   * the leader's log end offset at this fetch or at its previous one; then
   * the ISR may grow and the high watermark move. Returns true when the
   * high watermark moved.
   */
  updateFollowerFetchState(replicaId: number, fetch: { fetchOffset: number; logStartOffset: number; brokerEpoch: number; fetchTimeMs: number; leaderEndOffset: number }): boolean {
    const remote = this.remoteReplicas.get(replicaId);
    if (remote === undefined) return false;
    if (fetch.fetchOffset >= fetch.leaderEndOffset) remote.lastCaughtUpTimeMs = Math.max(remote.lastCaughtUpTimeMs, fetch.fetchTimeMs);
    else if (fetch.fetchOffset >= remote.lastFetchLeaderLogEndOffset) remote.lastCaughtUpTimeMs = Math.max(remote.lastCaughtUpTimeMs, remote.lastFetchTimeMs);
    remote.logEndOffset = fetch.fetchOffset;
    remote.logStartOffset = fetch.logStartOffset;
    remote.lastFetchLeaderLogEndOffset = fetch.leaderEndOffset;
    remote.lastFetchTimeMs = fetch.fetchTimeMs;
    remote.brokerEpoch = fetch.brokerEpoch;
    this.maybeExpandIsr(remote);
    return this.maybeIncrementLeaderHighWatermark();
  }

  /** Kafka's ReplicaState.isCaughtUp. */
  private isCaughtUp(remote: RemoteReplicaState, leaderEndOffset: number, nowMs: number): boolean {
    return remote.logEndOffset === leaderEndOffset || nowMs - remote.lastCaughtUpTimeMs <= this.replicaLagTimeMaxMs;
  }

  /** A follower that reached the high watermark within this leader epoch joins the ISR (through the controller). */
  private maybeExpandIsr(remote: RemoteReplicaState): void {
    if (!this.isLeader || this.isrChangeInFlight || this.isr.has(remote.brokerId) || this.isrChange === null) return;
    const inSync = remote.logEndOffset >= this.log.highWatermark && this.leaderEpochStartOffset >= 0 && remote.logEndOffset >= this.leaderEpochStartOffset;
    if (!inSync || !this.isrChange.isReplicaIsrEligible(remote.brokerId, remote.brokerEpoch)) return;
    const newIsr = [...this.isr, remote.brokerId];
    this.maximalIsr = new Set(newIsr);
    this.submitIsrChange(newIsr);
  }

  /**
   * The isr-expiration task (every replica.lag.time.max.ms / 2): followers
   * that have not caught up for replica.lag.time.max.ms leave the ISR. The
   * maximal ISR keeps them until the controller agrees, so the high
   * watermark does not run ahead of what the committed ISR holds.
   */
  maybeShrinkIsr(): void {
    if (!this.isLeader || this.isrChangeInFlight || this.isrChange === null) return;
    const leaderEndOffset = this.log.logEndOffset;
    const nowMs = this.nowMs();
    const outOfSync = [...this.isr].filter((brokerId) => {
      if (brokerId === this.localBrokerId) return false;
      const remote = this.remoteReplicas.get(brokerId);
      return remote === undefined || !this.isCaughtUp(remote, leaderEndOffset, nowMs);
    });
    if (outOfSync.length === 0) return;
    this.submitIsrChange([...this.isr].filter((brokerId) => !outOfSync.includes(brokerId)));
  }

  private submitIsrChange(newIsr: number[], options: { leaderRecoveryState?: number } = {}): void {
    const isrChange = this.isrChange!;
    this.isrChangeInFlight = true;
    const proposal: IsrChangeProposal = {
      ...options,
      topicPartition: this.topicPartition,
      topicId: this.topicId,
      leaderEpoch: this.leaderEpoch,
      partitionEpoch: this.partitionEpoch,
      newIsrWithEpochs: newIsr.map((brokerId) => ({ brokerId, brokerEpoch: brokerId === this.localBrokerId ? -1 : (this.remoteReplicas.get(brokerId)?.brokerEpoch ?? -1) })),
    };
    const sentFor = { leaderEpoch: this.leaderEpoch, partitionEpoch: this.partitionEpoch };
    isrChange.submit(proposal).then(
      (outcome) => this.handleIsrChangeOutcome(sentFor, outcome),
      () => this.handleIsrChangeOutcome(sentFor, { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR }),
    );
  }

  /**
   * Kafka's handleAlterPartitionUpdate: a success newer than what we know
   * becomes the committed ISR; an error drops the pending change (the
   * metadata log brings the truth, or the next check proposes again).
   */
  private handleIsrChangeOutcome(sentFor: { leaderEpoch: number; partitionEpoch: number }, outcome: IsrChangeOutcome): void {
    // Metadata moved on while the request was out: it already replaced the pending state.
    if (sentFor.leaderEpoch !== this.leaderEpoch || sentFor.partitionEpoch !== this.partitionEpoch || !this.isrChangeInFlight) return;
    if ('isr' in outcome && outcome.leaderEpoch === this.leaderEpoch && outcome.partitionEpoch >= this.partitionEpoch) {
      const sizeBefore = this.isr.size;
      this.partitionEpoch = outcome.partitionEpoch;
      this.isr = new Set(outcome.isr);
      if (this.isr.size < sizeBefore) this.isrChange?.onIsrUpdated?.('shrink');
      else if (this.isr.size > sizeBefore) this.isrChange?.onIsrUpdated?.('expand');
    } else if (outcome.errorCode !== ErrorCode.NONE) {
      this.isrChange?.onIsrUpdated?.('failed');
    }
    this.maximalIsr = this.isr;
    this.isrChangeInFlight = false;
    this.maybeIncrementLeaderHighWatermark();
    this.isrChange?.onStateChange();
  }

  // ---- follower -------------------------------------------------------------------------

  /**
   * Appends batches fetched from the leader, keeping their offsets and
   * leader epochs (Kafka's appendRecordsToFollowerOrFutureReplica); the
   * producer state and transaction index follow them as on the leader.
   */
  async appendRecordsAsFollower(records: Buffer): Promise<{ lastOffset: number } | null> {
    if (records.length === 0) return null;
    return this.serialized(async () => {
      // A fetch answered by the old leader may be queued behind makeLeader: appended now, its batches (stamped
      // with the old epoch) would land after the new epoch's start, and every follower would loop truncating on
      // the diverging epoch (found by test/fault/'s clean bounce). Kafka removes the fetcher before makeLeader.
      if (this.isLeader) return null;
      const batches = [...iterateBatches(records)].map(({ position, header }) =>
        header.isControl ? { header, endTxnMarker: endTxnMarkerOf(records.subarray(position, position + header.sizeBytes)) } : { header });
      const { infos, completed } = collectProducerUpdates(this.producerState, batches);
      const activeBaseBefore = this.log.activeSegment.baseOffset;
      const info = await this.log.append(records, { leaderEpoch: -1, assignOffsets: false });
      if (this.log.activeSegment.baseOffset !== activeBaseBefore && this.producerState.mapEndOffset === this.log.activeSegment.baseOffset) {
        await this.log.maybeHandleIOException(() => this.producerState.takeSnapshot());
      }
      for (const appendInfo of infos) this.producerState.update(appendInfo);
      for (const txn of completed) await this.completeTxn(txn);
      this.producerState.updateMapEndOffset(info.lastOffset + 1);
      this.pendingVisible.push({ lastOffset: info.lastOffset, sizeBytes: records.length });
      this.appendedBytes += records.length;
      return { lastOffset: info.lastOffset };
    });
  }

  /** A follower's high watermark: the leader's, bounded by what this log holds. Returns true when it moved. */
  updateFollowerHighWatermark(leaderHighWatermark: number): boolean {
    const before = this.log.highWatermark;
    const kept = this.log.updateHighWatermark(Math.max(before, Math.min(leaderHighWatermark, this.log.logEndOffset)));
    this.producerState.onHighWatermarkUpdated(kept);
    if (kept === before) return false;
    this.countVisibleBytes(kept);
    return true;
  }

  /** The leader's log start offset moved (retention, DeleteRecords): follow it, up to the high watermark. */
  async maybeIncrementLogStartOffset(leaderLogStartOffset: number): Promise<void> {
    if (leaderLogStartOffset <= this.log.logStartOffset || leaderLogStartOffset > this.log.highWatermark) return;
    await this.serialized(async () => {
      const moved = await this.log.deleteRecordsBefore(leaderLogStartOffset);
      this.producerState.onLogStartOffsetIncremented(moved);
    });
  }

  /** Removes the log from `offset` on (a diverged tail) and rebuilds the producer state for what is left. */
  async truncateTo(offset: number): Promise<void> {
    await this.serialized(async () => {
      if (!(await this.log.truncateTo(offset))) return;
      this.forgetPendingFrom(offset);
      await rebuildProducerState(this.log, this.producerState, { nowMs: this.nowMs(), hadCleanShutdown: false });
    });
  }

  /** Empties the log to start again at `offset` (the follower fell below the leader's log start). */
  async truncateFullyAndStartAt(offset: number): Promise<void> {
    await this.serialized(async () => {
      await this.log.truncateFullyAndStartAt(offset);
      await this.producerState.truncateFullyAndStartAt(offset);
      this.forgetPendingFrom(0);
    });
  }

  /** Truncated batches will never become readable. */
  private forgetPendingFrom(offset: number): void {
    while (this.pendingVisible.length > 0 && this.pendingVisible.at(-1)!.lastOffset >= offset) this.pendingVisible.pop();
  }

  // ---- read ----------------------------------------------------------------------------

  /**
   * Reads for a fetch: the epoch and leadership checks, then up to
   * `maxBytes` from `fetchOffset` bounded by the isolation's offset.
   * Offsets outside [logStartOffset, logEndOffset] give OFFSET_OUT_OF_RANGE.
   */
  async readRecords(request: {
    fetchOffset: number;
    currentLeaderEpoch: number;
    lastFetchedEpoch: number;
    maxBytes: number;
    minOneMessage: boolean;
    isolation: FetchIsolation;
    fetchOnlyFromLeader: boolean;
  }): Promise<{ read: PartitionReadResult } | { error: PartitionError }> {
    const error = this.checkLocalLog(request.currentLeaderEpoch, request.fetchOnlyFromLeader);
    if (error !== null) return { error };
    const highWatermark = this.log.highWatermark;
    const lastStableOffset = this.lastStableOffset();
    const logStartOffset = this.log.logStartOffset;
    const logEndOffset = this.log.logEndOffset;
    const offsets = { highWatermark, lastStableOffset, logStartOffset, logEndOffset };
    const divergingEpoch = this.divergingEpoch(request.lastFetchedEpoch, request.fetchOffset);
    if (divergingEpoch !== null) return { read: { ...offsets, records: EMPTY, abortedTransactions: null, divergingEpoch } };
    if (request.fetchOffset < logStartOffset || request.fetchOffset > logEndOffset) {
      return { error: { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, message: `fetch offset ${request.fetchOffset} is outside [${logStartOffset}, ${logEndOffset}] of ${this.name}` } };
    }
    const maxOffset = request.isolation === 'logEnd' ? logEndOffset : request.isolation === 'highWatermark' ? highWatermark : lastStableOffset;
    let read: LogReadResult;
    try {
      read = await this.log.read(request.fetchOffset, {
        maxBytes: request.maxBytes,
        maxOffset,
        minOneMessage: request.minOneMessage,
        includeAbortedTransactions: request.isolation === 'txnCommitted',
      });
    } catch (caught) {
      if (caught instanceof StorageKafkaError) return { error: { errorCode: caught.errorCode, message: caught.message } };
      throw caught;
    }
    // A first batch larger than the limit is left out (v3+ consumers move on once the limit grows, KIP-74).
    const records = read.firstEntryIncomplete ? EMPTY : read.records;
    return { read: { ...offsets, records, abortedTransactions: read.abortedTransactions, divergingEpoch: null } };
  }

  /** KIP-595 divergence: the fetcher's last epoch ended earlier here, or is unknown. */
  private divergingEpoch(lastFetchedEpoch: number, fetchOffset: number): EpochEndOffset | null {
    if (lastFetchedEpoch < 0) return null;
    const end = this.lastOffsetForLeaderEpoch(lastFetchedEpoch);
    if (end.leaderEpoch < lastFetchedEpoch || end.endOffset < fetchOffset) return end;
    return null;
  }

  /** OffsetForLeaderEpoch: where `leaderEpoch` ended in this log (-1, -1 when unknown). */
  lastOffsetForLeaderEpoch(leaderEpoch: number): EpochEndOffset {
    const found = this.log.endOffsetForEpoch(leaderEpoch);
    if (found.leaderEpoch === UNDEFINED_EPOCH) return { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    return found;
  }

  get name(): string {
    return `${this.topicPartition.topic}-${this.topicPartition.partition}`;
  }
}

const EMPTY = Buffer.alloc(0);
