/**
 * `__consumer_offsets` record formats: every record type round-trips through
 * encode/decode, tombstones have null values, the key starts with Kafka's
 * record type and the value with the version Kafka 4.x writes, byte layouts
 * match Kafka's (checked field by field for an offset commit), the legacy
 * type-0 offset commit is read, unknown types are reported for skipping
 * (share group records, types 10-15, are known),
 * malformed known records throw and bytes after the last field are ignored. Also the consumer protocol's embedded
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
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../src/protocol/consumer-protocol.js';

const topicId = 'AAECAwQFBgcICQoLDA0ODw';

const samples: GroupRecord[] = [
  groupRecord('OffsetCommit', { group: 'g', topic: 't', partition: 3 }, { offset: 42, leaderEpoch: 5, metadata: 'm', commitTimestamp: 1000, expireTimestamp: -1 }),
  groupRecord('OffsetCommit', { group: 'g', topic: 't', partition: 3 }, { offset: 42, leaderEpoch: 5, metadata: 'm', commitTimestamp: 1000, expireTimestamp: -1, topicId }),
  groupRecord('OffsetCommit', { group: 'g', topic: 't', partition: 3 }, { offset: 42, leaderEpoch: -1, metadata: 'm', commitTimestamp: 1000, expireTimestamp: 9000 }),
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
  groupRecord('ShareGroupMemberMetadata', { groupId: 's', memberId: 'm' }, { rackId: null, clientId: 'c', clientHost: '/10.0.0.1', subscribedTopicNames: ['a', 'b'] }),
  groupRecord('ShareGroupMemberMetadata', { groupId: 's', memberId: 'm' }, null),
  groupRecord('ShareGroupMetadata', { groupId: 's' }, { epoch: 4, metadataHash: 123456789 }),
  groupRecord('ShareGroupTargetAssignmentMetadata', { groupId: 's' }, { assignmentEpoch: 4, assignmentTimestamp: 77 }),
  groupRecord('ShareGroupTargetAssignmentMember', { groupId: 's', memberId: 'm' }, { topicPartitions: [{ topicId, partitions: [0, 1] }] }),
  groupRecord('ShareGroupCurrentMemberAssignment', { groupId: 's', memberId: 'm' }, { memberEpoch: 4, previousMemberEpoch: 3, state: 0, assignedPartitions: [{ topicId, partitions: [1] }] }),
  groupRecord('ShareGroupStatePartitionMetadata', { groupId: 's' }, {
    initializingTopics: [{ topicId, topicName: 't', partitions: [2] }],
    initializedTopics: [{ topicId, topicName: 't', partitions: [0, 1] }],
    deletingTopics: [{ topicId, topicName: 'old' }],
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
    const expectedVersion = record.type === 'GroupMetadata' ? 3 : record.type === 'OffsetCommit' ? (record.value.expireTimestamp === -1 ? 4 : 1) : 0;
    assert.equal(value!.readInt16BE(0), expectedVersion, record.type);
    assert.equal(decoded.valueVersion, expectedVersion);
  }
});

test('offset commits are laid out byte for byte as Kafka 4.4 writes them', () => {
  // Bytes printed by Kafka 4.4's GroupCoordinatorRecordSerde for newOffsetCommitRecord("g", "t", 3,
  // OffsetAndMetadata(42, leaderEpoch 5, "m", commit 1000, expire, topicId)).
  const hex = (record: GroupRecord) => {
    const { key, value } = encodeGroupRecord(record);
    return [key.toString('hex'), value?.toString('hex')];
  };
  assert.deepEqual(hex(samples[0]!), ['000100016700017400000003', '0004000000000000002a00000005026d00000000000003e800']);
  assert.deepEqual(hex(samples[1]!), ['000100016700017400000003', '0004000000000000002a00000005026d00000000000003e8010010000102030405060708090a0b0c0d0e0f']);
  assert.deepEqual(hex(samples[2]!), ['000100016700017400000003', '0001000000000000002a00016d00000000000003e80000000000002328']);
  const epoch = groupRecord('ConsumerGroupMetadata', { groupId: 'g' }, { epoch: 3, metadataHash: 123456789012 });
  assert.deepEqual(hex(epoch), ['0003000167', '0000000000030100080000001cbe991a14']);
});

test('a current member assignment carries its assignment epochs (KIP-1251) as Kafka 4.4 writes them', () => {
  // Bytes printed by Kafka 4.4's MessageUtil.toVersionPrefixedBytes for a ConsumerGroupCurrentMemberAssignmentValue
  // (epoch 3, previous 2, state 1) with partitions 0 and 2 assigned at epochs 1 and 3, partition 1 pending revocation at 2.
  const record = groupRecord('ConsumerGroupCurrentMemberAssignment', { groupId: 'g', memberId: 'm' }, {
    memberEpoch: 3,
    previousMemberEpoch: 2,
    state: 1,
    assignedPartitions: [{ topicId, partitions: [0, 2], assignmentEpochs: [1, 3] }],
    partitionsPendingRevocation: [{ topicId, partitions: [1], assignmentEpochs: [2] }],
  });
  assert.equal(
    encodeGroupRecord(record).value?.toString('hex'),
    '000000000003000000020102000102030405060708090a0b0c0d0e0f03000000000000000201000903000000010000000302' +
      '000102030405060708090a0b0c0d0e0f0200000001010005020000000200',
  );
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

test('unknown record types are skipped; malformed known ones are corruption; trailing bytes are ignored', () => {
  // StreamsGroupMetadata (17): a type Kafka 4.4 knows and Spool does not.
  const streamsKey = Buffer.from([0, 17, 0, 1, 0x67]);
  assert.deepEqual(decodeGroupRecord(streamsKey, null), { ok: false, unknownType: 17 });
  assert.throws(() => decodeGroupRecord(Buffer.from([0, 2, 0, 5, 0x67]), null), GroupRecordError);
  const { key } = encodeGroupRecord(samples[0]!);
  assert.throws(() => decodeGroupRecord(key, Buffer.from([0, 9, 1, 2])), GroupRecordError);
  assert.throws(() => decodeGroupRecord(key, Buffer.from([0, 3, 1])), GroupRecordError);
  // Bytes after the last known field are ignored, as Kafka's generated readers ignore them.
  const { value } = encodeGroupRecord(samples[0]!);
  const padded = decodeGroupRecord(Buffer.concat([key, Buffer.from([1, 2])]), Buffer.concat([value!, Buffer.from([3])]));
  assert.ok(padded.ok);
  assert.deepEqual(padded.record, samples[0]);
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

/**
 * Golden bytes from Kafka 4.4's GroupCoordinatorRecordSerde, serializing the
 * generated record classes with the same field values as `samples` (a JVM
 * run of org.apache.kafka.coordinator.group.generated.* at the versions
 * Kafka writes): key hex, value hex (null for a tombstone).
 */
