/**
 * Proves that the request decoder accepts what Kafka 4.4's generated readers
 * accept and refuses what they refuse (each case names what Spool did
 * before), and that a hostile request at the default socket.request.max.bytes
 * (100 MiB) is refused before the decoder allocates for it: an array count
 * over 1,000,000 or beyond what the bytes left can hold, more than 10,000
 * tagged fields, or more elements in one request than REQUEST_ELEMENTS_MAX.
 * Allocation is asserted as the number of array elements the decoder built
 * before it stopped (no timing, no heap sampling).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRequest, requestCodec, requestHeaderVersion } from '../../src/protocol/apis.js';
import { writeRequestHeader } from '../../src/protocol/header.js';
import { Reader, REQUEST_ELEMENTS_MAX } from '../../src/protocol/reader.js';
import type { ApiDef } from '../../src/protocol/schema.js';
import { CreatePartitions } from '../../src/protocol/schemas/37-create-partitions.js';
import { DescribeGroups } from '../../src/protocol/schemas/15-describe-groups.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { Writer } from '../../src/protocol/writer.js';
import { brokerConfigDef } from '../../src/common/config.js';

const SOCKET_REQUEST_BYTES_MAX = brokerConfigDef('socket.request.max.bytes')!.default as number;

function uvarint(value: number): Buffer {
  const writer = new Writer();
  writer.uvarint(value);
  return writer.finish();
}

function int32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(value);
  return bytes;
}

/** A request frame (no size prefix): the header for `api` at `version`, then `body`. */
function frame(api: ApiDef, version: number, body: readonly Buffer[]): Buffer {
  const header = new Writer();
  writeRequestHeader(header, { requestApiKey: api.key, requestApiVersion: version, correlationId: 1, clientId: 'hostile' }, requestHeaderVersion(api, version));
  return Buffer.concat([header.finish(), ...body]);
}

/** Decodes a request body with the broker's element budget; the value even when it failed part way. */
function decodeBody(api: ApiDef, version: number, body: readonly Buffer[]): { value: Record<string, unknown>; reader: Reader } {
  const reader = new Reader(Buffer.concat(body));
  reader.elementsLeft = REQUEST_ELEMENTS_MAX;
  return { value: requestCodec(api, version).decode(reader), reader };
}

/** Array elements in a decoded value, nested ones included: what the decoder allocated. */
function elementsIn(value: unknown): number {
  if (Array.isArray(value)) return value.length + value.reduce((sum: number, item) => sum + elementsIn(item), 0);
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) return Object.values(value).reduce((sum: number, item) => sum + elementsIn(item), 0);
  return 0;
}

function assertRefused(api: ApiDef, version: number, body: readonly Buffer[], message: RegExp): Record<string, unknown> {
  const decoded = decodeRequest(frame(api, version, body));
  assert.equal(decoded.ok, false);
  assert.ok(!decoded.ok && decoded.reason === 'malformed');
  assert.match(decoded.error.message, message);
  return decodeBody(api, version, body).value;
}

test('tagged fields out of tag order are read, as Kafka reads them (Spool refused them)', () => {
  // Fetch v12: no topics, no forgotten topics, rack "", then tag 9 (unknown, 1 byte) before tag 0 (clusterId "c").
  const body = [int32(-1), int32(0), int32(0), int32(0), Buffer.from([0]), int32(0), int32(-1), uvarint(1), uvarint(1), uvarint(1), Buffer.from([0x02, 0x09, 0x01, 0x07, 0x00, 0x02, 0x02, 0x63])];
  const decoded = decodeRequest(frame(Fetch, 12, body));
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.error.message);
  assert.equal(decoded.body.clusterId, 'c');
  assert.deepEqual(decoded.body._unknownTags, [{ tag: 9, data: Buffer.from([0x07]) }]);
});

test('a tag known to the struct but not valid in this version is refused, as Kafka refuses it (Spool kept it as unknown)', () => {
  // Fetch v16 partition: tag 0 (ReplicaDirectoryId) exists only from v17.
  const partition = [int32(0), int32(-1), Buffer.alloc(8), int32(-1), Buffer.alloc(8), int32(1024), Buffer.from([0x01, 0x00, 0x10]), Buffer.alloc(16)];
  const topic = [Buffer.alloc(16), uvarint(2), ...partition, Buffer.from([0x00])];
  const body = [int32(0), int32(0), int32(0), Buffer.from([0]), int32(0), int32(-1), uvarint(2), ...topic, uvarint(1), uvarint(1), Buffer.from([0x00])];
  assertRefused(Fetch, 16, body, /tag 0 is not valid for version 16/);
  // The same partition at v17 is read.
  const v17 = decodeRequest(frame(Fetch, 17, body));
  assert.ok(v17.ok, v17.ok ? '' : v17.error.message);
});

