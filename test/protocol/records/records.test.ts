/**
 * Proves that records survive buildBatch -> decodeRecords with every codec
 * (null and empty keys and values, headers with null values and non-ASCII
 * keys, timestamps before the first one, offset gaps, multi-byte varints,
 * LogAppendTime), that control batches carry Kafka's end-transaction marker,
 * and that malformed record sections (truncated or overlong varints, wrong
 * lengths, leftover bytes, bad header counts, garbage compressed data, and
 * seeded random corruption) give error values and never throw.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../../src/io/env.js';
import {
  BATCH_FIELD,
  BATCH_HEADER_BYTES,
  readBatchHeader,
  validateBatch,
  writeCrc,
} from '../../../src/protocol/records/batch.js';
import { buildControlBatch, readControlRecord } from '../../../src/protocol/records/control.js';
import {
  buildBatch,
  decodeRecords,
  encodeRecords,
  type Record,
  type RecordInput,
} from '../../../src/protocol/records/records.js';

const CODECS = [0, 1, 2, 3, 4] as const;

function bigValue(length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let index = 0; index < length; index++) out[index] = (index * 31 + (index >> 7)) & 0xff;
  return out;
}

const INPUTS: RecordInput[] = [
  { key: 'key-0', value: 'value-0', timestamp: 1_700_000_000_000, headers: [{ key: 'trace', value: 'abc' }] },
  { key: null, value: 'no key', timestamp: 1_700_000_000_005 },
  { key: 'tombstone', value: null, timestamp: 1_699_999_999_000 },
  { key: '', value: '', timestamp: 1_700_000_000_100, headers: [{ key: 'ünï ✓', value: null }, { key: '', value: '' }] },
  { key: bigValue(20), value: bigValue(200_000), timestamp: 1_700_000_000_200 },
];

function expected(inputs: readonly RecordInput[], baseOffset: number): Record[] {
  const bytes = (value: Buffer | string | null | undefined): Buffer | null =>
    value === null || value === undefined ? null : Buffer.from(value);
  return inputs.map((input, index) => ({
    offset: input.offset ?? baseOffset + index,
    timestamp: input.timestamp ?? -1,
    key: bytes(input.key),
    value: bytes(input.value),
    headers: (input.headers ?? []).map((header) => ({ key: header.key, value: bytes(header.value) })),
  }));
}

function decodeOk(batch: Buffer): Record[] {
  const decoded = decodeRecords(batch);
  assert.equal(decoded.error, null, decoded.error?.message);
  return decoded.records!;
}

/** A batch with the given records section and count, CRC made right so that only the section is under test. */
function batchWithSection(section: Buffer, count: number, compression = 0): Buffer {
  const template = buildBatch({ records: [{ value: 'x' }] });
  const batch = Buffer.concat([template.subarray(0, BATCH_HEADER_BYTES), section]);
  batch.writeInt32BE(batch.length - 12, BATCH_FIELD.batchLength);
  batch.writeInt16BE(compression, BATCH_FIELD.attributes);
  batch.writeInt32BE(count, BATCH_FIELD.recordCount);
  batch.writeInt32BE(Math.max(0, count - 1), BATCH_FIELD.lastOffsetDelta);
  writeCrc(batch, 0);
  return batch;
}

for (const compression of CODECS) {
  test(`records round-trip through buildBatch and decodeRecords, codec ${compression}`, () => {
    const batch = buildBatch({ records: INPUTS, compression, baseOffset: 70 });
    assert.equal(validateBatch(batch), null);
    assert.equal(readBatchHeader(batch).compression, compression);
    assert.deepEqual(decodeOk(batch), expected(INPUTS, 70));
  });
}

test('a thousand records with multi-byte offset and timestamp deltas round-trip', () => {
  const inputs = Array.from({ length: 1000 }, (_, index) => ({
    key: `k${index}`,
    value: `value number ${index}`,
    timestamp: 1_700_000_000_000 + index * 86_400_000,
  }));
  for (const compression of [0, 4]) {
    const batch = buildBatch({ records: inputs, compression, baseOffset: 2 ** 35 });
    assert.deepEqual(decodeOk(batch), expected(inputs, 2 ** 35));
  }
});

