/**
 * ConsumerGroupDescribe (key 69), versions 0-1: KIP-848 consumer groups,
 * their epochs, assignor, and each member's subscription, current and
 * target assignment (topic ids with names).
 *
 * v1 each member's type (KIP-1099: 1 consumer, 0 classic). A classic group
 * or a missing one is GROUP_ID_NOT_FOUND, an empty id INVALID_GROUP_ID.
 * Authorized operations when asked (those the client has on the group).
 * DESCRIBE on each group is required
 * (GROUP_AUTHORIZATION_FAILED).
 */
import { ConsumerGroupDescribe } from '../../protocol/schemas/69-consumer-group-describe.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames, authorizedOperations } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './group-request.js';

export function consumerGroupDescribeHandler(broker: ApiContext) {
  return defineHandler({
    api: ConsumerGroupDescribe,
    handle(request, context) {
      // DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED, listed first), as Kafka's.
      const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, request.groupIds);
      const denied = request.groupIds.filter((groupId) => !described.has(groupId)).map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }));
      const groups = broker.groupCoordinator.consumerGroupDescribe(request.groupIds.filter((groupId) => described.has(groupId))).map((group) => ({
        ...group,
        authorizedOperations:
          request.includeAuthorizedOperations && group.errorCode === ErrorCode.NONE ? authorizedOperations(broker, context, ResourceType.GROUP, group.groupId) : AUTHORIZED_OPERATIONS_OMITTED,
      }));
      return { throttleTimeMs: 0, groups: [...denied, ...groups] };
    },
    errorResponse: (request, errorCode) => ({ groups: request.groupIds.map((groupId) => ({ groupId, errorCode })) }),
  });
}
