/**
 * Proves that bytes after the last field a version declares are ignored, as
 * Kafka's generated readers ignore them: a request and a response of every
 * API key at every version, with trailing bytes appended, decode to exactly
 * what they decode to without them (seeded; the seed is in the name).
 * Regression: librdkafka 2.15 sends 3 such bytes in Metadata v13 and Spool
 * closed the connection ("malformed: 3 trailing bytes after Metadata request").
 *
 * Also proves how a known tagged field is read: in place, its declared size
 * unused, as Kafka's generated readers do (MessageDataGenerator reads the
 * field from the message's own Readable and consults `_size` only for
 * unknown tags).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/env.js';
import { allApis } from '../../src/protocol/schemas/index.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, isFlexible, versionRange } from '../../src/protocol/apis.js';
import { compileStruct } from '../../src/protocol/codec.js';
import { Reader } from '../../src/protocol/reader.js';
import { field, struct } from '../../src/protocol/schema.js';
import { generateStruct } from './generate.js';

const SEED = 20261201;
const TRAILING_BYTES_MAX = 8;

/** A frame without its 4-byte size prefix, with `extra` appended. */
function frameWith(chunks: Buffer[], extra: Buffer): Buffer {
  return Buffer.concat([...chunks, extra]).subarray(4);
}

for (const definition of allApis) {
  test(`${definition.name} (key ${definition.key}) ignores trailing bytes after requests and responses at every version, seed ${SEED}`, () => {
    const random = new SeededRandom(SEED + definition.key);
    const { min, max } = versionRange(definition);
    for (let version = min; version <= max; version++) {
      const flexible = isFlexible(definition, version);
      const extra = random.bytes(1 + random.nextInt(TRAILING_BYTES_MAX));
      const header = { apiVersion: version, correlationId: 7, clientId: 'trailing' };
      const request = encodeRequest(definition, header, generateStruct(definition.request, version, random, { flexible }));
      const plainRequest = decodeRequest(frameWith(request, Buffer.alloc(0)));
      const paddedRequest = decodeRequest(frameWith(request, extra));
      assert.ok(plainRequest.ok, `${definition.name} v${version} request`);
      assert.ok(paddedRequest.ok, `${definition.name} v${version} request with ${extra.length} trailing bytes: ${paddedRequest.ok ? '' : paddedRequest.error.message}`);
      assert.deepEqual(paddedRequest.body, plainRequest.body);

      const response = encodeResponse(definition, version, 7, generateStruct(definition.response, version, random, { flexible }));
      const plainResponse = decodeResponse(definition, version, frameWith(response, Buffer.alloc(0)));
      const paddedResponse = decodeResponse(definition, version, frameWith(response, extra));
      assert.ok(plainResponse.ok, `${definition.name} v${version} response`);
      assert.ok(paddedResponse.ok, `${definition.name} v${version} response with ${extra.length} trailing bytes`);
      assert.deepEqual(paddedResponse.body, plainResponse.body);
    }
  });
}

const taggedMessage = [
  struct('inner', '0+', [field('value', 'int32', '0+', { tag: 0 })]),
  field('after', 'int16', '0+'),
] as const;

// Each case: inner struct with 1 tagged field (tag 0) whose declared size is `size`, holding int32 42;
// then 0x00 0x05 and the outer tagged section (0 fields). Kafka reads the int32 whatever the size says,
// so 0x0005 is always the outer `after` field: the size is not used to skip or bound the value.
const taggedCases = [
  { size: 6, name: 'extra bytes inside its declared size are read as what follows' },
  { size: 0, name: 'a declared size shorter than its value does not cut it' },
];

for (const { size, name } of taggedCases) {
  test(`a known tagged field is read in place, as Kafka reads it: ${name}`, () => {
    const codec = compileStruct(taggedMessage, 0, true);
    const reader = new Reader(Buffer.from([0x01, 0x00, size, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x05, 0x00]));
    const decoded = codec.decode(reader);
    assert.equal(reader.error, null);
    assert.equal(reader.remaining, 0);
    assert.deepEqual(decoded.inner, { value: 42 });
    assert.equal(decoded.after, 5);
  });
}
