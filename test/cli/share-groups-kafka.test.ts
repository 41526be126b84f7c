/**
 * `spool share-groups` agrees with Kafka 4.4's own kafka-share-groups.sh
 * (ShareGroupCommand, run from the jars test/interop/kafka/setup.sh
 * resolves) when both talk to the same scripted broker
 * (test/client/share-group-admin-fixture.ts, which therefore must also
 * satisfy Kafka's Java admin client): the same stdout, byte for byte, and
 * the same exit code, for --list (with --state), --describe (offsets,
 * --members, --state, each with --verbose, one group and --all-groups, a
 * missing group), --delete, --delete-offsets and --reset-offsets dry runs
 * of every scenario, with --export, for a group that does not exist, an
 * active one and a partition that does not exist. Not compared:
 * --to-current for a partition without a start offset, where Kafka 4.4's
 * tool fails (a NullPointerException) and Spool's takes the log end.
 * The share-group requests both send (ListGroups, ShareGroupDescribe,
 * Describe/Alter/DeleteShareGroupOffsets, DeleteGroups) are the same, at the
 * same versions, field for field and in the same order.
 * Every bad flag combination of share-groups-arguments.ts gets the same
 * message (first in Kafka's stderr, before its usage text) and exit code.
 * Skipped when the Kafka jars are missing (not on CI).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaSkipReason, runKafkaTool } from '../interop/kafka/kafka.js';
import { ApiKey, SCRIPTED_SHARE_GROUPS, SCRIPTED_TOPICS, scriptShareGroups, ShareGroupsFakeCluster } from '../client/share-group-admin-fixture.js';
import { spool } from './cli-io.js';
import { ARGUMENT_ERRORS } from './share-groups-arguments.js';

const SHARE_GROUP_COMMAND = 'org.apache.kafka.tools.consumer.group.ShareGroupCommand';
const skip = kafkaSkipReason();

let cluster: ShareGroupsFakeCluster;
let dir: string;

before(async () => {
  if (skip !== undefined) return;
  cluster = await new ShareGroupsFakeCluster(SCRIPTED_TOPICS).start();
  scriptShareGroups(cluster, SCRIPTED_SHARE_GROUPS);
  dir = mkdtempSync(join(tmpdir(), 'spool-sg-kafka-'));
});

after(async () => {
  await cluster?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Runs both tools with `args`; asserts the same stdout and exit code. */
async function agree(args: readonly string[]): Promise<string> {
  const full = ['--bootstrap-server', cluster.bootstrapServers, ...args];
  const kafka = await runKafkaTool(SHARE_GROUP_COMMAND, full);
  const ours = await spool(['share-groups', ...full]);
  assert.equal(ours.out, kafka.stdout, `stdout of ${args.join(' ')}\nkafka stderr: ${kafka.stderr.slice(0, 800)}\nspool stderr: ${ours.err}`);
  assert.equal(ours.code, kafka.code, `exit code of ${args.join(' ')}`);
  return ours.out;
}

/** Each test runs Kafka's tool (a JVM start each) a dozen times or so. */
const KAFKA_TOOL_TEST = { skip, timeout: 300_000 };

test('--list and --describe of one group print what kafka-share-groups.sh prints', KAFKA_TOOL_TEST, async () => {
  assert.match(await agree(['--list']), /orders-share/);
  await agree(['--list', '--state']);
  await agree(['--list', '--state', 'Empty']);
  for (const view of [[], ['--members'], ['--state']]) {
    for (const verbose of [[], ['--verbose']]) await agree(['--describe', '--group', 'orders-share', ...view, ...verbose]);
  }
});

test('--describe of an empty group, all groups and a missing group print what kafka-share-groups.sh prints', KAFKA_TOOL_TEST, async () => {
  for (const view of [['--offsets'], ['--members'], ['--state']]) await agree(['--describe', '--group', 'sg-a', ...view]);
  await agree(['--describe', '--all-groups']);
  await agree(['--describe', '--all-groups', '--members', '--verbose']);
  await agree(['--describe', '--group', 'sg-missing']);
});

test('--delete and --delete-offsets print what kafka-share-groups.sh prints', KAFKA_TOOL_TEST, async () => {
  await agree(['--delete', '--group', 'sg-a', '--group', 'orders-share', '--group', 'not-share']);
  await agree(['--delete', '--group', 'sg-b']);
  await agree(['--delete-offsets', '--group', 'sg-a', '--topic', 'orders', '--topic', 'nope']);
});

test('--reset-offsets dry runs of every scenario print what kafka-share-groups.sh prints', KAFKA_TOOL_TEST, async () => {
  const scenarios = [['--to-earliest'], ['--to-latest'], ['--to-offset', '5'], ['--to-datetime', '1970-01-01T00:00:00.004']];
  for (const scenario of scenarios) await agree(['--reset-offsets', '--group', 'sg-a', '--topic', 'orders', '--topic', 'payments:0', ...scenario, '--dry-run']);
  // Only partitions with a start offset: for one without, Kafka 4.4's --to-current fails (a NullPointerException), Spool takes the log end.
  await agree(['--reset-offsets', '--group', 'sg-a', '--topic', 'orders:0', '--topic', 'payments:0', '--to-current', '--dry-run']);
  const plan = join(dir, 'plan.csv');
  writeFileSync(plan, 'orders,0,20\norders,1,99\n');
  await agree(['--reset-offsets', '--group', 'sg-a', '--from-file', plan, '--dry-run']);
});

