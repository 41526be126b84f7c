/**
 * A KIP-848 member whose subscription regex matches an internal topic is
 * assigned it: Kafka 4.4 resolves a regex against every topic of the
 * metadata image (TopicRegexResolver), internal ones included, so
 * `__consumer_off.*` gets the partitions of `__consumer_offsets`.
 * Regression: Spool left internal topics out of regex resolution.
 *
 * Over the wire against startTestBroker(), or SPOOL_E2E_BOOTSTRAP (passes
 * against Kafka 4.4, where the regex is resolved in the background, so the
 * assignment comes after a few heartbeats).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ConsumerGroupHeartbeat } from '../../src/protocol/schemas/68-consumer-group-heartbeat.js';
import { Admin } from '../../src/client/admin.js';
import { call, WireClient } from '../server/wire-client.js';
import { startTestBroker, uniqueTopic } from '../client/broker-fixture.js';

/** Heartbeats a client would send before giving up on seeing the assignment. */
const HEARTBEATS_MAX = 50;
const HEARTBEAT_EVERY_MS = 100;

test('a subscription regex matching __consumer_offsets is assigned its partitions, as in Kafka 4.4', async () => {
  const broker = await startTestBroker({ 'group.initial.rebalance.delay.ms': 0 });
  const admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    const group = uniqueTopic('regex-internal-group');
    // FindCoordinator makes sure __consumer_offsets exists.
    const found = await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: [group] });
    assert.equal(found.coordinators[0]!.errorCode, ErrorCode.NONE);
    const [offsetsTopic] = await admin.describeTopics(['__consumer_offsets']);
    const partitionCount = offsetsTopic!.partitions.length;
    const beat = (memberId: string, memberEpoch: number, owned: { topicId: string; partitions: number[] }[] | null) =>
      call(client, ConsumerGroupHeartbeat, 1, {
        groupId: group, memberId, memberEpoch, rebalanceTimeoutMs: 30_000,
        subscribedTopicRegex: memberEpoch === 0 ? '__consumer_off.*' : null, topicPartitions: owned,
      });
    let response = await beat('member-r', 0, []);
    let owned: { topicId: string; partitions: number[] }[] = [];
    for (let beats = 1; ; beats++) {
      assert.equal(response.errorCode, ErrorCode.NONE, JSON.stringify(response));
      if (response.assignment !== null) owned = response.assignment.topicPartitions.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] }));
      if (owned[0]?.partitions.length === partitionCount) break;
      assert.ok(beats < HEARTBEATS_MAX, `no full assignment after ${beats} heartbeats: ${JSON.stringify(response)}`);
      await delay(HEARTBEAT_EVERY_MS);
      response = await beat('member-r', response.memberEpoch, owned);
    }
    assert.equal(owned.length, 1, 'one topic: __consumer_offsets');
    assert.equal(owned[0]!.topicId, offsetsTopic!.topicId);
    assert.deepEqual(owned[0]!.partitions.sort((a, b) => a - b), Array.from({ length: partitionCount }, (_, p) => p));
    await beat('member-r', -1, null);
  } finally {
    client.close();
    await admin.close();
    await broker.stop();
  }
});
