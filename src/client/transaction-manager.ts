/**
 * A transactional producer's side of KIP-98 (and KIP-890 Transactions V2):
 * its state, and the requests it sends to its transaction coordinator (and,
 * for offsets, to the group coordinator). The producer (producer.ts) asks
 * it which partitions may be sent to and reports every batch's fate.
 *
 *   initTransactions   FindCoordinator (key type 1), InitProducerId with the
 *                      transactional id: a new epoch that fences older
 *                      producers and ends their open transaction.
 *   a send             V1: AddPartitionsToTxn (v0-3, the client form) before
 *                      the partition's first batch; V2: none, Produce v12+
 *                      with the transactional id adds it.
 *   offsets            V1: AddOffsetsToTxn, then TxnOffsetCommit (v0-4);
 *                      V2: TxnOffsetCommit v5 alone adds the group.
 *   commit / abort     EndTxn; with V2 (v5) the answer carries the new epoch
 *                      the coordinator bumped to, and sequences restart.
 *
 * V2 is used, as Kafka's client decides, when the coordinator's ApiVersions
 * finalizes transaction.version 2 or more. Errors: CONCURRENT_TRANSACTIONS
 * and coordinator moves are retried; PRODUCER_FENCED, INVALID_PRODUCER_EPOCH
 * (a zombie), TRANSACTIONAL_ID_AUTHORIZATION_FAILED and INVALID_TXN_STATE are
 * fatal: the producer can only be closed. Any other failure inside a
 * transaction is abortable: commit refuses, abort clears it.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { InitProducerId } from '../protocol/schemas/22-init-producer-id.js';
import { AddPartitionsToTxn } from '../protocol/schemas/24-add-partitions-to-txn.js';
import { AddOffsetsToTxn } from '../protocol/schemas/25-add-offsets-to-txn.js';
import { EndTxn } from '../protocol/schemas/26-end-txn.js';
import { TxnOffsetCommit } from '../protocol/schemas/28-txn-offset-commit.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';
import { CoordinatorKeyType, GroupCoordinator, type OffsetToCommit } from './group-coordinator.js';

export type TransactionState = 'uninitialized' | 'ready' | 'inTransaction' | 'committing' | 'aborting' | 'abortableError' | 'fatalError';

export interface ProducerIdAndEpoch {
  producerId: number;
  producerEpoch: number;
}

/** The group a consumer-transform-produce loop commits for (Consumer.groupMetadata()). */
export interface TransactionGroupMetadata {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

/** Errors after which the transactional producer is unusable (Kafka's fatal errors). */
const FATAL = new Set<number>([ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.INVALID_TXN_STATE]);

/** The last client versions before Transactions V2 (KIP-890 part 2): beyond them the broker adds partitions and bumps epochs. */
const V1_VERSION_MAX = { produce: 11, endTxn: 4, txnOffsetCommit: 4 } as const;
/** AddPartitionsToTxn v4+ is the broker-to-coordinator form. */
const ADD_PARTITIONS_CLIENT_VERSION_MAX = 3;
/** TxnOffsetCommit v6 names topics by id, which Spool does not serve. */
const TXN_OFFSET_COMMIT_VERSION_MAX = 5;

/** transaction.version at which a client uses Transactions V2. */
const TRANSACTION_VERSION_2 = 2;

export class TransactionManager {
  state: TransactionState = 'uninitialized';
  /** Whether this producer speaks Transactions V2 (decided at initTransactions). */
  v2 = false;
  /** The error that made the state abortableError or fatalError. */
  lastError: KafkaError | null = null;
  private readonly coordinator: GroupCoordinator;
  private readonly added = new Set<string>();
  private adding: Promise<void> | null = null;
  /** Whether anything reached the coordinator in this transaction (else EndTxn is not needed). */
  private started = false;

  constructor(
    private readonly cluster: Cluster,
    readonly transactionalId: string,
    private readonly transactionTimeoutMs: number,
  ) {
    this.coordinator = new GroupCoordinator(cluster, transactionalId, { keyType: CoordinatorKeyType.transaction });
  }

  /** The highest Produce version this producer may send (V1 stops before the implicit add). */
  get produceVersionMax(): number {
    return this.v2 ? Infinity : V1_VERSION_MAX.produce;
  }

