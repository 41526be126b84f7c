/**
 * DeleteRecords (key 21), versions 0-2 (KIP-107; v2 flexible): moves each
 * partition's log start offset up to the given offset (-1: the high
 * watermark), making earlier records unreadable; whole segments below it go
 * at the next retention pass. Answers the low watermark (the smallest log
 * start offset among the replicas; with one replica, the new log start).
 *
 * Errors per partition: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
 * OFFSET_OUT_OF_RANGE (negative, or past the high watermark),
 * POLICY_VIOLATION (cleanup.policy without `delete`). With one replica the
 * low watermark is reached at once, so timeoutMs never expires here.
 */
import { DeleteRecords } from '../../protocol/schemas/21-delete-records.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function deleteRecordsHandler(broker: ApiContext) {
  return defineHandler({
    api: DeleteRecords,
    async handle(request, context) {
      // DELETE on each topic (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
      const deletable = authorizedNames(broker, context, AclOperation.DELETE, ResourceType.TOPIC, request.topics.map((topic) => topic.name));
      const topics = await Promise.all(
        request.topics.map(async (topic) => ({
          name: topic.name,
          partitions: await Promise.all(
            topic.partitions.map(async (partition) => ({
              partitionIndex: partition.partitionIndex,
              ...(!deletable.has(topic.name) ? { lowWatermark: -1, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED } : await broker.replicaManager.deleteRecords({ topic: topic.name, partition: partition.partitionIndex }, partition.offset)),
            })),
          ),
        })),
      );
      return { throttleTimeMs: 0, topics };
    },
    errorResponse: (request, errorCode) => ({
      throttleTimeMs: 0,
      topics: request.topics.map((topic) => ({
        name: topic.name,
        partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1, errorCode })),
      })),
    }),
  });
}
