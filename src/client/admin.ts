/**
 * Spool's admin client: topics, partitions, configs, offsets, records,
 * consumer groups (group-admin.ts), share groups (share-group-admin.ts),
 * transactions (transaction-admin.ts)
 * and the cluster, in the words of Kafka's
 * Admin API.
 *
 * Metadata-changing requests (CreateTopics, DeleteTopics, CreatePartitions,
 * IncrementalAlterConfigs, AlterPartitionReassignments) go to the controller the Metadata response names
 * (in KRaft a broker that forwards to the active controller), and are
 * retried after NOT_CONTROLLER or a lost connection. A per-resource error
 * (TOPIC_ALREADY_EXISTS, INVALID_CONFIG, ...) rejects the call with a
 * KafkaError carrying the broker's message.
 */
import { realEnv } from '../io/env.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { DescribeConfigs } from '../protocol/schemas/32-describe-configs.js';
import { CreatePartitions } from '../protocol/schemas/37-create-partitions.js';
import { CreateTopics } from '../protocol/schemas/19-create-topics.js';
import { DeleteRecords } from '../protocol/schemas/21-delete-records.js';
import { DeleteTopics } from '../protocol/schemas/20-delete-topics.js';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { Fetch } from '../protocol/schemas/01-fetch.js';
import { ListOffsets } from '../protocol/schemas/02-list-offsets.js';
import { IncrementalAlterConfigs } from '../protocol/schemas/44-incremental-alter-configs.js';
import { DescribeClientQuotas } from '../protocol/schemas/48-describe-client-quotas.js';
import { AlterClientQuotas } from '../protocol/schemas/49-alter-client-quotas.js';
import { DescribeLogDirs } from '../protocol/schemas/35-describe-log-dirs.js';
import { ElectLeaders } from '../protocol/schemas/43-elect-leaders.js';
import { DescribeTopicPartitions } from '../protocol/schemas/75-describe-topic-partitions.js';

/** Partitions a DescribeTopicPartitions page holds (Kafka's default partitionSizeLimitPerResponse). */
const DESCRIBE_PARTITIONS_PAGE = 2000;
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { DescribeAcls } from '../protocol/schemas/29-describe-acls.js';
import { CreateAcls } from '../protocol/schemas/30-create-acls.js';
import { DeleteAcls } from '../protocol/schemas/31-delete-acls.js';
import type { AclBindingFilter, StandardAcl } from '../security/authorizer/acl.js';
import { Cluster, type BrokerInfo, type ClientOptions } from './cluster.js';
import type { BrokerConnection } from './connection.js';
import { KafkaError, throwIfError } from './errors.js';
import { listOffsets, OffsetSpec, type IsolationLevelName, type ListedOffset } from './list-offsets.js';
import {
  alterConsumerGroupOffsets,
  consumerGroupDescribe,
  deleteConsumerGroupOffsets,
  deleteConsumerGroups,
  describeClassicGroup,
  describeConsumerGroup,
  listConsumerGroupOffsets,
  listConsumerGroups,
  listGroups,
  type ConsumerGroupDescription,
  type GroupListing,
  type ListGroupsOptions,
} from './group-admin.js';
import type { OffsetAndMetadata, OffsetToCommit } from './group-coordinator.js';
import {
  alterShareGroupOffsets,
  deleteShareGroupOffsets,
  deleteShareGroups,
  describeShareGroup,
  listShareGroupOffsets,
  listShareGroups,
  type DeletedShareGroupOffsets,
  type ListedSharePartition,
  type ShareGroupDescription,
} from './share-group-admin.js';
import { alterPartitionReassignments, listPartitionReassignments, type ControllerLink, type PartitionReassignment } from './reassignment-admin.js';
import {
  abortTransaction,
  describeProducers,
  describeTransaction,
  listTransactions,
  type AbortTransactionSpec,
  type ListTransactionsOptions,
  type ProducerState,
  type TransactionDescription,
  type TransactionListing,
} from './transaction-admin.js';

export type { ConsumerGroupDescription, GroupListing, ListGroupsOptions, MemberDescription } from './group-admin.js';
export type { PartitionReassignment } from './reassignment-admin.js';
export type { DeletedShareGroupOffsets, ListedSharePartition, ShareGroupDescription, ShareMemberDescription, SharePartitionOffsetInfo } from './share-group-admin.js';
export type { AbortTransactionSpec, ListTransactionsOptions, ProducerState, TransactionDescription, TransactionListing } from './transaction-admin.js';

