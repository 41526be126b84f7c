/**
 * Proves that every declared API key round-trips at every version, in both
 * directions: encode(generated) -> decode -> encode gives identical bytes,
 * and the decoded value equals the generated one. Values cover nulls, empty
 * arrays, tagged fields and unknown tags (seeded; the seed is in the name).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/env.js';
import { allApis } from '../../src/protocol/schemas/index.js';
import { isFlexible, requestCodec, responseCodec, versionRange } from '../../src/protocol/apis.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { generateStruct } from './generate.js';

const SEED = 20261129;
const SAMPLES_PER_VERSION = 12;

for (const definition of allApis) {
  test(`${definition.name} (key ${definition.key}) round-trips every version, seed ${SEED}`, () => {
    const random = new SeededRandom(SEED + definition.key);
    const { min, max } = versionRange(definition);
    for (let version = min; version <= max; version++) {
      const flexible = isFlexible(definition, version);
      for (const side of ['request', 'response'] as const) {
        const codec = side === 'request' ? requestCodec(definition, version) : responseCodec(definition, version);
        for (let sample = 0; sample < SAMPLES_PER_VERSION; sample++) {
          const value = generateStruct(definition[side], version, random, { flexible });
          const first = new Writer();
          codec.encode(first, value);
          const bytes = first.finish();
          const reader = new Reader(bytes);
          const decoded = codec.decode(reader);
          assert.equal(reader.error, null, `${definition.name} v${version} ${side}: ${reader.error?.message}`);
          assert.equal(reader.remaining, 0, `${definition.name} v${version} ${side} left bytes`);
          const second = new Writer();
          codec.encode(second, decoded);
          assert.deepEqual(second.finish(), bytes, `${definition.name} v${version} ${side} re-encodes differently`);
          assertContains(decoded, value, `${definition.name} v${version} ${side}`);
        }
      }
    }
  });
}

/** Every field of `expected` appears in `actual` with an equal value. */
function assertContains(actual: unknown, expected: unknown, path: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), path);
    assert.equal(actual.length, expected.length, path);
    expected.forEach((item, i) => assertContains(actual[i], item, `${path}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object' && !Buffer.isBuffer(expected)) {
    for (const [key, value] of Object.entries(expected)) assertContains((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    return;
  }
  assert.deepEqual(actual, expected, path);
}
