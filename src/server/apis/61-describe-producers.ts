/**
 * DescribeProducers (key 61), version 0 (KIP-664): the active idempotent and
 * transactional producers of each partition, from its producer state:
 * producer id, epoch, last sequence, last timestamp, coordinator epoch and
 * the first offset of its open transaction (-1 if none).
 *
 * Any replica with the log answers (leader or follower), as in Kafka.
 * Errors per partition: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER
 * (no replica here), KAFKA_STORAGE_ERROR. READ on each topic is required
 * (TOPIC_AUTHORIZATION_FAILED).
 */
import { DescribeProducers } from '../../protocol/schemas/61-describe-producers.js';
import { ErrorCode } from '../../protocol/errors.js';
import { Partition } from '../../replication/partition.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function describeProducersHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeProducers,
    handle(request, context) {
      // READ on each topic (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
      const readable = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, request.topics.map((topic) => topic.name));
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((topic) => ({
          name: topic.name,
          partitions: topic.partitionIndexes.map((partitionIndex) => {
            if (!readable.has(topic.name)) return { partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] };
            const partition = broker.replicaManager.getPartitionOrError({ topic: topic.name, partition: partitionIndex });
            if (!(partition instanceof Partition)) return { partitionIndex, errorCode: partition.errorCode, errorMessage: null, activeProducers: [] };
            const activeProducers = [...partition.producerState.activeProducers().values()].map((entry) => ({
              producerId: entry.producerId,
              producerEpoch: entry.producerEpoch,
              lastSequence: entry.lastSeq,
              lastTimestamp: entry.lastTimestampMs,
              coordinatorEpoch: entry.coordinatorEpoch,
              currentTxnStartOffset: entry.currentTxnFirstOffset ?? -1,
            }));
            return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers };
          }),
        })),
      };
    },
    errorResponse: (request, errorCode) => ({
      throttleTimeMs: 0,
      topics: request.topics.map((topic) => ({ name: topic.name, partitions: topic.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode })) })),
    }),
  });
}
