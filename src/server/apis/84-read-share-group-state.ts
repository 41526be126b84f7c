/**
 * ReadShareGroupState (key 84), version 0 (KIP-932).
 *
 * A share-partition leader loads its share partition's state when it
 * becomes leader: the state epoch, the start offset and the in-flight
 * batches. A read at a leader epoch newer than the last one seen is
 * recorded first (an update record without batches), which fences the
 * previous leader's writes; a read at an older one is FENCED_LEADER_EPOCH.
 * A share partition never initialized is INVALID_REQUEST ("Read operation
 * on uninitialized share partition not allowed."), as Kafka 4.4 answers.
 * Authorization and empty requests: src/server/apis/share-state-request.ts.
 */
import { ReadShareGroupState } from '../../protocol/schemas/84-read-share-group-state.js';
import { ErrorCode } from '../../protocol/errors.js';
import { UNINITIALIZED_START_OFFSET } from '../../share/persister.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { answerEachPartition, isEmptyStateRequest, shareStateAuthorized, stateErrorResults } from './share-state-request.js';

const FAILED = { stateEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, stateBatches: [] };

export function readShareGroupStateHandler(broker: ApiContext) {
  return defineHandler({
    api: ReadShareGroupState,
    async handle(request, context) {
      if (!shareStateAuthorized(broker, context)) return { results: stateErrorResults(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, FAILED) };
      if (isEmptyStateRequest(request)) return { results: [] };
      const results = await answerEachPartition(request, (key, partition) => broker.shareCoordinator.readState(key, { leaderEpoch: partition.leaderEpoch }));
      return { results };
    },
    errorResponse: (request, errorCode) => ({ results: stateErrorResults(request, errorCode, FAILED) }),
  });
}
