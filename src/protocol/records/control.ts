/**
 * Control records (KIP-98): single-record batches with the control bit set
 * that the transaction coordinator writes into data partitions to end a
 * transaction, and that Raft writes into __cluster_metadata.
 *
 *   key:   version int16 (0), type int16
 *          (0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, 3 SNAPSHOT_HEADER,
 *           4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS)
 *   value: for ABORT / COMMIT, the EndTxnMarker: version int16 (0),
 *          coordinatorEpoch int32
 *
 * A marker batch is transactional, uncompressed, CreateTime, carries the
 * producer id and epoch of the transaction it ends, and has no sequence.
 */
import { NO_SEQUENCE, type BatchError } from './batch.js';
import { buildBatch, type Record } from './records.js';

export const ControlRecordType = {
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
} as const;
export type ControlRecordTypeName = keyof typeof ControlRecordType;

const CONTROL_KEY_VERSION = 0;
const CONTROL_KEY_BYTES = 4;
const END_TXN_MARKER_VERSION = 0;
const END_TXN_MARKER_BYTES = 6;

export interface ControlBatchOptions {
  type: 'COMMIT' | 'ABORT';
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  timestamp: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
}

/** An end-transaction marker batch, as the transaction coordinator has partition leaders write it. */
export function buildControlBatch(options: ControlBatchOptions): Buffer {
  const key = Buffer.alloc(CONTROL_KEY_BYTES);
  key.writeInt16BE(CONTROL_KEY_VERSION, 0);
  key.writeInt16BE(ControlRecordType[options.type], 2);
  const value = Buffer.alloc(END_TXN_MARKER_BYTES);
  value.writeInt16BE(END_TXN_MARKER_VERSION, 0);
  value.writeInt32BE(options.coordinatorEpoch, 2);
  return buildBatch({
    records: [{ key, value, timestamp: options.timestamp }],
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    baseSequence: NO_SEQUENCE,
    isTransactional: true,
    isControl: true,
    baseOffset: options.baseOffset ?? 0,
    ...(options.partitionLeaderEpoch === undefined ? {} : { partitionLeaderEpoch: options.partitionLeaderEpoch }),
  });
}

export interface ControlRecord {
  /** The control key's version. */
  version: number;
  type: ControlRecordTypeName | 'UNKNOWN';
  /** The numeric type, kept for unknown types. */
  typeId: number;
  /** For COMMIT / ABORT: the coordinator epoch of the marker; null otherwise. */
  coordinatorEpoch: number | null;
}

/**
 * Reads a record of a control batch. A key shorter than 4 bytes, or a
 * marker value shorter than 6, is an error value. Newer key versions are
 * read by their first four bytes, as Kafka does.
 */
export function readControlRecord(record: Record): ControlRecord | BatchError {
  const key = record.key;
  if (key === null || key.length < CONTROL_KEY_BYTES) {
    return { code: 'INVALID_RECORD', message: `control record key has ${key?.length ?? 'null'} bytes, need 4` };
  }
  const typeId = key.readInt16BE(2);
  const type = typeName(typeId);
  const control: ControlRecord = { version: key.readInt16BE(0), type, typeId, coordinatorEpoch: null };
  if (type !== 'COMMIT' && type !== 'ABORT') return control;
  const value = record.value;
  if (value === null || value.length < END_TXN_MARKER_BYTES) {
    return { code: 'INVALID_RECORD', message: `end transaction marker has ${value?.length ?? 'null'} bytes, need 6` };
  }
  control.coordinatorEpoch = value.readInt32BE(2);
  return control;
}

function typeName(typeId: number): ControlRecordTypeName | 'UNKNOWN' {
  for (const [name, id] of Object.entries(ControlRecordType)) {
    if (id === typeId) return name as ControlRecordTypeName;
  }
  return 'UNKNOWN';
}
