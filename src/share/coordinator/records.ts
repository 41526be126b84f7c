/**
 * The records of `__share_group_state` (KIP-932), in Kafka 4.4's layouts
 * (the share coordinator's generated ShareSnapshotKey/Value and
 * ShareUpdateKey/Value):
 *
 *   key    int16 record type (0 ShareSnapshot, 1 ShareUpdate), then
 *          groupId string, topicId uuid, partition int32 (never flexible)
 *   value  int16 value version (0), then, flexible:
 *            ShareSnapshot  snapshotEpoch int32, stateEpoch int32,
 *                           leaderEpoch int32, startOffset int64,
 *                           createTimestamp int64, writeTimestamp int64,
 *                           stateBatches [firstOffset int64, lastOffset int64,
 *                           deliveryState int8, deliveryCount int16],
 *                           tagged deliveryCompleteCount int32 (tag 0, -1)
 *            ShareUpdate    snapshotEpoch int32, leaderEpoch int32,
 *                           startOffset int64 (-1: unchanged),
 *                           stateBatches (as above), tagged
 *                           deliveryCompleteCount int32 (tag 0, -1)
 *          or null on a ShareSnapshot key: a tombstone, the share
 *          partition's state was deleted.
 *
 * A snapshot is a share partition's whole state; an update carries only the
 * batches one write changed, merged into the state on replay. A key of
 * another type is skipped, as Kafka's loader skips types it does not know;
 * a value version out of range or a short record fails the load.
 */
import { compileStruct, type StructCodec } from '../../protocol/codec.js';
import { Reader } from '../../protocol/reader.js';
import { array, field, type StructOf } from '../../protocol/schema.js';
import { Writer } from '../../protocol/writer.js';

export const SHARE_SNAPSHOT_RECORD_TYPE = 0;
export const SHARE_UPDATE_RECORD_TYPE = 1;
const VALUE_VERSION = 0;

const keyFields = [field('groupId', 'string', '0'), field('topicId', 'uuid', '0'), field('partition', 'int32', '0')] as const;

const stateBatchFields = [
  field('firstOffset', 'int64', '0+'),
  field('lastOffset', 'int64', '0+'),
  field('deliveryState', 'int8', '0+'),
  field('deliveryCount', 'int16', '0+'),
] as const;

const snapshotValueFields = [
  field('snapshotEpoch', 'int32', '0+'),
  field('stateEpoch', 'int32', '0+'),
  field('leaderEpoch', 'int32', '0+'),
  field('startOffset', 'int64', '0+'),
  field('createTimestamp', 'int64', '0+'),
  field('writeTimestamp', 'int64', '0+'),
  array('stateBatches', '0+', stateBatchFields),
  field('deliveryCompleteCount', 'int32', '0+', { default: -1, tag: 0 }),
] as const;

const updateValueFields = [
  field('snapshotEpoch', 'int32', '0+'),
  field('leaderEpoch', 'int32', '0+'),
  field('startOffset', 'int64', '0+'),
  array('stateBatches', '0+', stateBatchFields),
  field('deliveryCompleteCount', 'int32', '0+', { default: -1, tag: 0 }),
] as const;

export type ShareStateKey = StructOf<typeof keyFields>;
export type ShareSnapshotValue = StructOf<typeof snapshotValueFields>;
export type ShareUpdateValue = StructOf<typeof updateValueFields>;

export type ShareCoordinatorRecord =
  | { type: 'ShareSnapshot'; key: ShareStateKey; value: ShareSnapshotValue | null }
  | { type: 'ShareUpdate'; key: ShareStateKey; value: ShareUpdateValue };

export class ShareRecordError extends Error {
  override readonly name = 'ShareRecordError';
}

const keyCodec = compileStruct(keyFields, 0, false);
const snapshotCodec: StructCodec = compileStruct(snapshotValueFields, VALUE_VERSION, true);
const updateCodec: StructCodec = compileStruct(updateValueFields, VALUE_VERSION, true);

export function encodeShareRecord(record: ShareCoordinatorRecord): { key: Buffer; value: Buffer | null } {
  const key = new Writer(64);
  key.int16(record.type === 'ShareSnapshot' ? SHARE_SNAPSHOT_RECORD_TYPE : SHARE_UPDATE_RECORD_TYPE);
  keyCodec.encode(key, record.key as Record<string, unknown>);
  if (record.value === null) return { key: key.finish(), value: null };
  const value = new Writer(128);
  value.int16(VALUE_VERSION);
  (record.type === 'ShareSnapshot' ? snapshotCodec : updateCodec).encode(value, record.value as Record<string, unknown>);
  return { key: key.finish(), value: value.finish() };
}

/** Decodes a record of `__share_group_state`; null for a record type the share coordinator does not own. */
export function decodeShareRecord(keyBytes: Buffer, valueBytes: Buffer | null): ShareCoordinatorRecord | null {
  const keyReader = new Reader(keyBytes);
  const type = keyReader.int16();
  if (keyReader.error !== null) throw new ShareRecordError(`record key shorter than its type: ${keyReader.error.message}`);
  if (type !== SHARE_SNAPSHOT_RECORD_TYPE && type !== SHARE_UPDATE_RECORD_TYPE) return null;
  const name = type === SHARE_SNAPSHOT_RECORD_TYPE ? 'ShareSnapshot' : 'ShareUpdate';
  const key = keyCodec.decode(keyReader) as ShareStateKey;
  finishRead(keyReader, `${name} key`);
  if (valueBytes === null) {
    if (name === 'ShareUpdate') throw new ShareRecordError('a ShareUpdate record has no value');
    return { type: name, key, value: null };
  }
  const valueReader = new Reader(valueBytes);
  const version = valueReader.int16();
  if (valueReader.error === null && version !== VALUE_VERSION) throw new ShareRecordError(`unknown ${name} value version ${version}`);
  if (name === 'ShareSnapshot') {
    const value = snapshotCodec.decode(valueReader) as ShareSnapshotValue;
    finishRead(valueReader, `${name} value v${version}`);
    return { type: name, key, value };
  }
  const value = updateCodec.decode(valueReader) as ShareUpdateValue;
  finishRead(valueReader, `${name} value v${version}`);
  return { type: name, key, value };
}

function finishRead(reader: Reader, what: string): void {
  const error = reader.error as Error | null;
  if (error !== null) throw new ShareRecordError(`${what}: ${error.message}`);
}

export const SHARE_RECORD_CODEC = {
  encode: encodeShareRecord,
  decode: decodeShareRecord,
};
