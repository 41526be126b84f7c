/**
 * ShareGroupDescribe (key 77), version 1 (v0 was Kafka 4.0's early access):
 * KIP-932 share groups, their epochs, assignor (`simple`) and each member's
 * subscription and current assignment (topic ids with names).
 *
 * A missing group, or one of another type, is GROUP_ID_NOT_FOUND; an empty
 * id INVALID_GROUP_ID. UNSUPPORTED_VERSION while share.version < 1.
 * DESCRIBE on each group is required (GROUP_AUTHORIZATION_FAILED, listed
 * first); authorized operations when asked.
 */
import { ShareGroupDescribe } from '../../protocol/schemas/77-share-group-describe.js';
import { ErrorCode } from '../../protocol/errors.js';
import { isShareGroupEnabled } from '../../metadata/features.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames, authorizedOperations } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './group-request.js';

export function shareGroupDescribeHandler(broker: ApiContext) {
  return defineHandler({
    api: ShareGroupDescribe,
    handle(request, context) {
      if (!isShareGroupEnabled(broker.metadata.image.features)) {
        return { throttleTimeMs: 0, groups: request.groupIds.map((groupId) => ({ groupId, errorCode: ErrorCode.UNSUPPORTED_VERSION })) };
      }
      const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, request.groupIds);
      const denied = request.groupIds.filter((groupId) => !described.has(groupId)).map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }));
      const groups = broker.groupCoordinator.shareGroupDescribe(request.groupIds.filter((groupId) => described.has(groupId))).map((group) => ({
        ...group,
        authorizedOperations:
          request.includeAuthorizedOperations && group.errorCode === ErrorCode.NONE ? authorizedOperations(broker, context, ResourceType.GROUP, group.groupId) : AUTHORIZED_OPERATIONS_OMITTED,
      }));
      return { throttleTimeMs: 0, groups: [...denied, ...groups] };
    },
    errorResponse: (request, errorCode) => ({ groups: request.groupIds.map((groupId) => ({ groupId, errorCode })) }),
  });
}
