/**
 * InitializeShareGroupState (key 83), version 0 (KIP-932).
 *
 * A group coordinator sets the state of share partitions before a share
 * group first consumes them (or after an offsets reset): the share
 * partition start offset and a state epoch; earlier batches are dropped.
 * Written by this node's share coordinator as a ShareSnapshot record
 * (src/share/coordinator/shard.ts); FENCED_STATE_EPOCH for a state epoch
 * below the current one, INVALID_REQUEST for a negative one,
 * UNKNOWN_TOPIC_OR_PARTITION for a partition the metadata lacks.
 * Authorization and empty requests: src/server/apis/share-state-request.ts.
 */
import { InitializeShareGroupState } from '../../protocol/schemas/83-initialize-share-group-state.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { answerEachPartition, isEmptyStateRequest, shareStateAuthorized, stateErrorResults } from './share-state-request.js';

export function initializeShareGroupStateHandler(broker: ApiContext) {
  return defineHandler({
    api: InitializeShareGroupState,
    async handle(request, context) {
      if (!shareStateAuthorized(broker, context)) return { results: stateErrorResults(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, {}) };
      if (isEmptyStateRequest(request)) return { results: [] };
      const results = await answerEachPartition(request, (key, partition) =>
        broker.shareCoordinator.initializeState(key, { stateEpoch: partition.stateEpoch, startOffset: partition.startOffset }),
      );
      return { results };
    },
    errorResponse: (request, errorCode) => ({ results: stateErrorResults(request, errorCode, {}) }),
  });
}
