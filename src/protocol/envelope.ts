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
import { isIPv4, isIPv6 } from 'node:net';
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

/** A textual IP address as InetAddress.getAddress bytes (an IPv4-mapped IPv6 address gives its 4 IPv4 bytes, as Java does). */
export function clientAddressBytes(address: string): Buffer {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped?.[1] ?? address;
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new Error(`not an IP address: ${address}`);
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = ip.includes('::') ? [...groups(head), ...Array<string>(missing).fill('0'), ...groups(tail)] : groups(ip);
  const bytes = Buffer.alloc(16);
  all.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
  return bytes;
}

/** Raw IP bytes as text, or null unless they are 4 or 16 bytes (Java's InetAddress.getByAddress refuses the rest). */
export function clientAddressText(bytes: Buffer): string | null {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length !== 16) return null;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}
