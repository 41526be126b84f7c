/**
 * CreateTopics (key 19), versions 2-7 (Kafka 4 dropped v0-v1).
 *
 * v3 same as v2; v4 numPartitions / replicationFactor may be -1 for the
 * broker defaults (KIP-464); v5 flexible, and each created topic comes back
 * with its partition count, replication factor and effective configs
 * (KIP-525); v6 may answer THROTTLING_QUOTA_EXCEEDED (KIP-599); v7 topic
 * ids (KIP-516).
 *
 * controller_mutation_rate (src/server/controller-mutation-quota.ts): each
 * topic's partitions are counted once it has passed every other check; from
 * v6 a topic finding its quota exceeded is refused with
 * THROTTLING_QUOTA_EXCEEDED, before v6 it is created; either way the
 * response carries the throttle time and the connection is muted for it.
 *
 * The controller validates each topic on its own (name, collisions,
 * partitions, replication factor against live brokers, manual assignments,
 * configs) with Kafka's codes and messages; validateOnly checks everything
 * and writes nothing. The answer comes once the topics' records are
 * committed and published, so the partitions have leaders when it arrives.
 * timeoutMs is not used: a one-voter quorum commits at once.
 *
 * Not done: CreateTopicPolicy (create.topic.policy.class.name).
 */
import { CreateTopics } from '../../protocol/schemas/19-create-topics.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
/** Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME: its creation is refused by the controller, never authorized. */
const CLUSTER_METADATA_TOPIC = '__cluster_metadata';
import { AclOperation, ResourceType, authorizeCluster, authorizedNames } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { controllerQuotaThrottleTimeMs, mutationQuotaFor } from '../controller-mutation-quota.js';

export function createTopicsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: CreateTopics,
    async handle(request, context) {
      // CREATE on the cluster or on each topic (TOPIC_AUTHORIZATION_FAILED, "Authorization failed."); the new
      // topic's configs only with DESCRIBE_CONFIGS on it (topicConfigErrorCode otherwise), as Kafka's.
      const counts = new Map<string, number>();
      for (const topic of request.topics) counts.set(topic.name, (counts.get(topic.name) ?? 0) + 1);
      const single = [...counts].filter(([name, count]) => count === 1 && name !== CLUSTER_METADATA_TOPIC).map(([name]) => name);
      const creatable = authorizeCluster(broker, context, AclOperation.CREATE) ? new Set(single) : authorizedNames(broker, context, AclOperation.CREATE, ResourceType.TOPIC, single);
      const describable = authorizedNames(broker, context, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, single);
      const denied = single.filter((name) => !creatable.has(name));
      const quota = mutationQuotaFor(broker.controllerMutationQuota, context, { strictSinceVersion: 6 });
      let results;
      try {
        const allowed = request.topics.filter((topic) => !denied.includes(topic.name));
        results = allowed.length === 0 ? [] : await broker.controller.createTopics(allowed, { validateOnly: request.validateOnly, partitionChangeQuota: quota.record });
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return errorResponse(request.topics, ErrorCode.NOT_CONTROLLER);
      }
      const withConfigs = context.apiVersion >= 5;
      const topics = results.map((result) => {
        const configsShown = describable.has(result.name);
        return {
          name: result.name,
          topicId: result.topicId,
          errorCode: result.errorCode,
          errorMessage: result.errorMessage,
          topicConfigErrorCode: configsShown ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          numPartitions: result.errorCode === ErrorCode.NONE ? result.numPartitions : -1,
          replicationFactor: result.errorCode === ErrorCode.NONE ? result.replicationFactor : -1,
          configs: withConfigs && configsShown && result.errorCode === ErrorCode.NONE ? result.configs : [],
        };
      });
      const unauthorized = errorResponse(denied.map((name) => ({ name })), ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.').topics;
      return { throttleTimeMs: controllerQuotaThrottleTimeMs(quota, context.throttle), topics: [...topics, ...unauthorized] };
    },
    errorResponse: (request, errorCode) => errorResponse(request.topics, errorCode),
  });
}

function errorResponse(topics: readonly { name: string }[], errorCode: number, errorMessage: string | null = null) {
  return {
    throttleTimeMs: 0,
    topics: topics.map((topic) => ({ name: topic.name, topicId: ZERO_UUID, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: [] })),
  };
}