test('a negative array count is null where the field is nullable and refused where it is not, as in Kafka (Spool refused any count below -1)', () => {
  const nullable = decodeRequest(frame(Metadata, 1, [int32(-5)]));
  assert.ok(nullable.ok);
  assert.equal(nullable.body.topics, null);
  assertRefused(DescribeGroups, 0, [int32(-2)], /groups is null but not nullable/);
});

test('a bool byte other than 0 reads as true, as Kafka reads it', () => {
  const decoded = decodeRequest(frame(Metadata, 4, [int32(0), Buffer.from([0x02])]));
  assert.ok(decoded.ok);
  assert.equal(decoded.body.allowAutoTopicCreation, true);
});

test('10,000 tagged fields are read; 10,001 are refused before the first is read, as Kafka 4.4 refuses them (Spool read them)', () => {
  const unknownTags = (count: number) => {
    const pairs = Buffer.alloc(count * 2);
    for (let i = 0; i < count; i++) pairs[2 * i] = 0x7f; // tag 127 (unknown), size 0
    return [uvarint(1), Buffer.from([0x00]), Buffer.from([0x00]), uvarint(count), pairs];
  };
  const atLimit = decodeRequest(frame(Metadata, 12, unknownTags(10_000)));
  assert.ok(atLimit.ok, atLimit.ok ? '' : atLimit.error.message);
  assert.equal((atLimit.body as { _unknownTags?: unknown[] })._unknownTags?.length, 10_000);
  assertRefused(Metadata, 12, unknownTags(10_001), /tagged field count 10001 over 10000/);
});

test(`a ${SOCKET_REQUEST_BYTES_MAX}-byte request claiming 2^31-1 array elements is refused with none allocated`, () => {
  const body = [int32(0x7fff_ffff), Buffer.alloc(SOCKET_REQUEST_BYTES_MAX - 64)];
  const value = assertRefused(DescribeGroups, 4, body, /array of 2147483647 cannot fit/);
  assert.equal(elementsIn(value), 0);
});

test('a request of 50 million empty strings in one array (within socket.request.max.bytes) is refused at its count, with none allocated', () => {
  const count = 50_000_000;
  const body = [uvarint(count + 1), Buffer.alloc(count, 0x01), Buffer.from([0x00, 0x00])];
  const value = assertRefused(DescribeGroups, 5, body, /array of 50000000 over 1000000 elements/);
  assert.equal(elementsIn(value), 0);
});

test(`a ${SOCKET_REQUEST_BYTES_MAX}-byte request claiming 50 million tagged fields is refused at the count`, () => {
  const count = 50_000_000;
  const body = [uvarint(1), Buffer.from([0x00, 0x00]), uvarint(count), Buffer.alloc(count * 2 - 64, 0x7f)];
  const value = assertRefused(Metadata, 12, body, /tagged field count 50000000 over 10000/);
  assert.equal(elementsIn(value), 0);
});

test(`a ${SOCKET_REQUEST_BYTES_MAX}-byte request whose arrays, each within Kafka's limit, add up to more than REQUEST_ELEMENTS_MAX is refused before the elements that would cross it`, () => {
  // CreatePartitions v2: one topic with 25 assignments of 1,000,000 broker ids each (100,000,100 bytes).
  // Spool used to decode all 25 million; the same shape of empty assignments ran Node out of heap.
  const brokerIds = 1_000_000;
  const assignment = [uvarint(brokerIds + 1), Buffer.alloc(brokerIds * 4), Buffer.from([0x00])];
  const assignments = Array.from({ length: 25 }, () => assignment).flat();
  const body = [uvarint(2), uvarint(1), int32(30), uvarint(26), ...assignments, Buffer.from([0x00]), int32(0), Buffer.from([0x00, 0x00])];
  assert.ok(Buffer.concat(body).length <= SOCKET_REQUEST_BYTES_MAX);
  const value = assertRefused(CreatePartitions, 2, body, /array of 1000000 over the 999974 elements left to this message/);
  const allocated = elementsIn(value);
  assert.ok(allocated <= REQUEST_ELEMENTS_MAX, `${allocated} elements allocated`);
  assert.equal(allocated, 1 + 5 + 4 * brokerIds);
});
