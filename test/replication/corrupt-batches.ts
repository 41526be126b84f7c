/**
 * Hand-made produce batches, CRC-valid, each broken in one way inside its
 * records (lengths, varints, header counts, keys, timestamps, counts,
 * compressed streams), with the answer Apache Kafka 4.4 gives for each.
 * Shared by the validator's unit tests and the wire test that can also run
 * against a real Kafka broker.
 */
import { BATCH_FIELD, BATCH_HEADER_BYTES, BATCH_OVERHEAD_BYTES, MAGIC_V2, TIMESTAMP_TYPE_MASK, writeCrc } from '../../src/protocol/records/batch.js';
import { compress } from '../../src/protocol/records/compression.js';
import { ErrorCode } from '../../src/protocol/errors.js';

export const CODECS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
export type CodecName = keyof typeof CODECS;

/** Zigzag varint or varlong (|value| < 2^52) in LEB128. */
export function varint(value: number): Buffer {
  let rest = value >= 0 ? value * 2 : -value * 2 - 1;
  const bytes: number[] = [];
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A length-prefixed field; null writes -1. */
export function field(bytes: Buffer | string | null): Buffer {
  if (bytes === null) return varint(-1);
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return Buffer.concat([varint(data.length), data]);
}

export interface RawRecord {
  timestampDelta?: number;
  offsetDelta: number;
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: [string, string | null][];
  /** Replaces the header count (the headers listed are still written). */
  headerCount?: number;
  /** Bytes appended to the body after the headers. */
  trailing?: Buffer;
  /** Replaces the body's declared length. */
  length?: number;
  /** Replaces the whole body (after the length). */
  body?: Buffer;
}

/** One record's bytes: length varint then body, with the overrides applied. */
export function rawRecord(record: RawRecord): Buffer {
  const headers = record.headers ?? [];
  const body =
    record.body ??
    Buffer.concat([
      Buffer.from([0]),
      varint(record.timestampDelta ?? 0),
      varint(record.offsetDelta),
      field(record.key === undefined ? `k${record.offsetDelta}` : record.key),
      field(record.value === undefined ? `v${record.offsetDelta}` : record.value),
      varint(record.headerCount ?? headers.length),
      ...headers.flatMap(([key, value]) => [field(key), field(value)]),
      record.trailing ?? Buffer.alloc(0),
    ]);
  return Buffer.concat([varint(record.length ?? body.length), body]);
}

export interface RawBatchOptions {
  codec: CodecName;
  /** Default: the number of records given. */
  recordCount?: number;
  /** Default: recordCount - 1. */
  lastOffsetDelta?: number;
  baseTimestamp: number;
  /** Default: baseTimestamp. */
  maxTimestamp?: number;
  logAppendTime?: boolean;
  /** Replaces the (compressed) payload bytes after the header. */
  payload?: (compressed: Buffer) => Buffer;
}

/** A CRC-valid batch with baseOffset 0 around raw records. */
export function rawBatch(records: readonly Buffer[], options: RawBatchOptions): Buffer {
  const codec = CODECS[options.codec];
  const compressed = compress(codec, Buffer.concat(records));
  const payload = options.payload?.(compressed) ?? compressed;
  const batch = Buffer.alloc(BATCH_HEADER_BYTES + payload.length);
  payload.copy(batch, BATCH_HEADER_BYTES);
  const recordCount = options.recordCount ?? records.length;
  batch.writeInt32BE(batch.length - BATCH_OVERHEAD_BYTES, BATCH_FIELD.batchLength);
  batch.writeInt32BE(-1, BATCH_FIELD.partitionLeaderEpoch);
  batch.writeInt8(MAGIC_V2, BATCH_FIELD.magic);
  batch.writeInt16BE(codec | (options.logAppendTime === true ? TIMESTAMP_TYPE_MASK : 0), BATCH_FIELD.attributes);
  batch.writeInt32BE(options.lastOffsetDelta ?? recordCount - 1, BATCH_FIELD.lastOffsetDelta);
  batch.writeBigInt64BE(BigInt(options.baseTimestamp), BATCH_FIELD.baseTimestamp);
  batch.writeBigInt64BE(BigInt(options.maxTimestamp ?? options.baseTimestamp), BATCH_FIELD.maxTimestamp);
  batch.writeBigInt64BE(-1n, BATCH_FIELD.producerId);
  batch.writeInt16BE(-1, BATCH_FIELD.producerEpoch);
  batch.writeInt32BE(-1, BATCH_FIELD.baseSequence);
  batch.writeInt32BE(recordCount, BATCH_FIELD.recordCount);
  writeCrc(batch, 0);
  return batch;
}

const good = (offsetDelta: number, extra: Partial<RawRecord> = {}) => rawRecord({ offsetDelta, ...extra });

/** Flips bytes in the middle of a compressed stream (past any frame header). */
function garble(compressed: Buffer): Buffer {
  const out = Buffer.from(compressed);
  for (let at = Math.floor(out.length / 2); at < out.length - 4 && at < Math.floor(out.length / 2) + 8; at++) out[at] = out[at]! ^ 0x5a;
  return out;
}

export interface CorruptCase {
  name: string;
  codecs: readonly CodecName[];
  /** Topic configs the case needs (cleanup.policy=compact). */
  compacted?: boolean;
  build(codec: CodecName, nowMs: number): Buffer;
  errorCode: number;
  /** Indexes Kafka names in recordErrors; absent when it names none. */
  recordErrors?: number[];
  /** Kafka's errorMessage then each recordErrors message, with the topic as TOPIC and every number as N. */
  messages?: string[];
  /** Where Kafka 4.4 answers otherwise (for these codecs), and why Spool does not follow. */
  kafkaDiffers?: { codecs: readonly CodecName[]; errorCode: number; why: string };
}

const ALL: readonly CodecName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const COMPRESSED: readonly CodecName[] = ['gzip', 'snappy', 'lz4', 'zstd'];
const HOUR_MS = 3_600_000;
/**
 * Kafka 4.4 reads a compressed batch that keeps its codec with
 * skipKeyValueIterator; when the offset deltas turn out not to be 0, 1, 2, ...
 * it tries to rebuild the batch from those key-less PartialDefaultRecords,
 * which throws ("value is skipped in PartialDefaultRecord"). No client writes
 * such v2 batches; Spool refuses them with INVALID_RECORD.
 */
const PARTIAL_REBUILD = 'Kafka answers UNKNOWN_SERVER_ERROR: it cannot rebuild from partially read records';
const logAppendTimeRefused = (record: string) =>
  `Invalid timestamp type in message ${record}(offset=N, timestamp=N, key=N bytes, value=N bytes). Producer should not set timestamp type to LogAppendTime.`;
/**
 * Kafka 4.4 reads a compressed batch it will store unchanged with
 * DefaultRecord.readPartiallyFrom, which skips keys and values by their own
 * lengths and never compares them with the record's length: the batch is
 * stored, and every consumer then fails on it ("Found invalid record
 * structure"). Spool checks every record as readFrom does.
 */
const UNREADABLE = 'Kafka stores the batch; no consumer can read it back';
/**
 * A stream the decompressor itself refuses surfaces in Kafka 4.4 as a
 * KafkaException ("Failed to decompress record stream"), answered
 * UNKNOWN_SERVER_ERROR. Spool answers INVALID_RECORD, Kafka's code when the
 * same bytes are caught while reading the records; producers treat both as
 * fatal for the batch, so they behave alike.
 */
const DECOMPRESSOR_FAILED = 'Kafka answers UNKNOWN_SERVER_ERROR from its decompressor';

/** Record bodies whose fields run past their declared length, or stop short of it. */
export const CORRUPT_CASES: readonly CorruptCase[] = [
  {
    name: 'valid records',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0), good(1, { headers: [['h', 'x'], ['n', null]] }), good(2, { key: null })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.NONE,
  },
  {
    name: 'record body longer than its fields',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0, { trailing: Buffer.from([0]) })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'record fields longer than its body',
    codecs: ALL,
    build: (codec, now) => {
      const body = rawRecord({ offsetDelta: 0 }).subarray(1);
      return rawBatch([Buffer.concat([varint(body.length - 3), body])], { codec, baseTimestamp: now });
    },
    errorCode: ErrorCode.INVALID_RECORD,
    kafkaDiffers: { codecs: COMPRESSED, errorCode: ErrorCode.NONE, why: UNREADABLE },
  },
  {
    name: 'negative record length',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0), good(1, { length: -5 })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'fewer records than the count',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0), good(1)], { codec, baseTimestamp: now, recordCount: 3 }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'bytes after the last record',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0), good(1), Buffer.from([2, 0, 0])], { codec, baseTimestamp: now, recordCount: 2 }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'negative header count',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0), good(1, { headerCount: -1 })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'header count beyond the record',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0, { headerCount: 40 })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'negative header key length',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0, { body: Buffer.concat([Buffer.from([0]), varint(0), varint(0), field('k'), field('v'), varint(1), varint(-1), field('x')]) })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'key longer than the record',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0, { body: Buffer.concat([Buffer.from([0]), varint(0), varint(0), varint(100), Buffer.from('k'), field('v'), varint(0)]) })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'varint longer than 5 bytes',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0, { body: Buffer.concat([Buffer.from([0]), varint(0), Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), field('k'), field('v'), varint(0)]) })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
  },
  {
    name: 'keyless records on a compacted topic',
    codecs: ALL,
    compacted: true,
    build: (codec, now) => rawBatch([good(0), good(1, { key: null }), good(2, { key: null })], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
    recordErrors: [1, 2],
    messages: [
      `One or more records have been rejected due to N record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=N, message='Compacted topic cannot accept message without key in topic partition TOPIC-N'), RecordError(batchIndex=N, message='Compacted topic cannot accept message without key in topic partition TOPIC-N')]`,
      'Compacted topic cannot accept message without key in topic partition TOPIC-N',
      'Compacted topic cannot accept message without key in topic partition TOPIC-N',
    ],
  },
  {
    name: 'records beyond message.timestamp.after.max.ms',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0, { timestampDelta: 2 * HOUR_MS }), good(1), good(2, { timestampDelta: 3 * HOUR_MS })], { codec, baseTimestamp: now, maxTimestamp: now + 3 * HOUR_MS }),
    errorCode: ErrorCode.INVALID_TIMESTAMP,
    recordErrors: [0, 2],
    messages: ['One or more records have been rejected due to invalid timestamp', 'Timestamp N of message with offset N is out of range. The timestamp should be within [N, N]', 'Timestamp N of message with offset N is out of range. The timestamp should be within [N, N]'],
  },
  {
    name: 'a keyless record and a late one on a compacted topic',
    codecs: ALL,
    compacted: true,
    build: (codec, now) => rawBatch([good(0, { key: null }), good(1, { timestampDelta: 2 * HOUR_MS }), good(2)], { codec, baseTimestamp: now, maxTimestamp: now + 2 * HOUR_MS }),
    errorCode: ErrorCode.INVALID_TIMESTAMP,
    recordErrors: [0, 1],
    messages: ['One or more records have been rejected due to invalid timestamp', 'Compacted topic cannot accept message without key in topic partition TOPIC-N', 'Timestamp N of message with offset N is out of range. The timestamp should be within [N, N]'],
  },
  {
    name: 'offset deltas not 0, 1, 2 in an uncompressed batch (kept as they are)',
    codecs: ['none'],
    build: (codec, now) => rawBatch([good(0), good(0), good(5)], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.NONE,
  },
  {
    name: 'offset deltas not 0, 1, 2 in a compressed batch',
    codecs: COMPRESSED,
    build: (codec, now) => rawBatch([good(0), good(0), good(5)], { codec, baseTimestamp: now }),
    errorCode: ErrorCode.INVALID_RECORD,
    kafkaDiffers: { codecs: COMPRESSED, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, why: PARTIAL_REBUILD },
  },
  {
    name: 'a LogAppendTime batch on a CreateTime topic',
    codecs: ALL,
    build: (codec, now) => rawBatch([good(0), good(1)], { codec, baseTimestamp: now, maxTimestamp: now, logAppendTime: true }),
    errorCode: ErrorCode.NONE,
  },
  ...(['DefaultRecord', 'PartialDefaultRecord'] as const).map((record) => ({
    // Kafka names the record by the class it read it as: partially when compressed and kept as it is.
    name: `a LogAppendTime batch without a time on a CreateTime topic (read as ${record})`,
    codecs: record === 'DefaultRecord' ? (['none'] as const) : COMPRESSED,
    build: (codec: CodecName, now: number) => rawBatch([good(0), good(1)], { codec, baseTimestamp: now, maxTimestamp: -1, logAppendTime: true }),
    errorCode: ErrorCode.INVALID_TIMESTAMP,
    recordErrors: [0, 1],
    messages: ['One or more records have been rejected due to invalid timestamp', logAppendTimeRefused(record), logAppendTimeRefused(record)],
  })),
  {
    name: 'corrupt compressed stream',
    codecs: COMPRESSED,
    build: (codec, now) => rawBatch(Array.from({ length: 20 }, (_, i) => good(i)), { codec, baseTimestamp: now, payload: garble }),
    errorCode: ErrorCode.INVALID_RECORD,
    kafkaDiffers: { codecs: ['zstd'], errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, why: DECOMPRESSOR_FAILED },
  },
  {
    name: 'truncated compressed stream',
    codecs: COMPRESSED,
    build: (codec, now) => rawBatch(Array.from({ length: 20 }, (_, i) => good(i)), { codec, baseTimestamp: now, payload: (c) => c.subarray(0, c.length - 6) }),
    errorCode: ErrorCode.INVALID_RECORD,
    kafkaDiffers: { codecs: COMPRESSED, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, why: DECOMPRESSOR_FAILED },
  },
];
