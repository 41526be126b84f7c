/**
 * SyncGroup (key 14), versions 0-5: the second half of a classic rebalance;
 * the leader sends every member's assignment, every member receives its own.
 *
 * v1 throttleTimeMs; v2 same; v3 GroupInstanceId (KIP-345); v4 flexible;
 * v5 ProtocolType and ProtocolName, required, checked against the group's
 * (INCONSISTENT_GROUP_PROTOCOL, KIP-559). The leader's assignment is stored
 * before anyone receives it. Errors: INVALID_GROUP_ID, UNKNOWN_MEMBER_ID,
 * FENCED_INSTANCE_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS. READ on the group is required (GROUP_AUTHORIZATION_FAILED).
 */
import { SyncGroup } from '../../protocol/schemas/14-sync-group.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

const EMPTY = Buffer.alloc(0);

export function syncGroupHandler(broker: ApiContext) {
  return defineHandler({
    api: SyncGroup,
    async handle(request, context) {
      // READ on the group, as Kafka's, before the protocol check.
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment: EMPTY };
      if (context.apiVersion >= 5 && (request.protocolType === null || request.protocolName === null)) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL, assignment: EMPTY };
      }
      const response = await broker.groupCoordinator.syncGroup({
        groupId: request.groupId,
        generationId: request.generationId,
        memberId: request.memberId,
        groupInstanceId: request.groupInstanceId,
        protocolType: request.protocolType,
        protocolName: request.protocolName,
        assignments: request.assignments.map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) })),
      });
      return {
        throttleTimeMs: 0,
        errorCode: response.errorCode,
        protocolType: response.protocolType,
        protocolName: response.protocolName,
        assignment: response.assignment,
      };
    },
    errorResponse: (_request, errorCode) => ({ errorCode, assignment: EMPTY }),
  });
}
