/**
 * OffsetCommit (key 8), versions 2-10 (Kafka 4 dropped v0-v1).
 *
 * v2-v4 RetentionTimeMs (-1: offsets.retention.minutes; else the offset
 * expires that long after the commit); v3 throttleTimeMs; v5 drops the
 * retention time; v6 CommittedLeaderEpoch (KIP-320); v7 GroupInstanceId
 * (KIP-345); v8 flexible; v9 KIP-848 member epochs (STALE_MEMBER_EPOCH) and
 * GROUP_ID_NOT_FOUND for a member commit to a missing group (ILLEGAL_GENERATION
 * before); v10 topics by id (unknown ids: UNKNOWN_TOPIC_ID).
 *
 * Partitions of unknown topics, or beyond a topic's partitions, get
 * UNKNOWN_TOPIC_OR_PARTITION and are not committed; the rest go to the
 * coordinator (src/group/offset-operations.ts) as one write. Generation -1
 * with no member id commits as a "simple" consumer.
 *
 * Authorization, as Kafka's: READ on the group (GROUP_AUTHORIZATION_FAILED
 * everywhere), then READ on each topic (TOPIC_AUTHORIZATION_FAILED on its
 * partitions, decided before whether it exists).
 */
import { OffsetCommit } from '../../protocol/schemas/08-offset-commit.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import type { OffsetCommitInput } from '../../group/offset-operations.js';

type RequestTopic = { name: string; topicId: string; partitions: { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; committedMetadata: string | null }[] };

export function offsetCommitHandler(broker: ApiContext) {
  return defineHandler({
    api: OffsetCommit,
    async handle(request, context) {
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return errorResponse(request, ErrorCode.GROUP_AUTHORIZATION_FAILED);
      const byId = context.apiVersion >= 10;
      const image = broker.metadata.image;
      const readable = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, request.topics.flatMap((topic) => {
        const name = byId ? image.topicsById.get(topic.topicId)?.name : topic.name;
        return name === undefined ? [] : [name];
      }));
      const errors = new Map<RequestTopic, Map<number, number>>();
      const valid: OffsetCommitInput['topics'][number][] = [];
      const validOf = new Map<RequestTopic, string>();
      for (const topic of request.topics) {
        const known = byId ? image.topicsById.get(topic.topicId) : image.topicsByName.get(topic.name);
        const partitionErrors = new Map<number, number>();
        errors.set(topic, partitionErrors);
        const name = byId ? known?.name : topic.name;
        if (name !== undefined && !readable.has(name)) {
          for (const p of topic.partitions) partitionErrors.set(p.partitionIndex, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          continue;
        }
        if (known === undefined) {
          const code = byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          for (const p of topic.partitions) partitionErrors.set(p.partitionIndex, code);
          continue;
        }
        const partitions = topic.partitions.filter((p) => {
          if (known.partitions.has(p.partitionIndex)) return true;
          partitionErrors.set(p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          return false;
        });
        if (partitions.length === 0) continue;
        valid.push({ name: known.name, partitions });
        validOf.set(topic, known.name);
      }
      if (valid.length > 0) {
        const results = await broker.groupCoordinator.commitOffsets(
          {
            groupId: request.groupId,
            generationIdOrMemberEpoch: request.generationIdOrMemberEpoch,
            memberId: request.memberId,
            groupInstanceId: request.groupInstanceId,
            retentionTimeMs: context.apiVersion <= 4 ? request.retentionTimeMs : -1,
            topics: valid,
          },
          context.apiVersion,
        );
        for (const [topic, name] of validOf) {
          const result = results.find((r) => r.name === name);
          for (const p of result?.partitions ?? []) if (!errors.get(topic)!.has(p.partitionIndex)) errors.get(topic)!.set(p.partitionIndex, p.errorCode);
        }
      }
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((topic) => ({
          name: topic.name,
          topicId: topic.topicId,
          partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors.get(topic)!.get(p.partitionIndex) ?? ErrorCode.UNKNOWN_SERVER_ERROR })),
        })),
      };
    },
    errorResponse,
  });
}

function errorResponse(request: { topics: readonly RequestTopic[] }, errorCode: number) {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({ name: topic.name, topicId: topic.topicId, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
  };
}
