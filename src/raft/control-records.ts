/**
 * KRaft's control records, the records Raft itself writes into
 * `__cluster_metadata` and its snapshots, in control batches:
 *
 *   key:   version int16 (0), type int16 (2 LEADER_CHANGE, 3 SNAPSHOT_HEADER,
 *          4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS)
 *   value: the message below, flexible encoding, starting with its own
 *          int16 Version field
 *
 * LeaderChangeMessage opens every leader's epoch; SnapshotHeaderRecord and
 * SnapshotFooterRecord frame a snapshot; KRaftVersionRecord and VotersRecord
 * carry the dynamic quorum (KIP-853) and are declared for when voters can
 * change.
 */
import { compileStruct, type StructCodec } from '../protocol/codec.js';
import { ControlRecordType } from '../protocol/records/control.js';
import { buildBatch } from '../protocol/records/records.js';
import { Reader } from '../protocol/reader.js';
import { array, field, struct, type AnyField, type StructOf } from '../protocol/schema.js';
import { Writer } from '../protocol/writer.js';

const voter = [field('voterId', 'int32', '0+'), field('voterDirectoryId', 'uuid', '1+')] as const;

export const LeaderChangeMessage = [
  field('version', 'int16', '0+'),
  field('leaderId', 'int32', '0+'),
  array('voters', '0+', voter),
  array('grantingVoters', '0+', voter),
] as const;

export const SnapshotHeaderRecord = [field('version', 'int16', '0+'), field('lastContainedLogTimestamp', 'int64', '0+')] as const;

export const SnapshotFooterRecord = [field('version', 'int16', '0+')] as const;

export const KRaftVersionRecord = [field('version', 'int16', '0+'), field('kRaftVersion', 'int16', '0+')] as const;

export const VotersRecord = [
  field('version', 'int16', '0+'),
  array('voters', '0+', [
    field('voterId', 'int32', '0+'),
    field('voterDirectoryId', 'uuid', '0+'),
    array('endpoints', '0+', [field('name', 'string', '0+'), field('host', 'string', '0+'), field('port', 'uint16', '0+')]),
    struct('kRaftVersionFeature', '0+', [field('minSupportedVersion', 'int16', '0+'), field('maxSupportedVersion', 'int16', '0+')]),
  ]),
] as const;

export type LeaderChange = StructOf<typeof LeaderChangeMessage>;
export type SnapshotHeader = StructOf<typeof SnapshotHeaderRecord>;
export type SnapshotFooter = StructOf<typeof SnapshotFooterRecord>;
export type KRaftVersion = StructOf<typeof KRaftVersionRecord>;
export type Voters = StructOf<typeof VotersRecord>;

/** The message version each control record is written at (Kafka's ControlRecordUtils current versions). */
const WRITE_VERSION = { LEADER_CHANGE: 0, SNAPSHOT_HEADER: 0, SNAPSHOT_FOOTER: 0, KRAFT_VERSION: 0, KRAFT_VOTERS: 0 } as const;

type RaftControlType = keyof typeof WRITE_VERSION;

const SCHEMAS: { readonly [T in RaftControlType]: readonly AnyField[] } = {
  LEADER_CHANGE: LeaderChangeMessage,
  SNAPSHOT_HEADER: SnapshotHeaderRecord,
  SNAPSHOT_FOOTER: SnapshotFooterRecord,
  KRAFT_VERSION: KRaftVersionRecord,
  KRAFT_VOTERS: VotersRecord,
};

const codecs = new Map<string, StructCodec>();
function codec(type: RaftControlType, version: number): StructCodec {
  const id = `${type}:${version}`;
  let compiled = codecs.get(id);
  if (compiled === undefined) {
    compiled = compileStruct(SCHEMAS[type], version, true);
    codecs.set(id, compiled);
  }
  return compiled;
}

export type RaftControlRecord =
  | { type: 'LEADER_CHANGE'; data: LeaderChange }
  | { type: 'SNAPSHOT_HEADER'; data: SnapshotHeader }
  | { type: 'SNAPSHOT_FOOTER'; data: SnapshotFooter }
  | { type: 'KRAFT_VERSION'; data: KRaftVersion }
  | { type: 'KRAFT_VOTERS'; data: Voters };

export class ControlRecordError extends Error {
  override readonly name = 'ControlRecordError';
}

export function controlKey(type: RaftControlType): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(ControlRecordType[type], 2);
  return key;
}

export function encodeControlValue(record: RaftControlRecord): Buffer {
  const version = WRITE_VERSION[record.type];
  const writer = new Writer(128);
  codec(record.type, version).encode(writer, { ...record.data, version } as Record<string, unknown>);
  return writer.finish();
}

/**
 * Decodes a control record value of `type`. The message's own Version field
 * (its first two bytes) selects the layout, as Kafka reads them.
 */
export function decodeControlValue(type: RaftControlType, value: Buffer): RaftControlRecord {
  if (value.length < 2) throw new ControlRecordError(`${type} value has ${value.length} bytes`);
  const version = value.readInt16BE(0);
  const reader = new Reader(value);
  const data = codec(type, version).decode(reader);
  const error = reader.error as Error | null;
  if (error !== null) throw new ControlRecordError(`${type} v${version}: ${error.message}`);
  return { type, data } as RaftControlRecord;
}

export function isRaftControlType(name: string): name is RaftControlType {
  return name in WRITE_VERSION;
}

/** One control batch holding `records`, stamped with the leader epoch and offsets from `baseOffset`. */
export function buildRaftControlBatch(
  records: readonly RaftControlRecord[],
  options: { baseOffset: number; epoch: number; timestampMs: number },
): Buffer {
  return buildBatch({
    records: records.map((record) => ({ key: controlKey(record.type), value: encodeControlValue(record), timestamp: options.timestampMs })),
    baseOffset: options.baseOffset,
    partitionLeaderEpoch: options.epoch,
    isControl: true,
  });
}
