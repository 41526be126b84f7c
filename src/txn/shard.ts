/**
 * The transaction coordinator's state for one `__transaction_state`
 * partition (Kafka's TransactionStateManager cache plus the state changes of
 * TransactionCoordinator), as a coordinator shard: every operation returns
 * the TransactionLogValue to write and its response, and the state changes
 * only when `replay` applies a written record, so loading the partition
 * rebuilds exactly this state.
 *
 * Markers: once a PrepareCommit / PrepareAbort record is written (or found
 * when loading), `sendMarkers` hands the transaction to the marker sender,
 * which writes COMMIT / ABORT control batches to every partition of the
 * transaction and then calls `completeTransaction` to write
 * CompleteCommit / CompleteAbort.
 */
import type { Clock } from '../io/clock.js';
import { CoordinatorApiError } from '../coordinator/errors.js';
import type { CoordinatorResult } from '../coordinator/operation.js';
import type { CoordinatorShard, RecordPosition } from '../coordinator/runtime.js';
import { ErrorCode } from '../protocol/errors.js';
import {
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  PRODUCER_EPOCH_MAX,
  fromLogValue,
  hasPartitions,
  isEpochExhausted,
  isExpirationAllowed,
  partitionList,
  toLogValue,
  withPartitions,
  type TransactionMetadata,
} from './metadata.js';
import { transactionLogValueVersion, type TransactionLogRecord } from './records.js';

export type TxnResult<T> = CoordinatorResult<T, TransactionLogRecord>;

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

/** A transaction whose markers must be written. */
export interface PendingMarkers {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  committed: boolean;
  coordinatorEpoch: number;
  partitions: TopicPartitionRef[];
  /** The client version of the transaction, carried by WriteTxnMarkers v2. */
  transactionVersion: number;
}

export interface TxnShardEnvironment {
  partition: number;
  leaderEpoch: number;
  clock: Clock;
  sendMarkers: (markers: PendingMarkers) => void;
  /** The finalized transaction.version: the value version written, and the version of aborts the coordinator starts itself. */
  transactionVersion: () => number;
}

export interface ProducerIdAndEpoch {
  producerId: number;
  producerEpoch: number;
}

export interface InitProducerIdInput {
  transactionalId: string;
  transactionTimeoutMs: number;
  /** KIP-360: the producer's current id and epoch, when it has one. */
  expected: ProducerIdAndEpoch | null;
  /** A fresh producer id, for a new transactional id or an exhausted epoch (see `needsProducerId`). */
  newProducerId: number | null;
}

/** InitProducerId's answer: the id and epoch, or CONCURRENT_TRANSACTIONS after fencing an open transaction. */
export type InitProducerIdResponse = { errorCode: number } & ProducerIdAndEpoch;

export interface EndTxnInput {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  committed: boolean;
  /** 2 for EndTxn v5+ (Transactions V2: the epoch is bumped by every transaction), else 0. */
  clientTransactionVersion: number;
  /** V2: a fresh producer id for a transaction whose epoch is exhausted (see `needsProducerIdToEnd`). */
  newProducerId?: number | null;
}

/** Transactions V2 (KIP-890 part 2): the client's transactions bump the epoch (TransactionVersion.supportsEpochBump). */
export function supportsEpochBump(transactionVersion: number): boolean {
  return transactionVersion >= 2;
}

function fail(errorCode: number, message?: string): never {
  throw new CoordinatorApiError(errorCode, message);
}

function result<T>(records: TransactionLogRecord[], response: T, onAppend?: (errorCode: number) => void): TxnResult<T> {
  return onAppend === undefined ? { records, response, replayRecords: true } : { records, response, replayRecords: true, onAppend };
}

export class TransactionCoordinatorShard implements CoordinatorShard<TransactionLogRecord> {
  readonly transactions = new Map<string, TransactionMetadata>();

  constructor(private readonly env: TxnShardEnvironment) {}

  get coordinatorEpoch(): number {
    return this.env.leaderEpoch;
  }

