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
 * - every record of the batch, compressed or not, read as DefaultRecord
 *   .readFrom reads it: its length (negative, past the batch, past
 *   max.decompressed.message.bytes inside a compressed batch, or not the
 *   length of its fields), varints of at most 5 bytes and varlongs of 10,
 *   key and value lengths, header counts and header key lengths; exactly
 *   recordCount records and no byte after them. Any of these is
 *   INVALID_RECORD for the whole batch, as is a compressed stream the codec
 *   refuses;
 * - per record: a key on compacted topics (INVALID_RECORD) and, under
 *   CreateTime, a timestamp within [now - message.timestamp.before.max.ms,
 *   now + message.timestamp.after.max.ms] (INVALID_TIMESTAMP), reported with
 *   the record's index in recordErrors as Kafka does.
 *
 * The records are read in one pass without a per-record allocation
 * (RecordStream: in place when uncompressed, inflated chunk by chunk when
 * not). A batch that passes keeps its bytes (DESIGN.md §3.3): the leader
 * epoch, LogAppendTime or the records' maxTimestamp are written into its
 * header. Like Kafka it is rebuilt from its records (offset deltas 0, 1,
 * 2, ...) only when the topic's compression.type asks for another codec; the
 * rebuilt batch is again held to max.message.bytes. A compressed batch that
 * keeps its codec must already count its offset deltas 0, 1, 2, ...
 * (INVALID_RECORD; Kafka 4.4 fails on it with UNKNOWN_SERVER_ERROR).
 *
 * Where Kafka 4.4 answers otherwise, on purpose (see docs/SKIPPED.md):
 * a compressed record whose fields run past its length is refused (Kafka
 * stores it unread, and no consumer can decode it), and a compressed stream
 * the codec refuses is INVALID_RECORD (Kafka: UNKNOWN_SERVER_ERROR).
 */
import { ErrorCode } from '../protocol/errors.js';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  COMPRESSION_MASK,
  Compression,
  MAGIC_V2,
  NO_TIMESTAMP,
  TIMESTAMP_TYPE_MASK,
  TimestampType,
  batchSizeAt,
  readBatchHeader,
  setLogAppendTime,
  setPartitionLeaderEpoch,
  validateBatch,
  writeCrc,
  type BatchHeader,
} from '../protocol/records/batch.js';
import { compressionId } from '../protocol/records/compression.js';
import { RecordStream, emptyRecordFields, type RecordFields } from '../protocol/records/record-stream.js';
import { buildBatch, decodeRecords, type Record } from '../protocol/records/records.js';

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
  /** max.decompressed.message.bytes: the largest record body inside a compressed batch. Default Kafka's. */
  maxDecompressedMessageBytes?: number;
}

/** Kafka's default max.decompressed.message.bytes (no limit beyond what the JVM could allocate). */
export const MAX_DECOMPRESSED_MESSAGE_BYTES_DEFAULT = 2_147_483_639;

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

export interface LeaderValidationOptions {
  config: LeaderValidationConfig;
  nowMs: number;
  leaderEpoch: number;
  origin?: 'client' | 'coordinator';
  /** "topic-partition", as Kafka names it in record error messages. */
  topicPartition?: string;
}

/**
 * Validates a client (or coordinator) batch for the leader and rewrites it
 * for the append (coordinators skip the client-only rules, as in Kafka):
 * partitionLeaderEpoch, maxTimestamp or the LogAppendTime stamp, and a
 * rebuilt batch where Kafka rebuilds one. Offsets are left to the log.
 */
