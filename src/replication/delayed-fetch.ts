/**
 * A fetch waiting for fetch.min.bytes to become readable, for at most
 * max.wait.ms (Kafka's DelayedFetch). Watched under its partitions' keys and
 * woken when their high watermark moves. It completes early, as Kafka's does,
 * when a partition is no longer led here or is gone (cases A-C), its log is
 * offline (D), its leader epoch changed (E), or the fetch position lies past
 * the readable end (F, a truncated leader); otherwise once the bytes that
 * became readable since the first read reach minBytes (G); bytes of a
 * partition the leader throttles for this follower do not count (Kafka's
 * shouldLeaderThrottle, asked at each check). On completion the
 * partitions are read again and the response is built from that read.
 */
import { DelayedOperation } from './purgatory.js';
import type { FetchIsolation, Partition } from './partition.js';

export interface FetchParams {
  /** -1 for consumers; a follower's broker id. */
  replicaId: number;
  /** A follower's broker epoch (Fetch v15+ ReplicaState), else -1. */
  replicaEpoch?: number;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolation: FetchIsolation;
  fetchOnlyFromLeader: boolean;
  /**
   * A v11+ consumer that named its rack (KIP-392, Kafka's ClientMetadata):
   * the leader may answer with a preferred read replica. Null otherwise, and
   * while no replica.selector.class is set (no object per fetch then).
   */
  clientMetadata?: ClientMetadata | null;
}

/** What the replica selector knows of a consumer (Kafka's ClientMetadata, less what no selector here reads). */
export interface ClientMetadata {
  rackId: string;
  /** The listener the fetch came on: replicas are offered with their endpoints there. */
  listenerName: string;
}

/** One partition of a waiting fetch, as it stood at the first read. */
export interface FetchPartitionStatus {
  key: string;
  fetchOffset: number;
  currentLeaderEpoch: number;
  partitionMaxBytes: number;
  /** The partition object read the first time (a recreated partition is a different one). */
  partition: Partition | null;
  bytesRead: number;
  /** partition.readableBytes(isolation) at the first read. */
  visibleBytesAtRead: number;
  /** A follower's high watermark as it sent it (KIP-1166): the fetch completes once the leader's is past it. */
  replicaHighWatermark: number;
}

export class DelayedFetch extends DelayedOperation {
  constructor(
    private readonly params: FetchParams,
    readonly statuses: readonly FetchPartitionStatus[],
    private readonly partitionOf: (key: string) => Partition | null,
    private readonly complete: () => void,
    /** Whether the leader throttles this follower on the partition now; null when no partition is throttled. */
    private readonly leaderThrottled: ((partition: Partition) => boolean) | null = null,
  ) {
    super(params.maxWaitMs);
  }

  tryComplete(): boolean {
    let accumulatedBytes = 0;
    for (const status of this.statuses) {
      if (status.partition === null) continue;
      const partition = this.partitionOf(status.key);
      if (partition !== status.partition) return this.forceComplete();
      const snapshot = partition.fetchOffsetSnapshot(status.currentLeaderEpoch, this.params.fetchOnlyFromLeader);
      if ('error' in snapshot) return this.forceComplete();
      const endOffset = endOffsetFor(this.params.isolation, snapshot.snapshot);
      if (status.fetchOffset > endOffset) return this.forceComplete();
      if (snapshot.snapshot.highWatermark > status.replicaHighWatermark) return this.forceComplete();
      if (status.fetchOffset < endOffset && this.leaderThrottled?.(partition) !== true) {
        const available = status.bytesRead + (partition.readableBytes(this.params.isolation) - status.visibleBytesAtRead);
        accumulatedBytes += Math.min(available, status.partitionMaxBytes);
      }
    }
    return accumulatedBytes >= this.params.minBytes ? this.forceComplete() : false;
  }

  protected onComplete(): void {
    this.complete();
  }
}

export function endOffsetFor(isolation: FetchIsolation, offsets: { logEndOffset: number; highWatermark: number; lastStableOffset: number }): number {
  if (isolation === 'logEnd') return offsets.logEndOffset;
  return isolation === 'highWatermark' ? offsets.highWatermark : offsets.lastStableOffset;
}
