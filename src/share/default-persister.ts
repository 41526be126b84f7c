/**
 * The SharePersister a broker's share-partition leaders and group
 * coordinator use (Kafka 4.4's DefaultStatePersister and
 * PersisterStateManager): each call finds the `__share_group_state`
 * partition of its share partition and the broker that leads it, then
 * calls this node's share coordinator directly when that is this node, or
 * sends the request (InitializeShareGroupState 83, ReadShareGroupState 84,
 * WriteShareGroupState 85, DeleteShareGroupState 86,
 * ReadShareGroupStateSummary 87) to that broker on the inter-broker
 * listener.
 *
 * The coordinator is found in this node's metadata image, not by a
 * FindCoordinator round trip as Kafka's persister does: the image is what a
 * FindCoordinator answer would be computed from. The state topic is
 * created on first use, as FindCoordinator creates it (a share-partition
 * leader may read before any client looked a share coordinator up).
 *
 * NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and COORDINATOR_NOT_AVAILABLE
 * (also: no leader yet, the broker unreachable) are retried, at most
 * PERSISTER_ATTEMPTS_MAX attempts, with Kafka's exponential backoff
 * (REQUEST_BACKOFF_MS doubling up to REQUEST_BACKOFF_MAX_MS, 20% jitter)
 * on the env's timers; the last error is then the answer. Every other error
 * is answered at once.
 */
import type { Env } from '../io/env.js';
import type { MetadataImage } from '../metadata/image.js';
import { errorInfo, ErrorCode } from '../protocol/errors.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { InitializeShareGroupState } from '../protocol/schemas/83-initialize-share-group-state.js';
import { ReadShareGroupState } from '../protocol/schemas/84-read-share-group-state.js';
import { WriteShareGroupState } from '../protocol/schemas/85-write-share-group-state.js';
import { DeleteShareGroupState } from '../protocol/schemas/86-delete-share-group-state.js';
import { ReadShareGroupStateSummary } from '../protocol/schemas/87-read-share-group-state-summary.js';
import {
  UNINITIALIZED_START_OFFSET,
  type PersisterResult,
  type ReadStateResult,
  type ReadSummaryResult,
  type SharePartitionKey,
  type SharePersister,
  type WriteStateInput,
} from './persister.js';
import { SHARE_GROUP_STATE_TOPIC, type ShareCoordinator } from './coordinator/coordinator.js';

/** Kafka's PersisterStateManager.REQUEST_BACKOFF_MS: the first retry's wait. */
export const REQUEST_BACKOFF_MS = 1000;
/** Kafka's PersisterStateManager.REQUEST_BACKOFF_MAX_MS. */
export const REQUEST_BACKOFF_MAX_MS = 30_000;
/** Kafka's MAX_FIND_COORD_ATTEMPTS: attempts of one call before its last error is the answer. */
export const PERSISTER_ATTEMPTS_MAX = 5;
const BACKOFF_JITTER = 0.2;

const RETRIABLE = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

/** Requests to other brokers (an InterBrokerChannel). */
export interface PersisterChannel {
  send<A extends ApiDef>(brokerId: number, api: A, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>>;
}

export interface DefaultSharePersisterOptions {
  nodeId: number;
  env: Env;
  image: () => MetadataImage;
  coordinator: ShareCoordinator;
  channel: PersisterChannel;
  /** Creates `__share_group_state` through the controller; resolves with whether it now exists. */
  createStateTopic: () => Promise<boolean>;
  /** Overrides of Kafka's backoff, for tests. */
  backoffMs?: number;
  backoffMaxMs?: number;
}

type Call<T extends PersisterResult> = { local: (coordinator: ShareCoordinator) => Promise<T>; remote: (brokerId: number) => Promise<T>; failed: (errorCode: number, errorMessage: string | null) => T };

export class DefaultSharePersister implements SharePersister {
  constructor(private readonly options: DefaultSharePersisterOptions) {}

