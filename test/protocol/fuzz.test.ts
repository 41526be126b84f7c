/**
 * Fuzzes the frame codec with hostile input, for every API key and version
 * registered in allApis, requests and responses alike.
 *
 * Inputs: (a) random frames, both raw and behind a valid request header, with
 * bytes biased toward length-like values (0x00, 0x7f, 0x80, 0xff); (b) valid
 * frames built from generated values, then mutated: bits flipped, bytes
 * overwritten, inserted, deleted, duplicated, the frame truncated, and huge
 * lengths (int16, int32 and uvarint) written over random positions.
 *
 * Invariants, checked on every input:
 * - decodeRequest / decodeResponse never throw; a refusal is ok:false with a
 *   DecodeError (DESIGN.md §3.8);
 * - decoding never reads past the frame: a codec reading a window of a larger
 *   buffer ends at or before the window end, and every byte view it returns
 *   lies inside the window;
 * - decoding finishes quickly because its output is bounded by its input:
 *   the decoded value has at most a fixed number of nodes per frame byte, so
 *   a hostile length cannot make it allocate or loop beyond the frame.
 *
 * Seeded: the seed is printed and in each test name; replay with
 * SPOOL_FUZZ_SEED=<seed>, run longer with SPOOL_FUZZ_SCALE=<factor>.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/env.js';
import type { Random } from '../../src/io/env.js';
import { allApis } from '../../src/protocol/schemas/index.js';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  isFlexible,
  requestCodec,
  responseCodec,
  versionRange,
  type DecodedRequest,
} from '../../src/protocol/apis.js';
import type { StructCodec } from '../../src/protocol/codec.js';
import { DecodeError, Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import type { ApiDef } from '../../src/protocol/schema.js';
import { generateStruct } from './generate.js';

const SEED = Number(process.env['SPOOL_FUZZ_SEED'] ?? 20261130);
const SCALE = Number(process.env['SPOOL_FUZZ_SCALE'] ?? 4);
const RANDOM_FRAMES_PER_VERSION = Math.ceil(12 * SCALE);
const VALID_VALUES_PER_VERSION = Math.ceil(3 * SCALE);
const MUTATIONS_PER_VALUE = 6;
/** Decoded nodes (structs, array elements, byte views) allowed per frame byte, plus a constant for defaults. */
const NODES_PER_BYTE_MAX = 8;
const NODES_BASE_MAX = 4096;

console.log(`fuzz seed ${SEED} scale ${SCALE} (replay: SPOOL_FUZZ_SEED=${SEED})`);

/** Byte values that are lengths, nulls and varint continuations in Kafka's encodings. */
const INTERESTING_BYTES = [0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff];
/** Length fields pushed to their limits: int32, int16 and uvarint forms. */
const HUGE_LENGTHS = ['7fffffff', 'ffffffff', '80000000', '7ffffffe', '7fff', 'ffff', '8000', 'ffffffff0f', 'feffffff0f', 'ffffffff07', '8080', '80808080'].map((h) =>
  Buffer.from(h, 'hex'),
);

function biasedBytes(random: Random, length: number): Buffer {
  const out = random.bytes(length);
  for (let i = 0; i < length; i++) {
    if (random.nextInt(3) === 0) out[i] = INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)]!;
  }
  return out;
}

/** One random edit of `frame`, leaving the first `keep` bytes (API key and version) alone. */
function mutateOnce(frame: Buffer, random: Random, keep: number): Buffer {
  const at = keep + random.nextInt(Math.max(1, frame.length - keep + 1));
  switch (random.nextInt(7)) {
    case 0: {
      const out = Buffer.from(frame);
      if (at < out.length) out[at] = out[at]! ^ (1 << random.nextInt(8));
      return out;
    }
    case 1: {
      const out = Buffer.from(frame);
      if (at < out.length) out[at] = INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)]!;
      return out;
    }
    case 2:
      return Buffer.concat([frame.subarray(0, at), biasedBytes(random, 1 + random.nextInt(8)), frame.subarray(at)]);
    case 3:
      return Buffer.concat([frame.subarray(0, at), frame.subarray(at + 1 + random.nextInt(8))]);
    case 4:
      return Buffer.from(frame.subarray(0, at));
    case 5: {
      const huge = HUGE_LENGTHS[random.nextInt(HUGE_LENGTHS.length)]!;
      const out = Buffer.from(frame);
      huge.copy(out, at, 0, Math.max(0, Math.min(huge.length, out.length - at)));
      return out;
    }
    default: {
      const length = 1 + random.nextInt(16);
      return Buffer.concat([frame.subarray(0, at), frame.subarray(at, at + length), frame.subarray(at)]);
    }
  }
}

