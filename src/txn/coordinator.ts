/**
 * The transaction coordinator as the broker sees it (Kafka's
 * TransactionCoordinator): routes each request to the shard of its
 * transactional id's `__transaction_state` partition (leader = coordinator),
 * checks what Kafka checks before the state is involved (empty ids, the
 * transaction.max.timeout.ms bound), allocates producer ids, and sends the
 * transaction markers (Kafka's TransactionMarkerChannelManager).
 *
 * Markers: a transaction in PrepareCommit / PrepareAbort has its COMMIT or
 * ABORT marker written to each of its partitions through the marker sender
 * (the local writer for the partitions this node leads, WriteTxnMarkers to
 * the other leaders: src/txn/marker-channel.ts). A partition answering a retriable error
 * is retried after TXN_MARKER_RETRY_BACKOFF_MS until written; a partition
 * whose topic is gone counts as done; any other error stops the sending, as
 * Kafka's TransactionMarkerRequestCompletionHandler does, and the
 * transaction stays prepared until the coordinator loads again. Once every
 * marker is written, CompleteCommit / CompleteAbort is written.
 *
 * Transactions V2 (KIP-890 part 2) when the transaction.version feature
 * is 2: EndTxn v5 bumps the epoch of every transaction (shard.ts), Produce
 * v12+ and TxnOffsetCommit v5+ add their partitions to the transaction
 * (`addPartitions` with client version 2), and the aborts the coordinator
 * starts itself (fencing, timeouts) follow the finalized version.
 */
import type { Env } from '../io/env.js';
import type { MetadataDelta, MetadataImage, MetadataPublisher } from '../metadata/image.js';
import { CoordinatorRuntime, type CoordinatorLog, type RuntimeLogger, type WriteOutcome } from '../coordinator/runtime.js';
import { errorInfo, ErrorCode } from '../protocol/errors.js';
import { CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, partitionFor } from '../group/placement.js';
import { TRANSACTION_VERSION_FEATURE } from '../metadata/features.js';
import type { TransactionCoordinatorConfig } from './config.js';
import { partitionList, type TransactionStateName } from './metadata.js';
import type { ProducerIdManager } from './producer-id-manager.js';
import { TRANSACTION_LOG_CODEC, type TransactionLogRecord } from './records.js';
import {
  TransactionCoordinatorShard,
  type EndTxnInput,
  type InitProducerIdResponse,
  type PendingMarkers,
  type ProducerIdAndEpoch,
  type TopicPartitionRef,
} from './shard.js';

/** How long a partition whose marker failed with a retriable error waits before the next try. */
export const TXN_MARKER_RETRY_BACKOFF_MS = 100;

/** The marker for one transaction, as WriteTxnMarkers carries it. */
export interface TxnMarker {
  producerId: number;
  producerEpoch: number;
  committed: boolean;
  coordinatorEpoch: number;
  partitions: readonly TopicPartitionRef[];
  /** The transaction's client version (WriteTxnMarkers v2), 0 when not known. */
  transactionVersion?: number;
}

/** Writes a transaction's marker into each partition (the broker's WriteTxnMarkers path); an error code per partition. */
export interface TxnMarkerWriter {
  writeMarkers(marker: TxnMarker): Promise<{ topic: string; partition: number; errorCode: number }[]>;
}

export interface TransactionCoordinatorOptions {
  nodeId: number;
  config: TransactionCoordinatorConfig;
  env: Env;
  log: CoordinatorLog;
  logger: RuntimeLogger;
  image: () => MetadataImage;
  producerIds: ProducerIdManager;
  /** Writes markers to the partitions this node leads (WriteTxnMarkers from a coordinator). */
  markerWriter: TxnMarkerWriter;
  /** Sends this coordinator's markers to every leader (src/txn/marker-channel.ts); the local writer when unset. */
  markerSender?: TxnMarkerWriter;
  /** offsets.topic.num.partitions, for AddOffsetsToTxn's partition of the group. */
  offsetsTopicPartitions: number;
}

export interface InitProducerIdRequest {
  transactionalId: string;
  transactionTimeoutMs: number;
  expected: ProducerIdAndEpoch | null;
}

