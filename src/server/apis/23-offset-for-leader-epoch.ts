/**
 * OffsetForLeaderEpoch (key 23), versions 2-4: where a leader epoch ended in
 * this broker's log, so a follower (or a consumer after a leader change,
 * KIP-320) can find where its log diverged. v2 currentLeaderEpoch fencing
 * (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); v3 replicaId (-2 for
 * consumers); v4 flexible. Only the leader answers (NOT_LEADER_OR_FOLLOWER
 * elsewhere), for replicas and consumers alike, as in Kafka.
 *
 * An epoch this log does not know answers leaderEpoch -1, endOffset -1; the
 * latest epoch answers the log end offset.
 */
import { OffsetForLeaderEpoch } from '../../protocol/schemas/23-offset-for-leader-epoch.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, authorizeCluster, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function offsetForLeaderEpochHandler(broker: ApiContext) {
  return defineHandler({
    api: OffsetForLeaderEpoch,
    handle(request, context) {
      // CLUSTER_ACTION on the cluster (replicas), else DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED), as Kafka's (KIP-320).
      const all = authorizeCluster(broker, context, AclOperation.CLUSTER_ACTION);
      const described = all ? null : authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, request.topics.map((topic) => topic.topic));
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((topic) => ({
          topic: topic.topic,
          partitions: topic.partitions.map((partition) => described !== null && !described.has(topic.topic) ? { partition: partition.partition, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED } : ({
            partition: partition.partition,
            ...broker.replicaManager.lastOffsetForLeaderEpoch({
              topicPartition: { topic: topic.topic, partition: partition.partition },
              currentLeaderEpoch: partition.currentLeaderEpoch,
              leaderEpoch: partition.leaderEpoch,
              fetchOnlyFromLeader: true,
            }),
          })),
        })),
      };
    },
    errorResponse: (request, errorCode) => ({
      throttleTimeMs: 0,
      topics: request.topics.map((topic) => ({ topic: topic.topic, partitions: topic.partitions.map((p) => ({ partition: p.partition, errorCode })) })),
    }),
  });
}
