/**
 * RemoveRaftVoter (key 81), version 0, on the controller listener (KIP-853):
 * removes a voter from a kraft.version 1 quorum; answered once the new
 * VotersRecord commits. A leader that removed itself resigns then, and the
 * remaining voters elect a successor; it follows the log as an observer.
 * Kafka's rules (RemoveVoterHandler): INCONSISTENT_CLUSTER_ID;
 * INVALID_REQUEST without a directory id; NOT_LEADER_OR_FOLLOWER off the
 * leader; REQUEST_TIMED_OUT while another change is in flight, before the
 * leader committed in its epoch or while the last VotersRecord is
 * uncommitted; UNSUPPORTED_VERSION at kraft.version 0; VOTER_NOT_FOUND for
 * a replica key that is not a voter, or the last voter.
 *
 * Not done: no ALTER CLUSTER authorization; brokers do not serve it.
 */
import { RemoveRaftVoter } from '../../protocol/schemas/81-remove-raft-voter.js';
import { defineHandler } from '../handler.js';
import type { RaftApiContext } from '../api-context.js';

export function removeRaftVoterHandler(node: RaftApiContext) {
  return defineHandler({
    api: RemoveRaftVoter,
    listeners: ['controller'],
    handle: (request) => node.raft.handleRemoveRaftVoter(request),
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null }),
  });
}
