/**
 * Proves the CLI reads arguments and formats output as Kafka's tools do,
 * without a broker: --help on every command, actions checked before any
 * connection, the console producer's line parsing (key, headers, null
 * marker, missing separators), the console consumer's formatter and flag
 * rules, get-offsets' --time words, kafka-configs' bracketed lists,
 * kafka-topics' --replica-assignment and --describe layout, and
 * kafka-broker-api-versions' entry text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spool } from './cli-io.js';
import { lineReaderSettings, parseLine } from '../../src/cli/produce.js';
import { consumePlan, formatRecord, formatterSettings } from '../../src/cli/consume.js';
import { parseOffsetTime } from '../../src/cli/get-offsets.js';
import { parseKeyValues, splitConfigList } from '../../src/cli/io.js';
import { formatTopicDescription, parseReplicaAssignment } from '../../src/cli/topics.js';
import { formatApiVersion } from '../../src/cli/api-versions.js';
import { formatConfigEntry } from '../../src/cli/configs.js';
import { applyProducerProperties } from '../../src/cli/client-config.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import type { ConsumerRecord } from '../../src/client/consumer.js';

const COMMANDS = ['start', 'topics', 'produce', 'consume', 'get-offsets', 'configs', 'api-versions', 'dump-log'];

test('--help works on the program and on every command, exiting 0', async () => {
  const top = await spool(['--help']);
  assert.equal(top.code, 0);
  for (const command of COMMANDS) assert.match(top.out, new RegExp(`\\b${command}\\b`));
  for (const command of COMMANDS) {
    const result = await spool([command, '--help']);
    assert.equal(result.code, 0, command);
    assert.match(result.out, new RegExp(`Usage: spool ${command}`), command);
  }
});

test('an unknown option is a usage error with a non-zero exit code', async () => {
  const result = await spool(['topics', '--no-such-flag']);
  assert.notEqual(result.code, 0);
  assert.match(result.err, /unknown option '--no-such-flag'/);
});

test('topics needs exactly one action, checked before connecting', async () => {
  const none = await spool(['topics', '--bootstrap-server', '127.0.0.1:1']);
  assert.equal(none.code, 1);
  assert.match(none.err, /exactly one action/);
  const two = await spool(['topics', '--list', '--describe', '--bootstrap-server', '127.0.0.1:1']);
  assert.equal(two.code, 1);
});

test('console producer lines: plain, keyed, with headers, with the null marker', () => {
  const plain = lineReaderSettings(new Map());
  assert.deepEqual(parseLine('hello:world', 1, plain), { value: 'hello:world' });
  const keyed = lineReaderSettings(parseKeyValues(['parse.key=true', 'key.separator=:']));
  assert.deepEqual(parseLine('k:v:w', 1, keyed), { key: 'k', value: 'v:w' });
  assert.throws(() => parseLine('nokey', 3, keyed), /No key separator found on line number 3: 'nokey'/);
  const lenient = lineReaderSettings(parseKeyValues(['parse.key=true', 'key.separator=:', 'ignore.error=true']));
  assert.deepEqual(parseLine('nokey', 1, lenient), { value: 'nokey' });
  const full = lineReaderSettings(parseKeyValues(['parse.key=true', 'parse.headers=true', 'null.marker=NULL']));
  assert.deepEqual(parseLine('h1:a,h2\tNULL\tv', 1, full), {
    headers: [{ key: 'h1', value: 'a' }, { key: 'h2', value: null }],
    key: null,
    value: 'v',
  });
});

function record(overrides: Partial<ConsumerRecord> = {}): ConsumerRecord {
  return {
    topic: 't', partition: 2, offset: 7, timestamp: 1700000000123, timestampType: 'CreateTime',
    key: Buffer.from('k'), value: Buffer.from('v'), headers: [], leaderEpoch: 0, ...overrides,
  };
}

test('console consumer formats records as Kafka\'s DefaultMessageFormatter', () => {
  assert.equal(formatRecord(record(), formatterSettings(new Map())), 'v\n');
  const all = formatterSettings(parseKeyValues(['print.key=true', 'print.timestamp=true', 'print.partition=true', 'print.offset=true', 'print.headers=true']));
  assert.equal(formatRecord(record(), all), 'CreateTime:1700000000123\tPartition:2\tOffset:7\tNO_HEADERS\tk\tv\n');
  const withHeaders = record({ key: null, headers: [{ key: 'a', value: Buffer.from('1') }, { key: 'b', value: null }] });
  assert.equal(formatRecord(withHeaders, formatterSettings(parseKeyValues(['print.key=true', 'print.headers=true']))), 'a:1,b:null\tnull\tv\n');
});

test('console consumer flags follow Kafka\'s rules for --offset, --partition and --from-beginning', () => {
  const base = { bootstrapServer: 'x:1', offset: 'latest', property: [], formatterProperty: [], consumerProperty: [], isolationLevel: 'read_uncommitted' };
  assert.equal(consumePlan({ ...base, topic: 't', fromBeginning: true }).start, 'earliest');
  assert.equal(consumePlan({ ...base, topic: 't' }).start, 'latest');
  assert.equal(consumePlan({ ...base, topic: 't', partition: '1', offset: '42' }).start, 42);
  assert.throws(() => consumePlan({ ...base, topic: 't', offset: '42' }), /partition is required/);
  assert.throws(() => consumePlan({ ...base, topic: 't', partition: '0', offset: '4', fromBeginning: true }), /cannot be specified together/);
  assert.throws(() => consumePlan({ ...base }), /--topic is required/);
  assert.throws(() => consumePlan({ ...base, topic: 't', partition: '0', offset: 'soon' }), /offset value 'soon' is incorrect/);
});

test('get-offsets --time accepts Kafka\'s numbers and words', () => {
  assert.equal(parseOffsetTime('-1'), 'latest');
  assert.equal(parseOffsetTime('latest'), 'latest');
  assert.equal(parseOffsetTime('-2'), 'earliest');
  assert.equal(parseOffsetTime('-3'), 'max-timestamp');
  assert.equal(parseOffsetTime('1700000000000'), 1700000000000);
  assert.throws(() => parseOffsetTime('yesterday'), /Malformed time argument/);
});

test('kafka-configs lists split on commas outside square brackets', () => {
  assert.deepEqual(splitConfigList('a=1,b=[x,y],c=3'), ['a=1', 'b=x,y', 'c=3']);
  assert.deepEqual([...parseKeyValues(['retention.ms=5,cleanup.policy=[compact,delete]'], { splitCommas: true })], [['retention.ms', '5'], ['cleanup.policy', 'compact,delete']]);
  assert.throws(() => parseKeyValues(['novalue']), /expected key=value/);
});

test('a config entry prints as kafka-configs prints it', () => {
  const line = formatConfigEntry({ name: 'retention.ms', value: '1000', source: 'DYNAMIC_TOPIC_CONFIG', readOnly: false, isSensitive: false, synonyms: [{ name: 'retention.ms', value: '1000', source: 'DYNAMIC_TOPIC_CONFIG' }, { name: 'log.retention.hours', value: '168', source: 'DEFAULT_CONFIG' }] });
  assert.equal(line, '  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, DEFAULT_CONFIG:log.retention.hours=168}\n');
});

test('kafka-topics --replica-assignment and --describe layout', () => {
  assert.deepEqual(parseReplicaAssignment('1:2,2:3'), { 0: [1, 2], 1: [2, 3] });
  const text = formatTopicDescription({
    name: 'demo', topicId: 'OBn2eIXIRD6vyslnF_QEXA', isInternal: false,
    partitions: [
      { partition: 0, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [], elr: [], lastKnownElr: [] },
      { partition: 1, leader: -1, leaderEpoch: 0, replicas: [1, 2, 3], isr: [], offlineReplicas: [1], elr: [2, 3], lastKnownElr: [1] },
      { partition: 2, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [], elr: null, lastKnownElr: null },
    ],
  }, ['retention.ms=1000']);
  assert.equal(text,
    'Topic: demo\tTopicId: OBn2eIXIRD6vyslnF_QEXA\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=1000\n' +
    '\tTopic: demo\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: \n' +
    '\tTopic: demo\tPartition: 1\tLeader: none\tReplicas: 1,2,3\tIsr: \tElr: 2,3\tLastKnownElr: 1\n' +
    '\tTopic: demo\tPartition: 2\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: N/A\tLastKnownElr: N/A\n');
});

test('api-versions entries read as kafka-broker-api-versions prints them', () => {
  assert.equal(formatApiVersion(Produce, { min: 0, max: 13 }), 'Produce(0): 0 to 13 [usable: 13]');
  assert.equal(formatApiVersion(Produce, { min: 3, max: 9 }), 'Produce(0): 3 to 9 [usable: 9]');
  assert.equal(formatApiVersion(ApiVersions, { min: 2, max: 2 }), 'ApiVersions(18): 2 [usable: 2]');
  assert.equal(formatApiVersion(Produce, { min: 0, max: 2 }), 'Produce(0): 0 to 2 [unusable: node too old]');
  assert.equal(formatApiVersion(Produce, undefined), 'Produce(0): UNSUPPORTED');
});

test('--producer-property maps Kafka config names and refuses unknown ones', () => {
  const options = applyProducerProperties({ bootstrapServers: 'x:1' }, parseKeyValues(['acks=1', 'linger.ms=0', 'compression.type=zstd', 'enable.idempotence=false']));
  assert.equal(options.acks, 1);
  assert.equal(options.lingerMs, 0);
  assert.equal(options.compression, 'zstd');
  assert.equal(options.idempotence, false);
  assert.throws(() => applyProducerProperties({ bootstrapServers: 'x:1' }, parseKeyValues(['lingr.ms=0'])), /Unknown producer property lingr.ms/);
  assert.throws(() => applyProducerProperties({ bootstrapServers: 'x:1' }, parseKeyValues(['compression.type=brotli'])), /compression.type/);
});
