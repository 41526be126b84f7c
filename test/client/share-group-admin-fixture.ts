/**
 * A scripted one-node "cluster" for the share-group admin and CLI tests: a
 * FakeBroker that answers ApiVersions, Metadata, FindCoordinator (itself),
 * DescribeTopicPartitions and ListOffsets from a fixed topic table, and hands
 * every share-group request (ListGroups, DeleteGroups, ShareGroupDescribe,
 * Describe/Alter/DeleteShareGroupOffsets) to the test's script. Requests
 * the script leaves unanswered are held, so a missing answer shows as a
 * timeout, not as a wrong result.
 */
import { apiByKey, versionRange } from '../../src/protocol/apis.js';
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
        return { topics: [], nextCursor: null };
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
