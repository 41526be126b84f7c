/**
 * AllocateProducerIds (key 67), version 0, on the controller listener: a
 * broker takes the next block of 1000 producer ids (KIP-730), written as a
 * ProducerIdsRecord so no two brokers ever hand out the same id.
 * STALE_BROKER_EPOCH for a broker epoch that is not the registered one.
 */
import { AllocateProducerIds } from '../../protocol/schemas/67-allocate-producer-ids.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

export function allocateProducerIdsHandler(node: ControllerApiContext) {
  const failure = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, producerIdStart: -1, producerIdLen: 0 });
  return defineHandler({
    api: AllocateProducerIds,
    async handle(request) {
      try {
        const block = await node.controller.allocateProducerIds(request.brokerId, request.brokerEpoch);
        return { throttleTimeMs: 0, ...block };
      } catch (error) {
        if (error instanceof NotControllerError) return failure(ErrorCode.NOT_CONTROLLER);
        throw error;
      }
    },
    errorResponse: (_request, errorCode) => failure(errorCode),
  });
}
