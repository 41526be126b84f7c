/**
 * Dynamic group configs over the wire against startBroker(): an
 * IncrementalAlterConfigs on resource type GROUP (what `kafka-configs.sh
 * --entity-type groups --add-config share.auto.offset.reset=earliest` and
 * Admin.incrementalAlterConfigs send) is committed through the metadata log,
 * after which DescribeConfigs shows the value with source GROUP_CONFIG and
 * the node's effectiveGroupConfig returns it; server.properties' group.*
 * values show as STATIC_BROKER_CONFIG synonyms and set the bounds a value is
 * validated against (INVALID_CONFIG with Kafka's message); AlterConfigs
 * replaces a group's set; an empty group name is INVALID_REQUEST; a group's
 * heartbeat interval override is what ConsumerGroupHeartbeat and
 * ShareGroupHeartbeat answer its members.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigResourceType } from '../../src/metadata/delta.js';
import { ConfigSource } from '../../src/metadata/topic-config.js';
import { effectiveGroupConfig } from '../../src/metadata/group-config.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { DescribeConfigs } from '../../src/protocol/schemas/32-describe-configs.js';
import { AlterConfigs } from '../../src/protocol/schemas/33-alter-configs.js';
import { IncrementalAlterConfigs } from '../../src/protocol/schemas/44-incremental-alter-configs.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ConsumerGroupHeartbeat } from '../../src/protocol/schemas/68-consumer-group-heartbeat.js';
import { ShareGroupHeartbeat } from '../../src/protocol/schemas/76-share-group-heartbeat.js';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { Admin } from '../../src/client/admin.js';
import { WireClient, call } from './wire-client.js';

const GROUP = ConfigResourceType.GROUP;

async function withBroker(t: { after: (fn: () => Promise<void>) => void }, config: Record<string, string | number>): Promise<{ running: RunningBroker; client: WireClient }> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-group-configs-'));
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1, ...config }, logger: silentLogger });
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => {
    client.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { running, client };
}

async function setGroupConfigs(client: WireClient, group: string, configs: Record<string, string>) {
  const response = await call(client, IncrementalAlterConfigs, 1, {
    resources: [{ resourceType: GROUP, resourceName: group, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) }],
    validateOnly: false,
  });
  return response.responses[0]!;
}

async function describeGroup(client: WireClient, group: string, keys: string[] | null) {
  const response = await call(client, DescribeConfigs, 4, {
    resources: [{ resourceType: GROUP, resourceName: group, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  return response.results[0]!;
}

test('IncrementalAlterConfigs on a GROUP is described as GROUP_CONFIG and is the effective value', async (t) => {
  const { running, client } = await withBroker(t, { 'group.share.record.lock.duration.ms': 20000 });
  const altered = await setGroupConfigs(client, 'sg', { 'share.auto.offset.reset': 'earliest' });
  assert.equal(altered.errorCode, ErrorCode.NONE, altered.errorMessage ?? '');

  const described = await describeGroup(client, 'sg', ['share.auto.offset.reset', 'share.record.lock.duration.ms']);
  assert.equal(described.errorCode, ErrorCode.NONE);
  const byName = new Map(described.configs.map((c) => [c.name, c]));
  assert.deepEqual(
    [byName.get('share.auto.offset.reset')!.value, byName.get('share.auto.offset.reset')!.configSource],
    ['earliest', ConfigSource.GROUP_CONFIG],
  );
  const lock = byName.get('share.record.lock.duration.ms')!;
  assert.deepEqual([lock.value, lock.configSource, lock.readOnly], ['20000', ConfigSource.STATIC_BROKER_CONFIG, false]);
  assert.deepEqual(lock.synonyms.map((s) => [s.name, s.value, s.source]), [
    ['group.share.record.lock.duration.ms', '20000', ConfigSource.STATIC_BROKER_CONFIG],
    ['group.share.record.lock.duration.ms', '30000', ConfigSource.DEFAULT_CONFIG],
  ]);

  const effective = effectiveGroupConfig(running.broker.metadata.image, 'sg', running.broker.config);
  assert.deepEqual([effective.shareAutoOffsetReset, effective.shareRecordLockDurationMs], ['earliest', 20000]);
});

test('values are validated against the broker bounds set in server.properties, with Kafka messages', async (t) => {
  const { client } = await withBroker(t, { 'group.share.max.record.lock.duration.ms': 40000 });
  const refused = await setGroupConfigs(client, 'sg', { 'share.record.lock.duration.ms': '45000' });
  assert.deepEqual([refused.errorCode, refused.errorMessage], [ErrorCode.INVALID_CONFIG, 'share.record.lock.duration.ms must be in the range 15000 to 40000 inclusive.']);
  const unknown = await setGroupConfigs(client, 'sg', { 'session.timeout.ms': '45000' });
  assert.deepEqual([unknown.errorCode, unknown.errorMessage], [ErrorCode.INVALID_CONFIG, 'Unknown group config name: session.timeout.ms']);
  const described = await describeGroup(client, 'sg', ['share.record.lock.duration.ms']);
  assert.equal(described.configs[0]!.configSource, ConfigSource.DEFAULT_CONFIG);
});

test('AlterConfigs replaces a group set; the Admin client reads it back; an empty group name is INVALID_REQUEST', async (t) => {
  const { running, client } = await withBroker(t, {});
  assert.equal((await setGroupConfigs(client, 'g', { 'share.isolation.level': 'read_committed' })).errorCode, ErrorCode.NONE);
  const replaced = await call(client, AlterConfigs, 2, {
    resources: [{ resourceType: GROUP, resourceName: 'g', configs: [{ name: 'consumer.heartbeat.interval.ms', value: '6000' }] }],
    validateOnly: false,
  });
  assert.equal(replaced.responses[0]!.errorCode, ErrorCode.NONE, replaced.responses[0]!.errorMessage ?? '');

  const admin = new Admin({ bootstrapServers: running.bootstrapServers, clientId: 'group-configs-test' });
  t.after(() => admin.close());
  const [described] = await admin.describeConfigs([{ type: 'group', name: 'g' }], { includeSynonyms: true });
  const dynamic = described!.configs.filter((c) => c.source === 'DYNAMIC_GROUP_CONFIG').map((c) => [c.name, c.value]);
  assert.deepEqual(dynamic, [['consumer.heartbeat.interval.ms', '6000']]);

  const unnamed = await describeGroup(client, '', null);
  assert.deepEqual([unnamed.errorCode, unnamed.errorMessage], [ErrorCode.INVALID_REQUEST, 'Group name must not be empty']);
});

test("a group's consumer.heartbeat.interval.ms and share.heartbeat.interval.ms are what its members are told to heartbeat at", async (t) => {
  const { client } = await withBroker(t, { 'offsets.topic.replication.factor': 1, 'offsets.topic.num.partitions': 1 });
  assert.equal((await setGroupConfigs(client, 'cg', { 'consumer.heartbeat.interval.ms': '7000' })).errorCode, ErrorCode.NONE);
  assert.equal((await setGroupConfigs(client, 'sg', { 'share.heartbeat.interval.ms': '8000' })).errorCode, ErrorCode.NONE);
  await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['cg'] });

  const consumerBeat = (groupId: string) =>
    call(client, ConsumerGroupHeartbeat, 1, { groupId, memberId: `${groupId}-member`, memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['t'], topicPartitions: [] });
  const shareBeat = (groupId: string) => call(client, ShareGroupHeartbeat, 1, { groupId, memberId: `${groupId}-member`, memberEpoch: 0, subscribedTopicNames: ['t'] });
  const intervals = [await consumerBeat('cg'), await consumerBeat('other-cg'), await shareBeat('sg'), await shareBeat('other-sg')].map((beat) => {
    assert.equal(beat.errorCode, ErrorCode.NONE, beat.errorMessage ?? '');
    return beat.heartbeatIntervalMs;
  });
  assert.deepEqual(intervals, [7000, 5000, 8000, 5000], 'the group override, else the broker default (group.*.heartbeat.interval.ms)');
});
