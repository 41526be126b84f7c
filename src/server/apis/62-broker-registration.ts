/**
 * BrokerRegistration (key 62), versions 0-4, on the controller listener: a
 * broker announces its listeners, rack, supported features and log
 * directories and gets a broker epoch; it stays fenced until a heartbeat
 * unfences it (KIP-631).
 *
 * v1 adds isMigratingZkBroker (ZooKeeper migration, gone in Kafka 4: a
 * migrating broker is refused, as Kafka does), v2 log directories (KIP-858),
 * v3 previousBrokerEpoch (KIP-966), v4 a feature minimum of 0.
 *
 * Not done: previousBrokerEpoch is not used for ELR (KIP-966).
 */
import { BrokerRegistration } from '../../protocol/schemas/62-broker-registration.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

export function brokerRegistrationHandler(node: ControllerApiContext) {
  const answer = (errorCode: number, brokerEpoch = -1) => ({ throttleTimeMs: 0, errorCode, brokerEpoch });
  return defineHandler({
    api: BrokerRegistration,
    async handle(request) {
      if (request.clusterId !== node.metadata.image.clusterId) return answer(ErrorCode.INCONSISTENT_CLUSTER_ID);
      if (request.isMigratingZkBroker) return answer(ErrorCode.BROKER_ID_NOT_REGISTERED);
      try {
        const reply = await node.controller.registerBroker({
          brokerId: request.brokerId,
          incarnationId: request.incarnationId,
          listeners: request.listeners,
          rack: request.rack,
          features: request.features,
          logDirs: request.logDirs,
        });
        return answer(reply.errorCode, reply.brokerEpoch);
      } catch (error) {
        if (error instanceof NotControllerError) return answer(ErrorCode.NOT_CONTROLLER);
        throw error;
      }
    },
    errorResponse: (_request, errorCode) => answer(errorCode),
  });
}
