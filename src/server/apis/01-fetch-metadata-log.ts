/**
 * Fetch (key 1), versions 4-18, on the controller listener: KRaft
 * replication of `__cluster_metadata` (KIP-595). Voters and observers
 * (brokers, by their replica id) fetch from the leader with their log end
 * offset and last fetched epoch; the leader answers with batches, with a
 * diverging epoch to truncate to, or with a snapshot id to copy by
 * FetchSnapshot, and holds a fetch that found nothing up to maxWaitMs. The
 * answer is the Raft client's (KafkaRaftClient.handleFetch).
 *
 * Only the metadata partition is served here (topic id
 * AAAAAAAAAAAAAAAAAAAAAQ from v13, the name before): any other request is
 * INVALID_REQUEST, as Kafka's controller answers. Versions before 12 carry
 * no lastFetchedEpoch and are refused with INVALID_REQUEST, as Kafka does.
 */
import { Fetch } from '../../protocol/schemas/01-fetch.js';
import { defineHandler } from '../handler.js';
import { whileRaftOpen } from './raft-request.js';
import type { RaftApiContext } from '../api-context.js';

export function metadataLogFetchHandler(node: RaftApiContext) {
  return defineHandler({
    api: Fetch,
    listeners: ['controller'],
    handle: (request, context) => whileRaftOpen(() => node.raft.handleFetch(request, context.apiVersion)),
    errorResponse: (_request, errorCode) => ({ errorCode, responses: [] }),
  });
}
