/**
 * A scripted one-node "cluster" for the share-group admin and CLI tests: a
 * FakeBroker that answers ApiVersions, Metadata, FindCoordinator (itself),
 * DescribeTopicPartitions and ListOffsets from a fixed topic table, and hands
 * every share-group request (ListGroups, DeleteGroups, ShareGroupDescribe,
 * Describe/Alter/DeleteShareGroupOffsets) to the test's script. Requests
 * the script leaves unanswered are held, so a missing answer shows as a
 * timeout, not as a wrong result. scriptShareGroups() scripts all of them
 * from a table of groups, as a coordinator holding those groups would
 * answer (the CLI tests' broker).
 */
import type { ShareMemberDescription } from '../../src/client/admin.js';
import { apiByKey, versionRange } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { FakeBroker, apiVersionsBody, reply, type ReceivedRequest } from './fake-broker.js';

export const ApiKey = {
  listOffsets: 2,
  metadata: 3,
  findCoordinator: 10,
  listGroups: 16,
  apiVersions: 18,
  deleteGroups: 42,
  describeTopicPartitions: 75,
  shareGroupDescribe: 77,
  describeShareGroupOffsets: 90,
  alterShareGroupOffsets: 91,
  deleteShareGroupOffsets: 92,
} as const;

const NODE_ID = 1;

/** A topic's partitions, each with its log start and log end offsets. */
export interface FakeTopic {
  partitions: { logStartOffset: number; logEndOffset: number }[];
}

/** The body to answer with, or null to hold the request. */
export type Script = (request: ReceivedRequest) => Record<string, unknown> | null;

export class ShareGroupsFakeCluster {
  readonly broker = new FakeBroker();
  address = { host: '', port: 0 };
  /** Per API key, how the test answers; keys not here are held. */
  readonly scripts = new Map<number, Script>();
  /** Highest version advertised per key, when a test wants an older one. */
  readonly versionMax = new Map<number, number>();

  constructor(readonly topics: ReadonlyMap<string, FakeTopic> = new Map()) {}

  get bootstrapServers(): string {
    return `${this.address.host}:${this.address.port}`;
  }

  async start(): Promise<this> {
    this.broker.answer = (request) => this.answer(request);
    this.address = await this.broker.start();
    return this;
  }

  stop(): Promise<void> {
    return this.broker.stop();
  }

  /** The requests received with this API key, in order. */
  requests(apiKey: number): ReceivedRequest[] {
    return this.broker.received.filter((r) => r.header.requestApiKey === apiKey);
  }

  private answer(request: ReceivedRequest): Buffer[] | null {
    const key = request.header.requestApiKey;
    const builtIn = this.builtIn(request);
    if (builtIn !== null) return reply(request, builtIn);
    const body = this.scripts.get(key)?.(request) ?? null;
    return body === null ? null : reply(request, body);
  }

  private builtIn(request: ReceivedRequest): Record<string, unknown> | null {
    switch (request.header.requestApiKey) {
      case ApiKey.apiVersions:
        return apiVersionsBody(Object.fromEntries(Object.values(ApiKey).map((k) => {
          const { min, max } = versionRange(apiByKey(k)!);
          return [k, [min, Math.min(max, this.versionMax.get(k) ?? max)]];
        })));
      case ApiKey.metadata:
        return this.metadata(request);
      case ApiKey.findCoordinator: {
        const keys = (request.body.coordinatorKeys as string[] | undefined) ?? [];
        const coordinator = { nodeId: NODE_ID, host: this.address.host, port: this.address.port, errorCode: 0, errorMessage: null };
        return { ...coordinator, coordinators: keys.map((key) => ({ key, ...coordinator })) };
      }
      case ApiKey.describeTopicPartitions:
        return this.describeTopicPartitions(request);
      case ApiKey.listOffsets:
        return this.listOffsets(request);
      default:
        return null;
    }
  }

