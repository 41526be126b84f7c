/**
 * InitProducerId (key 22), versions 0-5 (v6, KIP-939 two-phase commit, is
 * unstable in Kafka and not advertised).
 *
 * Idempotent producers (transactionalId null) get a fresh producer id with
 * epoch 0, from blocks the controller allocates (txn/producer-id-manager.ts);
 * as in Kafka, the producerId / producerEpoch a v3+ producer sends (KIP-360)
 * do not matter for a non-transactional producer, except that exactly one of
 * them being -1 is INVALID_REQUEST. An empty transactionalId is
 * INVALID_REQUEST, as Kafka answers.
 *
 * Not done (yet): transactions. A transactionalId gets
 * COORDINATOR_NOT_AVAILABLE, Kafka's answer while no transaction coordinator
 * is available (the producer retries until its timeout). v2 flexible; v4
 * PRODUCER_FENCED and v5 TRANSACTION_ABORTABLE only arise with transactions.
 */
import { InitProducerId } from '../../protocol/schemas/22-init-producer-id.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ProducerIdManager } from '../../txn/producer-id-manager.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';

const NO_PRODUCER_ID = -1;
const NO_PRODUCER_EPOCH = -1;

export function initProducerIdHandler(broker: ApiContext) {
  const producerIds = new ProducerIdManager(broker.nodeId, {
    allocateProducerIdBlock: (brokerId) => broker.producerIds.allocateProducerIdBlock(brokerId),
  });
  const failure = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
  return defineHandler({
    api: InitProducerId,
    versions: { min: 0, max: 5 },
    async handle(request) {
      const onlyOneSet = (request.producerId === NO_PRODUCER_ID) !== (request.producerEpoch === NO_PRODUCER_EPOCH);
      if (onlyOneSet) return failure(ErrorCode.INVALID_REQUEST);
      if (request.transactionalId !== null) {
        return failure(request.transactionalId === '' ? ErrorCode.INVALID_REQUEST : ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
      const result = await producerIds.generateProducerId();
      if (result.errorCode !== ErrorCode.NONE) return failure(result.errorCode);
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: result.producerId, producerEpoch: 0 };
    },
    errorResponse: (_request, errorCode) => failure(errorCode),
  });
}