export type AdminOptions = ClientOptions;

export interface NewTopic {
  name: string;
  /** Default -1: the broker's num.partitions. */
  numPartitions?: number;
  /** Default -1: the broker's default.replication.factor. */
  replicationFactor?: number;
  /** Explicit assignment: partition -> broker ids. */
  replicaAssignment?: Record<number, number[]>;
  configs?: Record<string, string>;
}

export interface CreatedTopic {
  name: string;
  topicId: string;
  numPartitions: number;
  replicationFactor: number;
}

export interface TopicDescription {
  name: string;
  topicId: string;
  isInternal: boolean;
  partitions: {
    partition: number;
    leader: number;
    leaderEpoch: number;
    replicas: number[];
    isr: number[];
    offlineReplicas: number[];
    /** Eligible leader replicas and the last known ELR (KIP-966, DescribeTopicPartitions); null when the broker does not say. */
    elr: number[] | null;
    lastKnownElr: number[] | null;
  }[];
}

/** One replica's offsets as that replica's broker reports them (-1 when it could not be asked). */
export interface ReplicaOffsets {
  brokerId: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  errorCode: number;
}

/** A broker's log directory as DescribeLogDirs reports it. */
export interface LogDirDescription {
  logDir: string;
  /** KAFKA_STORAGE_ERROR for a directory taken offline. */
  errorCode: number;
  replicas: (TopicPartition & { sizeBytes: number; offsetLag: number; isFuture: boolean })[];
}

/** Kafka's debugging replica id: may read any replica, not only the leader. */
const DEBUGGING_REPLICA_ID = -2;

/** Kafka's ConfigResource.Type ids. */
export const ConfigResourceType = { topic: 2, broker: 4, brokerLogger: 8, clientMetrics: 16, group: 32 } as const;
export type ConfigResourceTypeName = keyof typeof ConfigResourceType;

/** Kafka's ConfigEntry.ConfigSource names (the Java Admin's), by DescribeConfigs value. */
export const CONFIG_SOURCES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'DYNAMIC_CLIENT_METRICS_CONFIG',
  'DYNAMIC_GROUP_CONFIG',
] as const;

export interface ConfigEntry {
  name: string;
  value: string | null;
  source: string;
  readOnly: boolean;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: string }[];
}

export interface ConfigResource {
  type: ConfigResourceTypeName;
  name: string;
}

/** IncrementalAlterConfigs operations (KIP-339). */
export const AlterConfigOp = { set: 0, delete: 1, append: 2, subtract: 3 } as const;

export interface ConfigAlteration {
  name: string;
  op: keyof typeof AlterConfigOp;
  value?: string | null;
}

export type OffsetSpecName = 'earliest' | 'latest' | 'max-timestamp';

/** A DescribeClientQuotas filter component: `match` a name, null for the default entity, undefined for any. */
export interface ClientQuotaFilterComponent {
  entityType: string;
  match?: string | null;
}

export interface ClientQuotaEntry {
  entity: readonly { entityType: string; entityName: string | null }[];
  values: readonly { key: string; value: number }[];
}

export class Admin {
  readonly cluster: Cluster;

  constructor(options: AdminOptions) {
    this.cluster = new Cluster({ ...options, env: options.env ?? realEnv });
  }

  async close(): Promise<void> {
    await this.cluster.close();
  }

  /** The controller's connection (as Metadata names it), else any broker's. */
  private async controller(): Promise<BrokerConnection> {
    await this.cluster.refreshMetadata([]);
    const id = this.cluster.controllerId;
    return id >= 0 && this.cluster.brokers.has(id) ? this.cluster.connection(id) : this.cluster.anyConnection();
  }

  private retry<T>(operation: () => Promise<T>): Promise<T> {
    return this.cluster.retry(operation, { timeoutMs: this.cluster.requestTimeoutMs * 2 });
  }

