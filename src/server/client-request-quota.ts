/**
 * Request quotas (KIP-124; Kafka's ClientRequestQuotaManager):
 * request_percentage bounds the share of request-handling time a user /
 * client-id may take, resolved over the entities as the byte-rate quotas
 * are. Kafka records each request's handler-thread time as a percentage
 * of one thread (nanoseconds × 100 / 1e9 per second, over Rate's window)
 * and throttles a client over the bound for (rate - bound) / bound ×
 * window, at most one window (quota.window.size.seconds).
 *
 * Spool serves every request on one event loop, so 100 is the whole loop.
 * What a request is charged, the defensible equivalent of Kafka's
 * request-thread time: the time its handler runs before its first wait
 * (the synchronous part, while the loop does nothing else). Waits (a
 * purgatory, an acks=all replication, a long-poll Fetch, the controller's
 * commit, a file write) and the work done after them are not charged, nor
 * are decoding the request and encoding the response. So a request is
 * charged at most what it held the loop for, never the time it waited:
 * an under-count for handlers that do much work after a wait.
 *
 * Exempt, as Kafka's: requests on controller listeners (Kafka's
 * controller keeps request quotas of its own; Spool's does not, see
 * docs/SKIPPED.md), SASL (Kafka authenticates in the network layer),
 * WriteTxnMarkers and follower Fetch (cluster actions), Produce with
 * acks=0 (Kafka neither records nor throttles it), and requests answered
 * with no response.
 */

const SASL_HANDSHAKE_KEY = 17;
const SASL_AUTHENTICATE_KEY = 36;
const WRITE_TXN_MARKERS_KEY = 27;
const PRODUCE_KEY = 0;
const FETCH_KEY = 1;

/** True for the requests Kafka does not charge to request_percentage (see the module comment). */
export function exemptFromRequestQuota(apiKey: number, body: Record<string, unknown>): boolean {
  if (apiKey === SASL_HANDSHAKE_KEY || apiKey === SASL_AUTHENTICATE_KEY || apiKey === WRITE_TXN_MARKERS_KEY) return true;
  if (apiKey === PRODUCE_KEY) return body.acks === 0;
  if (apiKey === FETCH_KEY) {
    const state = body.replicaState as { replicaId?: number } | undefined;
    const replicaId = typeof body.replicaId === 'number' && body.replicaId >= 0 ? body.replicaId : (state?.replicaId ?? -1);
    return replicaId >= 0;
  }
  return false;
}
