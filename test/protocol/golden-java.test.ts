/**
 * Proves Spool's wire codec against golden bytes from Apache Kafka's own Java
 * client (kafka-clients 4.4.0). test/interop/java-golden/run.sh has Kafka's
 * generated message classes serialize seeded, non-default bodies for every
 * API key, version (unstable latest ones included) and side, plus the request
 * and response headers. For each of those entries this test proves that
 * Spool's codec for the same key / version / side
 *   - decodes Kafka's bytes with no error and no byte left over,
 *   - re-encodes the decoded value to exactly Kafka's bytes, and
 *   - decoded the same values Kafka's JsonConverter shows, field by field,
 *     with no field that only one side declares for that version;
 * and, for the one entry per version and side that has every field at
 * Kafka's default (one element in each array of structs), that a Spool
 * message of the same shape with no value set encodes to the same bytes.
 * Tagged fields are often set to values near common defaults (0, -1, ""),
 * so a tagged field whose declared default differs from Kafka's shows up as
 * a re-encoding mismatch.
 * It also proves that Spool declares every API key and version Kafka knows,
 * and marks unstable exactly the versions Kafka marks unstable.
 *
 * Without the golden file the tests fail under CI (CI=true) and are skipped
 * elsewhere, saying how to make it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiByKey, isFlexible, requestCodec, responseCodec, supportsVersion } from '../../src/protocol/apis.js';
import { readRequestHeader, readResponseHeader, writeRequestHeader, writeResponseHeader, type RequestHeader } from '../../src/protocol/header.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { inRange, parseVersions, type AnyField, type ApiDef, type Primitive, type RawTaggedField } from '../../src/protocol/schema.js';

interface GoldenEntry {
  apiKey: number;
  name: string;
  version: number;
  side: 'request' | 'response';
  hex: string;
  json: Record<string, unknown>;
  unknownTags?: { tag: number; hex: string }[];
  /** Kafka marks this version latestVersionUnstable. */
  unstable?: boolean;
  /** The message has every field at Kafka's default. */
  defaults?: boolean;
}

type Struct = Record<string, unknown> & { _unknownTags?: RawTaggedField[] };

interface Codec {
  decode(reader: Reader): Struct;
  encode(writer: Writer, value: Struct): void;
}

/** What the field-by-field comparison needs to know about one entry's schema. */
interface Shape {
  fields: readonly AnyField[] | undefined;
  version: number;
  flexible: boolean;
}

const PROBLEMS_SHOWN_MAX = 15;
/** JSON.parse reads Long.MAX_VALUE / MIN_VALUE as +/-2^63, Spool as +/-Infinity. */
const LONG_EDGE = 2 ** 63;

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    assert.notEqual(parent, dir, 'no package.json above the test file');
    dir = parent;
  }
  return dir;
}

const GOLDEN_RELATIVE = 'test/interop/java-golden/out/golden.jsonl';
const goldenPath = join(repoRoot(), GOLDEN_RELATIVE);

if (!existsSync(goldenPath)) {
  const message = `${GOLDEN_RELATIVE} is missing: run test/interop/java-golden/run.sh (needs a JDK 17+ and Maven)`;
  if (process.env.CI === 'true') {
    test('Java golden bytes are present', () => assert.fail(message));
  } else {
    test('Java golden bytes', { skip: message }, () => {});
  }
} else {
  defineTests(loadGolden(goldenPath));
}

function loadGolden(path: string): GoldenEntry[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as GoldenEntry);
}