const FROM_KAFKA: readonly [number, string, string | null][] = [
  [4, '0002000167', '00030008636f6e73756d657200000007000572616e676500026d3100000000000004d20000000100026d3100026931000163000a2f3132372e302e302e31000493e00000afc800000003010203000000020405'],
  [5, '0002000167', null],
  [7, '000500016700016d', '00000003723102630268030261026204782e2a0000753008756e69666f726d0100100100002710020672616e676502090000'],
  [8, '0006000167', '0000000000030100080000000000000037'],
  [9, '000700016700016d', '000002000102030405060708090a0b0c0d0e0f0300000000000000020000'],
  [10, '000800016700016d', '000000000003000000020102000102030405060708090a0b0c0d0e0f02000000000002000102030405060708090a0b0c0d0e0f02000000010000'],
  [11, '0010000167000465762e2a', '000002076576656e74730000000000000011000000000000006300'],
];

test('group metadata and consumer group records match the bytes Kafka 4.4 writes', () => {
  for (const [index, keyHex, valueHex] of FROM_KAFKA) {
    const record = samples[index]!;
    const { key, value } = encodeGroupRecord(record);
    assert.equal(key.toString('hex'), keyHex, record.type);
    assert.equal(value === null ? null : value.toString('hex'), valueHex, record.type);
    const decoded = decodeGroupRecord(Buffer.from(keyHex, 'hex'), valueHex === null ? null : Buffer.from(valueHex, 'hex'));
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.record, record, `Kafka's bytes decode to the same ${record.type}`);
  }
});