  async createTopics(topics: readonly NewTopic[], options: { validateOnly?: boolean; timeoutMs?: number } = {}): Promise<CreatedTopic[]> {
    const response = await this.retry(async () => {
      const connection = await this.controller();
      return connection.send(CreateTopics, {
        topics: topics.map((topic) => ({
          name: topic.name,
          numPartitions: topic.replicaAssignment ? -1 : topic.numPartitions ?? -1,
          replicationFactor: topic.replicaAssignment ? -1 : topic.replicationFactor ?? -1,
          assignments: Object.entries(topic.replicaAssignment ?? {}).map(([partition, brokerIds]) => ({ partitionIndex: Number(partition), brokerIds })),
          configs: Object.entries(topic.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
        timeoutMs: options.timeoutMs ?? 60_000,
        validateOnly: options.validateOnly ?? false,
      });
    });
    for (const topic of response.topics) throwIfError(topic.errorCode, topic.errorMessage ?? `topic ${topic.name}`);
    return response.topics.map((t) => ({ name: t.name, topicId: t.topicId, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor }));
  }

  async deleteTopics(names: readonly string[], options: { timeoutMs?: number } = {}): Promise<void> {
    const response = await this.retry(async () => {
      const connection = await this.controller();
      return connection.send(DeleteTopics, {
        topics: names.map((name) => ({ name, topicId: ZERO_UUID })),
        topicNames: [...names],
        timeoutMs: options.timeoutMs ?? 60_000,
      });
    });
    for (const topic of response.responses) throwIfError(topic.errorCode, topic.errorMessage ?? `topic ${topic.name}`);
  }

  /** Topic names, without internal topics unless asked. */
  async listTopics(options: { listInternal?: boolean } = {}): Promise<string[]> {
    await this.retry(() => this.cluster.refreshMetadata(null));
    return [...this.cluster.topics.values()]
      .filter((t) => t.errorCode === ErrorCode.NONE && (options.listInternal === true || !t.isInternal))
      .map((t) => t.name)
      .sort();
  }

  async describeTopics(names: readonly string[]): Promise<TopicDescription[]> {
    await this.retry(() => this.cluster.refreshMetadata(names));
    const eligible = await this.eligibleLeaderReplicas(names);
    return names.map((name) => {
      const topic = this.cluster.topics.get(name);
      if (topic === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' does not exist as expected`);
      throwIfError(topic.errorCode, `topic ${name}`);
      return {
        name,
        topicId: topic.topicId,
        isInternal: topic.isInternal,
        partitions: topic.partitions.map((p) => ({
          partition: p.partition,
          leader: p.leaderId,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicas,
          isr: p.isr,
          offlineReplicas: p.offlineReplicas,
          elr: eligible.get(topicPartitionKey({ topic: name, partition: p.partition }))?.elr ?? null,
          lastKnownElr: eligible.get(topicPartitionKey({ topic: name, partition: p.partition }))?.lastKnownElr ?? null,
        })),
      };
    });
  }

  /** Each partition's ELR and LastKnownElr by DescribeTopicPartitions (paged by its cursor), as Kafka's describeTopics reads them. */
  private async eligibleLeaderReplicas(names: readonly string[]): Promise<Map<string, { elr: number[] | null; lastKnownElr: number[] | null }>> {
    const found = new Map<string, { elr: number[] | null; lastKnownElr: number[] | null }>();
    if (names.length === 0) return found;
    type Cursor = { topicName: string; partitionIndex: number } | null;
    const page = async (cursor: Cursor) => {
      const request = { topics: names.map((name) => ({ name })), responsePartitionLimit: DESCRIBE_PARTITIONS_PAGE, cursor };
      return this.retry(async () => (await this.cluster.anyConnection()).send(DescribeTopicPartitions, request));
    };
    let cursor: Cursor = null;
    do {
      const response = await page(cursor);
      for (const topic of response.topics) {
        for (const p of topic.partitions) {
          found.set(topicPartitionKey({ topic: topic.name ?? '', partition: p.partitionIndex }), { elr: p.eligibleLeaderReplicas, lastKnownElr: p.lastKnownElr });
        }
      }
      cursor = response.nextCursor;
    } while (cursor !== null);
    return found;
  }

  /** Raises topics' partition counts to `counts[topic]`. */
  async createPartitions(counts: Record<string, number>, options: { validateOnly?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const response = await this.retry(async () => {
      const connection = await this.controller();
      return connection.send(CreatePartitions, {
        topics: Object.entries(counts).map(([name, count]) => ({ name, count, assignments: null })),
        timeoutMs: options.timeoutMs ?? 60_000,
        validateOnly: options.validateOnly ?? false,
      });
    });
    for (const result of response.results) throwIfError(result.errorCode, result.errorMessage ?? `topic ${result.name}`);
  }

  /**
   * Preferred (0) or unclean (1) leader elections (ElectLeaders, KIP-460) on
   * the partitions, or on every partition when null; per partition, null or
   * its error, as Kafka's ElectLeadersResult.partitions().
   */
  async electLeaders(electionType: number, partitions: readonly TopicPartition[] | null, options: { timeoutMs?: number } = {}): Promise<Map<string, KafkaError | null>> {
    const byTopic = new Map<string, number[]>();
    for (const tp of partitions ?? []) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition]);
    const response = await this.retry(async () => {
      const answer = await (await this.controller()).send(ElectLeaders, {
        electionType,
        topicPartitions: partitions === null ? null : [...byTopic].map(([topic, ids]) => ({ topic, partitions: ids })),
        timeoutMs: options.timeoutMs ?? 60_000,
      });
      // Retried (with fresh metadata) while the request reached a controller that is not active.
      if (answer.errorCode === ErrorCode.NOT_CONTROLLER) throw new KafkaError(answer.errorCode);
      return answer;
    });
    if (response.errorCode !== ErrorCode.NONE && response.replicaElectionResults.length === 0) throw new KafkaError(response.errorCode);
    const results = new Map<string, KafkaError | null>();
    for (const topic of response.replicaElectionResults) {
      for (const p of topic.partitionResult) {
        const errorCode = response.errorCode !== ErrorCode.NONE ? response.errorCode : p.errorCode;
        results.set(topicPartitionKey({ topic: topic.topic, partition: p.partitionId }), errorCode === ErrorCode.NONE ? null : new KafkaError(errorCode, p.errorMessage));
      }
    }
    return results;
  }

  /**
   * Starts (target replicas) or cancels (null) partition reassignments
   * (AlterPartitionReassignments, KIP-455); per partition, null or its error,
   * as Kafka's AlterPartitionReassignmentsResult.values().
   */
  alterPartitionReassignments(
    reassignments: readonly (TopicPartition & { replicas: readonly number[] | null })[],
    options: { allowReplicationFactorChange?: boolean; timeoutMs?: number } = {},
  ): Promise<Map<string, KafkaError | null>> {
    return alterPartitionReassignments(this.controllerLink(), reassignments, options);
  }

  /**
   * The log directory holding each replica (Kafka's describeReplicaLogDirs):
   * DescribeLogDirs to each replica's broker; null when its broker does not
   * hold it. Keyed by `topic-partition-brokerId`.
   */
  async describeReplicaLogDirs(replicas: readonly (TopicPartition & { brokerId: number })[]): Promise<Map<string, string | null>> {
    const byBroker = new Map<number, (TopicPartition & { brokerId: number })[]>();
    for (const r of replicas) byBroker.set(r.brokerId, [...(byBroker.get(r.brokerId) ?? []), r]);
    const found = new Map<string, string | null>();
    await Promise.all([...byBroker].map(async ([brokerId, list]) => {
      const topics = [...new Set(list.map((r) => r.topic))].map((topic) => ({ topic, partitions: list.filter((r) => r.topic === topic).map((r) => r.partition) }));
      const response = await this.retry(async () => (await this.cluster.connection(brokerId)).send(DescribeLogDirs, { topics }));
      for (const r of list) {
        const holder = response.results.find((dir) => dir.errorCode === ErrorCode.NONE && dir.topics.some((t) => t.name === r.topic && t.partitions.some((p) => p.partitionIndex === r.partition && !p.isFutureKey)));
        found.set(`${topicPartitionKey(r)}-${brokerId}`, holder?.logDir ?? null);
      }
    }));
    return found;
  }

  /** The reassignments in progress: of the given partitions, or all (ListPartitionReassignments). */
  listPartitionReassignments(partitions?: readonly TopicPartition[]): Promise<PartitionReassignment[]> {
    return listPartitionReassignments(this.controllerLink(), partitions);
  }

  /** The controller the Metadata response names, retried after NOT_CONTROLLER or a lost connection. */
  private controllerLink(): ControllerLink {
    return { retry: (operation) => this.retry(async () => operation(await this.controller())) };
  }

  async describeConfigs(resources: readonly ConfigResource[], options: { includeSynonyms?: boolean; configNames?: string[] } = {}): Promise<(ConfigResource & { configs: ConfigEntry[] })[]> {
    const out: (ConfigResource & { configs: ConfigEntry[] })[] = [];
    for (const resource of resources) {
      const response = await this.retry(async () => {
        const connection = resource.type === 'broker' && /^\d+$/.test(resource.name) ? await this.cluster.connection(Number(resource.name)) : await this.cluster.anyConnection();
        return connection.send(DescribeConfigs, {
          resources: [{ resourceType: ConfigResourceType[resource.type], resourceName: resource.name, configurationKeys: options.configNames ?? null }],
          includeSynonyms: options.includeSynonyms ?? false,
          includeDocumentation: false,
        });
      });
      for (const result of response.results) {
        throwIfError(result.errorCode, result.errorMessage);
        out.push({
          ...resource,
          configs: result.configs.map((c) => ({
            name: c.name,
            value: c.value,
            source: CONFIG_SOURCES[c.configSource] ?? 'UNKNOWN',
            readOnly: c.readOnly,
            isSensitive: c.isSensitive,
            synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value, source: CONFIG_SOURCES[s.source] ?? 'UNKNOWN' })),
          })),
        });
      }
    }
    return out;
  }

  /** Incremental config changes (IncrementalAlterConfigs, KIP-339). */
  async alterConfigs(changes: readonly (ConfigResource & { ops: readonly ConfigAlteration[] })[], options: { validateOnly?: boolean } = {}): Promise<void> {
    const response = await this.retry(async () => {
      const brokerTarget = changes.find((c) => c.type === 'broker' && /^\d+$/.test(c.name));
      const connection = brokerTarget !== undefined ? await this.cluster.connection(Number(brokerTarget.name)) : await this.controller();
      return connection.send(IncrementalAlterConfigs, {
        resources: changes.map((change) => ({
          resourceType: ConfigResourceType[change.type],
          resourceName: change.name,
          configs: change.ops.map((op) => ({ name: op.name, configOperation: AlterConfigOp[op.op], value: op.value ?? null })),
        })),
        validateOnly: options.validateOnly ?? false,
      });
    });
    for (const result of response.responses) throwIfError(result.errorCode, result.errorMessage ?? `${result.resourceName}`);
  }

  /**
   * Client quotas matching a filter (KIP-546): each component an entity type
   * with a name, null for the default entity, or undefined for any name;
   * `strict` leaves out entities with other components.
   */
  async describeClientQuotas(components: readonly ClientQuotaFilterComponent[], options: { strict?: boolean } = {}): Promise<ClientQuotaEntry[]> {
    const response = await this.retry(async () => (await this.cluster.anyConnection()).send(DescribeClientQuotas, {
      components: components.map(({ entityType, match }) => ({ entityType, matchType: match === undefined ? 2 : match === null ? 1 : 0, match: match ?? null })),
      strict: options.strict ?? false,
    }));
    throwIfError(response.errorCode, response.errorMessage);
    return (response.entries ?? []).map((entry) => ({ entity: entry.entity, values: entry.values }));
  }

  /** Sets (a number) or removes (null) quota keys of one entity each; throws on the first entity refused. */
  async alterClientQuotas(alterations: readonly { entity: ClientQuotaEntry['entity']; ops: readonly { key: string; value: number | null }[] }[], options: { validateOnly?: boolean } = {}): Promise<void> {
    const response = await this.retry(async () => (await this.controller()).send(AlterClientQuotas, {
      entries: alterations.map(({ entity, ops }) => ({ entity: [...entity], ops: ops.map(({ key, value }) => ({ key, value: value ?? 0, remove: value === null })) })),
      validateOnly: options.validateOnly ?? false,
    }));
    for (const entry of response.entries) throwIfError(entry.errorCode, entry.errorMessage ?? '');
  }

  /**
   * Offsets per partition for a spec: earliest, latest, max-timestamp, or a timestamp in ms.
   * `retries` bounds the retries of retriable errors (default: until twice request.timeout.ms).
   */
  async listOffsets(queries: readonly (TopicPartition & { spec: OffsetSpecName | number })[], options: { isolationLevel?: IsolationLevelName; retries?: number } = {}): Promise<ListedOffset[]> {
    // Kafka refuses a partition named twice in one request: each round asks each partition once.
    const out: ListedOffset[] = new Array(queries.length);
    const rounds: number[][] = [];
    const seen = new Map<string, number>();
    queries.forEach((q, index) => {
      const key = topicPartitionKey(q);
      const round = seen.get(key) ?? 0;
      seen.set(key, round + 1);
      (rounds[round] ??= []).push(index);
    });
    for (const round of rounds) {
      const resolved = round.map((i) => ({ topic: queries[i]!.topic, partition: queries[i]!.partition, timestamp: specTimestamp(queries[i]!.spec) }));
      const results = await listOffsets(this.cluster, resolved, options);
      for (const i of round) {
        const listed = results.get(topicPartitionKey(queries[i]!));
        if (listed === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no offset for ${queries[i]!.topic}-${queries[i]!.partition}`);
        out[i] = listed;
      }
    }
    return out;
  }

  /**
   * Each replica's log start, log end and high watermark, asked of the
   * replica's own broker as a debugging client (replica id -2, allowed on
   * followers): the log end from ListOffsets (latest, no isolation), the
   * high watermark and log start from an empty Fetch at that log end.
   */
  async describeReplicaOffsets(topicPartition: TopicPartition & { topicId: string }, brokerId: number): Promise<ReplicaOffsets> {
    const failed = (errorCode: number): ReplicaOffsets => ({ brokerId, logStartOffset: -1, logEndOffset: -1, highWatermark: -1, errorCode });
    let connection: BrokerConnection;
    try {
      connection = await this.cluster.connection(brokerId);
    } catch (error) {
      if (error instanceof KafkaError) return failed(ErrorCode.BROKER_NOT_AVAILABLE);
      throw error;
    }
    const listed = await connection.send(ListOffsets, {
      replicaId: DEBUGGING_REPLICA_ID,
      isolationLevel: 0,
      topics: [{ name: topicPartition.topic, partitions: [{ partitionIndex: topicPartition.partition, currentLeaderEpoch: -1, timestamp: -1 }] }],
    });
    const end = listed.topics[0]?.partitions[0];
    if (end === undefined || end.errorCode !== ErrorCode.NONE) return failed(end?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR);
    const fetched = await connection.send(
      Fetch,
      {
        replicaId: DEBUGGING_REPLICA_ID,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 0,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic: topicPartition.topic, topicId: topicPartition.topicId, partitions: [{ partition: topicPartition.partition, currentLeaderEpoch: -1, fetchOffset: end.offset, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 0 }] }],
        forgottenTopicsData: [],
        rackId: '',
      },
      { versionMax: 14 },
    );
    const answer = fetched.responses[0]?.partitions[0];
    if (answer === undefined || answer.errorCode !== ErrorCode.NONE) return failed(answer?.errorCode ?? fetched.errorCode);
    return { brokerId, logStartOffset: answer.logStartOffset, logEndOffset: end.offset, highWatermark: answer.highWatermark, errorCode: ErrorCode.NONE };
  }

  /**
   * The cluster's brokers, controller and id (DescribeCluster); with
   * `includeFencedBrokers` (v2, KIP-1073) the fenced brokers too, each
   * marked `fenced` (always false from a broker older than v2).
   */
  async describeCluster(options: { includeFencedBrokers?: boolean } = {}): Promise<{ clusterId: string; controllerId: number; brokers: (BrokerInfo & { fenced: boolean })[] }> {
    const request = { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: options.includeFencedBrokers ?? false };
    const response = await this.retry(async () => (await this.cluster.anyConnection()).send(DescribeCluster, request));
    throwIfError(response.errorCode, response.errorMessage);
    return {
      clusterId: response.clusterId,
      controllerId: response.controllerId,
      brokers: response.brokers.map((b) => ({ nodeId: b.brokerId, host: b.host, port: b.port, rack: b.rack, fenced: b.isFenced })),
    };
  }

  /**
   * One broker's log directories (DescribeLogDirs for every partition, as
   * Kafka's describeLogDirs): each directory's error (KAFKA_STORAGE_ERROR
   * for one a disk error took offline) and the replicas it holds.
   */
  async describeLogDirs(brokerId: number): Promise<LogDirDescription[]> {
    const response = await this.retry(async () => (await this.cluster.connection(brokerId)).send(DescribeLogDirs, { topics: null }));
    throwIfError(response.errorCode, `DescribeLogDirs at broker ${brokerId}`);
    return response.results.map((dir) => ({
      logDir: dir.logDir,
      errorCode: dir.errorCode,
      replicas: dir.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, sizeBytes: p.partitionSize, offsetLag: p.offsetLag, isFuture: p.isFutureKey }))),
    }));
  }

  /** Moves log start offsets forward; resolves with each partition's new low watermark. */
  async deleteRecords(requests: readonly (TopicPartition & { offset: number })[], options: { timeoutMs?: number } = {}): Promise<(TopicPartition & { lowWatermark: number })[]> {
    return this.retry(async () => {
      for (const topic of new Set(requests.map((r) => r.topic))) await this.cluster.topic(topic);
      const byLeader = new Map<number, (TopicPartition & { offset: number })[]>();
      for (const request of requests) {
        const leader = this.cluster.leaderFor(request.topic, request.partition);
        if (leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${request.topic}-${request.partition}`);
        byLeader.set(leader, [...(byLeader.get(leader) ?? []), request]);
      }
      const answers = await Promise.all([...byLeader].map(async ([nodeId, list]) => {
        const connection = await this.cluster.connection(nodeId);
        const topics = [...new Set(list.map((r) => r.topic))];
        return connection.send(DeleteRecords, {
          topics: topics.map((name) => ({ name, partitions: list.filter((r) => r.topic === name).map((r) => ({ partitionIndex: r.partition, offset: r.offset })) })),
          timeoutMs: options.timeoutMs ?? 30_000,
        });
      }));
      return answers.flatMap((answer) => answer.topics.flatMap((topic) => topic.partitions.map((p) => {
        throwIfError(p.errorCode, `${topic.name}-${p.partitionIndex}`);
        return { topic: topic.name, partition: p.partitionIndex, lowWatermark: p.lowWatermark };
      })));
    });
  }

