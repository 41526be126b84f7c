/**
 * Proves the batch v2 header view: every field reads back from its byte
 * position; the CRC-32C catches a flip of any byte it covers and ignores the
 * fields before it; the in-place rewrites (offsets, leader epoch,
 * LogAppendTime) leave a valid batch; validation answers each malformed or
 * disallowed batch with Kafka's error code instead of throwing; and
 * iterateBatches walks concatenated batches, stopping at a torn tail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  BATCH_OVERHEAD_BYTES,
  batchSizeAt,
  crc32c,
  iterateBatches,
  readBatchHeader,
  setBaseOffset,
  setLogAppendTime,
  setPartitionLeaderEpoch,
  validateBatch,
  writeCrc,
} from '../../../src/protocol/records/batch.js';
import { buildBatch, decodeRecords, type RecordInput } from '../../../src/protocol/records/records.js';

const RECORDS: RecordInput[] = [
  { key: 'a', value: 'first', timestamp: 1_700_000_000_000 },
  { key: null, value: 'second', timestamp: 1_700_000_000_050, headers: [{ key: 'h', value: 'v' }] },
  { key: 'c', value: null, timestamp: 1_700_000_000_020 },
];

function sampleBatch(compression = 0): Buffer {
  return buildBatch({ records: RECORDS, compression, producerId: 77, producerEpoch: 2, baseSequence: 40 });
}

/** Changes a batch, then restores its CRC so that only the change is under test. */
function edited(batch: Buffer, edit: (copy: Buffer) => void): Buffer {
  const copy = Buffer.from(batch);
  edit(copy);
  writeCrc(copy, 0);
  return copy;
}

test('CRC-32C matches the standard check value', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(Buffer.from('56789'), crc32c(Buffer.from('1234'))), 0xe3069283);
});

test('readBatchHeader reads every field from its documented position', () => {
  const buffer = Buffer.alloc(BATCH_HEADER_BYTES + 8);
  buffer.writeBigInt64BE(2n ** 40n + 5n, BATCH_FIELD.baseOffset);
  buffer.writeInt32BE(buffer.length - BATCH_OVERHEAD_BYTES, BATCH_FIELD.batchLength);
  buffer.writeInt32BE(9, BATCH_FIELD.partitionLeaderEpoch);
  buffer.writeInt8(2, BATCH_FIELD.magic);
  buffer.writeUInt32BE(0xfedc_ba98, BATCH_FIELD.crc);
  buffer.writeInt16BE(0x04 | 0x08 | 0x10 | 0x20 | 0x40, BATCH_FIELD.attributes);
  buffer.writeInt32BE(6, BATCH_FIELD.lastOffsetDelta);
  buffer.writeBigInt64BE(-1n, BATCH_FIELD.baseTimestamp);
  buffer.writeBigInt64BE(1_700_000_000_123n, BATCH_FIELD.maxTimestamp);
  buffer.writeBigInt64BE(2n ** 33n + 1n, BATCH_FIELD.producerId);
  buffer.writeInt16BE(-3, BATCH_FIELD.producerEpoch);
  buffer.writeInt32BE(2_147_483_000, BATCH_FIELD.baseSequence);
  buffer.writeInt32BE(7, BATCH_FIELD.recordCount);
  assert.deepEqual(readBatchHeader(buffer), {
    baseOffset: 2 ** 40 + 5,
    batchLength: buffer.length - 12,
    partitionLeaderEpoch: 9,
    magic: 2,
    crc: 0xfedc_ba98,
    attributes: 0x7c,
    compression: 4,
    timestampType: 1,
    isTransactional: true,
    isControl: true,
    hasDeleteHorizon: true,
    lastOffsetDelta: 6,
    baseTimestamp: -1,
    maxTimestamp: 1_700_000_000_123,
    producerId: 2 ** 33 + 1,
    producerEpoch: -3,
    baseSequence: 2_147_483_000,
    recordCount: 7,
    lastOffset: 2 ** 40 + 11,
    sizeBytes: buffer.length,
  });
});

