/**
 * The client's line to one group's coordinator, and the offset requests
 * every group user needs (consumer and admin alike). The same link serves
 * a transactional id's coordinator (key type 1: the producer and the
 * transactions admin).
 *
 * FindCoordinator (key type 0 or 1, batched CoordinatorKeys from v4) names the
 * broker; the client then keeps its own connection to it, whose request
 * timeout covers the longest group call (a JoinGroup waits up to the
 * rebalance timeout: Kafka's client allows rebalance timeout + 5 s). A
 * NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a broken connection forgets
 * the coordinator; the next call looks it up again.
 *
 * Offsets: OffsetCommit (up to v9: names, not topic ids; v9 carries the
 * KIP-848 member epoch), OffsetFetch (v8+ in the groups array, earlier flat;
 * up to v9) and OffsetDelete. The committed offset is the next offset to
 * read; -1 in an OffsetFetch answer means none.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { OffsetCommit } from '../protocol/schemas/08-offset-commit.js';
import { OffsetFetch } from '../protocol/schemas/09-offset-fetch.js';
import { FindCoordinator } from '../protocol/schemas/10-find-coordinator.js';
import { OffsetDelete } from '../protocol/schemas/47-offset-delete.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Cluster } from './cluster.js';
import { BrokerConnection } from './connection.js';
import { KafkaError, NetworkError, throwIfError } from './errors.js';

/** Errors that mean "this broker is not (or no longer) the coordinator": look it up again. */
const COORDINATOR_MOVED = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NETWORK_EXCEPTION, ErrorCode.REQUEST_TIMED_OUT]);

export function isCoordinatorMoved(code: number): boolean {
  return COORDINATOR_MOVED.has(code);
}

/** OffsetCommit / OffsetFetch versions that name topics (v10 switched to topic ids). */
const OFFSET_VERSION_MAX = 9;

export interface CoordinatorNode {
  nodeId: number;
  host: string;
  port: number;
}

/** FindCoordinator key types: a group, or a transactional id (the transaction coordinator). */
export const CoordinatorKeyType = { group: 0, transaction: 1 } as const;

export interface CoordinatorLinkOptions {
  /** Request timeout on the coordinator connection (JoinGroup may wait a whole rebalance). */
  requestTimeoutMs?: number;
  /** Default group; `transaction` makes `groupId` a transactional id. */
  keyType?: (typeof CoordinatorKeyType)[keyof typeof CoordinatorKeyType];
}

export class GroupCoordinator {
  private link: Promise<{ node: CoordinatorNode; connection: BrokerConnection }> | null = null;
  private closed = false;
  private readonly requestTimeoutMs: number;
  private readonly keyType: number;

