/**
 * The admin client's group operations against a running broker
 * (startBroker, or SPOOL_E2E_BOOTSTRAP): with one live classic group and
 * one live consumer-protocol group,
 * - listGroups filters by state and type; listConsumerGroups shows both;
 * - describeConsumerGroups reports each with its protocol's fields (classic:
 *   assignor name, members' assignments decoded from SyncGroup bytes;
 *   consumer: server assignor, epochs, target assignments) and a missing
 *   group as GROUP_ID_NOT_FOUND;
 * - alterConsumerGroupOffsets is refused while members are active,
 *   deleteConsumerGroupOffsets answers GROUP_SUBSCRIBED_TO_TOPIC for a
 *   subscribed topic, deleteConsumerGroups answers NON_EMPTY_GROUP; once the
 *   members left, all three succeed and listConsumerGroupOffsets shows the
 *   altered offsets.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { KafkaError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { startTestBroker, uniqueTopic, type TestBroker } from './broker-fixture.js';
import { GROUP_TEST_BROKER_CONFIG } from './group-fixture.js';

let broker: TestBroker;
let admin: Admin;

before(async () => {
  broker = await startTestBroker(GROUP_TEST_BROKER_CONFIG);
  admin = new Admin({ bootstrapServers: broker.bootstrapServers });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

async function member(topic: string, groupId: string, groupProtocol: 'classic' | 'consumer'): Promise<Consumer> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, groupId, groupProtocol, clientId: `admin-test-${groupProtocol}`, heartbeatIntervalMs: 500, autoOffsetReset: 'earliest' });
  consumer.subscribe([topic]);
  for (let polls = 0; polls < 120 && consumer.assignment().length < 2; polls++) await consumer.poll(250);
  assert.equal(consumer.assignment().length, 2, `${groupProtocol} member has its partitions`);
  return consumer;
}

test('list, describe, alter, delete offsets and delete groups of both protocols', async () => {
  const topic = uniqueTopic('admin-groups');
  await admin.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1 }]);
  const classicGroup = uniqueTopic('admin-classic');
  const consumerGroup = uniqueTopic('admin-consumer');
  const members = [await member(topic, classicGroup, 'classic'), await member(topic, consumerGroup, 'consumer')];
  const tps = [0, 1].map((partition) => ({ topic, partition }));
  try {
    const stable = await admin.listGroups({ states: ['Stable'] });
    assert.ok(stable.some((g) => g.groupId === classicGroup) && stable.some((g) => g.groupId === consumerGroup));
    assert.ok((await admin.listGroups({ states: ['Empty'] })).every((g) => g.groupId !== classicGroup));
    const consumerType = await admin.listGroups({ types: ['consumer'] });
    assert.ok(consumerType.some((g) => g.groupId === consumerGroup) && consumerType.every((g) => g.groupId !== classicGroup));
    const listed = await admin.listConsumerGroups();
    assert.deepEqual(listed.filter((g) => g.groupId === classicGroup).map((g) => [g.type, g.protocolType, g.groupState]), [['classic', 'consumer', 'Stable']]);

    const [classic, modern] = await admin.describeConsumerGroups([classicGroup, consumerGroup]);
    assert.equal(classic!.type, 'classic');
    assert.equal(classic!.groupState, 'Stable');
    assert.equal(classic!.partitionAssignor, 'range');
    assert.deepEqual(classic!.members.map((m) => [m.memberId, m.clientId, m.assignment]), [[members[0]!.groupMetadata().memberId, 'admin-test-classic', tps]]);
    assert.match(classic!.members[0]!.host, /127\.0\.0\.1/);
    assert.equal(modern!.type, 'consumer');
    assert.equal(modern!.groupState, 'Stable');
    assert.equal(modern!.partitionAssignor, 'uniform');
    assert.ok(modern!.groupEpoch! > 0);
    assert.deepEqual(modern!.members.map((m) => [m.memberId, m.clientId, m.assignment, m.targetAssignment, m.memberEpoch]), [[members[1]!.groupMetadata().memberId, 'admin-test-consumer', tps, tps, modern!.groupEpoch]]);
    await assert.rejects(admin.describeConsumerGroups([uniqueTopic('no-such-group')]), (error) => error instanceof KafkaError && error.code === ErrorCode.GROUP_ID_NOT_FOUND);

    for (const group of [classicGroup, consumerGroup]) {
      await assert.rejects(admin.alterConsumerGroupOffsets(group, [{ topic, partition: 0, offset: 0 }]), (error) => error instanceof KafkaError && error.code === ErrorCode.UNKNOWN_MEMBER_ID, group);
      const deleted = await admin.deleteConsumerGroupOffsets(group, tps);
      assert.deepEqual([...deleted.partitions.values()], [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC], group);
    }
    const refused = await admin.deleteConsumerGroups([classicGroup, consumerGroup]);
    assert.deepEqual([...refused.values()].map((e) => e?.code), [ErrorCode.NON_EMPTY_GROUP, ErrorCode.NON_EMPTY_GROUP]);
  } finally {
    await Promise.all(members.map((m) => m.close()));
  }

  for (const group of [classicGroup, consumerGroup]) {
    await admin.alterConsumerGroupOffsets(group, [{ topic, partition: 0, offset: 0, metadata: 'reset' }, { topic, partition: 1, offset: 0 }]);
    const offsets = await admin.listConsumerGroupOffsets(group);
    assert.deepEqual(offsets.map((o) => [o.partition, o.offset, o.metadata]), [[0, 0, 'reset'], [1, 0, '']]);
    const deleted = await admin.deleteConsumerGroupOffsets(group, [{ topic, partition: 1 }]);
    assert.equal(deleted.errorCode, ErrorCode.NONE);
    assert.deepEqual((await admin.listConsumerGroupOffsets(group, { partitions: tps })).map((o) => o.partition), [0]);
  }
  const removed = await admin.deleteConsumerGroups([classicGroup, consumerGroup, uniqueTopic('no-such-group')]);
  assert.deepEqual([...removed.values()].map((e) => e?.code ?? ErrorCode.NONE), [ErrorCode.NONE, ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND]);
  assert.ok((await admin.listConsumerGroups()).every((g) => g.groupId !== classicGroup && g.groupId !== consumerGroup));
});
