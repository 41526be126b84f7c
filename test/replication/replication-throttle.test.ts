/**
 * Replication throttles (KIP-73) on three replica managers in one process
 * (replication-harness.ts), configured as Kafka configures them: the topic
 * configs leader/follower.replication.throttled.replicas and the dynamic
 * broker configs leader/follower.replication.throttled.rate, reaching the
 * brokers as metadata records.
 * - Leader side: once the bytes sent for a throttled partition exceed the
 *   rate, an out-of-sync follower's fetch returns no records, while an
 *   in-sync follower's still does (Kafka never throttles the ISR).
 * - Follower side: a restarted follower behind the leader, throttled,
 *   leaves its partition out of fetches while over the rate, and still
 *   catches up byte for byte.
 * - The configs are accepted and validated as Kafka's controller
 *   validates them, and DescribeConfigs shows a rate only where set.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConfig } from '../../src/common/config.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ConfigResourceType } from '../../src/metadata/delta.js';
import { KafkaConfigSchema, describeBrokerConfigs } from '../../src/metadata/config-schema.js';
import { validateTopicConfigs } from '../../src/metadata/topic-config.js';
import { metadataRecord } from '../../src/metadata/records.js';
import type { ReplicaManager } from '../../src/replication/replica-manager.js';
import { ReplicationHarness, TOPIC, produceTo, tp, until } from './replication-harness.js';

function topicConfig(name: string, value: string) {
  return metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.TOPIC, resourceName: TOPIC, name, value });
}

function brokerConfig(broker: string, name: string, value: string) {
  return metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.BROKER, resourceName: broker, name, value });
}

/** A follower's fetch from offset 0, as the Fetch handler passes it. */
async function followerFetch(leader: ReplicaManager, replicaId: number) {
  const params = { replicaId, replicaEpoch: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolation: 'logEnd' as const, fetchOnlyFromLeader: true };
  const info = { topicPartition: tp, fetchOffset: 0, logStartOffset: 0, maxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 };
  return (await leader.fetchMessages(params, [info]))[0]!;
}

function partitionOn(harness: ReplicationHarness, id: number) {
  return harness.managers.get(id)!.hostedPartitions()[0]!;
}

test('the leader sends an out-of-sync follower nothing while over leader.replication.throttled.rate; in-sync followers are not throttled', async (t) => {
  const harness = await ReplicationHarness.start({ brokers: [1, 2, 3], replicas: [1, 2, 3] });
  t.after(() => harness.close());
  await harness.stopBroker(3);
  await harness.fence(3);
  const leader = harness.managers.get(1)!;
  for (let i = 0; i < 3; i++) assert.equal((await produceTo(leader, `v${i}`, -1)).errorCode, ErrorCode.NONE);
  // 1 byte/s: any batch sent for the throttled partition puts the leader over it for the next windows.
  await harness.publish([topicConfig('leader.replication.throttled.replicas', '0:1'), brokerConfig('', 'leader.replication.throttled.rate', '1')]);
  assert.equal(leader.leaderQuota.upperBound, 1);
  assert.equal(leader.leaderQuota.isThrottled(tp), true);

  const first = await followerFetch(leader, 3);
  assert.equal(first.errorCode, ErrorCode.NONE);
  assert.ok(first.records.length > 0, 'under the rate: the follower gets the records');
  assert.equal(leader.leaderQuota.isQuotaExceeded(), true, 'the bytes sent were recorded');
  const throttled = await followerFetch(leader, 3);
  assert.equal(throttled.errorCode, ErrorCode.NONE);
  assert.equal(throttled.records.length, 0, 'over the rate: nothing for the out-of-sync follower');
  assert.equal(throttled.highWatermark, 3, 'the offsets still come');
  assert.deepEqual((await followerFetch(leader, 2)).records, first.records, 'the in-sync follower 2 is not throttled');

  // Lifting the list (an empty value) lifts the throttle.
  await harness.publish([topicConfig('leader.replication.throttled.replicas', '')]);
  assert.deepEqual((await followerFetch(leader, 3)).records, first.records);
});