  constructor(
    readonly cluster: Cluster,
    readonly groupId: string,
    options: CoordinatorLinkOptions = {},
  ) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? cluster.requestTimeoutMs;
    this.keyType = options.keyType ?? CoordinatorKeyType.group;
  }

  /** The coordinator's connection, found and opened on first use. */
  async connection(): Promise<BrokerConnection> {
    return (await this.open()).connection;
  }

  async node(): Promise<CoordinatorNode> {
    return (await this.open()).node;
  }

  private open(): Promise<{ node: CoordinatorNode; connection: BrokerConnection }> {
    if (this.closed) return Promise.reject(new NetworkError('the group coordinator link is closed'));
    if (this.link === null) {
      const opening = this.find().then(async (node) => {
        const connection = await BrokerConnection.connect({
          host: node.host,
          port: node.port,
          env: this.cluster.env,
          clientId: this.cluster.clientId,
          requestTimeoutMs: this.requestTimeoutMs,
        });
        connection.onClose(() => {
          if (this.link === opening) this.link = null;
        });
        return { node, connection };
      });
      opening.catch(() => {
        if (this.link === opening) this.link = null;
      });
      this.link = opening;
    }
    return this.link;
  }

  /** FindCoordinator for the group (or transactional id), retried while the coordinator is unavailable or loading. */
  private find(): Promise<CoordinatorNode> {
    return this.cluster.retry(async () => {
      const connection = await this.cluster.anyConnection();
      const { version, response } = await connection.sendVersioned(FindCoordinator, { key: this.groupId, keyType: this.keyType, coordinatorKeys: [this.groupId] });
      if (version >= 4) {
        const entry = response.coordinators.find((c) => c.key === this.groupId);
        if (entry === undefined) throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `FindCoordinator did not answer for ${this.groupId}`);
        throwIfError(entry.errorCode, entry.errorMessage);
        return { nodeId: entry.nodeId, host: entry.host, port: entry.port };
      }
      throwIfError(response.errorCode, response.errorMessage);
      return { nodeId: response.nodeId, host: response.host, port: response.port };
    }, { timeoutMs: this.cluster.requestTimeoutMs * 2 });
  }

  /** Forgets the coordinator (after NOT_COORDINATOR and the like); the next call finds it again. */
  markUnknown(): void {
    const link = this.link;
    this.link = null;
    void link?.then(({ connection }) => connection.destroy(), () => undefined);
  }

  /** Sends to the coordinator; a moved coordinator or broken connection forgets it and rethrows. */
  async send<A extends ApiDef>(api: A, body: Partial<RequestOf<A>>, options: { versionMax?: number } = {}): Promise<{ version: number; response: ResponseOf<A> }> {
    try {
      const connection = await this.connection();
      return await connection.sendVersioned(api, body, options);
    } catch (error) {
      if (error instanceof KafkaError && isCoordinatorMoved(error.code)) this.markUnknown();
      throw error;
    }
  }

  /** Like send(), retrying (with backoff) while the coordinator moves or loads. */
  sendWithRetry<A extends ApiDef>(api: A, body: Partial<RequestOf<A>>, check: (response: ResponseOf<A>, version: number) => void, options: { versionMax?: number; timeoutMs?: number } = {}): Promise<{ version: number; response: ResponseOf<A> }> {
    return this.cluster.retry(async () => {
      const answer = await this.send(api, body, options);
      check(answer.response, answer.version);
      return answer;
    }, { timeoutMs: options.timeoutMs ?? this.cluster.requestTimeoutMs * 2 });
  }

  /** Throws a group-level error, forgetting the coordinator first when it moved. */
  check(code: number, detail?: string | null): void {
    if (code === ErrorCode.NONE) return;
    if (isCoordinatorMoved(code)) this.markUnknown();
    throw new KafkaError(code, detail);
  }

  async close(): Promise<void> {
    this.closed = true;
    const link = this.link;
    this.link = null;
    const opened = await link?.catch(() => null);
    await opened?.connection.close();
  }
}

export interface OffsetAndMetadata {
  offset: number;
  leaderEpoch: number;
  metadata: string;
}

export interface OffsetToCommit extends TopicPartition {
  offset: number;
  leaderEpoch?: number;
  metadata?: string;
}

/** Who commits: a member (classic generation or KIP-848 member epoch) or, with generation -1 and no member id, anyone. */
export interface CommitIdentity {
  generationIdOrMemberEpoch: number;
  memberId: string;
  groupInstanceId: string | null;
}

export const SIMPLE_COMMITTER: CommitIdentity = { generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null };

function groupByTopic<T extends TopicPartition>(entries: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const entry of entries) out.set(entry.topic, [...(out.get(entry.topic) ?? []), entry]);
  return out;
}

/**
 * OffsetCommit. Resolves with each partition's error code (NONE when
 * committed); coordinator moves and loading are retried, other errors are
 * the caller's to judge.
 */
export async function commitOffsets(coordinator: GroupCoordinator, who: CommitIdentity, offsets: readonly OffsetToCommit[]): Promise<Map<string, number>> {
  const { response } = await coordinator.sendWithRetry(OffsetCommit, {
    groupId: coordinator.groupId,
    generationIdOrMemberEpoch: who.generationIdOrMemberEpoch,
    memberId: who.memberId,
    groupInstanceId: who.groupInstanceId,
    topics: [...groupByTopic(offsets)].map(([name, list]) => ({
      name,
      partitions: list.map((o) => ({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch ?? -1, committedMetadata: o.metadata ?? '' })),
    })),
  }, (answer) => {
    for (const topic of answer.topics) {
      for (const partition of topic.partitions) {
        if (isCoordinatorMoved(partition.errorCode) || partition.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) coordinator.check(partition.errorCode, `OffsetCommit for group ${coordinator.groupId}`);
      }
    }
  }, { versionMax: OFFSET_VERSION_MAX });
  const out = new Map<string, number>();
  for (const topic of response.topics) for (const partition of topic.partitions) out.set(topicPartitionKey({ topic: topic.name, partition: partition.partitionIndex }), partition.errorCode);
  return out;
}

