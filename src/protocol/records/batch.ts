/**
 * Record batch v2 (magic 2, KIP-98): a zero-copy view over the 61-byte batch
 * header, validation, and the in-place rewrites the broker makes on the hot
 * path (DESIGN.md §3.3: batches stay opaque, compressed stays compressed).
 *
 * Layout, all big-endian:
 *
 *   0  baseOffset            int64   ┐ log overhead (12 bytes)
 *   8  batchLength           int32   ┘ bytes after this field
 *  12  partitionLeaderEpoch  int32
 *  16  magic                 int8    (2; at byte 16 in every message format)
 *  17  crc                   uint32  CRC-32C of bytes 21..end
 *  21  attributes            int16   bits 0-2 compression, 3 timestampType,
 *                                    4 isTransactional, 5 isControl,
 *                                    6 hasDeleteHorizonMs (KIP-534)
 *  23  lastOffsetDelta       int32
 *  27  baseTimestamp         int64   (the delete horizon when bit 6 is set)
 *  35  maxTimestamp          int64
 *  43  producerId            int64
 *  51  producerEpoch         int16
 *  53  baseSequence          int32
 *  57  recordCount           int32
 *  61  records...
 *
 * baseOffset, batchLength and partitionLeaderEpoch sit before the CRC-covered
 * range, so assigning offsets and stamping the leader epoch never touch the
 * CRC; switching to LogAppendTime does, and recomputes it.
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { readInt64, writeInt64 } from '../int64.js';

/** Bytes from the batch start to the first record. */
export const BATCH_HEADER_BYTES = 61;
/** baseOffset + batchLength: the bytes not counted by batchLength. */
export const BATCH_OVERHEAD_BYTES = 12;
export const MAGIC_V2 = 2;

/** Byte position of each header field, from the start of the batch. */
export const BATCH_FIELD = {
  baseOffset: 0,
  batchLength: 8,
  partitionLeaderEpoch: 12,
  magic: 16,
  crc: 17,
  attributes: 21,
  lastOffsetDelta: 23,
  baseTimestamp: 27,
  maxTimestamp: 35,
  producerId: 43,
  producerEpoch: 51,
  baseSequence: 53,
  recordCount: 57,
  records: 61,
} as const;

export const COMPRESSION_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_MASK = 0x10;
export const CONTROL_MASK = 0x20;
export const DELETE_HORIZON_MASK = 0x40;

/** Compression codec ids in the attributes' low three bits. */
export const Compression = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
export type CompressionId = (typeof Compression)[keyof typeof Compression];
export const TimestampType = { createTime: 0, logAppendTime: 1 } as const;

/** Kafka's RecordBatch.NO_PRODUCER_ID / NO_SEQUENCE / NO_TIMESTAMP / NO_PARTITION_LEADER_EPOCH. */
export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_TIMESTAMP = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

export interface BatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  /** 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd (5-7 are not codecs). */
  compression: number;
  /** 0 CreateTime, 1 LogAppendTime. */
  timestampType: 0 | 1;
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizon: boolean;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
  /** baseOffset + lastOffsetDelta. */
  lastOffset: number;
  /** Whole batch on the wire: batchLength + 12. */
  sizeBytes: number;
}

/** CRC-32C (Castagnoli), as Kafka uses for batch v2. One import point for the project. */
export function crc32c(data: Uint8Array, initial?: number): number {
  return nativeCrc32c(data, initial);
}

/**
 * Reads the header at `position`. The caller guarantees 61 bytes are there
 * (validateBatch checks it); int64 fields are read as src/protocol/int64.ts
 * says (a nanosecond timestamp is the nearest double, as valid as Kafka
 * finds it).
 */
