/**
 * The `spool` tools end to end against a running broker (startBroker; see
 * test/client/broker-fixture.ts), run in-process through runCli: topics
 * create / describe / list / alter / delete with kafka-topics' output,
 * console produce from stdin lines (keys and headers) and console consume
 * back with keys, partitions and headers printed, get-offsets, configs (topics and groups)
 * describe / alter, and api-versions naming the broker.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { partitionForKey } from '../../src/client/partitioner.js';
import { startTestBroker, uniqueTopic, type TestBroker } from '../client/broker-fixture.js';
import { spool } from './cli-io.js';

let broker: TestBroker;
let server: string[];

before(async () => {
  broker = await startTestBroker();
  server = ['--bootstrap-server', broker.bootstrapServers];
});

after(async () => {
  await broker?.stop();
});

test('topics: create, describe, list, alter, delete', async () => {
  const topic = uniqueTopic('cli-topics');
  const created = await spool(['topics', ...server, '--create', '--topic', topic, '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=86400000']);
  assert.equal(created.code, 0, created.err);
  assert.equal(created.out, `Created topic ${topic}.\n`);

  const again = await spool(['topics', ...server, '--create', '--topic', topic, '--partitions', '3']);
  assert.equal(again.code, 1);
  assert.match(again.err, new RegExp(`Error while executing topic command : Topic '${topic}' already exists`));
  assert.equal((await spool(['topics', ...server, '--create', '--if-not-exists', '--topic', topic])).code, 0);

  const described = await spool(['topics', ...server, '--describe', '--topic', topic]);
  assert.equal(described.code, 0, described.err);
  const lines = described.out.trimEnd().split('\n');
  assert.match(lines[0]!, new RegExp(`^Topic: ${topic}\\tTopicId: \\S+\\tPartitionCount: 3\\tReplicationFactor: 1\\tConfigs: .*retention.ms=86400000`));
  assert.equal(lines.length, 4);
  lines.slice(1).forEach((line, partition) => {
    assert.match(line, new RegExp(`^\\tTopic: ${topic}\\tPartition: ${partition}\\tLeader: \\d+\\tReplicas: \\d+\\tIsr: \\d+`));
  });

  const listed = await spool(['topics', ...server, '--list']);
  assert.ok(listed.out.split('\n').includes(topic));

  assert.equal((await spool(['topics', ...server, '--alter', '--topic', topic, '--partitions', '5'])).code, 0);
  const altered = await spool(['topics', ...server, '--describe', '--topic', topic]);
  assert.match(altered.out, /PartitionCount: 5/);

  assert.equal((await spool(['topics', ...server, '--delete', '--topic', topic])).code, 0);
  const after = await spool(['topics', ...server, '--list']);
  assert.ok(!after.out.split('\n').includes(topic));
  const missing = await spool(['topics', ...server, '--describe', '--topic', topic]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /does not exist as expected/);
});

test('produce lines from stdin with keys and headers, consume them back, get their offsets', async () => {
  const topic = uniqueTopic('cli-produce');
  assert.equal((await spool(['topics', ...server, '--create', '--topic', topic, '--partitions', '3'])).code, 0);
  const lines = Array.from({ length: 9 }, (_, i) => `src:cli,n:${i}\tk${i % 3}\tv${i}`);
  const produced = await spool(['produce', ...server, '--topic', topic, '--property', 'parse.key=true', '--property', 'parse.headers=true', '--compression-codec', 'lz4', '--timeout', '0'], lines);
  assert.equal(produced.code, 0, produced.err);

  const consumed = await spool(['consume', ...server, '--topic', topic, '--from-beginning', '--max-messages', '9', '--property', 'print.key=true', '--property', 'print.partition=true', '--property', 'print.headers=true', '--property', 'print.timestamp=true']);
  assert.equal(consumed.code, 0, consumed.err);
  assert.match(consumed.err, /Processed a total of 9 messages/);
  const out = consumed.out.trimEnd().split('\n');
  assert.equal(out.length, 9);
  for (const line of out) {
    const match = /^CreateTime:\d+\tPartition:(\d)\tsrc:cli,n:(\d)\tk(\d)\tv(\d)$/.exec(line);
    assert.ok(match, line);
    const [, partition, n, key, value] = match;
    assert.equal(n, value);
    assert.equal(Number(key), Number(value) % 3);
    assert.equal(Number(partition), partitionForKey(Buffer.from(`k${key}`), 3));
  }
  for (let key = 0; key < 3; key++) {
    const values = out.filter((line) => line.includes(`\tk${key}\t`)).map((line) => Number(line.slice(line.lastIndexOf('v') + 1)));
    assert.deepEqual(values, [key, key + 3, key + 6], `k${key} in order`);
  }

  const partitionOfK1 = partitionForKey(Buffer.from('k1'), 3);
  const inThatPartition = Array.from({ length: 9 }, (_, i) => i).filter((i) => partitionForKey(Buffer.from(`k${i % 3}`), 3) === partitionOfK1);
  const single = await spool(['consume', ...server, '--topic', topic, '--partition', String(partitionOfK1), '--offset', '1', '--max-messages', '1']);
  assert.equal(single.out, `v${inThatPartition[1]}\n`);

  const offsets = await spool(['get-offsets', ...server, '--topic', topic]);
  assert.equal(offsets.code, 0, offsets.err);
  const total = offsets.out.trimEnd().split('\n').map((line) => {
    assert.match(line, new RegExp(`^${topic}:\\d:\\d+$`));
    return Number(line.split(':')[2]);
  }).reduce((a, b) => a + b, 0);
  assert.equal(total, 9);
  const earliest = await spool(['get-offsets', ...server, '--topic', topic, '--time', '-2']);
  assert.equal(earliest.out, `${topic}:0:0\n${topic}:1:0\n${topic}:2:0\n`);
});

test('topics --describe --replica-offsets: each replica\'s log start, log end, high watermark and lag', async () => {
  const topic = uniqueTopic('cli-replica-offsets');
  assert.equal((await spool(['topics', ...server, '--create', '--topic', topic, '--partitions', '1'])).code, 0);
  const produced = await spool(['produce', ...server, '--topic', topic], ['a', 'b', 'c']);
  assert.equal(produced.code, 0, produced.err);
  const described = await spool(['topics', ...server, '--describe', '--topic', topic, '--replica-offsets']);
  assert.equal(described.code, 0, described.err);
  const lines = described.out.trimEnd().split('\n');
  assert.equal(lines.length, 3);
  assert.match(lines[1]!, new RegExp(`^\\tTopic: ${topic}\\tPartition: 0\\tLeader: (\\d+)\\tReplicas: \\d+\\tIsr: \\d+\\tElr: \\tLastKnownElr: $`));
  assert.match(lines[2]!, /^\t\tReplica: \d+\tLogStartOffset: 0\tLogEndOffset: 3\tHighWatermark: 3\tLag: 0$/);
});

test('configs: alter a topic config and describe it as kafka-configs does', async () => {
  const topic = uniqueTopic('cli-configs');
  assert.equal((await spool(['topics', ...server, '--create', '--topic', topic])).code, 0);
  const altered = await spool(['configs', ...server, '--entity-type', 'topics', '--entity-name', topic, '--alter', '--add-config', 'retention.ms=123456,cleanup.policy=[compact,delete]']);
  assert.equal(altered.code, 0, altered.err);
  assert.equal(altered.out, `Completed updating config for topic ${topic}.\n`);
  const described = await spool(['configs', ...server, '--entity-type', 'topics', '--entity-name', topic, '--describe']);
  assert.match(described.out, new RegExp(`^Dynamic configs for topic ${topic} are:\\n`));
  assert.match(described.out, /\n {2}cleanup.policy=compact,delete sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete/);
  assert.match(described.out, /\n {2}retention.ms=123456 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention.ms=123456/);
  const removed = await spool(['configs', ...server, '--entity-type', 'topics', '--entity-name', topic, '--alter', '--delete-config', 'retention.ms']);
  assert.equal(removed.code, 0, removed.err);
  const after = await spool(['configs', ...server, '--entity-type', 'topics', '--entity-name', topic, '--describe']);
  assert.doesNotMatch(after.out, /retention.ms/);
});

test('configs: --entity-type groups sets share.auto.offset.reset and describes it as DYNAMIC_GROUP_CONFIG', async () => {
  const group = uniqueTopic('cli-share-group');
  const altered = await spool(['configs', ...server, '--entity-type', 'groups', '--entity-name', group, '--alter', '--add-config', 'share.auto.offset.reset=earliest']);
  assert.equal(altered.code, 0, altered.err);
  assert.equal(altered.out, `Completed updating config for group ${group}.\n`);
  const described = await spool(['configs', ...server, '--entity-type', 'groups', '--entity-name', group, '--describe']);
  assert.equal(described.out, `Dynamic configs for group ${group} are:\n  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest}\n`);
  const refused = await spool(['configs', ...server, '--entity-type', 'groups', '--entity-name', group, '--alter', '--add-config', 'share.auto.offset.reset=none']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.err, /The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'/);
});

test('api-versions lists the broker and what it serves', async () => {
  const result = await spool(['api-versions', ...server]);
  assert.equal(result.code, 0, result.err);
  assert.match(result.out, /^\S+:\d+ \(id: \d+ rack: \S+ isFenced: false\) -> \(\n\t/);
  assert.match(result.out, /\tApiVersions\(18\): \d+ to \d+ \[usable: \d+\]/);
  assert.match(result.out, /\tProduce\(0\): /);
});
