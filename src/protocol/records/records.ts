/**
 * Records inside a v2 batch (KIP-98): decoding a batch into records, and
 * building a batch from records with its CRC.
 *
 * Each record, after the batch header (or after decompressing the bytes
 * that follow it):
 *
 *   length          varint    bytes of the rest of the record
 *   attributes      int8      unused, 0
 *   timestampDelta  varlong   from the batch's baseTimestamp
 *   offsetDelta     varint    from the batch's baseOffset
 *   keyLength       varint    -1 (any negative) for a null key
 *   key             bytes
 *   valueLength     varint    -1 (any negative) for a null value
 *   value           bytes
 *   headerCount     varint
 *     headerKeyLength    varint (must be >= 0), headerKey utf-8
 *     headerValueLength  varint (-1 for null), headerValue
 *
 * varints are zigzag LEB128 (32 bits for varint, 64 for varlong). Decoded
 * keys, values and header values are views into the batch (or into its
 * decompressed copy): copy a small piece before keeping it with a large
 * buffer alive (STYLE.md §7).
 */
import { writeInt64 } from '../int64.js';
import { Reader } from '../reader.js';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  BATCH_OVERHEAD_BYTES,
  COMPRESSION_MASK,
  CONTROL_MASK,
  DELETE_HORIZON_MASK,
  MAGIC_V2,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_MASK,
  readBatchHeader,
  validateBatch,
  writeCrc,
  type BatchError,
  type BatchHeader,
} from './batch.js';
import { compress, decompress, type DecompressOptions } from './compression.js';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface Record {
  /** Absolute: baseOffset + offsetDelta. */
  offset: number;
  /** Absolute: baseTimestamp + timestampDelta, or the batch's maxTimestamp under LogAppendTime. */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export interface DecodeRecordsOptions extends DecompressOptions {
  /** Check size, magic and CRC first (as consumers do with check.crcs). Default true. */
  checkCrc?: boolean;
}

export type DecodedRecords = { records: Record[]; error: null } | { records: null; error: BatchError };

/**
 * Decodes every record of the single batch `batch` (which starts at byte 0),
 * decompressing with the batch's codec. Malformed input gives an error value
 * (INVALID_RECORD for bad record framing, CORRUPT_MESSAGE for a bad CRC or
 * compressed data); it never throws.
 */
export function decodeRecords(batch: Buffer, options: DecodeRecordsOptions = {}): DecodedRecords {
  const framing = options.checkCrc === false ? checkFraming(batch) : validateBatch(batch, 0, { origin: 'log' });
  if (framing !== null) return { records: null, error: framing };
  const header = readBatchHeader(batch);
  const payload = batch.subarray(BATCH_HEADER_BYTES, header.sizeBytes);
  const inflated = header.compression === 0 ? payload : decompress(header.compression, payload, options);
  if (!Buffer.isBuffer(inflated)) return { records: null, error: inflated };
  return readRecords(inflated, header);
}

function checkFraming(batch: Buffer): BatchError | null {
  if (batch.length < BATCH_HEADER_BYTES) return invalid(`record batch has only ${batch.length} bytes`);
  const sizeBytes = batch.readInt32BE(BATCH_FIELD.batchLength) + BATCH_OVERHEAD_BYTES;
  if (sizeBytes < BATCH_HEADER_BYTES || sizeBytes > batch.length) return invalid(`bad record batch size ${sizeBytes}`);
  const magic = batch.readInt8(BATCH_FIELD.magic);
  return magic === MAGIC_V2 ? null : invalid(`record batch has magic ${magic}`);
}

function invalid(message: string): BatchError {
  return { code: 'INVALID_RECORD', message };
}

function readRecords(data: Buffer, header: BatchHeader): DecodedRecords {
  if (header.recordCount < 0) return { records: null, error: invalid(`invalid record count ${header.recordCount}`) };
  // Records are pushed only once read, so a hostile count cannot force a huge array.
  const records: Record[] = [];
  const reader = new Reader(data);
  for (let index = 0; index < header.recordCount; index++) {
    const record = readRecord(reader, header);
    if (reader.error !== null) {
      return { records: null, error: invalid(`record ${index} of ${header.recordCount}: ${reader.error.message}`) };
    }
    records.push(record);
  }
  if (reader.remaining > 0) {
    return { records: null, error: invalid(`${reader.remaining} bytes left after ${header.recordCount} records`) };
  }
  return { records, error: null };
}

function readRecord(reader: Reader, header: BatchHeader): Record {
  const length = reader.varint();
  if (length < 0 || length > reader.remaining) reader.fail(`record length ${length} does not fit`);
  const end = reader.offset + length;
  reader.int8(); // attributes: unused in v2
  const timestampDelta = reader.varlong();
  const offsetDelta = reader.varint();
  const key = readNullableBytes(reader);
  const value = readNullableBytes(reader);
  const headers = readHeaders(reader, end);
  if (reader.error === null && reader.offset !== end) {
    reader.fail(`record declared ${length} bytes but used ${length - (end - reader.offset)}`);
  }
  return {
    offset: header.baseOffset + offsetDelta,
    timestamp: header.timestampType === 1 ? header.maxTimestamp : header.baseTimestamp + timestampDelta,
    key,
    value,
    headers,
  };
}

function readNullableBytes(reader: Reader): Buffer | null {
  const length = reader.varint();
  return length < 0 ? null : reader.view(length);
}

function readHeaders(reader: Reader, end: number): RecordHeader[] {
  const count = reader.varint();
  // A header takes at least two bytes (two empty lengths).
  if (count < 0 || count * 2 > end - reader.offset) {
    reader.fail(`invalid number of record headers ${count}`);
    return [];
  }
  const headers: RecordHeader[] = [];
  for (let index = 0; index < count && reader.error === null; index++) {
    const keyLength = reader.varint();
    if (keyLength < 0) reader.fail(`invalid negative header key size ${keyLength}`);
    const key = reader.view(keyLength).toString('utf8');
    headers.push({ key, value: readNullableBytes(reader) });
  }
  return headers;
}

// ---- building

export interface RecordInput {
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: readonly { key: string; value: Buffer | string | null }[];
  /** CreateTime in ms; default NO_TIMESTAMP (-1). */
  timestamp?: number;
  /** Absolute offset; default baseOffset + index. Offsets must increase. */
  offset?: number;
}

export interface BuildBatchOptions {
  records: readonly RecordInput[];
  /** Codec id 0-4; default 0 (none). */
  compression?: number;
  compressionLevel?: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  isControl?: boolean;
  /** 0 CreateTime (default), 1 LogAppendTime. */
  timestampType?: 0 | 1;
  /** maxTimestamp under LogAppendTime; required then. */
  logAppendTimeMs?: number;
  /** Overrides the last record's offset delta (a compacted batch keeps its original range). */
  lastOffsetDelta?: number;
  /**
   * KIP-534: the log cleaner's delete horizon. Sets attributes bit 6 and
   * stores the horizon as baseTimestamp; record timestamps stay exact because
   * their deltas are taken from it.
   */
  deleteHorizonMs?: number;
}

/**
 * Writes one v2 batch with its CRC. Defaults follow a non-idempotent Java
 * producer: no producer id, epoch or sequence; partitionLeaderEpoch -1.
 */
export function buildBatch(options: BuildBatchOptions): Buffer {
  const baseOffset = options.baseOffset ?? 0;
  const records = options.records;
  const firstTimestamp = records.length > 0 ? (records[0]!.timestamp ?? NO_TIMESTAMP) : NO_TIMESTAMP;
  const baseTimestamp = options.deleteHorizonMs ?? firstTimestamp;
  const offsetDeltas = records.map((record, index) => (record.offset ?? baseOffset + index) - baseOffset);
  const raw = encodeRecords(records, { baseTimestamp, offsetDeltas });
  const compression = options.compression ?? 0;
  const payload = compression === 0 ? raw : compress(compression, raw, levelOption(options.compressionLevel));
  const batch = Buffer.allocUnsafe(BATCH_HEADER_BYTES + payload.length);
  payload.copy(batch, BATCH_HEADER_BYTES);
  const lastOffsetDelta = options.lastOffsetDelta ?? offsetDeltas[offsetDeltas.length - 1] ?? 0;
  writeHeader(batch, options, { baseOffset, baseTimestamp, lastOffsetDelta, maxTimestamp: maxTimestampOf(options) });
  writeCrc(batch, 0);
  return batch;
}

function levelOption(level: number | undefined): { level?: number } {
  return level === undefined ? {} : { level };
}

function maxTimestampOf(options: BuildBatchOptions): number {
  if (options.timestampType === 1) {
    if (options.logAppendTimeMs === undefined) throw new RangeError('LogAppendTime batches need logAppendTimeMs');
    return options.logAppendTimeMs;
  }
  let max = NO_TIMESTAMP;
  for (const record of options.records) max = Math.max(max, record.timestamp ?? NO_TIMESTAMP);
  return max;
}

interface HeaderValues {
  baseOffset: number;
  baseTimestamp: number;
  lastOffsetDelta: number;
  maxTimestamp: number;
}

function writeHeader(batch: Buffer, options: BuildBatchOptions, values: HeaderValues): void {
  let attributes = (options.compression ?? 0) & COMPRESSION_MASK;
  if (options.timestampType === 1) attributes |= TIMESTAMP_TYPE_MASK;
  if (options.isTransactional === true) attributes |= TRANSACTIONAL_MASK;
  if (options.isControl === true) attributes |= CONTROL_MASK;
  if (options.deleteHorizonMs !== undefined) attributes |= DELETE_HORIZON_MASK;
  writeInt64(batch, BATCH_FIELD.baseOffset, values.baseOffset);
  batch.writeInt32BE(batch.length - BATCH_OVERHEAD_BYTES, BATCH_FIELD.batchLength);
  batch.writeInt32BE(options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, BATCH_FIELD.partitionLeaderEpoch);
  batch.writeInt8(MAGIC_V2, BATCH_FIELD.magic);
  batch.writeUInt32BE(0, BATCH_FIELD.crc);
  batch.writeInt16BE(attributes, BATCH_FIELD.attributes);
  batch.writeInt32BE(values.lastOffsetDelta, BATCH_FIELD.lastOffsetDelta);
  writeInt64(batch, BATCH_FIELD.baseTimestamp, values.baseTimestamp);
  writeInt64(batch, BATCH_FIELD.maxTimestamp, values.maxTimestamp);
  writeInt64(batch, BATCH_FIELD.producerId, options.producerId ?? NO_PRODUCER_ID);
  batch.writeInt16BE(options.producerEpoch ?? NO_PRODUCER_EPOCH, BATCH_FIELD.producerEpoch);
  batch.writeInt32BE(options.baseSequence ?? NO_SEQUENCE, BATCH_FIELD.baseSequence);
  batch.writeInt32BE(options.records.length, BATCH_FIELD.recordCount);
}

interface RecordLayout {
  baseTimestamp: number;
  offsetDeltas: readonly number[];
}

interface PreparedRecord {
  bodyBytes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: Buffer; value: Buffer | null }[];
}

