/**
 * BrokerHeartbeat (key 63), versions 0-2, on the controller listener
 * (KIP-631). v1 offline log directories (KIP-858), v2 cordoned ones
 * (KIP-1066): both read and not acted on yet (docs/SKIPPED.md).
 *
 * The active controller renews the broker's session and moves it between
 * fenced, unfenced and controlled shutdown by Kafka's rules (see
 * controller/broker-heartbeat-manager.ts); the answer comes once the
 * records of that move are committed. An error (STALE_BROKER_EPOCH,
 * NOT_CONTROLLER) comes with isFenced true, the schema's default, as
 * Kafka's.
 */
import { BrokerHeartbeat } from '../../protocol/schemas/63-broker-heartbeat.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

export function brokerHeartbeatHandler(node: ControllerApiContext) {
  return defineHandler({
    api: BrokerHeartbeat,
    async handle(request, context) {
      // CLUSTER_ACTION on the cluster, as Kafka's ControllerApis.
      if (!authorizeCluster(node, context, AclOperation.CLUSTER_ACTION)) return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          const reply = await node.controller.processBrokerHeartbeat(request);
          if (reply.errorCode !== 0) return errorResponse(reply.errorCode);
          return { throttleTimeMs: 0, errorCode: 0, isCaughtUp: reply.isCaughtUp, isFenced: reply.isFenced, shouldShutDown: reply.shouldShutDown };
        },
        (errorCode) => errorResponse(errorCode),
      );
    },
    errorResponse: (_request, errorCode) => errorResponse(errorCode),
  });
}

function errorResponse(errorCode: number) {
  return { throttleTimeMs: 0, errorCode, isCaughtUp: false, isFenced: true, shouldShutDown: false };
}
