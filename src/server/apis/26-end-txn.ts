/**
 * EndTxn (key 26), versions 0-5: commits or aborts the producer's open
 * transaction. The coordinator writes PrepareCommit / PrepareAbort and
 * answers; the markers then go to every partition of the transaction, and
 * the transaction completes once they are written. A retry after it
 * completed gets NONE again; one while the markers are still being written
 * CONCURRENT_TRANSACTIONS. v1 same as v0; v2 PRODUCER_FENCED
 * (INVALID_PRODUCER_EPOCH before); v3 flexible; v4 TRANSACTION_ABORTABLE;
 * v5 Transactions V2 (KIP-890 part 2): the epoch is bumped by every EndTxn
 * and the response carries the producer id and epoch to go on with, and an
 * ABORT with no transaction open is allowed (txn/shard.ts). A client uses
 * v5 once the transaction.version feature is 2. Authorization: WRITE on the
 * transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
import { EndTxn } from '../../protocol/schemas/26-end-txn.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import { TXN_PRODUCER_FENCED_VERSION } from './24-add-partitions-to-txn.js';

/** The first EndTxn version of Transactions V2 (Kafka's transactionVersionForEndTxn). */
const TRANSACTIONS_V2_VERSION = 5;

export function endTxnHandler(broker: ApiContext) {
  return defineHandler({
    api: EndTxn,
    versions: { min: 0, max: 5 },
    async handle(request, context) {
      // WRITE on the transactional id, as Kafka's.
      if (!authorize(broker, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
      const result = await broker.transactionCoordinator.endTransaction({
        transactionalId: request.transactionalId,
        producerId: request.producerId,
        producerEpoch: request.producerEpoch,
        committed: request.committed,
        clientTransactionVersion: context.apiVersion >= TRANSACTIONS_V2_VERSION ? 2 : 0,
      });
      const fencedBefore = result.errorCode === ErrorCode.PRODUCER_FENCED && context.apiVersion < TXN_PRODUCER_FENCED_VERSION;
      return { throttleTimeMs: 0, ...result, errorCode: fencedBefore ? ErrorCode.INVALID_PRODUCER_EPOCH : result.errorCode };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