/** The records section of an uncompressed batch, sized exactly before writing. */
export function encodeRecords(records: readonly RecordInput[], layout: RecordLayout): Buffer {
  const prepared = records.map((record, index) => prepareRecord(record, layout, index));
  let totalBytes = 0;
  for (const record of prepared) totalBytes += varintBytes(record.bodyBytes) + record.bodyBytes;
  const out = Buffer.allocUnsafe(totalBytes);
  let position = 0;
  for (const record of prepared) position = writeRecord(out, position, record);
  return out;
}

function prepareRecord(record: RecordInput, layout: RecordLayout, index: number): PreparedRecord {
  const timestamp = record.timestamp ?? NO_TIMESTAMP;
  const offsetDelta = layout.offsetDeltas[index]!;
  if (index > 0 && offsetDelta <= layout.offsetDeltas[index - 1]!) throw new RangeError('record offsets must increase');
  const prepared: PreparedRecord = {
    bodyBytes: 0,
    timestampDelta: timestamp - layout.baseTimestamp,
    offsetDelta,
    key: toBytes(record.key ?? null),
    value: toBytes(record.value ?? null),
    headers: (record.headers ?? []).map((header) => ({ key: Buffer.from(header.key, 'utf8'), value: toBytes(header.value) })),
  };
  prepared.bodyBytes =
    1 + varlongBytes(prepared.timestampDelta) + varintBytes(offsetDelta) + fieldBytes(prepared.key) +
    fieldBytes(prepared.value) + varintBytes(prepared.headers.length);
  for (const header of prepared.headers) prepared.bodyBytes += fieldBytes(header.key) + fieldBytes(header.value);
  return prepared;
}

