/**
 * ElectLeaders (key 43), versions 0-2 (KIP-183, KIP-460): preferred or
 * unclean leader elections. v0 elects the preferred replica (no election
 * type, no top-level error); v1 adds electionType (0 PREFERRED, 1 UNCLEAN)
 * and the top-level errorCode; v2 is flexible.
 *
 * Served by the active controller (brokers forward it in an Envelope), as
 * Kafka's ControllerApis: ALTER on the cluster is required, else
 * CLUSTER_AUTHORIZATION_FAILED at the top and on every named partition. Each
 * partition is answered on its own with Kafka's codes
 * (controller/elections.ts): ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
 * ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION; null
 * topicPartitions elects every partition and leaves out those needing no
 * election. An unknown election type is INVALID_REQUEST. The answer comes
 * once the election records are committed; timeoutMs is not applied (the
 * answer waits for the commit, as the other controller operations do).
 */
import { ElectLeaders } from '../../protocol/schemas/43-elect-leaders.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { ElectionType } from '../../controller/elections.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

interface Request {
  topicPartitions: { topic: string; partitions: number[] }[] | null;
}

export function electLeadersHandler(node: ControllerApiContext) {
  return defineHandler({
    api: ElectLeaders,
    async handle(request, context) {
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return errorResponse(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          // v0 has no election type: it elects the preferred replica.
          const electionType = context.apiVersion === 0 ? ElectionType.PREFERRED : request.electionType;
          const reply = await node.controller.electLeaders({ electionType, topicPartitions: request.topicPartitions });
          if (reply.errorCode !== ErrorCode.NONE) return errorResponse(request, reply.errorCode);
          return { throttleTimeMs: 0, errorCode: ErrorCode.NONE as number, replicaElectionResults: reply.replicaElectionResults };
        },
        (errorCode) => errorResponse(request, errorCode),
      );
    },
    errorResponse: (request, errorCode) => errorResponse(request, errorCode),
  });
}

/** Kafka's ElectLeadersRequest.getErrorResponse: the error at the top and on every named partition. */
function errorResponse(request: Request, errorCode: number) {
  const errorMessage = errorInfo(errorCode).message;
  return {
    throttleTimeMs: 0,
    errorCode,
    replicaElectionResults: (request.topicPartitions ?? []).map((topic) => ({
      topic: topic.topic,
      partitionResult: topic.partitions.map((partitionId) => ({ partitionId, errorCode, errorMessage })),
    })),
  };
}