export function readBatchHeader(buffer: Buffer, position = 0): BatchHeader {
  const attributes = buffer.readInt16BE(position + BATCH_FIELD.attributes);
  const baseOffset = readInt64(buffer, position + BATCH_FIELD.baseOffset);
  const batchLength = buffer.readInt32BE(position + BATCH_FIELD.batchLength);
  const lastOffsetDelta = buffer.readInt32BE(position + BATCH_FIELD.lastOffsetDelta);
  return {
    baseOffset,
    batchLength,
    partitionLeaderEpoch: buffer.readInt32BE(position + BATCH_FIELD.partitionLeaderEpoch),
    magic: buffer.readInt8(position + BATCH_FIELD.magic),
    crc: buffer.readUInt32BE(position + BATCH_FIELD.crc),
    attributes,
    compression: attributes & COMPRESSION_MASK,
    timestampType: (attributes & TIMESTAMP_TYPE_MASK) === 0 ? 0 : 1,
    isTransactional: (attributes & TRANSACTIONAL_MASK) !== 0,
    isControl: (attributes & CONTROL_MASK) !== 0,
    hasDeleteHorizon: (attributes & DELETE_HORIZON_MASK) !== 0,
    lastOffsetDelta,
    baseTimestamp: readInt64(buffer, position + BATCH_FIELD.baseTimestamp),
    maxTimestamp: readInt64(buffer, position + BATCH_FIELD.maxTimestamp),
    producerId: readInt64(buffer, position + BATCH_FIELD.producerId),
    producerEpoch: buffer.readInt16BE(position + BATCH_FIELD.producerEpoch),
    baseSequence: buffer.readInt32BE(position + BATCH_FIELD.baseSequence),
    recordCount: buffer.readInt32BE(position + BATCH_FIELD.recordCount),
    lastOffset: baseOffset + lastOffsetDelta,
    sizeBytes: batchLength + BATCH_OVERHEAD_BYTES,
  };
}

/**
 * Total bytes of the batch starting at `position` (batchLength + 12), read
 * from its first 12 bytes; null when fewer than 12 bytes are left. The size
 * is as declared: it may exceed the buffer, or be below the header size.
 */
export function batchSizeAt(buffer: Buffer, position: number): number | null {
  if (buffer.length - position < BATCH_OVERHEAD_BYTES) return null;
  return buffer.readInt32BE(position + BATCH_FIELD.batchLength) + BATCH_OVERHEAD_BYTES;
}

export type BatchErrorCode =
  | 'CORRUPT_MESSAGE'
  | 'INVALID_RECORD'
  | 'UNSUPPORTED_COMPRESSION_TYPE'
  | 'MESSAGE_TOO_LARGE';

export interface BatchError {
  code: BatchErrorCode;
  message: string;
}

/**
 * Who is appending, in Kafka's AppendOrigin words. Only client batches get the
 * producer-side checks (exact count, no control batches, sequence present);
 * the log, replication and coordinators may carry compacted or control batches.
 */
export type AppendOrigin = 'client' | 'coordinator' | 'replication' | 'raftLeader' | 'log';

export interface ValidateOptions {
  /** Default 'client'. */
  origin?: AppendOrigin;
}

/** Smallest record: length, attributes, timestampDelta, offsetDelta, key, value, header count: 1 byte each. */
export const RECORD_BYTES_MIN = 7;

/**
 * Checks the batch at `position` as Kafka does before appending it: framing,
 * magic, CRC-32C, codec id, and record count against the offset range.
 * Returns null when valid. Never throws.
 */
export function validateBatch(buffer: Buffer, position = 0, options: ValidateOptions = {}): BatchError | null {
  const available = buffer.length - position;
  if (available < BATCH_HEADER_BYTES) {
    return corrupt(`record batch has ${available} bytes, fewer than the ${BATCH_HEADER_BYTES}-byte header`);
  }
  const sizeBytes = batchSizeAt(buffer, position)!;
  if (sizeBytes < BATCH_HEADER_BYTES) {
    return corrupt(`record batch size ${sizeBytes} is smaller than the minimum overhead ${BATCH_HEADER_BYTES}`);
  }
  if (sizeBytes > available) {
    return corrupt(`record batch declares ${sizeBytes} bytes but only ${available} are present`);
  }
  const magic = buffer.readInt8(position + BATCH_FIELD.magic);
  if (magic !== MAGIC_V2) {
    return invalid(`record batch has magic ${magic}; only magic ${MAGIC_V2} is supported`);
  }
  const stored = buffer.readUInt32BE(position + BATCH_FIELD.crc);
  const computed = crc32c(buffer.subarray(position + BATCH_FIELD.attributes, position + sizeBytes));
  if (stored !== computed) {
    return corrupt(`record batch is corrupt (stored crc = ${stored}, computed crc = ${computed})`);
  }
  return validateFields(readBatchHeader(buffer, position), options.origin ?? 'client');
}

