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
 * "consumer". Authorization: READ on the group, DESCRIBE on each
 * subscribed topic name. Not done: classic members in consumer groups.
 */
import { ConsumerGroupHeartbeat } from '../../protocol/schemas/68-consumer-group-heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { groupRequestContext } from './group-request.js';

export function consumerGroupHeartbeatHandler(broker: ApiContext) {
  return defineHandler({
    api: ConsumerGroupHeartbeat,
    async handle(request, context) {
      if (!broker.groupCoordinator.consumerProtocolEnabled) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION };
      // READ on the group; DESCRIBE on every subscribed topic named (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const subscribed = request.subscribedTopicNames ?? [];
      if (authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed).size < new Set(subscribed).size) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
      }
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
