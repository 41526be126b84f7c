/**
 * The consumer's embedded protocol inside classic JoinGroup / SyncGroup
 * (protocol type "consumer"): the member metadata a consumer sends in
 * JoinGroup (ConsumerProtocolSubscription) and the assignment the leader
 * hands out through SyncGroup (ConsumerProtocolAssignment).
 *
 * Layout: int16 version, then the struct, never flexible. As Kafka does, a
 * version newer than the newest known one is read with the newest layout and
 * trailing bytes are ignored (new versions only append fields), so a newer
 * client never makes its group unreadable. The coordinator reads
 * subscriptions only to learn a classic group's subscribed topics (offset
 * expiry, OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC).
 */
import { compileStruct, type StructCodec } from './codec.js';
import { Reader } from './reader.js';
import { array, field, type StructOf } from './schema.js';
import { Writer } from './writer.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
export const CONSUMER_PROTOCOL_VERSION_MAX = 3;

const subscriptionFields = [
  field('topics', '[]string', '0+'),
  field('userData', 'bytes', '0+', { nullable: '0+', default: null }),
  array('ownedPartitions', '1+', [field('topic', 'string', '1+'), field('partitions', '[]int32', '1+')]),
  field('generationId', 'int32', '2+', { default: -1 }),
  field('rackId', 'string', '3+', { nullable: '3+', default: null }),
] as const;

const assignmentFields = [
  array('assignedPartitions', '0+', [field('topic', 'string', '0+'), field('partitions', '[]int32', '0+')]),
  field('userData', 'bytes', '0+', { nullable: '0+', default: null }),
] as const;

export type ConsumerProtocolSubscription = StructOf<typeof subscriptionFields>;
export type ConsumerProtocolAssignment = StructOf<typeof assignmentFields>;

const codecs = new Map<string, StructCodec>();
function codec(kind: 'subscription' | 'assignment', version: number): StructCodec {
  const id = `${kind}:${version}`;
  let found = codecs.get(id);
  if (found === undefined) {
    found = compileStruct(kind === 'subscription' ? subscriptionFields : assignmentFields, version, false);
    codecs.set(id, found);
  }
  return found;
}

function encode(kind: 'subscription' | 'assignment', version: number, value: Record<string, unknown>): Buffer {
  const writer = new Writer(128);
  writer.int16(version);
  codec(kind, version).encode(writer, value);
  return writer.finish();
}

function decode(kind: 'subscription' | 'assignment', bytes: Buffer): { version: number; value: Record<string, unknown> } | null {
  const reader = new Reader(bytes);
  const version = reader.int16();
  if (reader.error !== null || version < 0) return null;
  const value = codec(kind, Math.min(version, CONSUMER_PROTOCOL_VERSION_MAX)).decode(reader);
  return reader.error === null ? { version, value } : null;
}

export function encodeSubscription(subscription: globalThis.Partial<ConsumerProtocolSubscription>, version = CONSUMER_PROTOCOL_VERSION_MAX): Buffer {
  return encode('subscription', version, { topics: [], ownedPartitions: [], ...subscription });
}

/** The subscription in `bytes`, or null when it is malformed. */
export function decodeSubscription(bytes: Buffer): (ConsumerProtocolSubscription & { version: number }) | null {
  const decoded = decode('subscription', bytes);
  return decoded === null ? null : { ...(decoded.value as ConsumerProtocolSubscription), version: decoded.version };
}

export function encodeAssignment(assignment: globalThis.Partial<ConsumerProtocolAssignment>, version = CONSUMER_PROTOCOL_VERSION_MAX): Buffer {
  return encode('assignment', version, { assignedPartitions: [], ...assignment });
}

/** The assignment in `bytes`, or null when it is malformed. */
export function decodeAssignment(bytes: Buffer): (ConsumerProtocolAssignment & { version: number }) | null {
  const decoded = decode('assignment', bytes);
  return decoded === null ? null : { ...(decoded.value as ConsumerProtocolAssignment), version: decoded.version };
}
