/**
 * Kafka 4.4's own kafka-consumer-groups.sh (ConsumerGroupCommand, through
 * test/interop/kafka/kafka.sh tool) against groups of real clients on a real
 * Spool process, and `spool consumer-groups` (the CLI, as a process) printing
 * the same rows for the same groups.
 *
 * Two groups on one 6-partition topic, three franz-go members each (members.ts):
 * a classic group (range) and a KIP-848 consumer group. While they run:
 * --list (with --state, --type) names both, Stable; --describe gives one row
 * per partition at the committed offset with no lag, the consumer id and
 * client id of the member holding it; --members one row per member with its
 * partition count (--verbose: its partitions, epochs and target); --state the assignor and three
 * members; --reset-offsets is refused (the group is active). After the
 * members stop and 5 more records go to each partition: Empty, lag 5, no
 * consumer; --reset-offsets --to-earliest --dry-run plans offset 0 and changes
 * nothing; --execute moves every committed offset to 0; a member that joins
 * then receives every record from the start, once.
 * GROUPS_TOOL_LOG=1 prints what Kafka's tool printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Admin } from '../../../src/client/admin.js';
import { Producer } from '../../../src/client/producer.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../kafka/kafka.js';
import { SPOOL_BIN } from '../clients/spool-process.js';
import { franzClient } from './group-clients.js';
import { checkExactlyOnce, createReadyTopic, HEARTBEAT_INTERVAL_MS, PARTITIONS, SESSION_TIMEOUT_MS, settled, startGroupBroker, type GroupBroker, type GroupClient } from './group-scenario.js';
import { Member, until } from './members.js';

/** Short-lived tool JVMs start faster without the optimizing compiler. */
process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const RECORDS = 10;
const MORE = 5;
const DEADLINE_MS = 60_000;

interface Output { stdout: string; stderr: string; code: number }

/** Kafka's tool, as kafka-consumer-groups.sh runs it. */
function kafkaTool(broker: GroupBroker, args: readonly string[]): Promise<Output> {
  return runKafkaTool(TOOL.consumerGroups, ['--bootstrap-server', broker.bootstrap, ...args]);
}

/** `spool consumer-groups`, as a process. */
function spoolTool(broker: GroupBroker, args: readonly string[]): Promise<Output> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [SPOOL_BIN, 'consumer-groups', '--bootstrap-server', broker.bootstrap, ...args], { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') reject(error);
      else resolve({ stdout, stderr, code: error === null ? 0 : (error.code as number) });
    });
  });
}

/** Non-blank lines split on runs of spaces: the header first. */
function rows(text: string): string[][] {
  return text.split('\n').map((line) => line.trim()).filter((line) => line !== '').map((line) => line.split(/\s+/));
}

