/**
 * DeleteShareGroupOffsets (key 92), version 0: forgets an empty share
 * group's state for whole topics (KIP-932; the share coordinator's
 * DeleteShareGroupState), so the next member starts them from
 * share.auto.offset.reset. GROUP_ID_NOT_FOUND for a missing or non-share
 * group, NON_EMPTY_GROUP while it has members, UNKNOWN_TOPIC_OR_PARTITION
 * for a topic without state.
 * UNSUPPORTED_VERSION while share.version < 1. Authorization: DELETE on the
 * group (GROUP_AUTHORIZATION_FAILED), READ on each topic
 * (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
 */
import { DeleteShareGroupOffsets } from '../../protocol/schemas/92-delete-share-group-offsets.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { isShareGroupEnabled } from '../../metadata/features.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function deleteShareGroupOffsetsHandler(broker: ApiContext) {
  return defineHandler({
    api: DeleteShareGroupOffsets,
    async handle(request, context) {
      if (!isShareGroupEnabled(broker.metadata.image.features)) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION };
      if (!authorize(broker, context, AclOperation.DELETE, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const names = request.topics.map((t) => t.topicName);
      const allowed = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, names);
      const denied = names
        .filter((name) => !allowed.has(name))
        .map((topicName) => ({ topicName, topicId: ZERO_UUID, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorInfo(ErrorCode.TOPIC_AUTHORIZATION_FAILED).message }));
      const result = await broker.groupCoordinator.deleteShareGroupOffsets(request.groupId, names.filter((name) => allowed.has(name)));
      if (result.errorCode !== ErrorCode.NONE) return { throttleTimeMs: 0, errorCode: result.errorCode, errorMessage: result.errorMessage ?? errorInfo(result.errorCode).message };
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: [...result.responses, ...denied] };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
