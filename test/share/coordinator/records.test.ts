/**
 * The `__share_group_state` record layouts: a key is the int16 record type
 * (0 ShareSnapshot, 1 ShareUpdate) and a non-flexible
 * (groupId, topicId, partition); a value is int16 version 0 and a flexible
 * struct whose deliveryCompleteCount is tag 0, left out at -1. Records
 * round-trip; unknown record types are skipped (null); an unknown value
 * version and a short value throw (the load fails).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeShareRecord, encodeShareRecord, ShareRecordError, type ShareCoordinatorRecord } from '../../../src/share/coordinator/records.js';
import { TOPIC_ID } from './helpers.js';

const key = { groupId: 'g', topicId: TOPIC_ID, partition: 3 };
const snapshot: ShareCoordinatorRecord = {
  type: 'ShareSnapshot',
  key,
  value: { snapshotEpoch: 1, stateEpoch: 2, leaderEpoch: 3, startOffset: 100, createTimestamp: 1000, writeTimestamp: 2000, stateBatches: [{ firstOffset: 100, lastOffset: 109, deliveryState: 2, deliveryCount: 1 }], deliveryCompleteCount: 10 },
};

test('the key is the record type, then group id (int16 length), topic id and partition', () => {
  const { key: bytes } = encodeShareRecord(snapshot);
  const expected = Buffer.concat([Buffer.from([0, 0, 0, 1]), Buffer.from('g'), Buffer.from(TOPIC_ID, 'base64url'), Buffer.from([0, 0, 0, 3])]);
  assert.deepEqual(bytes, expected);
  assert.equal(encodeShareRecord({ type: 'ShareUpdate', key, value: { snapshotEpoch: 0, leaderEpoch: 0, startOffset: -1, stateBatches: [], deliveryCompleteCount: -1 } }).key.readInt16BE(0), 1);
});

test('a snapshot value is version 0, flexible, with deliveryCompleteCount tagged only when set', () => {
  const { value } = encodeShareRecord(snapshot);
  assert.equal(value!.readInt16BE(0), 0);
  // 3 int32 + 3 int64 + compact array (1 batch: 8+8+1+2 + empty tags) + tags (1 field: tag, size, int32).
  assert.equal(value!.length, 2 + 12 + 24 + 1 + 19 + 1 + 1 + 1 + 1 + 4);
  const unset = encodeShareRecord({ ...snapshot, value: { ...snapshot.value!, deliveryCompleteCount: -1 } } as ShareCoordinatorRecord).value!;
  assert.equal(unset.length, value!.length - 6);
  assert.equal(unset[unset.length - 1], 0, 'an empty tagged-field section');
});

test('records round-trip, tombstones included', () => {
  for (const record of [
    snapshot,
    { type: 'ShareUpdate', key, value: { snapshotEpoch: 1, leaderEpoch: 4, startOffset: -1, stateBatches: [{ firstOffset: 5, lastOffset: 6, deliveryState: 4, deliveryCount: 5 }], deliveryCompleteCount: -1 } },
    { type: 'ShareSnapshot', key, value: null },
  ] as ShareCoordinatorRecord[]) {
    const { key: k, value: v } = encodeShareRecord(record);
    assert.deepEqual(decodeShareRecord(k, v), record);
  }
});

test('an unknown record type is skipped; a bad value version or a short value fails', () => {
  const { key: k, value: v } = encodeShareRecord(snapshot);
  const other = Buffer.from(k);
  other.writeInt16BE(7, 0);
  assert.equal(decodeShareRecord(other, v), null);
  const badVersion = Buffer.from(v!);
  badVersion.writeInt16BE(1, 0);
  assert.throws(() => decodeShareRecord(k, badVersion), ShareRecordError);
  assert.throws(() => decodeShareRecord(k, v!.subarray(0, 10)), ShareRecordError);
});
