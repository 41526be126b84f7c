/**
 * Kafka's metadata record types (the `__cluster_metadata` vocabulary),
 * declared once with the schema DSL and encoded as Kafka encodes them.
 *
 * A metadata record is the value of a record in a v2 batch (its key is null):
 *
 *   frame version   uvarint  (1)
 *   record type     uvarint  (the record's apiKey: 0 RegisterBrokerRecord, 2 TopicRecord, ...)
 *   record version  uvarint
 *   body            the record's fields, flexible encoding (compact strings,
 *                   arrays, tagged fields), every type being flexible from v0
 *
 * Versions written are those a Kafka 4.x controller writes at the
 * metadata.version Spool finalizes (see `WRITE_VERSION`); every version
 * Kafka 4.4 declares can be read.
 */
import { compileStruct, defaultStruct, type StructCodec } from '../protocol/codec.js';
import { Reader } from '../protocol/reader.js';
import { array, field, parseVersions, type AnyField, type StructOf } from '../protocol/schema.js';
import { Writer } from '../protocol/writer.js';

export interface RecordDef<N extends string = string, F extends readonly AnyField[] = readonly AnyField[]> {
  readonly apiKey: number;
  readonly name: N;
  /** Kafka's validVersions. */
  readonly versions: string;
  readonly fields: F;
}

function recordType<N extends string, F extends readonly AnyField[]>(def: RecordDef<N, F>): RecordDef<N, F> {
  return def;
}

const brokerEndpoint = [
  field('name', 'string', '0+'),
  field('host', 'string', '0+'),
  field('port', 'uint16', '0+'),
  field('securityProtocol', 'int16', '0+'),
] as const;

const supportedFeature = [
  field('name', 'string', '0+'),
  field('minSupportedVersion', 'int16', '0+'),
  field('maxSupportedVersion', 'int16', '0+'),
] as const;

export const RegisterBrokerRecord = recordType({
  apiKey: 0,
  name: 'RegisterBrokerRecord',
  versions: '0-4',
  fields: [
    field('brokerId', 'int32', '0+'),
    field('isMigratingZkBroker', 'bool', '2+'),
    field('incarnationId', 'uuid', '0+'),
    field('brokerEpoch', 'int64', '0+'),
    array('endPoints', '0+', brokerEndpoint),
    array('features', '0+', supportedFeature),
    field('rack', 'string', '0+', { nullable: '0+' }),
    field('fenced', 'bool', '0+', { default: true }),
    field('inControlledShutdown', 'bool', '1+'),
    field('logDirs', '[]uuid', '3+', { tag: 0 }),
    field('cordonedLogDirs', '[]uuid', '4+', { tag: 1, nullable: '4+', default: null }),
  ],
});

export const UnregisterBrokerRecord = recordType({
  apiKey: 1,
  name: 'UnregisterBrokerRecord',
  versions: '0',
  fields: [field('brokerId', 'int32', '0+'), field('brokerEpoch', 'int64', '0+')],
});

export const TopicRecord = recordType({
  apiKey: 2,
  name: 'TopicRecord',
  versions: '0',
  fields: [field('name', 'string', '0+'), field('topicId', 'uuid', '0+')],
});

export const PartitionRecord = recordType({
  apiKey: 3,
  name: 'PartitionRecord',
  versions: '0-2',
  fields: [
    field('partitionId', 'int32', '0+', { default: -1 }),
    field('topicId', 'uuid', '0+'),
    field('replicas', '[]int32', '0+'),
    field('isr', '[]int32', '0+'),
    field('removingReplicas', '[]int32', '0+'),
    field('addingReplicas', '[]int32', '0+'),
    field('leader', 'int32', '0+', { default: -1 }),
    field('leaderRecoveryState', 'int8', '0+', { tag: 0 }),
    field('leaderEpoch', 'int32', '0+', { default: -1 }),
    field('partitionEpoch', 'int32', '0+', { default: -1 }),
    field('directories', '[]uuid', '1+'),
    field('eligibleLeaderReplicas', '[]int32', '2+', { tag: 1, nullable: '2+', default: null }),
    field('lastKnownElr', '[]int32', '2+', { tag: 2, nullable: '2+', default: null }),
  ],
});

export const ConfigRecord = recordType({
  apiKey: 4,
  name: 'ConfigRecord',
  versions: '0',
  fields: [
    field('resourceType', 'int8', '0+'),
    field('resourceName', 'string', '0+'),
    field('name', 'string', '0+'),
    field('value', 'string', '0+', { nullable: '0+' }),
  ],
});