test('a built batch has the header its options describe, at any position in a buffer', () => {
  const batch = buildBatch({
    records: RECORDS,
    compression: 1,
    baseOffset: 1000,
    partitionLeaderEpoch: 4,
    producerId: 77,
    producerEpoch: 2,
    baseSequence: 40,
    isTransactional: true,
  });
  const padded = Buffer.concat([Buffer.alloc(13, 0xaa), batch]);
  const header = readBatchHeader(padded, 13);
  assert.equal(validateBatch(padded, 13), null);
  assert.equal(header.baseOffset, 1000);
  assert.equal(header.lastOffset, 1002);
  assert.equal(header.partitionLeaderEpoch, 4);
  assert.equal(header.compression, 1);
  assert.equal(header.isTransactional, true);
  assert.equal(header.isControl, false);
  assert.equal(header.baseTimestamp, 1_700_000_000_000);
  assert.equal(header.maxTimestamp, 1_700_000_000_050);
  assert.equal(header.recordCount, 3);
  assert.equal(header.sizeBytes, batch.length);
  assert.equal(header.crc, crc32c(batch.subarray(BATCH_FIELD.attributes)));
});

test('the CRC catches a flipped byte anywhere in attributes..end, for every codec', () => {
  for (const compression of [0, 1, 2, 3, 4]) {
    const batch = sampleBatch(compression);
    assert.equal(validateBatch(batch), null);
    for (let index = BATCH_FIELD.attributes; index < batch.length; index++) {
      const copy = Buffer.from(batch);
      copy[index]! ^= 0x01;
      const error = validateBatch(copy);
      assert.equal(error?.code, 'CORRUPT_MESSAGE', `codec ${compression}, byte ${index}`);
    }
  }
});

test('a flipped CRC field is caught; the fields before it are not CRC-covered', () => {
  const batch = sampleBatch();
  for (let index = BATCH_FIELD.crc; index < BATCH_FIELD.attributes; index++) {
    const copy = Buffer.from(batch);
    copy[index]! ^= 0x80;
    assert.equal(validateBatch(copy)?.code, 'CORRUPT_MESSAGE', `crc byte ${index}`);
  }
  for (let index = 0; index < BATCH_FIELD.batchLength; index++) {
    const copy = Buffer.from(batch);
    copy[index]! ^= 0x01;
    assert.equal(validateBatch(copy), null, `baseOffset byte ${index}`);
  }
});

test('setBaseOffset and setPartitionLeaderEpoch keep the CRC valid and move the records', () => {
  for (const compression of [0, 3]) {
    const batch = sampleBatch(compression);
    const crcBefore = readBatchHeader(batch).crc;
    setBaseOffset(batch, 0, 2 ** 45 + 3);
    setPartitionLeaderEpoch(batch, 0, 12);
    const header = readBatchHeader(batch);
    assert.equal(validateBatch(batch, 0, { origin: 'log' }), null);
    assert.equal(header.crc, crcBefore);
    assert.equal(header.baseOffset, 2 ** 45 + 3);
    assert.equal(header.lastOffset, 2 ** 45 + 5);
    assert.equal(header.partitionLeaderEpoch, 12);
    const decoded = decodeRecords(batch);
    assert.deepEqual(
      decoded.records?.map((record) => record.offset),
      [2 ** 45 + 3, 2 ** 45 + 4, 2 ** 45 + 5],
    );
  }
});

