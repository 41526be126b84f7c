/**
 * A SharePersister kept in memory for the group coordinator's share-group
 * tests: it records every call, keeps each share partition's start offset,
 * state epoch and delivery-complete count, and fails the partitions a test
 * names with the error it names.
 */
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  UNINITIALIZED_START_OFFSET,
  shareCoordinatorKey,
  type PersisterResult,
  type ReadStateResult,
  type ReadSummaryResult,
  type SharePartitionKey,
  type SharePersister,
  type WriteStateInput,
} from '../../src/share/persister.js';

export interface StoredShareState {
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: number;
  deliveryCompleteCount: number;
}

export type PersisterCall =
  | { op: 'initialize'; key: string; stateEpoch: number; startOffset: number }
  | { op: 'delete'; key: string }
  | { op: 'readSummary'; key: string };

export class MemorySharePersister implements SharePersister {
  readonly states = new Map<string, StoredShareState>();
  readonly calls: PersisterCall[] = [];
  /** Keys (`group:topicId:partition`) whose calls fail, with the error code. */
  readonly failing = new Map<string, number>();

  private failure(key: string): PersisterResult | null {
    const errorCode = this.failing.get(key);
    return errorCode === undefined ? null : { errorCode, errorMessage: `injected ${errorCode}` };
  }

  async initializeState(key: SharePartitionKey, input: { stateEpoch: number; startOffset: number }): Promise<PersisterResult> {
    const text = shareCoordinatorKey(key);
    this.calls.push({ op: 'initialize', key: text, ...input });
    const failed = this.failure(text);
    if (failed !== null) return failed;
    this.states.set(text, { stateEpoch: input.stateEpoch, leaderEpoch: 0, startOffset: input.startOffset, deliveryCompleteCount: 0 });
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  async readState(key: SharePartitionKey): Promise<ReadStateResult> {
    const state = this.states.get(shareCoordinatorKey(key));
    return { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: state?.stateEpoch ?? 0, startOffset: state?.startOffset ?? UNINITIALIZED_START_OFFSET, stateBatches: [] };
  }

  async writeState(key: SharePartitionKey, input: WriteStateInput): Promise<PersisterResult> {
    this.states.set(shareCoordinatorKey(key), { stateEpoch: input.stateEpoch, leaderEpoch: input.leaderEpoch, startOffset: input.startOffset, deliveryCompleteCount: input.deliveryCompleteCount });
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  async deleteState(key: SharePartitionKey): Promise<PersisterResult> {
    const text = shareCoordinatorKey(key);
    this.calls.push({ op: 'delete', key: text });
    const failed = this.failure(text);
    if (failed !== null) return failed;
    this.states.delete(text);
    return { errorCode: ErrorCode.NONE, errorMessage: null };
  }

  async readSummary(key: SharePartitionKey): Promise<ReadSummaryResult> {
    const text = shareCoordinatorKey(key);
    this.calls.push({ op: 'readSummary', key: text });
    const failed = this.failure(text);
    if (failed !== null) return { ...failed, stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 };
    const state = this.states.get(text);
    if (state === undefined) return { errorCode: ErrorCode.NONE, errorMessage: null, stateEpoch: 0, leaderEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: -1 };
    return { errorCode: ErrorCode.NONE, errorMessage: null, ...state };
  }

  callsOf(op: PersisterCall['op']): PersisterCall[] {
    return this.calls.filter((c) => c.op === op);
  }
}
