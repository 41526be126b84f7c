/**
 * `spool consumer-groups` and `spool consume --group`.
 *
 * Without a broker: Kafka's argument rules (exactly one action, scopes,
 * exclusive scenarios, state lists), the table layouts (each expected text
 * below was printed by Kafka 4.4's kafka-consumer-groups.sh for the same
 * group), the reset plan's Java HashMap row order, and the --to-datetime,
 * --by-duration and --from-file parsers.
 *
 * Against a broker (startBroker, or SPOOL_E2E_BOOTSTRAP): a live group is
 * described with its member's id, client id, offsets and lag; a reset is
 * refused while the member is active and applied once it has left; resets
 * by offset, shift, time and file; delete-offsets and delete; consume
 * --group commits what it printed and the next run continues from there.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import type { ConsumerGroupDescription } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { formatGroupList, formatMembers, formatOffsets, formatResetPlan, formatState, parseDateTime, parseDuration, parseResetPlan } from '../../src/cli/consumer-groups.js';
import { startTestBroker, uniqueTopic, type TestBroker } from '../client/broker-fixture.js';
import { spool } from './cli-io.js';

const OFFLINE = ['--bootstrap-server', '127.0.0.1:1'];

test('consumer-groups needs exactly one action and Kafka\'s companions for it, checked before connecting', async () => {
  const cases: [string[], RegExp][] = [
    [['--group', 'g'], /^Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex/],
    [['--list', '--describe'], /^Option \[describe\] takes one of these options: \[group\], \[all-groups\]/],
    [['--describe', '--group', 'g', '--members', '--state'], /takes at most one of these options: \[members\], \[offsets\], \[state\]/],
    [['--describe', '--group', 'g', '--state', 'stable'], /^Option \[describe\] does not take a value for \[state\]/],
    [['--delete-offsets', '--group', 'g'], /^Option \[delete-offsets\] takes the following options: \[topic\], \[group\]/],
    [['--delete', '--group', 'g', '--topic', 't'], /does not support topic-specific offset deletion/],
    [['--reset-offsets', '--group', 'g', '--all-topics', '--to-earliest', '--to-latest'], /^Option "\[to-earliest\]" can't be used with option "\[to-latest\]"/m],
    [['--reset-offsets', '--group', 'g', '--all-topics', '--shift-by', '1', '--dry-run', '--execute'], /only accepts one of \[execute\] and \[dry-run\]/],
    [['--list', '--state', 'bogus'], /^Invalid state list 'bogus'\. Valid states are: /],
  ];
  for (const [args, expected] of cases) {
    const result = await spool(['consumer-groups', ...OFFLINE, ...args]);
    assert.equal(result.code, 1, args.join(' '));
    assert.match(result.err, expected, args.join(' '));
  }
  const warned = await spool(['consumer-groups', ...OFFLINE, '--reset-offsets', '--group', 'g', '--all-topics', '--to-earliest', '--to-latest']);
  assert.match(warned.err, /^WARN: No action will be performed as the --execute option is missing\./);
  const regex = await spool(['consumer-groups', ...OFFLINE, '--validate-regex', 'orders-.*']);
  assert.equal(regex.out, 'The regular expression `orders-.*` is valid.\n');
});

const described: ConsumerGroupDescription = {
  groupId: 'cgx-g2',
  isSimpleConsumerGroup: false,
  type: 'consumer',
  groupState: 'Stable',
  partitionAssignor: 'uniform',
  coordinator: { nodeId: 1, host: '127.0.0.1', port: 29192 },
  groupEpoch: 2,
  targetAssignmentEpoch: 2,
  members: [{
    memberId: 'QJgq-XtxSAaZVVynyvgNbA',
    groupInstanceId: null,
    clientId: 'spool-member',
    host: '/127.0.0.1',
    assignment: [0, 1, 2].map((partition) => ({ topic: 'cgx-t2', partition })),
    targetAssignment: [0, 1, 2].map((partition) => ({ topic: 'cgx-t2', partition })),
    memberEpoch: 2,
    upgraded: true,
  }],
};

test('describe layouts are Kafka 4.4\'s, column for column', () => {
  const rows = [[0, 0, 7, 8], [1, null, 0, 12], [2, null, 0, 10]].map(([partition, leaderEpoch, offset, logEndOffset]) => ({
    group: 'cgx-g2', topic: 'cgx-t2', partition: partition!, leaderEpoch: leaderEpoch ?? null, offset: offset!, logEndOffset: logEndOffset!,
    consumerId: 'QJgq-XtxSAaZVVynyvgNbA', host: '/127.0.0.1', clientId: 'spool-member',
  }));
  assert.equal(formatOffsets(rows, false), [
    '',
    'GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID            HOST            CLIENT-ID',
    'cgx-g2          cgx-t2          0          7               8               1               QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member',
    'cgx-g2          cgx-t2          1          0               12              12              QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member',
    'cgx-g2          cgx-t2          2          0               10              10              QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member',
    '',
  ].join('\n'));
  assert.equal(formatOffsets(rows, true).split('\n')[2], 'cgx-g2          cgx-t2          0          0               7               8               1               QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member');
  assert.equal(formatOffsets(rows, true).split('\n')[3], 'cgx-g2          cgx-t2          1          -               0               12              12              QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member');
  assert.equal(formatMembers(described, true), [
    '',
    'GROUP           CONSUMER-ID            HOST            CLIENT-ID       #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   ',
    'cgx-g2          QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member    3               2               cgx-t2:0,1,2         2               cgx-t2:0,1,2        ',
    '',
  ].join('\n'));
  assert.equal(formatMembers(described, false), '\nGROUP           CONSUMER-ID            HOST            CLIENT-ID       #PARTITIONS     \ncgx-g2          QJgq-XtxSAaZVVynyvgNbA /127.0.0.1      spool-member    3               \n');
  assert.equal(formatState(described, true), [
    '',
    'GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                GROUP-EPOCH     TARGET-ASSIGNMENT-EPOCH   #MEMBERS',
    'cgx-g2          127.0.0.1:29192  (1)      uniform              Stable               2               2                         1',
    '',
  ].join('\n'));
  const empty = { ...described, groupId: 'cgx-g', type: 'classic' as const, groupState: 'Empty', partitionAssignor: '', members: [], groupEpoch: null, targetAssignmentEpoch: null };
  assert.equal(formatState(empty, false), '\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\ncgx-g           127.0.0.1:29192  (1)      -                    Empty                0\n');
  assert.equal(formatGroupList([{ groupId: 'cgx-g2', type: 'Consumer', state: 'Stable' }], { includeType: true, includeState: true }),
    'GROUP                     TYPE                 STATE               \ncgx-g2                    Consumer             Stable              \n');
});

test('reset plans print like Kafka\'s, rows in Java HashMap order', () => {
  assert.equal(formatResetPlan([{ groupId: 'cgx-g', rows: [{ topic: 'cgx-t', partition: 1, offset: 0 }, { topic: 'cgx-t', partition: 2, offset: 0 }, { topic: 'cgx-t', partition: 0, offset: 0 }] }]), [
    '',
    'GROUP           TOPIC           PARTITION  NEW-OFFSET',
    'cgx-g           cgx-t           1          0',
    'cgx-g           cgx-t           2          0',
    'cgx-g           cgx-t           0          0',
    '',
  ].join('\n'));
  assert.equal(formatResetPlan([]), '\n');
});

test('--to-datetime, --by-duration and --from-file parse as Kafka parses them', () => {
  assert.equal(parseDateTime('2020-01-01T00:00:00.000'), Date.UTC(2020, 0, 1));
  assert.equal(parseDateTime('2020-01-01T01:00:00.000+01:00'), Date.UTC(2020, 0, 1));
  assert.equal(parseDateTime('2020-01-01T00:00:00.000Z'), Date.UTC(2020, 0, 1));
  assert.throws(() => parseDateTime('2020-01-01'), /does not contain a 'T'/);
  assert.equal(parseDuration('PT1H'), 3_600_000);
  assert.equal(parseDuration('P1DT2H3M4.5S'), 86_400_000 + 7_200_000 + 180_000 + 4_500);
  assert.equal(parseDuration('PT-30M'), -1_800_000);
  assert.throws(() => parseDuration('1H'), /cannot be parsed to a Duration/);
  assert.deepEqual([...parseResetPlan('t,0,3\nt,1,99\n', ['g']).get('g')!], [['t-0', 3], ['t-1', 99]]);
  const multi = parseResetPlan('g1,t,0,3\ng2,t,2,1\n', ['g1', 'g2']);
  assert.deepEqual([...multi.keys()], ['g1', 'g2']);
  assert.throws(() => parseResetPlan('t,zero,3', ['g']), /Invalid reset plan line/);
});

// ---- against a broker ----

let broker: TestBroker;
let server: string[];
let admin: Admin;
let dir: string;

before(async () => {
  broker = await startTestBroker({ 'group.initial.rebalance.delay.ms': 0 });
  server = ['--bootstrap-server', broker.bootstrapServers];
  admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  dir = mkdtempSync(join(tmpdir(), 'spool-cg-cli-'));
});

after(async () => {
  await admin?.close();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function topicWith(prefix: string, perPartition: number[]): Promise<string> {
  const topic = uniqueTopic(prefix);
  await admin.createTopics([{ name: topic, numPartitions: perPartition.length, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: broker.bootstrapServers });
  const sends = perPartition.flatMap((count, partition) => Array.from({ length: count }, (_, i) => producer.send({ topic, partition, value: `p${partition}-${i}` })));
  await Promise.all(sends);
  await producer.close();
  return topic;
}

/** A data row of a describe / reset table: its whitespace-separated cells. */
function rowsOf(out: string, group: string): string[][] {
  return out.split('\n').filter((line) => line.startsWith(`${group} `)).map((line) => line.trim().split(/\s+/));
}