  // ---- replay

  replay(record: TransactionLogRecord, _position: RecordPosition): void {
    if (record.value === null) {
      this.transactions.delete(record.transactionalId);
      return;
    }
    this.transactions.set(record.transactionalId, fromLogValue(record.transactionalId, record.value, record.lastProducerEpoch ?? NO_PRODUCER_EPOCH));
  }

  replayEndTransaction(): void {
    // __transaction_state is never written in transactions.
  }

  /** Loaded: transactions left between prepare and complete get their markers again (Kafka's loadTransactionsForTxnTopicPartition). */
  onLoaded(): void {
    for (const metadata of this.transactions.values()) {
      if (metadata.state === 'PrepareCommit' || metadata.state === 'PrepareAbort') this.env.sendMarkers(this.markersOf(metadata));
    }
  }

  onUnloaded(): void {}

  /** The record of a state, in the value version of the finalized transaction.version. */
  private recordOf(metadata: TransactionMetadata): TransactionLogRecord {
    const valueVersion = transactionLogValueVersion(this.env.transactionVersion());
    return { transactionalId: metadata.transactionalId, value: toLogValue(metadata), lastProducerEpoch: metadata.lastProducerEpoch, valueVersion };
  }

  // ---- InitProducerId

  /** Whether InitProducerId for this id needs a fresh producer id (new id, or an exhausted epoch to rotate). */
  needsProducerId(transactionalId: string): boolean {
    const metadata = this.transactions.get(transactionalId);
    if (metadata === undefined) return true;
    const settled = metadata.state === 'Empty' || metadata.state === 'CompleteCommit' || metadata.state === 'CompleteAbort';
    return settled && isEpochExhausted(metadata.producerEpoch);
  }

