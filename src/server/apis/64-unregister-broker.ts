/**
 * UnregisterBroker (key 64), version 0 (KIP-631): removes a broker's
 * registration (kafka-cluster.sh unregister). Served on both listeners, as
 * Kafka's: on a combined node the broker listener reaches the controller in
 * the same process.
 *
 * The broker leaves every ISR and leadership first. BROKER_ID_NOT_REGISTERED
 * for an unknown id with Kafka's message ("Broker ID 7 is not currently
 * registered"), NOT_CONTROLLER when this controller is not active.
 */
import { UnregisterBroker } from '../../protocol/schemas/64-unregister-broker.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

export function unregisterBrokerHandler(node: ControllerApiContext) {
  return defineHandler({
    api: UnregisterBroker,
    async handle(request, context) {
      // ALTER on the cluster, as Kafka's ControllerApis.
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          const { errorCode, errorMessage } = await node.controller.unregisterBroker(request.brokerId);
          return errorResponse(errorCode, errorMessage);
        },
        (errorCode) => errorResponse(errorCode),
      );
    },
    errorResponse: (_request, errorCode) => errorResponse(errorCode),
  });
}

function errorResponse(errorCode: number, errorMessage: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage };
}
