/**
 * ListTransactions (key 66), versions 0-2 (KIP-664): the transactional ids
 * this node coordinates, filtered by state names (unknown names are echoed
 * in unknownStateFilters), producer ids, v1 a minimum running time
 * (KIP-994) and v2 a regular expression on the id (KIP-1152; an invalid one
 * is INVALID_REGULAR_EXPRESSION). Only transactional ids with DESCRIBE are listed.
 */
import { ListTransactions } from '../../protocol/schemas/66-list-transactions.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function listTransactionsHandler(broker: ApiContext) {
  return defineHandler({
    api: ListTransactions,
    handle(request, context) {
      const listed = broker.transactionCoordinator.listTransactions({
        states: request.stateFilters,
        producerIds: request.producerIdFilters,
        durationMs: request.durationFilter,
        transactionalIdPattern: request.transactionalIdPattern,
      });
      // Only transactional ids with DESCRIBE are listed, as Kafka's.
      const transactionStates = listed.transactionStates.filter((state) => authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, state.transactionalId));
      return { throttleTimeMs: 0, ...listed, transactionStates };
    },
    errorResponse: (_request, errorCode) => ({ errorCode }),
  });
}