/** Rows as objects keyed by the header line's names (the first header row found by `first`). */
function table(text: string, first: string): Record<string, string>[] {
  const all = rows(text);
  const start = all.findIndex((row) => row[0] === first);
  assert.ok(start >= 0, `no ${first} header in:\n${text}`);
  const header = all[start]!;
  return all.slice(start + 1).map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

/**
 * Runs Kafka's tool and Spool's with the same arguments: both succeed (or
 * both fail) and print the same rows. Returns Kafka's output.
 */
async function bothTools(broker: GroupBroker, args: readonly string[]): Promise<Output> {
  const [kafka, ours] = await Promise.all([kafkaTool(broker, args), spoolTool(broker, args)]);
  const what = `consumer-groups ${args.join(' ')}`;
  if (process.env.GROUPS_TOOL_LOG !== undefined) process.stderr.write(`--- ${what}\n${kafka.stdout}${kafka.stderr}`);
  assert.equal(ours.code, kafka.code, `${what}: exit code\nkafka: ${kafka.stderr.slice(0, 600)}\nspool: ${ours.stderr.slice(0, 600)}`);
  const sortedRows = (text: string): string[] => rows(text).map((row) => row.join(' ')).sort();
  assert.deepEqual(sortedRows(ours.stdout), sortedRows(kafka.stdout), `${what}: spool consumer-groups prints Kafka's rows\nkafka:\n${kafka.stdout}\nspool:\n${ours.stdout}`);
  return kafka;
}

interface Group {
  client: GroupClient;
  id: string;
  members: Member[];
}

test('kafka-consumer-groups.sh describes and resets Spool groups of real clients; spool consumer-groups prints the same', { timeout: 240_000 }, async (t) => {
  const skip = kafkaSkipReason() ?? franzClient('classic', 'range').missing();
  if (skip !== undefined) return t.skip(skip);
  const broker = await startGroupBroker();
  const admin = new Admin({ bootstrapServers: broker.bootstrap });
  const producer = new Producer({ bootstrapServers: broker.bootstrap });
  const topic = 'groups-tool';
  const groups: Group[] = [
    { client: franzClient('classic', 'range'), id: 'tool-classic', members: [] },
    { client: franzClient('consumer', null), id: 'tool-consumer', members: [] },
  ];
  const start = (group: Group, name: string): Member => {
    const member = new Member(name, group.client.command({
      bootstrap: broker.bootstrap, group: group.id, topic, clientId: `${group.id}-${name}`,
      protocol: group.client.protocol, assignor: group.client.assignor,
      sessionTimeoutMs: SESSION_TIMEOUT_MS, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    }));
    group.members.push(member);
    return member;
  };
  const everyone = (): Member[] => groups.flatMap((group) => group.members);
  const produce = async (count: number): Promise<void> => {
    const sends = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let i = 0; i < count; i++) sends.push(producer.send({ topic, partition, value: `v${i}` }));
    }
    await Promise.all(sends);
  };
  try {
    await createReadyTopic(admin, topic);
    await produce(RECORDS);
    for (const group of groups) for (const name of ['m1', 'm2', 'm3']) start(group, name);
    const consumedAll = (members: readonly Member[]): boolean => members.reduce((n, m) => n + m.deliveries.length, 0) >= PARTITIONS * RECORDS && members.every((m) => m.allCommitted());
    await until('both groups to settle and commit every record', () => groups.every((g) => settled(g.members) && consumedAll(g.members)), everyone(), DEADLINE_MS);
    await Promise.all(groups.map((group) => live(broker, topic, group)));
    const listed = await bothTools(broker, ['--list', '--state', '--type']);
    for (const group of groups) {
      assert.deepEqual(table(listed.stdout, 'GROUP').find((row) => row.GROUP === group.id), { GROUP: group.id, TYPE: group.client.protocol === 'consumer' ? 'Consumer' : 'Classic', STATE: 'Stable' });
    }
    for (const member of everyone()) assert.equal(await member.stop(), 0, `${member.name} exits 0`);
    await produce(MORE);
    await Promise.all(groups.map((group) => inactive(broker, topic, group)));
    const restarted = groups.map((group) => start(group, 'm4'));
    await until('a member of each reset group to read everything again', () => restarted.every((m) => m.deliveries.length >= PARTITIONS * (RECORDS + MORE)), restarted, DEADLINE_MS);
    const all = new Set<`${number}:${number}`>();
    for (let p = 0; p < PARTITIONS; p++) for (let o = 0; o < RECORDS + MORE; o++) all.add(`${p}:${o}`);
    for (const member of restarted) checkExactlyOnce(`${member.name} after --reset-offsets --to-earliest --execute`, [member], all);
  } catch (error) {
    (error as Error).message += `\n--- members ---\n${everyone().map((m) => `  ${m.describe()}`).join('\n')}\n--- spool (tail) ---\n${broker.output().slice(-1500)}`;
    throw error;
  } finally {
    await Promise.all(everyone().map((member) => member.stop()));
    await producer.close();
    await admin.close();
    await broker.stop();
  }
});