function toBytes(value: Buffer | string | null): Buffer | null {
  if (value === null) return null;
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

function fieldBytes(bytes: Buffer | null): number {
  return bytes === null ? 1 : varintBytes(bytes.length) + bytes.length;
}

function writeRecord(out: Buffer, start: number, record: PreparedRecord): number {
  let position = writeVarint(out, start, record.bodyBytes);
  out[position++] = 0; // attributes
  position = writeVarint(out, position, record.timestampDelta);
  position = writeVarint(out, position, record.offsetDelta);
  position = writeField(out, position, record.key);
  position = writeField(out, position, record.value);
  position = writeVarint(out, position, record.headers.length);
  for (const header of record.headers) {
    position = writeField(out, position, header.key);
    position = writeField(out, position, header.value);
  }
  return position;
}

function writeField(out: Buffer, start: number, bytes: Buffer | null): number {
  if (bytes === null) return writeVarint(out, start, -1);
  const position = writeVarint(out, start, bytes.length);
  bytes.copy(out, position);
  return position + bytes.length;
}

/** Zigzag value of a signed safe integer whose magnitude is below 2^52 (as varint or varlong). */
function zigzag(value: number): number {
  if (!Number.isSafeInteger(value) || Math.abs(value) >= 2 ** 52) throw new RangeError(`varlong ${value} out of range`);
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

function writeVarint(out: Buffer, start: number, value: number): number {
  let rest = zigzag(value);
  let position = start;
  while (rest >= 0x80) {
    out[position++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  out[position++] = rest;
  return position;
}

function varintBytes(value: number): number {
  let rest = zigzag(value);
  let bytes = 1;
  while (rest >= 0x80) {
    rest = Math.floor(rest / 0x80);
    bytes++;
  }
  return bytes;
}

const varlongBytes = varintBytes;
