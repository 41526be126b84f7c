/**
 * InitProducerId (key 22), versions 0-5 (v6, KIP-939 two-phase commit, is
 * unstable in Kafka and not advertised).
 *
 * Idempotent producers (transactionalId null) get a fresh producer id with
 * epoch 0, from blocks the controller allocates (txn/producer-id-manager.ts);
 * as in Kafka, the producerId / producerEpoch a v3+ producer sends (KIP-360)
 * do not matter for a non-transactional producer, except that exactly one of
 * them being -1 is INVALID_REQUEST.
 *
 * Transactional producers go to the transaction coordinator of their
 * transactional.id: the epoch is bumped (fencing any older producer with the
 * id), an open transaction is aborted first (CONCURRENT_TRANSACTIONS, the
 * producer retries), a transaction.timeout.ms above transaction.max.timeout.ms
 * is INVALID_TRANSACTION_TIMEOUT and an empty id INVALID_REQUEST. v2
 * flexible; v3 the producer's current id and epoch (KIP-360); v4
 * PRODUCER_FENCED (before v4 it is INVALID_PRODUCER_EPOCH, as Kafka maps it);
 * v5 TRANSACTION_ABORTABLE (KIP-890), which Spool's coordinator never needs.
 */
import { InitProducerId } from '../../protocol/schemas/22-init-producer-id.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizeByResourceType, authorizeCluster } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

const NO_PRODUCER_ID = -1;
const NO_PRODUCER_EPOCH = -1;
/** The first version that knows PRODUCER_FENCED. */
const PRODUCER_FENCED_VERSION = 4;

export function initProducerIdHandler(broker: ApiContext) {
  const coordinator = broker.transactionCoordinator;
  const failure = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
  return defineHandler({
    api: InitProducerId,
    versions: { min: 0, max: 5 },
    async handle(request, context) {
      const onlyOneSet = (request.producerId === NO_PRODUCER_ID) !== (request.producerEpoch === NO_PRODUCER_EPOCH);
      if (onlyOneSet) return failure(ErrorCode.INVALID_REQUEST);
      // WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679), as Kafka's.
      if (request.transactionalId !== null && !authorize(broker, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) {
        return failure(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      }
      if (request.transactionalId === null && !authorizeCluster(broker, context, AclOperation.IDEMPOTENT_WRITE) && !authorizeByResourceType(broker, context, AclOperation.WRITE, ResourceType.TOPIC)) {
        return failure(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      }
      if (request.transactionalId !== null) {
        const expected = request.producerId === NO_PRODUCER_ID ? null : { producerId: request.producerId, producerEpoch: request.producerEpoch };
        const result = await coordinator.initProducerId({ transactionalId: request.transactionalId, transactionTimeoutMs: request.transactionTimeoutMs, expected });
        const errorCode = result.errorCode === ErrorCode.PRODUCER_FENCED && context.apiVersion < PRODUCER_FENCED_VERSION ? ErrorCode.INVALID_PRODUCER_EPOCH : result.errorCode;
        return { throttleTimeMs: 0, ...result, errorCode };
      }
      const result = await coordinator.producerIds.generateProducerId();
      if (result.errorCode !== ErrorCode.NONE) return failure(result.errorCode);
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: result.producerId, producerEpoch: 0 };
    },
    errorResponse: (_request, errorCode) => failure(errorCode),
  });
}