  /** Throws unless the producer is in one of `states` (Kafka's IllegalStateException messages, roughly). */
  expect(operation: string, ...states: TransactionState[]): void {
    if (this.state === 'fatalError') throw this.lastError!;
    if (!states.includes(this.state)) {
      const cause = this.state === 'abortableError' ? `: ${this.lastError!.message}` : '';
      throw new KafkaError(ErrorCode.INVALID_TXN_STATE, `Cannot ${operation} in state ${this.state}${cause}`);
    }
  }

  async initProducerId(): Promise<ProducerIdAndEpoch> {
    this.expect('initialize transactions', 'uninitialized');
    const response = await this.send(InitProducerId, { transactionalId: this.transactionalId, transactionTimeoutMs: this.transactionTimeoutMs, producerId: -1, producerEpoch: -1 });
    this.v2 = ((await this.coordinator.connection()).finalizedFeatures.get('transaction.version') ?? 0) >= TRANSACTION_VERSION_2;
    this.state = 'ready';
    return { producerId: response.producerId, producerEpoch: response.producerEpoch };
  }

  /** Whether a failure made the transaction abortable or the producer fenced. */
  failed(): boolean {
    return this.state === 'abortableError' || this.state === 'fatalError';
  }

  /** Whether a fatal error (fencing and the like) ended this producer's transactions. */
  fenced(): boolean {
    return this.state === 'fatalError';
  }

  begin(): void {
    this.expect('begin a transaction', 'ready');
    this.added.clear();
    this.started = false;
    this.state = 'inTransaction';
  }

  /**
   * Of `partitions` (those with batches ready), the ones that may be sent
   * now. V1 adds the others with one AddPartitionsToTxn at a time and calls
   * `added` once it answered (or failed).
   */
  sendable<T extends { topicPartition: TopicPartition }>(batches: readonly T[], id: ProducerIdAndEpoch, added: () => void): T[] {
    // After a failure, batches already numbered still go out, so an abort can wait for them.
    if (this.state === 'uninitialized' || this.state === 'ready' || this.state === 'fatalError') return [];
    if (this.v2) {
      if (batches.length > 0) this.started = true;
      return [...batches];
    }
    const missing = batches.filter((b) => !this.added.has(topicPartitionKey(b.topicPartition))).map((b) => b.topicPartition);
    if (missing.length > 0 && this.adding === null) {
      this.adding = this.addPartitions(missing, id).catch((error: unknown) => { this.fail(error); }).finally(() => {
        this.adding = null;
        added();
      });
    }
    return batches.filter((b) => this.added.has(topicPartitionKey(b.topicPartition)));
  }

  private async addPartitions(partitions: readonly TopicPartition[], id: ProducerIdAndEpoch): Promise<void> {
    const byTopic = new Map<string, Set<number>>();
    for (const tp of partitions) byTopic.set(tp.topic, (byTopic.get(tp.topic) ?? new Set()).add(tp.partition));
    const response = await this.coordinator.sendWithRetry(AddPartitionsToTxn, {
      v3AndBelowTransactionalId: this.transactionalId,
      v3AndBelowProducerId: id.producerId,
      v3AndBelowProducerEpoch: id.producerEpoch,
      v3AndBelowTopics: [...byTopic].map(([name, set]) => ({ name, partitions: [...set] })),
    }, (answer) => {
      for (const topic of answer.resultsByTopicV3AndBelow) for (const p of topic.resultsByPartition) this.retryIfMoved(p.partitionErrorCode);
    }, { versionMax: ADD_PARTITIONS_CLIENT_VERSION_MAX });
    for (const topic of response.response.resultsByTopicV3AndBelow) {
      for (const p of topic.resultsByPartition) {
        if (p.partitionErrorCode !== ErrorCode.NONE) throw new KafkaError(p.partitionErrorCode, `AddPartitionsToTxn for ${topic.name}-${p.partitionIndex}`);
        this.added.add(topicPartitionKey({ topic: topic.name, partition: p.partitionIndex }));
      }
    }
    this.started = true;
  }

