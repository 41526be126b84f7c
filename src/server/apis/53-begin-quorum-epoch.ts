/**
 * BeginQuorumEpoch (key 53), versions 0-1, on the controller listener: a
 * newly elected KRaft leader announces its epoch, and this voter follows it
 * (KIP-595); v1 is flexible and names the voter and the leader's endpoints
 * (KIP-853). The answer is the Raft client's
 * (KafkaRaftClient.handleBeginQuorumEpoch).
 *
 * nodeEndpoints (v1, KIP-853) carry the leader's controller endpoint when
 * this node leads; a dynamic quorum's replica learns the leader's address
 * from leaderEndpoints.
 */
import { BeginQuorumEpoch } from '../../protocol/schemas/53-begin-quorum-epoch.js';
import { defineHandler } from '../handler.js';
import { whileRaftOpen } from './raft-request.js';
import type { RaftApiContext } from '../api-context.js';

export function beginQuorumEpochHandler(node: RaftApiContext) {
  return defineHandler({
    api: BeginQuorumEpoch,
    handle: (request) => whileRaftOpen(() => node.raft.handleBeginQuorumEpoch(request)),
    errorResponse: (_request, errorCode) => ({ errorCode, topics: [] }),
  });
}