/** -2 in `leader` means "unchanged"; null lists mean "unchanged". */
export const NO_LEADER_CHANGE = -2;

export const PartitionChangeRecord = recordType({
  apiKey: 5,
  name: 'PartitionChangeRecord',
  versions: '0-2',
  fields: [
    field('partitionId', 'int32', '0+', { default: -1 }),
    field('topicId', 'uuid', '0+'),
    field('isr', '[]int32', '0+', { tag: 0, nullable: '0+', default: null }),
    field('leader', 'int32', '0+', { tag: 1, default: NO_LEADER_CHANGE }),
    field('replicas', '[]int32', '0+', { tag: 2, nullable: '0+', default: null }),
    field('removingReplicas', '[]int32', '0+', { tag: 3, nullable: '0+', default: null }),
    field('addingReplicas', '[]int32', '0+', { tag: 4, nullable: '0+', default: null }),
    field('leaderRecoveryState', 'int8', '0+', { tag: 5, default: -1 }),
    field('directories', '[]uuid', '1+', { tag: 8, nullable: '1+', default: null }),
    field('eligibleLeaderReplicas', '[]int32', '2+', { tag: 6, nullable: '2+', default: null }),
    field('lastKnownElr', '[]int32', '2+', { tag: 7, nullable: '2+', default: null }),
  ],
});

export const FenceBrokerRecord = recordType({
  apiKey: 7,
  name: 'FenceBrokerRecord',
  versions: '0',
  fields: [field('id', 'int32', '0+'), field('epoch', 'int64', '0+')],
});

export const UnfenceBrokerRecord = recordType({
  apiKey: 8,
  name: 'UnfenceBrokerRecord',
  versions: '0',
  fields: [field('id', 'int32', '0+'), field('epoch', 'int64', '0+')],
});

export const RemoveTopicRecord = recordType({
  apiKey: 9,
  name: 'RemoveTopicRecord',
  versions: '0',
  fields: [field('topicId', 'uuid', '0+')],
});

export const FeatureLevelRecord = recordType({
  apiKey: 12,
  name: 'FeatureLevelRecord',
  versions: '0',
  fields: [field('name', 'string', '0+'), field('featureLevel', 'int16', '0+')],
});

export const ProducerIdsRecord = recordType({
  apiKey: 15,
  name: 'ProducerIdsRecord',
  versions: '0',
  fields: [
    field('brokerId', 'int32', '0+'),
    field('brokerEpoch', 'int64', '0+', { default: -1 }),
    field('nextProducerId', 'int64', '0+'),
  ],
});

/** `fenced` / `inControlledShutdown`: -1 unfenced, 0 unchanged, 1 fenced / in controlled shutdown. */
export const BrokerRegistrationChangeRecord = recordType({
  apiKey: 17,
  name: 'BrokerRegistrationChangeRecord',
  versions: '0-3',
  fields: [
    field('brokerId', 'int32', '0+'),
    field('brokerEpoch', 'int64', '0+'),
    field('fenced', 'int8', '0+', { tag: 0 }),
    field('inControlledShutdown', 'int8', '1+', { tag: 1 }),
    field('logDirs', '[]uuid', '2+', { tag: 2 }),
    field('cordonedLogDirs', '[]uuid', '3+', { tag: 3, nullable: '3+', default: null }),
  ],
});

export const NoOpRecord = recordType({ apiKey: 20, name: 'NoOpRecord', versions: '0', fields: [] });

export const RegisterControllerRecord = recordType({
  apiKey: 27,
  name: 'RegisterControllerRecord',
  versions: '0',
  fields: [
    field('controllerId', 'int32', '0+'),
    field('incarnationId', 'uuid', '0+'),
    field('zkMigrationReady', 'bool', '0+'),
    array('endPoints', '0+', brokerEndpoint),
    array('features', '0+', supportedFeature),
  ],
});

/**
 * Metadata transactions (KIP-868): records between a Begin and an End are
 * applied together; an Abort drops them. Kafka's controller wraps a new
 * cluster's bootstrap records in one (metadata.version 3.6-IV1 and later);
 * Spool's controller never writes them.
 */
