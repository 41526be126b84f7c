/**
 * An acks=all produce waiting until every in-sync replica has the appended
 * batches, i.e. until each partition's high watermark reaches the offset
 * after its append (Kafka's DelayedProduce). Watched under the partitions'
 * keys; woken when their high watermark moves. A partition still waiting when
 * timeoutMs fires answers REQUEST_TIMED_OUT (its records stay in the log, as
 * in Kafka).
 */
import { ErrorCode } from '../protocol/errors.js';
import { DelayedOperation } from './purgatory.js';
import type { Partition } from './partition.js';

export interface ProducePartitionStatus {
  key: string;
  /** The offset the high watermark must reach: last appended offset + 1. */
  requiredOffset: number;
  acksPending: boolean;
  errorCode: number;
}

export class DelayedProduce extends DelayedOperation {
  constructor(
    delayMs: number,
    readonly statuses: ProducePartitionStatus[],
    private readonly partitionOf: (key: string) => Partition | { errorCode: number },
    private readonly respond: (statuses: readonly ProducePartitionStatus[]) => void,
  ) {
    super(delayMs);
    for (const status of statuses) {
      // Kafka starts every partition that still waits at REQUEST_TIMED_OUT, cleared once acknowledged.
      if (status.errorCode === ErrorCode.NONE) {
        status.acksPending = true;
        status.errorCode = ErrorCode.REQUEST_TIMED_OUT;
      } else {
        status.acksPending = false;
      }
    }
  }

  tryComplete(): boolean {
    for (const status of this.statuses) {
      if (!status.acksPending) continue;
      const partition = this.partitionOf(status.key);
      if (!('checkEnoughReplicasReachOffset' in partition)) {
        status.acksPending = false;
        status.errorCode = partition.errorCode;
        continue;
      }
      const { hasEnough, errorCode } = partition.checkEnoughReplicasReachOffset(status.requiredOffset);
      if (errorCode !== ErrorCode.NONE) {
        status.acksPending = false;
        status.errorCode = errorCode;
      } else if (hasEnough) {
        status.acksPending = false;
        status.errorCode = ErrorCode.NONE;
      }
    }
    return this.statuses.every((status) => !status.acksPending) ? this.forceComplete() : false;
  }

  protected onComplete(): void {
    this.respond(this.statuses);
  }
}
