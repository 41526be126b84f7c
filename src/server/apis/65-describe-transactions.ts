/**
 * DescribeTransactions (key 65), version 0 (KIP-664): the state of each
 * transactional id at its coordinator: state name, timeout, start time,
 * producer id and epoch, and the partitions of its open transaction. An id
 * this node does not coordinate is NOT_COORDINATOR, an unknown one
 * TRANSACTIONAL_ID_NOT_FOUND, an empty one INVALID_REQUEST. No ACLs.
 */
import { DescribeTransactions } from '../../protocol/schemas/65-describe-transactions.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';

export function describeTransactionsHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeTransactions,
    handle(request) {
      return { throttleTimeMs: 0, transactionStates: request.transactionalIds.map((id) => broker.transactionCoordinator.describeTransaction(id)) };
    },
    errorResponse: (request, errorCode) => ({
      transactionStates: request.transactionalIds.map((transactionalId) => ({ errorCode, transactionalId })),
    }),
  });
}
