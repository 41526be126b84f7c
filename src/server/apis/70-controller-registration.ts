/**
 * ControllerRegistration (key 70), version 0, on the controller listener
 * (KIP-919): a controller announces its listeners and features, written as
 * a RegisterControllerRecord when they changed. zkMigrationReady is
 * recorded false, as Kafka 4's. NOT_CONTROLLER when this controller is not
 * active.
 */
import { ControllerRegistration } from '../../protocol/schemas/70-controller-registration.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

export function controllerRegistrationHandler(node: ControllerApiContext) {
  return defineHandler({
    api: ControllerRegistration,
    async handle(request, context) {
      // CLUSTER_ACTION on the cluster, as Kafka's ControllerApis.
      if (!authorizeCluster(node, context, AclOperation.CLUSTER_ACTION)) return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          const reply = await node.controller.registerController(request);
          return { throttleTimeMs: 0, errorCode: reply.errorCode, errorMessage: reply.errorMessage };
        },
        (errorCode) => errorResponse(errorCode),
      );
    },
    errorResponse: (_request, errorCode) => errorResponse(errorCode),
  });
}

function errorResponse(errorCode: number) {
  return { throttleTimeMs: 0, errorCode, errorMessage: null };
}
