/**
 * Group coordinator operations: the shared coordinator result (see
 * coordinator/operation.ts) over `__consumer_offsets` records.
 *
 * `appliedResult` is the classic protocol's case of `replayRecords: false`:
 * a classic rebalance keeps its membership in memory (Kafka does the same)
 * and writes a GroupMetadataValue snapshot at fixed points; the operation
 * has already applied that snapshot, so replaying it would only rebuild the
 * same group and drop the members waiting on JoinGroup/SyncGroup.
 */
import type { CoordinatorResult as BaseResult, CoordinatorTimer as BaseTimer } from '../coordinator/operation.js';
import type { GroupRecord } from './records.js';

export type CoordinatorResult<T> = BaseResult<T, GroupRecord>;
export type CoordinatorTimer = BaseTimer<GroupRecord>;

export function coordinatorResult<T>(records: GroupRecord[], response: T): CoordinatorResult<T> {
  return { records, response, replayRecords: true };
}

/** A result whose effect the operation applied in memory already (classic protocol). */
export function appliedResult<T>(records: GroupRecord[], response: T, onAppend?: (errorCode: number) => void): CoordinatorResult<T> {
  return onAppend === undefined ? { records, response, replayRecords: false } : { records, response, replayRecords: false, onAppend };
}

export const EMPTY_RESULT: CoordinatorResult<void> = { records: [], response: undefined, replayRecords: true };