function validateFields(header: BatchHeader, origin: AppendOrigin): BatchError | null {
  if (header.compression > Compression.zstd) {
    return { code: 'UNSUPPORTED_COMPRESSION_TYPE', message: `unknown compression type id ${header.compression}` };
  }
  // A client's baseOffset is overwritten on append, so Kafka ignores its value; an
  // offset a log cannot hold exactly (beyond 2^53) is no offset Spool ever assigned.
  if (origin !== 'client' && !Number.isSafeInteger(header.baseOffset)) {
    return invalid('baseOffset outside the safe integer range');
  }
  if (header.recordCount < 0) return invalid(`invalid record count ${header.recordCount}`);
  if (header.lastOffsetDelta < 0) return invalid(`invalid last offset delta ${header.lastOffsetDelta}`);
  if (header.recordCount > header.lastOffsetDelta + 1) {
    return invalid(`record count ${header.recordCount} exceeds the offset range of ${header.lastOffsetDelta + 1}`);
  }
  const payloadBytes = header.sizeBytes - BATCH_HEADER_BYTES;
  if (header.compression === Compression.none && header.recordCount * RECORD_BYTES_MIN > payloadBytes) {
    return invalid(`${header.recordCount} records cannot fit in ${payloadBytes} bytes`);
  }
  return origin === 'client' ? validateClientBatch(header) : null;
}

/** The producer-side rules Kafka's LogValidator applies to AppendOrigin.CLIENT. */
function validateClientBatch(header: BatchHeader): BatchError | null {
  if (header.recordCount <= 0) return invalid(`invalid reported count for record batch: ${header.recordCount}`);
  if (header.lastOffsetDelta + 1 !== header.recordCount) {
    return invalid(
      `inconsistent batch offset range [0, ${header.lastOffsetDelta}] and count of records ${header.recordCount}`,
    );
  }
  if (header.isControl) return invalid('clients are not allowed to write control records');
  if (header.producerId > NO_PRODUCER_ID && header.baseSequence < 0) {
    return invalid(`invalid sequence number ${header.baseSequence} in record batch with producerId ${header.producerId}`);
  }
  return null;
}

function corrupt(message: string): BatchError {
  return { code: 'CORRUPT_MESSAGE', message };
}

function invalid(message: string): BatchError {
  return { code: 'INVALID_RECORD', message };
}

/** Assigns the batch's first offset in place (not CRC-covered). */
export function setBaseOffset(buffer: Buffer, position: number, offset: number): void {
  writeInt64(buffer, position + BATCH_FIELD.baseOffset, offset);
}

/** Stamps the leader epoch in place (not CRC-covered). */
export function setPartitionLeaderEpoch(buffer: Buffer, position: number, epoch: number): void {
  buffer.writeInt32BE(epoch, position + BATCH_FIELD.partitionLeaderEpoch);
}

/**
 * Marks the batch LogAppendTime with `timestampMs` as its maxTimestamp, and
 * recomputes the CRC, as Kafka does for topics with
 * message.timestamp.type=LogAppendTime. Records keep their create times;
 * readers use maxTimestamp for every record of such a batch.
 */
export function setLogAppendTime(buffer: Buffer, position: number, timestampMs: number): void {
  const attributesAt = position + BATCH_FIELD.attributes;
  const attributes = buffer.readInt16BE(attributesAt);
  const updated = attributes | TIMESTAMP_TYPE_MASK;
  if (updated === attributes && readInt64(buffer, position + BATCH_FIELD.maxTimestamp) === timestampMs) return;
  buffer.writeInt16BE(updated, attributesAt);
  writeInt64(buffer, position + BATCH_FIELD.maxTimestamp, timestampMs);
  writeCrc(buffer, position);
}

/** Recomputes and stores the CRC of the batch at `position` (its batchLength must be right). */
export function writeCrc(buffer: Buffer, position: number): void {
  const end = position + buffer.readInt32BE(position + BATCH_FIELD.batchLength) + BATCH_OVERHEAD_BYTES;
  const crc = crc32c(buffer.subarray(position + BATCH_FIELD.attributes, end));
  buffer.writeUInt32BE(crc, position + BATCH_FIELD.crc);
}

export interface BatchAt {
  position: number;
  header: BatchHeader;
}

/**
 * Walks concatenated batches by their declared sizes. Stops (without
 * throwing) at the first batch that is incomplete or whose declared size is
 * below the header size; the caller can tell a clean end from a torn tail by
 * comparing where the last batch ends with buffer.length. Does not check CRCs.
 */
export function* iterateBatches(buffer: Buffer): Generator<BatchAt> {
  let position = 0;
  for (;;) {
    const sizeBytes = batchSizeAt(buffer, position);
    if (sizeBytes === null || sizeBytes < BATCH_HEADER_BYTES || position + sizeBytes > buffer.length) return;
    yield { position, header: readBatchHeader(buffer, position) };
    position += sizeBytes;
  }
}