  // ---- consumer groups ----

  /** Groups the cluster's brokers coordinate, optionally only in some states or of some types. */
  listGroups(options: ListGroupsOptions = {}): Promise<GroupListing[]> {
    return listGroups(this.cluster, options);
  }

  /** Consumer groups (classic with protocol type consumer, and KIP-848 groups), as kafka-consumer-groups.sh --list shows them. */
  listConsumerGroups(options: { states?: readonly string[]; types?: readonly string[]; brokerIds?: readonly number[] } = {}): Promise<GroupListing[]> {
    return listConsumerGroups(this.cluster, options);
  }

  /** Each group described with whichever protocol it uses; a missing group is state Dead. */
  describeConsumerGroups(groupIds: readonly string[]): Promise<ConsumerGroupDescription[]> {
    return Promise.all(groupIds.map((groupId) => describeConsumerGroup(this.cluster, groupId)));
  }

  /** DescribeGroups as the classic coordinator answers it (raw member metadata and assignments). */
  describeGroups(groupIds: readonly string[]) {
    return Promise.all(groupIds.map((groupId) => describeClassicGroup(this.cluster, groupId)));
  }

  /** ConsumerGroupDescribe as the KIP-848 coordinator answers it. */
  consumerGroupDescribe(groupIds: readonly string[]) {
    return Promise.all(groupIds.map((groupId) => consumerGroupDescribe(this.cluster, groupId)));
  }