test('setLogAppendTime sets the type bit and maxTimestamp, recomputes the CRC, and records read that time', () => {
  for (const compression of [0, 4]) {
    const batch = sampleBatch(compression);
    setLogAppendTime(batch, 0, 1_800_000_000_000);
    const header = readBatchHeader(batch);
    assert.equal(validateBatch(batch), null);
    assert.equal(header.timestampType, 1);
    assert.equal(header.maxTimestamp, 1_800_000_000_000);
    assert.equal(header.compression, compression);
    assert.equal(header.isTransactional, false);
    const decoded = decodeRecords(batch);
    assert.deepEqual(
      decoded.records?.map((record) => record.timestamp),
      [1_800_000_000_000, 1_800_000_000_000, 1_800_000_000_000],
    );
  }
});

test('setLogAppendTime leaves an already-stamped batch byte for byte unchanged', () => {
  const batch = sampleBatch();
  setLogAppendTime(batch, 0, 5);
  const once = Buffer.from(batch);
  setLogAppendTime(batch, 0, 5);
  assert.deepEqual(batch, once);
});

test('rewrites at a position other than 0 touch only that batch', () => {
  const first = sampleBatch();
  const second = sampleBatch(1);
  const buffer = Buffer.concat([first, second]);
  setBaseOffset(buffer, first.length, 50);
  setLogAppendTime(buffer, first.length, 99);
  assert.deepEqual(buffer.subarray(0, first.length), first);
  assert.equal(validateBatch(buffer, first.length), null);
  assert.equal(readBatchHeader(buffer, first.length).baseOffset, 50);
});

test('batchSizeAt reads the declared size, or null with fewer than 12 bytes left', () => {
  const batch = sampleBatch();
  assert.equal(batchSizeAt(batch, 0), batch.length);
  assert.equal(batchSizeAt(batch.subarray(0, 12), 0), batch.length);
  assert.equal(batchSizeAt(batch.subarray(0, 11), 0), null);
  assert.equal(batchSizeAt(batch, batch.length - 11), null);
});

test('iterateBatches yields each whole batch and stops at a torn tail', () => {
  const batches = [sampleBatch(), sampleBatch(2), buildBatch({ records: [{ value: 'x' }], baseOffset: 3 })];
  const whole = Buffer.concat(batches);
  const found = [...iterateBatches(whole)];
  assert.deepEqual(
    found.map((entry) => entry.position),
    [0, batches[0]!.length, batches[0]!.length + batches[1]!.length],
  );
  assert.deepEqual(
    found.map((entry) => entry.header.sizeBytes),
    batches.map((batch) => batch.length),
  );
  const torn = whole.subarray(0, whole.length - 1);
  assert.equal([...iterateBatches(torn)].length, 2);
  assert.equal([...iterateBatches(whole.subarray(0, 5))].length, 0);
});

test('iterateBatches stops at a declared size smaller than the header', () => {
  const bad = Buffer.concat([sampleBatch(), Buffer.alloc(70)]);
  bad.writeInt32BE(10, sampleBatch().length + BATCH_FIELD.batchLength);
  assert.equal([...iterateBatches(bad)].length, 1);
});

test('validateBatch reports framing problems as CORRUPT_MESSAGE', () => {
  const batch = sampleBatch();
  assert.equal(validateBatch(batch.subarray(0, 60))?.code, 'CORRUPT_MESSAGE');
  assert.equal(validateBatch(Buffer.alloc(0))?.code, 'CORRUPT_MESSAGE');
  assert.equal(validateBatch(batch.subarray(0, batch.length - 1))?.code, 'CORRUPT_MESSAGE');
  const small = Buffer.from(batch);
  small.writeInt32BE(48, BATCH_FIELD.batchLength);
  assert.equal(validateBatch(small)?.code, 'CORRUPT_MESSAGE');
  const negative = Buffer.from(batch);
  negative.writeInt32BE(-1, BATCH_FIELD.batchLength);
  assert.equal(validateBatch(negative)?.code, 'CORRUPT_MESSAGE');
});

test('validateBatch rejects magic other than 2 as INVALID_RECORD', () => {
  for (const magic of [0, 1, 3, -1]) {
    const batch = edited(sampleBatch(), (copy) => copy.writeInt8(magic, BATCH_FIELD.magic));
    assert.equal(validateBatch(batch)?.code, 'INVALID_RECORD', `magic ${magic}`);
  }
});

