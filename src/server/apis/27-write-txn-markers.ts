/**
 * WriteTxnMarkers (key 27), versions 1-2 (v0 left with Kafka 4; v2 adds
 * KIP-890's transactionVersion per marker, which changes nothing in how a
 * marker is written).
 *
 * A transaction coordinator asks the partition leaders to write each
 * transaction's COMMIT or ABORT marker: a control batch carrying the
 * producer id and epoch and the coordinator epoch, written as
 * src/txn/marker-writer.ts describes (Spool's own coordinator uses the same
 * writer directly for the partitions this node leads). Errors per
 * partition, as Kafka: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
 * and the append's.
 */
import { WriteTxnMarkers } from '../../protocol/schemas/27-write-txn-markers.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function writeTxnMarkersHandler(broker: ApiContext) {
  return defineHandler({
    api: WriteTxnMarkers,
    async handle(request, context) {
      // From brokers: ALTER or CLUSTER_ACTION on the cluster, as Kafka's.
      if (!authorizeCluster(broker, context, AclOperation.ALTER) && !authorizeCluster(broker, context, AclOperation.CLUSTER_ACTION)) {
        return errorResponse(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      }
      const markers = await Promise.all(
        request.markers.map(async (marker) => {
          const partitions = marker.topics.flatMap((topic) => topic.partitionIndexes.map((partition) => ({ topic: topic.name, partition })));
          const results = await broker.transactionCoordinator.writeMarkers({
            producerId: marker.producerId,
            producerEpoch: marker.producerEpoch,
            committed: marker.transactionResult,
            coordinatorEpoch: marker.coordinatorEpoch,
            partitions,
            transactionVersion: marker.transactionVersion,
          });
          return { producerId: marker.producerId, topics: groupByTopic(results) };
        }),
      );
      return { markers };
    },
    errorResponse,
  });
}

function errorResponse(request: { markers: readonly { producerId: number; topics: readonly { name: string; partitionIndexes: readonly number[] }[] }[] }, errorCode: number) {
  return {
    markers: request.markers.map((marker) => ({
      producerId: marker.producerId,
      topics: marker.topics.map((topic) => ({ name: topic.name, partitions: topic.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode })) })),
    })),
  };
}

function groupByTopic(results: readonly { topic: string; partition: number; errorCode: number }[]) {
  const topics = new Map<string, { partitionIndex: number; errorCode: number }[]>();
  for (const { topic, partition, errorCode } of results) {
    let list = topics.get(topic);
    if (list === undefined) topics.set(topic, (list = []));
    list.push({ partitionIndex: partition, errorCode });
  }
  return [...topics].map(([name, partitions]) => ({ name, partitions }));
}
