/**
 * ListPartitionReassignments (key 46), version 0 (KIP-455), flexible.
 *
 * Served by the active controller (brokers forward it in an Envelope).
 * DESCRIBE on the cluster is required (CLUSTER_AUTHORIZATION_FAILED, with
 * the asked partitions listed empty, as Kafka's getErrorResponse). Null
 * topics list every reassigning partition; named ones list those of their
 * partitions that are reassigning, leaving out unknown topics and
 * partitions, as Kafka's controller does. Each entry gives the replicas
 * (target then removing), addingReplicas and removingReplicas.
 */
import { ListPartitionReassignments } from '../../protocol/schemas/46-list-partition-reassignments.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

interface Request {
  topics: { name: string; partitionIndexes: number[] }[] | null;
}

export function listPartitionReassignmentsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: ListPartitionReassignments,
    async handle(request, context) {
      if (!authorizeCluster(node, context, AclOperation.DESCRIBE)) return errorResponse(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => ({ throttleTimeMs: 0, errorCode: ErrorCode.NONE as number, errorMessage: null as string | null, topics: await node.controller.listPartitionReassignments(request.topics) }),
        (errorCode) => errorResponse(request, errorCode),
      );
    },
    errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  });
}

function errorResponse(request: Request, errorCode: number) {
  return {
    throttleTimeMs: 0,
    errorCode,
    errorMessage: errorInfo(errorCode).message,
    topics: (request.topics ?? []).map((topic) => ({
      name: topic.name,
      partitions: topic.partitionIndexes.map((partitionIndex) => ({ partitionIndex, replicas: [], addingReplicas: [], removingReplicas: [] })),
    })),
  };
}
