/**
 * `__consumer_offsets` record formats: every record type round-trips through
 * encode/decode, tombstones have null values, the key starts with Kafka's
 * record type and the value with the version Kafka 4.x writes, byte layouts
 * match Kafka's (checked field by field for an offset commit), the legacy
 * type-0 offset commit is read, unknown types are reported for skipping, and
 * malformed known records throw. Also the consumer protocol's embedded
 * subscription and assignment, including a newer version than Spool knows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeGroupRecord,
  encodeGroupRecord,
  groupRecord,
  GroupRecordError,
  GROUP_RECORD_TYPES,
  type GroupRecord,
} from '../../src/group/records.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../src/group/consumer-protocol.js';

const topicId = 'AAECAwQFBgcICQoLDA0ODw';

const samples: GroupRecord[] = [
  groupRecord('OffsetCommit', { group: 'g', topic: 't', partition: 3 }, { offset: 42, leaderEpoch: 5, metadata: 'm', commitTimestamp: 1000, expireTimestamp: -1 }),
  groupRecord('OffsetCommit', { group: 'g', topic: 't', partition: 3 }, { offset: 42, leaderEpoch: -1, metadata: '', commitTimestamp: 1000, expireTimestamp: 9000 }),
  groupRecord('OffsetCommit', { group: 'g', topic: 't', partition: 3 }, null),
  groupRecord('GroupMetadata', { group: 'g' }, {
    protocolType: 'consumer',
    generation: 7,
    protocol: 'range',
    leader: 'm1',
    currentStateTimestamp: 1234,
    members: [
      {
        memberId: 'm1',
        groupInstanceId: 'i1',
        clientId: 'c',
        clientHost: '/127.0.0.1',
        rebalanceTimeout: 300000,
        sessionTimeout: 45000,
        subscription: Buffer.from([1, 2, 3]),
        assignment: Buffer.from([4, 5]),
      },
    ],
  }),
  groupRecord('GroupMetadata', { group: 'g' }, null),
  groupRecord('ConsumerGroupMetadata', { groupId: 'g' }, { epoch: 3, metadataHash: 123456789012 }),
  groupRecord('ConsumerGroupMemberMetadata', { groupId: 'g', memberId: 'm' }, {
    instanceId: null,
    rackId: 'r1',
    clientId: 'c',
    clientHost: 'h',
    subscribedTopicNames: ['a', 'b'],
    subscribedTopicRegex: 'x.*',
    rebalanceTimeoutMs: 30000,
    serverAssignor: 'uniform',
    classicMemberMetadata: { sessionTimeoutMs: 10000, supportedProtocols: [{ name: 'range', metadata: Buffer.from([9]) }] },
  }),
  groupRecord('ConsumerGroupTargetAssignmentMetadata', { groupId: 'g' }, { assignmentEpoch: 3, assignmentTimestamp: 55 }),
  groupRecord('ConsumerGroupTargetAssignmentMember', { groupId: 'g', memberId: 'm' }, { topicPartitions: [{ topicId, partitions: [0, 2] }] }),
  groupRecord('ConsumerGroupCurrentMemberAssignment', { groupId: 'g', memberId: 'm' }, {
    memberEpoch: 3,
    previousMemberEpoch: 2,
    state: 1,
    assignedPartitions: [{ topicId, partitions: [0], assignmentEpochs: null }],
    partitionsPendingRevocation: [{ topicId, partitions: [1], assignmentEpochs: null }],
  }),
  groupRecord('ConsumerGroupRegularExpression', { groupId: 'g', regularExpression: 'ev.*' }, { topics: ['events'], version: 17, timestamp: 99 }),
  groupRecord('ConsumerGroupPartitionMetadata', { groupId: 'g' }, {
    topics: [{ topicId, topicName: 't', numPartitions: 2, partitionMetadata: [{ partition: 0, racks: ['r'] }] }],
  }),
];

test('every record type round-trips, keys carry the type and values the version Kafka writes', () => {
  for (const record of samples) {
    const { key, value } = encodeGroupRecord(record);
    assert.equal(key.readInt16BE(0), GROUP_RECORD_TYPES[record.type].type, record.type);
    const decoded = decodeGroupRecord(key, value);
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.record, record, record.type);
    if (record.value === null) {
      assert.equal(value, null);
      continue;
    }
    const expectedVersion = record.type === 'GroupMetadata' ? 3 : record.type === 'OffsetCommit' ? (record.value.expireTimestamp === -1 ? 3 : 1) : 0;
    assert.equal(value!.readInt16BE(0), expectedVersion, record.type);
    assert.equal(decoded.valueVersion, expectedVersion);
  }
});

test('an offset commit is laid out as Kafka lays it out', () => {
  const { key, value } = encodeGroupRecord(samples[0]!);
  // key: type 1, group "g", topic "t", partition 3 (int16-length strings, not flexible)
  assert.deepEqual([...key], [0, 1, 0, 1, 0x67, 0, 1, 0x74, 0, 0, 0, 3]);
  // value v3: offset int64, leaderEpoch int32, metadata string, commitTimestamp int64
  const expected = Buffer.alloc(2 + 8 + 4 + 3 + 8);
  expected.writeInt16BE(3, 0);
  expected.writeBigInt64BE(42n, 2);
  expected.writeInt32BE(5, 10);
  expected.writeInt16BE(1, 14);
  expected.write('m', 16);
  expected.writeBigInt64BE(1000n, 17);
  assert.deepEqual(value, expected);
});

test('the legacy offset commit (type 0, value v0) is read as an offset commit', () => {
  const key = Buffer.from([0, 0, 0, 1, 0x67, 0, 1, 0x74, 0, 0, 0, 9]);
  const value = Buffer.alloc(2 + 8 + 2 + 8);
  value.writeInt16BE(0, 0);
  value.writeBigInt64BE(77n, 2);
  value.writeInt16BE(0, 10);
  value.writeBigInt64BE(5n, 12);
  const decoded = decodeGroupRecord(key, value);
  assert.ok(decoded.ok);
  assert.equal(decoded.record.type, 'OffsetCommit');
  assert.deepEqual(decoded.record.key, { group: 'g', topic: 't', partition: 9 });
  assert.equal(decoded.record.value?.offset, 77);
});

test('unknown record types are skipped; malformed known ones are corruption', () => {
  const shareKey = Buffer.from([0, 10, 0, 1, 0x67]);
  assert.deepEqual(decodeGroupRecord(shareKey, null), { ok: false, unknownType: 10 });
  assert.throws(() => decodeGroupRecord(Buffer.from([0, 2, 0, 5, 0x67]), null), GroupRecordError);
  const { key } = encodeGroupRecord(samples[0]!);
  assert.throws(() => decodeGroupRecord(key, Buffer.from([0, 9, 1, 2])), GroupRecordError);
  assert.throws(() => decodeGroupRecord(key, Buffer.from([0, 3, 1])), GroupRecordError);
});

test('consumer protocol subscription and assignment round-trip at every version; newer versions are read', () => {
  for (let version = 0; version <= 3; version++) {
    const subscription = decodeSubscription(
      encodeSubscription({ topics: ['a', 'b'], userData: Buffer.from([1]), ownedPartitions: [{ topic: 'a', partitions: [0] }], generationId: 4, rackId: 'r' }, version),
    );
    assert.ok(subscription !== null);
    assert.deepEqual(subscription.topics, ['a', 'b']);
    assert.equal(subscription.version, version);
    assert.equal(subscription.generationId, version >= 2 ? 4 : -1);
    const assignment = decodeAssignment(encodeAssignment({ assignedPartitions: [{ topic: 'a', partitions: [1, 2] }] }, version));
    assert.deepEqual(assignment?.assignedPartitions, [{ topic: 'a', partitions: [1, 2] }]);
  }
  const newer = Buffer.concat([encodeSubscription({ topics: ['x'] }, 3), Buffer.from([7, 7, 7])]);
  newer.writeInt16BE(5, 0);
  assert.deepEqual(decodeSubscription(newer)?.topics, ['x']);
  assert.equal(decodeSubscription(Buffer.from([0, 0, 0, 0, 0, 9])), null);
});