test('explicit offsets leave gaps, and lastOffsetDelta follows the last record', () => {
  const inputs: RecordInput[] = [
    { value: 'a', offset: 10, timestamp: 1 },
    { value: 'b', offset: 13, timestamp: 2 },
    { value: 'c', offset: 200, timestamp: 3 },
  ];
  const batch = buildBatch({ records: inputs, baseOffset: 10 });
  assert.equal(readBatchHeader(batch).lastOffset, 200);
  assert.equal(validateBatch(batch, 0, { origin: 'log' }), null);
  assert.deepEqual(decodeOk(batch), expected(inputs, 10));
  assert.throws(() => buildBatch({ records: [{ offset: 5 }, { offset: 5 }], baseOffset: 5 }), RangeError);
});

test('a LogAppendTime batch gives every record the log append time', () => {
  const batch = buildBatch({ records: INPUTS.slice(0, 3), timestampType: 1, logAppendTimeMs: 1_234 });
  assert.equal(readBatchHeader(batch).timestampType, 1);
  assert.deepEqual(
    decodeOk(batch).map((record) => record.timestamp),
    [1_234, 1_234, 1_234],
  );
  assert.throws(() => buildBatch({ records: [], timestampType: 1 }), RangeError);
});

test('a batch with a delete horizon keeps exact record timestamps', () => {
  const inputs = INPUTS.slice(0, 3);
  const batch = buildBatch({ records: inputs, deleteHorizonMs: 1_800_000_000_000, compression: 1 });
  const header = readBatchHeader(batch);
  assert.equal(header.hasDeleteHorizon, true);
  assert.equal(header.baseTimestamp, 1_800_000_000_000);
  assert.equal(validateBatch(batch), null);
  assert.deepEqual(decodeOk(batch), expected(inputs, 0));
});

test('an empty batch decodes to no records', () => {
  const batch = buildBatch({ records: [], lastOffsetDelta: 4, baseOffset: 9 });
  assert.equal(validateBatch(batch, 0, { origin: 'log' }), null);
  assert.deepEqual(decodeOk(batch), []);
});

test('commit and abort markers are transactional control batches that read back', () => {
  for (const type of ['COMMIT', 'ABORT'] as const) {
    const batch = buildControlBatch({
      type,
      producerId: 99,
      producerEpoch: 4,
      coordinatorEpoch: 11,
      timestamp: 1_700_000_001_000,
      baseOffset: 42,
      partitionLeaderEpoch: 5,
    });
    const header = readBatchHeader(batch);
    assert.equal(validateBatch(batch, 0, { origin: 'coordinator' }), null);
    assert.equal(header.isControl, true);
    assert.equal(header.isTransactional, true);
    assert.equal(header.baseSequence, -1);
    assert.equal(header.producerId, 99);
    assert.equal(header.producerEpoch, 4);
    assert.equal(header.partitionLeaderEpoch, 5);
    const [record] = decodeOk(batch);
    assert.equal(record!.offset, 42);
    assert.equal(record!.timestamp, 1_700_000_001_000);
    assert.deepEqual(record!.key, Buffer.from([0, 0, 0, type === 'COMMIT' ? 1 : 0]));
    assert.deepEqual(readControlRecord(record!), {
      version: 0,
      type,
      typeId: type === 'COMMIT' ? 1 : 0,
      coordinatorEpoch: 11,
    });
  }
});

test('readControlRecord reads other control types and answers short keys and values with errors', () => {
  const record = (key: Buffer | null, value: Buffer | null): Record => ({ offset: 0, timestamp: 0, key, value, headers: [] });
  assert.deepEqual(readControlRecord(record(Buffer.from([0, 0, 0, 2]), Buffer.alloc(20))), {
    version: 0,
    type: 'LEADER_CHANGE',
    typeId: 2,
    coordinatorEpoch: null,
  });
  assert.equal((readControlRecord(record(Buffer.from([0, 1, 0, 99]), null)) as { type: string }).type, 'UNKNOWN');
  assert.equal((readControlRecord(record(Buffer.from([0, 0, 0]), null)) as { code: string }).code, 'INVALID_RECORD');
  assert.equal((readControlRecord(record(null, null)) as { code: string }).code, 'INVALID_RECORD');
  const shortMarker = readControlRecord(record(Buffer.from([0, 0, 0, 1]), Buffer.from([0, 0, 0, 0, 1])));
  assert.equal((shortMarker as { code: string }).code, 'INVALID_RECORD');
});

