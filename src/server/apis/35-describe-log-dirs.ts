/**
 * DescribeLogDirs (key 35), versions 1-5 (KIP-113): each log directory of
 * this broker with the hosted partitions in it, their size in bytes and
 * their offset lag (0 for a leader). `topics` null means every partition.
 * v2 flexible; v3 top-level errorCode; v4 totalBytes / usableBytes
 * (KIP-827); v5 isCordoned (KIP-1066: never, here).
 *
 * Not done: totalBytes / usableBytes are -1 (Kafka's UNKNOWN_VOLUME_BYTES):
 * the file-system seam has no statfs yet. A directory taken offline by a
 * disk error is listed with KAFKA_STORAGE_ERROR and no topics, as Kafka does.
 */
import { DescribeLogDirs } from '../../protocol/schemas/35-describe-log-dirs.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { topicPartitionKey } from '../../protocol/topic-partition.js';

const UNKNOWN_VOLUME_BYTES = -1;

export function describeLogDirsHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeLogDirs,
    handle(request, context) {
      // DESCRIBE on the cluster, as Kafka's: CLUSTER_AUTHORIZATION_FAILED (v3+) and no directories otherwise.
      if (!authorizeCluster(broker, context, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
      const wanted = request.topics === null ? null : new Set(request.topics.flatMap((topic) => topic.partitions.map((partition) => topicPartitionKey({ topic: topic.topic, partition }))));
      const results = broker.replicaManager.describeLogDirs().map((dir) => {
        const byTopic = new Map<string, { partitionIndex: number; partitionSize: number; offsetLag: number; isFutureKey: boolean }[]>();
        for (const { topicPartition, sizeBytes, offsetLag } of dir.partitions) {
          if (wanted !== null && !wanted.has(topicPartitionKey(topicPartition))) continue;
          let partitions = byTopic.get(topicPartition.topic);
          if (partitions === undefined) byTopic.set(topicPartition.topic, (partitions = []));
          partitions.push({ partitionIndex: topicPartition.partition, partitionSize: sizeBytes, offsetLag, isFutureKey: false });
        }
        return {
          errorCode: dir.errorCode,
          logDir: dir.logDir,
          topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
          totalBytes: UNKNOWN_VOLUME_BYTES,
          usableBytes: UNKNOWN_VOLUME_BYTES,
          isCordoned: false,
        };
      });
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, results: [] }),
  });
}
