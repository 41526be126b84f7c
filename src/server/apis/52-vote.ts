/**
 * Vote (key 52), versions 0-2, on the controller listener: a KRaft
 * candidate asks for this voter's vote (KIP-595); v1 names the voter by id
 * and directory id (KIP-853); v2 adds PreVote (KIP-996), a question asked
 * without bumping the epoch. The answer is the Raft client's
 * (KafkaRaftClient.handleVote): INCONSISTENT_CLUSTER_ID, INVALID_REQUEST for
 * another partition, FENCED_LEADER_EPOCH, INVALID_VOTER_KEY, as Kafka.
 *
 * INVALID_VOTER_KEY also when the voter directory id names another
 * directory. nodeEndpoints (v1+, KIP-853) carry the leader's controller
 * endpoint when this node leads.
 */
import { Vote } from '../../protocol/schemas/52-vote.js';
import { defineHandler } from '../handler.js';
import { whileRaftOpen } from './raft-request.js';
import type { RaftApiContext } from '../api-context.js';

export function voteHandler(node: RaftApiContext) {
  return defineHandler({
    api: Vote,
    handle: (request) => whileRaftOpen(() => node.raft.handleVote(request)),
    errorResponse: (_request, errorCode) => ({ errorCode, topics: [] }),
  });
}
