/**
 * JoinGroup (key 11), versions 0-9: a classic group member joins or rejoins.
 *
 * v1 RebalanceTimeoutMs (KIP-62; v0 uses the session timeout for both);
 * v2 throttleTimeMs; v3 same; v4 a new dynamic member first gets its member
 * id with MEMBER_ID_REQUIRED (KIP-394); v5 GroupInstanceId (static
 * membership, KIP-345); v6 flexible; v7 ProtocolType in the response
 * (KIP-559; protocolName becomes nullable, older versions get ""); v8 Reason
 * (KIP-800); v9 SkipAssignment for a replaced static leader (KIP-814).
 *
 * Empty group id: INVALID_GROUP_ID; session timeout outside
 * group.min/max.session.timeout.ms: INVALID_SESSION_TIMEOUT. The response
 * waits for the rebalance (src/group/classic-protocol.ts).
 * Authorization: READ on the group (GROUP_AUTHORIZATION_FAILED), as Kafka's.
 * Not done: classic members joining a KIP-848 consumer group (online
 * migration) get INCONSISTENT_GROUP_PROTOCOL.
 */
import { JoinGroup } from '../../protocol/schemas/11-join-group.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import type { JoinGroupResponseData } from '../../group/classic-group.js';
import { groupRequestContext } from './group-request.js';

export function joinGroupHandler(broker: ApiContext) {
  return defineHandler({
    api: JoinGroup,
    async handle(request, context) {
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return errorResponse(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, context);
      const response = await broker.groupCoordinator.joinGroup(groupRequestContext(context), {
        groupId: request.groupId,
        sessionTimeoutMs: request.sessionTimeoutMs,
        rebalanceTimeoutMs: request.rebalanceTimeoutMs,
        memberId: request.memberId,
        groupInstanceId: request.groupInstanceId,
        protocolType: request.protocolType,
        protocols: request.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
        reason: request.reason,
      });
      return toWire(response, context.apiVersion);
    },
    errorResponse,
  });
}

function errorResponse(request: { memberId: string }, errorCode: number, context: { apiVersion: number }) {
  return toWire({ errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId: request.memberId, members: [] }, context.apiVersion);
}

function toWire(response: JoinGroupResponseData, version: number) {
  return {
    throttleTimeMs: 0,
    errorCode: response.errorCode,
    generationId: response.generationId,
    protocolType: response.protocolType,
    // protocolName is nullable from v7 only.
    protocolName: version >= 7 ? response.protocolName : (response.protocolName ?? ''),
    leader: response.leader,
    skipAssignment: response.skipAssignment,
    memberId: response.memberId,
    members: response.members,
  };
}
