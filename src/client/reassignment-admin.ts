/**
 * The admin calls of partition reassignment (KIP-455) on a link to the
 * active controller: AlterPartitionReassignments and
 * ListPartitionReassignments. The Admin client reaches the controller
 * through the brokers (which forward); `spool reassign-partitions
 * --bootstrap-controller` talks to the controllers themselves. Either way
 * NOT_CONTROLLER is thrown inside the operation, so the link retries it on
 * the next candidate.
 */
import { ErrorCode } from '../protocol/errors.js';
import { AlterPartitionReassignments } from '../protocol/schemas/45-alter-partition-reassignments.js';
import { ListPartitionReassignments } from '../protocol/schemas/46-list-partition-reassignments.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { BrokerConnection } from './connection.js';
import { KafkaError, throwIfError } from './errors.js';

/** A way to the active controller: runs the operation on a connection to it, again on another after a retriable failure. */
export interface ControllerLink {
  retry<T>(operation: (connection: BrokerConnection) => Promise<T>): Promise<T>;
}

/** A reassignment in progress (Kafka's PartitionReassignment): replicas are the target ones, then those being removed. */
export interface PartitionReassignment extends TopicPartition {
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

/** Starts (target replicas) or cancels (null) reassignments; per `topic-partition`, null or its error. */
export async function alterPartitionReassignments(
  link: ControllerLink,
  reassignments: readonly (TopicPartition & { replicas: readonly number[] | null })[],
  options: { allowReplicationFactorChange?: boolean; timeoutMs?: number } = {},
): Promise<Map<string, KafkaError | null>> {
  const byTopic = new Map<string, { partitionIndex: number; replicas: number[] | null }[]>();
  for (const r of reassignments) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), { partitionIndex: r.partition, replicas: r.replicas === null ? null : [...r.replicas] }]);
  const response = await link.retry(async (connection) => {
    const answer = await connection.send(AlterPartitionReassignments, {
      timeoutMs: options.timeoutMs ?? 60_000,
      allowReplicationFactorChange: options.allowReplicationFactorChange ?? true,
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    });
    if (answer.errorCode === ErrorCode.NOT_CONTROLLER) throw new KafkaError(answer.errorCode, answer.errorMessage);
    return answer;
  });
  const results = new Map<string, KafkaError | null>();
  for (const topic of response.responses) {
    for (const p of topic.partitions) {
      const errorCode = response.errorCode !== ErrorCode.NONE ? response.errorCode : p.errorCode;
      const errorMessage = response.errorCode !== ErrorCode.NONE ? response.errorMessage : p.errorMessage;
      results.set(topicPartitionKey({ topic: topic.name, partition: p.partitionIndex }), errorCode === ErrorCode.NONE ? null : new KafkaError(errorCode, errorMessage));
    }
  }
  return results;
}

/** The reassignments in progress: of the given partitions, or all. */
export async function listPartitionReassignments(link: ControllerLink, partitions?: readonly TopicPartition[]): Promise<PartitionReassignment[]> {
  let topics: { name: string; partitionIndexes: number[] }[] | null = null;
  if (partitions !== undefined) {
    const byTopic = new Map<string, number[]>();
    for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
    topics = [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes }));
  }
  const response = await link.retry(async (connection) => {
    const answer = await connection.send(ListPartitionReassignments, { timeoutMs: 60_000, topics });
    if (answer.errorCode === ErrorCode.NOT_CONTROLLER) throw new KafkaError(answer.errorCode, answer.errorMessage);
    return answer;
  });
  throwIfError(response.errorCode, response.errorMessage ?? 'ListPartitionReassignments');
  return response.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, replicas: p.replicas, addingReplicas: p.addingReplicas, removingReplicas: p.removingReplicas })));
}
