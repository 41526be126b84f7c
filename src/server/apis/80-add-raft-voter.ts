/**
 * AddRaftVoter (key 80), versions 0-1, on the controller listener (KIP-853):
 * adds a controller that follows the log as an observer to the voters of a
 * kraft.version 1 quorum. v1 adds AckWhenCommitted (false: answer once the
 * VotersRecord is appended). The answer is the Raft leader's, with Kafka's
 * rules (KafkaRaftClient.handleAddVoterRequest, AddVoterHandler):
 * INCONSISTENT_CLUSTER_ID; INVALID_REQUEST without a directory id or an
 * endpoint on the controller listener; NOT_LEADER_OR_FOLLOWER off the
 * leader; REQUEST_TIMED_OUT while another change is in flight, before the
 * leader committed in its epoch, while the last VotersRecord is uncommitted,
 * when the new voter is not a caught-up observer, or when the change does not
 * commit within TimeoutMs; UNSUPPORTED_VERSION at kraft.version 0;
 * DUPLICATE_VOTER for an id already voting.
 *
 * Not done: the leader does not ask the new voter for its kraft.version range
 * (ApiVersions) and records Spool's own (0-1); no ALTER CLUSTER
 * authorization. Brokers do not serve it (Kafka forwards it from a broker
 * listener to the controller).
 */
import { AddRaftVoter } from '../../protocol/schemas/80-add-raft-voter.js';
import { defineHandler } from '../handler.js';
import type { RaftApiContext } from '../api-context.js';

export function addRaftVoterHandler(node: RaftApiContext) {
  return defineHandler({
    api: AddRaftVoter,
    listeners: ['controller'],
    handle: (request) => node.raft.handleAddRaftVoter(request),
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null }),
  });
}