test('a follower throttled by follower.replication.throttled.rate skips fetches while over it and still catches up', async (t) => {
  const harness = await ReplicationHarness.start({ brokers: [1, 2, 3], replicas: [1, 2, 3], brokerConfig: { 'replica.fetch.max.bytes': 65_536 } });
  t.after(() => harness.close());
  await harness.stopBroker(3);
  // Out of the ISR, so the high watermark runs ahead of it: a replica at the high watermark counts as caught up, never throttled.
  await harness.fence(3);
  const leader = harness.managers.get(1)!;
  const value = 'x'.repeat(4000);
  for (let i = 0; i < 40; i++) assert.equal((await produceTo(leader, `${i}${value}`, 1)).errorCode, ErrorCode.NONE);
  // About 160 KB to copy at 40 KB/s; the first fetch alone (64 KB, measured over at least one 1 s window) exceeds the rate.
  await harness.publish([topicConfig('follower.replication.throttled.replicas', '0:3'), brokerConfig('3', 'follower.replication.throttled.rate', '40000')]);
  const follower = await harness.startBroker(3);
  await harness.unfence(3);
  assert.equal(follower.followerQuota.upperBound, 40_000);
  assert.equal(harness.managers.get(2)!.followerQuota.upperBound, Infinity, 'the rate was set for broker 3 only');
  const leaderEnd = partitionOn(harness, 1).log.logEndOffset;
  await until('the throttled follower catches up', () => partitionOn(harness, 3).log.logEndOffset === leaderEnd, 120_000);
  assert.ok(follower.replicaFetcherManager.stats.throttledPartitionSkips > 0, 'the throttle held the partition back at times');
  const read = async (id: number) => (await partitionOn(harness, id).log.read(0, { maxBytes: 1 << 24 })).records;
  assert.deepEqual(await read(3), await read(1));
});

test('the throttle configs are validated as Kafka validates them; DescribeConfigs shows a rate only where it is set', () => {
  const schema = new KafkaConfigSchema(BrokerConfig.fromObject({}), 1);
  const broker = (name: string, value: string) => schema.validate({ type: ConfigResourceType.BROKER, name: '' }, new Map([[name, value]]));
  assert.equal(broker('leader.replication.throttled.rate', '1048576'), null);
  assert.equal(broker('follower.replication.throttled.rate', '9223372036854775807'), null);
  assert.deepEqual(broker('leader.replication.throttled.rate', '-1'), {
    errorCode: ErrorCode.INVALID_CONFIG,
    message: 'Invalid value -1 for configuration leader.replication.throttled.rate: Value must be at least 0',
  });
  assert.deepEqual(broker('follower.replication.throttled.rate', 'fast'), {
    errorCode: ErrorCode.INVALID_CONFIG,
    message: 'Invalid value fast for configuration follower.replication.throttled.rate: Not a number of type LONG',
  });
  assert.equal(broker('replication.quota.window.num', '5')?.errorCode, ErrorCode.INVALID_CONFIG, 'a static config');

  assert.equal(validateTopicConfigs(new Map([['leader.replication.throttled.replicas', '0:1, 1:2']])), null);
  assert.equal(validateTopicConfigs(new Map([['follower.replication.throttled.replicas', '*']])), null);
  assert.equal(validateTopicConfigs(new Map([['follower.replication.throttled.replicas', '0:1,*']]))?.kind, 'INVALID_CONFIG');

  const layers = { perBroker: new Map([['leader.replication.throttled.rate', '500']]), clusterDefault: new Map(), static: new Map([['follower.replication.throttled.rate', '7']]) };
  const described = describeBrokerConfigs(layers, { keys: null, includeSynonyms: false, clusterDefault: false });
  const names = new Set(described.map((entry) => entry.name));
  assert.equal(described.find((entry) => entry.name === 'leader.replication.throttled.rate')?.value, '500');
  assert.equal(names.has('follower.replication.throttled.rate'), false, 'set in server.properties only: not a config Kafka reads there');
  assert.equal(described.find((entry) => entry.name === 'replication.quota.window.num')?.value, '11');
});
