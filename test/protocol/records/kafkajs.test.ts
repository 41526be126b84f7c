/**
 * Golden batches from a real producer, kafkajs 2.x: its own Produce v3
 * request encoder (the code its producer runs) writes the batches, with no
 * compression, gzip, snappy through kafkajs-snappy (raw snappy from
 * snappyjs) and lz4 through kafkajs-lz4 (node-lz4 frames: 4 MiB blocks and a
 * content checksum). Spool must validate them as a broker would and decode
 * exactly the messages sent. The other way round, kafkajs's batch decoder
 * must read batches Spool built. (kafkajs's zstd codec, @kafkajs/zstd, does
 * not build on Node 20, so zstd is covered by the Java interop test.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Reader } from '../../../src/protocol/reader.js';
import { readBatchHeader, validateBatch } from '../../../src/protocol/records/batch.js';
import { buildBatch, decodeRecords, type RecordInput } from '../../../src/protocol/records/records.js';

const require = createRequire(import.meta.url);

interface KafkajsMessage {
  key: Buffer | string | null;
  value: Buffer | string | null;
  timestamp: string;
  headers?: { [key: string]: Buffer | string };
}

interface KafkajsRequest {
  encode(): Promise<{ buffer: Buffer }>;
}

interface KafkajsRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: { [key: string]: Buffer | Buffer[] };
}

const kafkajs = require('kafkajs') as {
  CompressionTypes: { None: number; GZIP: number; Snappy: number; LZ4: number; ZSTD: number };
  CompressionCodecs: { [type: number]: () => unknown };
};
const LZ4Codec = require('kafkajs-lz4') as new () => { codec: () => unknown };
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.Snappy] = require('kafkajs-snappy') as () => unknown;
kafkajs.CompressionCodecs[kafkajs.CompressionTypes.LZ4] = new LZ4Codec().codec;

const produceV3 = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (options: object) => KafkajsRequest;
const batchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (
  decoder: unknown,
) => Promise<{ records: KafkajsRecord[] }>;
const KafkajsDecoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;

const TIME = 1_700_000_000_000;
const MESSAGES: KafkajsMessage[] = [
  { key: 'key-0', value: 'value-0', timestamp: String(TIME), headers: { trace: 'abc', empty: '' } },
  { key: null, value: 'no key', timestamp: String(TIME + 5) },
  { key: 'tombstone', value: null, timestamp: String(TIME + 7) },
  { key: Buffer.from([0, 1, 2]), value: Buffer.alloc(150_000, 'kafkajs '), timestamp: String(TIME + 9) },
  { key: 'ünïcødé ✓', value: 'last', timestamp: String(TIME + 11), headers: { 'hé': Buffer.from([255]) } },
];

const CODECS = [
  ['none', 0],
  ['gzip', 1],
  ['snappy', 2],
  ['lz4', 3],
] as const;

/** Encodes a Produce v3 request with kafkajs and returns the one record batch inside it. */
async function kafkajsBatch(compression: number, options: { producerId?: number; transactionalId?: string } = {}) {
  const Long = require('kafkajs/src/utils/long.js') as { fromValue(value: number): unknown };
  const request = produceV3({
    acks: -1,
    timeout: 30_000,
    compression,
    ...(options.transactionalId === undefined ? {} : { transactionalId: options.transactionalId }),
    producerId: Long.fromValue(options.producerId ?? -1),
    producerEpoch: 3,
    topicData: [{ topic: 'spool-golden', partitions: [{ partition: 0, firstSequence: 12, messages: MESSAGES }] }],
  });
  const body = (await request.encode()).buffer;
  const reader = new Reader(body);
  reader.string(false); // transactional id
  reader.int16(); // acks
  reader.int32(); // timeout
  assert.equal(reader.int32(), 1);
  assert.equal(reader.string(false), 'spool-golden');
  assert.equal(reader.int32(), 1);
  assert.equal(reader.int32(), 0);
  const batch = reader.bytes(false);
  assert.equal(reader.error, null);
  return Buffer.from(batch!);
}

function asBuffer(value: Buffer | string | null): Buffer | null {
  return value === null ? null : Buffer.from(value);
}

for (const [name, compression] of CODECS) {
  test(`kafkajs ${name} batch from its Produce v3 encoder validates and decodes to the messages sent`, async () => {
    const batch = await kafkajsBatch(compression);
    assert.equal(validateBatch(batch), null);
    const header = readBatchHeader(batch);
    assert.equal(header.compression, compression);
    assert.equal(header.recordCount, MESSAGES.length);
    assert.equal(header.maxTimestamp, TIME + 11);
    if (name === 'snappy') assert.notEqual(batch[61], 0x82, 'kafkajs-snappy writes raw snappy, not xerial');
    if (name === 'lz4') assert.equal(batch[61 + 5], 0x70, 'node-lz4 declares 4 MiB blocks');
    const decoded = decodeRecords(batch);
    assert.equal(decoded.error, null, decoded.error?.message);
    assert.deepEqual(
      decoded.records,
      MESSAGES.map((message, index) => ({
        offset: index,
        timestamp: Number(message.timestamp),
        key: asBuffer(message.key),
        value: asBuffer(message.value),
        headers: Object.entries(message.headers ?? {}).map(([key, value]) => ({ key, value: Buffer.from(value) })),
      })),
    );
  });
}

test('a kafkajs idempotent, transactional batch carries its producer fields', async () => {
  const batch = await kafkajsBatch(1, { producerId: 4321, transactionalId: 'txn-1' });
  const header = readBatchHeader(batch);
  assert.equal(validateBatch(batch), null);
  assert.equal(header.producerId, 4321);
  assert.equal(header.producerEpoch, 3);
  assert.equal(header.baseSequence, 12);
  assert.equal(header.isTransactional, true);
});

test('kafkajs decodes batches Spool built, for each codec it supports', async () => {
  const inputs: RecordInput[] = MESSAGES.map((message) => ({
    key: message.key,
    value: message.value,
    timestamp: Number(message.timestamp),
    headers: Object.entries(message.headers ?? {}).map(([key, value]) => ({ key, value })),
  }));
  for (const [name, compression] of CODECS) {
    const batch = buildBatch({ records: inputs, compression, baseOffset: 900 });
    const { records } = await batchDecoder(new KafkajsDecoder(batch));
    assert.deepEqual(
      records.map((record) => [record.offset, record.timestamp, record.key, record.value]),
      inputs.map((input, index) => [String(900 + index), String(input.timestamp), asBuffer(input.key!), asBuffer(input.value!)]),
      name,
    );
    assert.deepEqual(records[0]!.headers, { trace: Buffer.from('abc'), empty: Buffer.alloc(0) }, name);
  }
});
