/**
 * Heartbeat (key 12), versions 0-4: a classic group member stays alive.
 *
 * v1 throttleTimeMs; v2 same; v3 GroupInstanceId (KIP-345); v4 flexible.
 * Errors: INVALID_GROUP_ID (empty id), UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
 * ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS (rejoin), NOT_COORDINATOR;
 * while the coordinator loads the heartbeat is answered NONE, as Kafka does.
 * Authorization: READ on the group (GROUP_AUTHORIZATION_FAILED), as Kafka's.
 */
import { Heartbeat } from '../../protocol/schemas/12-heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function heartbeatHandler(broker: ApiContext) {
  return defineHandler({
    api: Heartbeat,
    async handle(request, context) {
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const errorCode = await broker.groupCoordinator.heartbeat({
        groupId: request.groupId,
        memberId: request.memberId,
        groupInstanceId: request.groupInstanceId,
        generationId: request.generationId,
      });
      return { throttleTimeMs: 0, errorCode };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