  initProducerId(input: InitProducerIdInput): TxnResult<InitProducerIdResponse> {
    const nowMs = this.env.clock.nowMs();
    const existing = this.transactions.get(input.transactionalId);
    const metadata = existing ?? this.newTransactionalId(input, nowMs);
    if (input.expected !== null && !isValidProducerId(metadata, input.expected)) fail(ErrorCode.PRODUCER_FENCED);
    switch (metadata.state) {
      case 'PrepareCommit':
      case 'PrepareAbort':
        fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      case 'Ongoing':
        // Abort the open transaction under a bumped epoch; the producer retries and gets the next epoch.
        return this.fenceAndAbort(metadata, nowMs, { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
      default: {
        const next = this.bumpedForInit(metadata, input, nowMs);
        const response = { errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.producerEpoch };
        return result([this.recordOf(next)], response);
      }
    }
  }

  private newTransactionalId(input: InitProducerIdInput, nowMs: number): TransactionMetadata {
    if (input.newProducerId === null) fail(ErrorCode.CONCURRENT_TRANSACTIONS, 'no producer id was allocated for a new transactional id');
    return {
      transactionalId: input.transactionalId,
      producerId: input.newProducerId,
      previousProducerId: NO_PRODUCER_ID,
      nextProducerId: NO_PRODUCER_ID,
      producerEpoch: NO_PRODUCER_EPOCH,
      lastProducerEpoch: NO_PRODUCER_EPOCH,
      txnTimeoutMs: input.transactionTimeoutMs,
      state: 'Empty',
      partitions: new Map(),
      txnStartTimestampMs: -1,
      txnLastUpdateTimestampMs: nowMs,
      clientTransactionVersion: 0,
    };
  }

  /** Kafka's prepareIncrementProducerEpoch / prepareProducerIdRotation: the state InitProducerId writes. */
  private bumpedForInit(metadata: TransactionMetadata, input: InitProducerIdInput, nowMs: number): TransactionMetadata {
    const base = {
      ...metadata,
      previousProducerId: metadata.producerId,
      state: 'Empty' as const,
      partitions: new Map(),
      txnTimeoutMs: input.transactionTimeoutMs,
      txnStartTimestampMs: -1,
      txnLastUpdateTimestampMs: nowMs,
    };
    const expectedEpoch = input.expected?.producerEpoch ?? null;
    if (isEpochExhausted(metadata.producerEpoch) && (expectedEpoch === null || expectedEpoch === metadata.producerEpoch)) {
      if (input.newProducerId === null) fail(ErrorCode.CONCURRENT_TRANSACTIONS, 'no producer id was allocated to rotate an exhausted epoch');
      const lastProducerEpoch = expectedEpoch === null ? NO_PRODUCER_EPOCH : metadata.producerEpoch;
      return { ...base, producerId: input.newProducerId, producerEpoch: 0, lastProducerEpoch };
    }
    const bumped = metadata.producerEpoch + 1;
    if (expectedEpoch === null) return { ...base, producerEpoch: bumped, lastProducerEpoch: NO_PRODUCER_EPOCH };
    if (metadata.producerEpoch === NO_PRODUCER_EPOCH || expectedEpoch === metadata.producerEpoch) {
      return { ...base, producerEpoch: bumped, lastProducerEpoch: metadata.producerEpoch };
    }
    // A retry of a bump whose answer the producer never got: the same epoch again.
    if (expectedEpoch === metadata.lastProducerEpoch) return { ...base, producerEpoch: metadata.producerEpoch, lastProducerEpoch: metadata.lastProducerEpoch };
    return fail(ErrorCode.PRODUCER_FENCED, `expected epoch ${expectedEpoch} is neither ${metadata.producerEpoch} nor ${metadata.lastProducerEpoch}`);
  }

  /** Fences the producer (epoch + 1) and aborts its open transaction (Kafka's PrepareEpochFence, then PrepareAbort). */
  private fenceAndAbort<T>(metadata: TransactionMetadata, nowMs: number, response: T): TxnResult<T> {
    return this.prepared(this.fencedAbort(metadata, nowMs), response);
  }

  /**
   * The PrepareAbort state of a fenced transaction: the epoch bumped once
   * to fence, and, at transaction.version 2 (the version of aborts the
   * coordinator starts), bumped again as every V2 transaction end is, the
   * fencing epoch becoming the last one (Kafka's endTransaction with
   * isEpochFence).
   */
  private fencedAbort(metadata: TransactionMetadata, nowMs: number): TransactionMetadata {
    const fenced = Math.min(metadata.producerEpoch + 1, PRODUCER_EPOCH_MAX);
    const version = this.env.transactionVersion();
    const v2 = supportsEpochBump(version);
    return {
      ...metadata,
      previousProducerId: metadata.producerId,
      producerEpoch: v2 ? Math.min(fenced + 1, PRODUCER_EPOCH_MAX) : fenced,
      lastProducerEpoch: v2 ? fenced : NO_PRODUCER_EPOCH,
      state: 'PrepareAbort',
      nextProducerId: NO_PRODUCER_ID,
      txnLastUpdateTimestampMs: nowMs,
      clientTransactionVersion: v2 ? version : 0,
    };
  }

  /** Writes a PrepareCommit / PrepareAbort state and, once it is written, starts the markers. */
  private prepared<T>(next: TransactionMetadata, response: T): TxnResult<T> {
    return result([this.recordOf(next)], response, (errorCode) => {
      if (errorCode === ErrorCode.NONE) this.env.sendMarkers(this.markersOf(next));
    });
  }

  private markersOf(metadata: TransactionMetadata): PendingMarkers {
    return {
      transactionalId: metadata.transactionalId,
      producerId: metadata.producerId,
      producerEpoch: metadata.producerEpoch,
      committed: metadata.state === 'PrepareCommit',
      coordinatorEpoch: this.env.leaderEpoch,
      partitions: partitionList(metadata),
      transactionVersion: metadata.clientTransactionVersion,
    };
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn

  /** The transaction of `producer`, checked as AddPartitionsToTxn checks it. */
  private current(transactionalId: string, producer: ProducerIdAndEpoch): TransactionMetadata {
    const metadata = this.transactions.get(transactionalId);
    if (metadata === undefined || metadata.producerId !== producer.producerId) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (metadata.producerEpoch !== producer.producerEpoch) return fail(ErrorCode.PRODUCER_FENCED);
    if (metadata.state === 'PrepareCommit' || metadata.state === 'PrepareAbort') return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    return metadata;
  }

  /**
   * AddPartitionsToTxn (and AddOffsetsToTxn, and the partitions Produce and
   * TxnOffsetCommit add for a V2 client): the transaction is Ongoing with
   * them, marked with the client's transaction version.
   */
  addPartitions(transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[], clientTransactionVersion = 0): TxnResult<void> {
    const metadata = this.current(transactionalId, producer);
    if (metadata.state === 'Ongoing' && hasPartitions(metadata, partitions)) return result([], undefined);
    const nowMs = this.env.clock.nowMs();
    const starting = metadata.state === 'Empty' || metadata.state === 'CompleteCommit' || metadata.state === 'CompleteAbort';
    const next: TransactionMetadata = {
      ...metadata,
      previousProducerId: metadata.producerId,
      clientTransactionVersion,
      state: 'Ongoing',
      partitions: withPartitions(metadata.partitions, partitions),
      txnStartTimestampMs: starting ? nowMs : metadata.txnStartTimestampMs,
      txnLastUpdateTimestampMs: nowMs,
    };
    return result([this.recordOf(next)], undefined);
  }

  /** KIP-890 verify-only AddPartitionsToTxn: whether each partition is in the open transaction (TRANSACTION_ABORTABLE if not). */
  verifyPartitions(transactionalId: string, producer: ProducerIdAndEpoch, partitions: readonly TopicPartitionRef[]): number[] {
    const metadata = this.current(transactionalId, producer);
    return partitions.map((p) => (hasPartitions(metadata, [p]) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE));
  }

  // ---- EndTxn

  /** Whether EndTxn needs a fresh producer id: a V2 end of a transaction whose epoch is exhausted (the next one starts at epoch 0). */
  needsProducerIdToEnd(transactionalId: string, clientTransactionVersion: number): boolean {
    const metadata = this.transactions.get(transactionalId);
    return supportsEpochBump(clientTransactionVersion) && metadata !== undefined && isEpochExhausted(metadata.producerEpoch);
  }

  endTransaction(input: EndTxnInput): TxnResult<ProducerIdAndEpoch> {
    if (supportsEpochBump(input.clientTransactionVersion)) return this.endTransactionV2(input);
    const metadata = this.transactions.get(input.transactionalId);
    if (metadata === undefined || metadata.producerId !== input.producerId) fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    // Transactions V1: the client never bumps the epoch itself, so it must match exactly.
    if (input.producerEpoch !== metadata.producerEpoch) fail(ErrorCode.PRODUCER_FENCED);
    const current = { producerId: metadata.producerId, producerEpoch: metadata.producerEpoch };
    const wanted = input.committed ? 'Commit' : 'Abort';
    switch (metadata.state) {
      case 'Ongoing': {
        const next: TransactionMetadata = {
          ...metadata,
          previousProducerId: metadata.producerId,
          state: input.committed ? 'PrepareCommit' : 'PrepareAbort',
          txnLastUpdateTimestampMs: this.env.clock.nowMs(),
          clientTransactionVersion: 0,
        };
        return this.prepared(next, current);
      }
      case 'CompleteCommit':
      case 'CompleteAbort':
        // A retry after the transaction completed: the same answer again.
        if (metadata.state === `Complete${wanted}`) return result([], current);
        return fail(ErrorCode.INVALID_TXN_STATE);
      case 'PrepareCommit':
      case 'PrepareAbort':
        if (metadata.state === `Prepare${wanted}`) fail(ErrorCode.CONCURRENT_TRANSACTIONS);
        return fail(ErrorCode.INVALID_TXN_STATE);
      default:
        return fail(ErrorCode.INVALID_TXN_STATE);
    }
  }

  /**
   * EndTxn v5+ (Kafka's endTransaction for Transactions V2): every end
   * bumps the epoch, the new one answered (with a fresh producer id at
   * epoch 0 once the epoch is exhausted). A retry is recognised by its
   * epoch being one below the stored one (or the last epoch of the old id
   * after a rotation). Ending with ABORT is allowed with no transaction
   * open (Empty, CompleteCommit, CompleteAbort): an abort of no partitions.
   *
   *                    Abort            Commit
   *                    retry  current   retry  current
   *   Empty            FENCED bump      FENCED INVALID_TXN_STATE
   *   CompleteAbort    NONE   bump      INVALID_TXN_STATE
   *   CompleteCommit   INVALID bump     NONE   INVALID_TXN_STATE
   */
  private endTransactionV2(input: EndTxnInput): TxnResult<ProducerIdAndEpoch> {
    const metadata = this.transactions.get(input.transactionalId);
    if (metadata === undefined) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const retryOnOverflow = metadata.previousProducerId === input.producerId && input.producerEpoch === PRODUCER_EPOCH_MAX - 1 && metadata.producerEpoch === 0;
    const retryOnEpochBump = metadata.producerEpoch === input.producerEpoch + 1;
    let validEpoch: boolean;
    switch (metadata.state) {
      case 'PrepareCommit':
      case 'PrepareAbort':
        validEpoch = retryOnEpochBump;
        break;
      case 'CompleteCommit':
      case 'CompleteAbort':
        validEpoch = retryOnEpochBump || retryOnOverflow || input.producerEpoch === metadata.producerEpoch;
        break;
      default:
        validEpoch = input.producerEpoch === metadata.producerEpoch;
    }
    if (metadata.producerId !== input.producerId && !retryOnOverflow) fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (!validEpoch) fail(ErrorCode.PRODUCER_FENCED);
    const isRetry = retryOnEpochBump || retryOnOverflow;
    const current = { producerId: metadata.producerId, producerEpoch: metadata.producerEpoch };
    const end = (state: 'PrepareCommit' | 'PrepareAbort', noPartitionAdded: boolean) => this.preparedV2(metadata, input, state, noPartitionAdded);
    switch (metadata.state) {
      case 'Ongoing':
        return end(input.committed ? 'PrepareCommit' : 'PrepareAbort', false);
      case 'CompleteCommit':
        if (input.committed) return isRetry ? result([], current) : fail(ErrorCode.INVALID_TXN_STATE);
        return isRetry ? fail(ErrorCode.INVALID_TXN_STATE) : end('PrepareAbort', true);
      case 'CompleteAbort':
        if (input.committed) return fail(ErrorCode.INVALID_TXN_STATE);
        return isRetry ? result([], current) : end('PrepareAbort', true);
      case 'PrepareCommit':
        return fail(input.committed ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
      case 'PrepareAbort':
        return fail(input.committed ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS);
      case 'Empty':
        return input.committed ? fail(ErrorCode.INVALID_TXN_STATE) : end('PrepareAbort', true);
      default:
        return fail(ErrorCode.INVALID_TXN_STATE);
    }
  }

  /** Kafka's prepareAbortOrCommit at V2: the epoch bumped, the answer the id and epoch the transaction completes with. */
  private preparedV2(metadata: TransactionMetadata, input: EndTxnInput, state: 'PrepareCommit' | 'PrepareAbort', noPartitionAdded: boolean): TxnResult<ProducerIdAndEpoch> {
    let nextProducerId = NO_PRODUCER_ID;
    if (isEpochExhausted(metadata.producerEpoch)) {
      if (input.newProducerId === undefined || input.newProducerId === null) return fail(ErrorCode.CONCURRENT_TRANSACTIONS, 'no producer id was allocated to rotate an exhausted epoch');
      nextProducerId = input.newProducerId;
    }
    const nowMs = this.env.clock.nowMs();
    const next: TransactionMetadata = {
      ...metadata,
      previousProducerId: metadata.producerId,
      nextProducerId,
      producerEpoch: metadata.producerEpoch + 1,
      lastProducerEpoch: metadata.producerEpoch,
      state,
      txnStartTimestampMs: noPartitionAdded ? nowMs : metadata.txnStartTimestampMs,
      txnLastUpdateTimestampMs: nowMs,
      clientTransactionVersion: input.clientTransactionVersion,
    };
    const completed = nextProducerId === NO_PRODUCER_ID ? { producerId: next.producerId, producerEpoch: next.producerEpoch } : { producerId: nextProducerId, producerEpoch: 0 };
    return this.prepared(next, completed);
  }

  /** Every marker is written: CompleteCommit / CompleteAbort, unless the transaction moved on meanwhile. */
  completeTransaction(markers: PendingMarkers): TxnResult<void> {
    const metadata = this.transactions.get(markers.transactionalId);
    const expected = markers.committed ? 'PrepareCommit' : 'PrepareAbort';
    if (metadata === undefined || metadata.state !== expected || metadata.producerEpoch !== markers.producerEpoch || markers.coordinatorEpoch !== this.env.leaderEpoch) {
      return result([], undefined);
    }
    // Kafka's prepareComplete: a V2 transaction that exhausted the epoch continues under the new producer id.
    const rotate = supportsEpochBump(metadata.clientTransactionVersion) && metadata.nextProducerId !== NO_PRODUCER_ID;
    const next: TransactionMetadata = {
      ...metadata,
      previousProducerId: metadata.producerId,
      producerId: rotate ? metadata.nextProducerId : metadata.producerId,
      producerEpoch: rotate ? 0 : metadata.producerEpoch,
      nextProducerId: NO_PRODUCER_ID,
      state: markers.committed ? 'CompleteCommit' : 'CompleteAbort',
      partitions: new Map(),
      txnLastUpdateTimestampMs: this.env.clock.nowMs(),
    };
    return result([this.recordOf(next)], undefined);
  }

  // ---- timeouts and expiration

  /** Aborts, fencing the producer, every transaction open longer than its transaction.timeout.ms (Kafka's abortTimedOutTransactions). */
  abortTimedOutTransactions(): TxnResult<void> {
    const nowMs = this.env.clock.nowMs();
    const records: TransactionLogRecord[] = [];
    const aborted: TransactionMetadata[] = [];
    for (const metadata of this.transactions.values()) {
      if (metadata.state !== 'Ongoing' || metadata.txnStartTimestampMs + metadata.txnTimeoutMs >= nowMs) continue;
      const next = this.fencedAbort(metadata, nowMs);
      records.push(this.recordOf(next));
      aborted.push(next);
    }
    return result(records, undefined, (errorCode) => {
      if (errorCode === ErrorCode.NONE) for (const next of aborted) this.env.sendMarkers(this.markersOf(next));
    });
  }

  /** Tombstones for ids idle longer than transactional.id.expiration.ms (Kafka's removeExpiredTransactionalIds). */
  expireTransactionalIds(expirationMs: number): TxnResult<void> {
    const nowMs = this.env.clock.nowMs();
    const records: TransactionLogRecord[] = [];
    for (const metadata of this.transactions.values()) {
      if (isExpirationAllowed(metadata.state) && metadata.txnLastUpdateTimestampMs <= nowMs - expirationMs) {
        records.push({ transactionalId: metadata.transactionalId, value: null });
      }
    }
    return result(records, undefined);
  }
}

function isValidProducerId(metadata: TransactionMetadata, expected: ProducerIdAndEpoch): boolean {
  return (
    metadata.producerEpoch === NO_PRODUCER_EPOCH ||
    expected.producerId === metadata.producerId ||
    (expected.producerId === metadata.previousProducerId && isEpochExhausted(expected.producerEpoch))
  );
}


