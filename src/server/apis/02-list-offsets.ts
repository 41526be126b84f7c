/**
 * ListOffsets (key 2), versions 1-11.
 *
 * Per partition: the offset for a timestamp (the first record at or after
 * it), or a special timestamp: -1 latest (the high watermark, or the last
 * stable offset under read_committed, v2+), -2 earliest, -3 the record with
 * the largest timestamp (v7+, KIP-734), -4 earliest local (v8+, KIP-405: the
 * log start, without tiered storage), -5 latest tiered (v9+, KIP-1005: -1
 * without tiered storage), -6 earliest pending upload (v11+, KIP-1023: -1).
 * A special timestamp the version does not know, or an unknown negative one,
 * gets UNSUPPORTED_VERSION; a partition named twice, INVALID_REQUEST.
 * v4 currentLeaderEpoch fencing and leaderEpoch in the answer (KIP-320).
 *
 * replicaId -1 is a consumer (isolation applies), -2 a debugging tool (may
 * read a follower); other ids are replicas and read up to the log end.
 * Not done: v10's timeoutMs (only matters for remote storage). No quotas.
 *
 * Authorization: DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED on its
 * partitions, before any other check), as Kafka's.
 */
import { ListOffsets } from '../../protocol/schemas/02-list-offsets.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { AclOperation, ResourceType, authorizedNames } from '../authorization.js';
import { topicPartitionKey } from '../../protocol/topic-partition.js';

/** The first ListOffsets version that knows each special timestamp (Kafka's table). */
const TIMESTAMP_MIN_VERSION = new Map<number, number>([
  [-2, 1],
  [-1, 1],
  [-3, 7],
  [-4, 8],
  [-5, 9],
  [-6, 11],
]);

const CONSUMER_REPLICA_ID = -1;
const DEBUGGING_REPLICA_ID = -2;

export function isListOffsetsTimestampUnsupported(timestamp: number, version: number): boolean {
  if (timestamp >= 0) return false;
  const minVersion = TIMESTAMP_MIN_VERSION.get(timestamp);
  return minVersion === undefined || version < minVersion;
}

export function listOffsetsHandler(broker: ApiContext) {
  return defineHandler({
    api: ListOffsets,
    async handle(request, context) {
      const version = context.apiVersion;
      const seen = new Map<string, number>();
      for (const topic of request.topics) for (const p of topic.partitions) {
        const key = topicPartitionKey({ topic: topic.name, partition: p.partitionIndex });
        seen.set(key, (seen.get(key) ?? 0) + 1);
      };
      const isClient = request.replicaId === CONSUMER_REPLICA_ID;
      const authorized = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, request.topics.map((topic) => topic.name));
      const topics = await Promise.all(
        request.topics.map(async (topic) => ({
          name: topic.name,
          partitions: await Promise.all(
            topic.partitions.map(async (partition) => {
              const answer = (errorCode: number, found = { timestamp: -1, offset: -1, leaderEpoch: -1 }) => ({ partitionIndex: partition.partitionIndex, errorCode, ...found });
              if (!authorized.has(topic.name)) return answer(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
              if ((seen.get(topicPartitionKey({ topic: topic.name, partition: partition.partitionIndex })) ?? 0) > 1) return answer(ErrorCode.INVALID_REQUEST);
              if (isListOffsetsTimestampUnsupported(partition.timestamp, version)) return answer(ErrorCode.UNSUPPORTED_VERSION);
              const result = await broker.replicaManager.fetchOffsetForTimestamp({
                topicPartition: { topic: topic.name, partition: partition.partitionIndex },
                timestamp: partition.timestamp,
                currentLeaderEpoch: partition.currentLeaderEpoch,
                isolationLevel: isClient ? request.isolationLevel : null,
                fetchOnlyFromLeader: request.replicaId !== DEBUGGING_REPLICA_ID,
              });
              const { errorCode, ...found } = result;
              return answer(errorCode, version >= 4 ? found : { ...found, leaderEpoch: -1 });
            }),
          ),
        })),
      );
      return { throttleTimeMs: 0, topics };
    },
    errorResponse: (request, errorCode) => ({
      throttleTimeMs: 0,
      topics: request.topics.map((topic) => ({ name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    }),
  });
}
