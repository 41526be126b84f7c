/**
 * BrokerRegistration (key 62), versions 0-4, on the controller listener
 * (KIP-631). v1 isMigratingZkBroker (KIP-866; refused, as Kafka 4 refuses
 * ZooKeeper brokers); v2 log directories (KIP-858); v3 previousBrokerEpoch
 * (KIP-966, read but not used, as Kafka 4.0's controller); v4 a feature's
 * minimum may be 0.
 *
 * The active controller checks the cluster id, duplicate incarnations,
 * log directories and every finalized feature, and answers the broker
 * epoch once the RegisterBrokerRecord is committed. Errors are Kafka's
 * codes alone (the response has no message): INCONSISTENT_CLUSTER_ID,
 * DUPLICATE_BROKER_REGISTRATION, INVALID_REGISTRATION,
 * UNSUPPORTED_VERSION, NOT_CONTROLLER.
 */
import { BrokerRegistration } from '../../protocol/schemas/62-broker-registration.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

export function brokerRegistrationHandler(node: ControllerApiContext) {
  return defineHandler({
    api: BrokerRegistration,
    async handle(request, context) {
      // CLUSTER_ACTION on the cluster, as Kafka's ControllerApis.
      if (!authorizeCluster(node, context, AclOperation.CLUSTER_ACTION)) return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          const reply = await node.controller.registerBroker({
              brokerId: request.brokerId,
              clusterId: request.clusterId,
              incarnationId: request.incarnationId,
              listeners: request.listeners,
              features: request.features,
              rack: request.rack,
              logDirs: request.logDirs,
              isMigratingZkBroker: request.isMigratingZkBroker,
              previousBrokerEpoch: request.previousBrokerEpoch,
            });
          return { throttleTimeMs: 0, errorCode: reply.errorCode, brokerEpoch: reply.brokerEpoch };
        },
        (errorCode) => errorResponse(errorCode),
      );
    },
    errorResponse: (_request, errorCode) => errorResponse(errorCode),
  });
}

function errorResponse(errorCode: number) {
  return { throttleTimeMs: 0, errorCode, brokerEpoch: -1 };
}
