/**
 * AlterPartitionReassignments (key 45), versions 0-1 (KIP-455), flexible
 * from v0; v1 carries allowReplicationFactorChange (KIP-860): false makes a
 * target with another replication factor INVALID_REPLICATION_FACTOR, and
 * the response echoes the flag.
 *
 * Served by the active controller (brokers forward it in an Envelope).
 * ALTER on the cluster is required (CLUSTER_AUTHORIZATION_FAILED for the
 * request and every partition, as Kafka's getErrorResponse). Replicas start
 * a reassignment, null cancels one; each partition is answered on its own
 * with Kafka's codes and messages (controller/partition-reassignment.ts):
 * UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT,
 * INVALID_REPLICATION_FACTOR, NO_REASSIGNMENT_IN_PROGRESS. The answer comes
 * once the records are committed; the reassignment completes later, when
 * the new replicas join the ISR. timeoutMs is not applied (the answer waits
 * for the commit, as the other controller operations do).
 */
import { AlterPartitionReassignments } from '../../protocol/schemas/45-alter-partition-reassignments.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

interface Request {
  allowReplicationFactorChange: boolean;
  topics: { name: string; partitions: { partitionIndex: number; replicas: number[] | null }[] }[];
}

export function alterPartitionReassignmentsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: AlterPartitionReassignments,
    async handle(request, context) {
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return errorResponse(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          const reply = await node.controller.alterPartitionReassignments({
            // v0 has no flag: the replication factor may change, as before KIP-860.
            allowReplicationFactorChange: context.apiVersion === 0 || request.allowReplicationFactorChange,
            topics: request.topics,
          });
          return {
            throttleTimeMs: 0,
            allowReplicationFactorChange: request.allowReplicationFactorChange,
            errorCode: ErrorCode.NONE as number,
            errorMessage: null as string | null,
            responses: reply.topics,
          };
        },
        (errorCode) => errorResponse(request, errorCode),
      );
    },
    errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  });
}

/** Kafka's getErrorResponse: the error at the top and on every partition. */
function errorResponse(request: Request, errorCode: number) {
  const errorMessage = errorInfo(errorCode).message;
  return {
    throttleTimeMs: 0,
    allowReplicationFactorChange: request.allowReplicationFactorChange,
    errorCode,
    errorMessage,
    responses: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => ({ partitionIndex: partition.partitionIndex, errorCode, errorMessage })),
    })),
  };
}
