/**
 * Request and response headers.
 *
 * Request header v1: api key, api version, correlation id, client id (a
 * nullable int16-length string even in v2). v2 adds a tagged-field section.
 * Response header v0: correlation id; v1 adds a tagged-field section.
 * A request uses header v2 when its API version is flexible, else v1; its
 * response uses v1 / v0 likewise, except ApiVersions, whose response header
 * is always v0 so that a client can read it before versions are agreed
 * (KIP-511).
 */
import { field } from './schema.js';
import { compileStruct, type StructCodec } from './codec.js';
import type { Reader } from './reader.js';
import type { Writer } from './writer.js';
import type { RawTaggedField } from './schema.js';

const requestHeaderFields = [
  field('requestApiKey', 'int16', '0+'),
  field('requestApiVersion', 'int16', '0+'),
  field('correlationId', 'int32', '0+'),
  field('clientId', 'string', '1+', { nullable: '1+', flexible: 'none' }),
] as const;

const responseHeaderFields = [field('correlationId', 'int32', '0+')] as const;

export interface RequestHeader {
  requestApiKey: number;
  requestApiVersion: number;
  correlationId: number;
  clientId: string | null;
  _unknownTags?: RawTaggedField[];
}

const requestHeaderCodecs: StructCodec[] = [
  compileStruct(requestHeaderFields, 0, false),
  compileStruct(requestHeaderFields, 1, false),
  compileStruct(requestHeaderFields, 2, true),
];
const responseHeaderCodecs: StructCodec[] = [
  compileStruct(responseHeaderFields, 0, false),
  compileStruct(responseHeaderFields, 1, true),
];

export function readRequestHeader(reader: Reader, headerVersion: number): RequestHeader {
  return requestHeaderCodecs[headerVersion]!.decode(reader) as unknown as RequestHeader;
}

export function writeRequestHeader(writer: Writer, header: RequestHeader, headerVersion: number): void {
  requestHeaderCodecs[headerVersion]!.encode(writer, header as unknown as Record<string, unknown>);
}

export function readResponseHeader(reader: Reader, headerVersion: number): { correlationId: number } {
  return responseHeaderCodecs[headerVersion]!.decode(reader) as { correlationId: number };
}

export function writeResponseHeader(writer: Writer, correlationId: number, headerVersion: number): void {
  responseHeaderCodecs[headerVersion]!.encode(writer, { correlationId });
}

