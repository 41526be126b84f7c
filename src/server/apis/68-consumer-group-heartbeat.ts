/**
 * ConsumerGroupHeartbeat (key 68), versions 0-1: the KIP-848 consumer
 * protocol's one call to join, heartbeat, receive assignments and leave.
 *
 * v1 adds SubscribedTopicRegex and requires a client-generated member id
 * (KIP-1082); v0 lets the coordinator pick it on the first heartbeat.
 * Member epoch 0 joins, -1 leaves, -2 leaves temporarily (static members).
 * Assignments are computed by the server-side assignor
 * (group.consumer.assignors: uniform, range) and handed out through
 * incremental reconciliation (src/group/consumer-group-protocol.ts).
 * UNSUPPORTED_VERSION when group.coordinator.rebalance.protocols leaves out
 * "consumer". Not done: ACLs; classic members in consumer groups.
 */
import { ConsumerGroupHeartbeat } from '../../protocol/schemas/68-consumer-group-heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { groupRequestContext } from './group-request.js';

export function consumerGroupHeartbeatHandler(broker: ApiContext) {
  return defineHandler({
    api: ConsumerGroupHeartbeat,
    async handle(request, context) {
      if (!broker.groupCoordinator.consumerProtocolEnabled) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION };
      const response = await broker.groupCoordinator.consumerGroupHeartbeat(groupRequestContext(context), {
        groupId: request.groupId,
        memberId: request.memberId,
        memberEpoch: request.memberEpoch,
        instanceId: request.instanceId,
        rackId: request.rackId,
        rebalanceTimeoutMs: request.rebalanceTimeoutMs,
        subscribedTopicNames: request.subscribedTopicNames,
        subscribedTopicRegex: context.apiVersion >= 1 ? request.subscribedTopicRegex : null,
        serverAssignor: request.serverAssignor,
        topicPartitions: request.topicPartitions,
      });
      return { throttleTimeMs: 0, ...response };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