function mutate(frame: Buffer, random: Random, keep: number): Buffer {
  let out = frame;
  const edits = 1 + random.nextInt(3);
  for (let i = 0; i < edits; i++) out = mutateOnce(out, random, keep);
  return out;
}

/** Counts structs, array elements and byte views in a decoded value. */
function countNodes(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  if (Buffer.isBuffer(value)) return 1;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + 1 + countNodes(item), 0);
  let sum = 1;
  for (const item of Object.values(value)) sum += countNodes(item);
  return sum;
}

/** Every non-empty Buffer inside `value`. */
function collectViews(value: unknown, out: Buffer[] = []): Buffer[] {
  if (value === null || typeof value !== 'object') return out;
  if (Buffer.isBuffer(value)) {
    if (value.length > 0) out.push(value);
    return out;
  }
  for (const item of Array.isArray(value) ? value : Object.values(value)) collectViews(item, out);
  return out;
}

interface Case {
  label: string;
  frame: Buffer;
}

function describe(c: Case): string {
  const shown = c.frame.length > 256 ? `${c.frame.subarray(0, 256).toString('hex')}...` : c.frame.toString('hex');
  return `${c.label}, seed ${SEED}, ${c.frame.length} bytes: ${shown}`;
}

function checkBounded(c: Case, decoded: unknown): void {
  const nodes = countNodes(decoded);
  assert.ok(nodes <= NODES_PER_BYTE_MAX * c.frame.length + NODES_BASE_MAX, `${nodes} decoded nodes from ${describe(c)}`);
}

function checkRequest(c: Case): void {
  let result: DecodedRequest;
  try {
    result = decodeRequest(c.frame);
  } catch (error) {
    assert.fail(`decodeRequest threw ${String(error)} on ${describe(c)}`);
  }
  if (result.ok) checkBounded(c, result.body);
  else assert.ok(result.error instanceof DecodeError, `not a DecodeError: ${describe(c)}`);
}

function checkResponse(definition: ApiDef, version: number, c: Case): void {
  let result: ReturnType<typeof decodeResponse>;
  try {
    result = decodeResponse(definition, version, c.frame);
  } catch (error) {
    assert.fail(`decodeResponse threw ${String(error)} on ${describe(c)}`);
  }
  if (result.ok) checkBounded(c, result.body);
  else assert.ok(result.error instanceof DecodeError, `not a DecodeError: ${describe(c)}`);
}

/**
 * Decodes `body` with `codec` from a window of a larger buffer whose tail is
 * readable bytes, so that an over-read would succeed silently if bounds were
 * wrong; checks the reader and every returned view stay inside the window.
 */
function checkWindow(codec: StructCodec, c: Case, tail: Buffer): void {
  const backing = Buffer.concat([c.frame, tail]);
  const reader = new Reader(backing, 0, c.frame.length);
  let decoded: unknown;
  try {
    decoded = codec.decode(reader);
  } catch (error) {
    assert.fail(`codec.decode threw ${String(error)} on ${describe(c)}`);
  }
  assert.ok(reader.offset <= c.frame.length, `reader ended at ${reader.offset}, past the window: ${describe(c)}`);
  for (const view of collectViews(decoded)) {
    const start = view.byteOffset - backing.byteOffset;
    const inside = view.buffer === backing.buffer && start >= 0 && start + view.length <= c.frame.length;
    assert.ok(inside, `a ${view.length}-byte view escapes the window: ${describe(c)}`);
  }
  checkBounded(c, decoded);
}

function concatChunks(chunks: Buffer[]): Buffer {
  return Buffer.concat(chunks).subarray(4);
}

function encodeBody(codec: StructCodec, value: Record<string, unknown>): Buffer {
  const writer = new Writer();
  codec.encode(writer, value);
  return writer.finish();
}

