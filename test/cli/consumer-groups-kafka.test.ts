/**
 * `spool consumer-groups` agrees with Kafka 4.4's own kafka-consumer-groups.sh
 * (ConsumerGroupCommand, run from the jars test/interop/kafka/setup.sh
 * resolves) on the same groups of the same broker (startBroker, or
 * SPOOL_E2E_BOOTSTRAP): for a live classic group, a live consumer-protocol
 * group, the same groups once their members left, and a missing group, both
 * tools print the same stdout, byte for byte, and exit with the same code,
 * for --list (with --state / --type), --describe (offsets, --members,
 * --state, --verbose), every --reset-offsets scenario as a dry run, and
 * --delete-offsets. Skipped when the Kafka jars are missing (not on CI).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../interop/kafka/kafka.js';
import { startTestBroker, uniqueTopic, type TestBroker } from '../client/broker-fixture.js';
import { spool } from './cli-io.js';

const skip = kafkaSkipReason();

let broker: TestBroker;
let admin: Admin;
let dir: string;

before(async () => {
  if (skip !== undefined) return;
  broker = await startTestBroker({ 'group.initial.rebalance.delay.ms': 0 });
  admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  dir = mkdtempSync(join(tmpdir(), 'spool-cg-kafka-'));
});

after(async () => {
  await admin?.close();
  await broker?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Runs both tools with `args`; asserts the same stdout and exit code. */
async function agree(args: readonly string[]): Promise<string> {
  const full = ['--bootstrap-server', broker.bootstrapServers, ...args];
  const kafka = await runKafkaTool(TOOL.consumerGroups, full);
  const ours = await spool(['consumer-groups', ...full]);
  assert.equal(ours.out, kafka.stdout, `stdout of ${args.join(' ')}\nkafka stderr: ${kafka.stderr.slice(0, 500)}\nspool stderr: ${ours.err}`);
  assert.equal(ours.code, kafka.code, `exit code of ${args.join(' ')}`);
  return ours.out;
}

async function liveMember(topic: string, group: string, protocol: 'classic' | 'consumer'): Promise<Consumer> {
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, groupId: group, groupProtocol: protocol, clientId: `kafka-agree-${protocol}`, autoOffsetReset: 'earliest', enableAutoCommit: false, heartbeatIntervalMs: 500, maxPollRecords: 7 });
  consumer.subscribe([topic]);
  let consumed = 0;
  for (let polls = 0; polls < 60 && consumed < 7; polls++) consumed += (await consumer.poll(500)).length;
  await consumer.commitSync();
  return consumer;
}

test('spool consumer-groups prints what Kafka\'s kafka-consumer-groups.sh prints for the same groups', { skip, timeout: 600_000 }, async () => {
  const topic = uniqueTopic('agree');
  await admin.createTopics([{ name: topic, numPartitions: 3, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: broker.bootstrapServers });
  await Promise.all([8, 12, 10].flatMap((count, partition) => Array.from({ length: count }, (_, i) => producer.send({ topic, partition, value: `v${i}` }))));
  await producer.close();
  const classic = uniqueTopic('agree-classic');
  const modern = uniqueTopic('agree-consumer');
  const members = [await liveMember(topic, classic, 'classic'), await liveMember(topic, modern, 'consumer')];
  try {
    for (const group of [classic, modern]) {
      const described = await agree(['--describe', '--group', group]);
      assert.match(described, /CURRENT-OFFSET/);
      await agree(['--describe', '--group', group, '--offsets', '--verbose']);
      await agree(['--describe', '--group', group, '--members', '--verbose']);
      await agree(['--describe', '--group', group, '--state', '--verbose']);
      await agree(['--reset-offsets', '--group', group, '--all-topics', '--to-earliest', '--dry-run']);
      await agree(['--delete-offsets', '--group', group, '--topic', topic]);
    }
    await agree(['--list', '--state', '--type']);
  } finally {
    await Promise.all(members.map((m) => m.close()));
  }
  const planFile = join(dir, 'plan.csv');
  writeFileSync(planFile, `${topic},0,3\n${topic},1,99\n`);
  for (const group of [classic, modern]) {
    await agree(['--describe', '--group', group]);
    await agree(['--describe', '--group', group, '--members']);
    await agree(['--describe', '--group', group, '--state']);
    // The reset scenarios are the tool's own arithmetic: once (on the classic group) is enough.
    if (group !== classic) continue;
    for (const scenario of [['--to-latest'], ['--to-current'], ['--shift-by', '-2'], ['--to-offset', '100'], ['--to-datetime', '2020-01-01T00:00:00.000'], ['--by-duration', 'PT1H']]) {
      await agree(['--reset-offsets', '--group', group, '--all-topics', ...scenario, '--dry-run']);
    }
    await agree(['--reset-offsets', '--group', group, '--topic', `${topic}:0,2`, '--to-offset', '5', '--dry-run']);
    await agree(['--reset-offsets', '--group', group, '--from-file', planFile, '--dry-run']);
    await agree(['--reset-offsets', '--group', group, '--all-topics', '--to-earliest', '--dry-run', '--export']);
  }
  await agree(['--describe', '--group', uniqueTopic('no-such-group')]);
  await agree(['--list', '--state', 'empty']);
});
