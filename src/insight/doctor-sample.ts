/**
 * One look at the cluster, as `spool doctor` takes it twice (a sampling
 * window apart) to tell movement from standstill: every partition's
 * leader, ISR and positions (high watermark from ListOffsets latest with
 * read_uncommitted, last stable offset with read_committed, the leader's
 * log end offset asked as a debugging replica), and every consumer group's
 * state, members and committed offsets (DescribeGroups or
 * ConsumerGroupDescribe, OffsetFetch).
 */
import type { Admin, ConsumerGroupDescription, TopicDescription } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import type { ListedOffset } from '../client/list-offsets.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';

export interface PartitionSample extends TopicPartition {
  topicId: string;
  isInternal: boolean;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  /** Null when the leader could not be asked (offline, or the error is in `error`). */
  highWatermark: number | null;
  lastStableOffset: number | null;
  logEndOffset: number | null;
  /** The Kafka error name that kept an offset from being read, if one did. */
  error: string | null;
}

export interface GroupSample {
  groupId: string;
  description: ConsumerGroupDescription;
  /** Committed offsets by topicPartitionKey. */
  committed: Map<string, number>;
}

export interface Sample {
  atMs: number;
  partitions: Map<string, PartitionSample>;
  groups: Map<string, GroupSample>;
}

export interface SampleScope {
  /** Topics to look at; null for all (internal ones too). */
  topics: readonly string[] | null;
  /** Groups to look at; null for every consumer group the reachable brokers coordinate. */
  groups: readonly string[] | null;
  /** The brokers that accept connections (the others would only time out). */
  reachableBrokerIds: readonly number[];
}

/** The consumer groups in scope, with their committed offsets (kept to the scope's topics). */
async function sampleGroups(admin: Admin, scope: SampleScope): Promise<Map<string, GroupSample>> {
  const groupIds = scope.groups ?? (await admin.listConsumerGroups({ brokerIds: scope.reachableBrokerIds })).map((g) => g.groupId).sort();
  const described = await admin.describeConsumerGroups(groupIds);
  const samples = new Map<string, GroupSample>();
  for (const description of described) {
    const offsets = await admin.listConsumerGroupOffsets(description.groupId);
    const committed = new Map<string, number>();
    for (const o of offsets) {
      if (o.offset < 0) continue;
      if (scope.topics !== null && !scope.topics.includes(o.topic)) continue;
      committed.set(topicPartitionKey(o), o.offset);
    }
    samples.set(description.groupId, { groupId: description.groupId, description, committed });
  }
  return samples;
}

function partitionsOf(topics: readonly TopicDescription[]): Map<string, PartitionSample> {
  const partitions = new Map<string, PartitionSample>();
  for (const topic of topics) {
    for (const p of topic.partitions) {
      partitions.set(topicPartitionKey({ topic: topic.name, partition: p.partition }), {
        topic: topic.name,
        partition: p.partition,
        topicId: topic.topicId,
        isInternal: topic.isInternal,
        leader: p.leader,
        leaderEpoch: p.leaderEpoch,
        replicas: p.replicas,
        isr: p.isr,
        highWatermark: null,
        lastStableOffset: null,
        logEndOffset: null,
        error: null,
      });
    }
  }
  return partitions;
}

/**
 * ListOffsets latest at one isolation level for every led partition; when
 * the request as a whole fails (one partition's error fails it), each
 * partition is asked alone so the others are still read. No retries: an
 * error is evidence for the sample (a partition in an offline log
 * directory answers KAFKA_STORAGE_ERROR, retriable, until the broker
 * restarts, and the admin client's retries would wait out twice
 * request.timeout.ms for each ask).
 */
async function latestOffsets(admin: Admin, partitions: readonly PartitionSample[], isolationLevel: 'read_uncommitted' | 'read_committed'): Promise<Map<string, number | KafkaError>> {
  const found = new Map<string, number | KafkaError>();
  const queries = partitions.map((p) => ({ topic: p.topic, partition: p.partition, spec: 'latest' as const }));
  const record = (listed: readonly ListedOffset[]) => listed.forEach((l) => found.set(topicPartitionKey(l), l.offset));
  try {
    record(await admin.listOffsets(queries, { isolationLevel, retries: 0 }));
    return found;
  } catch (error) {
    if (!(error instanceof KafkaError)) throw error;
  }
  for (const query of queries) {
    try {
      record(await admin.listOffsets([query], { isolationLevel, retries: 0 }));
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      found.set(topicPartitionKey(query), error);
    }
  }
  return found;
}

async function samplePositions(admin: Admin, partitions: Map<string, PartitionSample>): Promise<void> {
  const led = [...partitions.values()].filter((p) => p.leader >= 0);
  const highWatermarks = await latestOffsets(admin, led, 'read_uncommitted');
  const stableOffsets = await latestOffsets(admin, led, 'read_committed');
  await Promise.all(led.map(async (p) => {
    const key = topicPartitionKey(p);
    const highWatermark = highWatermarks.get(key);
    const lastStableOffset = stableOffsets.get(key);
    if (highWatermark instanceof KafkaError) p.error = highWatermark.errorName;
    else if (highWatermark !== undefined) p.highWatermark = highWatermark;
    if (lastStableOffset instanceof KafkaError) p.error ??= lastStableOffset.errorName;
    else if (lastStableOffset !== undefined) p.lastStableOffset = lastStableOffset;
    const leaderOffsets = await admin.describeReplicaOffsets(p, p.leader).catch((error: unknown) => {
      if (error instanceof KafkaError) return null;
      throw error;
    });
    if (leaderOffsets !== null && leaderOffsets.errorCode === 0) p.logEndOffset = leaderOffsets.logEndOffset;
  }));
}

export async function takeSample(admin: Admin, scope: SampleScope): Promise<Sample> {
  const atMs = admin.cluster.env.clock.nowMs();
  const groups = await sampleGroups(admin, scope);
  const topicNames = scope.topics ?? (await admin.listTopics({ listInternal: true }));
  const partitions = partitionsOf(await admin.describeTopics(topicNames));
  await samplePositions(admin, partitions);
  return { atMs, partitions, groups };
}