export interface DescribedTransaction {
  errorCode: number;
  transactionalId: string;
  transactionState: string;
  transactionTimeoutMs: number;
  transactionStartTimeMs: number;
  producerId: number;
  producerEpoch: number;
  topics: { topic: string; partitions: number[] }[];
}

export interface ListedTransaction {
  transactionalId: string;
  producerId: number;
  transactionState: string;
}

export interface ListTransactionsFilter {
  states: readonly string[];
  producerIds: readonly number[];
  /** Only transactions started longer ago than this (ms), -1 for all (KIP-994). */
  durationMs: number;
  /** A Java regular expression the id must match (KIP-1152), or null. */
  transactionalIdPattern: string | null;
}

const KNOWN_STATES = new Set(['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence']);

export class TransactionCoordinator implements MetadataPublisher {
  readonly name = 'TransactionCoordinator';
  readonly runtime: CoordinatorRuntime<TransactionCoordinatorShard, TransactionLogRecord>;
  private active = true;

  constructor(private readonly options: TransactionCoordinatorOptions) {
    const { config } = options;
    this.runtime = new CoordinatorRuntime({
      env: options.env,
      log: options.log,
      logger: options.logger,
      topic: TRANSACTION_STATE_TOPIC,
      name: 'transaction coordinator',
      codec: TRANSACTION_LOG_CODEC,
      writeTimeoutMs: config.requestTimeoutMs,
      periodic: [
        { intervalMs: config.abortTimedOutTransactionsIntervalMs, operation: (shard) => shard.abortTimedOutTransactions() },
        { intervalMs: config.removeExpiredTransactionalIdsIntervalMs, operation: (shard) => shard.expireTransactionalIds(config.transactionalIdExpirationMs) },
      ],
      newShard: (services) =>
        new TransactionCoordinatorShard({
          partition: services.partition,
          leaderEpoch: services.leaderEpoch,
          clock: options.env.clock,
          sendMarkers: (markers) => this.sendMarkers(services.partition, markers),
          transactionVersion: () => this.transactionVersion(),
        }),
    });
  }

  get config(): TransactionCoordinatorConfig {
    return this.options.config;
  }

  get producerIds(): ProducerIdManager {
    return this.options.producerIds;
  }

  /** The finalized transaction.version (0 when the cluster has none). */
  transactionVersion(): number {
    return this.options.image().features.get(TRANSACTION_VERSION_FEATURE) ?? 0;
  }

  /** The `__transaction_state` partition that holds the transactional id. */
  partitionFor(transactionalId: string): number {
    return partitionFor(transactionalId, this.options.config.transactionLogPartitions);
  }

  async shutdown(): Promise<void> {
    this.active = false;
    await this.runtime.shutdown();
  }

  onMetadataUpdate(delta: MetadataDelta, _image: MetadataImage): void {
    this.runtime.followLeadership(delta, this.options.nodeId);
  }

  // ---- InitProducerId

