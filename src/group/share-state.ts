/**
 * The group coordinator's calls into the share-group state persister
 * (src/share/persister.ts), around the shard operations that record which
 * share partitions have state (Kafka's GroupCoordinatorService share parts):
 *
 * - initialization after a heartbeat: initializeState for each new share
 *   partition; all succeeded → the partitions become initialized (the next
 *   heartbeat assigns them); any failed → they stop initializing, so a later
 *   heartbeat asks again (persisterInitialize);
 * - DeleteGroups: deleteState for every partition of each empty share group
 *   before the group's tombstones are written;
 * - DescribeShareGroupOffsets: readSummary, and the lag from the partition's
 *   end offset: end - startOffset - deliveryCompleteCount (KIP-1226), -1 when
 *   any part is unknown;
 * - AlterShareGroupOffsets: initializeState with the new start offsets;
 * - DeleteShareGroupOffsets: deleteState, then the topics leave `deleting`.
 *
 * Persister errors come back as error codes (the interface never throws); a
 * persister that throws anyway is a bug in it, reported as
 * UNKNOWN_SERVER_ERROR for that partition.
 */
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import type { PersisterResult, ReadSummaryResult, SharePersister } from '../share/persister.js';
import { UNINITIALIZED_START_OFFSET } from '../share/persister.js';
import type { WriteOutcome } from '../coordinator/runtime.js';
import type { CoordinatorResult } from './operation.js';
import type { ShareStateInitialization, TopicPartitionSets } from './share-group-protocol.js';
import {
  alterShareGroupOffsets,
  completeDeleteShareGroupOffsets,
  initializedSharePartitions,
  initiateDeleteShareGroupOffsets,
  prepareShareGroupDeletion,
  type AlterShareOffsetsResponseTopic,
  type AlterShareOffsetsTopic,
  type DeleteShareOffsetsResponseTopic,
  type ShareTopicPartitions,
} from './share-offsets.js';
import type { GroupCoordinatorShard } from './shard.js';

/** The end offset of a partition (ListOffsets LATEST at its leader), for share-group lag. */
export type LatestOffsetLookup = (topic: string, partition: number) => Promise<{ errorCode: number; offset: number }>;

export interface ShareStateContext {
  persister: SharePersister;
  latestOffset: LatestOffsetLookup | null;
  image: () => MetadataImage;
  write<T>(groupId: string, operation: (shard: GroupCoordinatorShard) => CoordinatorResult<T>): Promise<WriteOutcome<T>>;
  read<T>(groupId: string, view: (shard: GroupCoordinatorShard) => T): WriteOutcome<T>;
}

/**
 * Kafka's NoOpStatePersister: every call succeeds and nothing is kept. A
 * coordinator built without a persister uses it, so share groups still get
 * assignments (a share-partition leader then starts from
 * share.auto.offset.reset each time).
 */
export const NO_OP_SHARE_PERSISTER: SharePersister = {
  initializeState: () => Promise.resolve(ok()),
  readState: () => Promise.resolve({ ...ok(), stateEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, stateBatches: [] }),
  writeState: () => Promise.resolve(ok()),
  deleteState: () => Promise.resolve(ok()),
  readSummary: () => Promise.resolve({ ...ok(), stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 }),
};

function ok(): PersisterResult {
  return { errorCode: ErrorCode.NONE, errorMessage: null };
}

async function guarded<T extends PersisterResult>(call: () => Promise<T>, failed: (result: PersisterResult) => T): Promise<T> {
  try {
    return await call();
  } catch (error) {
    return failed({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: error instanceof Error ? error.message : String(error) });
  }
}

function toSets(partitions: readonly { topicId: string; partition: number }[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const { topicId, partition } of partitions) {
    const set = out.get(topicId) ?? new Set<number>();
    set.add(partition);
    out.set(topicId, set);
  }
  return out;
}

// ---- initialization

