/**
 * The admin client's transaction calls, as Kafka's Admin names them
 * (KIP-664: tooling to detect and abort hanging transactions):
 *
 *   listTransactions      ListTransactions to every broker (each answers
 *                         for the `__transaction_state` partitions it
 *                         leads), grouped by broker id.
 *   describeTransactions  DescribeTransactions to each id's transaction
 *                         coordinator (FindCoordinator key type 1).
 *   describeProducers     DescribeProducers to the partition leader, or to
 *                         one named replica.
 *   abortTransaction      WriteTxnMarkers (ABORT) to the partition leader
 *                         for one producer's open transaction: the way out
 *                         of a hanging transaction the coordinator forgot.
 */
import { ErrorCode } from '../protocol/errors.js';
import { DescribeProducers } from '../protocol/schemas/61-describe-producers.js';
import { DescribeTransactions } from '../protocol/schemas/65-describe-transactions.js';
import { ListTransactions } from '../protocol/schemas/66-list-transactions.js';
import { WriteTxnMarkers } from '../protocol/schemas/27-write-txn-markers.js';
import type { TopicPartition } from '../protocol/topic-partition.js';
import type { Cluster } from './cluster.js';
import { KafkaError, throwIfError } from './errors.js';
import { CoordinatorKeyType, GroupCoordinator } from './group-coordinator.js';

export interface TransactionListing {
  transactionalId: string;
  producerId: number;
  /** Kafka's TransactionState name: Empty, Ongoing, PrepareCommit, CompleteAbort, ... */
  state: string;
}

export interface ListTransactionsOptions {
  states?: readonly string[];
  producerIds?: readonly number[];
  /** Only transactions running longer than this (ListTransactions v1+); -1 for all. */
  durationFilterMs?: number;
}

export interface TransactionDescription {
  coordinatorId: number;
  transactionalId: string;
  state: string;
  producerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  /** Null when no transaction is under way. */
  transactionStartTimeMs: number | null;
  topicPartitions: TopicPartition[];
}

export interface ProducerState {
  producerId: number;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  /** Null when the producer never finished a transaction here (the wire's -1). */
  coordinatorEpoch: number | null;
  /** Where the producer's open transaction starts; null when none is open. */
  currentTransactionStartOffset: number | null;
}

export interface AbortTransactionSpec extends TopicPartition {
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
}

/** Each broker's listing, by broker id (ascending), as Admin.listTransactions().allByBrokerId(). */
export async function listTransactions(cluster: Cluster, options: ListTransactionsOptions = {}): Promise<Map<number, TransactionListing[]>> {
  await cluster.retry(() => cluster.refreshMetadata([]));
  const brokers = [...cluster.brokers.values()].sort((a, b) => a.nodeId - b.nodeId);
  const perBroker = await Promise.all(brokers.map((broker) => cluster.retry(async () => {
    const connection = await cluster.connectTo(broker.host, broker.port);
    const response = await connection.send(ListTransactions, {
      stateFilters: [...(options.states ?? [])],
      producerIdFilters: [...(options.producerIds ?? [])],
      durationFilter: options.durationFilterMs ?? -1,
    });
    throwIfError(response.errorCode, `ListTransactions at broker ${broker.nodeId}`);
    return response.transactionStates.map((t): TransactionListing => ({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.transactionState }));
  })));
  return new Map(brokers.map((broker, i) => [broker.nodeId, perBroker[i]!]));
}

