/**
 * LeaveGroup (key 13), versions 0-5: classic group members leave.
 *
 * v0-v2 one member id, its error is the response's error; v1 throttleTimeMs;
 * v3 a batch of members, each by member id or, for an administrative
 * removal, by group.instance.id alone (KIP-345), each with its own error;
 * v4 flexible; v5 Reason (KIP-800). A group that does not exist answers
 * every member UNKNOWN_MEMBER_ID. READ on the group is required (GROUP_AUTHORIZATION_FAILED).
 */
import { LeaveGroup } from '../../protocol/schemas/13-leave-group.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function leaveGroupHandler(broker: ApiContext) {
  return defineHandler({
    api: LeaveGroup,
    async handle(request, context) {
      // READ on the group, as Kafka's.
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
      const members = context.apiVersion >= 3 ? request.members : [{ memberId: request.memberId, groupInstanceId: null, reason: null }];
      const result = await broker.groupCoordinator.leaveGroup({ groupId: request.groupId, members });
      if (context.apiVersion >= 3) return { throttleTimeMs: 0, errorCode: result.errorCode, members: result.members };
      // Before v3 the single member's error is the response's error.
      const memberError = result.members.find((m) => m.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
      return { throttleTimeMs: 0, errorCode: result.errorCode !== ErrorCode.NONE ? result.errorCode : memberError };
    },
    errorResponse: (_request, errorCode) => ({ errorCode, members: [] }),
  });
}
