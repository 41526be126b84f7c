/**
 * DeleteTopics (key 20), versions 1-6 (Kafka 4 dropped v0).
 *
 * v1 throttleTimeMs; v2-v3 same; v4 flexible; v5 errorMessage and
 * THROTTLING_QUOTA_EXCEEDED (KIP-599: a topic's partitions count against
 * controller_mutation_rate, src/server/controller-mutation-quota.ts; from v5
 * a topic finding the quota exceeded is refused, before it is deleted and
 * the request only throttled); v6 topics by name or by id (KIP-516).
 *
 * Each topic becomes a RemoveTopicRecord; the answer comes once those are
 * committed and published (the replica manager has dropped the logs).
 * Unknown names are UNKNOWN_TOPIC_OR_PARTITION, unknown ids
 * UNKNOWN_TOPIC_ID; delete.topic.enable=false gives TOPIC_DELETION_DISABLED;
 * a name and an id together, or neither, or a duplicate, INVALID_REQUEST.
 * timeoutMs is not used.
 *
 * Authorization, as Kafka's: DELETE on each topic (TOPIC_AUTHORIZATION_FAILED);
 * a topic named by id without DESCRIBE on it keeps its name hidden (null).
 */
import { DeleteTopics } from '../../protocol/schemas/20-delete-topics.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import type { DeletableTopic, DeletableTopicResult } from '../../controller/replication-control.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { controllerQuotaThrottleTimeMs, mutationQuotaFor } from '../controller-mutation-quota.js';

function requestedTopics(request: { topics: readonly { name: string | null; topicId: string }[]; topicNames: readonly string[] }, version: number): DeletableTopic[] {
  if (version >= 6) return request.topics.map((t) => ({ name: t.name, topicId: t.topicId }));
  return request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
}

export function deleteTopicsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: DeleteTopics,
    async handle(request, context) {
      const requested = requestedTopics(request, context.apiVersion);
      const image = broker.metadata.image;
      const denied: DeletableTopicResult[] = [];
      const topics = requested.filter((topic) => {
        const name = topic.name ?? image.topicsById.get(topic.topicId)?.name ?? null;
        if (name === null || !broker.config.bool('delete.topic.enable') || authorize(broker, context, AclOperation.DELETE, ResourceType.TOPIC, name)) return true;
        const hidden = topic.name === null && !authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, name);
        denied.push({ name: hidden ? null : name, topicId: topic.topicId, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null });
        return false;
      });
      const quota = mutationQuotaFor(broker.controllerMutationQuota, context, { strictSinceVersion: 5 });
      try {
        const results = topics.length === 0 ? [] : await broker.controller.deleteTopics(topics, { partitionChangeQuota: quota.record });
        return { throttleTimeMs: controllerQuotaThrottleTimeMs(quota, context.throttle), responses: [...results, ...denied].map((r) => responseEntry(r, context.apiVersion)) };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return errorResponse(topics, ErrorCode.NOT_CONTROLLER, context.apiVersion);
      }
    },
    errorResponse: (request, errorCode, context) => errorResponse(requestedTopics(request, context.apiVersion), errorCode, context.apiVersion),
  });
}

/** Before v6 names are not nullable: a by-id entry cannot occur there. */
function responseEntry(result: { name: string | null; topicId: string; errorCode: number; errorMessage: string | null }, version: number) {
  return { name: version >= 6 ? result.name : (result.name ?? ''), topicId: result.topicId, errorCode: result.errorCode, errorMessage: result.errorMessage };
}

function errorResponse(topics: readonly DeletableTopic[], errorCode: number, version: number) {
  return {
    throttleTimeMs: 0,
    responses: topics.map((t) => responseEntry({ name: t.name, topicId: t.topicId, errorCode, errorMessage: null }, version)),
  };
}
