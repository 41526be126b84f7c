/**
 * DescribeGroups (key 15), versions 0-6: classic groups with their members.
 *
 * v1 throttleTimeMs; v2 same; v3 authorized operations when asked
 * (KIP-430: every group operation, there is no authorizer); v4
 * GroupInstanceId (KIP-345); v5 flexible; v6 a missing group is
 * GROUP_ID_NOT_FOUND with a message (KIP-1043) where older versions answer
 * state Dead. Members carry their metadata only while the group is Stable.
 * A KIP-848 consumer group is described by ConsumerGroupDescribe (key 69).
 * Not done: ACLs.
 */
import { DescribeGroups } from '../../protocol/schemas/15-describe-groups.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_AUTHORIZED_OPERATIONS } from './group-request.js';

export function describeGroupsHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeGroups,
    handle(request, context) {
      const withOperations = context.apiVersion >= 3 && request.includeAuthorizedOperations;
      const groups = broker.groupCoordinator.describeGroups(request.groups, context.apiVersion).map((group) => ({
        ...group,
        authorizedOperations: withOperations && group.errorCode === ErrorCode.NONE ? GROUP_AUTHORIZED_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
      }));
      return { throttleTimeMs: 0, groups };
    },
    errorResponse: (request, errorCode) => ({ groups: request.groups.map((groupId) => ({ groupId, errorCode })) }),
  });
}