  /** The group's committed offsets: all, or for `partitions`. */
  listConsumerGroupOffsets(groupId: string, options: { partitions?: readonly TopicPartition[] } = {}): Promise<(TopicPartition & OffsetAndMetadata)[]> {
    return listConsumerGroupOffsets(this.cluster, groupId, options.partitions ?? null);
  }

  /** Sets a group's committed offsets; the coordinator refuses while the group has members. */
  alterConsumerGroupOffsets(groupId: string, offsets: readonly OffsetToCommit[]): Promise<void> {
    return alterConsumerGroupOffsets(this.cluster, groupId, offsets);
  }

  /** Deletes a group's offsets for partitions of topics it is not subscribed to (OffsetDelete). */
  deleteConsumerGroupOffsets(groupId: string, partitions: readonly TopicPartition[]): Promise<{ errorCode: number; partitions: Map<string, number> }> {
    return deleteConsumerGroupOffsets(this.cluster, groupId, partitions);
  }

  // ---- share groups (KIP-932, share-group-admin.ts) ----

  /** Share groups (ListGroups with typesFilter ["share"]), optionally only in some states. */
  listShareGroups(options: { states?: readonly string[] } = {}): Promise<GroupListing[]> {
    return listShareGroups(this.cluster, options);
  }

  /** ShareGroupDescribe for each group; a missing group rejects with GROUP_ID_NOT_FOUND. */
  describeShareGroups(groupIds: readonly string[]): Promise<ShareGroupDescription[]> {
    return Promise.all(groupIds.map((groupId) => describeShareGroup(this.cluster, groupId)));
  }

