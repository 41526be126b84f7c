/**
 * AddPartitionsToTxn (key 24), versions 0-5.
 *
 * v0-3 (producers): one transaction's partitions join it at its coordinator.
 * v4+ (KIP-890 part 1, brokers): a batch of transactions, each either added
 * or, with verifyOnly, checked (NONE where the partition is in the open
 * transaction, TRANSACTION_ABORTABLE where not). A partition this node's
 * metadata does not know is UNKNOWN_TOPIC_OR_PARTITION and the others of
 * its transaction OPERATION_NOT_ATTEMPTED, as Kafka answers. A v4+ add
 * (not verify-only) comes from a broker adding a Transactions V2 client's
 * partition on its Produce, and marks the transaction V2
 * (Kafka's transactionVersionForAddPartitionsToTxn). v1 same as v0;
 * v2 PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 flexible; v5
 * TRANSACTION_ABORTABLE. Authorization: WRITE on the transactional id and on each
 * topic for clients (v3-), CLUSTER_ACTION for brokers' batches (v4+).
 */
import { AddPartitionsToTxn } from '../../protocol/schemas/24-add-partitions-to-txn.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { TopicPartitionRef } from '../../txn/shard.js';
import { defineHandler } from '../handler.js';
import { isInternalTopic } from '../../controller/topic-names.js';
import { AclOperation, ResourceType, authorize, authorizeCluster, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

/** The first version of AddPartitionsToTxn / AddOffsetsToTxn / EndTxn that knows PRODUCER_FENCED. */
export const TXN_PRODUCER_FENCED_VERSION = 2;
const BATCHED_VERSION = 4;

interface TransactionInput {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  verifyOnly: boolean;
  topics: readonly { name: string; partitions: readonly number[] }[];
}

export function addPartitionsToTxnHandler(broker: ApiContext) {
  return defineHandler({
    api: AddPartitionsToTxn,
    async handle(request, context) {
      const version = context.apiVersion;
      // v4+ batches come from brokers: CLUSTER_ACTION on the cluster, as Kafka's.
      if (version >= BATCHED_VERSION && !authorizeCluster(broker, context, AclOperation.CLUSTER_ACTION)) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] };
      }
      if (version < BATCHED_VERSION) {
        const transaction = {
          transactionalId: request.v3AndBelowTransactionalId,
          producerId: request.v3AndBelowProducerId,
          producerEpoch: request.v3AndBelowProducerEpoch,
          verifyOnly: false,
          topics: request.v3AndBelowTopics,
        };
        if (!authorize(broker, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transaction.transactionalId)) {
          return { throttleTimeMs: 0, resultsByTopicV3AndBelow: results(transaction.topics, () => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED) };
        }
        // Clients need WRITE on each topic; internal topics are never theirs to add.
        const writable = authorizedNames(broker, context, AclOperation.WRITE, ResourceType.TOPIC, transaction.topics.map((t) => t.name).filter((name) => !isInternalTopic(name)));
        return { throttleTimeMs: 0, resultsByTopicV3AndBelow: await addTransaction(broker, transaction, { version, writable }) };
      }
      const resultsByTransaction = await Promise.all(
        request.transactions.map(async (transaction) => ({ transactionalId: transaction.transactionalId, topicResults: await addTransaction(broker, transaction, { version, writable: null }) })),
      );
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction };
    },
    errorResponse: (request, errorCode, context) =>
      context.apiVersion < BATCHED_VERSION
        ? { resultsByTopicV3AndBelow: results(request.v3AndBelowTopics, () => errorCode) }
        : { errorCode, resultsByTransaction: [] },
  });
}

/** `writable`: the topics a client may write (null for a broker's batch, which is not checked per topic). */
async function addTransaction(broker: ApiContext, transaction: TransactionInput, options: { version: number; writable: ReadonlySet<string> | null }) {
  const { version, writable } = options;
  const image = broker.metadata.image;
  const denied = (topic: string) => writable !== null && !writable.has(topic);
  const unknown = (topic: string, partition: number) => image.topicsByName.get(topic)?.partitions.has(partition) !== true;
  if (transaction.topics.some((topic) => denied(topic.name) || topic.partitions.some((p) => unknown(topic.name, p)))) {
    const errorOf = (topic: string, p: number) => (denied(topic) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : unknown(topic, p) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED);
    return results(transaction.topics, errorOf);
  }
  const partitions: TopicPartitionRef[] = transaction.topics.flatMap((topic) => topic.partitions.map((partition) => ({ topic: topic.name, partition })));
  const producer = { producerId: transaction.producerId, producerEpoch: transaction.producerEpoch };
  const coordinator = broker.transactionCoordinator;
  if (transaction.verifyOnly) {
    const errors = coordinator.verifyPartitions(transaction.transactionalId, producer, partitions);
    const byKey = new Map(partitions.map((p, i) => [`${p.topic}:${p.partition}`, errors[i]!]));
    return results(transaction.topics, (topic, p) => byKey.get(`${topic}:${p}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR);
  }
  const clientTransactionVersion = version >= BATCHED_VERSION ? 2 : 0;
  const errorCode = await coordinator.addPartitions(transaction.transactionalId, producer, partitions, clientTransactionVersion);
  const mapped = errorCode === ErrorCode.PRODUCER_FENCED && version < TXN_PRODUCER_FENCED_VERSION ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode;
  return results(transaction.topics, () => mapped);
}

function results(topics: readonly { name: string; partitions: readonly number[] }[], errorOf: (topic: string, partition: number) => number) {
  return topics.map((topic) => ({
    name: topic.name,
    resultsByPartition: topic.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorOf(topic.name, partitionIndex) })),
  }));
}