/** Initializes the share partitions a heartbeat found new; returns the first persister error, or NONE. */
export async function initializeShareState(context: ShareStateContext, initialization: ShareStateInitialization): Promise<number> {
  const { groupId } = initialization;
  const results = await Promise.all(
    initialization.partitions.map((p) =>
      guarded(() => context.persister.initializeState({ groupId, topicId: p.topicId, partition: p.partition }, { stateEpoch: p.stateEpoch, startOffset: p.startOffset }), (r) => r),
    ),
  );
  const partitions: TopicPartitionSets = toSets(initialization.partitions);
  const failure = results.find((r) => r.errorCode !== ErrorCode.NONE);
  if (failure === undefined) {
    const outcome = await context.write(groupId, (shard) => shard.share.initializeState(groupId, partitions));
    if (outcome.ok) return ErrorCode.NONE;
  }
  // Kafka uninitializes the whole request on any failure (and when recording success failed).
  await context.write(groupId, (shard) => shard.share.uninitializeState(groupId, partitions));
  return failure?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

// ---- DeleteGroups

/**
 * The share groups among `groupIds` (one `__consumer_offsets` partition):
 * each one's error after its state was deleted (NONE: its tombstones may be
 * written). Groups of other types are not in the map.
 */
export async function deleteShareGroupsState(context: ShareStateContext, groupIds: readonly string[]): Promise<Map<string, number>> {
  const first = groupIds[0];
  if (first === undefined) return new Map();
  const outcome = await context.write(first, (shard) => prepareShareGroupDeletion(shard, groupIds));
  if (!outcome.ok) return new Map();
  const errors = new Map<string, number>();
  await Promise.all(
    [...outcome.response].map(async ([groupId, deletion]) => {
      if (deletion.errorCode !== ErrorCode.NONE) {
        errors.set(groupId, deletion.errorCode);
        return;
      }
      const results = await deleteState(context, groupId, deletion.partitions);
      errors.set(groupId, results.find((r) => r.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE);
    }),
  );
  return errors;
}

function deleteState(context: ShareStateContext, groupId: string, topics: readonly ShareTopicPartitions[]): Promise<(PersisterResult & { topicId: string })[]> {
  return Promise.all(
    topics.flatMap(({ topicId, partitions }) =>
      partitions.map(async (partition) => ({ topicId, ...(await guarded(() => context.persister.deleteState({ groupId, topicId, partition }), (r) => r)) })),
    ),
  );
}

// ---- DescribeShareGroupOffsets (90)

export interface DescribedSharePartition {
  partitionIndex: number;
  startOffset: number;
  leaderEpoch: number;
  lag: number;
  errorCode: number;
  errorMessage: string | null;
}

export interface DescribedShareOffsetsTopic {
  topicName: string;
  topicId: string;
  partitions: DescribedSharePartition[];
}

/** The named topics' partitions, or (topics null) every initialized partition of the group. */
export async function describeShareGroupOffsets(
  context: ShareStateContext,
  groupId: string,
  topics: readonly { topicName: string; partitions: readonly number[] }[] | null,
): Promise<{ errorCode: number; errorMessage: string | null; topics: DescribedShareOffsetsTopic[] }> {
  const image = context.image();
  const wanted: { topicName: string; topicId: string; partitions: readonly number[] }[] = [];
  const unknown: DescribedShareOffsetsTopic[] = [];
  if (topics === null) {
    const outcome = context.read(groupId, (shard) => initializedSharePartitions(shard, groupId));
    if (!outcome.ok) return { errorCode: outcome.errorCode, errorMessage: outcome.message, topics: [] };
    for (const { topicId, partitions } of outcome.response) {
      const topic = image.topicsById.get(topicId);
      if (topic !== undefined) wanted.push({ topicName: topic.name, topicId, partitions });
    }
  } else {
    for (const t of topics) {
      const topic = image.topicsByName.get(t.topicName);
      if (topic !== undefined) wanted.push({ topicName: t.topicName, topicId: topic.id, partitions: t.partitions });
      // Kafka answers an unknown topic with start offset -1 and no error.
      else unknown.push({ topicName: t.topicName, topicId: ZERO_UUID, partitions: t.partitions.map((p) => ({ partitionIndex: p, startOffset: -1, leaderEpoch: 0, lag: -1, errorCode: ErrorCode.NONE, errorMessage: null })) });
    }
  }
  const described = await Promise.all(
    wanted.map(async (t) => ({ topicName: t.topicName, topicId: t.topicId, partitions: await Promise.all(t.partitions.map((p) => describePartition(context, { groupId, topicName: t.topicName, topicId: t.topicId, partition: p }))) })),
  );
  return { errorCode: ErrorCode.NONE, errorMessage: null, topics: [...described, ...unknown] };
}

async function describePartition(context: ShareStateContext, p: { groupId: string; topicName: string; topicId: string; partition: number }): Promise<DescribedSharePartition> {
  const summary: ReadSummaryResult = await guarded(
    () => context.persister.readSummary({ groupId: p.groupId, topicId: p.topicId, partition: p.partition }, { leaderEpoch: 0 }),
    (r) => ({ ...r, stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 }),
  );
  const base = { partitionIndex: p.partition, errorCode: ErrorCode.NONE, errorMessage: null };
  const failed = summary.errorCode !== ErrorCode.NONE;
  const lagKnown = !failed && summary.startOffset !== UNINITIALIZED_START_OFFSET && summary.deliveryCompleteCount !== -1 && context.latestOffset !== null;
  if (!lagKnown) return { ...base, startOffset: failed ? -1 : summary.startOffset, leaderEpoch: failed ? 0 : summary.leaderEpoch, lag: -1 };
  const end = await context.latestOffset!(p.topicName, p.partition);
  if (end.errorCode !== ErrorCode.NONE) return { ...base, startOffset: 0, leaderEpoch: 0, lag: -1, errorCode: end.errorCode, errorMessage: errorInfo(end.errorCode).message };
  return { ...base, startOffset: summary.startOffset, leaderEpoch: summary.leaderEpoch, lag: end.offset - summary.startOffset - summary.deliveryCompleteCount };
}

// ---- AlterShareGroupOffsets (91)

export async function alterShareOffsets(
  context: ShareStateContext,
  groupId: string,
  topics: readonly AlterShareOffsetsTopic[],
): Promise<{ errorCode: number; errorMessage: string | null; responses: AlterShareOffsetsResponseTopic[] }> {
  const outcome = await context.write(groupId, (shard) => alterShareGroupOffsets(shard, groupId, topics));
  if (!outcome.ok) return { errorCode: outcome.errorCode, errorMessage: outcome.message, responses: [] };
  const plan = outcome.response;
  if (plan.partitions.length === 0) return { errorCode: ErrorCode.NONE, errorMessage: null, responses: plan.responses };
  const results = await Promise.all(
    plan.partitions.map(async (p) => ({
      ...p,
      ...(await guarded(() => context.persister.initializeState({ groupId, topicId: p.topicId, partition: p.partition }, { stateEpoch: plan.stateEpoch, startOffset: p.startOffset }), (r) => r)),
    })),
  );
  const failed = results.filter((r) => r.errorCode !== ErrorCode.NONE);
  if (failed.length === 0) await context.write(groupId, (shard) => shard.share.initializeState(groupId, toSets(results)));
  else await context.write(groupId, (shard) => shard.share.uninitializeState(groupId, toSets(results)));
  const errorOf = (topicId: string, partition: number) => failed.find((r) => r.topicId === topicId && r.partition === partition);
  const responses = plan.responses.map((topic) => ({
    ...topic,
    partitions: topic.partitions.map((p) => {
      const error = p.errorCode === ErrorCode.NONE ? errorOf(topic.topicId, p.partitionIndex) : undefined;
      return error === undefined ? p : { partitionIndex: p.partitionIndex, errorCode: error.errorCode, errorMessage: error.errorMessage };
    }),
  }));
  return { errorCode: ErrorCode.NONE, errorMessage: null, responses };
}

// ---- DeleteShareGroupOffsets (92)

export async function deleteShareOffsets(
  context: ShareStateContext,
  groupId: string,
  topicNames: readonly string[],
): Promise<{ errorCode: number; errorMessage: string | null; responses: DeleteShareOffsetsResponseTopic[] }> {
  const outcome = await context.write(groupId, (shard) => initiateDeleteShareGroupOffsets(shard, groupId, topicNames));
  if (!outcome.ok) return { errorCode: outcome.errorCode, errorMessage: outcome.message, responses: [] };
  const { errorTopics, partitions } = outcome.response;
  if (partitions.length === 0) return { errorCode: ErrorCode.NONE, errorMessage: null, responses: errorTopics };
  const results = await deleteState(context, groupId, partitions);
  const image = context.image();
  const responses = [...errorTopics];
  const deleted: string[] = [];
  for (const { topicId } of partitions) {
    const failure = results.find((r) => r.topicId === topicId && r.errorCode !== ErrorCode.NONE);
    const topicName = image.topicsById.get(topicId)?.name ?? '';
    if (failure !== undefined) responses.push({ topicName, topicId, errorCode: failure.errorCode, errorMessage: errorInfo(failure.errorCode).message });
    else deleted.push(topicId);
  }
  if (deleted.length > 0) {
    const completed = await context.write(groupId, (shard) => completeDeleteShareGroupOffsets(shard, groupId, deleted));
    if (!completed.ok) return { errorCode: completed.errorCode, errorMessage: completed.message, responses: [] };
    for (const topicId of deleted) responses.push({ topicName: image.topicsById.get(topicId)?.name ?? '', topicId, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  return { errorCode: ErrorCode.NONE, errorMessage: null, responses };
}
