/**
 * Proves the leader's produce validation answers what Kafka answers for each
 * bad batch (framing, magic, ZStandard before v7, baseOffset, size, CRC,
 * keyless records on compacted topics, timestamps out of range, with record
 * indexes), and rewrites good batches as Kafka does: leader epoch,
 * LogAppendTime, maxTimestamp from the records, and recompression when the
 * topic's compression.type asks for another codec. Then, for issue 9 §2:
 * every record of every batch, compressed or not, is read and held to
 * Kafka's rules (each case of corrupt-batches.ts); zip bombs are refused
 * without being inflated; nanosecond timestamps stay exact.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, decodeRecords } from '../../src/protocol/records/records.js';
import { BATCH_FIELD, Compression, readBatchHeader, validateBatch, writeCrc } from '../../src/protocol/records/batch.js';
import { compress } from '../../src/protocol/records/compression.js';
import { validateLeaderBatch, validateProduceRecords, type LeaderValidationConfig } from '../../src/replication/record-validator.js';
import { CORRUPT_CASES, field, rawBatch, rawRecord, varint, type CodecName, type RawRecord } from './corrupt-batches.js';

const NOW_MS = 1_700_000_000_000;
const config: LeaderValidationConfig = {
  maxMessageBytes: 1_048_588,
  compacted: false,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
  messageTimestampAfterMaxMs: 3_600_000,
  compressionType: 'producer',
};

const records = (n: number, timestamp = NOW_MS) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp }));

const good = (offsetDelta: number, extra: Partial<RawRecord> = {}) => rawRecord({ offsetDelta, ...extra });

/** Zigzag varlong of any int64. */
function varlong(value: bigint): Buffer {
  let rest = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  const bytes: number[] = [];
  while (rest >= 0x80n) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
  return Buffer.from(bytes);
}

function errorOf(result: ReturnType<typeof validateLeaderBatch>) {
  assert.ok('error' in result, 'expected an error');
  return result.error;
}