export const BeginTransactionRecord = recordType({
  apiKey: 23,
  name: 'BeginTransactionRecord',
  versions: '0',
  fields: [field('name', 'string', '0+', { nullable: '0+', default: null, tag: 0 })],
});

export const EndTransactionRecord = recordType({ apiKey: 24, name: 'EndTransactionRecord', versions: '0', fields: [] });

export const AbortTransactionRecord = recordType({
  apiKey: 25,
  name: 'AbortTransactionRecord',
  versions: '0',
  fields: [field('reason', 'string', '0+', { nullable: '0+', default: null, tag: 0 })],
});

/** `mechanism`: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512 (Kafka's ScramMechanism types). */
export const UserScramCredentialRecord = recordType({
  apiKey: 11,
  name: 'UserScramCredentialRecord',
  versions: '0',
  fields: [
    field('name', 'string', '0+'),
    field('mechanism', 'int8', '0+'),
    field('salt', 'bytes', '0+'),
    field('storedKey', 'bytes', '0+'),
    field('serverKey', 'bytes', '0+'),
    field('iterations', 'int32', '0+'),
  ],
});

export const RemoveUserScramCredentialRecord = recordType({
  apiKey: 22,
  name: 'RemoveUserScramCredentialRecord',
  versions: '0',
  fields: [field('name', 'string', '0+'), field('mechanism', 'int8', '0+')],
});

/**
 * One ACL (StandardAcl): resource type, name and pattern type; principal,
 * host, operation and permission type, with the codes of
 * src/security/authorizer/acl.ts. `id` names it for RemoveAccessControlEntryRecord.
 */
export const AccessControlEntryRecord = recordType({
  apiKey: 18,
  name: 'AccessControlEntryRecord',
  versions: '0',
  fields: [
    field('id', 'uuid', '0+'),
    field('resourceType', 'int8', '0+'),
    field('resourceName', 'string', '0+'),
    field('patternType', 'int8', '0+'),
    field('principal', 'string', '0+'),
    field('host', 'string', '0+'),
    field('operation', 'int8', '0+'),
    field('permissionType', 'int8', '0+'),
  ],
});

export const RemoveAccessControlEntryRecord = recordType({
  apiKey: 19,
  name: 'RemoveAccessControlEntryRecord',
  versions: '0',
  fields: [field('id', 'uuid', '0+')],
});

/** A client quota set or removed (KIP-546); an entity name is null for the default entity. */
export const ClientQuotaRecord = recordType({
  apiKey: 14,
  name: 'ClientQuotaRecord',
  versions: '0',
  fields: [
    array('entity', '0+', [field('entityType', 'string', '0+'), field('entityName', 'string', '0+', { nullable: '0+' })]),
    field('key', 'string', '0+'),
    field('value', 'float64', '0+'),
    field('remove', 'bool', '0+'),
  ],
});

/** Every record type Spool reads and writes, by name. */
export const METADATA_RECORD_TYPES = {
  RegisterBrokerRecord,
  UnregisterBrokerRecord,
  TopicRecord,
  PartitionRecord,
  ConfigRecord,
  PartitionChangeRecord,
  FenceBrokerRecord,
  UnfenceBrokerRecord,
  RemoveTopicRecord,
  FeatureLevelRecord,
  ProducerIdsRecord,
  BrokerRegistrationChangeRecord,
  NoOpRecord,
  RegisterControllerRecord,
  BeginTransactionRecord,
  EndTransactionRecord,
  AbortTransactionRecord,
  UserScramCredentialRecord,
  RemoveUserScramCredentialRecord,
  AccessControlEntryRecord,
  RemoveAccessControlEntryRecord,
  ClientQuotaRecord,
} as const;

type Types = typeof METADATA_RECORD_TYPES;
export type MetadataRecordName = keyof Types;
export type RecordData<N extends MetadataRecordName> = Types[N] extends RecordDef<string, infer F> ? StructOf<F> : never;

/** One metadata record with the version it is (or will be) written at: Kafka's ApiMessageAndVersion. */
export type MetadataRecord = {
  [N in MetadataRecordName]: { type: N; version: number; data: RecordData<N> };
}[MetadataRecordName];

/**
 * Versions Spool writes: those of a Kafka 4.0 controller at metadata.version
 * 4.0-IV3 without eligible leader replicas (PartitionRecord v1 carries the
 * replicas' directories, RegisterBrokerRecord v3 the log directories).
 */