export interface FetchOffsetsOptions {
  /** KIP-848 members name themselves (OffsetFetch v9+). */
  memberId?: string | null;
  memberEpoch?: number;
  /** KIP-447: wait out pending transactional commits (UNSTABLE_OFFSET_COMMIT is retried). */
  requireStable?: boolean;
}

/** OffsetFetch for `partitions` (null: every partition the group has offsets for). Partitions without an offset are absent. */
export async function fetchOffsets(coordinator: GroupCoordinator, partitions: readonly TopicPartition[] | null, options: FetchOffsetsOptions = {}): Promise<Map<string, TopicPartition & OffsetAndMetadata>> {
  const topics = partitions === null ? null : [...groupByTopic(partitions)].map(([name, list]) => ({ name, partitionIndexes: list.map((tp) => tp.partition) }));
  const { version, response } = await coordinator.sendWithRetry(OffsetFetch, {
    groupId: coordinator.groupId,
    topics,
    groups: [{ groupId: coordinator.groupId, memberId: options.memberId ?? null, memberEpoch: options.memberEpoch ?? -1, topics }],
    requireStable: options.requireStable ?? false,
  }, (answer, answered) => {
    const group = answered >= 8 ? answer.groups[0] : { errorCode: answer.errorCode, topics: answer.topics };
    if (group === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'OffsetFetch answered no group');
    if (group.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || group.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT || isCoordinatorMoved(group.errorCode)) {
      coordinator.check(group.errorCode, `OffsetFetch for group ${coordinator.groupId}`);
    }
    for (const topic of group.topics) {
      for (const partition of topic.partitions) {
        if (partition.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT) throw new KafkaError(partition.errorCode, `${topic.name}-${partition.partitionIndex}`);
      }
    }
  }, { versionMax: OFFSET_VERSION_MAX });
  const group = version >= 8 ? response.groups[0]! : { errorCode: response.errorCode, topics: response.topics };
  throwIfError(group.errorCode, `OffsetFetch for group ${coordinator.groupId}`);
  const out = new Map<string, TopicPartition & OffsetAndMetadata>();
  for (const topic of group.topics) {
    for (const partition of topic.partitions) {
      throwIfError(partition.errorCode, `OffsetFetch for ${topic.name}-${partition.partitionIndex}`);
      if (partition.committedOffset < 0) continue;
      out.set(topicPartitionKey({ topic: topic.name, partition: partition.partitionIndex }), {
        topic: topic.name,
        partition: partition.partitionIndex,
        offset: partition.committedOffset,
        leaderEpoch: partition.committedLeaderEpoch,
        metadata: partition.metadata ?? '',
      });
    }
  }
  return out;
}

/** OffsetDelete: the group-level error (NONE, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, ...) and each partition's error. */
export async function deleteOffsets(coordinator: GroupCoordinator, partitions: readonly TopicPartition[]): Promise<{ errorCode: number; partitions: Map<string, number> }> {
  const { response } = await coordinator.sendWithRetry(OffsetDelete, {
    groupId: coordinator.groupId,
    topics: [...groupByTopic(partitions)].map(([name, list]) => ({ name, partitions: list.map((tp) => ({ partitionIndex: tp.partition })) })),
  }, (answer) => {
    if (answer.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || isCoordinatorMoved(answer.errorCode)) coordinator.check(answer.errorCode, `OffsetDelete for group ${coordinator.groupId}`);
  });
  const out = new Map<string, number>();
  for (const topic of response.topics) for (const partition of topic.partitions) out.set(topicPartitionKey({ topic: topic.name, partition: partition.partitionIndex }), partition.errorCode);
  return { errorCode: response.errorCode, partitions: out };
}
