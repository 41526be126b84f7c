/**
 * OffsetFetch (key 9), versions 1-10 (Kafka 4 dropped v0).
 *
 * v1 partitions of one group; v2 a null topic list means every partition
 * with an offset, and a top-level error (before v2 a group error is put on
 * each partition); v3 throttleTimeMs; v4 same; v5 CommittedLeaderEpoch
 * (KIP-320); v6 flexible; v7 RequireStable (KIP-447: UNSTABLE_OFFSET_COMMIT
 * for partitions with pending transactional offsets); v8 many groups per
 * request (KIP-709); v9 MemberId / MemberEpoch checked for KIP-848 groups;
 * v10 topics by id (unknown ids: UNKNOWN_TOPIC_ID per partition).
 *
 * A partition without a committed offset answers -1 and metadata "". A group
 * that does not exist answers like one without offsets. Authorization as Kafka's (fetchGroup).
 */
import { OffsetFetch } from '../../protocol/schemas/09-offset-fetch.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { defineHandler, type RequestContext } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import type { MetadataImage } from '../../metadata/image.js';
import type { OffsetFetchResult } from '../../group/offset-operations.js';

interface GroupRequest {
  groupId: string;
  memberId: string | null;
  memberEpoch: number;
  topics: { name: string; topicId: string; partitionIndexes: number[] }[] | null;
}

interface GroupResponse {
  groupId: string;
  errorCode: number;
  topics: { name: string; topicId: string; partitions: OffsetFetchResult['topics'][number]['partitions'] }[];
}

export function offsetFetchHandler(broker: ApiContext) {
  return defineHandler({
    api: OffsetFetch,
    handle(request, context) {
      const version = context.apiVersion;
      const groups: GroupRequest[] =
        version >= 8
          ? request.groups.map((g) => ({ groupId: g.groupId, memberId: g.memberId, memberEpoch: g.memberEpoch, topics: g.topics }))
          : [{ groupId: request.groupId, memberId: null, memberEpoch: -1, topics: request.topics === null ? null : request.topics.map((t) => ({ ...t, topicId: ZERO_UUID })) }];
      const results = groups.map((group) => fetchGroup(broker, context, group, { requireStable: request.requireStable, byId: version >= 10 }));
      if (version >= 8) return { throttleTimeMs: 0, groups: results };
      const [only] = results;
      if (version < 2 && only!.errorCode !== ErrorCode.NONE) {
        // Before v2 there is no top-level error: it goes on every requested partition.
        const failed = (request.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => noOffset(p, only!.errorCode)) }));
        return { throttleTimeMs: 0, topics: failed };
      }
      return { throttleTimeMs: 0, errorCode: only!.errorCode, topics: only!.topics.map((t) => ({ name: t.name, partitions: t.partitions })) };
    },
    errorResponse: (request, errorCode, context) => {
      if (context.apiVersion >= 8) return { groups: request.groups.map((g) => ({ groupId: g.groupId, errorCode, topics: [] })) };
      const topics = (request.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => noOffset(p, errorCode)) }));
      return { errorCode, topics: context.apiVersion < 2 ? topics : [] };
    },
  });
}

/**
 * One group's offsets. As Kafka's: DESCRIBE on the group
 * (GROUP_AUTHORIZATION_FAILED); topics asked for without DESCRIBE get
 * TOPIC_AUTHORIZATION_FAILED on their partitions; when all are asked for,
 * topics without DESCRIBE are left out.
 */
function fetchGroup(broker: ApiContext, context: RequestContext, group: GroupRequest, options: { requireStable: boolean; byId: boolean }): GroupResponse {
  const { requireStable, byId } = options;
  if (!authorize(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, group.groupId)) return { groupId: group.groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
  const image = broker.metadata.image;
  const denied: GroupResponse['topics'] = [];
  const unknownIds: { topicId: string; partitionIndexes: number[] }[] = [];
  let topics: { name: string; partitionIndexes: number[] }[] | null = null;
  if (group.topics !== null) {
    topics = [];
    for (const t of group.topics) {
      if (!byId) {
        topics.push({ name: t.name, partitionIndexes: t.partitionIndexes });
        continue;
      }
      const known = image.topicsById.get(t.topicId);
      if (known === undefined) unknownIds.push({ topicId: t.topicId, partitionIndexes: t.partitionIndexes });
      else topics.push({ name: known.name, partitionIndexes: t.partitionIndexes });
    }
    const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, topics.map((t) => t.name));
    for (const t of topics.filter((t) => !described.has(t.name))) {
      denied.push({ name: t.name, topicId: byId ? (topicIdOf(image, t.name) ?? ZERO_UUID) : ZERO_UUID, partitions: t.partitionIndexes.map((p) => noOffset(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED)) });
    }
    topics = topics.filter((t) => described.has(t.name));
  }
  const result = broker.groupCoordinator.fetchOffsets({ groupId: group.groupId, memberId: group.memberId, memberEpoch: group.memberEpoch, topics, requireStable });
  if (result.errorCode !== ErrorCode.NONE) return { groupId: group.groupId, errorCode: result.errorCode, topics: [] };
  const out: GroupResponse['topics'] = [];
  for (const topic of result.topics) {
    if (group.topics === null && !authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) continue;
    const topicId = byId ? topicIdOf(image, topic.name) : ZERO_UUID;
    // A topic deleted since its offsets were committed has no id to answer with in v10.
    if (byId && topicId === null) continue;
    out.push({ name: topic.name, topicId: topicId ?? ZERO_UUID, partitions: topic.partitions });
  }
  out.push(...denied);
  for (const unknown of unknownIds) {
    out.push({
      name: '',
      topicId: unknown.topicId,
      partitions: unknown.partitionIndexes.map((p) => noOffset(p, ErrorCode.UNKNOWN_TOPIC_ID)),
    });
  }
  return { groupId: group.groupId, errorCode: ErrorCode.NONE, topics: out };
}

function topicIdOf(image: MetadataImage, name: string): string | null {
  return image.topicsByName.get(name)?.id ?? null;
}

function noOffset(partitionIndex: number, errorCode: number) {
  return { partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode };
}