export function validateLeaderBatch(batch: Buffer, options: LeaderValidationOptions): { error: AppendError } | { validated: ValidatedBatch } {
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
  // Kafka keeps an uncompressed control batch as it is whatever compression.type says.
  const keepsCodec = targetCompression === header.compression || (header.isControl && header.compression === Compression.none);
  const partialRecords = keepsCodec && header.compression !== Compression.none;
  const scan = scanRecords(batch, header, { config, nowMs, topicPartition: options.topicPartition ?? 'the partition', partialRecords });
  if ('error' in scan) return scan;
  if (scan.recordErrors !== null) return { error: recordValidationError(scan.recordErrors, scan.anyTimestampError) };
  if (partialRecords && !scan.offsetDeltasInOrder) {
    // Kafka 4.4 fails here (UNKNOWN_SERVER_ERROR) rebuilding from the partially read records; no client writes such batches.
    return { error: { errorCode: ErrorCode.INVALID_RECORD, message: `The offset deltas of the compressed batch to ${options.topicPartition ?? 'the partition'} are not 0, 1, 2, ...` } };
  }
  if (!keepsCodec) return rebuild(batch, header, { ...options, targetCompression });
  setPartitionLeaderEpoch(batch, 0, options.leaderEpoch);
  if (config.messageTimestampType === 'LogAppendTime') {
    setLogAppendTime(batch, 0, nowMs);
    return { validated: { batch, header: readBatchHeader(batch), logAppendTimeMs: nowMs } };
  }
  setCreateTimeMax(batch, scan.maxTimestamp);
  return { validated: { batch, header: readBatchHeader(batch), logAppendTimeMs: -1 } };
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

// ---- reading every record

/** A timestamp as Kafka's long: a number when safe, a bigint beyond 2^53 (nanosecond clocks). */
type Timestamp = number | bigint;

interface ScanContext {
  config: LeaderValidationConfig;
  nowMs: number;
  topicPartition: string;
  /** Kafka reads the records partially (skipKeyValueIterator): compressed, and the codec kept. */
  partialRecords: boolean;
}

/** What one pass over the records found; allocated once per batch. */
interface RecordScan {
  /** Kafka's RecordError per failing record, in order; null when none failed. */
  recordErrors: RecordError[] | null;
  anyTimestampError: boolean;
  /** The largest timestamp of the records (NO_TIMESTAMP when none has one). */
  maxTimestamp: Timestamp;
  /** Every record's offset (baseOffset + offsetDelta) equals its index. */
  offsetDeltasInOrder: boolean;
}

interface ScanState extends RecordScan {
  context: ScanContext;
  header: BatchHeader;
  /** Record body limit: max.decompressed.message.bytes inside compressed batches (Kafka reads those from a stream). */
  recordBodyBytesMax: number;
  baseTimestamp: Timestamp;
  /** The batch's maxTimestamp when it is LogAppendTime (each record reads as it), else null. */
  logAppendTime: Timestamp | null;
}

/**
 * Reads every record once, in order, checking its framing as Kafka's
 * DefaultRecord.readFrom does and then its key and timestamp; stops at the
 * first framing error (INVALID_RECORD for the batch) but collects every
 * record error, as Kafka does.
 */
function scanRecords(batch: Buffer, header: BatchHeader, context: ScanContext): RecordScan | { error: AppendError } {
  const compressed = header.compression !== Compression.none;
  const state: ScanState = {
    recordErrors: null,
    anyTimestampError: false,
    maxTimestamp: NO_TIMESTAMP,
    offsetDeltasInOrder: true,
    context,
    header,
    recordBodyBytesMax: compressed ? (context.config.maxDecompressedMessageBytes ?? MAX_DECOMPRESSED_MESSAGE_BYTES_DEFAULT) : Number.MAX_SAFE_INTEGER,
    baseTimestamp: exactInt64(batch, BATCH_FIELD.baseTimestamp),
    logAppendTime: header.timestampType === TimestampType.logAppendTime ? exactInt64(batch, BATCH_FIELD.maxTimestamp) : null,
  };
  // Kafka reads nothing of a batch that counts no records.
  if (header.recordCount === 0) return state;
  const stream = RecordStream.open(header.compression, batch.subarray(BATCH_HEADER_BYTES));
  const fields = emptyRecordFields();
  for (let index = 0; index < header.recordCount && stream.readRecord(fields, state.recordBodyBytesMax); index++) checkRecord(state, index, fields);
  if (stream.error === null && !stream.atEnd()) stream.fail('Incorrect declared batch size, records still remaining in file');
  if (stream.error !== null) {
    if (stream.decompressionError === 'MESSAGE_TOO_LARGE') return { error: { errorCode: ErrorCode.MESSAGE_TOO_LARGE, message: stream.error } };
    return { error: { errorCode: ErrorCode.INVALID_RECORD, message: `Invalid record in ${context.topicPartition}: ${stream.error}` } };
  }
  return state;
}

/** LogValidator.validateRecord: the key first, then the timestamp; a record that passes counts toward maxTimestamp. */
function checkRecord(state: ScanState, index: number, record: RecordFields): void {
  const timestamp = state.logAppendTime ?? addLongs(state.baseTimestamp, record.timestampDelta);
  const offset = state.header.baseOffset + record.offsetDelta;
  if (state.context.config.compacted && record.keyLength < 0) return addRecordError(state, keyError(state, index));
  const problem = timestampProblem(state, timestamp);
  if (problem !== null) return addRecordError(state, timestampError(state, { index, timestamp, offset, problem }, record));
  if (timestamp > state.maxTimestamp) state.maxTimestamp = timestamp;
  if (offset !== index) state.offsetDeltasInOrder = false;
}

function addRecordError(state: ScanState, error: RecordError): void {
  (state.recordErrors ??= []).push(error);
}

function keyError(state: ScanState, index: number): RecordError {
  return { batchIndex: index, batchIndexErrorMessage: `Compacted topic cannot accept message without key in topic partition ${state.context.topicPartition}` };
}

/** LogValidator.validateTimestamp's two refusals. */
type TimestampProblem = 'outOfRange' | 'logAppendTime';

function timestampProblem(state: ScanState, timestamp: Timestamp): TimestampProblem | null {
  const { config, nowMs } = state.context;
  if (config.messageTimestampType === 'CreateTime' && !isNoTimestamp(timestamp)) {
    return timestampOutOfRange(timestamp, nowMs, config) ? 'outOfRange' : null;
  }
  return state.logAppendTime === null ? null : 'logAppendTime';
}

/** Where a refused record sits, what timestamp it reads as, and why it was refused. */
interface TimestampRefusal {
  index: number;
  timestamp: Timestamp;
  offset: number;
  problem: TimestampProblem;
}

function timestampError(state: ScanState, refusal: TimestampRefusal, record: RecordFields): RecordError {
  const { index, timestamp, offset } = refusal;
  const { config, nowMs } = state.context;
  state.anyTimestampError = true;
  if (refusal.problem === 'outOfRange') {
    const earliest = addLongs(nowMs, -toLong(config.messageTimestampBeforeMaxMs));
    const latest = addLongs(nowMs, toLong(config.messageTimestampAfterMaxMs));
    return {
      batchIndex: index,
      batchIndexErrorMessage: `Timestamp ${timestamp} of message with offset ${offset} is out of range. The timestamp should be within [${earliest}, ${latest}]`,
    };
  }
  const recordClass = state.context.partialRecords ? 'PartialDefaultRecord' : 'DefaultRecord';
  const described = `${recordClass}(offset=${offset}, timestamp=${timestamp}, key=${Math.max(-1, record.keyLength)} bytes, value=${Math.max(-1, record.valueLength)} bytes)`;
  return { batchIndex: index, batchIndexErrorMessage: `Invalid timestamp type in message ${described}. Producer should not set timestamp type to LogAppendTime.` };
}

/** Kafka's test, in long arithmetic: now - timestamp > before.max.ms, or timestamp - now > after.max.ms. */
function timestampOutOfRange(timestamp: Timestamp, nowMs: number, config: LeaderValidationConfig): boolean {
  if (typeof timestamp === 'number') {
    const difference = nowMs - timestamp;
    if (Number.isSafeInteger(difference)) return difference > config.messageTimestampBeforeMaxMs || -difference > config.messageTimestampAfterMaxMs;
  }
  const difference = BigInt.asIntN(64, BigInt(nowMs) - BigInt(timestamp));
  return difference > toLong(config.messageTimestampBeforeMaxMs) || BigInt.asIntN(64, -difference) > toLong(config.messageTimestampAfterMaxMs);
}

function isNoTimestamp(timestamp: Timestamp): boolean {
  return timestamp === NO_TIMESTAMP || timestamp === NO_TIMESTAMP_LONG;
}

const NO_TIMESTAMP_LONG = BigInt(NO_TIMESTAMP);

const LONG_MAX = (1n << 63n) - 1n;
const LONG_MIN = -(1n << 63n);

/** A config long as a bigint: Spool carries Long.MAX_VALUE as Infinity. */
function toLong(value: number): bigint {
  if (value === Infinity) return LONG_MAX;
  if (value === -Infinity) return LONG_MIN;
  return BigInt(value);
}

/** a + b with Java's long overflow, as a number when the sum is safe. */
function addLongs(a: Timestamp, b: Timestamp): Timestamp {
  if (typeof a === 'number' && typeof b === 'number') {
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  const sum = BigInt.asIntN(64, BigInt(a) + BigInt(b));
  return Number.isSafeInteger(Number(sum)) ? Number(sum) : sum;
}

/** The int64 at `at`, exactly. */
function exactInt64(batch: Buffer, at: number): Timestamp {
  const value = batch.readBigInt64BE(at);
  return Number.isSafeInteger(Number(value)) ? Number(value) : value;
}

/** Kafka's RecordValidationException: INVALID_TIMESTAMP when any record failed on its timestamp, else INVALID_RECORD. */
function recordValidationError(recordErrors: RecordError[], anyTimestampError: boolean): AppendError {
  if (anyTimestampError) {
    return { errorCode: ErrorCode.INVALID_TIMESTAMP, message: 'One or more records have been rejected due to invalid timestamp', recordErrors };
  }
  const shown = recordErrors.slice(0, 3).map((error) => `RecordError(batchIndex=${error.batchIndex}, message='${error.batchIndexErrorMessage}')`);
  return {
    errorCode: ErrorCode.INVALID_RECORD,
    message: `One or more records have been rejected due to ${recordErrors.length} record errors in total, and only showing the first three errors at most: [${shown.join(', ')}]`,
    recordErrors,
  };
}

/** Kafka's setMaxTimestamp(CreateTime, max): a LogAppendTime batch on a CreateTime topic becomes CreateTime. */
function setCreateTimeMax(batch: Buffer, maxTimestamp: Timestamp): void {
  const attributes = batch.readInt16BE(BATCH_FIELD.attributes);
  const stored = batch.readBigInt64BE(BATCH_FIELD.maxTimestamp);
  if ((attributes & TIMESTAMP_TYPE_MASK) === 0 && stored === BigInt(maxTimestamp)) return;
  batch.writeInt16BE(attributes & ~TIMESTAMP_TYPE_MASK, BATCH_FIELD.attributes);
  batch.writeBigInt64BE(BigInt(maxTimestamp), BATCH_FIELD.maxTimestamp);
  writeCrc(batch, 0);
}

// ---- rebuilding

/**
 * Kafka's buildRecordsAndAssignOffsets: a new batch from the validated
 * records, with the target codec, offset deltas 0..n-1, the producer fields
 * and the topic's timestamp type. Record timestamps a batch cannot carry as
 * safe integers cannot be rebuilt here yet (INVALID_RECORD).
 */
function rebuild(
  batch: Buffer,
  header: BatchHeader,
  options: LeaderValidationOptions & { targetCompression: number },
): { error: AppendError } | { validated: ValidatedBatch } {
  const { config, nowMs } = options;
  const decoded = decodeRecords(batch, { checkCrc: false });
  if (decoded.error !== null) return { error: { errorCode: ErrorCode[decoded.error.code], message: decoded.error.message } };
  if (!rebuildable(decoded.records)) {
    return { error: { errorCode: ErrorCode.INVALID_RECORD, message: 'record timestamps beyond 2^53 cannot be recompressed' } };
  }
  const logAppendTime = config.messageTimestampType === 'LogAppendTime';
  const out = buildBatch({
    records: decoded.records.map((record, index) => ({ key: record.key, value: record.value, headers: record.headers, timestamp: record.timestamp, offset: index })),
    compression: options.targetCompression,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    partitionLeaderEpoch: options.leaderEpoch,
    ...(logAppendTime ? { timestampType: TimestampType.logAppendTime, logAppendTimeMs: nowMs } : {}),
  });
  if (out.length > config.maxMessageBytes) {
    return { error: { errorCode: ErrorCode.MESSAGE_TOO_LARGE, message: `The recompressed batch size is ${out.length} bytes which exceeds the maximum configured value of ${config.maxMessageBytes}` } };
  }
  return { validated: { batch: out, header: readBatchHeader(out), logAppendTimeMs: logAppendTime ? nowMs : -1 } };
}

/** buildBatch writes timestamps as deltas from the first below 2^52. */
function rebuildable(records: readonly Record[]): boolean {
  const first = records[0]?.timestamp ?? 0;
  return records.every((record) => Number.isSafeInteger(record.timestamp) && Math.abs(record.timestamp - first) < 2 ** 52);
}
