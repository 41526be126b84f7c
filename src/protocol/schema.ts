/**
 * The vocabulary in which Spool declares Kafka's messages (STYLE.md §1).
 *
 * Each API key is declared once, request and response together, with every
 * version's fields carrying Kafka's version ranges ("3+", "0-2", "none").
 * Codecs are compiled from these declarations (codec.ts); nothing is
 * hand-written per version. The TypeScript type of a decoded message is
 * inferred from the same declaration, so handlers are type-checked against
 * the wire.
 *
 * Field names are Kafka's, in camelCase (`partitionIndex`), so a KIP can be
 * searched against the code. Values: integers and int64 as `number` (Kafka's
 * Long.MAX_VALUE / MIN_VALUE sentinels as +/-Infinity), UUIDs as Kafka's
 * base64url text, `bytes` and `records` as Buffer views into the frame.
 */

export type Primitive =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'float64'
  | 'string'
  | 'bytes'
  | 'uuid'
  | 'records';

export type PrimitiveValue<P extends Primitive> = P extends 'bool'
  ? boolean
  : P extends 'string' | 'uuid'
    ? string
    : P extends 'bytes'
      ? Buffer
      : P extends 'records'
        ? Buffer | null
        : number;

/** Unknown tagged fields, kept so that re-encoding preserves them. */
export interface RawTaggedField {
  tag: number;
  data: Buffer;
}

export interface FieldOptions {
  /** Versions in which the field may be null (strings, bytes, arrays, structs). */
  nullable?: string;
  /** Value when the field is absent from a version; Kafka's type default otherwise. */
  default?: unknown;
  /** Tag number for a tagged field (KIP-482). */
  tag?: number;
  /** Versions in which the field is tagged; defaults to the field's versions. */
  tagged?: string;
  /** Overrides the message's flexible versions for this field (the request header's clientId). */
  flexible?: string;
}

export interface FieldDef<N extends string = string, T = unknown> {
  readonly name: N;
  readonly kind: 'value' | 'array' | 'struct';
  /** Element type for `value` and arrays of primitives; undefined for structs. */
  readonly type: Primitive | undefined;
  readonly fields: readonly AnyField[] | undefined;
  readonly versions: string;
  readonly options: FieldOptions;
  /** Phantom: the decoded TypeScript type. */
  readonly __type?: T;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyField = FieldDef<string, any>;

type Nullable<T, O> = O extends { nullable: string } ? T | null : T;

export type StructOf<F extends readonly AnyField[]> = {
  [K in F[number] as K['name']]: K extends FieldDef<string, infer T> ? T : never;
} & { _unknownTags?: RawTaggedField[] };

/** A primitive field, or an array of primitives when `type` is written `[]int32`. */
export function field<N extends string, P extends Primitive, O extends FieldOptions = {}>(
  name: N,
  type: P,
  versions: string,
  options?: O,
): FieldDef<N, Nullable<PrimitiveValue<P>, O>>;
export function field<N extends string, P extends Primitive, O extends FieldOptions = {}>(
  name: N,
  type: `[]${P}`,
  versions: string,
  options?: O,
): FieldDef<N, Nullable<PrimitiveValue<P>[], O>>;
export function field(name: string, type: string, versions: string, options: FieldOptions = {}): AnyField {
  const isArray = type.startsWith('[]');
  return {
    name,
    kind: isArray ? 'array' : 'value',
    type: (isArray ? type.slice(2) : type) as Primitive,
    fields: undefined,
    versions,
    options,
  };
}

/** An array of structs. */
export function array<N extends string, F extends readonly AnyField[], O extends FieldOptions = {}>(
  name: N,
  versions: string,
  fields: F,
  options?: O,
): FieldDef<N, Nullable<StructOf<F>[], O>> {
  return { name, kind: 'array', type: undefined, fields, versions, options: options ?? {} };
}

/** A single nested struct. */
export function struct<N extends string, F extends readonly AnyField[], O extends FieldOptions = {}>(
  name: N,
  versions: string,
  fields: F,
  options?: O,
): FieldDef<N, Nullable<StructOf<F>, O>> {
  return { name, kind: 'struct', type: undefined, fields, versions, options: options ?? {} };
}

export interface ApiDef<
  K extends number = number,
  Req extends readonly AnyField[] = readonly AnyField[],
  Res extends readonly AnyField[] = readonly AnyField[],
> {
  readonly key: K;
  readonly name: string;
  /** Kafka's validVersions for this key (request and response share them). */
  readonly versions: string;
  readonly flexible: string;
  /** Versions Kafka marks unstable (latestVersionUnstable): decodable, never advertised. */
  readonly unstable?: string;
  /** Which Kafka roles serve this API. */
  readonly listeners: readonly ('broker' | 'controller')[];
  readonly request: Req;
  readonly response: Res;
}

export function api<K extends number, Req extends readonly AnyField[], Res extends readonly AnyField[]>(
  definition: ApiDef<K, Req, Res>,
): ApiDef<K, Req, Res> {
  return definition;
}

export type RequestOf<A> = A extends ApiDef<number, infer Req, readonly AnyField[]> ? StructOf<Req> : never;
export type ResponseOf<A> = A extends ApiDef<number, readonly AnyField[], infer Res> ? StructOf<Res> : never;

/** Deep-partial form used when building a message to encode: absent fields take their defaults. */
export type Partial<T> = T extends Buffer
  ? T
  : T extends (infer E)[]
    ? Partial<E>[]
    : T extends object
      ? { [K in keyof T]?: Partial<T[K]> }
      : T;

export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

const NONE: VersionRange = { min: 1, max: 0 };

/** Parses Kafka's version notation: "3+", "0-2", "5", "none". */
export function parseVersions(text: string): VersionRange {
  if (text === 'none' || text === '') return NONE;
  if (text.endsWith('+')) return { min: Number(text.slice(0, -1)), max: Infinity };
  const dash = text.indexOf('-');
  if (dash > 0) return { min: Number(text.slice(0, dash)), max: Number(text.slice(dash + 1)) };
  const only = Number(text);
  return { min: only, max: only };
}

export function inRange(range: VersionRange, version: number): boolean {
  return version >= range.min && version <= range.max;
}