test('decodeRecords checks the CRC unless told not to', () => {
  const batch = buildBatch({ records: INPUTS.slice(0, 2) });
  batch[BATCH_FIELD.crc]! ^= 0xff;
  assert.equal(decodeRecords(batch).error?.code, 'CORRUPT_MESSAGE');
  assert.equal(decodeRecords(batch, { checkCrc: false }).error, null);
  const wrongMagic = Buffer.from(batch);
  wrongMagic.writeInt8(1, BATCH_FIELD.magic);
  assert.equal(decodeRecords(wrongMagic, { checkCrc: false }).error?.code, 'INVALID_RECORD');
  assert.equal(decodeRecords(batch.subarray(0, 40), { checkCrc: false }).error?.code, 'INVALID_RECORD');
});

test('malformed record sections give INVALID_RECORD, not exceptions', () => {
  const good = encodeRecords([{ key: 'k', value: 'v', headers: [{ key: 'h', value: 'x' }] }], {
    baseTimestamp: 0,
    offsetDeltas: [0],
  });
  const cases: [string, Buffer, number][] = [
    ['truncated record', good.subarray(0, good.length - 2), 1],
    ['more records declared than present', good, 2],
    ['bytes left after the records', Buffer.concat([good, Buffer.from([0])]), 1],
    ['varint longer than 5 bytes', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0]), 1],
    ['unterminated varint', Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]), 1],
    ['varint cut by the end', Buffer.from([0, 0, 0, 0, 0, 0, 0x80]), 2],
    ['negative record length', Buffer.from([0x01, 0, 0, 0, 1, 1, 0, 0]), 1],
    ['record length past the end', Buffer.from([0x7e, 0, 0, 0, 1, 1, 0, 0]), 1],
    // length 8: attributes, timestampDelta, offsetDelta, key -1, value -1, 1 header, its key -1 and value -1
    ['negative header key size', Buffer.from([16, 0, 0, 0, 1, 1, 2, 1, 1]), 1],
    ['negative header count', Buffer.from([12, 0, 0, 0, 1, 1, 1]), 1],
    ['record shorter than declared', Buffer.from([16, 0, 0, 0, 1, 1, 0, 0, 0]), 1],
  ];
  for (const [name, section, count] of cases) {
    const result = decodeRecords(batchWithSection(section, count), { checkCrc: false });
    assert.equal(result.error?.code, 'INVALID_RECORD', name);
    assert.equal(result.records, null, name);
  }
});

test('garbage behind a codec id gives CORRUPT_MESSAGE for every codec', () => {
  for (const compression of [1, 2, 3, 4]) {
    const result = decodeRecords(batchWithSection(Buffer.from('definitely not compressed data'), 1, compression));
    assert.equal(result.error?.code, 'CORRUPT_MESSAGE', `codec ${compression}`);
  }
});

test('a batch decompressing past the limit is MESSAGE_TOO_LARGE', () => {
  for (const compression of [1, 2, 3, 4]) {
    const batch = buildBatch({ records: [{ value: Buffer.alloc(1 << 20) }], compression });
    const result = decodeRecords(batch, { decompressedBytesMax: 1 << 16 });
    assert.equal(result.error?.code, 'MESSAGE_TOO_LARGE', `codec ${compression}`);
  }
});

test('seeded random corruption of record sections never throws (seed 4451)', () => {
  const random = new SeededRandom(4451);
  for (const compression of CODECS) {
    const batch = buildBatch({ records: INPUTS.slice(0, 4), compression });
    for (let round = 0; round < 300; round++) {
      const copy = Buffer.from(batch);
      const flips = 1 + random.nextInt(4);
      for (let flip = 0; flip < flips; flip++) {
        const index = BATCH_HEADER_BYTES + random.nextInt(copy.length - BATCH_HEADER_BYTES);
        copy[index] = random.nextInt(256);
      }
      writeCrc(copy, 0);
      const result = decodeRecords(copy);
      assert.ok(
        (result.error === null) !== (result.records === null),
        `codec ${compression} round ${round}: exactly one of records and error`,
      );
    }
  }
});
