/**
 * Generates random message values for a given API version from the schema
 * declarations: nulls where a field is nullable, empty and non-empty arrays,
 * tagged fields both at and away from their defaults, and unknown tags.
 * Used by the round-trip and fuzz tests.
 */
import type { Random } from '../../src/io/env.js';
import { inRange, parseVersions, type AnyField } from '../../src/protocol/schema.js';

type Struct = Record<string, unknown>;

export function generateStruct(fields: readonly AnyField[], version: number, random: Random, options: { flexible: boolean; depth?: number }): Struct {
  const depth = options.depth ?? 0;
  const out: Struct = {};
  for (const f of fields) {
    if (!inRange(parseVersions(f.versions), version)) continue;
    out[f.name] = generateField(f, version, random, { flexible: options.flexible, depth });
  }
  if (options.flexible && random.nextInt(6) === 0) {
    out._unknownTags = [{ tag: 1000 + random.nextInt(1000), data: random.bytes(random.nextInt(5)) }];
  }
  return out;
}

function generateField(f: AnyField, version: number, random: Random, options: { flexible: boolean; depth: number }): unknown {
  const nullable = f.options.nullable !== undefined && inRange(parseVersions(f.options.nullable), version);
  if (nullable && random.nextInt(4) === 0) return null;
  if (f.kind === 'struct') return generateStruct(f.fields!, version, random, { flexible: options.flexible, depth: options.depth + 1 });
  if (f.kind === 'array') {
    const count = options.depth > 3 ? 0 : random.nextInt(4);
    const items: unknown[] = [];
    for (let i = 0; i < count; i++) {
      items.push(
        f.fields !== undefined
          ? generateStruct(f.fields, version, random, { flexible: options.flexible, depth: options.depth + 1 })
          : generatePrimitive(f.type!, random),
      );
    }
    return items;
  }
  return generatePrimitive(f.type!, random);
}

const TEXTS = ['', 'a', 'topic-1', 'grüße', '日本語', 'x'.repeat(300)];

function generatePrimitive(type: string, random: Random): unknown {
  switch (type) {
    case 'bool':
      return random.nextInt(2) === 1;
    case 'int8':
      return random.nextInt(256) - 128;
    case 'int16':
      return random.nextInt(65536) - 32768;
    case 'uint16':
      return random.nextInt(65536);
    case 'int32':
      return random.nextInt(2 ** 32) - 2 ** 31;
    case 'uint32':
      return random.nextInt(2 ** 32);
    case 'int64': {
      const choice = random.nextInt(5);
      if (choice === 0) return -1;
      if (choice === 1) return Number.MAX_SAFE_INTEGER - random.nextInt(1000);
      return random.nextInt(2 ** 40) - 2 ** 39;
    }
    case 'float64':
      return random.nextFloat() * 1e6;
    case 'string':
      return TEXTS[random.nextInt(TEXTS.length)];
    case 'uuid':
      return random.uuid().toString('base64url');
    case 'bytes':
    case 'records':
      return random.bytes(random.nextInt(3) === 0 ? 2000 : random.nextInt(20));
    default:
      throw new Error(`unknown type ${type}`);
  }
}
