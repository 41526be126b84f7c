/**
 * ReadShareGroupStateSummary (key 87), versions 0-1 (KIP-932; v1 adds the
 * delivery-complete count of KIP-1226).
 *
 * The group coordinator's view of share partitions for
 * DescribeShareGroupOffsets and lag: start offset, state and leader epochs,
 * without the batches. The leader epoch sent is not checked, as Kafka 4.4
 * does not; a share partition with no state answers start offset -1 (state
 * and leader epochs 0). Authorization and empty requests:
 * src/server/apis/share-state-request.ts.
 */
import { ReadShareGroupStateSummary } from '../../protocol/schemas/87-read-share-group-state-summary.js';
import { ErrorCode } from '../../protocol/errors.js';
import { UNINITIALIZED_START_OFFSET } from '../../share/persister.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { answerEachPartition, isEmptyStateRequest, shareStateAuthorized, stateErrorResults } from './share-state-request.js';

const FAILED = { stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 };

export function readShareGroupStateSummaryHandler(broker: ApiContext) {
  return defineHandler({
    api: ReadShareGroupStateSummary,
    async handle(request, context) {
      if (!shareStateAuthorized(broker, context)) return { results: stateErrorResults(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, FAILED) };
      if (isEmptyStateRequest(request)) return { results: [] };
      const results = await answerEachPartition(request, (key, partition) => broker.shareCoordinator.readSummary(key, { leaderEpoch: partition.leaderEpoch }));
      return { results };
    },
    errorResponse: (request, errorCode) => ({ results: stateErrorResults(request, errorCode, FAILED) }),
  });
}
