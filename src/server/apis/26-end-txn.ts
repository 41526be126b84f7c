/**
 * EndTxn (key 26), versions 0-4: commits or aborts the producer's open
 * transaction. The coordinator writes PrepareCommit / PrepareAbort and
 * answers; the markers then go to every partition of the transaction, and
 * the transaction completes once they are written. A retry after it
 * completed gets NONE again; one while the markers are still being written
 * CONCURRENT_TRANSACTIONS. v1 same as v0; v2 PRODUCER_FENCED
 * (INVALID_PRODUCER_EPOCH before); v3 flexible; v4 TRANSACTION_ABORTABLE.
 *
 * Not served: v5 (KIP-890 part 2, Transactions V2, the epoch bumped by every
 * EndTxn and returned in the response); Spool finalizes no
 * transaction.version, so clients stay on V1. No ACLs.
 */
import { EndTxn } from '../../protocol/schemas/26-end-txn.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { TXN_PRODUCER_FENCED_VERSION } from './24-add-partitions-to-txn.js';

export function endTxnHandler(broker: ApiContext) {
  return defineHandler({
    api: EndTxn,
    versions: { min: 0, max: 4 },
    async handle(request, context) {
      const result = await broker.transactionCoordinator.endTransaction({
        transactionalId: request.transactionalId,
        producerId: request.producerId,
        producerEpoch: request.producerEpoch,
        committed: request.committed,
      });
      const fencedBefore = result.errorCode === ErrorCode.PRODUCER_FENCED && context.apiVersion < TXN_PRODUCER_FENCED_VERSION;
      return { throttleTimeMs: 0, ...result, errorCode: fencedBefore ? ErrorCode.INVALID_PRODUCER_EPOCH : result.errorCode };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
