/**
 * Proves the group-config reader the coordinators use: effectiveGroupConfig
 * gives Kafka 4.4's defaults for a group with no overrides (broker group.*
 * configs for those with a synonym, GroupConfig's own for
 * share.auto.offset.reset and the like), the broker's server.properties
 * values where set, a group's override over both, and an override outside
 * bounds the broker narrowed later clamped to the nearest bound, and
 * effectiveGroupTimeouts (what each heartbeat asks) agrees with it;
 * parseShareAutoOffsetReset reads Kafka's strategies and ISO-8601 durations;
 * describeGroupConfigs gives the sources and synonyms Kafka's ConfigHelper
 * gives (GROUP_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeGroupConfigs, effectiveGroupConfig, effectiveGroupTimeouts, parseShareAutoOffsetReset } from '../../src/metadata/group-config.js';
import { ConfigSource } from '../../src/metadata/topic-config.js';

const NO_BROKER_CONFIG = { explicit: new Map<string, string>() };
const imageWith = (groups: Record<string, Record<string, string>>) => ({
  groupConfigs: new Map(Object.entries(groups).map(([group, configs]) => [group, new Map(Object.entries(configs))])),
});

test('a group without overrides runs with Kafka 4.4 defaults', () => {
  const config = effectiveGroupConfig(imageWith({}), 'g', NO_BROKER_CONFIG);
  assert.deepEqual(
    [config.consumerSessionTimeoutMs, config.consumerHeartbeatIntervalMs, config.shareSessionTimeoutMs, config.shareHeartbeatIntervalMs],
    [45000, 5000, 45000, 5000],
  );
  assert.deepEqual(
    [config.shareRecordLockDurationMs, config.shareDeliveryCountLimit, config.sharePartitionMaxRecordLocks, config.shareAutoOffsetReset, config.shareIsolationLevel],
    [30000, 5, 2000, 'latest', 'read_uncommitted'],
  );
  assert.deepEqual([config.streamsAssignorName, config.streamsRackAwareAssignmentTags, config.streamsAcceptableRecoveryLag], ['sticky', [], 10000]);
  assert.deepEqual([config.errorsDeadletterqueueTopicName, config.errorsDeadletterqueueCopyRecordEnable, config.shareRenewAcknowledgeEnable], ['', false, true]);
});

test('server.properties values stand in for unset group configs; a group override wins', () => {
  const broker = { explicit: new Map([['group.share.record.lock.duration.ms', '20000'], ['group.share.delivery.count.limit', '4']]) };
  const image = imageWith({ g: { 'share.delivery.count.limit': '7', 'share.auto.offset.reset': 'earliest', 'share.isolation.level': 'read_committed' } });
  const config = effectiveGroupConfig(image, 'g', broker);
  assert.deepEqual([config.shareRecordLockDurationMs, config.shareDeliveryCountLimit, config.shareAutoOffsetReset, config.shareIsolationLevel], [20000, 7, 'earliest', 'read_committed']);
  const other = effectiveGroupConfig(image, 'other', broker);
  assert.deepEqual([other.shareDeliveryCountLimit, other.shareAutoOffsetReset], [4, 'latest']);
});

test('an override outside bounds the broker narrowed since runs at the nearest bound', () => {
  const broker = { explicit: new Map([['group.share.max.record.lock.duration.ms', '40000'], ['group.consumer.min.session.timeout.ms', '50000']]) };
  const config = effectiveGroupConfig(imageWith({ g: { 'share.record.lock.duration.ms': '55000', 'consumer.session.timeout.ms': '46000' } }), 'g', broker);
  assert.deepEqual([config.shareRecordLockDurationMs, config.consumerSessionTimeoutMs], [40000, 50000]);
});

test('the heartbeat timeouts lookup gives what the full effective config gives', () => {
  const broker = { explicit: new Map([['group.consumer.min.session.timeout.ms', '50000'], ['group.share.heartbeat.interval.ms', '6000']]) };
  const image = imageWith({ g: { 'consumer.session.timeout.ms': '46000', 'consumer.heartbeat.interval.ms': '7000', 'share.session.timeout.ms': '48000' } });
  for (const groupId of ['g', 'other']) {
    const config = effectiveGroupConfig(image, groupId, broker);
    assert.deepEqual(effectiveGroupTimeouts(image, groupId, 'consumer', broker), { sessionTimeoutMs: config.consumerSessionTimeoutMs, heartbeatIntervalMs: config.consumerHeartbeatIntervalMs });
    assert.deepEqual(effectiveGroupTimeouts(image, groupId, 'share', broker), { sessionTimeoutMs: config.shareSessionTimeoutMs, heartbeatIntervalMs: config.shareHeartbeatIntervalMs });
  }
  assert.deepEqual(effectiveGroupTimeouts(image, 'g', 'consumer', broker), { sessionTimeoutMs: 50000, heartbeatIntervalMs: 7000 });
  assert.deepEqual(effectiveGroupTimeouts(image, 'other', 'share', broker), { sessionTimeoutMs: 45000, heartbeatIntervalMs: 6000 });
});

test('share.auto.offset.reset: earliest, latest and non-negative ISO-8601 durations; anything else is refused', () => {
  assert.deepEqual(parseShareAutoOffsetReset('earliest'), { type: 'earliest' });
  assert.deepEqual(parseShareAutoOffsetReset('latest'), { type: 'latest' });
  assert.deepEqual(parseShareAutoOffsetReset('by_duration:PT1H'), { type: 'by_duration', durationMs: 3_600_000 });
  assert.deepEqual(parseShareAutoOffsetReset('by_duration:P1DT2H3M4.5S'), { type: 'by_duration', durationMs: 93_784_500 });
  assert.deepEqual(parseShareAutoOffsetReset('by_duration:pt30s'), { type: 'by_duration', durationMs: 30_000 });
  for (const refused of ['none', 'EARLIEST', 'by_duration', 'by_duration:', 'by_duration:-PT1H', 'by_duration:P', 'by_duration:PT', 'by_duration:1H']) {
    assert.equal(parseShareAutoOffsetReset(refused), null, refused);
  }
});

test('DescribeConfigs entries: GROUP_CONFIG for overrides, else the broker synonym, else DEFAULT_CONFIG', () => {
  const broker = { explicit: new Map([['group.share.heartbeat.interval.ms', '6000']]) };
  const overrides = new Map([['share.auto.offset.reset', 'earliest'], ['share.session.timeout.ms', '50000']]);
  const described = new Map(describeGroupConfigs(overrides, broker, { keys: null, includeSynonyms: true }).map((c) => [c.name, c]));
  const entry = (name: string) => {
    const c = described.get(name)!;
    return { value: c.value, source: c.configSource, synonyms: c.synonyms };
  };
  assert.deepEqual(entry('share.auto.offset.reset'), {
    value: 'earliest',
    source: ConfigSource.GROUP_CONFIG,
    synonyms: [{ name: 'share.auto.offset.reset', value: 'earliest', source: ConfigSource.GROUP_CONFIG }],
  });
  assert.deepEqual(entry('share.session.timeout.ms'), {
    value: '50000',
    source: ConfigSource.GROUP_CONFIG,
    synonyms: [
      { name: 'share.session.timeout.ms', value: '50000', source: ConfigSource.GROUP_CONFIG },
      { name: 'group.share.session.timeout.ms', value: '45000', source: ConfigSource.DEFAULT_CONFIG },
    ],
  });
  assert.deepEqual(entry('share.heartbeat.interval.ms'), {
    value: '6000',
    source: ConfigSource.STATIC_BROKER_CONFIG,
    synonyms: [
      { name: 'group.share.heartbeat.interval.ms', value: '6000', source: ConfigSource.STATIC_BROKER_CONFIG },
      { name: 'group.share.heartbeat.interval.ms', value: '5000', source: ConfigSource.DEFAULT_CONFIG },
    ],
  });
  assert.deepEqual(entry('share.isolation.level'), { value: 'read_uncommitted', source: ConfigSource.DEFAULT_CONFIG, synonyms: [] });
  // Internal configs (defineInternal) appear only where set.
  assert.equal(described.has('consumer.assignor.offload.enable'), false);
  assert.equal(described.has('streams.assignor.name'), true);
});

test('DescribeConfigs keys pick entries; without includeSynonyms none are listed', () => {
  const described = describeGroupConfigs(new Map(), NO_BROKER_CONFIG, { keys: ['share.record.lock.duration.ms', 'no.such'], includeSynonyms: false });
  assert.deepEqual(
    described.map((c) => [c.name, c.value, c.configSource, c.synonyms.length]),
    [['share.record.lock.duration.ms', '30000', ConfigSource.DEFAULT_CONFIG, 0]],
  );
});
