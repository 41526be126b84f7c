/**
 * ConsumerGroupDescribe (key 69), versions 0-1: KIP-848 consumer groups,
 * their epochs, assignor, and each member's subscription, current and
 * target assignment (topic ids with names).
 *
 * v1 each member's type (KIP-1099: 1 consumer, 0 classic). A classic group
 * or a missing one is GROUP_ID_NOT_FOUND, an empty id INVALID_GROUP_ID.
 * Authorized operations when asked (every group operation: there is no
 * authorizer). Not done: ACLs.
 */
import { ConsumerGroupDescribe } from '../../protocol/schemas/69-consumer-group-describe.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_AUTHORIZED_OPERATIONS } from './group-request.js';

export function consumerGroupDescribeHandler(broker: ApiContext) {
  return defineHandler({
    api: ConsumerGroupDescribe,
    handle(request) {
      const groups = broker.groupCoordinator.consumerGroupDescribe(request.groupIds).map((group) => ({
        ...group,
        authorizedOperations: request.includeAuthorizedOperations && group.errorCode === ErrorCode.NONE ? GROUP_AUTHORIZED_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
      }));
      return { throttleTimeMs: 0, groups };
    },
    errorResponse: (request, errorCode) => ({ groups: request.groupIds.map((groupId) => ({ groupId, errorCode })) }),
  });
}
