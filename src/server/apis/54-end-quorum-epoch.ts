/**
 * EndQuorumEpoch (key 54), versions 0-1, on the controller listener: the
 * KRaft leader resigned (a graceful shutdown), naming its preferred
 * successors (v0) or candidates with directory ids (v1, KIP-853); this voter
 * stands after a backoff that grows with its rank (KIP-595). The answer is
 * the Raft client's (KafkaRaftClient.handleEndQuorumEpoch).
 *
 * nodeEndpoints (v1, KIP-853) carry the leader's controller endpoint when
 * this node leads; a dynamic quorum's replica learns the leader's address
 * from leaderEndpoints.
 */
import { EndQuorumEpoch } from '../../protocol/schemas/54-end-quorum-epoch.js';
import { defineHandler } from '../handler.js';
import { whileRaftOpen } from './raft-request.js';
import type { RaftApiContext } from '../api-context.js';

export function endQuorumEpochHandler(node: RaftApiContext) {
  return defineHandler({
    api: EndQuorumEpoch,
    handle: (request) => whileRaftOpen(() => node.raft.handleEndQuorumEpoch(request)),
    errorResponse: (_request, errorCode) => ({ errorCode, topics: [] }),
  });
}