test('describe a live group, refuse a reset while it is active, reset it once it has left', async () => {
  const topic = await topicWith('cg-cli', [8, 12, 10]);
  const group = uniqueTopic('cg-cli-group');
  const member = new Consumer({ bootstrapServers: broker.bootstrapServers, groupId: group, clientId: 'cli-test-member', autoOffsetReset: 'earliest', enableAutoCommit: false, heartbeatIntervalMs: 500, maxPollRecords: 7 });
  member.subscribe([topic]);
  try {
    let consumed = 0;
    for (let polls = 0; polls < 60 && consumed < 7; polls++) consumed += (await member.poll(500)).length;
    await member.commitSync();
    const positions = await Promise.all([0, 1, 2].map((partition) => member.position({ topic, partition })));

    const describe = await spool(['consumer-groups', ...server, '--describe', '--group', group]);
    assert.equal(describe.code, 0, describe.err);
    assert.match(describe.out, /^\nGROUP +TOPIC +PARTITION +CURRENT-OFFSET +LOG-END-OFFSET +LAG +CONSUMER-ID +HOST +CLIENT-ID\n/);
    const rows = rowsOf(describe.out, group);
    assert.equal(rows.length, 3);
    rows.forEach((cells, partition) => {
      const end = [8, 12, 10][partition]!;
      assert.deepEqual(cells.slice(0, 6), [group, topic, String(partition), String(positions[partition]), String(end), String(end - positions[partition]!)]);
      assert.equal(cells[6], member.groupMetadata().memberId);
      assert.equal(cells[8], 'cli-test-member');
    });

    const refused = await spool(['consumer-groups', ...server, '--reset-offsets', '--group', group, '--all-topics', '--to-earliest', '--execute']);
    assert.equal(refused.code, 0);
    assert.match(refused.out, new RegExp(`^\\nError: Assignments can only be reset if the group '${group}' is inactive, but the current state is Stable\\.\\n`));
    const members = await spool(['consumer-groups', ...server, '--describe', '--group', group, '--members']);
    assert.equal(rowsOf(members.out, group)[0]![4], '3', '#PARTITIONS');
  } finally {
    await member.close();
  }

  const dryRun = await spool(['consumer-groups', ...server, '--reset-offsets', '--group', group, '--topic', `${topic}:0,2`, '--to-offset', '5', '--dry-run']);
  assert.deepEqual(rowsOf(dryRun.out, group).map((cells) => cells.slice(2)).sort(), [['0', '5'], ['2', '5']]);
  const executed = await spool(['consumer-groups', ...server, '--reset-offsets', '--group', group, '--all-topics', '--to-earliest', '--execute']);
  assert.equal(executed.code, 0, executed.err);
  assert.deepEqual((await admin.listConsumerGroupOffsets(group)).map((o) => o.offset), [0, 0, 0]);
  const shifted = await spool(['consumer-groups', ...server, '--reset-offsets', '--group', group, '--all-topics', '--shift-by', '-3', '--execute']);
  assert.match(shifted.err, /WARN New offset \(-3\) is lower than earliest offset/);
  const future = await spool(['consumer-groups', ...server, '--reset-offsets', '--group', group, '--all-topics', '--to-datetime', '2999-01-01T00:00:00.000', '--execute']);
  assert.match(future.out, /Warn: Partition \d from topic .* is empty\. Falling back to latest known offset\./);
  assert.deepEqual((await admin.listConsumerGroupOffsets(group)).map((o) => o.offset), [8, 12, 10]);
  const planFile = join(dir, 'plan.csv');
  writeFileSync(planFile, `${topic},0,3\n${topic},1,99\n`);
  await spool(['consumer-groups', ...server, '--reset-offsets', '--group', group, '--from-file', planFile, '--execute']);
  assert.deepEqual((await admin.listConsumerGroupOffsets(group)).map((o) => o.offset), [3, 12, 10], '99 is clamped to the log end');
  const empty = await spool(['consumer-groups', ...server, '--describe', '--group', group]);
  assert.match(empty.err, new RegExp(`Consumer group '${group}' has no active members\\.`));
  assert.ok(rowsOf(empty.out, group).every((cells) => cells.slice(6).join(' ') === '- - -'), 'no consumer columns once empty');

  const deletedOffsets = await spool(['consumer-groups', ...server, '--delete-offsets', '--group', group, '--topic', `${topic}:1`]);
  assert.match(deletedOffsets.out, new RegExp(`^Request succeeded for deleting offsets from group ${group}\\.\\n`));
  assert.deepEqual((await admin.listConsumerGroupOffsets(group)).map((o) => o.partition), [0, 2]);
  const deleted = await spool(['consumer-groups', ...server, '--delete', '--group', group]);
  assert.equal(deleted.out, `Deletion of requested consumer groups ('${group}') was successful.\n`);
  const gone = await spool(['consumer-groups', ...server, '--list']);
  assert.ok(!gone.out.split('\n').includes(group));
});

test('consume --group prints records, commits them, and the next run continues after them', async () => {
  const topic = await topicWith('cg-consume', [5, 5]);
  const group = uniqueTopic('cg-consume-group');
  const first = await spool(['consume', ...server, '--topic', topic, '--group', group, '--from-beginning', '--max-messages', '6', '--consumer-property', 'heartbeat.interval.ms=500']);
  assert.equal(first.code, 0, first.err);
  assert.equal(first.out.trim().split('\n').length, 6);
  const committed = await admin.listConsumerGroupOffsets(group);
  assert.equal(committed.reduce((sum, o) => sum + o.offset, 0), 6, 'the six printed records are committed');
  const second = await spool(['consume', ...server, '--topic', topic, '--group', group, '--max-messages', '4', '--timeout-ms', '20000']);
  assert.equal(second.code, 0, second.err);
  const all = [...first.out.trim().split('\n'), ...second.out.trim().split('\n')].sort();
  assert.deepEqual(all, [0, 1, 2, 3, 4].flatMap((i) => [`p0-${i}`, `p1-${i}`]).sort(), 'every record once over the two runs');
  const listed = await spool(['consumer-groups', ...server, '--list']);
  assert.ok(listed.out.split('\n').includes(group));
});
