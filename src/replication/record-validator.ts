/**
 * What the leader checks and rewrites in a client's produce batch before it
 * is appended (Kafka's ProduceRequest.validateRecords, UnifiedLog
 * .analyzeAndValidateRecords and LogValidator, for magic v2 only).
 *
 * In order, each failure a Kafka error for the partition:
 * - exactly one batch of magic 2 (INVALID_RECORD), ZStandard only from
 *   Produce v7 (UNSUPPORTED_COMPRESSION_TYPE), a corrupt size CORRUPT_MESSAGE;
 * - baseOffset 0 (INVALID_RECORD), size <= max.message.bytes
 *   (MESSAGE_TOO_LARGE), CRC-32C (CORRUPT_MESSAGE), then the header rules of
 *   validateBatch (count vs offset range, no control batch, sequence present);
 * - per record: a key on compacted topics (INVALID_RECORD) and, under
 *   CreateTime, a timestamp within [now - message.timestamp.before.max.ms,
 *   now + message.timestamp.after.max.ms] (INVALID_TIMESTAMP), reported with
 *   the record's index in recordErrors as Kafka does.
 *
 * Batches stay opaque where Kafka's rules allow (DESIGN.md §3.3):
 * uncompressed records are walked in place (no copy) to check keys and
 * timestamps and to set the batch maxTimestamp from them; a compressed batch
 * is checked by its header timestamps (baseTimestamp, maxTimestamp) and only
 * decompressed when the topic is compacted (keys) or its compression.type
 * asks for a different codec, in which case it is recompressed.
 * LogAppendTime topics get the append time stamped into the header.
 */
import { ErrorCode } from '../protocol/errors.js';
import { writeInt64 } from '../protocol/int64.js';
import { Reader } from '../protocol/reader.js';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  BATCH_OVERHEAD_BYTES,
  COMPRESSION_MASK,
  Compression,
  MAGIC_V2,
  NO_TIMESTAMP,
  batchSizeAt,
  readBatchHeader,
  setLogAppendTime,
  setPartitionLeaderEpoch,
  validateBatch,
  writeCrc,
  type BatchHeader,
} from '../protocol/records/batch.js';
import { compress, compressionId, decompress } from '../protocol/records/compression.js';

/** Kafka's per-record error in a produce response (KIP-467). */
export interface RecordError {
  batchIndex: number;
  batchIndexErrorMessage: string | null;
}

export interface AppendError {
  errorCode: number;
  message: string;
  /** Only for record-level errors (INVALID_RECORD / INVALID_TIMESTAMP from the record checks). */
  recordErrors?: RecordError[];
}

export interface LeaderValidationConfig {
  maxMessageBytes: number;
  compacted: boolean;
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  /** compression.type: 'producer' keeps the producer's codec. */
  compressionType: string;
}

export interface ValidatedBatch {
  /** The batch to append: the request's bytes, rewritten in place, or a recompressed copy. */
  batch: Buffer;
  header: BatchHeader;
  /** The append time under LogAppendTime, else -1. */
  logAppendTimeMs: number;
}

/** Produce-request framing rules (ProduceRequest.validateRecords for v3+). */
export function validateProduceRecords(records: Buffer | null, apiVersion: number): AppendError | null {
  if (records === null || records.length < BATCH_FIELD.magic + 1) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${apiVersion} must have at least one record batch per partition` };
  }
  const sizeBytes = batchSizeAt(records, 0)!;
  if (sizeBytes < BATCH_HEADER_BYTES) return { errorCode: ErrorCode.CORRUPT_MESSAGE, message: `record batch size ${sizeBytes} is below the batch header size` };
  if (sizeBytes > records.length) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${apiVersion} must have at least one record batch per partition` };
  }
  if (records.readInt8(BATCH_FIELD.magic) !== MAGIC_V2) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${apiVersion} are only allowed to contain record batches with magic version 2` };
  }
  if (apiVersion < 7 && (records.readInt16BE(BATCH_FIELD.attributes) & COMPRESSION_MASK) === Compression.zstd) {
    return { errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message: `Produce requests with version ${apiVersion} are not allowed to use ZStandard compression` };
  }
  if (sizeBytes !== records.length) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${apiVersion} are only allowed to contain exactly one record batch per partition` };
  }
  return null;
}

/**
 * Validates a client (or coordinator) batch for the leader and rewrites it
 * for the append (coordinators skip the client-only rules, as in Kafka):
 * partitionLeaderEpoch, maxTimestamp (CreateTime, uncompressed) or the
 * LogAppendTime stamp, and the codec when compression.type demands another.
 * Offsets are left to the log.
 */
