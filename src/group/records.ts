/**
 * The records of `__consumer_offsets`, in Kafka's key/value layouts.
 *
 * Every record the group coordinator writes is a key/value pair in a v2
 * batch of a `__consumer_offsets` partition:
 *
 *   key    int16 record type (Kafka's coordinator-key apiKey: 1 offset commit,
 *          2 group metadata, 3-8 and 16 consumer group, 10-15 share group
 *          (KIP-932)), then the key
 *          struct, never flexible
 *   value  int16 value version, then the value struct (flexible from the
 *          version the type declares), or null: a tombstone, which deletes
 *          the key (the topic is compacted, so a tombstone also frees space)
 *
 * Type 0 is the legacy offset commit (pre-0.10 layout, same key fields); it
 * is read as an offset commit and never written. Types Spool does not know
 * (streams groups) are reported as unknown so the loader can skip them, as
 * Kafka skips record types a coordinator does not own.
 *
 * Versions written are those a Kafka 4.4 coordinator writes (checked against
 * its GroupCoordinatorRecordSerde): OffsetCommitValue v4 with the topic id
 * tagged (v1 when an explicit expire timestamp is set, OffsetCommit v2-v4),
 * GroupMetadataValue v3, every consumer and share group value v0.
 */
import { compileStruct, defaultStruct, type StructCodec } from '../protocol/codec.js';
import { Reader } from '../protocol/reader.js';
import { array, field, inRange, parseVersions, struct, type AnyField, type StructOf } from '../protocol/schema.js';
import { Writer } from '../protocol/writer.js';

const topicPartitions = [
  field('topicId', 'uuid', '0+'),
  field('partitions', '[]int32', '0+'),
] as const;

const currentAssignmentTopicPartitions = [
  ...topicPartitions,
  // KIP-1251 (Kafka 4.3): the epoch at which each partition was assigned to the member.
  field('assignmentEpochs', '[]int32', '0+', { nullable: '0+', default: null, tag: 0 }),
] as const;

const groupMetadataMember = [
  field('memberId', 'string', '0+'),
  field('groupInstanceId', 'string', '3+', { nullable: '3+', default: null }),
  field('clientId', 'string', '0+'),
  field('clientHost', 'string', '0+'),
  field('rebalanceTimeout', 'int32', '1+', { default: -1 }),
  field('sessionTimeout', 'int32', '0+'),
  field('subscription', 'bytes', '0+'),
  field('assignment', 'bytes', '0+'),
] as const;

/** One record type: its key and value declarations and the versions of the value. */
interface RecordTypeDef {
  readonly type: number;
  readonly key: readonly AnyField[];
  readonly value: readonly AnyField[];
  readonly valueVersions: string;
  readonly valueFlexible: string;
}

function recordType<K extends readonly AnyField[], V extends readonly AnyField[]>(def: {
  type: number;
  key: K;
  value: V;
  valueVersions: string;
  valueFlexible: string;
}) {
  return def;
}

