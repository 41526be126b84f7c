/**
 * ShareAcknowledge (key 79), versions 1-2 (KIP-932): a share-group member
 * acknowledges delivered records without fetching more.
 *
 * v1 is Kafka 4.1's baseline; v2 renew acknowledgements (KIP-1222: type 4
 * RENEW restarts the acquisition lock, allowed only with isRenewAck) and the
 * acquisition lock timeout in the response.
 *
 * Checked first, answered top-level as Kafka: share.version below 1 is
 * UNSUPPORTED_VERSION; a null group id INVALID_REQUEST; READ on the group
 * (GROUP_AUTHORIZATION_FAILED); an empty member id INVALID_REQUEST; the share
 * session: epoch 0 INVALID_SHARE_SESSION_EPOCH (acknowledging needs a
 * session), no session SHARE_SESSION_NOT_FOUND, another epoch
 * INVALID_SHARE_SESSION_EPOCH. Per partition as src/server/apis/
 * share-acknowledgements.ts says; a partition led elsewhere answers
 * NOT_LEADER_OR_FOLLOWER with the current leader (KIP-951). Epoch -1 closes
 * the session after the acknowledgements: the member's other acquired
 * records are released.
 */
import { ShareAcknowledge } from '../../protocol/schemas/79-share-acknowledge.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { currentLeaderOf } from './00-produce.js';
import { FINAL_SHARE_SESSION_EPOCH } from '../../share/share-session.js';
import { acknowledgementsByPartition, shareRequestPrecheck, type RequestTopic } from './share-acknowledgements.js';

export function shareAcknowledgeHandler(broker: ApiContext) {
  return defineHandler({
    api: ShareAcknowledge,
    async handle(request, context) {
      const manager = broker.sharePartitionManager;
      const lockTimeoutMs = request.groupId === null ? 0 : manager.groupConfig(request.groupId).recordLockDurationMs;
      const refuse = (errorCode: number, errorMessage: string | null = null) => ({ throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs: lockTimeoutMs, responses: [], nodeEndpoints: [] });
      const image = broker.metadata.image;
      const checked = shareRequestPrecheck(broker, context, request);
      if (!checked.ok) return refuse(checked.errorCode, checked.errorMessage);
      const { groupId, memberId } = checked;
      const sessionError = manager.sessions.acknowledgeSessionUpdate(groupId, memberId, request.shareSessionEpoch);
      if (sessionError !== ErrorCode.NONE) return refuse(sessionError);
      const topicName = (topicId: string) => image.topicsById.get(topicId)?.name ?? null;
      const acknowledged = await acknowledgementsByPartition(broker, context, {
        groupId,
        memberId,
        topics: request.topics as readonly RequestTopic[],
        renewOnly: context.apiVersion >= 2 && request.isRenewAck,
        renewAllowed: context.apiVersion >= 2,
        topicName,
      });
      if (request.shareSessionEpoch === FINAL_SHARE_SESSION_EPOCH) void manager.releaseSessionAndForget(groupId, memberId);
      const nodeEndpoints = new Map<number, { nodeId: number; host: string; port: number; rack: string | null }>();
      const byTopic = new Map<string, { partitionIndex: number; errorCode: number; errorMessage: string | null; currentLeader: { leaderId: number; leaderEpoch: number } }[]>();
      for (const result of acknowledged.values()) {
        const topic = topicName(result.topicId);
        const leaderMoved = result.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || result.errorCode === ErrorCode.FENCED_LEADER_EPOCH;
        const currentLeader = leaderMoved && topic !== null ? currentLeaderOf(image, { topic, partition: result.partition }, context.listenerName, nodeEndpoints) : { leaderId: -1, leaderEpoch: -1 };
        let partitions = byTopic.get(result.topicId);
        if (partitions === undefined) byTopic.set(result.topicId, (partitions = []));
        partitions.push({ partitionIndex: result.partition, errorCode: result.errorCode, errorMessage: result.errorMessage, currentLeader });
      }
      const responses = [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions }));
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, acquisitionLockTimeoutMs: lockTimeoutMs, responses, nodeEndpoints: [...nodeEndpoints.values()] };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, responses: [], nodeEndpoints: [] }),
  });
}
