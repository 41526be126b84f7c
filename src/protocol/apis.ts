/**
 * The registry of API keys and the frame-level codec built on it.
 *
 * A frame is an int32 size followed by a header and a body. Requests are
 * decoded in two steps so that the broker can answer a request whose body it
 * cannot read: first the header (which needs only the API key and version),
 * then the body.
 */
import { compileStruct, type StructCodec } from './codec.js';
import { readRequestHeader, readResponseHeader, writeRequestHeader, writeResponseHeader, type RequestHeader } from './header.js';
import { Reader, DecodeError, REQUEST_ELEMENTS_MAX } from './reader.js';
import { inRange, parseVersions, type ApiDef, type VersionRange, type RequestOf, type ResponseOf, type Partial } from './schema.js';
import { Writer } from './writer.js';
import { allApis } from './schemas/index.js';

export const API_VERSIONS_KEY = 18;

const byKey: (ApiDef | undefined)[] = [];
for (const definition of allApis) {
  if (byKey[definition.key] !== undefined) throw new Error(`API key ${definition.key} declared twice`);
  byKey[definition.key] = definition;
}

export function apiByKey(key: number): ApiDef | undefined {
  return byKey[key];
}

/** Parsed version ranges by their text: every frame asks for its API's ranges, which never change. */
const parsedRanges = new Map<string, Readonly<VersionRange>>();
function parsedRange(text: string): Readonly<VersionRange> {
  let parsed = parsedRanges.get(text);
  if (parsed === undefined) {
    parsed = parseVersions(text);
    parsedRanges.set(text, parsed);
  }
  return parsed;
}

export function versionRange(definition: ApiDef): { min: number; max: number } {
  const { min, max } = parsedRange(definition.versions);
  return { min, max };
}

export function supportsVersion(definition: ApiDef, version: number): boolean {
  return inRange(parsedRange(definition.versions), version);
}

export function isFlexible(definition: ApiDef, version: number): boolean {
  return inRange(parsedRange(definition.flexible), version);
}

export function requestHeaderVersion(definition: ApiDef, version: number): number {
  return isFlexible(definition, version) ? 2 : 1;
}

export function responseHeaderVersion(definition: ApiDef, version: number): number {
  if (definition.key === API_VERSIONS_KEY) return 0;
  return isFlexible(definition, version) ? 1 : 0;
}

const requestCodecs = new Map<number, StructCodec>();
const responseCodecs = new Map<number, StructCodec>();

function cached(cache: Map<number, StructCodec>, definition: ApiDef, version: number, side: 'request' | 'response'): StructCodec {
  const id = definition.key * 1024 + version;
  let codec = cache.get(id);
  if (codec === undefined) {
    codec = compileStruct(definition[side], version, isFlexible(definition, version));
    cache.set(id, codec);
  }
  return codec;
}

export function requestCodec(definition: ApiDef, version: number): StructCodec {
  return cached(requestCodecs, definition, version, 'request');
}

export function responseCodec(definition: ApiDef, version: number): StructCodec {
  return cached(responseCodecs, definition, version, 'response');
}

/** Reads the API key and version at the start of a request frame body (after the size). */
export function peekApiKeyAndVersion(frame: Buffer): { apiKey: number; apiVersion: number } | null {
  if (frame.length < 4) return null;
  return { apiKey: frame.readInt16BE(0), apiVersion: frame.readInt16BE(2) };
}

export type DecodedRequest =
  | { ok: true; header: RequestHeader; api: ApiDef; body: Record<string, unknown> }
  | { ok: false; header: RequestHeader | null; api: ApiDef | undefined; error: DecodeError; reason: 'unknown-api' | 'unsupported-version' | 'malformed' };

/** Decodes a request frame (without the size prefix). Never throws on bad input. */
export function decodeRequest(frame: Buffer): DecodedRequest {
  const peek = peekApiKeyAndVersion(frame);
  if (peek === null) return { ok: false, header: null, api: undefined, error: new DecodeError('frame shorter than a request header'), reason: 'malformed' };
  const definition = apiByKey(peek.apiKey);
  const reader = new Reader(frame);
  reader.elementsLeft = REQUEST_ELEMENTS_MAX;
  if (definition === undefined || !supportsVersion(definition, peek.apiVersion)) {
    // An unknown API's header is read as v1, which every version shares; an unknown version's
    // as the version's flexibility says (v2 from the first flexible version on), as Kafka reads it.
    const header = readRequestHeader(reader, definition === undefined ? 1 : requestHeaderVersion(definition, peek.apiVersion));
    const reason = definition === undefined ? 'unknown-api' : 'unsupported-version';
    return { ok: false, header: reader.error === null ? header : null, api: definition, error: new DecodeError(reason), reason };
  }
  const header = readRequestHeader(reader, requestHeaderVersion(definition, peek.apiVersion));
  if (reader.error !== null) return { ok: false, header: null, api: definition, error: reader.error, reason: 'malformed' };
  // Bytes after the last field this version declares are ignored, as Kafka's
  // generated readers ignore them (librdkafka 2.15 sends 3 such bytes in Metadata v13).
  const body = requestCodec(definition, peek.apiVersion).decode(reader);
  if (reader.error !== null) return { ok: false, header, api: definition, error: reader.error, reason: 'malformed' };
  return { ok: true, header, api: definition, body };
}

function withSizePrefix(writer: Writer): Buffer[] {
  const chunks = writer.finishChunks();
  const size = Buffer.allocUnsafe(4);
  size.writeInt32BE(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  chunks.unshift(size);
  return chunks;
}

/** Encodes a request frame, size prefix included, as a chunk list. */
export function encodeRequest<A extends ApiDef>(
  definition: A,
  header: { apiVersion: number; correlationId: number; clientId: string | null },
  body: Partial<RequestOf<A>>,
): Buffer[] {
  const writer = new Writer();
  const requestHeader: RequestHeader = {
    requestApiKey: definition.key,
    requestApiVersion: header.apiVersion,
    correlationId: header.correlationId,
    clientId: header.clientId,
  };
  writeRequestHeader(writer, requestHeader, requestHeaderVersion(definition, header.apiVersion));
  requestCodec(definition, header.apiVersion).encode(writer, body as Record<string, unknown>);
  return withSizePrefix(writer);
}

/** Encodes a response frame, size prefix included, as a chunk list. */
export function encodeResponse<A extends ApiDef>(
  definition: A,
  version: number,
  correlationId: number,
  body: Partial<ResponseOf<A>>,
): Buffer[] {
  const writer = new Writer();
  writeResponseHeader(writer, correlationId, responseHeaderVersion(definition, version));
  responseCodec(definition, version).encode(writer, body as Record<string, unknown>);
  return withSizePrefix(writer);
}

export type DecodedResponse<A extends ApiDef> =
  | { ok: true; correlationId: number; body: ResponseOf<A> }
  | { ok: false; error: DecodeError };

/** Decodes a response frame (without the size prefix) for a request of `version`. */
export function decodeResponse<A extends ApiDef>(definition: A, version: number, frame: Buffer): DecodedResponse<A> {
  const reader = new Reader(frame);
  const { correlationId } = readResponseHeader(reader, responseHeaderVersion(definition, version));
  // Trailing bytes are ignored here too, as Kafka's client ignores them.
  const body = responseCodec(definition, version).decode(reader);
  if (reader.error !== null) return { ok: false, error: reader.error };
  return { ok: true, correlationId, body: body as ResponseOf<A> };
}
