/**
 * AllocateProducerIds (key 67), version 0, on the controller listener
 * (KIP-730): the next block of 1000 producer ids for a broker, recorded as
 * a ProducerIdsRecord so no two brokers ever hand out the same id.
 * STALE_BROKER_EPOCH unless the broker's current epoch is given;
 * UNKNOWN_SERVER_ERROR once the ids are exhausted; NOT_CONTROLLER. An error
 * comes with start 0 and length 0, as Kafka's.
 */
import { AllocateProducerIds } from '../../protocol/schemas/67-allocate-producer-ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';
import { onActiveController } from './controller-request.js';

export function allocateProducerIdsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: AllocateProducerIds,
    async handle(request, context) {
      // CLUSTER_ACTION on the cluster, as Kafka's ControllerApis.
      if (!authorizeCluster(node, context, AclOperation.CLUSTER_ACTION)) return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return onActiveController(
        async () => {
          const block = await node.controller.allocateProducerIds(request.brokerId, request.brokerEpoch);
          if (block.errorCode !== ErrorCode.NONE) return errorResponse(block.errorCode);
          return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerIdStart: block.producerIdStart, producerIdLen: block.producerIdLen };
        },
        (errorCode) => errorResponse(errorCode),
      );
    },
    errorResponse: (_request, errorCode) => errorResponse(errorCode),
  });
}

function errorResponse(errorCode: number) {
  return { throttleTimeMs: 0, errorCode, producerIdStart: 0, producerIdLen: 0 };
}