test('--reset-offsets with --export, --all-topics and refusals print what kafka-share-groups.sh prints', KAFKA_TOOL_TEST, async () => {
  await agree(['--reset-offsets', '--group', 'sg-a', '--all-topics', '--to-earliest', '--dry-run', '--export']);
  await agree(['--reset-offsets', '--group', 'sg-a', '--all-topics', '--to-offset', '1000', '--dry-run']);
  await agree(['--reset-offsets', '--group', 'sg-new', '--topic', 'orders', '--to-earliest', '--dry-run']);
  await agree(['--reset-offsets', '--group', 'orders-share', '--topic', 'orders', '--to-earliest', '--dry-run']);
  await agree(['--reset-offsets', '--group', 'sg-a', '--topic', 'orders:7', '--to-earliest', '--dry-run']);
});

/** Kafka's tool prints the message, then its usage (or, for joptsimple's own refusals, an uncaught exception naming it). */
async function agreeOnRefusal(args: readonly string[], message: string): Promise<void> {
  const full = ['--bootstrap-server', '127.0.0.1:1', ...args];
  const kafka = await runKafkaTool(SHARE_GROUP_COMMAND, full);
  const ours = await spool(['share-groups', ...full]);
  assert.equal(ours.err, `${message}\n`, args.join(' '));
  assert.ok(kafka.stderr.split('\n').slice(0, 2).some((line) => line === message || line.endsWith(`Exception: ${message}`)), `Kafka's stderr for ${args.join(' ')}: ${kafka.stderr.slice(0, 300)}`);
  assert.equal(ours.out, kafka.stdout, args.join(' '));
  assert.equal(ours.code, kafka.code, `exit code of ${args.join(' ')}`);
}

const half = Math.ceil(ARGUMENT_ERRORS.length / 2);

test('bad flag combinations get kafka-share-groups.sh\'s messages (first half)', KAFKA_TOOL_TEST, async () => {
  for (const [args, message] of ARGUMENT_ERRORS.slice(0, half)) await agreeOnRefusal(args, message);
});

test('bad flag combinations get kafka-share-groups.sh\'s messages (second half)', KAFKA_TOOL_TEST, async () => {
  for (const [args, message] of ARGUMENT_ERRORS.slice(half)) await agreeOnRefusal(args, message);
});

const SHARE_GROUP_APIS: readonly number[] = [ApiKey.listGroups, ApiKey.deleteGroups, ApiKey.shareGroupDescribe, ApiKey.describeShareGroupOffsets, ApiKey.alterShareGroupOffsets, ApiKey.deleteShareGroupOffsets];

/** The share-group requests the broker received after the first `from`, as `key vVERSION body`. */
function shareGroupRequestsSince(from: number): string[] {
  return cluster.broker.received.slice(from)
    .filter((r) => SHARE_GROUP_APIS.includes(r.header.requestApiKey))
    .map((r) => `${r.header.requestApiKey} v${r.header.requestApiVersion} ${JSON.stringify(r.body, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
}

/** Runs both tools with `args`; asserts the same share-group requests (and stdout, exit code). */
async function sameRequests(args: readonly string[]): Promise<void> {
  const full = ['--bootstrap-server', cluster.bootstrapServers, ...args];
  const beforeKafka = cluster.broker.received.length;
  const kafka = await runKafkaTool(SHARE_GROUP_COMMAND, full);
  const kafkaRequests = shareGroupRequestsSince(beforeKafka);
  const beforeOurs = cluster.broker.received.length;
  const ours = await spool(['share-groups', ...full]);
  assert.deepEqual(shareGroupRequestsSince(beforeOurs), kafkaRequests, `requests of ${args.join(' ')}`);
  assert.equal(ours.out, kafka.stdout, `stdout of ${args.join(' ')}`);
  assert.equal(ours.code, kafka.code, `exit code of ${args.join(' ')}`);
}

test('both tools send the same share-group requests', KAFKA_TOOL_TEST, async () => {
  await sameRequests(['--list', '--state', 'Empty']); // one state: Kafka sends a set of several in a per-JVM random order
  await sameRequests(['--describe', '--group', 'sg-a']);
  await sameRequests(['--reset-offsets', '--group', 'sg-a', '--topic', 'orders', '--topic', 'payments:0', '--to-earliest', '--execute']);
  await sameRequests(['--delete-offsets', '--group', 'sg-a', '--topic', 'orders', '--topic', 'payments']);
  await sameRequests(['--delete', '--group', 'sg-c']);
});