  /** The transaction's part of a consume-transform-produce loop: these offsets commit (or not) with it. */
  async sendOffsets(offsets: readonly OffsetToCommit[], group: TransactionGroupMetadata, id: ProducerIdAndEpoch): Promise<void> {
    this.expect('send offsets to a transaction', 'inTransaction');
    try {
      if (!this.v2) await this.send(AddOffsetsToTxn, { transactionalId: this.transactionalId, producerId: id.producerId, producerEpoch: id.producerEpoch, groupId: group.groupId });
      this.started = true;
      await this.commitOffsets(offsets, group, id);
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }

  private async commitOffsets(offsets: readonly OffsetToCommit[], group: TransactionGroupMetadata, id: ProducerIdAndEpoch): Promise<void> {
    const byTopic = new Map<string, OffsetToCommit[]>();
    for (const offset of offsets) byTopic.set(offset.topic, [...(byTopic.get(offset.topic) ?? []), offset]);
    const groupCoordinator = new GroupCoordinator(this.cluster, group.groupId);
    try {
      const { response } = await groupCoordinator.sendWithRetry(TxnOffsetCommit, {
        transactionalId: this.transactionalId,
        groupId: group.groupId,
        producerId: id.producerId,
        producerEpoch: id.producerEpoch,
        generationIdOrMemberEpoch: group.generationId,
        memberId: group.memberId,
        groupInstanceId: group.groupInstanceId,
        topics: [...byTopic].map(([name, list]) => ({
          name,
          partitions: list.map((o) => ({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch ?? -1, committedMetadata: o.metadata ?? '' })),
        })),
      }, (answer) => {
        for (const topic of answer.topics) for (const p of topic.partitions) if (isRetriedAtCoordinator(p.errorCode)) groupCoordinator.check(p.errorCode, `TxnOffsetCommit for group ${group.groupId}`);
      }, { versionMax: this.v2 ? TXN_OFFSET_COMMIT_VERSION_MAX : V1_VERSION_MAX.txnOffsetCommit });
      for (const topic of response.topics) {
        for (const p of topic.partitions) if (p.errorCode !== ErrorCode.NONE) throw new KafkaError(p.errorCode, `TxnOffsetCommit for ${topic.name}-${p.partitionIndex}`);
      }
    } finally {
      await groupCoordinator.close();
    }
  }

  /**
   * EndTxn, once the transaction's batches are settled. Resolves with the
   * producer id and epoch to use next (V2 bumps the epoch every time).
   */
  async end(committed: boolean, id: ProducerIdAndEpoch): Promise<ProducerIdAndEpoch> {
    let next = id;
    if (this.started) {
      const { version, response } = await this.coordinator.sendWithRetry(EndTxn, { transactionalId: this.transactionalId, producerId: id.producerId, producerEpoch: id.producerEpoch, committed }, (answer) => this.retryIfMoved(answer.errorCode), {
        versionMax: this.v2 ? Infinity : V1_VERSION_MAX.endTxn,
      });
      if (response.errorCode !== ErrorCode.NONE) throw this.fail(new KafkaError(response.errorCode, `EndTxn for ${this.transactionalId}`));
      if (version >= 5 && response.producerId >= 0) next = { producerId: response.producerId, producerEpoch: response.producerEpoch };
    }
    this.state = 'ready';
    this.lastError = null;
    return next;
  }

  /** Records a failure: fatal for fencing and the like, else the transaction must be aborted. Returns the error. */
  fail(error: unknown): KafkaError {
    const failure = error instanceof KafkaError ? error : new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, (error as Error).message);
    if (this.state === 'fatalError') return failure;
    this.lastError = failure;
    if (FATAL.has(failure.code)) this.state = 'fatalError';
    else if (this.state !== 'uninitialized' && this.state !== 'ready') this.state = 'abortableError';
    return failure;
  }

  /** A Produce answer for one batch: fencing is fatal, other failures abort the transaction. */
  onBatchFailed(error: KafkaError): void {
    this.fail(error);
  }

  async close(): Promise<void> {
    await this.coordinator.close();
  }

  private retryIfMoved(code: number): void {
    if (isRetriedAtCoordinator(code)) this.coordinator.check(code, `${this.transactionalId}`);
  }

  /** A request to the transaction coordinator, retried while it moves, loads or finishes the previous transaction; other errors throw. */
  private async send<A extends ApiDef & { name: string }>(api: A, body: Partial<RequestOf<A>>): Promise<ResponseOf<A> & { errorCode: number }> {
    try {
      const { response } = await this.coordinator.sendWithRetry(api, body, (answer) => this.retryIfMoved((answer as unknown as { errorCode: number }).errorCode));
      const answer = response as unknown as ResponseOf<A> & { errorCode: number };
      if (answer.errorCode !== ErrorCode.NONE) throw new KafkaError(answer.errorCode, `${api.name} for ${this.transactionalId}`);
      return answer;
    } catch (error) {
      throw this.fail(error);
    }
  }
}

function isRetriedAtCoordinator(code: number): boolean {
  return code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || code === ErrorCode.COORDINATOR_NOT_AVAILABLE || code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.CONCURRENT_TRANSACTIONS;
}