  private metadata(request: ReceivedRequest): Record<string, unknown> {
    const asked = request.body.topics as { name: string }[] | null;
    const names = asked === null ? [...this.topics.keys()] : asked.map((t) => t.name);
    return {
      brokers: [{ nodeId: NODE_ID, host: this.address.host, port: this.address.port, rack: null }],
      clusterId: 'share-groups-fake',
      controllerId: NODE_ID,
      topics: names.map((name) => {
        const topic = this.topics.get(name);
        return {
          errorCode: topic === undefined ? 3 : 0,
          name,
          topicId: ZERO_UUID,
          isInternal: false,
          partitions: (topic?.partitions ?? []).map((_, partitionIndex) => ({
            errorCode: 0, partitionIndex, leaderId: NODE_ID, leaderEpoch: 0, replicaNodes: [NODE_ID], isrNodes: [NODE_ID], offlineReplicas: [],
          })),
        };
      }),
    };
  }

  /** Every partition on one page (no cursor); an unknown topic is UNKNOWN_TOPIC_OR_PARTITION. Empty ELR lists, not null: Kafka's Java admin fails on a null one. */
  private describeTopicPartitions(request: ReceivedRequest): Record<string, unknown> {
    return {
      topics: (request.body.topics as { name: string }[]).map(({ name }) => {
        const topic = this.topics.get(name);
        return {
          errorCode: topic === undefined ? 3 : 0,
          name,
          topicId: ZERO_UUID,
          isInternal: false,
          partitions: (topic?.partitions ?? []).map((_, partitionIndex) => ({
            errorCode: 0, partitionIndex, leaderId: NODE_ID, leaderEpoch: 0, replicaNodes: [NODE_ID], isrNodes: [NODE_ID],
            eligibleLeaderReplicas: [], lastKnownElr: [], offlineReplicas: [],
          })),
          topicAuthorizedOperations: -2147483648,
        };
      }),
      nextCursor: null,
    };
  }

  /** Earliest (-2) is the log start, latest (-1) the log end; a timestamp t finds offset t when inside the log, else -1. */
  private listOffsets(request: ReceivedRequest): Record<string, unknown> {
    const topics = request.body.topics as { name: string; partitions: { partitionIndex: number; timestamp: bigint | number }[] }[];
    return {
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const log = this.topics.get(t.name)?.partitions[p.partitionIndex];
          if (log === undefined) return { partitionIndex: p.partitionIndex, errorCode: 3, timestamp: -1, offset: -1, leaderEpoch: -1 };
          const timestamp = Number(p.timestamp);
          const offset = timestamp === -2 ? log.logStartOffset : timestamp === -1 ? log.logEndOffset : timestamp < log.logEndOffset ? Math.max(timestamp, log.logStartOffset) : -1;
          return { partitionIndex: p.partitionIndex, errorCode: 0, timestamp: -1, offset, leaderEpoch: 0 };
        }),
      })),
    };
  }
}

/** A share group as scriptShareGroups() serves it. */
export interface ScriptedShareGroup {
  state: string;
  members: ShareMemberDescription[];
  /** topic -> start offset per partition (-1: none yet). */
  startOffsets: Record<string, number[]>;
}

/** The topics the CLI tests' broker holds. */
export const SCRIPTED_TOPICS: ReadonlyMap<string, FakeTopic> = new Map([
  ['orders', { partitions: [{ logStartOffset: 3, logEndOffset: 50 }, { logStartOffset: 0, logEndOffset: 10 }] }],
  ['payments', { partitions: [{ logStartOffset: 0, logEndOffset: 7 }] }],
]);

/** The share groups the CLI tests' broker coordinates: one Stable with two members, three Empty. */
export const SCRIPTED_SHARE_GROUPS: ReadonlyMap<string, ScriptedShareGroup> = new Map([
  ['orders-share', {
    state: 'Stable',
    startOffsets: { orders: [-1, 40] },
    members: [
      { memberId: 'consumer-b', rackId: null, clientId: 'client-2', host: '/10.0.0.2', memberEpoch: 5, subscribedTopicNames: ['orders'], assignment: [] },
      {
        memberId: 'consumer-aaaaaaaaaaaaaaaa', rackId: null, clientId: 'client-1', host: '/10.0.0.1', memberEpoch: 7, subscribedTopicNames: ['orders'],
        assignment: [{ topic: 'orders', partition: 1 }, { topic: 'payments-long-topic', partition: 0 }, { topic: 'orders', partition: 0 }],
      },
    ],
  }],
  ['sg-a', { state: 'Empty', members: [], startOffsets: { orders: [12, -1], payments: [4] } }],
  ['sg-b', { state: 'Empty', members: [], startOffsets: {} }],
  ['sg-c', { state: 'Empty', members: [], startOffsets: {} }],
]);

