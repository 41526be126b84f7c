/**
 * OffsetForLeaderEpoch (key 23), versions 2-4: where a leader epoch ended in
 * this broker's log, so a follower (or a consumer after a leader change,
 * KIP-320) can find where its log diverged. v2 currentLeaderEpoch fencing
 * (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH); v3 replicaId (-2 for
 * consumers: then only the leader answers; a replica may also ask a
 * follower); v4 flexible.
 *
 * An epoch this log does not know answers leaderEpoch -1, endOffset -1; the
 * latest epoch answers the log end offset.
 */
import { OffsetForLeaderEpoch } from '../../protocol/schemas/23-offset-for-leader-epoch.js';
import { defineHandler } from '../handler.js';
import type { Broker } from '../broker.js';

/** Kafka's OffsetsForLeaderEpochRequest.CONSUMER_REPLICA_ID. */
const CONSUMER_REPLICA_ID = -2;

export function offsetForLeaderEpochHandler(broker: Broker) {
  return defineHandler({
    api: OffsetForLeaderEpoch,
    handle(request) {
      const fetchOnlyFromLeader = request.replicaId === CONSUMER_REPLICA_ID;
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((topic) => ({
          topic: topic.topic,
          partitions: topic.partitions.map((partition) => ({
            partition: partition.partition,
            ...broker.replicaManager.lastOffsetForLeaderEpoch({
              topicPartition: { topic: topic.topic, partition: partition.partition },
              currentLeaderEpoch: partition.currentLeaderEpoch,
              leaderEpoch: partition.leaderEpoch,
              fetchOnlyFromLeader,
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
