/**
 * DescribeGroups (key 15), versions 0-6: classic groups with their members.
 *
 * v1 throttleTimeMs; v2 same; v3 authorized operations when asked
 * (KIP-430: the operations the client has on the group); v4
 * GroupInstanceId (KIP-345); v5 flexible; v6 a missing group is
 * GROUP_ID_NOT_FOUND with a message (KIP-1043) where older versions answer
 * state Dead. Members carry their metadata only while the group is Stable.
 * A KIP-848 consumer group is described by ConsumerGroupDescribe (key 69).
 * DESCRIBE on each group is required (GROUP_AUTHORIZATION_FAILED).
 */
import { DescribeGroups } from '../../protocol/schemas/15-describe-groups.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames, authorizedOperations } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './group-request.js';

export function describeGroupsHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeGroups,
    handle(request, context) {
      const withOperations = context.apiVersion >= 3 && request.includeAuthorizedOperations;
      // DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED, listed first), as Kafka's.
      const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, request.groups);
      const denied = request.groups.filter((groupId) => !described.has(groupId)).map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }));
      const allowed = request.groups.filter((groupId) => described.has(groupId));
      const groups = broker.groupCoordinator.describeGroups(allowed, context.apiVersion).map((group) => ({
        ...group,
        authorizedOperations: withOperations && group.errorCode === ErrorCode.NONE ? authorizedOperations(broker, context, ResourceType.GROUP, group.groupId) : AUTHORIZED_OPERATIONS_OMITTED,
      }));
      return { throttleTimeMs: 0, groups: [...denied, ...groups] };
    },
    errorResponse: (request, errorCode) => ({ groups: request.groups.map((groupId) => ({ groupId, errorCode })) }),
  });
}
