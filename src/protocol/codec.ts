/**
 * Compiles the declarations in schema.ts into encoders and decoders for one
 * (API key, version, direction) at a time, cached after first use.
 *
 * Wire rules (KIP-482 for flexible versions): a flexible version uses compact
 * strings, bytes and arrays (unsigned varint length + 1, 0 for null) and ends
 * every struct with a tagged-field section; non-flexible versions use int16
 * string lengths and int32 byte and array lengths (-1 for null). A tagged field
 * is written only when it differs from its default, in ascending tag order;
 * unknown tags are kept on decode and written back on encode. A nullable
 * struct is preceded by an int8 marker (-1 null, 1 present).
 */
import { Reader, ZERO_UUID, EMPTY, DecodeError, TAGGED_FIELDS_MAX } from './reader.js';
import { Writer } from './writer.js';
import { inRange, parseVersions, type AnyField, type Primitive, type RawTaggedField, type VersionRange } from './schema.js';

type Value = unknown;
type Struct = Record<string, Value> & { _unknownTags?: RawTaggedField[] };

export interface StructCodec {
  decode(reader: Reader): Struct;
  encode(writer: Writer, value: Struct): void;
  /** The fewest bytes one encoded instance can take (bounds array counts on decode). */
  readonly bytesMin: number;
}

export class EncodeError extends Error {
  override readonly name = 'EncodeError';
}

interface CompiledField {
  name: string;
  tag: number | undefined;
  defaultValue: () => Value;
  isDefault: (value: Value) => boolean;
  read: (reader: Reader) => Value;
  write: (writer: Writer, value: Value) => void;
  bytesMin: number;
}

const rangeCache = new Map<string, VersionRange>();
function range(text: string): VersionRange {
  let parsed = rangeCache.get(text);
  if (parsed === undefined) {
    parsed = parseVersions(text);
    rangeCache.set(text, parsed);
  }
  return parsed;
}

/** Compiles a list of field declarations for one version. */
export function compileStruct(fields: readonly AnyField[], version: number, flexible: boolean): StructCodec {
  const present = fields.filter((f) => inRange(range(f.versions), version));
  const compiled = present.map((f) => compileField(f, version, flexible));
  const regular = compiled.filter((c) => c.tag === undefined);
  const tagged = compiled.filter((c) => c.tag !== undefined).sort((a, b) => a.tag! - b.tag!);
  const absent = fields.filter((f) => !inRange(range(f.versions), version)).map((f) => ({ name: f.name, defaultValue: defaultFor(f) }));
  const tagIndex = new Map<number, CompiledField | null>(tagged.map((c) => [c.tag!, c]));
  for (const tag of tagsNotValidIn(fields, version)) tagIndex.set(tag, null);
  const bytesMin = regular.reduce((sum, c) => sum + c.bytesMin, flexible ? 1 : 0);

  function decode(reader: Reader): Struct {
    const out: Struct = {};
    for (const c of regular) out[c.name] = c.read(reader);
    for (const a of absent) out[a.name] = a.defaultValue();
    if (flexible) {
      for (const c of tagged) out[c.name] = c.defaultValue();
      const unknown = readTaggedSection(reader, { known: tagIndex, version }, out);
      if (unknown !== null) out._unknownTags = unknown;
    }
    return out;
  }

  function encode(writer: Writer, value: Struct): void {
    for (const c of regular) {
      const v = value[c.name];
      c.write(writer, v === undefined ? c.defaultValue() : v);
    }
    if (flexible) writeTaggedSection(writer, tagged, value);
  }

  return { decode, encode, bytesMin };
}

/**
 * The tags of fields that are tagged in some version but not in `version`:
 * Kafka's generated readers refuse them there rather than keep them as unknown.
 */
function tagsNotValidIn(fields: readonly AnyField[], version: number): number[] {
  const tags: number[] = [];
  for (const f of fields) {
    if (f.options.tag === undefined) continue;
    const versions = range(f.versions);
    const taggedVersions = range(f.options.tagged ?? f.versions);
    const min = Math.max(versions.min, taggedVersions.min);
    const max = Math.min(versions.max, taggedVersions.max);
    if (min <= max && (version < min || version > max)) tags.push(f.options.tag);
  }
  return tags;
}

/**
 * Reads a tagged-field section as Kafka's generated readers do: at most
 * TAGGED_FIELDS_MAX fields; a known tag's value is read in place from the
 * message, its declared size not consulted (extra bytes inside it are read as
 * whatever follows, exactly as Kafka would); an unknown tag's bytes are kept
 * as they are; a tag this version does not allow is an error. Tags need not
 * be in order.
 */
