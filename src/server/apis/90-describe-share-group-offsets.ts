/**
 * DescribeShareGroupOffsets (key 90), versions 0-1: each share partition's
 * start offset (SPSO) and the leader epoch of its last writer, read from the
 * share coordinator (ReadShareGroupStateSummary); topics null asks for every
 * partition the group has state for.
 *
 * v1 adds lag (KIP-1226): end offset - start offset - records already
 * acknowledged or archived above it, -1 when unknown. An unknown topic
 * answers start offset -1 without an error, as Kafka's.
 * UNSUPPORTED_VERSION (per group) while share.version < 1. Authorization:
 * DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on each
 * topic (its partitions TOPIC_AUTHORIZATION_FAILED; with topics null the
 * unauthorized topics are left out).
 */
import { DescribeShareGroupOffsets } from '../../protocol/schemas/90-describe-share-group-offsets.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { isShareGroupEnabled } from '../../metadata/features.js';
import { defineHandler, type RequestContext } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

type RequestGroup = { groupId: string; topics: { topicName: string; partitions: number[] }[] | null };

/** Kafka's answer for a topic the client may not DESCRIBE: every partition refused. */
function deniedTopic(topic: { topicName: string; partitions: number[] }) {
  return {
    topicName: topic.topicName,
    topicId: ZERO_UUID,
    partitions: topic.partitions.map((partitionIndex) => ({
      partitionIndex,
      startOffset: -1,
      leaderEpoch: 0,
      lag: -1,
      errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
      errorMessage: errorInfo(ErrorCode.TOPIC_AUTHORIZATION_FAILED).message,
    })),
  };
}

export function describeShareGroupOffsetsHandler(broker: ApiContext) {
  const describeGroup = async (group: RequestGroup, context: RequestContext) => {
    const failed = (errorCode: number) => ({ groupId: group.groupId, topics: [], errorCode, errorMessage: null });
    if (!isShareGroupEnabled(broker.metadata.image.features)) return failed(ErrorCode.UNSUPPORTED_VERSION);
    if (!authorize(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, group.groupId)) return failed(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    if (group.topics !== null && group.topics.length === 0) return failed(ErrorCode.NONE);
    const describable = (names: Iterable<string>) => authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, names);
    const allowed = group.topics === null ? null : describable(group.topics.map((t) => t.topicName));
    const asked = group.topics === null ? null : group.topics.filter((t) => allowed!.has(t.topicName));
    const result = await broker.groupCoordinator.describeShareGroupOffsets(group.groupId, asked);
    if (result.errorCode !== ErrorCode.NONE) return { groupId: group.groupId, topics: [], errorCode: result.errorCode, errorMessage: result.errorMessage };
    if (group.topics === null) {
      // Every partition with state: the topics the client may not DESCRIBE are left out.
      const visible = describable(result.topics.map((t) => t.topicName));
      return { groupId: group.groupId, topics: result.topics.filter((t) => visible.has(t.topicName)), errorCode: ErrorCode.NONE, errorMessage: null };
    }
    const denied = group.topics.filter((t) => !allowed!.has(t.topicName)).map(deniedTopic);
    return { groupId: group.groupId, topics: [...result.topics, ...denied], errorCode: ErrorCode.NONE, errorMessage: null };
  };
  return defineHandler({
    api: DescribeShareGroupOffsets,
    async handle(request, context) {
      const groups = await Promise.all(request.groups.map((group) => describeGroup(group, context)));
      return { throttleTimeMs: 0, groups };
    },
    errorResponse: (request, errorCode) => ({ groups: request.groups.map((g) => ({ groupId: g.groupId, errorCode })) }),
  });
}
