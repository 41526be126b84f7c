/**
 * Proves the topic config table against Kafka 4.4's LogConfig: defaults,
 * validation messages (taken from Kafka's ConfigException texts), parsing
 * as ConfigDef parses, and the effective config of a topic with Kafka's
 * precedence (override > per-broker dynamic > cluster-default dynamic >
 * server.properties > default) and synonym order (ms > minutes > hours).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ConfigSource,
  TOPIC_CONFIGS,
  describeValue,
  resolveTopicConfig,
  resolveTopicConfigEntry,
  staticBrokerLayers,
  topicConfigDef,
  validateTopicConfigValue,
  validateTopicConfigs,
  type BrokerConfigLayers,
} from '../../src/metadata/topic-config.js';

const noBroker: BrokerConfigLayers = { perBroker: new Map(), clusterDefault: new Map(), static: new Map() };

test('defaults are Kafka 4.4\'s', () => {
  const config = resolveTopicConfig(new Map(), noBroker);
  assert.deepEqual(config.cleanupPolicy, ['delete']);
  assert.equal(config.compressionType, 'producer');
  assert.equal(config.segmentBytes, 1_073_741_824);
  assert.equal(config.segmentMs, 604_800_000);
  assert.equal(config.retentionMs, 604_800_000);
  assert.equal(config.retentionBytes, -1);
  assert.equal(config.indexIntervalBytes, 4096);
  assert.equal(config.segmentIndexBytes, 10_485_760);
  assert.equal(config.maxMessageBytes, 1_048_588);
  assert.equal(config.flushMessages, Infinity);
  assert.equal(config.flushMs, Infinity);
  assert.equal(config.messageTimestampType, 'CreateTime');
  assert.equal(config.messageTimestampAfterMaxMs, 3_600_000);
  assert.equal(config.messageTimestampBeforeMaxMs, Infinity);
  assert.equal(config.minCleanableDirtyRatio, 0.5);
  assert.equal(config.minInsyncReplicas, 1);
  assert.equal(config.deleteRetentionMs, 86_400_000);
  assert.equal(config.fileDeleteDelayMs, 60_000);
  assert.equal(config.uncleanLeaderElectionEnable, false);
  assert.equal(config.preallocate, false);
  // Kafka 4 removed these.
  assert.equal(topicConfigDef('message.downconversion.enable'), undefined);
  assert.equal(topicConfigDef('message.format.version'), undefined);
});

test('invalid values get Kafka\'s messages', () => {
  const cases: [string, string, string][] = [
    ['segment.bytes', '5', 'Invalid value 5 for configuration segment.bytes: Value must be at least 1048576'],
    ['segment.bytes', 'abc', 'Invalid value abc for configuration segment.bytes: Not a number of type INT'],
    ['segment.bytes', '99999999999', 'Invalid value 99999999999 for configuration segment.bytes: Not a number of type INT'],
    ['cleanup.policy', 'foo', 'Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete'],
    ['compression.type', 'brotli', 'Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer'],
    ['retention.ms', '-2', 'Invalid value -2 for configuration retention.ms: Value must be at least -1'],
    ['min.cleanable.dirty.ratio', '1.5', 'Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1'],
    ['preallocate', 'yes', 'Invalid value yes for configuration preallocate: Expected value to be either true or false'],
    ['message.timestamp.type', 'Foo', 'Invalid value Foo for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime'],
    ['compression.gzip.level', '0', 'Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1'],
    ['min.insync.replicas', '0', 'Invalid value 0 for configuration min.insync.replicas: Value must be at least 1'],
    ['segment.ms', '0', 'Invalid value 0 for configuration segment.ms: Value must be at least 1'],
    ['foo.bar', '1', 'Unknown topic config name: foo.bar'],
    [
      'leader.replication.throttled.replicas',
      'x',
      "Invalid value x for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
    ],
  ];
  for (const [name, value, message] of cases) {
    const result = validateTopicConfigValue(name, value);
    assert.ok('kind' in result, `${name}=${value} should be invalid`);
    assert.equal(result.kind, 'INVALID_CONFIG');
    assert.equal(result.message, message);
  }
});

test('values Kafka accepts are accepted and parsed as ConfigDef parses them', () => {
  const ok = (name: string, value: string) => {
    const result = validateTopicConfigValue(name, value);
    assert.ok('value' in result, `${name}=${value}`);
    return result.value;
  };
  assert.deepEqual(ok('cleanup.policy', 'compact, delete'), ['compact', 'delete']);
  assert.deepEqual(ok('cleanup.policy', ''), []);
  assert.equal(ok('retention.ms', ' 100 '), 100);
  assert.equal(ok('retention.bytes', '-5'), -5);
  assert.equal(ok('flush.ms', '9223372036854775807'), Infinity);
  assert.equal(ok('preallocate', 'TRUE'), true);
  assert.deepEqual(ok('leader.replication.throttled.replicas', '*'), ['*']);
  assert.deepEqual(ok('leader.replication.throttled.replicas', '0:1,1:2'), ['0:1', '1:2']);
});

test('the whole set is checked: nulls, cross-config rules, tiered storage', () => {
  assert.equal(validateTopicConfigs(new Map([['retention.ms', '1']])), null);
  assert.deepEqual(validateTopicConfigs(new Map([['retention.ms', null], ['segment.ms', null]])), {
    kind: 'INVALID_CONFIG',
    message: 'Null value not supported for topic configs: retention.ms,segment.ms',
  });
  assert.equal(
    validateTopicConfigs(new Map([['min.compaction.lag.ms', '10'], ['max.compaction.lag.ms', '5']]))?.message,
    'conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)',
  );
  assert.equal(
    validateTopicConfigs(new Map([['remote.storage.enable', 'true']]))?.message,
    'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.',
  );
});

test('an override beats every broker layer, which beat Kafka\'s default, in synonym order', () => {
  const layers: BrokerConfigLayers = {
    perBroker: new Map([['log.retention.minutes', '3']]),
    clusterDefault: new Map([['log.retention.ms', '5000']]),
    static: new Map([['log.retention.hours', '2'], ['log.segment.bytes', '2097152'], ['log.cleanup.policy', 'compact']]),
  };
  // log.retention.ms (dynamic default) outranks log.retention.minutes (per broker): synonyms go in order.
  assert.equal(resolveTopicConfig(new Map(), layers).retentionMs, 5000);
  const entry = resolveTopicConfigEntry(topicConfigDef('retention.ms')!, new Map(), layers);
  assert.equal(entry.source, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  assert.deepEqual(entry.synonyms, [
    { name: 'log.retention.ms', value: '5000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG },
    { name: 'log.retention.minutes', value: '3', source: ConfigSource.DYNAMIC_BROKER_CONFIG },
    { name: 'log.retention.hours', value: '2', source: ConfigSource.STATIC_BROKER_CONFIG },
    { name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG },
  ]);
  const withoutMs = { ...layers, clusterDefault: new Map<string, string>() };
  assert.equal(resolveTopicConfig(new Map(), withoutMs).retentionMs, 3 * 60_000);
  assert.equal(resolveTopicConfig(new Map(), { ...withoutMs, perBroker: new Map() }).retentionMs, 2 * 3_600_000);
  const config = resolveTopicConfig(new Map([['retention.ms', '42'], ['segment.bytes', '1048576']]), layers);
  assert.equal(config.retentionMs, 42);
  assert.equal(config.segmentBytes, 1_048_576);
  assert.deepEqual(config.cleanupPolicy, ['compact']);
  const fromFile = resolveTopicConfigEntry(topicConfigDef('segment.bytes')!, new Map(), staticBrokerLayers({ explicit: new Map([['log.segment.bytes', '2097152']]) }));
  assert.equal(fromFile.value, 2_097_152);
  assert.equal(fromFile.source, ConfigSource.STATIC_BROKER_CONFIG);
});

test('internal.segment.bytes (for tests) overrides segment.bytes and is never described', () => {
  assert.equal(resolveTopicConfig(new Map([['internal.segment.bytes', '1024']]), noBroker).segmentBytes, 1024);
  assert.equal(TOPIC_CONFIGS.find((def) => def.name === 'internal.segment.bytes')?.internal, true);
});

test('values are described as Kafka describes them', () => {
  assert.equal(describeValue('double', 1), '1.0');
  assert.equal(describeValue('double', 0.5), '0.5');
  assert.equal(describeValue('long', Infinity), '9223372036854775807');
  assert.equal(describeValue('list', ['compact', 'delete']), 'compact,delete');
  assert.equal(describeValue('boolean', false), 'false');
});