/** One transactional id's state at its coordinator; TRANSACTIONAL_ID_NOT_FOUND and the like reject. */
export async function describeTransaction(cluster: Cluster, transactionalId: string): Promise<TransactionDescription> {
  const coordinator = new GroupCoordinator(cluster, transactionalId, { keyType: CoordinatorKeyType.transaction });
  try {
    const { response } = await coordinator.sendWithRetry(DescribeTransactions, { transactionalIds: [transactionalId] }, (answer) => {
      const state = answer.transactionStates.find((t) => t.transactionalId === transactionalId);
      if (state === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `DescribeTransactions did not answer for ${transactionalId}`);
      if (state.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || state.errorCode === ErrorCode.NOT_COORDINATOR || state.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE) {
        coordinator.check(state.errorCode, `DescribeTransactions for ${transactionalId}`);
      }
    });
    const state = response.transactionStates.find((t) => t.transactionalId === transactionalId)!;
    throwIfError(state.errorCode);
    return {
      coordinatorId: (await coordinator.node()).nodeId,
      transactionalId,
      state: state.transactionState,
      producerId: state.producerId,
      producerEpoch: state.producerEpoch,
      transactionTimeoutMs: state.transactionTimeoutMs,
      transactionStartTimeMs: state.transactionStartTimeMs < 0 ? null : state.transactionStartTimeMs,
      topicPartitions: state.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
    };
  } finally {
    await coordinator.close();
  }
}

/** The partition's active producers, asked of its leader or of replica `brokerId`. */
export async function describeProducers(cluster: Cluster, topicPartition: TopicPartition, options: { brokerId?: number } = {}): Promise<ProducerState[]> {
  const name = `${topicPartition.topic}-${topicPartition.partition}`;
  const answer = await cluster.retry(async () => {
    let nodeId = options.brokerId;
    if (nodeId === undefined) {
      await cluster.topic(topicPartition.topic, { refresh: true });
      nodeId = cluster.leaderFor(topicPartition.topic, topicPartition.partition);
      if (nodeId < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, name);
    }
    const connection = await cluster.connection(nodeId);
    const response = await connection.send(DescribeProducers, { topics: [{ name: topicPartition.topic, partitionIndexes: [topicPartition.partition] }] });
    const partition = response.topics.find((t) => t.name === topicPartition.topic)?.partitions.find((p) => p.partitionIndex === topicPartition.partition);
    if (partition === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `DescribeProducers did not answer for ${name}`);
    // As Kafka's DescribeProducersHandler: a named replica that is not the leader is an answer, not a retry.
    if (partition.errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER || options.brokerId === undefined) throwIfError(partition.errorCode, partition.errorMessage);
    return partition;
  }, { timeoutMs: cluster.requestTimeoutMs * 2 });
  throwIfError(answer.errorCode, answer.errorMessage ?? `${name} on broker ${options.brokerId}`);
  return answer.activeProducers.map((p): ProducerState => ({
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    lastSequence: p.lastSequence,
    lastTimestamp: p.lastTimestamp,
    coordinatorEpoch: p.coordinatorEpoch < 0 ? null : p.coordinatorEpoch,
    currentTransactionStartOffset: p.currentTxnStartOffset < 0 ? null : p.currentTxnStartOffset,
  }));
}

/** Writes an ABORT marker for the spec's producer to the partition's leader. */
export async function abortTransaction(cluster: Cluster, spec: AbortTransactionSpec): Promise<void> {
  await cluster.retry(async () => {
    await cluster.topic(spec.topic, { refresh: true });
    const leader = cluster.leaderFor(spec.topic, spec.partition);
    if (leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${spec.topic}-${spec.partition}`);
    const connection = await cluster.connection(leader);
    const response = await connection.send(WriteTxnMarkers, {
      markers: [{
        producerId: spec.producerId,
        producerEpoch: spec.producerEpoch,
        transactionResult: false,
        topics: [{ name: spec.topic, partitionIndexes: [spec.partition] }],
        coordinatorEpoch: spec.coordinatorEpoch,
        transactionVersion: 0,
      }],
    });
    const answer = response.markers[0]?.topics.find((t) => t.name === spec.topic)?.partitions.find((p) => p.partitionIndex === spec.partition);
    if (answer === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `WriteTxnMarkers did not answer for ${spec.topic}-${spec.partition}`);
    throwIfError(answer.errorCode);
  }, { timeoutMs: cluster.requestTimeoutMs * 2 });
}
