/**
 * Proves the leader's produce validation answers what Kafka answers for each
 * bad batch (framing, magic, ZStandard before v7, baseOffset, size, CRC,
 * keyless records on compacted topics, timestamps out of range, with record
 * indexes), and rewrites good batches as Kafka does: leader epoch,
 * LogAppendTime, maxTimestamp from the records, and recompression when the
 * topic's compression.type asks for another codec.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, decodeRecords } from '../../src/protocol/records/records.js';
import { BATCH_FIELD, Compression, readBatchHeader, validateBatch, writeCrc } from '../../src/protocol/records/batch.js';
import { validateLeaderBatch, validateProduceRecords, type LeaderValidationConfig } from '../../src/replication/record-validator.js';

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
