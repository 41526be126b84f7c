/**
 * What a controller operation returns (Kafka's ControllerResult): the records
 * to append to `__cluster_metadata` and the response to give once they are
 * committed. Operations never change state themselves; state changes when
 * the records are replayed, on the leader as on every follower and after a
 * restart.
 */
import type { MetadataRecord } from '../metadata/records.js';

export interface ControllerResult<T> {
  records: MetadataRecord[];
  response: T;
}

/** A Kafka error as the controller reports it: a code from protocol/errors.ts and its message. */
export interface ApiError {
  errorCode: number;
  errorMessage: string | null;
}

/**
 * Kafka's QuorumController.MAX_RECORDS_PER_USER_OP: an operation that would
 * write more records fails as a whole with POLICY_VIOLATION.
 */
export const MAX_RECORDS_PER_USER_OP = 10_000;
export const EXCESSIVE_BATCH_MESSAGE = 'Unable to perform excessively large batch operation.';

export function result<T>(records: MetadataRecord[], response: T): ControllerResult<T> {
  return { records, response };
}