  /** A share group's start offsets (and lag): all its partitions, or `partitions`. */
  listShareGroupOffsets(groupId: string, options: { partitions?: readonly TopicPartition[] } = {}): Promise<ListedSharePartition[]> {
    return listShareGroupOffsets(this.cluster, groupId, options.partitions ?? null);
  }

  /** Sets an empty share group's start offsets; per partition (topicPartitionKey), null or its error. */
  alterShareGroupOffsets(groupId: string, offsets: readonly (TopicPartition & { startOffset: number })[]): Promise<Map<string, KafkaError | null>> {
    return alterShareGroupOffsets(this.cluster, groupId, offsets);
  }

  /** Deletes an empty share group's offsets for whole topics. */
  deleteShareGroupOffsets(groupId: string, topics: readonly string[]): Promise<DeletedShareGroupOffsets> {
    return deleteShareGroupOffsets(this.cluster, groupId, topics);
  }

  /** Deletes empty share groups (DeleteGroups); per group, null or its error. */
  deleteShareGroups(groupIds: readonly string[]): Promise<Map<string, KafkaError | null>> {
    return deleteShareGroups(this.cluster, groupIds);
  }

  /** The ACLs matching a filter (DescribeAcls). */
  async describeAcls(filter: AclBindingFilter): Promise<StandardAcl[]> {
    const response = await this.retry(async () =>
      (await this.controller()).send(DescribeAcls, {
        resourceTypeFilter: filter.resourceType,
        resourceNameFilter: filter.resourceName,
        patternTypeFilter: filter.patternType,
        principalFilter: filter.principal,
        hostFilter: filter.host,
        operation: filter.operation,
        permissionType: filter.permissionType,
      }),
    );
    throwIfError(response.errorCode, response.errorMessage ?? 'DescribeAcls');
    return response.resources.flatMap((r) => r.acls.map((a) => ({ resourceType: r.resourceType, resourceName: r.resourceName, patternType: r.patternType, ...a })));
  }

