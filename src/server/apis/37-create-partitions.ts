/**
 * CreatePartitions (key 37), versions 0-3 (KIP-195).
 *
 * v1 same as v0; v2 flexible; v3 may answer THROTTLING_QUOTA_EXCEEDED
 * (KIP-599): the partitions added count against controller_mutation_rate
 * (src/server/controller-mutation-quota.ts), a topic finding the quota
 * exceeded is refused from v3 and only throttled before.
 *
 * Adds partitions to existing topics, placed like new topics' partitions
 * or as given by manual assignments; the replication factor is the topic's.
 * Kafka's errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (no
 * increase), INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR,
 * INVALID_REQUEST for a topic named twice. validateOnly writes nothing.
 * The answer comes once the new partitions are committed and published.
 *
 * Not done: AlterPartitionReassignments interplay.
 */
import { CreatePartitions } from '../../protocol/schemas/37-create-partitions.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { controllerQuotaThrottleTimeMs, mutationQuotaFor } from '../controller-mutation-quota.js';

export function createPartitionsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: CreatePartitions,
    async handle(request, context) {
      // ALTER on each topic (TOPIC_AUTHORIZATION_FAILED), as Kafka's.
      const alterable = authorizedNames(broker, context, AclOperation.ALTER, ResourceType.TOPIC, request.topics.map((topic) => topic.name));
      const denied = errorResponse(request.topics.filter((topic) => !alterable.has(topic.name)), ErrorCode.TOPIC_AUTHORIZATION_FAILED).results;
      const quota = mutationQuotaFor(broker.controllerMutationQuota, context, { strictSinceVersion: 3 });
      try {
        const allowed = request.topics.filter((topic) => alterable.has(topic.name));
        const results = allowed.length === 0 ? [] : await broker.controller.createPartitions(allowed, { validateOnly: request.validateOnly, partitionChangeQuota: quota.record });
        return { throttleTimeMs: controllerQuotaThrottleTimeMs(quota, context.throttle), results: [...results, ...denied] };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return errorResponse(request.topics, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => errorResponse(request.topics, errorCode),
  });
}

function errorResponse(topics: readonly { name: string }[], errorCode: number) {
  return { throttleTimeMs: 0, results: topics.map((topic) => ({ name: topic.name, errorCode, errorMessage: null })) };
}
