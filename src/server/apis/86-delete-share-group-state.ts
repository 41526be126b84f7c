/**
 * DeleteShareGroupState (key 86), version 0 (KIP-932).
 *
 * A group coordinator forgets share partitions whose share-group offsets
 * were deleted (DeleteShareGroupOffsets, a deleted group): a tombstone for
 * each; a share partition with no state is deleted without a record.
 * Authorization and empty requests: src/server/apis/share-state-request.ts.
 */
import { DeleteShareGroupState } from '../../protocol/schemas/86-delete-share-group-state.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { answerEachPartition, isEmptyStateRequest, shareStateAuthorized, stateErrorResults } from './share-state-request.js';

export function deleteShareGroupStateHandler(broker: ApiContext) {
  return defineHandler({
    api: DeleteShareGroupState,
    async handle(request, context) {
      if (!shareStateAuthorized(broker, context)) return { results: stateErrorResults(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, {}) };
      if (isEmptyStateRequest(request)) return { results: [] };
      const results = await answerEachPartition(request, (key) => broker.shareCoordinator.deleteState(key));
      return { results };
    },
    errorResponse: (request, errorCode) => ({ results: stateErrorResults(request, errorCode, {}) }),
  });
}
