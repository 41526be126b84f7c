/**
 * ListOffsets for the consumer and the admin client: the earliest (-2),
 * latest (-1) or max-timestamp (-3, KIP-734) offset of partitions, or the
 * first offset whose timestamp is at or after a given time. Requests go to
 * each partition's leader; partitions whose leader moved are retried after a
 * metadata refresh.
 */
import { ErrorCode } from '../protocol/errors.js';
import { ListOffsets } from '../protocol/schemas/02-list-offsets.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';

/** Kafka's special ListOffsets timestamps. */
export const OffsetSpec = {
  latest: -1,
  earliest: -2,
  maxTimestamp: -3,
} as const;

export const IsolationLevel = { read_uncommitted: 0, read_committed: 1 } as const;
export type IsolationLevelName = keyof typeof IsolationLevel;

export interface OffsetQuery extends TopicPartition {
  /** A timestamp in ms, or an OffsetSpec value. */
  timestamp: number;
}

export interface ListedOffset extends TopicPartition {
  offset: number;
  /** The record's timestamp for a timestamp lookup; -1 otherwise. */
  timestamp: number;
  leaderEpoch: number;
}

/** Versions that introduced each special timestamp. */
function versionNeeded(timestamp: number): number {
  if (timestamp === OffsetSpec.maxTimestamp) return 7;
  return 1;
}

/** Looks up offsets, retrying retriable errors; throws the first non-retriable partition error. */
export async function listOffsets(cluster: Cluster, queries: readonly OffsetQuery[], options: { isolationLevel?: IsolationLevelName; timeoutMs?: number; retries?: number } = {}): Promise<Map<string, ListedOffset>> {
  const results = new Map<string, ListedOffset>();
  let remaining = [...queries];
  await cluster.retry(async () => {
    for (const topic of new Set(remaining.map((q) => q.topic))) await cluster.topic(topic);
    const byLeader = new Map<number, OffsetQuery[]>();
    for (const query of remaining) {
      const leader = cluster.leaderFor(query.topic, query.partition);
      if (leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${query.topic}-${query.partition}`);
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), query]);
    }
    const failures = await Promise.all([...byLeader].map(([nodeId, list]) => listAtLeader(cluster, nodeId, list, options.isolationLevel ?? 'read_uncommitted', results)));
    remaining = failures.flatMap((f) => f.retry);
    const fatal = failures.find((f) => f.fatal !== null)?.fatal;
    if (fatal) throw fatal;
    if (remaining.length > 0) throw failures.find((f) => f.retryError !== null)!.retryError!;
  }, { timeoutMs: options.timeoutMs ?? cluster.requestTimeoutMs * 2, ...(options.retries === undefined ? {} : { retries: options.retries }) });
  return results;
}

interface LeaderOutcome {
  retry: OffsetQuery[];
  retryError: KafkaError | null;
  fatal: KafkaError | null;
}

async function listAtLeader(cluster: Cluster, nodeId: number, queries: readonly OffsetQuery[], isolationLevel: IsolationLevelName, results: Map<string, ListedOffset>): Promise<LeaderOutcome> {
  const outcome: LeaderOutcome = { retry: [], retryError: null, fatal: null };
  const connection = await cluster.connection(nodeId);
  const byTopic = new Map<string, OffsetQuery[]>();
  for (const query of queries) byTopic.set(query.topic, [...(byTopic.get(query.topic) ?? []), query]);
  const versionMin = Math.max(...queries.map((q) => versionNeeded(q.timestamp)));
  const version = connection.versionFor(ListOffsets);
  if (version === null || version < versionMin) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `ListOffsets v${versionMin} is needed`);
  const response = await connection.send(ListOffsets, {
    replicaId: -1,
    isolationLevel: IsolationLevel[isolationLevel],
    topics: [...byTopic].map(([name, list]) => ({
      name,
      partitions: list.map((q) => ({ partitionIndex: q.partition, currentLeaderEpoch: cluster.partitionInfo(q.topic, q.partition)?.leaderEpoch ?? -1, timestamp: q.timestamp })),
    })),
    timeoutMs: cluster.requestTimeoutMs,
  });
  for (const topic of response.topics) {
    for (const partition of topic.partitions) {
      const query = queries.find((q) => q.topic === topic.name && q.partition === partition.partitionIndex);
      if (query === undefined) continue;
      if (partition.errorCode === ErrorCode.NONE) {
        results.set(topicPartitionKey({ topic: topic.name, partition: partition.partitionIndex }), {
          topic: topic.name,
          partition: partition.partitionIndex,
          offset: partition.offset,
          timestamp: partition.timestamp,
          leaderEpoch: partition.leaderEpoch,
        });
        continue;
      }
      const error = new KafkaError(partition.errorCode, `ListOffsets for ${topic.name}-${partition.partitionIndex}`);
      if (error.retriable) {
        outcome.retry.push(query);
        outcome.retryError = error;
      } else {
        outcome.fatal = error;
      }
    }
  }
  return outcome;
}