  /** Creates ACLs (CreateAcls); throws the first creation's error. */
  async createAcls(acls: readonly StandardAcl[]): Promise<void> {
    const response = await this.retry(async () =>
      (await this.controller()).send(CreateAcls, { creations: acls.map(({ patternType, ...acl }) => ({ ...acl, resourcePatternType: patternType })) }),
    );
    for (const result of response.results) throwIfError(result.errorCode, result.errorMessage ?? 'CreateAcls');
  }

  /** Deletes the ACLs matching each filter (DeleteAcls); returns those deleted. */
  async deleteAcls(filters: readonly AclBindingFilter[]): Promise<StandardAcl[]> {
    const response = await this.retry(async () =>
      (await this.controller()).send(DeleteAcls, {
        filters: filters.map((f) => ({
          resourceTypeFilter: f.resourceType,
          resourceNameFilter: f.resourceName,
          patternTypeFilter: f.patternType,
          principalFilter: f.principal,
          hostFilter: f.host,
          operation: f.operation,
          permissionType: f.permissionType,
        })),
      }),
    );
    for (const result of response.filterResults) throwIfError(result.errorCode, result.errorMessage ?? 'DeleteAcls');
    return response.filterResults.flatMap((r) => r.matchingAcls.map(({ errorCode: _e, errorMessage: _m, ...acl }) => acl));
  }

