/**
 * DescribeTransactions (key 65), version 0 (KIP-664): the state of each
 * transactional id at its coordinator: state name, timeout, start time,
 * producer id and epoch, and the partitions of its open transaction. An id
 * this node does not coordinate is NOT_COORDINATOR, an unknown one
 * TRANSACTIONAL_ID_NOT_FOUND, an empty one INVALID_REQUEST. DESCRIBE on each transactional id is
 * required (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); topics without DESCRIBE are left out.
 */
import { DescribeTransactions } from '../../protocol/schemas/65-describe-transactions.js';
import { defineHandler } from '../handler.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, authorize } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function describeTransactionsHandler(broker: ApiContext) {
  return defineHandler({
    api: DescribeTransactions,
    handle(request, context) {
      // DESCRIBE on each transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); only topics with DESCRIBE are shown, as Kafka's.
      const transactionStates = request.transactionalIds.map((transactionalId) => {
        if (!authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactionalId)) {
          return { transactionalId, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
        }
        const state = broker.transactionCoordinator.describeTransaction(transactionalId);
        return { ...state, topics: state.topics.filter((topic) => authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.topic)) };
      });
      return { throttleTimeMs: 0, transactionStates };
    },
    errorResponse: (request, errorCode) => ({
      transactionStates: request.transactionalIds.map((transactionalId) => ({ errorCode, transactionalId })),
    }),
  });
}
