/**
 * ShareGroupHeartbeat (key 76), version 1 (v0 was Kafka 4.0's early access
 * and is gone): a KIP-932 share consumer's one call to join (member epoch
 * 0, subscription required), heartbeat, receive its assignment and leave
 * (-1). The `simple` assignor hands out only share partitions whose state
 * the share coordinator holds; several members may share a partition. The
 * coordinator initializes new share partitions' state after answering, so
 * a new member's first assignment may be empty (src/group/share-group-
 * protocol.ts).
 * UNSUPPORTED_VERSION while share.version < 1 is finalized. Authorization:
 * READ on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on each
 * subscribed topic (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
 */
import { ShareGroupHeartbeat } from '../../protocol/schemas/76-share-group-heartbeat.js';
import { ErrorCode } from '../../protocol/errors.js';
import { isShareGroupEnabled } from '../../metadata/features.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { groupRequestContext } from './group-request.js';

export function shareGroupHeartbeatHandler(broker: ApiContext) {
  return defineHandler({
    api: ShareGroupHeartbeat,
    async handle(request, context) {
      if (!isShareGroupEnabled(broker.metadata.image.features)) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION };
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const subscribed = request.subscribedTopicNames ?? [];
      if (authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed).size < new Set(subscribed).size) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
      }
      const response = await broker.groupCoordinator.shareGroupHeartbeat(groupRequestContext(context), {
        groupId: request.groupId,
        memberId: request.memberId,
        memberEpoch: request.memberEpoch,
        rackId: request.rackId,
        subscribedTopicNames: request.subscribedTopicNames,
      });
      return { throttleTimeMs: 0, ...response };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
