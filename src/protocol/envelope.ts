/**
 * What travels inside an Envelope (KIP-590) besides the forwarded request:
 *
 * - the client's principal as Kafka's DefaultKafkaPrincipalBuilder
 *   serializes it: int16 version (0), then DefaultPrincipalData, flexible
 *   v0: type, name (compact strings), tokenAuthenticated (bool), tagged
 *   fields;
 * - the client's address as raw IP bytes (4 for IPv4, 16 for IPv6), as
 *   Java's InetAddress.getAddress gives them;
 * - which API keys a broker may forward (Kafka's ApiKeys "forwardable").
 */
import { compileStruct } from './codec.js';
import { Reader } from './reader.js';
import { field } from './schema.js';
import { Writer } from './writer.js';

/** Kafka 4's forwardable API keys (ApiKeys with forwardable = true). */
export const FORWARDABLE_API_KEYS: ReadonlySet<number> = new Set([19, 20, 30, 31, 33, 37, 38, 39, 40, 43, 44, 45, 46, 49, 51, 55, 57, 64, 67, 80, 81]);

const PRINCIPAL_DATA_VERSION = 0;
const principalData = compileStruct([field('type', 'string', '0+'), field('name', 'string', '0+'), field('tokenAuthenticated', 'bool', '0+')], PRINCIPAL_DATA_VERSION, true);

/** `User:alice` as Kafka's principal serde writes it. */
export function serializePrincipal(principal: string): Buffer {
  const colon = principal.indexOf(':');
  const writer = new Writer(64);
  writer.int16(PRINCIPAL_DATA_VERSION);
  principalData.encode(writer, { type: principal.slice(0, colon), name: principal.slice(colon + 1), tokenAuthenticated: false });
  return writer.finish();
}

/** The principal as `Type:name`, or null when the bytes are not Kafka's serialized principal. */
export function deserializePrincipal(bytes: Buffer): string | null {
  const reader = new Reader(bytes);
  const version = reader.int16();
  if (reader.error !== null || version !== PRINCIPAL_DATA_VERSION) return null;
  const data = principalData.decode(reader) as { type: string; name: string };
  return reader.error === null ? `${data.type}:${data.name}` : null;
}

/** Four dotted decimal octets, each 0-255, or null. */
function ipv4Octets(text: string): number[] | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (match === null) return null;
  const octets = match.slice(1).map(Number);
  return octets.every((octet) => octet <= 255) ? octets : null;
}

/** Eight 16-bit groups of an IPv6 address (with `::` and an embedded IPv4 tail), or null. */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string, last: boolean): number[] | null => {
    if (part === '') return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] ?? '';
      if (last && i === pieces.length - 1 && piece.includes('.')) {
        const octets = ipv4Octets(piece);
        if (octets === null) return null;
        groups.push(((octets[0] ?? 0) << 8) | (octets[1] ?? 0), ((octets[2] ?? 0) << 8) | (octets[3] ?? 0));
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null;
        groups.push(parseInt(piece, 16));
      }
    }
    return groups;
  };
  if (halves.length === 1) {
    const all = parse(text, true);
    return all !== null && all.length === 8 ? all : null;
  }
  const head = parse(halves[0] ?? '', false);
  const tail = parse(halves[1] ?? '', true);
  if (head === null || tail === null || head.length + tail.length > 7) return null;
  return [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** A textual IP address as InetAddress.getAddress bytes (an IPv4-mapped IPv6 address gives its 4 IPv4 bytes, as Java does). */
export function clientAddressBytes(address: string): Buffer {
  const v4 = ipv4Octets(address);
  if (v4 !== null) return Buffer.from(v4);
  const groups = ipv6Groups(address.replace(/%.*$/, ''));
  if (groups === null) throw new Error(`not an IP address: ${address}`);
  const bytes = Buffer.alloc(16);
  groups.forEach((group, index) => bytes.writeUInt16BE(group, index * 2));
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes.readUInt16BE(10) === 0xffff;
  return mapped ? Buffer.from(bytes.subarray(12)) : bytes;
}

/** Raw IP bytes as text, or null unless they are 4 or 16 bytes (Java's InetAddress.getByAddress refuses the rest). */
export function clientAddressText(bytes: Buffer): string | null {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16) return null;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}