function readTaggedSection(reader: Reader, tags: { known: Map<number, CompiledField | null>; version: number }, out: Struct): RawTaggedField[] | null {
  const count = reader.uvarint();
  if (count > reader.remaining) {
    reader.fail(`tagged field count ${count} exceeds frame`);
    return null;
  }
  if (count > TAGGED_FIELDS_MAX) {
    reader.fail(`tagged field count ${count} over ${TAGGED_FIELDS_MAX}`);
    return null;
  }
  let unknown: RawTaggedField[] | null = null;
  for (let i = 0; i < count && reader.error === null; i++) {
    const tag = reader.uvarint();
    const size = reader.uvarint();
    const field = tags.known.get(tag);
    if (field === undefined) (unknown ??= []).push({ tag, data: reader.view(size) });
    else if (field === null) reader.fail(`tag ${tag} is not valid for version ${tags.version}`);
    else out[field.name] = field.read(reader);
  }
  return unknown;
}

function writeTaggedSection(writer: Writer, tagged: readonly CompiledField[], value: Struct): void {
  const unknown = value._unknownTags ?? [];
  const written = tagged.filter((c) => {
    const v = value[c.name];
    return v !== undefined && !c.isDefault(v);
  });
  writer.uvarint(written.length + unknown.length);
  let u = 0;
  const sortedUnknown = unknown.length > 1 ? [...unknown].sort((a, b) => a.tag - b.tag) : unknown;
  for (const c of written) {
    while (u < sortedUnknown.length && sortedUnknown[u]!.tag < c.tag!) writeRawTag(writer, sortedUnknown[u++]!);
    const body = new Writer(256);
    c.write(body, value[c.name]);
    const bytes = body.finish();
    writer.uvarint(c.tag!);
    writer.uvarint(bytes.length);
    writer.raw(bytes);
  }
  while (u < sortedUnknown.length) writeRawTag(writer, sortedUnknown[u++]!);
}

function writeRawTag(writer: Writer, raw: RawTaggedField): void {
  writer.uvarint(raw.tag);
  writer.uvarint(raw.data.length);
  writer.raw(raw.data);
}

function compileField(f: AnyField, version: number, messageFlexible: boolean): CompiledField {
  const flexible = f.options.flexible === undefined ? messageFlexible : inRange(range(f.options.flexible), version);
  const nullable = f.options.nullable !== undefined && inRange(range(f.options.nullable), version);
  const taggedRange = f.options.tag === undefined ? undefined : range(f.options.tagged ?? f.versions);
  const tag = taggedRange !== undefined && messageFlexible && inRange(taggedRange, version) ? f.options.tag : undefined;
  const defaultValue = defaultFor(f);
  const base = { name: f.name, tag, defaultValue };
  if (f.kind === 'struct') {
    const inner = compileStruct(f.fields!, version, messageFlexible);
    return { ...base, ...structAccess(f.name, inner, nullable), isDefault: structIsDefault(f, version, messageFlexible) };
  }
  if (f.kind === 'array') {
    const element = f.fields !== undefined ? structElement(compileStruct(f.fields, version, messageFlexible)) : primitiveElement(f.type!, flexible, false, f.name);
    return { ...base, ...arrayAccess(f.name, element, flexible, nullable), isDefault: (v) => v === null ? defaultValue() === null : (v as Value[]).length === 0 && defaultValue() !== null };
  }
  const element = primitiveElement(f.type!, flexible, nullable, f.name);
  return { ...base, ...element, isDefault: primitiveIsDefault(f.type!, defaultValue()) };
}

interface Access {
  read: (reader: Reader) => Value;
  write: (writer: Writer, value: Value) => void;
  bytesMin: number;
}

function structElement(inner: StructCodec): Access {
  return { read: (r) => inner.decode(r), write: (w, v) => inner.encode(w, v as Struct), bytesMin: inner.bytesMin };
}

function structAccess(name: string, inner: StructCodec, nullable: boolean): Access {
  if (!nullable) {
    return {
      read: (r) => inner.decode(r),
      write: (w, v) => {
        if (v === null) throw new EncodeError(`${name} is not nullable in this version`);
        inner.encode(w, v as Struct);
      },
      bytesMin: inner.bytesMin,
    };
  }
  return {
    read: (r) => (r.int8() < 0 ? null : inner.decode(r)),
    write: (w, v) => {
      if (v === null) {
        w.int8(-1);
        return;
      }
      w.int8(1);
      inner.encode(w, v as Struct);
    },
    bytesMin: 1,
  };
}