/** The group while its three members run. */
async function live(broker: GroupBroker, topic: string, group: Group): Promise<void> {
  const owner = new Map<number, string>();
  for (const member of group.members) for (const p of member.assignment!) owner.set(p, `${group.id}-${member.name}`);
  const described = table((await bothTools(broker, ['--describe', '--group', group.id])).stdout, 'GROUP');
  assert.equal(described.length, PARTITIONS, 'one --describe row per partition');
  const consumerIds = new Map<string, string>();
  for (const row of described) {
    const partition = Number(row.PARTITION);
    assert.deepEqual(
      [row.GROUP, row.TOPIC, row['CURRENT-OFFSET'], row['LOG-END-OFFSET'], row.LAG, row['CLIENT-ID']],
      [group.id, topic, String(RECORDS), String(RECORDS), '0', owner.get(partition)],
      `--describe row of partition ${partition}`);
    assert.match(row.HOST!, /^\/127\.0\.0\.1$/);
    consumerIds.set(row['CLIENT-ID']!, row['CONSUMER-ID']!);
  }
  const members = table((await bothTools(broker, ['--describe', '--group', group.id, '--members', '--verbose'])).stdout, 'GROUP');
  assert.equal(members.length, 3, 'one --members row per member');
  for (const row of members) {
    const member = group.members.find((m) => `${group.id}-${m.name}` === row['CLIENT-ID'])!;
    assert.ok(member !== undefined, `--members row for a client id we started: ${JSON.stringify(row)}`);
    assert.equal(row['CONSUMER-ID'], consumerIds.get(row['CLIENT-ID']!), 'the same consumer id in --describe and --members');
    assert.equal(row['#PARTITIONS'], String(member.assignment!.length));
    const holds = `${topic}:${member.assignment!.join(',')}`;
    assert.equal(row['CURRENT-ASSIGNMENT'], holds, '--verbose names the partitions the member holds');
    // A consumer-protocol member has reached its target (epochs and partitions); a classic one has none.
    const target = group.client.protocol === 'consumer' ? [row['CURRENT-EPOCH'], holds] : ['-', '-'];
    assert.deepEqual([row['TARGET-EPOCH'], row['TARGET-ASSIGNMENT']], target);
  }
  const state = table((await bothTools(broker, ['--describe', '--group', group.id, '--state'])).stdout, 'GROUP');
  assert.equal(state.length, 1);
  assert.deepEqual([state[0]!['ASSIGNMENT-STRATEGY'], state[0]!.STATE, state[0]!['#MEMBERS']], [group.client.expectedAssignor, 'Stable', '3']);
  const refused = await bothTools(broker, ['--reset-offsets', '--group', group.id, '--topic', topic, '--to-earliest', '--execute']);
  assert.match(refused.stdout + refused.stderr, /inactive/, 'a reset of an active group is refused');
  assert.equal(table((await kafkaTool(broker, ['--describe', '--group', group.id])).stdout, 'GROUP').filter((row) => row['CURRENT-OFFSET'] !== String(RECORDS)).length, 0, 'the refused reset changed nothing');
}

/** The group once its members left and MORE records arrived per partition; resets it to the earliest offsets. */
async function inactive(broker: GroupBroker, topic: string, group: Group): Promise<void> {
  const describe = async (): Promise<Record<string, string>[]> => table((await bothTools(broker, ['--describe', '--group', group.id])).stdout, 'GROUP');
  const positions = (described: Record<string, string>[]): string[][] => described.map((row) => [row.PARTITION!, row['CURRENT-OFFSET']!, row['LOG-END-OFFSET']!, row.LAG!, row['CONSUMER-ID']!]).sort((a, b) => Number(a[0]) - Number(b[0]));
  const expect = (current: number): string[][] => Array.from({ length: PARTITIONS }, (_, p) => [String(p), String(current), String(RECORDS + MORE), String(RECORDS + MORE - current), '-']);
  assert.deepEqual(positions(await describe()), expect(RECORDS), 'an inactive group: committed offsets kept, lag, no consumer');
  const state = table((await bothTools(broker, ['--describe', '--group', group.id, '--state'])).stdout, 'GROUP');
  assert.deepEqual([state[0]!.STATE, state[0]!['#MEMBERS']], ['Empty', '0']);
  const planned = table((await bothTools(broker, ['--reset-offsets', '--group', group.id, '--topic', topic, '--to-earliest', '--dry-run'])).stdout, 'GROUP');
  assert.deepEqual(planned.map((row) => [row.PARTITION, row['NEW-OFFSET']]).sort(), Array.from({ length: PARTITIONS }, (_, p) => [String(p), '0']), '--dry-run plans offset 0 for every partition');
  assert.deepEqual(positions(await describe()), expect(RECORDS), '--dry-run changes nothing');
  const executed = await kafkaTool(broker, ['--reset-offsets', '--group', group.id, '--topic', topic, '--to-earliest', '--execute']);
  assert.equal(executed.code, 0, executed.stderr);
  assert.deepEqual(table(executed.stdout, 'GROUP').map((row) => [row.PARTITION, row['NEW-OFFSET']]).sort(), Array.from({ length: PARTITIONS }, (_, p) => [String(p), '0']));
  assert.deepEqual(positions(await describe()), expect(0), '--execute moved every committed offset to 0');
}
