/**
 * TxnOffsetCommit (key 28), versions 0-5: a transactional producer commits
 * a consumer group's offsets inside its transaction (the
 * sendOffsetsToTransaction of consume-transform-produce). The offsets are
 * written to the group's `__consumer_offsets` partition in the producer's
 * transaction and become visible (OffsetFetch) only when its COMMIT marker
 * is written there; an ABORT drops them.
 *
 * v1 same as v0; v2 CommittedLeaderEpoch; v3 the group's generation or
 * member epoch, member id and instance id (KIP-447), checked as OffsetCommit
 * checks them, except that a commit naming no member is accepted (older
 * clients send none); v3 flexible; v4 same as v3; v5 TRANSACTION_ABORTABLE.
 * Partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION.
 *
 * From v5 (Transactions V2, KIP-890 part 2) the group's `__consumer_offsets`
 * partition is added to the transaction first, unless the producer already
 * has a transaction open there (Kafka's ADD_PARTITION: a V2 client sends
 * no AddOffsetsToTxn); a failed add is every partition's error, a fenced
 * producer INVALID_PRODUCER_EPOCH.
 *
 * Not served: v6 (topics by id). Authorization: WRITE on the transactional id, READ on
 * the group and on each topic. Not done: Kafka's verify-only
 * check of v0-4 (KIP-890 part 1).
 */
import { TxnOffsetCommit } from '../../protocol/schemas/28-txn-offset-commit.js';
import { ErrorCode } from '../../protocol/errors.js';
import { Partition } from '../../replication/partition.js';
import type { OffsetCommitInput } from '../../group/offset-operations.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function txnOffsetCommitHandler(broker: ApiContext) {
  return defineHandler({
    api: TxnOffsetCommit,
    versions: { min: 0, max: 5 },
    async handle(request, context) {
      // WRITE on the transactional id, READ on the group, READ on each topic (before whether it exists), as Kafka's.
      if (!authorize(broker, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return errorResponse(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return errorResponse(request, ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const readable = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, request.topics.map((topic) => topic.name));
      if (context.apiVersion >= ADD_PARTITION_VERSION) {
        const errorCode = await addOffsetsPartition(broker, request);
        if (errorCode !== ErrorCode.NONE) return { throttleTimeMs: 0, topics: errorTopics(request, errorCode) };
      }
      const image = broker.metadata.image;
      const known = (topic: string, partition: number) => image.topicsByName.get(topic)?.partitions.has(partition) === true;
      const valid: OffsetCommitInput['topics'][number][] = request.topics
        .filter((topic) => readable.has(topic.name))
        .map((topic) => ({ name: topic.name, partitions: topic.partitions.filter((p) => known(topic.name, p.partitionIndex)) }))
        .filter((topic) => topic.partitions.length > 0);
      const committed = new Map<string, number>();
      if (valid.length > 0) {
        const results = await broker.groupCoordinator.commitTransactionalOffsets(
          {
            groupId: request.groupId,
            generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
            memberId: request.memberId,
            groupInstanceId: request.groupInstanceId,
            retentionTimeMs: -1,
            topics: valid,
          },
          { producerId: request.producerId, producerEpoch: request.producerEpoch },
        );
        for (const topic of results) for (const p of topic.partitions) committed.set(`${topic.name}:${p.partitionIndex}`, p.errorCode);
      }
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((topic) => ({
          name: topic.name,
          partitions: topic.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: !readable.has(topic.name)
              ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
              : known(topic.name, p.partitionIndex) ? (committed.get(`${topic.name}:${p.partitionIndex}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR) : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          })),
        })),
      };
    },
    errorResponse,
  });
}

/** The first version whose group partition is added to the transaction (Kafka's ADD_PARTITION for TxnOffsetCommit). */
const ADD_PARTITION_VERSION = 5;

function errorTopics(request: { topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[] }, errorCode: number) {
  return request.topics.map((topic) => ({ name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) }));
}

/** Adds the group's offsets partition to a V2 transaction unless the producer already has one open there. */
async function addOffsetsPartition(
  broker: ApiContext,
  request: { transactionalId: string; groupId: string; producerId: number; producerEpoch: number },
): Promise<number> {
  const coordinator = broker.transactionCoordinator;
  const offsetsPartition = broker.replicaManager.getPartitionOrError(coordinator.offsetsPartitionFor(request.groupId));
  if (offsetsPartition instanceof Partition && offsetsPartition.producerState.hasOngoingTransaction(request.producerId, request.producerEpoch)) return ErrorCode.NONE;
  const producer = { producerId: request.producerId, producerEpoch: request.producerEpoch };
  const errorCode = await broker.addPartitionsToTxn.addOffsets(request.transactionalId, producer, request.groupId);
  return errorCode === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode;
}

function errorResponse(request: { topics: readonly { name: string; partitions: readonly { partitionIndex: number }[] }[] }, errorCode: number) {
  return { throttleTimeMs: 0, topics: errorTopics(request, errorCode) };
}