function arrayAccess(name: string, element: Access, compact: boolean, nullable: boolean): Access {
  return {
    read(r) {
      const count = r.arrayLength(compact, element.bytesMin);
      if (count < 0) {
        if (!nullable) r.fail(`${name} is null but not nullable`);
        return nullable ? null : [];
      }
      // Grown element by element, never sized from the count up front.
      const out: Value[] = [];
      for (let i = 0; i < count && r.error === null; i++) out.push(element.read(r));
      return out;
    },
    write(w, v) {
      if (v === null) {
        if (!nullable) throw new EncodeError(`${name} is not nullable in this version`);
        w.arrayLength(-1, compact);
        return;
      }
      const items = v as Value[];
      w.arrayLength(items.length, compact);
      for (const item of items) element.write(w, item);
    },
    bytesMin: compact ? 1 : 4,
  };
}

function primitiveElement(type: Primitive, compact: boolean, nullable: boolean, name: string): Access {
  const refuseNull = (w: unknown, v: Value) => {
    if (v === null) throw new EncodeError(`${name} is not nullable in this version`);
  };
  switch (type) {
    case 'bool':
      return { read: (r) => r.bool(), write: (w, v) => w.bool(v as boolean), bytesMin: 1 };
    case 'int8':
      return { read: (r) => r.int8(), write: (w, v) => w.int8(v as number), bytesMin: 1 };
    case 'int16':
      return { read: (r) => r.int16(), write: (w, v) => w.int16(v as number), bytesMin: 2 };
    case 'uint16':
      return { read: (r) => r.uint16(), write: (w, v) => w.uint16(v as number), bytesMin: 2 };
    case 'int32':
      return { read: (r) => r.int32(), write: (w, v) => w.int32(v as number), bytesMin: 4 };
    case 'uint32':
      return { read: (r) => r.uint32(), write: (w, v) => w.uint32(v as number), bytesMin: 4 };
    case 'int64':
      return { read: (r) => r.int64(), write: (w, v) => w.int64(v as number), bytesMin: 8 };
    case 'float64':
      return { read: (r) => r.float64(), write: (w, v) => w.float64(v as number), bytesMin: 8 };
    case 'uuid':
      return { read: (r) => r.uuid(), write: (w, v) => w.uuid(v as string), bytesMin: 16 };
    case 'string':
      return {
        read(r) {
          const s = r.string(compact);
          if (s === null && !nullable && r.error === null) r.fail(`${name} is null but not nullable`);
          return s === null && !nullable ? '' : s;
        },
        write(w, v) {
          if (!nullable) refuseNull(w, v);
          w.string(v as string | null, compact);
        },
        bytesMin: compact ? 1 : 2,
      };
    case 'bytes':
    case 'records':
      return {
        read(r) {
          const b = r.bytes(compact);
          if (b === null && !nullable && r.error === null) r.fail(`${name} is null but not nullable`);
          return b === null && !nullable ? EMPTY : b;
        },
        write(w, v) {
          if (!nullable) refuseNull(w, v);
          w.bytes(v as Buffer | null, compact);
        },
        bytesMin: compact ? 1 : 4,
      };
  }
}

/** Kafka's default for a field: its declared default, else the type's zero value. */
function defaultFor(f: AnyField): () => Value {
  const declared = f.options.default;
  if (f.kind === 'array') {
    if (declared === null) return () => null;
    return () => [];
  }
  if (f.kind === 'struct') {
    if (declared === null) return () => null;
    const fields = f.fields!;
    return () => defaultStruct(fields);
  }
  if (declared !== undefined) {
    return () => declared;
  }
  switch (f.type) {
    case 'bool':
      return () => false;
    case 'string':
      return () => '';
    case 'uuid':
      return () => ZERO_UUID;
    case 'bytes':
      return () => EMPTY;
    case 'records':
      return () => null;
    default:
      return () => 0;
  }
}

/** A struct with every field at its default (all versions' fields). */
export function defaultStruct(fields: readonly AnyField[]): Struct {
  const out: Struct = {};
  for (const f of fields) out[f.name] = defaultFor(f)();
  return out;
}

function primitiveIsDefault(type: Primitive, defaultValue: Value): (value: Value) => boolean {
  if (type === 'bytes' || type === 'records') {
    return (v) => (v === null ? defaultValue === null : defaultValue !== null && (v as Buffer).length === 0 && (defaultValue as Buffer).length === 0);
  }
  return (v) => v === defaultValue;
}

function structIsDefault(f: AnyField, version: number, flexible: boolean): (value: Value) => boolean {
  if (f.options.default === null) return (v) => v === null;
  const present = f.fields!.filter((inner) => inRange(range(inner.versions), version)).map((inner) => compileField(inner, version, flexible));
  return (v) => {
    if (v === null) return false;
    const s = v as Struct;
    if (s._unknownTags !== undefined && s._unknownTags.length > 0) return false;
    return present.every((c) => s[c.name] === undefined || c.isDefault(s[c.name]));
  };
}

export { DecodeError };