test('validateBatch rejects compression ids 5-7', () => {
  for (const id of [5, 6, 7]) {
    const batch = edited(sampleBatch(), (copy) => copy.writeInt16BE(id, BATCH_FIELD.attributes));
    assert.equal(validateBatch(batch)?.code, 'UNSUPPORTED_COMPRESSION_TYPE', `id ${id}`);
  }
});

test("validateBatch applies Kafka's client-origin rules only to client batches", () => {
  const mismatched = edited(sampleBatch(), (copy) => copy.writeInt32BE(5, BATCH_FIELD.lastOffsetDelta));
  assert.equal(validateBatch(mismatched)?.code, 'INVALID_RECORD');
  assert.equal(validateBatch(mismatched, 0, { origin: 'log' }), null, 'a compacted batch keeps its offset range');

  const empty = buildBatch({ records: [], lastOffsetDelta: 2 });
  assert.equal(validateBatch(empty)?.code, 'INVALID_RECORD');
  assert.equal(validateBatch(empty, 0, { origin: 'replication' }), null);

  const control = edited(sampleBatch(), (copy) => copy.writeInt16BE(0x20, BATCH_FIELD.attributes));
  assert.equal(validateBatch(control)?.code, 'INVALID_RECORD');
  assert.equal(validateBatch(control, 0, { origin: 'coordinator' }), null);

  const noSequence = buildBatch({ records: RECORDS, producerId: 5, producerEpoch: 0, baseSequence: -1 });
  assert.equal(validateBatch(noSequence)?.code, 'INVALID_RECORD');
  assert.equal(validateBatch(buildBatch({ records: RECORDS })), null, 'no producer id needs no sequence');
});

test('validateBatch rejects impossible counts for every origin', () => {
  const overCount = edited(sampleBatch(), (copy) => copy.writeInt32BE(4, BATCH_FIELD.recordCount));
  assert.equal(validateBatch(overCount, 0, { origin: 'log' })?.code, 'INVALID_RECORD');
  const negative = edited(sampleBatch(), (copy) => copy.writeInt32BE(-1, BATCH_FIELD.recordCount));
  assert.equal(validateBatch(negative, 0, { origin: 'log' })?.code, 'INVALID_RECORD');
  const cannotFit = edited(sampleBatch(), (copy) => {
    copy.writeInt32BE(1_000_000, BATCH_FIELD.recordCount);
    copy.writeInt32BE(999_999, BATCH_FIELD.lastOffsetDelta);
  });
  assert.equal(validateBatch(cannotFit, 0, { origin: 'log' })?.code, 'INVALID_RECORD');
});

test('validateBatch takes timestamps and producer ids beyond 2^53 as Kafka does, and refuses a stored offset a log cannot hold', () => {
  // Regression (issue 9): nanosecond timestamps were INVALID_RECORD, and recovery truncated such batches.
  const nanos = edited(sampleBatch(), (copy) => {
    copy.writeBigInt64BE(1_733_000_000_123_456_789n, BATCH_FIELD.baseTimestamp);
    copy.writeBigInt64BE(2n ** 63n - 1n, BATCH_FIELD.maxTimestamp);
    copy.writeBigInt64BE(2n ** 62n + 1n, BATCH_FIELD.producerId);
  });
  assert.equal(validateBatch(nanos), null);
  assert.equal(validateBatch(nanos, 0, { origin: 'log' }), null);
  const farOffset = Buffer.from(sampleBatch());
  farOffset.writeBigInt64BE(2n ** 62n, BATCH_FIELD.baseOffset);
  assert.equal(validateBatch(farOffset), null, "a client's baseOffset is overwritten, so it is not checked");
  assert.equal(validateBatch(farOffset, 0, { origin: 'log' })?.code, 'INVALID_RECORD');
});
