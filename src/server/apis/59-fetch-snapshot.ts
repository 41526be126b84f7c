/**
 * FetchSnapshot (key 59), versions 0-1, on the controller listener: a KRaft
 * replica below the leader's log start copies the leader's snapshot in
 * chunks (KIP-630); v1 adds the replica's directory id (KIP-853). Chunks are
 * at most min(maxBytes, 8 MiB). Errors as Kafka: SNAPSHOT_NOT_FOUND,
 * POSITION_OUT_OF_RANGE, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH /
 * NOT_LEADER_OR_FOLLOWER with the current leader.
 */
import { FetchSnapshot } from '../../protocol/schemas/59-fetch-snapshot.js';
import { defineHandler } from '../handler.js';
import { whileRaftOpen } from './raft-request.js';
import type { RaftApiContext } from '../api-context.js';

export function fetchSnapshotHandler(node: RaftApiContext) {
  return defineHandler({
    api: FetchSnapshot,
    handle: (request) => whileRaftOpen(() => node.raft.handleFetchSnapshot(request)),
    errorResponse: (_request, errorCode) => ({ errorCode, topics: [] }),
  });
}
