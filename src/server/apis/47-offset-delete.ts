/**
 * OffsetDelete (key 47), version 0 (KIP-496): deletes a group's committed
 * offsets for some partitions.
 *
 * Partitions of topics the group still consumes are refused with
 * GROUP_SUBSCRIBED_TO_TOPIC; a classic group with members that does not
 * use the consumer protocol is NON_EMPTY_GROUP; a missing group
 * GROUP_ID_NOT_FOUND; unknown topics or partitions
 * UNKNOWN_TOPIC_OR_PARTITION. Authorization: DELETE on the group, READ on each topic.
 */
import { OffsetDelete } from '../../protocol/schemas/47-offset-delete.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function offsetDeleteHandler(broker: ApiContext) {
  return defineHandler({
    api: OffsetDelete,
    async handle(request, context) {
      // DELETE on the group (GROUP_AUTHORIZATION_FAILED), then READ on each topic (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
      if (!authorize(broker, context, AclOperation.DELETE, ResourceType.GROUP, request.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
      const readable = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, request.topics.map((topic) => topic.name));
      const image = broker.metadata.image;
      const unknown = new Map<string, Set<number>>();
      const valid = request.topics.flatMap((topic) => {
        if (!readable.has(topic.name)) return [];
        const known = image.topicsByName.get(topic.name);
        const partitions = topic.partitions.filter((p) => known?.partitions.has(p.partitionIndex) === true);
        const missing = topic.partitions.filter((p) => !partitions.includes(p)).map((p) => p.partitionIndex);
        if (missing.length > 0) unknown.set(topic.name, new Set(missing));
        return partitions.length === 0 ? [] : [{ name: topic.name, partitions }];
      });
      const result = await broker.groupCoordinator.deleteOffsets({ groupId: request.groupId, topics: valid });
      if (result.errorCode !== ErrorCode.NONE) return { errorCode: result.errorCode, throttleTimeMs: 0, topics: [] };
      return {
        errorCode: ErrorCode.NONE,
        throttleTimeMs: 0,
        topics: request.topics.map((topic) => ({
          name: topic.name,
          partitions: topic.partitions.map((p) => {
            if (!readable.has(topic.name)) return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
            if (unknown.get(topic.name)?.has(p.partitionIndex) === true) return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
            const found = result.topics.find((t) => t.name === topic.name)?.partitions.find((x) => x.partitionIndex === p.partitionIndex);
            return { partitionIndex: p.partitionIndex, errorCode: found?.errorCode ?? ErrorCode.NONE };
          }),
        })),
      };
    },
    errorResponse: (_request, errorCode) => ({ errorCode, topics: [] }),
  });
}