type Body = Record<string, unknown>;

function describedShareGroup(groups: ReadonlyMap<string, ScriptedShareGroup>, groupId: string): Body {
  const g = groups.get(groupId);
  const base = { errorCode: 0, errorMessage: null, groupId, groupState: g?.state ?? '', groupEpoch: 7, assignmentEpoch: 6, assignorName: 'simple', authorizedOperations: -2147483648 };
  if (g === undefined) return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.`, members: [] };
  return {
    ...base,
    members: g.members.map((m) => ({
      memberId: m.memberId, rackId: m.rackId, memberEpoch: m.memberEpoch, clientId: m.clientId, clientHost: m.host, subscribedTopicNames: m.subscribedTopicNames,
      assignment: {
        topicPartitions: [...new Set(m.assignment.map((tp) => tp.topic))].map((topicName) => ({
          topicId: ZERO_UUID, topicName, partitions: m.assignment.filter((tp) => tp.topic === topicName).map((tp) => tp.partition),
        })),
      },
    })),
  };
}

function shareGroupOffsets(groups: ReadonlyMap<string, ScriptedShareGroup>, groupId: string): Body {
  return {
    groupId,
    errorCode: 0,
    errorMessage: null,
    topics: Object.entries(groups.get(groupId)?.startOffsets ?? {}).map(([topicName, starts]) => ({
      topicName,
      topicId: ZERO_UUID,
      partitions: starts.map((startOffset, partitionIndex) => ({ partitionIndex, startOffset, leaderEpoch: startOffset < 0 ? -1 : 0, lag: startOffset < 0 ? -1 : 1, errorCode: 0, errorMessage: null })),
    })),
  };
}

/**
 * Scripts every share-group API from `groups`: ListGroups filters by state
 * as a broker does; a group not in the table is
 * GROUP_ID_NOT_FOUND for ShareGroupDescribe; alters and deletes succeed,
 * except DeleteShareGroupOffsets for a topic the broker does not hold
 * (UNKNOWN_TOPIC_OR_PARTITION). Nothing changes the table.
 */
export function scriptShareGroups(fake: ShareGroupsFakeCluster, groups: ReadonlyMap<string, ScriptedShareGroup>): void {
  fake.scripts.set(ApiKey.listGroups, (request) => {
    const states = ((request.body.statesFilter as string[] | undefined) ?? []).map((s) => s.toLowerCase());
    return {
      errorCode: 0,
      groups: [...groups]
        .filter(([, g]) => states.length === 0 || states.includes(g.state.toLowerCase()))
        .map(([groupId, g]) => ({ groupId, protocolType: 'share', groupState: g.state, groupType: 'share' })),
    };
  });
  fake.scripts.set(ApiKey.shareGroupDescribe, (request) => ({ groups: (request.body.groupIds as string[]).map((groupId) => describedShareGroup(groups, groupId)) }));
  fake.scripts.set(ApiKey.describeShareGroupOffsets, (request) => ({
    groups: (request.body.groups as { groupId: string }[]).map(({ groupId }) => shareGroupOffsets(groups, groupId)),
  }));
  fake.scripts.set(ApiKey.alterShareGroupOffsets, (request) => ({
    errorCode: 0,
    errorMessage: null,
    responses: (request.body.topics as { topicName: string; partitions: { partitionIndex: number }[] }[]).map((t) => ({
      topicName: t.topicName, topicId: ZERO_UUID, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0, errorMessage: null })),
    })),
  }));
  fake.scripts.set(ApiKey.deleteShareGroupOffsets, (request) => ({
    errorCode: 0,
    errorMessage: null,
    responses: (request.body.topics as { topicName: string }[]).map(({ topicName }) => ({
      topicName, topicId: ZERO_UUID, errorCode: fake.topics.has(topicName) ? 0 : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null,
    })),
  }));
  fake.scripts.set(ApiKey.deleteGroups, (request) => ({
    results: (request.body.groupsNames as string[]).map((groupId) => ({ groupId, errorCode: 0, errorMessage: null })),
  }));
}
