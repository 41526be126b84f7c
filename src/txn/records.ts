/**
 * The records of `__transaction_state`, in Kafka's key/value layouts
 * (TransactionLogKey / TransactionLogValue), one per transactional id; the
 * topic is compacted, so the newest record of an id is its state.
 *
 *   key    int16 key version (0), then the transactional id (string)
 *   value  int16 value version, then
 *            producerId int64, producerEpoch int16,
 *            transactionTimeoutMs int32, transactionStatus int8,
 *            transactionPartitions [topic string, partitionIds []int32]
 *              (nullable: null in Empty),
 *            transactionLastUpdateTimestampMs int64,
 *            transactionStartTimestampMs int64
 *          v1 is flexible and adds tagged previousProducerId (tag 0),
 *          nextProducerId (1) and clientTransactionVersion (2)
 *          or null: a tombstone, the id expired (transactional.id.expiration.ms)
 *
 * Kafka writes value v0 until the transaction.version feature reaches 1,
 * and v1 from there (TransactionVersion.transactionLogValueVersion); the
 * coordinator picks the version by the finalized level when it writes
 * (`valueVersion`). Both versions are read. A key of another version is skipped, as Kafka's loader
 * skips it (a leftover of an aborted upgrade); a value version out of range
 * fails the load.
 */
import { compileStruct, type StructCodec } from '../protocol/codec.js';
import { Reader } from '../protocol/reader.js';
import { array, field, type StructOf } from '../protocol/schema.js';
import { Writer } from '../protocol/writer.js';

const KEY_VERSION = 0;
const VALUE_VERSION_MAX = 1;
/** The value version Kafka writes at a transaction.version level (TransactionVersion.transactionLogValueVersion). */
export function transactionLogValueVersion(transactionVersion: number): number {
  return transactionVersion >= 1 ? 1 : 0;
}

const valueFields = [
  field('producerId', 'int64', '0+'),
  field('previousProducerId', 'int64', '1+', { default: -1, tag: 0 }),
  field('nextProducerId', 'int64', '1+', { default: -1, tag: 1 }),
  field('producerEpoch', 'int16', '0+'),
  field('transactionTimeoutMs', 'int32', '0+'),
  field('transactionStatus', 'int8', '0+'),
  array('transactionPartitions', '0+', [field('topic', 'string', '0+'), field('partitionIds', '[]int32', '0+')], { nullable: '0+' }),
  field('transactionLastUpdateTimestampMs', 'int64', '0+'),
  field('transactionStartTimestampMs', 'int64', '0+'),
  field('clientTransactionVersion', 'int16', '1+', { default: 0, tag: 2 }),
] as const;

export type TransactionLogValue = StructOf<typeof valueFields>;

/** One record: the id and its state, or null (a tombstone). */
export interface TransactionLogRecord {
  transactionalId: string;
  value: TransactionLogValue | null;
  /** Kept in memory by the write that made the record, never written (see TransactionMetadata.lastProducerEpoch). */
  lastProducerEpoch?: number;
  /** The value version to write (0 when absent), by the finalized transaction.version; not read back. */
  valueVersion?: number;
}

export class TransactionLogRecordError extends Error {
  override readonly name = 'TransactionLogRecordError';
}

const keyCodec = compileStruct([field('transactionalId', 'string', '0')], KEY_VERSION, false);
const valueCodecs: StructCodec[] = [compileStruct(valueFields, 0, false), compileStruct(valueFields, 1, true)];

export function encodeTransactionLogRecord(record: TransactionLogRecord): { key: Buffer; value: Buffer | null } {
  const key = new Writer(32);
  key.int16(KEY_VERSION);
  keyCodec.encode(key, { transactionalId: record.transactionalId });
  if (record.value === null) return { key: key.finish(), value: null };
  const version = record.valueVersion ?? 0;
  const value = new Writer(64);
  value.int16(version);
  valueCodecs[version]!.encode(value, record.value as Record<string, unknown>);
  return { key: key.finish(), value: value.finish() };
}

/**
 * Decodes a record as Kafka's TransactionLog.readTxnRecordKey/Value do
 * (null: a key version Spool does not know).
 * Bytes after the last known field are ignored, as Kafka's readers ignore
 * them; anything shorter or of an unknown version throws.
 */
export function decodeTransactionLogRecord(keyBytes: Buffer, valueBytes: Buffer | null): TransactionLogRecord | null {
  const keyReader = new Reader(keyBytes);
  const keyVersion = keyReader.int16();
  if (keyReader.error === null && keyVersion !== KEY_VERSION) return null;
  const { transactionalId } = keyCodec.decode(keyReader) as { transactionalId: string };
  finishRead(keyReader, 'transaction log key');
  if (valueBytes === null) return { transactionalId, value: null };
  const valueReader = new Reader(valueBytes);
  const version = valueReader.int16();
  if (valueReader.error === null && (version < 0 || version > VALUE_VERSION_MAX)) {
    throw new TransactionLogRecordError(`unknown transaction log value version ${version}`);
  }
  const value = valueCodecs[Math.max(0, Math.min(version, VALUE_VERSION_MAX))]!.decode(valueReader) as TransactionLogValue;
  finishRead(valueReader, `transaction log value v${version}`);
  return { transactionalId, value };
}

function finishRead(reader: Reader, what: string): void {
  const error = reader.error as Error | null;
  if (error !== null) throw new TransactionLogRecordError(`${what}: ${error.message}`);
}

export const TRANSACTION_LOG_CODEC = {
  encode: encodeTransactionLogRecord,
  decode: decodeTransactionLogRecord,
};