  async initProducerId(request: InitProducerIdRequest): Promise<InitProducerIdResponse> {
    const failed = (errorCode: number) => ({ errorCode, producerId: -1, producerEpoch: -1 });
    if (request.transactionalId === '') return failed(ErrorCode.INVALID_REQUEST);
    if (request.transactionTimeoutMs <= 0 || request.transactionTimeoutMs > this.options.config.transactionMaxTimeoutMs) {
      return failed(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    }
    const partition = this.partitionFor(request.transactionalId);
    const fresh = await this.freshProducerIdIf(this.runtime.read(partition, (shard) => shard.needsProducerId(request.transactionalId)));
    if (fresh.errorCode !== ErrorCode.NONE) return failed(fresh.errorCode);
    const newProducerId = fresh.producerId;
    const outcome = await this.runtime.write(partition, (shard) => shard.initProducerId({ ...request, newProducerId }));
    return outcome.ok ? outcome.response : failed(outcome.errorCode);
  }

  /** A new producer id when the shard says the transactional id needs one (first use, or an exhausted epoch), else null. */
  private async freshProducerIdIf(needs: { ok: true; response: boolean } | { ok: false; errorCode: number }): Promise<{ errorCode: number; producerId: number | null }> {
    if (!needs.ok) return { errorCode: needs.errorCode, producerId: null };
    if (!needs.response) return { errorCode: ErrorCode.NONE, producerId: null };
    const generated = await this.options.producerIds.generateProducerId();
    return generated.errorCode === ErrorCode.NONE ? { errorCode: ErrorCode.NONE, producerId: generated.producerId } : { errorCode: generated.errorCode, producerId: null };
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn

  /** `clientTransactionVersion`: 2 when a V2 client's Produce or TxnOffsetCommit adds the partitions, 0 for AddPartitionsToTxn v0-3 and AddOffsetsToTxn. */
  async addPartitions(transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[], clientTransactionVersion = 0): Promise<number> {
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST;
    const outcome = await this.runtime.write(this.partitionFor(transactionalId), (shard) => shard.addPartitions(transactionalId, producer, partitions, clientTransactionVersion));
    return outcome.ok ? ErrorCode.NONE : outcome.errorCode;
  }

  /** KIP-890 part 1: an error code per partition, NONE where the partition is in the open transaction. */
  verifyPartitions(transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[]): number[] {
    if (transactionalId === '') return partitions.map(() => ErrorCode.INVALID_REQUEST);
    const outcome = this.runtime.read(this.partitionFor(transactionalId), (shard) => shard.verifyPartitions(transactionalId, producer, partitions));
    return outcome.ok ? outcome.response : partitions.map(() => outcome.errorCode);
  }

  /** The group's `__consumer_offsets` partition, which AddOffsetsToTxn (or a V2 TxnOffsetCommit) adds to the transaction. */
  offsetsPartitionFor(groupId: string): TopicPartitionRef {
    return { topic: CONSUMER_OFFSETS_TOPIC, partition: partitionFor(groupId, this.options.offsetsTopicPartitions) };
  }

  /** AddOffsetsToTxn (client version 0), or a V2 client's TxnOffsetCommit (2): the group's partition joins the transaction. */
  addOffsets(transactionalId: string, producer: ProducerIdAndEpoch, groupId: string, clientTransactionVersion = 0): Promise<number> {
    return this.addPartitions(transactionalId, producer, [this.offsetsPartitionFor(groupId)], clientTransactionVersion);
  }

  // ---- EndTxn

  async endTransaction(input: EndTxnInput): Promise<{ errorCode: number } & ProducerIdAndEpoch> {
    const failed = (errorCode: number) => ({ errorCode, producerId: -1, producerEpoch: -1 });
    if (input.transactionalId === '') return failed(ErrorCode.INVALID_REQUEST);
    const partition = this.partitionFor(input.transactionalId);
    const fresh = await this.freshProducerIdIf(this.runtime.read(partition, (shard) => shard.needsProducerIdToEnd(input.transactionalId, input.clientTransactionVersion)));
    if (fresh.errorCode !== ErrorCode.NONE) return failed(fresh.errorCode);
    const newProducerId = fresh.producerId;
    const outcome = await this.runtime.write(partition, (shard) => shard.endTransaction({ ...input, newProducerId }));
    return outcome.ok ? { errorCode: ErrorCode.NONE, ...outcome.response } : { errorCode: outcome.errorCode, producerId: -1, producerEpoch: -1 };
  }

  // ---- markers

  /** WriteTxnMarkers from another coordinator: the marker written to this node's partitions. */
  writeMarkers(marker: TxnMarker): Promise<{ topic: string; partition: number; errorCode: number }[]> {
    return this.options.markerWriter.writeMarkers(marker);
  }

  private sendMarkers(txnPartition: number, markers: PendingMarkers): void {
    void this.writeAllMarkers(txnPartition, markers).catch((error: unknown) => {
      this.options.logger.error(`sending markers of ${markers.transactionalId} failed: ${(error as Error).stack ?? String(error)}`);
    });
  }

  /** Writes the marker to every partition, retrying the retriable failures, then completes the transaction. */
  private async writeAllMarkers(txnPartition: number, markers: PendingMarkers): Promise<void> {
    let remaining = markers.partitions;
    while (remaining.length > 0) {
      if (!this.active || this.runtime.shard(txnPartition)?.coordinatorEpoch !== markers.coordinatorEpoch) return;
      const image = this.options.image();
      const existing = remaining.filter((p) => image.topicsByName.get(p.topic)?.partitions.has(p.partition) === true);
      const results = await (this.options.markerSender ?? this.options.markerWriter).writeMarkers({ ...markers, partitions: existing });
      const retry: TopicPartitionRef[] = [];
      for (const { topic, partition, errorCode } of results) {
        if (errorCode === ErrorCode.NONE) continue;
        if (!errorInfo(errorCode).retriable && errorCode !== ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND) {
          this.options.logger.error(`writing the ${markers.committed ? 'COMMIT' : 'ABORT'} marker of ${markers.transactionalId} to ${topic}-${partition} failed with ${errorInfo(errorCode).name}; giving up on the transaction's markers`);
          return;
        }
        retry.push({ topic, partition });
      }
      remaining = retry;
      if (remaining.length > 0) await new Promise<void>((resolve) => this.options.env.timers.schedule(TXN_MARKER_RETRY_BACKOFF_MS, resolve));
    }
    await this.completeTransaction(txnPartition, markers);
  }

  private async completeTransaction(txnPartition: number, markers: PendingMarkers): Promise<void> {
    for (;;) {
      const outcome: WriteOutcome<void> = await this.runtime.write(txnPartition, (shard) => shard.completeTransaction(markers));
      if (outcome.ok || outcome.errorCode !== ErrorCode.COORDINATOR_NOT_AVAILABLE || !this.active) return;
      await new Promise<void>((resolve) => this.options.env.timers.schedule(TXN_MARKER_RETRY_BACKOFF_MS, resolve));
    }
  }

  // ---- DescribeTransactions / ListTransactions

  describeTransaction(transactionalId: string): DescribedTransaction {
    const described: DescribedTransaction = {
      errorCode: ErrorCode.NONE,
      transactionalId,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: -1,
      producerId: -1,
      producerEpoch: -1,
      topics: [],
    };
    if (transactionalId === '') return { ...described, errorCode: ErrorCode.INVALID_REQUEST };
    const outcome = this.runtime.read(this.partitionFor(transactionalId), (shard) => shard.transactions.get(transactionalId));
    if (!outcome.ok) return { ...described, errorCode: outcome.errorCode };
    const metadata = outcome.response;
    if (metadata === undefined) return { ...described, errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
    const topics = new Map<string, number[]>();
    for (const { topic, partition } of partitionList(metadata)) topics.set(topic, [...(topics.get(topic) ?? []), partition]);
    return {
      ...described,
      transactionState: metadata.state,
      transactionTimeoutMs: metadata.txnTimeoutMs,
      transactionStartTimeMs: metadata.txnStartTimestampMs,
      producerId: metadata.producerId,
      producerEpoch: metadata.producerEpoch,
      topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
    };
  }

  /** The transactions of every loaded partition that pass the filters; unknown state names are returned apart. */
  listTransactions(filter: ListTransactionsFilter): { errorCode: number; unknownStateFilters: string[]; transactionStates: ListedTransaction[] } {
    const unknownStateFilters = filter.states.filter((state) => !KNOWN_STATES.has(state));
    const states = new Set(filter.states);
    const producerIds = new Set(filter.producerIds);
    let pattern: RegExp | null = null;
    if (filter.transactionalIdPattern !== null && filter.transactionalIdPattern !== '') {
      try {
        pattern = new RegExp(`^(?:${filter.transactionalIdPattern})$`);
      } catch {
        return { errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION, unknownStateFilters: [], transactionStates: [] };
      }
    }
    const nowMs = this.options.env.clock.nowMs();
    const listed: ListedTransaction[] = [];
    for (const partition of this.runtime.activePartitions()) {
      for (const metadata of this.runtime.shard(partition)?.transactions.values() ?? []) {
        if (states.size > 0 && !states.has(metadata.state)) continue;
        if (producerIds.size > 0 && !producerIds.has(metadata.producerId)) continue;
        if (filter.durationMs >= 0 && nowMs - metadata.txnStartTimestampMs <= filter.durationMs) continue;
        if (pattern !== null && !pattern.test(metadata.transactionalId)) continue;
        listed.push({ transactionalId: metadata.transactionalId, producerId: metadata.producerId, transactionState: metadata.state satisfies TransactionStateName });
      }
    }
    return { errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates: listed };
  }
}
