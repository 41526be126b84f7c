/**
 * Proves, on a real broker over TCP, that requests are read exactly as Kafka
 * 4.4's generated readers read them: what they accept gets a normal answer,
 * what they refuse closes the connection (Kafka's SocketServer closes a
 * connection whose request it cannot parse; there is no error response).
 * Each case names what Spool did before.
 * SPOOL_E2E_BOOTSTRAP=host:port runs the same cases against Apache Kafka.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ApiDef, Partial, RequestOf } from '../../src/protocol/schema.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { DescribeGroups } from '../../src/protocol/schemas/15-describe-groups.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { uvarintBytes, Writer } from '../../src/protocol/writer.js';
import { startTestBroker, type TestBroker } from '../client/broker-fixture.js';
import { WireClient } from './wire-client.js';

let broker: TestBroker;
test.before(async () => {
  broker = await startTestBroker();
});
test.after(async () => {
  await broker.stop();
});

/** A request frame whose body's final byte (an empty top-level tagged-field section) is replaced by `tags`. */
function withTopLevelTags<A extends ApiDef>(api: A, version: number, body: Partial<RequestOf<A>>, tags: Buffer): Buffer {
  const frame = Buffer.concat(encodeRequest(api, { apiVersion: version, correlationId: 1, clientId: 'decoding' }, body));
  assert.equal(frame[frame.length - 1], 0, 'the top-level tagged-field section is empty');
  return sized(Buffer.concat([frame.subarray(4, frame.length - 1), tags]));
}

function sized(frameBody: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(frameBody.length);
  return Buffer.concat([size, frameBody]);
}

/** Sends one frame on a fresh connection: the response frame, or null if the broker closed the connection. */
async function exchange(frame: Buffer): Promise<Buffer | null> {
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    client.send([frame]);
    return await client.next();
  } finally {
    client.close();
  }
}

const emptyFetch = { maxWaitMs: 0, minBytes: 0, topics: [] };

test('tagged fields out of tag order are read, as Kafka reads them (Spool closed the connection)', async () => {
  // Tag 5 (unknown, empty), then tag 0 (clusterId, null).
  const frame = withTopLevelTags(Fetch, 12, emptyFetch, Buffer.from([0x02, 0x05, 0x00, 0x00, 0x01, 0x00]));
  const response = await exchange(frame);
  assert.ok(response !== null, 'the broker closed the connection');
  const decoded = decodeResponse(Fetch, 12, response);
  assert.ok(decoded.ok);
  assert.equal(decoded.body.errorCode, ErrorCode.NONE);
});

test('a tag the version does not allow closes the connection, as in Kafka (Spool kept it as unknown)', async () => {
  // Fetch's tag 1 (ReplicaState) is valid from v15; at v12 Kafka refuses it.
  const frame = withTopLevelTags(Fetch, 12, emptyFetch, Buffer.from([0x01, 0x01, 0x00]));
  assert.equal(await exchange(frame), null);
});

function unknownTags(count: number): Buffer {
  const tags = Buffer.alloc(count * 2); // tag 0x7f (unknown to Metadata), size 0
  for (let i = 0; i < count; i++) tags[2 * i] = 0x7f;
  const writer = new Writer();
  writer.uvarint(count);
  return Buffer.concat([writer.finish(), tags]);
}

test('10,000 tagged fields are read; 10,001 close the connection, as in Kafka 4.4 (Spool read them)', async () => {
  const body = { topics: [], allowAutoTopicCreation: false };
  const atLimit = await exchange(withTopLevelTags(Metadata, 12, body, unknownTags(10_000)));
  assert.ok(atLimit !== null, 'the broker closed the connection');
  assert.ok(decodeResponse(Metadata, 12, atLimit).ok);
  assert.equal(await exchange(withTopLevelTags(Metadata, 12, body, unknownTags(10_001))), null);
});

/** DescribeGroups v5 with `count` empty group ids, written directly (encoding a million-element array would be slow). */
function describeEmptyGroups(count: number): Buffer {
  const header = Buffer.concat(encodeRequest(DescribeGroups, { apiVersion: 5, correlationId: 1, clientId: 'decoding' }, { groups: [] }));
  const headerBytes = header.subarray(4, header.length - 3); // drop the body: empty array (0x01), bool, tags
  const countBytes = new Writer();
  countBytes.uvarint(count + 1);
  return sized(Buffer.concat([headerBytes, countBytes.finish(), Buffer.alloc(count, 0x01), Buffer.from([0x00, 0x00])]));
}

test('an array of 1,000,001 elements closes the connection before its elements are read, as in Kafka 4.4', async () => {
  assert.equal(uvarintBytes(1_000_002), 3);
  assert.equal(await exchange(describeEmptyGroups(1_000_001)), null);
});

test('a compact string of 0x7fff bytes is read; one of 0x8000 closes the connection, as in Kafka (Spool read it)', async () => {
  const request = (length: number) => encodeRequest(DescribeGroups, { apiVersion: 5, correlationId: 1, clientId: 'decoding' }, { groups: ['g'.repeat(length)] });
  const longest = await exchange(Buffer.concat(request(0x7fff)));
  assert.ok(longest !== null, 'the broker closed the connection');
  assert.ok(decodeResponse(DescribeGroups, 5, longest).ok);
  assert.equal(await exchange(Buffer.concat(request(0x8000))), null);
});

test('ApiVersions at an unknown flexible version reads a v2 request header, as Kafka does', async () => {
  // v99 is flexible by ApiVersions' "3+", so the header has a tagged-field section: here it is missing.
  const frame = Buffer.concat(encodeRequest(ApiVersions, { apiVersion: 2, correlationId: 9, clientId: 'decoding' }, {}));
  frame.writeInt16BE(99, 6);
  assert.equal(await exchange(frame), null);
  // With the section present it gets the v0 answer with UNSUPPORTED_VERSION.
  const withTags = sized(Buffer.concat([frame.subarray(4), Buffer.from([0x00])]));
  const response = await exchange(withTags);
  assert.ok(response !== null, 'the broker closed the connection');
  const decoded = decodeResponse(ApiVersions, 0, response);
  assert.ok(decoded.ok);
  assert.equal(decoded.correlationId, 9);
  assert.equal(decoded.body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
});

test('varints and compact lengths are read in Kafka int arithmetic (Spool closed the connection on both)', async () => {
  const metadataWithTopicsCount = (count: Buffer) => {
    const frame = Buffer.concat(encodeRequest(Metadata, { apiVersion: 12, correlationId: 3, clientId: 'decoding' }, { topics: [], allowAutoTopicCreation: false }));
    // The body is: topics count (0x01: empty), two bools, tagged fields.
    return sized(Buffer.concat([frame.subarray(4, frame.length - 4), count, frame.subarray(frame.length - 3)]));
  };
  // A fifth byte's bits beyond 32 are dropped: 81 80 80 80 10 is 1, an empty array.
  const empty = await exchange(metadataWithTopicsCount(Buffer.from([0x81, 0x80, 0x80, 0x80, 0x10])));
  assert.ok(empty !== null, 'the broker closed the connection');
  const emptyBody = decodeResponse(Metadata, 12, empty);
  assert.ok(emptyBody.ok);
  assert.deepEqual(emptyBody.body.topics, []);
  // 0xffffffff is -1 as a Java int, so the count is -2: null, which for Metadata means every topic.
  const all = await exchange(metadataWithTopicsCount(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])));
  assert.ok(all !== null, 'the broker closed the connection');
  assert.ok(decodeResponse(Metadata, 12, all).ok);
});
