/**
 * What the replica manager and its partitions report as they work, for the
 * metrics endpoint (src/insight/): Kafka's BrokerTopicStats (bytes and
 * messages in and out per topic, failed produce and fetch requests) and the
 * ReplicaManager's ISR meters. Calls come once per batch, per partition of
 * a request or per ISR change, never per record, and carry only what the
 * caller already holds, so the no-op default costs a call and nothing else.
 * Gauges (partition counts, log end offsets) are not reported here: the
 * metrics read them from the replica manager when scraped.
 */

/** How an ISR change proposed by this leader ended (Kafka's AlterPartitionListener). */
export type IsrUpdate = 'shrink' | 'expand' | 'failed';

export interface ReplicationStats {
  /** A produce request's partition reached the leader's append (Kafka's TotalProduceRequestsPerSec). */
  produceRequest(topic: string): void;
  /** A batch appended as leader, not a duplicate (BytesInPerSec, MessagesInPerSec). */
  appended(topic: string, bytes: number, records: number): void;
  /** An append refused with an error Kafka counts as a failure (FailedProduceRequestsPerSec). */
  failedProduce(topic: string): void;
  /** One partition of a fetch response, before it is sent (TotalFetchRequestsPerSec, BytesOutPerSec or ReplicationBytesOutPerSec). */
  fetched(topic: string, bytes: number, options: { fromFollower: boolean }): void;
  /** Whole batches a follower fetcher appended from its leader (ReplicationBytesInPerSec, all topics only as Kafka's). */
  replicationBytesIn(bytes: number): void;
  /** A fetched partition answered with an error Kafka counts as a failure (FailedFetchRequestsPerSec). */
  failedFetch(topic: string): void;
  /** An ISR change this broker proposed as leader was answered. */
  isrUpdated(update: IsrUpdate): void;
  /** A log flush that fsynced something took `durationMs` (Kafka's LogFlushStats). */
  logFlushed(durationMs: number): void;
}

/** Reports to nobody: the replica manager's stats while no metrics listener is configured. */
export const NO_REPLICATION_STATS: ReplicationStats = {
  produceRequest() {},
  appended() {},
  failedProduce() {},
  fetched() {},
  replicationBytesIn() {},
  failedFetch() {},
  isrUpdated() {},
  logFlushed() {},
};
