/**
 * The share coordinator as the broker sees it (Kafka 4.4's
 * ShareCoordinatorService): routes each share partition's request to the
 * shard of its `__share_group_state` partition (whose leader is the share
 * partition's coordinator), through the same coordinator runtime the group
 * and transaction coordinators use.
 *
 * A share partition (group, topic id, partition) lives in partition
 * abs(javaHashCode("group:topicId:partition")) % share.coordinator.state.
 * topic.num.partitions, Kafka's placement (SharePartitionKey.
 * asCoordinatorKey, the topic id in its base64url text form).
 *
 * Every operation, reads included, runs through the shard's write queue as
 * Kafka's does, so a read sees every write acknowledged before it and a read
 * at a new leader epoch is recorded before it answers. Errors come back in
 * the results (the SharePersister's contract): the shard's validation
 * errors with Kafka's messages; NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
 * and COORDINATOR_NOT_AVAILABLE (the write did not reach
 * share.coordinator.write.timeout.ms's min.insync.replicas) from the runtime.
 *
 * When topics are deleted, every loaded shard writes tombstones for their
 * share partitions (Kafka's maybeCleanupShareState).
 */
import type { Env } from '../../io/env.js';
import type { MetadataDelta, MetadataImage, MetadataPublisher } from '../../metadata/image.js';
import { CoordinatorRuntime, type CoordinatorLog, type RuntimeLogger, type WriteOutcome } from '../../coordinator/runtime.js';
import { errorInfo, ErrorCode } from '../../protocol/errors.js';
import { SHARE_GROUP_STATE_TOPIC_NAME } from '../../controller/topic-names.js';
import { partitionFor } from '../../group/placement.js';
import {
  shareCoordinatorKey,
  UNINITIALIZED_START_OFFSET,
  type PersisterResult,
  type ReadStateResult,
  type ReadSummaryResult,
  type SharePartitionKey,
  type SharePersister,
  type WriteStateInput,
} from '../persister.js';
import type { ShareCoordinatorConfig } from './config.js';
import { SHARE_RECORD_CODEC, type ShareCoordinatorRecord } from './records.js';
import { ShareCoordinatorShard } from './shard.js';

export const SHARE_GROUP_STATE_TOPIC = SHARE_GROUP_STATE_TOPIC_NAME;

export interface ShareCoordinatorOptions {
  nodeId: number;
  config: ShareCoordinatorConfig;
  env: Env;
  log: CoordinatorLog;
  logger: RuntimeLogger;
  image: () => MetadataImage;
}

/** The share coordinator of the `__share_group_state` partitions this node leads; it answers the persister's calls for them. */
export class ShareCoordinator implements MetadataPublisher, SharePersister {
  readonly name = 'ShareCoordinator';
  readonly runtime: CoordinatorRuntime<ShareCoordinatorShard, ShareCoordinatorRecord>;

  constructor(private readonly options: ShareCoordinatorOptions) {
    const { config } = options;
    this.runtime = new CoordinatorRuntime({
      env: options.env,
      log: options.log,
      logger: options.logger,
      topic: SHARE_GROUP_STATE_TOPIC,
      name: 'share coordinator',
      codec: SHARE_RECORD_CODEC,
      writeTimeoutMs: config.writeTimeoutMs,
      periodic: [{ intervalMs: config.coldPartitionSnapshotIntervalMs, operation: (shard) => shard.snapshotColdPartitions() }],
      newShard: () =>
        new ShareCoordinatorShard({
          clock: options.env.clock,
          image: options.image,
          snapshotUpdateRecordsPerSnapshot: config.snapshotUpdateRecordsPerSnapshot,
          coldPartitionSnapshotIntervalMs: config.coldPartitionSnapshotIntervalMs,
        }),
    });
  }

  get config(): ShareCoordinatorConfig {
    return this.options.config;
  }

  /** The `__share_group_state` partition that holds the share partition's state. */
  partitionFor(key: SharePartitionKey): number {
    return partitionFor(shareCoordinatorKey(key), this.options.config.stateTopicPartitions);
  }

  /** Whether this node coordinates the share partition (its state partition is loaded or loading here). */
  coordinates(key: SharePartitionKey): boolean {
    const status = this.runtime.status(this.partitionFor(key));
    return status === 'active' || status === 'loading';
  }

  async shutdown(): Promise<void> {
    await this.runtime.shutdown();
  }