/** Random bytes behind the key and version, and behind a whole valid request header. */
function fuzzRandomRequests(definition: ApiDef, version: number, random: Random): void {
  const label = `${definition.name} v${version} random request`;
  const valid = concatChunks(encodeRequest(definition, { apiVersion: version, correlationId: 7, clientId: 'fuzz' }, {}));
  const headerOnly = valid.subarray(0, 4 + 4 + 2 + 4 + (isFlexible(definition, version) ? 1 : 0));
  for (let i = 0; i < RANDOM_FRAMES_PER_VERSION; i++) {
    const body = biasedBytes(random, random.nextInt(i % 4 === 0 ? 600 : 48));
    const prefix = i % 3 === 0 ? valid.subarray(0, 4) : headerOnly;
    checkRequest({ label, frame: Buffer.concat([prefix, body]) });
  }
}

function fuzzMutatedRequests(definition: ApiDef, version: number, random: Random): void {
  const flexible = isFlexible(definition, version);
  const codec = requestCodec(definition, version);
  for (let i = 0; i < VALID_VALUES_PER_VERSION; i++) {
    const value = generateStruct(definition.request, version, random, { flexible });
    const header = { apiVersion: version, correlationId: random.nextInt(2 ** 31), clientId: i % 2 === 0 ? 'fuzz-client' : null };
    const frame = concatChunks(encodeRequest(definition, header, value));
    const body = encodeBody(codec, value);
    checkRequest({ label: `${definition.name} v${version} valid request`, frame });
    for (let m = 0; m < MUTATIONS_PER_VALUE; m++) {
      const keep = m === 0 ? 0 : 4;
      checkRequest({ label: `${definition.name} v${version} mutated request`, frame: mutate(frame, random, keep) });
      checkWindow(codec, { label: `${definition.name} v${version} mutated request body`, frame: mutate(body, random, 0) }, body);
    }
  }
}

function fuzzResponses(definition: ApiDef, version: number, random: Random): void {
  const flexible = isFlexible(definition, version);
  const codec = responseCodec(definition, version);
  for (let i = 0; i < RANDOM_FRAMES_PER_VERSION; i++) {
    const frame = biasedBytes(random, random.nextInt(i % 4 === 0 ? 600 : 48));
    checkResponse(definition, version, { label: `${definition.name} v${version} random response`, frame });
  }
  for (let i = 0; i < VALID_VALUES_PER_VERSION; i++) {
    const value = generateStruct(definition.response, version, random, { flexible });
    const frame = concatChunks(encodeResponse(definition, version, random.nextInt(2 ** 31), value));
    const body = encodeBody(codec, value);
    for (let m = 0; m < MUTATIONS_PER_VALUE; m++) {
      checkResponse(definition, version, { label: `${definition.name} v${version} mutated response`, frame: mutate(frame, random, 0) });
      checkWindow(codec, { label: `${definition.name} v${version} mutated response body`, frame: mutate(body, random, 0) }, body);
    }
  }
}

for (const definition of allApis) {
  test(`${definition.name} (key ${definition.key}): hostile request and response frames are refused, never thrown, seed ${SEED}`, () => {
    const random = new SeededRandom((SEED + definition.key * 7919) >>> 0);
    const { min, max } = versionRange(definition);
    for (let version = min; version <= max; version++) {
      fuzzRandomRequests(definition, version, random);
      fuzzMutatedRequests(definition, version, random);
      fuzzResponses(definition, version, random);
    }
  });
}

test(`frames for unknown keys, unsupported versions and short frames are refused without throwing, seed ${SEED}`, () => {
  const random = new SeededRandom(SEED);
  for (let length = 0; length < 16; length++) checkRequest({ label: `short frame`, frame: biasedBytes(random, length) });
  for (let i = 0; i < 2000 * SCALE; i++) {
    const frame = biasedBytes(random, 4 + random.nextInt(64));
    frame.writeInt16BE(random.nextInt(300) - 20, 0);
    frame.writeInt16BE(random.nextInt(40) - 4, 2);
    checkRequest({ label: 'random key and version', frame });
  }
  const unknown = decodeRequest(Buffer.from('7fff0000000000010000', 'hex'));
  assert.equal(unknown.ok, false);
  assert.equal(unknown.ok === false && unknown.reason, 'unknown-api');
});