test('produce framing: one magic-2 batch per partition, ZStandard only from v7', () => {
  const batch = buildBatch({ records: records(2) });
  assert.equal(validateProduceRecords(batch, 9), null);
  assert.equal(validateProduceRecords(null, 9)?.errorCode, ErrorCode.INVALID_RECORD);
  assert.equal(validateProduceRecords(Buffer.concat([batch, batch]), 9)?.errorCode, ErrorCode.INVALID_RECORD);
  const magic1 = Buffer.from(batch);
  magic1.writeInt8(1, BATCH_FIELD.magic);
  assert.equal(validateProduceRecords(magic1, 9)?.errorCode, ErrorCode.INVALID_RECORD);
  const zstd = buildBatch({ records: records(2), compression: Compression.zstd });
  assert.equal(validateProduceRecords(zstd, 6)?.errorCode, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
  assert.equal(validateProduceRecords(zstd, 7), null);
});

test('baseOffset must be 0, size within max.message.bytes, CRC intact', () => {
  const options = { config, nowMs: NOW_MS, leaderEpoch: 3 };
  assert.equal(errorOf(validateLeaderBatch(buildBatch({ records: records(1), baseOffset: 5 }), options)).errorCode, ErrorCode.INVALID_RECORD);
  const big = buildBatch({ records: [{ value: Buffer.alloc(2000) }] });
  assert.equal(errorOf(validateLeaderBatch(big, { ...options, config: { ...config, maxMessageBytes: 1000 } })).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  const corrupt = buildBatch({ records: records(2) });
  corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 0xff;
  assert.equal(errorOf(validateLeaderBatch(corrupt, options)).errorCode, ErrorCode.CORRUPT_MESSAGE);
});

test('a valid batch gets the leader epoch and keeps its bytes; maxTimestamp comes from the records', () => {
  const batch = buildBatch({ records: [{ value: 'a', timestamp: NOW_MS - 10 }, { value: 'b', timestamp: NOW_MS - 5 }] });
  // A producer that wrote a wrong maxTimestamp: Kafka recomputes it from the records.
  batch.writeBigInt64BE(BigInt(NOW_MS - 100), BATCH_FIELD.maxTimestamp);
  writeCrc(batch, 0);
  const result = validateLeaderBatch(batch, { config, nowMs: NOW_MS, leaderEpoch: 7 });
  assert.ok('validated' in result);
  assert.equal(result.validated.batch, batch, 'rewritten in place, no copy');
  assert.equal(result.validated.header.partitionLeaderEpoch, 7);
  assert.equal(result.validated.header.maxTimestamp, NOW_MS - 5);
  assert.equal(result.validated.logAppendTimeMs, -1);
  assert.equal(validateBatch(batch), null, 'CRC still valid after the rewrite');
});

test('LogAppendTime topics get the append time in the header', () => {
  const batch = buildBatch({ records: records(3, NOW_MS - 1_000_000) });
  const result = validateLeaderBatch(batch, { config: { ...config, messageTimestampType: 'LogAppendTime' }, nowMs: NOW_MS, leaderEpoch: 0 });
  assert.ok('validated' in result);
  assert.equal(result.validated.logAppendTimeMs, NOW_MS);
  assert.equal(result.validated.header.timestampType, 1);
  assert.equal(result.validated.header.maxTimestamp, NOW_MS);
  assert.deepEqual(decodeRecords(result.validated.batch).records!.map((r) => r.timestamp), [NOW_MS, NOW_MS, NOW_MS]);
});

test('records too far in the future get INVALID_TIMESTAMP with their indexes', () => {
  const batch = buildBatch({ records: [{ value: 'ok', timestamp: NOW_MS }, { value: 'late', timestamp: NOW_MS + 3_600_001 }, { value: 'ok', timestamp: NOW_MS + 1 }] });
  const error = errorOf(validateLeaderBatch(batch, { config, nowMs: NOW_MS, leaderEpoch: 0 }));
  assert.equal(error.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.deepEqual(error.recordErrors?.map((e) => e.batchIndex), [1]);
  const tooOld = buildBatch({ records: records(1, NOW_MS - 61_000) });
  const old = errorOf(validateLeaderBatch(tooOld, { config: { ...config, messageTimestampBeforeMaxMs: 60_000 }, nowMs: NOW_MS, leaderEpoch: 0 }));
  assert.equal(old.errorCode, ErrorCode.INVALID_TIMESTAMP);
});

test('compacted topics refuse keyless records, compressed or not, naming each one', () => {
  const compacted = { ...config, compacted: true };
  for (const compression of [Compression.none, Compression.lz4]) {
    const batch = buildBatch({ compression, records: [{ key: 'a', value: '1', timestamp: NOW_MS }, { key: null, value: '2', timestamp: NOW_MS }, { value: '3', timestamp: NOW_MS }] });
    const error = errorOf(validateLeaderBatch(batch, { config: compacted, nowMs: NOW_MS, leaderEpoch: 0 }));
    assert.equal(error.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(error.recordErrors?.map((e) => e.batchIndex), [1, 2]);
  }
});

test('compression.type other than producer recompresses the records with the topic codec', () => {
  const batch = buildBatch({ compression: Compression.snappy, records: records(4), producerId: 12, producerEpoch: 1, baseSequence: 40 });
  const result = validateLeaderBatch(batch, { config: { ...config, compressionType: 'gzip' }, nowMs: NOW_MS, leaderEpoch: 2 });
  assert.ok('validated' in result);
  const header = readBatchHeader(result.validated.batch);
  assert.equal(header.compression, Compression.gzip);
  assert.equal(header.producerId, 12);
  assert.equal(header.baseSequence, 40);
  assert.equal(header.recordCount, 4);
  assert.equal(validateBatch(result.validated.batch), null);
  assert.deepEqual(decodeRecords(result.validated.batch).records!.map((r) => r.value!.toString()), ['v0', 'v1', 'v2', 'v3']);
});

// ---- every record of every batch (issue 9 §2)

const recordConfig = (compacted: boolean): LeaderValidationConfig => ({ ...config, compacted, messageTimestampBeforeMaxMs: Infinity });

test('each broken record, in every codec, gets Kafka\'s error code and recordErrors (corrupt-batches.ts)', () => {
  const wrong: string[] = [];
  for (const corrupt of CORRUPT_CASES) {
    for (const codec of corrupt.codecs) {
      const result = validateLeaderBatch(corrupt.build(codec, NOW_MS), { config: recordConfig(corrupt.compacted === true), nowMs: NOW_MS, leaderEpoch: 0, topicPartition: 't-0' });
      const errorCode = 'error' in result ? result.error.errorCode : ErrorCode.NONE;
      const indexes = 'error' in result ? (result.error.recordErrors ?? []).map((e) => e.batchIndex) : [];
      if (errorCode !== corrupt.errorCode || JSON.stringify(indexes) !== JSON.stringify(corrupt.recordErrors ?? [])) {
        wrong.push(`${corrupt.name} (${codec}): ${errorCode} ${JSON.stringify(indexes)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('a record body over max.decompressed.message.bytes is refused inside compressed batches only, as Kafka reads those from a stream', () => {
  const tight = { ...config, maxDecompressedMessageBytes: 50 };
  const big = [good(0, { value: Buffer.alloc(60, 1) })];
  const compressed = errorOf(validateLeaderBatch(rawBatch(big, { codec: 'zstd', baseTimestamp: NOW_MS }), { config: tight, nowMs: NOW_MS, leaderEpoch: 0 }));
  assert.equal(compressed.errorCode, ErrorCode.INVALID_RECORD);
  assert.match(compressed.message, /exceeds the configured maximum record size of 50/);
  assert.ok('validated' in validateLeaderBatch(rawBatch(big, { codec: 'none', baseTimestamp: NOW_MS }), { config: tight, nowMs: NOW_MS, leaderEpoch: 0 }));
});

test('zip bombs: one record then gigabytes of zeros are refused without inflating them (zstd, snappy streamed; gzip, lz4 bounded)', () => {
  const record = rawRecord({ offsetDelta: 0 });
  const zeros = Buffer.alloc(1 << 20);
  const bombs = {
    // 8192 concatenated frames of 1 MiB of zeros: 8 GiB inflated.
    zstd: Buffer.concat([compress(Compression.zstd, record), ...Array<Buffer>(8192).fill(compress(Compression.zstd, zeros))]),
    // xerial blocks of 32 KiB of zeros: 256 MiB inflated (snappy inflates at most ~21x, so more needs a larger batch).
    snappy: (() => {
      const block = compress(Compression.snappy, zeros.subarray(0, 32 * 1024));
      const first = compress(Compression.snappy, record);
      return Buffer.concat([first, ...Array<Buffer>(8192).fill(block.subarray(16))]);
    })(),
    gzip: Buffer.concat([compress(Compression.gzip, record), ...Array<Buffer>(200).fill(compress(Compression.gzip, zeros))]),
    lz4: Buffer.concat([compress(Compression.lz4, record), ...Array<Buffer>(200).fill(compress(Compression.lz4, zeros))]),
  };
  const rssBefore = process.memoryUsage().rss;
  for (const [codec, payload] of Object.entries(bombs) as [CodecName, Buffer][]) {
    const batch = rawBatch([record], { codec, baseTimestamp: NOW_MS, payload: () => payload });
    const error = errorOf(validateLeaderBatch(batch, { config: { ...config, maxMessageBytes: 64 << 20 }, nowMs: NOW_MS, leaderEpoch: 0 }));
    const expected = codec === 'zstd' || codec === 'snappy' ? ErrorCode.INVALID_RECORD : ErrorCode.MESSAGE_TOO_LARGE;
    assert.equal(error.errorCode, expected, `${codec}: ${error.message}`);
  }
  const grownBytes = process.memoryUsage().rss - rssBefore;
  assert.ok(grownBytes < 400 * 1024 * 1024, `rss grew ${grownBytes} bytes`);
});

test('timestamps beyond 2^53 (nanosecond clocks) are compared and reported exactly, never rounded', () => {
  const base = 2 ** 52;
  const nanos = 1_700_000_000_000_000_123n;
  // The second record's delta takes it to an exact nanosecond value above 2^53.
  const records = [good(0), rawRecord({ offsetDelta: 1, body: Buffer.concat([Buffer.from([0]), varlong(nanos - BigInt(base)), varint(1), field('k'), field('v'), varint(0)]) })];
  const batch = rawBatch(records, { codec: 'zstd', baseTimestamp: base });
  const error = errorOf(validateLeaderBatch(Buffer.from(batch), { config, nowMs: NOW_MS, leaderEpoch: 0 }));
  assert.equal(error.errorCode, ErrorCode.INVALID_TIMESTAMP);
  const second = error.recordErrors!.find((recordError) => recordError.batchIndex === 1);
  assert.match(second!.batchIndexErrorMessage!, new RegExp(`^Timestamp ${nanos} of message with offset 1 is out of range`));
  const anyTime = { ...config, messageTimestampAfterMaxMs: Infinity };
  const result = validateLeaderBatch(batch, { config: anyTime, nowMs: NOW_MS, leaderEpoch: 0 });
  assert.ok('validated' in result);
  assert.equal(result.validated.batch.readBigInt64BE(BATCH_FIELD.maxTimestamp), nanos, 'maxTimestamp written exactly');
});

test('a LogAppendTime batch on a CreateTime topic is stored as CreateTime with its time as maxTimestamp, as Kafka does', () => {
  const batch = rawBatch([good(0), good(1)], { codec: 'lz4', baseTimestamp: NOW_MS - 10, maxTimestamp: NOW_MS, logAppendTime: true });
  const result = validateLeaderBatch(batch, { config, nowMs: NOW_MS, leaderEpoch: 0 });
  assert.ok('validated' in result);
  assert.equal(result.validated.header.timestampType, 0);
  assert.equal(result.validated.header.maxTimestamp, NOW_MS);
  assert.equal(validateBatch(result.validated.batch), null);
});

test('compression.type rebuilds batches with offset deltas 0, 1, 2 whatever the producer wrote, as Kafka does', () => {
  const batch = rawBatch([good(0), good(0), good(5, { headers: [['h', null]] })], { codec: 'snappy', baseTimestamp: NOW_MS });
  const result = validateLeaderBatch(batch, { config: { ...config, compressionType: 'zstd' }, nowMs: NOW_MS, leaderEpoch: 4 });
  assert.ok('validated' in result);
  assert.equal(result.validated.header.compression, Compression.zstd);
  assert.equal(result.validated.header.partitionLeaderEpoch, 4);
  const decoded = decodeRecords(result.validated.batch).records!;
  assert.deepEqual(decoded.map((r) => r.offset), [0, 1, 2]);
  assert.deepEqual(decoded[2]!.headers, [{ key: 'h', value: null }]);
});