export const WRITE_VERSION: { readonly [N in MetadataRecordName]: number } = {
  RegisterBrokerRecord: 3,
  UnregisterBrokerRecord: 0,
  TopicRecord: 0,
  PartitionRecord: 1,
  ConfigRecord: 0,
  PartitionChangeRecord: 1,
  FenceBrokerRecord: 0,
  UnfenceBrokerRecord: 0,
  RemoveTopicRecord: 0,
  FeatureLevelRecord: 0,
  ProducerIdsRecord: 0,
  BrokerRegistrationChangeRecord: 2,
  NoOpRecord: 0,
  RegisterControllerRecord: 0,
  BeginTransactionRecord: 0,
  EndTransactionRecord: 0,
  AbortTransactionRecord: 0,
  UserScramCredentialRecord: 0,
  RemoveUserScramCredentialRecord: 0,
  AccessControlEntryRecord: 0,
  RemoveAccessControlEntryRecord: 0,
  ClientQuotaRecord: 0,
};

/**
 * PartitionRecord and PartitionChangeRecord carry eligible leader replicas
 * from v2 (KIP-966). Spool writes v2 only where the ELR fields are set
 * (eligible.leader.replicas.version 1); Kafka writes v2 from metadata.version
 * 4.0-IV1 on, and reads both.
 */
export const ELR_RECORD_VERSION = 2;

/** A record at the version Spool writes; fields left out take Kafka's defaults. */
export function metadataRecord<N extends MetadataRecordName>(type: N, data: globalThis.Partial<RecordData<N>>): MetadataRecord {
  const def = METADATA_RECORD_TYPES[type] as RecordDef;
  const version = WRITE_VERSION[type];
  return { type, version, data: { ...defaultStruct(def.fields), ...data } } as MetadataRecord;
}

const FRAME_VERSION = 1;

const byApiKey = new Map<number, RecordDef>(Object.values(METADATA_RECORD_TYPES).map((def) => [def.apiKey, def as RecordDef]));
const codecs = new Map<string, StructCodec>();

function codecFor(def: RecordDef, version: number): StructCodec {
  const id = `${def.apiKey}:${version}`;
  let codec = codecs.get(id);
  if (codec === undefined) {
    codec = compileStruct(def.fields, version, true);
    codecs.set(id, codec);
  }
  return codec;
}

export class MetadataRecordError extends Error {
  override readonly name = 'MetadataRecordError';
}

/** Encodes a record value: frame version, type, version, body. */
export function encodeMetadataRecord(record: MetadataRecord): Buffer {
  const def = METADATA_RECORD_TYPES[record.type] as RecordDef;
  const range = parseVersions(def.versions);
  if (record.version < range.min || record.version > range.max) {
    throw new MetadataRecordError(`${record.type} has no version ${record.version}`);
  }
  const writer = new Writer(256);
  writer.uvarint(FRAME_VERSION);
  writer.uvarint(def.apiKey);
  writer.uvarint(record.version);
  codecFor(def, record.version).encode(writer, record.data as Record<string, unknown>);
  return writer.finish();
}

/**
 * Decodes a record value. Unknown frame versions, record types or versions,
 * and malformed bodies raise MetadataRecordError: the metadata log is
 * written only by controllers, so a record Spool cannot read is corruption
 * or a newer cluster, never something to skip silently.
 */
export function decodeMetadataRecord(value: Buffer): MetadataRecord {
  const reader = new Reader(value);
  const frameVersion = reader.uvarint();
  const apiKey = reader.uvarint();
  const version = reader.uvarint();
  if (reader.error !== null) throw new MetadataRecordError(`metadata record header: ${reader.error.message}`);
  if (frameVersion !== FRAME_VERSION) throw new MetadataRecordError(`unknown metadata record frame version ${frameVersion}`);
  const def = byApiKey.get(apiKey);
  if (def === undefined) throw new MetadataRecordError(`unknown metadata record type ${apiKey}`);
  const range = parseVersions(def.versions);
  if (version < range.min || version > range.max) throw new MetadataRecordError(`unknown ${def.name} version ${version}`);
  const data = codecFor(def, version).decode(reader);
  if (reader.error === null && reader.remaining !== 0) reader.fail(`${reader.remaining} trailing bytes`);
  const error = reader.error as Error | null;
  if (error !== null) throw new MetadataRecordError(`${def.name} v${version}: ${error.message}`);
  return { type: def.name, version, data } as MetadataRecord;
}