  onMetadataUpdate(delta: MetadataDelta, _image: MetadataImage): void {
    this.runtime.followLeadership(delta, this.options.nodeId);
    const deleted = new Set(delta.deletedTopics.filter((topic) => topic.name !== SHARE_GROUP_STATE_TOPIC).map((topic) => topic.id));
    if (deleted.size === 0) return;
    for (const partition of this.runtime.activePartitions()) void this.runtime.write(partition, (shard) => shard.deleteTopics(deleted));
  }

  // ---- the operations, one share partition at a time

  async initializeState(key: SharePartitionKey, input: { stateEpoch: number; startOffset: number }): Promise<PersisterResult> {
    const outcome = await this.runtime.write(this.partitionFor(key), (shard) => shard.initializeState(key, input));
    return outcome.ok ? ok() : failed(outcome, 'initialize share group state');
  }

  async readState(key: SharePartitionKey, input: { leaderEpoch: number }): Promise<ReadStateResult> {
    const outcome = await this.runtime.write(this.partitionFor(key), (shard) => shard.readState(key, input.leaderEpoch));
    if (outcome.ok) return { ...ok(), ...outcome.response };
    return { ...failed(outcome, 'read share group state'), stateEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, stateBatches: [] };
  }

  async writeState(key: SharePartitionKey, input: WriteStateInput): Promise<PersisterResult> {
    const outcome = await this.runtime.write(this.partitionFor(key), (shard) => shard.writeState(key, input));
    return outcome.ok ? ok() : failed(outcome, 'write share group state');
  }

  async deleteState(key: SharePartitionKey): Promise<PersisterResult> {
    const outcome = await this.runtime.write(this.partitionFor(key), (shard) => shard.deleteState(key));
    return outcome.ok ? ok() : failed(outcome, 'delete share group state');
  }

  async readSummary(key: SharePartitionKey, _input: { leaderEpoch: number }): Promise<ReadSummaryResult> {
    const outcome = await this.runtime.write(this.partitionFor(key), (shard) => ({ records: [], response: shard.readSummary(key), replayRecords: true }));
    if (outcome.ok) return { ...ok(), ...outcome.response };
    return { ...failed(outcome, 'read share group state summary'), stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 };
  }
}

function ok(): PersisterResult {
  return { errorCode: ErrorCode.NONE, errorMessage: null };
}

/** The shard's own message where it gave one; otherwise Kafka's "Unable to <operation>: <error>". */
function failed(outcome: Extract<WriteOutcome<unknown>, { ok: false }>, operation: string): PersisterResult {
  return { errorCode: outcome.errorCode, errorMessage: outcome.message ?? `Unable to ${operation}: ${errorInfo(outcome.errorCode).message}` };
}

/** A FindCoordinator key type 2 that Kafka's SharePartitionKey.getInstance would refuse (INVALID_REQUEST). */
export class InvalidShareCoordinatorKeyError extends Error {
  override readonly name = 'InvalidShareCoordinatorKeyError';
}

const TOPIC_ID_TEXT = /^[A-Za-z0-9_-]{22}(==)?$/;
const INT32_TEXT = /^[+-]?\d+$/;

/**
 * Parses `groupId:topicId:partition` as Kafka's SharePartitionKey.getInstance
 * does: the last two parts are the topic id (base64url of 16 bytes) and the
 * partition (a Java int), everything before them the group id (which may
 * hold ':'), trailing empty parts dropped as Java's String.split drops them.
 */
export function parseShareCoordinatorKey(text: string): SharePartitionKey {
  if (text === '') throw new InvalidShareCoordinatorKeyError('Share partition key cannot be empty');
  const tokens = text.split(':');
  while (tokens.length > 0 && tokens[tokens.length - 1] === '') tokens.pop();
  if (tokens.length < 3) throw new InvalidShareCoordinatorKeyError(`Invalid key format: expected - groupId:topicId:partition, found - ${text}`);
  const partitionText = tokens[tokens.length - 1]!;
  const topicId = tokens[tokens.length - 2]!;
  const groupId = tokens.slice(0, -2).join(':');
  if (groupId.trim() === '') throw new InvalidShareCoordinatorKeyError('GroupId must not be empty');
  if (!TOPIC_ID_TEXT.test(topicId)) throw new InvalidShareCoordinatorKeyError(`Invalid topic ID: ${topicId}`);
  const partition = Number(partitionText);
  if (!INT32_TEXT.test(partitionText) || partition < -2147483648 || partition > 2147483647) throw new InvalidShareCoordinatorKeyError(`Invalid partition: ${partitionText}`);
  return { groupId, topicId: topicId.slice(0, 22), partition };
}
