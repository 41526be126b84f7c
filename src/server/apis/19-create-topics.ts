/**
 * CreateTopics (key 19), versions 2-7 (Kafka 4 dropped v0-v1).
 *
 * v3 same as v2; v4 numPartitions / replicationFactor may be -1 for the
 * broker defaults (KIP-464); v5 flexible, and each created topic comes back
 * with its partition count, replication factor and effective configs
 * (KIP-525); v6 may answer THROTTLING_QUOTA_EXCEEDED (KIP-599, never: no
 * quotas); v7 topic ids (KIP-516).
 *
 * The controller validates each topic on its own (name, collisions,
 * partitions, replication factor against live brokers, manual assignments,
 * configs) with Kafka's codes and messages; validateOnly checks everything
 * and writes nothing. The answer comes once the topics' records are
 * committed and published, so the partitions have leaders when it arrives.
 * timeoutMs is not used: a one-voter quorum commits at once.
 *
 * Not done: CreateTopicPolicy (create.topic.policy.class.name), quotas, ACLs.
 */
import { CreateTopics } from '../../protocol/schemas/19-create-topics.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

export function createTopicsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: CreateTopics,
    async handle(request, context) {
      let results;
      try {
        results = await broker.controller.createTopics(request.topics, { validateOnly: request.validateOnly });
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return errorResponse(request.topics, ErrorCode.NOT_CONTROLLER);
      }
      const withConfigs = context.apiVersion >= 5;
      return {
        throttleTimeMs: 0,
        topics: results.map((result) => ({
          name: result.name,
          topicId: result.topicId,
          errorCode: result.errorCode,
          errorMessage: result.errorMessage,
          topicConfigErrorCode: ErrorCode.NONE,
          numPartitions: result.errorCode === ErrorCode.NONE ? result.numPartitions : -1,
          replicationFactor: result.errorCode === ErrorCode.NONE ? result.replicationFactor : -1,
          configs: withConfigs && result.errorCode === ErrorCode.NONE ? result.configs : [],
        })),
      };
    },
    errorResponse: (request, errorCode) => errorResponse(request.topics, errorCode),
  });
}

function errorResponse(topics: readonly { name: string }[], errorCode: number) {
  return {
    throttleTimeMs: 0,
    topics: topics.map((topic) => ({ name: topic.name, topicId: ZERO_UUID, errorCode, errorMessage: null, numPartitions: -1, replicationFactor: -1, configs: [] })),
  };
}