  initializeState(key: SharePartitionKey, input: { stateEpoch: number; startOffset: number }): Promise<PersisterResult> {
    return this.route(key, {
      local: (coordinator) => coordinator.initializeState(key, input),
      remote: async (brokerId) => {
        const response = await this.options.channel.send(brokerId, InitializeShareGroupState, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, stateEpoch: input.stateEpoch, startOffset: input.startOffset }] }],
        });
        return resultOf(response.results[0]?.partitions[0]);
      },
      failed: resultFailed,
    });
  }

  readState(key: SharePartitionKey, input: { leaderEpoch: number }): Promise<ReadStateResult> {
    const failed = (errorCode: number, errorMessage: string | null): ReadStateResult => ({ errorCode, errorMessage, stateEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, stateBatches: [] });
    return this.route(key, {
      local: (coordinator) => coordinator.readState(key, input),
      remote: async (brokerId) => {
        const response = await this.options.channel.send(brokerId, ReadShareGroupState, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, leaderEpoch: input.leaderEpoch }] }],
        });
        const partition = response.results[0]?.partitions[0];
        if (partition === undefined) return failed(ErrorCode.UNKNOWN_SERVER_ERROR, 'the share coordinator answered no partition');
        if (partition.errorCode !== ErrorCode.NONE) return failed(partition.errorCode, partition.errorMessage);
        return { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: partition.stateEpoch, startOffset: partition.startOffset, stateBatches: partition.stateBatches };
      },
      failed,
    });
  }

  writeState(key: SharePartitionKey, input: WriteStateInput): Promise<PersisterResult> {
    return this.route(key, {
      local: (coordinator) => coordinator.writeState(key, input),
      remote: async (brokerId) => {
        const response = await this.options.channel.send(brokerId, WriteShareGroupState, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, ...input }] }],
        });
        return resultOf(response.results[0]?.partitions[0]);
      },
      failed: resultFailed,
    });
  }

  deleteState(key: SharePartitionKey): Promise<PersisterResult> {
    return this.route(key, {
      local: (coordinator) => coordinator.deleteState(key),
      remote: async (brokerId) => {
        const response = await this.options.channel.send(brokerId, DeleteShareGroupState, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition }] }],
        });
        return resultOf(response.results[0]?.partitions[0]);
      },
      failed: resultFailed,
    });
  }

  readSummary(key: SharePartitionKey, input: { leaderEpoch: number }): Promise<ReadSummaryResult> {
    const failed = (errorCode: number, errorMessage: string | null): ReadSummaryResult => ({ errorCode, errorMessage, stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 });
    return this.route(key, {
      local: (coordinator) => coordinator.readSummary(key, input),
      remote: async (brokerId) => {
        const response = await this.options.channel.send(brokerId, ReadShareGroupStateSummary, {
          groupId: key.groupId,
          topics: [{ topicId: key.topicId, partitions: [{ partition: key.partition, leaderEpoch: input.leaderEpoch }] }],
        });
        const partition = response.results[0]?.partitions[0];
        if (partition === undefined) return failed(ErrorCode.UNKNOWN_SERVER_ERROR, 'the share coordinator answered no partition');
        if (partition.errorCode !== ErrorCode.NONE) return failed(partition.errorCode, partition.errorMessage);
        const { stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount } = partition;
        return { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount };
      },
      failed,
    });
  }

  /** One call, retried on the coordinator errors with backoff. */
  private async route<T extends PersisterResult>(key: SharePartitionKey, call: Call<T>): Promise<T> {
    let result: T = call.failed(ErrorCode.COORDINATOR_NOT_AVAILABLE, null);
    for (let attempt = 1; attempt <= PERSISTER_ATTEMPTS_MAX; attempt++) {
      result = await this.attempt(key, call);
      if (!RETRIABLE.has(result.errorCode) || attempt === PERSISTER_ATTEMPTS_MAX) break;
      await this.backOff(attempt);
    }
    return result;
  }

  private async attempt<T extends PersisterResult>(key: SharePartitionKey, call: Call<T>): Promise<T> {
    const leader = await this.coordinatorOf(key);
    if (leader < 0) return call.failed(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'Share coordinator is not available.');
    if (leader === this.options.nodeId) return call.local(this.options.coordinator);
    try {
      return await call.remote(leader);
    } catch (error) {
      return call.failed(ErrorCode.COORDINATOR_NOT_AVAILABLE, `the share coordinator on broker ${leader} is unreachable: ${(error as Error).message}`);
    }
  }

  /** The broker leading the share partition's state partition, -1 when there is none (yet). */
  private async coordinatorOf(key: SharePartitionKey): Promise<number> {
    if (!this.options.image().topicsByName.has(SHARE_GROUP_STATE_TOPIC)) {
      const created = await this.options.createStateTopic().catch(() => false);
      if (!created) return -1;
    }
    const topic = this.options.image().topicsByName.get(SHARE_GROUP_STATE_TOPIC);
    return topic?.partitions.get(this.options.coordinator.partitionFor(key))?.leader ?? -1;
  }

  private backOff(attempt: number): Promise<void> {
    const base = Math.min((this.options.backoffMs ?? REQUEST_BACKOFF_MS) * 2 ** (attempt - 1), this.options.backoffMaxMs ?? REQUEST_BACKOFF_MAX_MS);
    const jitter = 1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * this.options.env.random.nextFloat();
    return new Promise((resolve) => this.options.env.timers.schedule(Math.round(base * jitter), resolve));
  }
}

function resultFailed(errorCode: number, errorMessage: string | null): PersisterResult {
  return { errorCode, errorMessage };
}

function resultOf(partition: { errorCode: number; errorMessage: string | null } | undefined): PersisterResult {
  if (partition === undefined) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: 'the share coordinator answered no partition' };
  return { errorCode: partition.errorCode, errorMessage: partition.errorCode === ErrorCode.NONE ? null : (partition.errorMessage ?? errorInfo(partition.errorCode).message) };
}
