/**
 * `spool share-groups` (kafka-share-groups.sh).
 *
 * Without a broker: Kafka 4.4's argument rules in their order and words
 * (joptsimple's "unavailable" options, one action, scopes, exclusive
 * scenarios, --dry-run / --execute, state lists), and the table layouts:
 * each expected text below was printed by Java's String.format with the
 * format strings of Kafka 4.4's ShareGroupCommand for the same rows.
 *
 * Against a scripted broker (test/client/share-group-admin-fixture.ts),
 * in-process: --list (Java HashMap order) and --list --state, --describe's
 * three views with Kafka's notices for Empty and missing groups, --delete
 * refusing groups that are not share groups or not Empty before any
 * DeleteGroups, --delete-offsets per topic, and --reset-offsets: refused for
 * a Stable group, planned with --dry-run (nothing altered), applied with
 * --execute (the plan is what AlterShareGroupOffsets carries) also to a
 * group that does not exist yet, --export,
 * --to-offset clamped to the log with Kafka's warning, --to-current falling
 * back to the log end where the group has no start offset.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ListedSharePartition, ShareGroupDescription } from '../../src/client/admin.js';
import { formatDeleteOffsetsOutcome, formatDeleteOutcome, formatShareGroupList, formatShareGroupState, formatShareMembers, formatShareOffsets } from '../../src/cli/share-groups.js';
import { KafkaError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiKey, SCRIPTED_SHARE_GROUPS, SCRIPTED_TOPICS, scriptShareGroups, ShareGroupsFakeCluster } from '../client/share-group-admin-fixture.js';
import { spool } from './cli-io.js';
import { ARGUMENT_ERRORS } from './share-groups-arguments.js';

const OFFLINE = ['--bootstrap-server', '127.0.0.1:1'];

test('share-groups checks its arguments as Kafka 4.4 does, before connecting', async () => {
  for (const [args, expected] of ARGUMENT_ERRORS) {
    const result = await spool(['share-groups', ...OFFLINE, ...args]);
    assert.equal(result.code, 1, args.join(' '));
    assert.equal(result.err, `${expected}\n`, args.join(' '));
    assert.equal(result.out, '', args.join(' '));
  }
});

const description: ShareGroupDescription = {
  groupId: 'orders-share',
  groupState: 'Stable',
  groupEpoch: 7,
  targetAssignmentEpoch: 6,
  assignorName: 'simple',
  coordinator: { nodeId: 1, host: '127.0.0.1', port: 9092 },
  authorizedOperations: -2147483648,
  members: SCRIPTED_SHARE_GROUPS.get('orders-share')!.members,
};

const offsets: ListedSharePartition[] = [
  { topic: 'payments-long-topic', partition: 0, offsetInfo: { startOffset: 5, leaderEpoch: null, lag: null } },
  { topic: 'orders', partition: 1, offsetInfo: { startOffset: 40, leaderEpoch: 3, lag: 2 } },
  { topic: 'orders', partition: 0, offsetInfo: null },
];

test('the describe tables are Kafka\'s, column for column', () => {
  assert.equal(formatShareOffsets('orders-share', offsets, false), [
    '',
    'GROUP           TOPIC               PARTITION  START-OFFSET  LAG',
    'orders-share    orders              0          -             -',
    'orders-share    orders              1          40            2',
    'orders-share    payments-long-topic 0          5             -',
  ].join('\n') + '\n');
  assert.equal(formatShareOffsets('orders-share', offsets, true), [
    '',
    'GROUP           TOPIC               PARTITION  LEADER-EPOCH  START-OFFSET  LAG',
    'orders-share    orders              0          -             -             -',
    'orders-share    orders              1          3             40            2',
    'orders-share    payments-long-topic 0          -             5             -',
  ].join('\n') + '\n');
  assert.equal(formatShareOffsets('sg-none', [], false), "\nShare group 'sg-none' has no offset information.\n");
  assert.equal(formatShareGroupState(description, false), [
    '',
    'GROUP           COORDINATOR (ID)          STATE           #MEMBERS',
    'orders-share    127.0.0.1:9092  (1)       Stable          2',
  ].join('\n') + '\n');
  assert.equal(formatShareGroupState(description, true), [
    '',
    'GROUP           COORDINATOR (ID)          STATE           GROUP-EPOCH  ASSIGNMENT-EPOCH  #MEMBERS',
    'orders-share    127.0.0.1:9092  (1)       Stable          7            6                 2',
  ].join('\n') + '\n');
  assert.equal(formatShareMembers(description, false), [
    '',
    'GROUP           CONSUMER-ID               HOST            CLIENT-ID       #PARTITIONS  ASSIGNMENT',
    'orders-share    consumer-aaaaaaaaaaaaaaaa /10.0.0.1       client-1        3            orders:0,1;payments-long-topic:0',
    'orders-share    consumer-b                /10.0.0.2       client-2        0            ',
  ].join('\n') + '\n');
  assert.equal(formatShareMembers(description, true), [
    '',
    'GROUP           CONSUMER-ID               HOST            CLIENT-ID       #PARTITIONS  MEMBER-EPOCH  ASSIGNMENT',
    'orders-share    consumer-aaaaaaaaaaaaaaaa /10.0.0.1       client-1        3            7             orders:0,1;payments-long-topic:0',
    'orders-share    consumer-b                /10.0.0.2       client-2        0            5             ',
  ].join('\n') + '\n');
});

test('the list, delete and delete-offsets reports are Kafka\'s', () => {
  assert.equal(formatShareGroupList([{ groupId: 'sg-a', groupState: 'Empty' }, { groupId: 'sg-b', groupState: null }]), 'GROUP           STATE\nsg-a            Empty\nsg-b            Unknown\n');
  assert.equal(formatDeleteOutcome(['sg-a', 'sg-b'], new Map()), "Deletion of requested share groups ('sg-a', 'sg-b') was successful.\n");
  assert.equal(
    formatDeleteOutcome(['sg-a'], new Map([['sg-live', "org.apache.kafka.common.errors.GroupNotEmptyException: Share group 'sg-live' is not EMPTY."]])),
    "\nError: Deletion of some share groups failed:\n* Group 'sg-live' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: Share group 'sg-live' is not EMPTY.\n\nThese share groups were deleted successfully: 'sg-a'\n",
  );
  const unknownTopic = new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const outcome = { message: 'This server does not host this topic-partition.', error: unknownTopic };
  // A topic that does not exist is reported in its row only.
  assert.equal(
    formatDeleteOffsetsOutcome(outcome, new Map([['payments', outcome], ['orders', null]])),
    '\nTOPIC           STATUS\norders          Successful\npayments        Error: This server does not host this topic-partition.\n',
  );
  const nonEmpty = { message: 'The group is not empty.', error: new KafkaError(ErrorCode.NON_EMPTY_GROUP) };
  assert.equal(formatDeleteOffsetsOutcome(nonEmpty, new Map([['orders', nonEmpty]])), '\nError: The group is not empty.\n\nTOPIC           STATUS\norders          Error: The group is not empty.\n');
});

// ---- in-process against a scripted broker ----

let cluster: ShareGroupsFakeCluster;
let bootstrap: string[];

before(async () => {
  cluster = await new ShareGroupsFakeCluster(SCRIPTED_TOPICS).start();
  bootstrap = ['share-groups', '--bootstrap-server', cluster.bootstrapServers];
  scriptShareGroups(cluster, SCRIPTED_SHARE_GROUPS);
});

after(async () => {
  await cluster?.stop();
});

test('--list prints the share groups in Kafka\'s order; with --state, a GROUP / STATE table filtered by state', async () => {
  const listed = await spool([...bootstrap, '--list']);
  assert.equal(listed.code, 0);
  assert.equal(listed.out, 'orders-share\nsg-b\nsg-a\nsg-c\n');
  assert.deepEqual(cluster.requests(ApiKey.listGroups).at(-1)!.body.typesFilter, ['Share']);
  const stable = await spool([...bootstrap, '--list', '--state', 'stable']);
  assert.equal(stable.out, 'GROUP           STATE\norders-share    Stable\n');
  const bad = await spool([...bootstrap, '--list', '--state', 'Assigning']);
  assert.equal(bad.code, 1);
  assert.equal(bad.err, "Invalid state list 'Assigning'. Valid states are: Stable, Dead, Empty\n");
});

test('--describe shows offsets by default, members and state on request, and Kafka\'s notices', async () => {
  const described = await spool([...bootstrap, '--describe', '--group', 'orders-share']);
  assert.equal(described.code, 0);
  assert.equal(described.out, [
    '',
    'GROUP           TOPIC           PARTITION  START-OFFSET  LAG',
    'orders-share    orders          0          -             -',
    'orders-share    orders          1          40            1',
  ].join('\n') + '\n');
  const members = await spool([...bootstrap, '--describe', '--group', 'orders-share', '--members']);
  assert.equal(members.out, formatShareMembers(description, false));
  const empty = await spool([...bootstrap, '--describe', '--group', 'sg-b', '--members']);
  assert.equal(empty.out, '');
  assert.equal(empty.err, "\nShare group 'sg-b' has no active members.\n");
  const state = await spool([...bootstrap, '--describe', '--group', 'sg-b', '--state', '--verbose']);
  const coordinator = `${cluster.bootstrapServers}  (1)`.padEnd(25);
  assert.equal(state.out, [
    '',
    'GROUP           COORDINATOR (ID)          STATE           GROUP-EPOCH  ASSIGNMENT-EPOCH  #MEMBERS',
    `sg-b            ${coordinator} Empty           7            6                 0`,
  ].join('\n') + '\n');
  assert.equal(state.err, "\nShare group 'sg-b' has no active members.\n");
  const missing = await spool([...bootstrap, '--describe', '--group', 'sg-missing']);
  assert.equal(missing.code, 0);
  assert.equal(missing.out, '\nError: Executing share group command failed due to org.apache.kafka.common.errors.GroupIdNotFoundException: Group sg-missing not found.\n');
});

test('--delete refuses groups that are not share groups or not Empty before deleting the rest, listing them in Kafka\'s order', async () => {
  const before = cluster.requests(ApiKey.deleteGroups).length;
  const result = await spool([...bootstrap, '--delete', '--group', 'sg-a', '--group', 'orders-share', '--group', 'not-share']);
  assert.equal(result.code, 0);
  assert.equal(result.out, [
    '',
    'Error: Deletion of some share groups failed:',
    "* Group 'not-share' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: Group 'not-share' is not a share group.",
    "* Group 'orders-share' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: Share group 'orders-share' is not EMPTY.",
    '',
    "These share groups were deleted successfully: 'sg-a'",
  ].join('\n') + '\n');
  assert.deepEqual(cluster.requests(ApiKey.deleteGroups).slice(before).map((r) => r.body.groupsNames), [['sg-a']]);
});

test('--delete-offsets reports each topic', async () => {
  const result = await spool([...bootstrap, '--delete-offsets', '--group', 'sg-a', '--topic', 'orders', '--topic', 'nope']);
  assert.equal(result.code, 0);
  assert.equal(result.out, '\nTOPIC           STATUS\nnope            Error: This server does not host this topic-partition.\norders          Successful\n');
  assert.deepEqual(cluster.requests(ApiKey.deleteShareGroupOffsets).at(-1)!.body.topics, [{ topicName: 'nope' }, { topicName: 'orders' }]);
});

test('--reset-offsets: refused for an active group, planned by --dry-run, applied by --execute', async () => {
  const active = await spool([...bootstrap, '--reset-offsets', '--group', 'orders-share', '--topic', 'orders', '--to-earliest', '--dry-run']);
  assert.equal(active.code, 1);
  assert.equal(active.err, "Share group 'orders-share' is not empty.\n");

  const altersBefore = cluster.requests(ApiKey.alterShareGroupOffsets).length;
  const planned = await spool([...bootstrap, '--reset-offsets', '--group', 'sg-a', '--topic', 'orders', '--topic', 'payments:0', '--to-earliest', '--dry-run']);
  assert.equal(planned.code, 0, planned.err);
  assert.equal(planned.out, [
    '',
    'GROUP           TOPIC           PARTITION  NEW-OFFSET',
    'sg-a            payments        0          0',
    'sg-a            orders          0          3',
    'sg-a            orders          1          0',
  ].join('\n') + '\n');
  assert.equal(cluster.requests(ApiKey.alterShareGroupOffsets).length, altersBefore, '--dry-run alters nothing');

  const executed = await spool([...bootstrap, '--reset-offsets', '--group', 'sg-a', '--topic', 'orders:1', '--to-latest', '--execute']);
  assert.equal(executed.out, '\nGROUP           TOPIC           PARTITION  NEW-OFFSET\nsg-a            orders          1          10\n');
  const altered = cluster.requests(ApiKey.alterShareGroupOffsets).at(-1)!;
  assert.equal(altered.body.groupId, 'sg-a');
  assert.deepEqual(altered.body.topics, [{ topicName: 'orders', partitions: [{ partitionIndex: 1, startOffset: 10 }] }]);

  // A share group that does not exist yet (ShareGroupDescribe: GROUP_ID_NOT_FOUND) may have its offsets set before it starts.
  const fresh = await spool([...bootstrap, '--reset-offsets', '--group', 'sg-new', '--topic', 'payments', '--to-earliest', '--execute']);
  assert.equal(fresh.code, 0, fresh.err);
  assert.equal(fresh.out, '\nGROUP           TOPIC           PARTITION  NEW-OFFSET\nsg-new          payments        0          0\n');
  assert.equal(cluster.requests(ApiKey.alterShareGroupOffsets).at(-1)!.body.groupId, 'sg-new');
});

test('--reset-offsets: --export prints CSV, --to-offset is clamped with Kafka\'s warning, --to-current falls back to the log end', async () => {
  const exported = await spool([...bootstrap, '--reset-offsets', '--group', 'sg-a', '--topic', 'orders', '--to-offset', '1000', '--dry-run', '--export']);
  assert.equal(exported.out, 'orders,0,50\norders,1,10\n\n');
  assert.equal(exported.err, [
    'WARN New offset (1000) is higher than latest offset for topic partition orders-0. Value will be set to 50.',
    'WARN New offset (1000) is higher than latest offset for topic partition orders-1. Value will be set to 10.',
  ].join('\n') + '\n');
  // sg-a has start offsets orders-0 = 12, payments-0 = 4, and none yet for orders-1 (log end 10).
  const current = await spool([...bootstrap, '--reset-offsets', '--group', 'sg-a', '--all-topics', '--to-current', '--dry-run']);
  assert.equal(current.out, [
    '',
    'GROUP           TOPIC           PARTITION  NEW-OFFSET',
    'sg-a            payments        0          4',
    'sg-a            orders          0          12',
    'sg-a            orders          1          10',
  ].join('\n') + '\n');
  const unknownPartition = await spool([...bootstrap, '--reset-offsets', '--group', 'sg-a', '--topic', 'orders:7', '--to-earliest', '--dry-run']);
  assert.equal(unknownPartition.out, '\nError: Executing share group command failed due to The partitions "orders-7" do not exist\n');
});