export const GROUP_RECORD_TYPES = {
  OffsetCommit: recordType({
    type: 1,
    key: [field('group', 'string', '0'), field('topic', 'string', '0'), field('partition', 'int32', '0')],
    value: [
      field('offset', 'int64', '0+'),
      field('leaderEpoch', 'int32', '3+', { default: -1 }),
      field('metadata', 'string', '0+'),
      field('commitTimestamp', 'int64', '0+'),
      field('expireTimestamp', 'int64', '1', { default: -1 }),
      field('topicId', 'uuid', '4+', { tag: 0 }),
    ],
    valueVersions: '0-4',
    valueFlexible: '4+',
  }),
  GroupMetadata: recordType({
    type: 2,
    key: [field('group', 'string', '0')],
    value: [
      field('protocolType', 'string', '0+'),
      field('generation', 'int32', '0+'),
      field('protocol', 'string', '0+', { nullable: '0+' }),
      field('leader', 'string', '0+', { nullable: '0+' }),
      field('currentStateTimestamp', 'int64', '2+', { default: -1 }),
      array('members', '0+', groupMetadataMember),
    ],
    valueVersions: '0-4',
    valueFlexible: '4+',
  }),
  ConsumerGroupMetadata: recordType({
    type: 3,
    key: [field('groupId', 'string', '0')],
    value: [
      field('epoch', 'int32', '0+'),
      // KIP-1101 (Kafka 4.1): a hash of the subscribed topics' metadata; a change means the group must rebalance.
      field('metadataHash', 'int64', '0+', { default: 0, tag: 0 }),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ConsumerGroupPartitionMetadata: recordType({
    type: 4,
    key: [field('groupId', 'string', '0')],
    value: [
      array('topics', '0+', [
        field('topicId', 'uuid', '0+'),
        field('topicName', 'string', '0+'),
        field('numPartitions', 'int32', '0+'),
        array('partitionMetadata', '0+', [field('partition', 'int32', '0+'), field('racks', '[]string', '0+')]),
      ]),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ConsumerGroupMemberMetadata: recordType({
    type: 5,
    key: [field('groupId', 'string', '0'), field('memberId', 'string', '0')],
    value: [
      field('instanceId', 'string', '0+', { nullable: '0+' }),
      field('rackId', 'string', '0+', { nullable: '0+' }),
      field('clientId', 'string', '0+'),
      field('clientHost', 'string', '0+'),
      field('subscribedTopicNames', '[]string', '0+'),
      field('subscribedTopicRegex', 'string', '0+', { nullable: '0+' }),
      field('rebalanceTimeoutMs', 'int32', '0+', { default: -1 }),
      field('serverAssignor', 'string', '0+', { nullable: '0+' }),
      struct(
        'classicMemberMetadata',
        '0+',
        [
          field('sessionTimeoutMs', 'int32', '0+'),
          array('supportedProtocols', '0+', [field('name', 'string', '0+'), field('metadata', 'bytes', '0+')]),
        ],
        { nullable: '0+', default: null, tag: 0 },
      ),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ConsumerGroupTargetAssignmentMetadata: recordType({
    type: 6,
    key: [field('groupId', 'string', '0')],
    value: [
      field('assignmentEpoch', 'int32', '0+'),
      // KIP-1263 (Kafka 4.3).
      field('assignmentTimestamp', 'int64', '0+', { default: 0, tag: 0 }),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ConsumerGroupTargetAssignmentMember: recordType({
    type: 7,
    key: [field('groupId', 'string', '0'), field('memberId', 'string', '0')],
    value: [array('topicPartitions', '0+', topicPartitions)],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ConsumerGroupCurrentMemberAssignment: recordType({
    type: 8,
    key: [field('groupId', 'string', '0'), field('memberId', 'string', '0')],
    value: [
      field('memberEpoch', 'int32', '0+'),
      field('previousMemberEpoch', 'int32', '0+'),
      field('state', 'int8', '0+'),
      array('assignedPartitions', '0+', currentAssignmentTopicPartitions),
      array('partitionsPendingRevocation', '0+', currentAssignmentTopicPartitions),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ShareGroupMemberMetadata: recordType({
    type: 10,
    key: [field('groupId', 'string', '0'), field('memberId', 'string', '0')],
    value: [
      field('rackId', 'string', '0+', { nullable: '0+' }),
      field('clientId', 'string', '0+'),
      field('clientHost', 'string', '0+'),
      field('subscribedTopicNames', '[]string', '0+'),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ShareGroupMetadata: recordType({
    type: 11,
    key: [field('groupId', 'string', '0')],
    // Unlike ConsumerGroupMetadataValue, the metadata hash is a regular field here.
    value: [field('epoch', 'int32', '0+'), field('metadataHash', 'int64', '0+')],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ShareGroupTargetAssignmentMetadata: recordType({
    type: 12,
    key: [field('groupId', 'string', '0')],
    value: [field('assignmentEpoch', 'int32', '0+'), field('assignmentTimestamp', 'int64', '0+', { default: 0, tag: 0 })],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ShareGroupTargetAssignmentMember: recordType({
    type: 13,
    key: [field('groupId', 'string', '0'), field('memberId', 'string', '0')],
    value: [array('topicPartitions', '0+', topicPartitions)],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ShareGroupCurrentMemberAssignment: recordType({
    type: 14,
    key: [field('groupId', 'string', '0'), field('memberId', 'string', '0')],
    value: [
      field('memberEpoch', 'int32', '0+'),
      field('previousMemberEpoch', 'int32', '0+'),
      field('state', 'int8', '0+'),
      array('assignedPartitions', '0+', topicPartitions),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  /** Which share partitions of the group have durable state in the share coordinator (KIP-932's initialization). */
  ShareGroupStatePartitionMetadata: recordType({
    type: 15,
    key: [field('groupId', 'string', '0')],
    value: [
      array('initializingTopics', '0+', [field('topicId', 'uuid', '0+'), field('topicName', 'string', '0+'), field('partitions', '[]int32', '0+')]),
      array('initializedTopics', '0+', [field('topicId', 'uuid', '0+'), field('topicName', 'string', '0+'), field('partitions', '[]int32', '0+')]),
      array('deletingTopics', '0+', [field('topicId', 'uuid', '0+'), field('topicName', 'string', '0+')]),
    ],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
  ConsumerGroupRegularExpression: recordType({
    type: 16,
    key: [field('groupId', 'string', '0'), field('regularExpression', 'string', '0')],
    value: [field('topics', '[]string', '0+'), field('version', 'int64', '0+'), field('timestamp', 'int64', '0+')],
    valueVersions: '0',
    valueFlexible: '0+',
  }),
} as const;

export type GroupRecordName = keyof typeof GROUP_RECORD_TYPES;
type Def<N extends GroupRecordName> = (typeof GROUP_RECORD_TYPES)[N];
export type RecordKey<N extends GroupRecordName> = StructOf<Def<N>['key']>;
export type RecordValue<N extends GroupRecordName> = StructOf<Def<N>['value']>;

/** A decoded (or to-be-written) record: its type, key, and value or null for a tombstone. */
export type GroupRecord = {
  [N in GroupRecordName]: { type: N; key: RecordKey<N>; value: RecordValue<N> | null };
}[GroupRecordName];

export type GroupRecordOf<N extends GroupRecordName> = Extract<GroupRecord, { type: N }>;

/** The legacy offset commit key type (read as OffsetCommit, never written). */
export const LEGACY_OFFSET_COMMIT_TYPE = 0;

const byType = new Map<number, GroupRecordName>(
  (Object.keys(GROUP_RECORD_TYPES) as GroupRecordName[]).map((name) => [GROUP_RECORD_TYPES[name].type, name]),
);
byType.set(LEGACY_OFFSET_COMMIT_TYPE, 'OffsetCommit');

const codecs = new Map<string, StructCodec>();

function codecFor(name: GroupRecordName, part: 'key' | 'value', version: number): StructCodec {
  const id = `${name}:${part}:${version}`;
  let codec = codecs.get(id);
  if (codec === undefined) {
    const def = GROUP_RECORD_TYPES[name] as RecordTypeDef;
    const flexible = part === 'value' && inRange(parseVersions(def.valueFlexible), version);
    codec = compileStruct(part === 'key' ? def.key : def.value, version, flexible);
    codecs.set(id, codec);
  }
  return codec;
}

/** The value version Spool writes for a record (Kafka 4.x's choice). */
export function valueVersionFor(record: GroupRecord): number {
  if (record.type === 'OffsetCommit') return record.value !== null && record.value.expireTimestamp !== -1 ? 1 : 4;
  if (record.type === 'GroupMetadata') return 3;
  return 0;
}

/** A record with every absent key or value field at Kafka's default. */
export function groupRecord<N extends GroupRecordName>(
  type: N,
  key: RecordKey<N>,
  value: globalThis.Partial<RecordValue<N>> | null,
): GroupRecordOf<N> {
  const def = GROUP_RECORD_TYPES[type] as RecordTypeDef;
  const full = value === null ? null : { ...defaultStruct(def.value), ...value };
  return { type, key, value: full } as unknown as GroupRecordOf<N>;
}

export class GroupRecordError extends Error {
  override readonly name = 'GroupRecordError';
}

/** Encodes a record's key and value bytes (value null for a tombstone). */
export function encodeGroupRecord(record: GroupRecord): { key: Buffer; value: Buffer | null } {
  const def = GROUP_RECORD_TYPES[record.type] as RecordTypeDef;
  const key = new Writer(64);
  key.int16(def.type);
  codecFor(record.type, 'key', 0).encode(key, record.key as Record<string, unknown>);
  if (record.value === null) return { key: key.finish(), value: null };
  const version = valueVersionFor(record);
  const value = new Writer(128);
  value.int16(version);
  codecFor(record.type, 'value', version).encode(value, record.value as Record<string, unknown>);
  return { key: key.finish(), value: value.finish() };
}

export type DecodedGroupRecord = { ok: true; record: GroupRecord; valueVersion: number } | { ok: false; unknownType: number };

/**
 * Decodes a record as Kafka 4.4's CoordinatorRecordSerde does. A key of an
 * unknown type gives `{ ok: false }` (the caller skips it); a value version
 * outside the type's range, or a key or value too short for its fields,
 * throws GroupRecordError (the loader fails the partition's load, as
 * Kafka's does). Bytes after the last known field are ignored, as Kafka's
 * generated readers ignore them.
 */
export function decodeGroupRecord(keyBytes: Buffer, valueBytes: Buffer | null): DecodedGroupRecord {
  const keyReader = new Reader(keyBytes);
  const type = keyReader.int16();
  if (keyReader.error !== null) throw new GroupRecordError(`record key shorter than its type: ${keyReader.error.message}`);
  const name = byType.get(type);
  if (name === undefined) return { ok: false, unknownType: type };
  const key = codecFor(name, 'key', 0).decode(keyReader);
  finishRead(keyReader, `${name} key`);
  if (valueBytes === null) return { ok: true, record: { type: name, key, value: null } as unknown as GroupRecord, valueVersion: -1 };
  const valueReader = new Reader(valueBytes);
  const version = valueReader.int16();
  const def = GROUP_RECORD_TYPES[name] as RecordTypeDef;
  const range = parseVersions(type === LEGACY_OFFSET_COMMIT_TYPE ? '0' : def.valueVersions);
  if (valueReader.error === null && (version < range.min || version > range.max)) {
    throw new GroupRecordError(`unknown ${name} value version ${version}`);
  }
  const value = codecFor(name, 'value', version).decode(valueReader);
  finishRead(valueReader, `${name} value v${version}`);
  return { ok: true, record: { type: name, key, value } as unknown as GroupRecord, valueVersion: version };
}

function finishRead(reader: Reader, what: string): void {
  const error = reader.error as Error | null;
  if (error !== null) throw new GroupRecordError(`${what}: ${error.message}`);
}

// ---- shorthands used by the coordinator

export function offsetCommitKey(group: string, topic: string, partition: number): RecordKey<'OffsetCommit'> {
  return { group, topic, partition };
}
