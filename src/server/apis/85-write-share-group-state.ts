/**
 * WriteShareGroupState (key 85), versions 0-1 (KIP-932; v1 adds the
 * delivery-complete count of KIP-1226, -1 from a v0 writer).
 *
 * A share-partition leader persists what changed: its start offset and
 * the batches whose delivery state or count moved. Written as a
 * ShareUpdate record (a ShareSnapshot every
 * share.coordinator.snapshot.update.records.per.snapshot updates) and
 * merged into the state as src/share/coordinator/batch-combiner.ts says.
 * FENCED_LEADER_EPOCH / FENCED_STATE_EPOCH for a stale writer,
 * INVALID_REQUEST for negative epochs and for a share partition never
 * initialized. Authorization and empty requests:
 * src/server/apis/share-state-request.ts.
 */
import { WriteShareGroupState } from '../../protocol/schemas/85-write-share-group-state.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { answerEachPartition, isEmptyStateRequest, shareStateAuthorized, stateErrorResults } from './share-state-request.js';

export function writeShareGroupStateHandler(broker: ApiContext) {
  return defineHandler({
    api: WriteShareGroupState,
    async handle(request, context) {
      if (!shareStateAuthorized(broker, context)) return { results: stateErrorResults(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, {}) };
      if (isEmptyStateRequest(request)) return { results: [] };
      const results = await answerEachPartition(request, (key, partition) =>
        broker.shareCoordinator.writeState(key, {
          stateEpoch: partition.stateEpoch,
          leaderEpoch: partition.leaderEpoch,
          startOffset: partition.startOffset,
          deliveryCompleteCount: partition.deliveryCompleteCount,
          stateBatches: partition.stateBatches,
        }),
      );
      return { results };
    },
    errorResponse: (request, errorCode) => ({ results: stateErrorResults(request, errorCode, {}) }),
  });
}