export function validateLeaderBatch(
  batch: Buffer,
  options: { config: LeaderValidationConfig; nowMs: number; leaderEpoch: number; origin?: 'client' | 'coordinator' },
): { error: AppendError } | { validated: ValidatedBatch } {
  const { config, nowMs } = options;
  const origin = options.origin ?? 'client';
  const framing = checkSingleBatch(batch);
  if (framing !== null) return { error: framing };
  const baseOffsetIsZero = batch.readInt32BE(BATCH_FIELD.baseOffset) === 0 && batch.readInt32BE(BATCH_FIELD.baseOffset + 4) === 0;
  if (origin === 'client' && !baseOffsetIsZero) {
    return { error: { errorCode: ErrorCode.INVALID_RECORD, message: `The baseOffset of the record batch should be 0, but it is ${readBatchHeader(batch).baseOffset}` } };
  }
  if (batch.length > config.maxMessageBytes) {
    return { error: { errorCode: ErrorCode.MESSAGE_TOO_LARGE, message: `The record batch size is ${batch.length} bytes which exceeds the maximum configured value of ${config.maxMessageBytes}` } };
  }
  const invalid = validateBatch(batch, 0, { origin });
  if (invalid !== null) return { error: { errorCode: ErrorCode[invalid.code], message: invalid.message } };
  const header = readBatchHeader(batch);
  const targetCompression = targetCodec(config.compressionType, header.compression);
  const needsRecords = header.compression === Compression.none || config.compacted || targetCompression !== header.compression;
  let payload: Buffer | null = null;
  if (needsRecords) {
    const inflated = header.compression === Compression.none ? batch.subarray(BATCH_HEADER_BYTES) : decompress(header.compression, batch.subarray(BATCH_HEADER_BYTES));
    if (!Buffer.isBuffer(inflated)) return { error: { errorCode: ErrorCode[inflated.code], message: inflated.message } };
    payload = inflated;
  }
  const scan = payload === null ? headerScan(header) : scanRecords(payload, header, config.compacted);
  if ('error' in scan) return scan;
  // Header timestamps stand for the whole batch: report one error, at the first record.
  const timestampProblems = timestampErrors(scan.timestamps, header, config, nowMs).slice(0, payload === null ? 1 : undefined);
  if (payload === null) for (const problem of timestampProblems) problem.batchIndex = 0;
  const recordErrors = timestampProblems.concat(scan.keyErrors);
  if (recordErrors.length > 0) return { error: recordValidationError(recordErrors, scan.keyErrors.length < recordErrors.length) };
  let out = batch;
  if (payload !== null && targetCompression !== header.compression) {
    out = recompress(batch, payload, targetCompression);
    if (out.length > config.maxMessageBytes) {
      return { error: { errorCode: ErrorCode.MESSAGE_TOO_LARGE, message: `The recompressed batch size is ${out.length} bytes which exceeds the maximum configured value of ${config.maxMessageBytes}` } };
    }
  }
  setPartitionLeaderEpoch(out, 0, options.leaderEpoch);
  if (config.messageTimestampType === 'LogAppendTime') {
    setLogAppendTime(out, 0, nowMs);
    return { validated: { batch: out, header: readBatchHeader(out), logAppendTimeMs: nowMs } };
  }
  // Beyond 2^53 (nanosecond clocks) record timestamps are rounded (src/protocol/int64.ts): the header keeps its exact bytes.
  if (scan.maxTimestamp !== null && scan.maxTimestamp !== header.maxTimestamp && Number.isSafeInteger(scan.maxTimestamp)) {
    setMaxTimestamp(out, scan.maxTimestamp);
  }
  return { validated: { batch: out, header: readBatchHeader(out), logAppendTimeMs: -1 } };
}

/** One whole batch, nothing more: what the rest of the checks may assume. */
function checkSingleBatch(batch: Buffer): AppendError | null {
  if (batch.length < BATCH_HEADER_BYTES) return { errorCode: ErrorCode.CORRUPT_MESSAGE, message: `record batch has ${batch.length} bytes, fewer than its header` };
  const sizeBytes = batchSizeAt(batch, 0)!;
  if (sizeBytes < BATCH_HEADER_BYTES || sizeBytes > batch.length) return { errorCode: ErrorCode.CORRUPT_MESSAGE, message: `record batch declares ${sizeBytes} bytes in ${batch.length}` };
  if (sizeBytes !== batch.length) return { errorCode: ErrorCode.INVALID_RECORD, message: 'an append must hold exactly one record batch' };
  return null;
}

function targetCodec(compressionType: string, sourceCompression: number): number {
  if (compressionType === 'producer') return sourceCompression;
  if (compressionType === 'uncompressed') return Compression.none;
  return compressionId(compressionType) ?? sourceCompression;
}

