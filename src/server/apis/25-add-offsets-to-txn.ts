/**
 * AddOffsetsToTxn (key 25), versions 0-4: the group's `__consumer_offsets`
 * partition joins the producer's transaction, so that its TxnOffsetCommit
 * offsets are committed or aborted with it. v1 same as v0; v2
 * PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 flexible; v4
 * TRANSACTION_ABORTABLE. Authorization: WRITE on the transactional id, READ on the group.
 */
import { AddOffsetsToTxn } from '../../protocol/schemas/25-add-offsets-to-txn.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { TXN_PRODUCER_FENCED_VERSION } from './24-add-partitions-to-txn.js';

export function addOffsetsToTxnHandler(broker: ApiContext) {
  return defineHandler({
    api: AddOffsetsToTxn,
    async handle(request, context) {
      // WRITE on the transactional id, then READ on the group, as Kafka's.
      if (!authorize(broker, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
      if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const producer = { producerId: request.producerId, producerEpoch: request.producerEpoch };
      const errorCode = await broker.transactionCoordinator.addOffsets(request.transactionalId, producer, request.groupId);
      const fencedBefore = errorCode === ErrorCode.PRODUCER_FENCED && context.apiVersion < TXN_PRODUCER_FENCED_VERSION;
      return { throttleTimeMs: 0, errorCode: fencedBefore ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
