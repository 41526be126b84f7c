/**
 * AlterShareGroupOffsets (key 91), version 0: sets the start offsets of an
 * empty share group's partitions (KIP-932; NON_EMPTY_GROUP while it has
 * members, the group created when missing). The share coordinator's state
 * is re-initialized at the group epoch (InitializeShareGroupState), so
 * earlier in-flight state is dropped.
 * UNSUPPORTED_VERSION while share.version < 1. Authorization: READ on the
 * group (GROUP_AUTHORIZATION_FAILED), READ on each topic (its partitions
 * TOPIC_AUTHORIZATION_FAILED); an unknown topic's partitions are
 * UNKNOWN_TOPIC_OR_PARTITION, as Kafka's.
 */
import { AlterShareGroupOffsets } from '../../protocol/schemas/91-alter-share-group-offsets.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { isShareGroupEnabled } from '../../metadata/features.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function alterShareGroupOffsetsHandler(broker: ApiContext) {
  return defineHandler({
    api: AlterShareGroupOffsets,
    async handle(request, context) {
      if (!isShareGroupEnabled(broker.metadata.image.features)) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION };
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const image = broker.metadata.image;
      const allowed = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, request.topics.map((t) => t.topicName));
      const refused = (topic: (typeof request.topics)[number], errorCode: number) => ({
        topicName: topic.topicName,
        topicId: image.topicsByName.get(topic.topicName)?.id ?? ZERO_UUID,
        partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage: errorInfo(errorCode).message })),
      });
      const errors = request.topics.flatMap((t) => {
        if (!allowed.has(t.topicName)) return [refused(t, ErrorCode.TOPIC_AUTHORIZATION_FAILED)];
        return image.topicsByName.has(t.topicName) ? [] : [refused(t, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)];
      });
      const accepted = request.topics.filter((t) => allowed.has(t.topicName) && image.topicsByName.has(t.topicName));
      const result = await broker.groupCoordinator.alterShareGroupOffsets(request.groupId, accepted);
      if (result.errorCode !== ErrorCode.NONE) return { throttleTimeMs: 0, errorCode: result.errorCode, errorMessage: result.errorMessage ?? errorInfo(result.errorCode).message };
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: [...result.responses, ...errors] };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