  // ---- transactions ----

  /** Each broker's transactions (ListTransactions), by broker id. */
  listTransactions(options: ListTransactionsOptions = {}): Promise<Map<number, TransactionListing[]>> {
    return listTransactions(this.cluster, options);
  }

  /** A transactional id's state at its coordinator (DescribeTransactions). */
  describeTransaction(transactionalId: string): Promise<TransactionDescription> {
    return describeTransaction(this.cluster, transactionalId);
  }

  /** A partition's active producers (DescribeProducers) at its leader or at replica `brokerId`. */
  describeProducers(topicPartition: TopicPartition, options: { brokerId?: number } = {}): Promise<ProducerState[]> {
    return describeProducers(this.cluster, topicPartition, options);
  }

  /** Aborts one producer's open transaction on one partition (WriteTxnMarkers to its leader). */
  abortTransaction(spec: AbortTransactionSpec): Promise<void> {
    return abortTransaction(this.cluster, spec);
  }

  /** Deletes empty groups; per group, null or its error (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, ...). */
  deleteConsumerGroups(groupIds: readonly string[]): Promise<Map<string, KafkaError | null>> {
    return deleteConsumerGroups(this.cluster, groupIds);
  }
}

function specTimestamp(spec: OffsetSpecName | number): number {
  if (spec === 'earliest') return OffsetSpec.earliest;
  if (spec === 'latest') return OffsetSpec.latest;
  if (spec === 'max-timestamp') return OffsetSpec.maxTimestamp;
  return spec;
}
