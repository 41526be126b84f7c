/**
 * The shape of a coordinator operation (STYLE.md §6), shared by the group
 * and transaction coordinators as Kafka 4's CoordinatorResult is: it reads
 * the shard's state and returns the records to append and the response to
 * give once they are written. The runtime appends the records as one batch
 * and, when the append succeeds, replays them into the shard; only then is
 * the response released.
 *
 * `replayRecords: false` is Kafka's escape hatch for state an operation has
 * already applied in memory (the classic group protocol); a loading
 * coordinator does replay those records.
 */
import { ErrorCode } from '../protocol/errors.js';

export interface CoordinatorResult<T, R> {
  records: R[];
  response: T;
  replayRecords: boolean;
  /** Written as a transactional batch of this producer (TxnOffsetCommit): the records stay pending until its marker. */
  transaction?: { producerId: number; producerEpoch: number };
  /** Runs after the append (errorCode NONE) or its failure (the mapped error), before the response is released. */
  onAppend?: (errorCode: number) => void;
}

/**
 * Keyed timers whose expiry runs a coordinator operation through the same
 * serialized path as requests. Scheduling a key replaces its previous timer.
 */
export interface CoordinatorTimer<R> {
  schedule(key: string, delayMs: number, operation: () => CoordinatorResult<unknown, R>): void;
  /** Schedules only when no timer is pending under `key`. */
  scheduleIfAbsent(key: string, delayMs: number, operation: () => CoordinatorResult<unknown, R>): void;
  cancel(key: string): void;
  isScheduled(key: string): boolean;
}

/** Maps an append failure to the error a coordinator response carries (Kafka's appendGroupMetadataErrorToResponseError). */
export function appendErrorToResponseError(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return errorCode;
  }
}
