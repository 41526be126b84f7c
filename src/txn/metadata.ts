/**
 * One transactional id's state at its coordinator (Kafka's
 * TransactionMetadata), and the states of a transaction:
 *
 *   Empty ──AddPartitions/AddOffsets──▶ Ongoing ──EndTxn──▶ PrepareCommit / PrepareAbort
 *     ▲                                                       │ markers written
 *     └──── InitProducerId ◀── CompleteCommit / CompleteAbort ◀┘
 *
 * A new InitProducerId, or the transaction timing out, while Ongoing fences
 * the producer: the epoch is bumped and the transaction goes to PrepareAbort
 * (Kafka passes through PrepareEpochFence in memory only; it is never
 * written). Dead is an expired id, written as a tombstone.
 */
import type { TransactionLogValue } from './records.js';

export const TransactionState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const;
export type TransactionStateName = keyof typeof TransactionState;

const STATE_NAMES = Object.keys(TransactionState) as TransactionStateName[];

export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
/** Short.MaxValue: an epoch this high cannot be bumped again (Kafka's isEpochExhausted: >= Short.MaxValue - 1). */
export const PRODUCER_EPOCH_MAX = 32767;

export function isEpochExhausted(producerEpoch: number): boolean {
  return producerEpoch >= PRODUCER_EPOCH_MAX - 1;
}

export interface TransactionMetadata {
  transactionalId: string;
  producerId: number;
  previousProducerId: number;
  nextProducerId: number;
  producerEpoch: number;
  /** The epoch before the last bump, to recognise a retried InitProducerId; not written (-1 after a load, as in Kafka). */
  lastProducerEpoch: number;
  txnTimeoutMs: number;
  state: TransactionStateName;
  /** topic → partitions in the transaction. */
  partitions: Map<string, Set<number>>;
  txnStartTimestampMs: number;
  txnLastUpdateTimestampMs: number;
  clientTransactionVersion: number;
}

export function stateName(id: number): TransactionStateName {
  const name = STATE_NAMES[id];
  if (name === undefined) throw new RangeError(`unknown transaction state id ${id}`);
  return name;
}

/** States from which the id may expire (Kafka's isExpirationAllowed). */
export function isExpirationAllowed(state: TransactionStateName): boolean {
  return state === 'Empty' || state === 'CompleteCommit' || state === 'CompleteAbort';
}

export function partitionList(metadata: Pick<TransactionMetadata, 'partitions'>): { topic: string; partition: number }[] {
  const list: { topic: string; partition: number }[] = [];
  for (const [topic, partitions] of metadata.partitions) for (const partition of partitions) list.push({ topic, partition });
  return list;
}

export function hasPartitions(metadata: TransactionMetadata, partitions: readonly { topic: string; partition: number }[]): boolean {
  return partitions.every(({ topic, partition }) => metadata.partitions.get(topic)?.has(partition) === true);
}

export function withPartitions(current: ReadonlyMap<string, ReadonlySet<number>>, added: readonly { topic: string; partition: number }[]): Map<string, Set<number>> {
  const merged = new Map<string, Set<number>>();
  for (const [topic, partitions] of current) merged.set(topic, new Set(partitions));
  for (const { topic, partition } of added) {
    let set = merged.get(topic);
    if (set === undefined) merged.set(topic, (set = new Set()));
    set.add(partition);
  }
  return merged;
}

/** The record value of a state (Kafka's TransactionLog.valueToBytes: no partitions in Empty). */
export function toLogValue(metadata: TransactionMetadata): TransactionLogValue {
  const transactionPartitions =
    metadata.state === 'Empty' ? null : [...metadata.partitions].map(([topic, partitions]) => ({ topic, partitionIds: [...partitions] }));
  return {
    producerId: metadata.producerId,
    previousProducerId: metadata.previousProducerId,
    nextProducerId: metadata.nextProducerId,
    producerEpoch: metadata.producerEpoch,
    transactionTimeoutMs: metadata.txnTimeoutMs,
    transactionStatus: TransactionState[metadata.state],
    transactionPartitions,
    transactionLastUpdateTimestampMs: metadata.txnLastUpdateTimestampMs,
    transactionStartTimestampMs: metadata.txnStartTimestampMs,
    clientTransactionVersion: metadata.clientTransactionVersion,
  };
}

export function fromLogValue(transactionalId: string, value: TransactionLogValue, lastProducerEpoch: number): TransactionMetadata {
  const state = stateName(value.transactionStatus);
  const partitions = new Map<string, Set<number>>();
  if (state !== 'Empty') for (const { topic, partitionIds } of value.transactionPartitions ?? []) partitions.set(topic, new Set(partitionIds));
  return {
    transactionalId,
    producerId: value.producerId,
    previousProducerId: value.previousProducerId,
    nextProducerId: value.nextProducerId,
    producerEpoch: value.producerEpoch,
    lastProducerEpoch,
    txnTimeoutMs: value.transactionTimeoutMs,
    state,
    partitions,
    txnStartTimestampMs: value.transactionStartTimestampMs,
    txnLastUpdateTimestampMs: value.transactionLastUpdateTimestampMs,
    clientTransactionVersion: value.clientTransactionVersion,
  };
}
