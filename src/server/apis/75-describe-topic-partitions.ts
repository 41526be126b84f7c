/**
 * DescribeTopicPartitions (key 75), version 0 (KIP-966): topics and their
 * partitions, paged, with eligible leader replicas.
 *
 * An empty topic list means every topic. Topics are answered in name order;
 * at most responsePartitionLimit partitions (capped at Kafka's
 * max.request.partition.size.limit, 2000) per response, then nextCursor
 * names the topic and partition to continue from. A cursor topic that the
 * request does not list is INVALID_REQUEST for every topic. Unknown topics
 * are UNKNOWN_TOPIC_OR_PARTITION; partitions carry Metadata's errors
 * (LEADER_NOT_AVAILABLE without a leader). topicAuthorizedOperations holds
 * the operations the client has on the topic; DESCRIBE is required.
 */
import { DescribeTopicPartitions } from '../../protocol/schemas/75-describe-topic-partitions.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import type { MetadataImage, TopicImage } from '../../metadata/image.js';
import { AUTHORIZED_OPERATIONS_OMITTED, TOPIC_AUTHORIZED_OPERATIONS, partitionView } from '../../metadata/cluster-view.js';
import { isInternalTopic } from '../../controller/topic-names.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames, authorizedOperations } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

/** Kafka's max.request.partition.size.limit default. */
const PARTITIONS_PER_RESPONSE_MAX = 2000;

interface Cursor {
  topicName: string;
  partitionIndex: number;
}

export function describeTopicPartitionsHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeTopicPartitions,
    async handle(request, context) {
      await broker.metadata.whenReady();
      const image = broker.metadata.image;
      const all = request.topics.length === 0;
      const names = all ? [...image.topicsByName.keys()] : [...new Set(request.topics.map((t) => t.name))];
      names.sort();
      const cursor = request.cursor;
      if (cursor !== null && !all && !names.includes(cursor.topicName)) {
        return { throttleTimeMs: 0, topics: names.map((name) => unknownTopic(name, ErrorCode.INVALID_REQUEST)), nextCursor: null };
      }
      const limit = Math.max(1, Math.min(request.responsePartitionLimit, PARTITIONS_PER_RESPONSE_MAX));
      // DESCRIBE on each topic, as Kafka's: listing all leaves the others out; one asked for by name is
      // TOPIC_AUTHORIZATION_FAILED with a zero id, after the page.
      const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, names);
      const operations = (name: string) => authorizedOperations(broker, context, ResourceType.TOPIC, name);
      const shown = page(image, names.filter((name) => described.has(name)), { cursor, limit, listenerName: context.listenerName, operations });
      const denied = all ? [] : names.filter((name) => !described.has(name) && (cursor === null || name >= cursor.topicName));
      const unauthorized = denied.map((name) => ({ ...unknownTopic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED), topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }));
      return { throttleTimeMs: 0, topics: [...shown.topics, ...unauthorized], nextCursor: shown.nextCursor };
    },
  });
}

function unknownTopic(name: string, errorCode: number, operations = TOPIC_AUTHORIZED_OPERATIONS) {
  return { errorCode, name, topicId: ZERO_UUID, isInternal: false, partitions: [], topicAuthorizedOperations: operations };
}

function page(image: MetadataImage, names: readonly string[], options: { cursor: Cursor | null; limit: number; listenerName: string; operations: (name: string) => number }) {
  const topics = [];
  let remaining = options.limit;
  let nextCursor: Cursor | null = null;
  const start = options.cursor;
  const eligible = start === null ? names : names.filter((name) => name >= start.topicName);
  for (let i = 0; i < eligible.length; i++) {
    const name = eligible[i]!;
    if (remaining === 0) {
      nextCursor = { topicName: name, partitionIndex: 0 };
      break;
    }
    const topic = image.topicsByName.get(name);
    if (topic === undefined) {
      topics.push(unknownTopic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, options.operations(name)));
      continue;
    }
    const first = start !== null && name === start.topicName ? start.partitionIndex : 0;
    const described = describeTopic(image, topic, { first, count: remaining, listenerName: options.listenerName });
    topics.push({ ...described.topic, topicAuthorizedOperations: options.operations(name) });
    remaining -= described.topic.partitions.length;
    if (described.nextPartition !== null) {
      nextCursor = { topicName: name, partitionIndex: described.nextPartition };
      break;
    }
  }
  return { topics, nextCursor };
}

function describeTopic(image: MetadataImage, topic: TopicImage, options: { first: number; count: number; listenerName: string }) {
  const indexes = [...topic.partitions.keys()].filter((p) => p >= options.first).sort((a, b) => a - b);
  const taken = indexes.slice(0, options.count);
  const partitions = taken.map((index) => {
    const view = partitionView(image, topic.partitions.get(index)!, { listenerName: options.listenerName, errorUnavailableListeners: true, errorUnavailableEndpoints: false });
    return {
      errorCode: view.errorCode,
      partitionIndex: view.partitionIndex,
      leaderId: view.leaderId,
      leaderEpoch: view.leaderEpoch,
      replicaNodes: view.replicaNodes,
      isrNodes: view.isrNodes,
      eligibleLeaderReplicas: view.eligibleLeaderReplicas,
      lastKnownElr: view.lastKnownElr,
      offlineReplicas: view.offlineReplicas,
    };
  });
  return {
    topic: { errorCode: ErrorCode.NONE, name: topic.name, topicId: topic.id, isInternal: isInternalTopic(topic.name), partitions, topicAuthorizedOperations: TOPIC_AUTHORIZED_OPERATIONS },
    nextPartition: indexes.length > taken.length ? indexes[taken.length]! : null,
  };
}
