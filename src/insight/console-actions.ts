/**
 * The console's two actions, allowed only with console.actions.enable=true
 * (the API answers 403 otherwise) and confirmed by the page before it posts:
 *
 * - reset offsets of a group, as `kafka-consumer-groups --reset-offsets
 *   --execute` does: only while the group is inactive (Empty, or unknown to
 *   the coordinator: Kafka's tool refuses a group with members), to the
 *   earliest offset (log start), the latest (high watermark, what a
 *   read_uncommitted ListOffsets LATEST answers) or a given offset clamped
 *   into [log start, high watermark] as the tool clamps it; for one topic or
 *   every topic the group has offsets for. The offsets are committed as an
 *   admin client commits them (generation -1, no member).
 * - delete records before an offset on a partition this node leads
 *   (DeleteRecords: the log start offset moves up; Kafka's errors).
 *
 * Offsets are read from this node's replicas, so a reset covers partitions
 * this node leads; any other partition is answered NOT_LEADER_OR_FOLLOWER.
 */
import { ErrorCode, errorName } from '../protocol/errors.js';
import { consoleFailure, hostedPartition, isFailure, registrationOf, type ConsoleFailure } from './snapshot.js';
import type { ConsoleSources } from './sources.js';

/** OffsetCommit version whose rules a console reset follows (v9 would refuse a group the coordinator does not know). */
const OFFSET_COMMIT_VERSION = 8;

export interface ResetOffsetsRequest {
  to: 'earliest' | 'latest' | 'offset';
  /** For `to: 'offset'`. */
  offset?: number;
  /** One topic; every topic with a committed offset when absent. */
  topic?: string;
}

export function parseResetOffsetsRequest(body: unknown): ResetOffsetsRequest | ConsoleFailure {
  if (typeof body !== 'object' || body === null) return badRequest('expected a JSON object {to, offset?, topic?}');
  const { to, offset, topic } = body as Record<string, unknown>;
  if (to !== 'earliest' && to !== 'latest' && to !== 'offset') return badRequest('"to" must be earliest, latest or offset');
  if (to === 'offset' && !(typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0)) return badRequest('"offset" must be a non-negative integer');
  if (topic !== undefined && typeof topic !== 'string') return badRequest('"topic" must be a string');
  return { to, ...(to === 'offset' ? { offset: offset as number } : {}), ...(topic === undefined ? {} : { topic }) };
}

function badRequest(message: string): ConsoleFailure {
  return consoleFailure(400, 'INVALID_REQUEST', message);
}

export async function resetGroupOffsets(sources: ConsoleSources, groupId: string, request: ResetOffsetsRequest) {
  const coordinator = sources.broker?.groupCoordinator;
  if (coordinator === undefined) return consoleFailure(404, 'NOT_COORDINATOR', `node ${sources.nodeId} has no group coordinator`);
  const listed = coordinator.listGroups([], []);
  if (listed.errorCode !== ErrorCode.NONE) return consoleFailure(503, errorName(listed.errorCode), 'the group coordinator cannot list its groups');
  const group = listed.groups.find((g) => g.groupId === groupId);
  if (group !== undefined && group.groupState !== 'Empty') {
    return consoleFailure(409, 'NON_EMPTY_GROUP', `Assignments can only be reset if the group '${groupId}' is inactive, but the current state is ${group.groupState}.`);
  }
  const targets = resetTargets(sources, groupId, request);
  if (isFailure(targets)) return targets;
  const results = targets.map((target) => ({ ...target, ...resetOffsetFor(sources, target, request) }));
  const committable = results.filter((r) => r.error === null);
  const byTopic = new Map<string, { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; committedMetadata: string | null }[]>();
  for (const r of committable) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), { partitionIndex: r.partition, committedOffset: r.offset!, committedLeaderEpoch: -1, committedMetadata: '' }]);
  const committed = byTopic.size === 0 ? [] : await coordinator.commitOffsets(
    { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) },
    OFFSET_COMMIT_VERSION,
  );
  const commitErrors = new Map<string, number>();
  for (const t of committed) for (const p of t.partitions) commitErrors.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode);
  return {
    groupId,
    partitions: results.map((r) => {
      const code = commitErrors.get(`${r.topic}\u0000${r.partition}`) ?? ErrorCode.NONE;
      return { topic: r.topic, partition: r.partition, offset: r.offset, error: r.error ?? (code === ErrorCode.NONE ? null : errorName(code)) };
    }),
  };
}

/** The partitions to reset: the topic's (all of them), or every partition the group has an offset for. */
function resetTargets(sources: ConsoleSources, groupId: string, request: ResetOffsetsRequest): { topic: string; partition: number }[] | ConsoleFailure {
  if (request.topic !== undefined) {
    const found = sources.metadata.image.topicsByName.get(request.topic);
    if (found === undefined) return consoleFailure(404, 'UNKNOWN_TOPIC_OR_PARTITION', `unknown topic ${request.topic}`);
    return [...found.partitions.keys()].sort((a, b) => a - b).map((partition) => ({ topic: found.name, partition }));
  }
  const fetched = sources.broker!.groupCoordinator.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null, requireStable: false });
  const targets = fetched.topics.flatMap((t) => t.partitions.filter((p) => p.committedOffset >= 0).map((p) => ({ topic: t.name, partition: p.partitionIndex })));
  if (targets.length === 0) return badRequest(`group ${groupId} has no committed offsets: name a topic`);
  return targets;
}

function resetOffsetFor(sources: ConsoleSources, target: { topic: string; partition: number }, request: ResetOffsetsRequest): { offset: number | null; error: string | null } {
  const partition = hostedPartition(sources, target.topic, target.partition);
  if (partition === null || !partition.isLeader) return { offset: null, error: 'NOT_LEADER_OR_FOLLOWER' };
  const earliest = partition.logStartOffset;
  const latest = partition.highWatermark;
  if (request.to === 'earliest') return { offset: earliest, error: null };
  if (request.to === 'latest') return { offset: latest, error: null };
  return { offset: Math.min(Math.max(request.offset!, earliest), latest), error: null };
}

export async function deleteRecordsBefore(sources: ConsoleSources, topicName: string, partitionIndex: number, before: number) {
  const registration = registrationOf(sources, topicName, partitionIndex);
  if (isFailure(registration)) return registration;
  const replicaManager = sources.broker?.replicaManager;
  if (replicaManager === undefined) return consoleFailure(404, 'NOT_LEADER_OR_FOLLOWER', `node ${sources.nodeId} has no replicas`);
  const result = await replicaManager.deleteRecords({ topic: topicName, partition: partitionIndex }, before);
  if (result.errorCode !== ErrorCode.NONE) return consoleFailure(result.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE ? 416 : 409, errorName(result.errorCode), `delete records before ${before} on ${topicName}-${partitionIndex} failed`);
  return { topic: topicName, partition: partitionIndex, lowWatermark: result.lowWatermark };
}