interface RecordScan {
  /** Per record: its timestamp (as Kafka reads it), in record order. */
  timestamps: number[];
  keyErrors: RecordError[];
  /** The largest record timestamp, or null when the records were not read. */
  maxTimestamp: number | null;
}

/** Without the records, the header's two timestamps stand for the batch's range. */
function headerScan(header: BatchHeader): RecordScan {
  const timestamps = header.timestampType === 1 ? [header.maxTimestamp] : [header.baseTimestamp, header.maxTimestamp];
  return { timestamps, keyErrors: [], maxTimestamp: null };
}

/** Walks the records of an uncompressed (or inflated) payload without copying. */
function scanRecords(payload: Buffer, header: BatchHeader, compacted: boolean): RecordScan | { error: AppendError } {
  const reader = new Reader(payload);
  const timestamps: number[] = [];
  const keyErrors: RecordError[] = [];
  let maxTimestamp = NO_TIMESTAMP;
  for (let index = 0; index < header.recordCount && reader.error === null; index++) {
    const length = reader.varint();
    if (length < 0 || length > reader.remaining) reader.fail(`record ${index} declares ${length} bytes, ${reader.remaining} remain`);
    const end = reader.offset + length;
    reader.int8();
    const timestampDelta = reader.varlong();
    reader.varint();
    const keyLength = reader.varint();
    if (reader.error !== null || reader.offset > end) break;
    const timestamp = header.timestampType === 1 ? header.maxTimestamp : header.baseTimestamp + timestampDelta;
    timestamps.push(timestamp);
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;
    if (compacted && keyLength < 0) {
      keyErrors.push({ batchIndex: index, batchIndexErrorMessage: 'Compacted topic cannot accept message without key' });
    }
    reader.view(end - reader.offset);
  }
  if (reader.error !== null || reader.remaining !== 0) {
    const reason = reader.error?.message ?? `${reader.remaining} bytes left after ${header.recordCount} records`;
    return { error: { errorCode: ErrorCode.INVALID_RECORD, message: `Invalid record framing: ${reason}` } };
  }
  return { timestamps, keyErrors, maxTimestamp };
}

function timestampErrors(timestamps: readonly number[], header: BatchHeader, config: LeaderValidationConfig, nowMs: number): RecordError[] {
  const errors: RecordError[] = [];
  const earliest = nowMs - config.messageTimestampBeforeMaxMs;
  const latest = nowMs + config.messageTimestampAfterMaxMs;
  timestamps.forEach((timestamp, index) => {
    if (config.messageTimestampType === 'CreateTime' && timestamp !== NO_TIMESTAMP) {
      if (nowMs - timestamp > config.messageTimestampBeforeMaxMs || timestamp - nowMs > config.messageTimestampAfterMaxMs) {
        errors.push({ batchIndex: index, batchIndexErrorMessage: `Timestamp ${timestamp} of message is out of range. The timestamp should be within [${earliest}, ${latest}]` });
      }
    } else if (header.timestampType === 1) {
      errors.push({ batchIndex: index, batchIndexErrorMessage: 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.' });
    }
  });
  return errors;
}

/** Kafka's RecordValidationException: INVALID_TIMESTAMP when any record failed on its timestamp, else INVALID_RECORD. */
function recordValidationError(recordErrors: RecordError[], anyTimestampError: boolean): AppendError {
  const sorted = [...recordErrors].sort((a, b) => a.batchIndex - b.batchIndex);
  if (anyTimestampError) {
    return { errorCode: ErrorCode.INVALID_TIMESTAMP, message: 'One or more records have been rejected due to invalid timestamp', recordErrors: sorted };
  }
  return {
    errorCode: ErrorCode.INVALID_RECORD,
    message: `One or more records have been rejected due to ${sorted.length} record errors in total`,
    recordErrors: sorted,
  };
}

function setMaxTimestamp(batch: Buffer, timestampMs: number): void {
  writeInt64(batch, BATCH_FIELD.maxTimestamp, timestampMs);
  writeCrc(batch, 0);
}

/** A copy of the batch with its records compressed by `compression` (header fields kept). */
function recompress(batch: Buffer, records: Buffer, compression: number): Buffer {
  const payload = compress(compression, records);
  const out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + payload.length);
  batch.copy(out, 0, 0, BATCH_HEADER_BYTES);
  payload.copy(out, BATCH_HEADER_BYTES);
  out.writeInt32BE(out.length - BATCH_OVERHEAD_BYTES, BATCH_FIELD.batchLength);
  const attributes = out.readInt16BE(BATCH_FIELD.attributes);
  out.writeInt16BE((attributes & ~COMPRESSION_MASK) | compression, BATCH_FIELD.attributes);
  writeCrc(out, 0);
  return out;
}