function defineTests(entries: GoldenEntry[]): void {
  const byKey = new Map<number, GoldenEntry[]>();
  const headers = new Map<string, GoldenEntry[]>();
  for (const entry of entries) {
    if (entry.apiKey < 0) headers.set(entry.name, [...(headers.get(entry.name) ?? []), entry]);
    else byKey.set(entry.apiKey, [...(byKey.get(entry.apiKey) ?? []), entry]);
  }

  test(`Spool declares every API key and version Kafka's Java client knows (${byKey.size} keys)`, () => {
    const problems: string[] = [];
    for (const [key, list] of byKey) {
      const definition = apiByKey(key);
      if (definition === undefined) {
        problems.push(`key ${key} (${list[0]!.name}) is not declared`);
        continue;
      }
      const versions = [...new Set(list.map((e) => e.version))];
      const missing = versions.filter((v) => !supportsVersion(definition, v));
      if (missing.length > 0) problems.push(`${definition.name} (key ${key}) declares ${definition.versions}, Kafka has v${missing.join(', v')} too`);
      const unstable = parseVersions(definition.unstable ?? 'none');
      for (const v of versions) {
        const kafkaUnstable = list.some((e) => e.version === v && e.unstable === true);
        if (kafkaUnstable !== inRange(unstable, v)) problems.push(`${definition.name} (key ${key}) v${v}: Kafka ${kafkaUnstable ? 'marks' : 'does not mark'} it unstable, Spool ${kafkaUnstable ? 'does not' : 'does'}`);
      }
    }
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  for (const [name, list] of headers) defineEntryTest(`${name} decodes and re-encodes Kafka's Java bytes, ${list.length} entries`, list);
  for (const [key, list] of [...byKey].sort((a, b) => a[0] - b[0])) {
    const title = `${list[0]!.name} (key ${key}) decodes and re-encodes Kafka's Java bytes, ${list.length} entries`;
    if (apiByKey(key) === undefined) test(title, { skip: `Spool does not declare key ${key} yet` }, () => {});
    else defineEntryTest(title, list);
  }
}

/** One test for a group of entries; it reports every disagreeing entry, not just the first. */
function defineEntryTest(title: string, list: GoldenEntry[]): void {
  test(title, () => {
    const problems = list.flatMap((entry, i) => checkEntry(entry).map((p) => `${entry.name} v${entry.version} ${entry.side} #${i}: ${p}`));
    if (problems.length === 0) return;
    const failing = new Set(problems.map((p) => p.slice(0, p.indexOf(':')))).size;
    const shown = problems.slice(0, PROBLEMS_SHOWN_MAX).join('\n');
    assert.fail(`${failing} of ${list.length} entries disagree with Kafka (${problems.length} problems):\n${shown}`);
  });
}

/** Every way the entry disagrees with Kafka; empty when it agrees. */
function checkEntry(entry: GoldenEntry): string[] {
  const located = locate(entry);
  if (typeof located === 'string') return [located];
  const { codec, shape } = located;
  const problems: string[] = [];
  const bytes = Buffer.from(entry.hex, 'hex');
  const reader = new Reader(bytes);
  let decoded: Struct;
  try {
    decoded = codec.decode(reader);
  } catch (error) {
    return [`decode threw ${(error as Error).message}`];
  }
  if (reader.error !== null) return [`decode error: ${reader.error.message}`];
  if (reader.remaining !== 0) problems.push(`${reader.remaining} of ${bytes.length} bytes left after decoding`);

  try {
    const writer = new Writer();
    codec.encode(writer, decoded);
    const again = writer.finish();
    if (!again.equals(bytes)) problems.push(`re-encoded ${again.length} bytes differ from Kafka's ${bytes.length} from byte ${firstDifference(again, bytes)}`);
  } catch (error) {
    problems.push(`re-encode threw ${(error as Error).message}`);
  }

  if (entry.defaults === true) checkDefaults(entry, { codec, shape, bytes }, problems);
  compareStruct(decoded, entry.json, shape, '', problems);
  compareUnknownTags(decoded._unknownTags, entry.unknownTags ?? [], problems);
  return problems;
}

/** Spool's declared defaults, filled into Kafka's all-defaults message shape, must give Kafka's bytes. */
function checkDefaults(entry: GoldenEntry, at: { codec: Codec; shape: Shape; bytes: Buffer }, problems: string[]): void {
  const { codec, shape, bytes } = at;
  let fromDefaults: Buffer;
  try {
    const writer = new Writer();
    codec.encode(writer, skeleton(entry.json, shape));
    fromDefaults = writer.finish();
  } catch (error) {
    problems.push(`a message of unset fields does not encode: ${(error as Error).message}`);
    return;
  }
  if (fromDefaults.equals(bytes)) return;
  problems.push(`a message of unset fields encodes differently from Kafka's all-defaults message from byte ${firstDifference(fromDefaults, bytes)}`);
  // Name the fields: read Spool's defaults back and compare them with Kafka's.
  const defaultsProblems: string[] = [];
  compareStruct(codec.decode(new Reader(fromDefaults)), entry.json, shape, '', defaultsProblems);
  problems.push(...defaultsProblems.map((p) => `declared default ${p}`));
}

function locate(entry: GoldenEntry): { codec: Codec; shape: Shape } | string {
  if (entry.apiKey < 0) return locateHeader(entry);
  const definition: ApiDef | undefined = apiByKey(entry.apiKey);
  if (definition === undefined) return `key ${entry.apiKey} is not declared`;
  if (!supportsVersion(definition, entry.version)) return `v${entry.version} is outside declared versions ${definition.versions}`;
  try {
    const codec = entry.side === 'request' ? requestCodec(definition, entry.version) : responseCodec(definition, entry.version);
    return { codec, shape: { fields: definition[entry.side], version: entry.version, flexible: isFlexible(definition, entry.version) } };
  } catch (error) {
    return `codec does not compile: ${(error as Error).message}`;
  }
}

function locateHeader(entry: GoldenEntry): { codec: Codec; shape: Shape } | string {
  const shape = { fields: undefined, version: entry.version, flexible: false };
  if (entry.name === 'RequestHeader') {
    const codec: Codec = {
      decode: (reader) => readRequestHeader(reader, entry.version) as unknown as Struct,
      encode: (writer, value) => writeRequestHeader(writer, value as unknown as RequestHeader, entry.version),
    };
    return { codec, shape };
  }
  if (entry.name === 'ResponseHeader') {
    const codec: Codec = {
      decode: (reader) => readResponseHeader(reader, entry.version) as Struct,
      encode: (writer, value) => writeResponseHeader(writer, value['correlationId'] as number, entry.version),
    };
    return { codec, shape };
  }
  return `unknown header ${entry.name}`;
}

/**
 * The shape of Kafka's message with every value left out: only its structs
 * and arrays of structs, so that encoding it makes Spool fill in its own
 * declared default for every other field.
 */
function skeleton(java: Record<string, unknown>, shape: Shape): Struct {
  const out: Struct = {};
  for (const f of shape.fields ?? []) {
    const value = java[f.name];
    if (f.fields === undefined || value === undefined || value === null) continue;
    const inner = { ...shape, fields: f.fields };
    out[f.name] = Array.isArray(value) ? value.map((item) => skeleton(item as Record<string, unknown>, inner)) : skeleton(value as Record<string, unknown>, inner);
  }
  return out;
}

function firstDifference(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
  return length;
}

function isTagged(f: AnyField, shape: Shape): boolean {
  if (f.options.tag === undefined || !shape.flexible) return false;
  return inRange(parseVersions(f.options.tagged ?? f.versions), shape.version);
}

/**
 * Compares a decoded struct with Kafka's JSON for it. Kafka's JsonConverter
 * writes every field of the version except tagged fields at their default,
 * and writes a records field `x` as `xSizeInBytes`.
 */
function compareStruct(decoded: unknown, java: unknown, shape: Shape, path: string, problems: string[]): void {
  if (decoded === null || typeof decoded !== 'object' || java === null || typeof java !== 'object') {
    problems.push(`${path || 'body'}: Spool ${describe(decoded)}, Kafka ${describe(java)}`);
    return;
  }
  const spool = decoded as Struct;
  const kafka = java as Record<string, unknown>;
  if (shape.fields === undefined) {
    for (const [key, value] of Object.entries(kafka)) {
      if (spool[key] !== value) problems.push(`${path}.${key}: Spool ${describe(spool[key])}, Kafka ${describe(value)}`);
    }
    return;
  }
  const present = shape.fields.filter((f) => inRange(parseVersions(f.versions), shape.version));
  const byName = new Map(present.map((f) => [f.name, f]));
  for (const f of present) {
    if (f.name in kafka || `${f.name}SizeInBytes` in kafka || isTagged(f, shape)) continue;
    problems.push(`${path}.${f.name}: Spool declares it in this version, Kafka does not`);
  }
  for (const [key, value] of Object.entries(kafka)) {
    const sizeOnly = !byName.has(key) && key.endsWith('SizeInBytes');
    const name = sizeOnly ? key.slice(0, -'SizeInBytes'.length) : key;
    const f = byName.get(name);
    if (f === undefined) {
      problems.push(`${path}.${key}: Kafka has it in this version, Spool does not declare it`);
      continue;
    }
    compareField(spool[name], value, f, { shape, path: `${path}.${name}`, sizeOnly }, problems);
  }
}

function compareField(decoded: unknown, java: unknown, f: AnyField, at: { shape: Shape; path: string; sizeOnly: boolean }, problems: string[]): void {
  const { shape, path } = at;
  if (java === null || decoded === null) {
    if (java !== decoded) problems.push(`${path}: Spool ${describe(decoded)}, Kafka ${describe(java)}`);
    return;
  }
  if (f.kind === 'struct') {
    compareStruct(decoded, java, { ...shape, fields: f.fields }, path, problems);
    return;
  }
  if (f.kind === 'array') {
    if (!Array.isArray(decoded) || !Array.isArray(java) || decoded.length !== java.length) {
      problems.push(`${path}: Spool ${describe(decoded)}, Kafka ${describe(java)}`);
      return;
    }
    java.forEach((item, i) => {
      if (f.fields !== undefined) compareStruct(decoded[i], item, { ...shape, fields: f.fields }, `${path}[${i}]`, problems);
      else comparePrimitive(decoded[i], item, f.type!, { path: `${path}[${i}]`, sizeOnly: false }, problems);
    });
    return;
  }
  comparePrimitive(decoded, java, f.type!, at, problems);
}

function comparePrimitive(decoded: unknown, java: unknown, type: Primitive, at: { path: string; sizeOnly: boolean }, problems: string[]): void {
  let same: boolean;
  if (type === 'bytes' || type === 'records') {
    if (!Buffer.isBuffer(decoded)) same = false;
    else if (at.sizeOnly) same = decoded.length === java;
    else same = typeof java === 'string' && decoded.equals(Buffer.from(java, 'base64'));
  } else if (type === 'int64' && (decoded === Infinity || decoded === -Infinity)) {
    same = java === (decoded === Infinity ? LONG_EDGE : -LONG_EDGE);
  } else {
    same = decoded === java;
  }
  if (!same) problems.push(`${at.path}: Spool ${describe(decoded)}, Kafka ${describe(java)}${at.sizeOnly ? ' (size in bytes)' : ''}`);
}

function compareUnknownTags(decoded: RawTaggedField[] | undefined, java: { tag: number; hex: string }[], problems: string[]): void {
  const spool = (decoded ?? []).map((raw) => `${raw.tag}:${raw.data.toString('hex')}`).join(' ');
  const kafka = java.map((raw) => `${raw.tag}:${raw.hex}`).join(' ');
  if (spool !== kafka) problems.push(`unknown tagged fields: Spool [${spool}], Kafka [${kafka}]`);
}

function describe(value: unknown): string {
  if (Buffer.isBuffer(value)) return `<${value.length} bytes ${value.subarray(0, 16).toString('hex')}>`;
  if (Array.isArray(value)) return `array of ${value.length}`;
  if (value === undefined || typeof value === 'number') return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
