/**
 * UpdateRaftVoter (key 82), version 0, on the controller listener (KIP-853):
 * a voter tells the leader its current endpoints and kraft.version range;
 * the leader appends the updated VotersRecord and answers at once, with its
 * own id and epoch (and endpoint) in CurrentLeader. Kafka's rules
 * (UpdateVoterHandler): FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for
 * another epoch; NOT_LEADER_OR_FOLLOWER off the leader; REQUEST_TIMED_OUT
 * while a change is in flight or uncommitted; UNSUPPORTED_VERSION at
 * kraft.version 0; INVALID_REQUEST for a range without the finalized
 * kraft.version or no endpoint on the controller listener; VOTER_NOT_FOUND.
 *
 * Not done: Spool's voters never send it (their endpoints are the ones they
 * were added with); only another node's request is served.
 */
import { UpdateRaftVoter } from '../../protocol/schemas/82-update-raft-voter.js';
import { voterOfRequest } from '../../raft/voter-set.js';
import { defineHandler } from '../handler.js';
import type { RaftApiContext } from '../api-context.js';

export function updateRaftVoterHandler(node: RaftApiContext) {
  return defineHandler({
    api: UpdateRaftVoter,
    listeners: ['controller'],
    handle: async (request) => {
      const range = request.kRaftVersionFeature;
      const voter = voterOfRequest(request, { min: range.minSupportedVersion, max: range.maxSupportedVersion });
      const result = await node.raft.updateVoter(voter, request.currentLeaderEpoch, { clusterId: request.clusterId });
      const { leaderId, epoch } = node.raft.leaderAndEpoch;
      const endpoint = leaderId === null ? undefined : node.raft.voterEndpoint(leaderId);
      return {
        throttleTimeMs: 0,
        errorCode: result.errorCode,
        currentLeader: { leaderId: leaderId ?? -1, leaderEpoch: epoch, host: endpoint?.host ?? '', port: endpoint?.port ?? -1 },
      };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode }),
  });
}
