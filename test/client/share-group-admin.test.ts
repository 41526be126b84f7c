/**
 * The admin client's share-group calls against a scripted broker
 * (share-group-admin-fixture.ts), proving for each what it puts on the
 * wire and how it reads the answer:
 * - listShareGroups asks ListGroups for type "share" (and the states given);
 * - describeShareGroups retries COORDINATOR_LOAD_IN_PROGRESS, looks the
 *   coordinator up again after NOT_COORDINATOR, maps members with sorted
 *   assignments and Kafka's state names, and rejects a missing group with
 *   GROUP_ID_NOT_FOUND and the broker's message;
 * - listShareGroupOffsets asks for every topic (null) or the partitions
 *   given, grouped by topic; -1 start offsets become null, -1 epochs and
 *   lags become null, partitions with an error are left out, and against a
 *   v0-only broker the lag is null;
 * - alterShareGroupOffsets groups partitions by topic, reports each
 *   partition's error, spreads a group-level error over every partition and
 *   retries REBALANCE_IN_PROGRESS;
 * - deleteShareGroupOffsets names whole topics and reports the group's error
 *   or each topic's;
 * - deleteShareGroups is DeleteGroups.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { KafkaError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { ApiKey, ShareGroupsFakeCluster } from './share-group-admin-fixture.js';

let cluster: ShareGroupsFakeCluster;
let admin: Admin;

before(async () => {
  cluster = await new ShareGroupsFakeCluster().start();
  admin = new Admin({ bootstrapServers: cluster.bootstrapServers, retryBackoffMs: 1, retryBackoffMaxMs: 5 });
});

after(async () => {
  await admin?.close();
  await cluster?.stop();
});

const describedGroup = (groupId: string, overrides: Record<string, unknown> = {}) => ({
  errorCode: 0,
  errorMessage: null,
  groupId,
  groupState: 'Stable',
  groupEpoch: 7,
  assignmentEpoch: 6,
  assignorName: 'simple',
  members: [],
  authorizedOperations: -2147483648,
  ...overrides,
});

test('listShareGroups asks ListGroups for share groups in the given states', async () => {
  cluster.scripts.set(ApiKey.listGroups, () => ({
    errorCode: 0,
    groups: [{ groupId: 'sg-1', protocolType: 'share', groupState: 'Empty', groupType: 'share' }],
  }));
  const listed = await admin.listShareGroups({ states: ['Empty'] });
  assert.deepEqual(listed, [{ groupId: 'sg-1', protocolType: 'share', groupState: 'Empty', type: 'share' }]);
  const request = cluster.requests(ApiKey.listGroups).at(-1)!;
  assert.deepEqual(request.body.typesFilter, ['Share']);
  assert.deepEqual(request.body.statesFilter, ['Empty']);
});

test('describeShareGroups retries a loading coordinator, finds a moved one again, and maps the group', async () => {
  const answers = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.NONE];
  const lookupsBefore = cluster.requests(ApiKey.findCoordinator).length;
  cluster.scripts.set(ApiKey.shareGroupDescribe, () => {
    const errorCode = answers.shift() ?? ErrorCode.NONE;
    if (errorCode !== ErrorCode.NONE) return { groups: [describedGroup('sg-d', { errorCode, groupState: '' })] };
    return {
      groups: [describedGroup('sg-d', {
        groupState: 'STABLE',
        members: [{
          memberId: 'm-1', rackId: null, memberEpoch: 7, clientId: 'c-1', clientHost: '/10.0.0.1', subscribedTopicNames: ['t', 'a'],
          assignment: { topicPartitions: [{ topicId: ZERO_UUID, topicName: 't', partitions: [2, 0] }, { topicId: ZERO_UUID, topicName: 'a', partitions: [1] }] },
        }],
      })],
    };
  });
  const [described] = await admin.describeShareGroups(['sg-d']);
  assert.equal(answers.length, 0, 'all three answers were used');
  assert.equal(cluster.requests(ApiKey.findCoordinator).length - lookupsBefore, 2, 'looked up once, and again after NOT_COORDINATOR');
  assert.deepEqual(cluster.requests(ApiKey.shareGroupDescribe).at(-1)!.body.groupIds, ['sg-d']);
  assert.equal(described!.groupState, 'Stable');
  assert.equal(described!.groupEpoch, 7);
  assert.equal(described!.targetAssignmentEpoch, 6);
  assert.deepEqual(described!.coordinator, { nodeId: 1, host: cluster.address.host, port: cluster.address.port });
  assert.deepEqual(described!.members, [{
    memberId: 'm-1', rackId: null, clientId: 'c-1', host: '/10.0.0.1', memberEpoch: 7, subscribedTopicNames: ['t', 'a'],
    assignment: [{ topic: 'a', partition: 1 }, { topic: 't', partition: 0 }, { topic: 't', partition: 2 }],
  }]);
});

test('describeShareGroups rejects a group that does not exist with GROUP_ID_NOT_FOUND and the broker\'s message', async () => {
  cluster.scripts.set(ApiKey.shareGroupDescribe, () => ({
    groups: [describedGroup('sg-missing', { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group sg-missing not found.', groupState: '' })],
  }));
  await assert.rejects(admin.describeShareGroups(['sg-missing']), (error: unknown) =>
    error instanceof KafkaError && error.code === ErrorCode.GROUP_ID_NOT_FOUND && error.detail === 'Group sg-missing not found.');
});

const offsetsAnswer = (groupId: string) => ({
  groups: [{
    groupId,
    errorCode: 0,
    errorMessage: null,
    topics: [
      {
        topicName: 't', topicId: ZERO_UUID, partitions: [
          { partitionIndex: 1, startOffset: 40, leaderEpoch: 3, lag: 2, errorCode: 0, errorMessage: null },
          { partitionIndex: 0, startOffset: -1, leaderEpoch: -1, lag: -1, errorCode: 0, errorMessage: null },
          { partitionIndex: 2, startOffset: 0, leaderEpoch: 0, lag: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'gone' },
        ],
      },
      { topicName: 'a', topicId: ZERO_UUID, partitions: [{ partitionIndex: 0, startOffset: 5, leaderEpoch: -1, lag: -1, errorCode: 0, errorMessage: null }] },
    ],
  }],
});

test('listShareGroupOffsets asks for every topic or the given partitions and maps start offsets, epochs and lag', async () => {
  cluster.scripts.set(ApiKey.describeShareGroupOffsets, (request) => offsetsAnswer((request.body.groups as { groupId: string }[])[0]!.groupId));
  const all = await admin.listShareGroupOffsets('sg-o');
  assert.deepEqual(cluster.requests(ApiKey.describeShareGroupOffsets).at(-1)!.body.groups, [{ groupId: 'sg-o', topics: null }]);
  assert.deepEqual(all, [
    { topic: 'a', partition: 0, offsetInfo: { startOffset: 5, leaderEpoch: null, lag: null } },
    { topic: 't', partition: 0, offsetInfo: null },
    { topic: 't', partition: 1, offsetInfo: { startOffset: 40, leaderEpoch: 3, lag: 2 } },
  ]);
  await admin.listShareGroupOffsets('sg-o', { partitions: [{ topic: 't', partition: 1 }, { topic: 'a', partition: 0 }, { topic: 't', partition: 0 }] });
  assert.deepEqual(cluster.requests(ApiKey.describeShareGroupOffsets).at(-1)!.body.groups, [{
    groupId: 'sg-o',
    topics: [{ topicName: 't', partitions: [1, 0] }, { topicName: 'a', partitions: [0] }],
  }]);
});

test('listShareGroupOffsets against a broker without DescribeShareGroupOffsets v1 reports no lag', async () => {
  const old = await new ShareGroupsFakeCluster().start();
  old.versionMax.set(ApiKey.describeShareGroupOffsets, 0);
  old.scripts.set(ApiKey.describeShareGroupOffsets, () => offsetsAnswer('sg-v0'));
  const oldAdmin = new Admin({ bootstrapServers: old.bootstrapServers, retryBackoffMs: 1 });
  try {
    const listed = await oldAdmin.listShareGroupOffsets('sg-v0');
    assert.equal(old.requests(ApiKey.describeShareGroupOffsets)[0]!.header.requestApiVersion, 0);
    assert.deepEqual(listed.find((p) => p.topic === 't' && p.partition === 1)!.offsetInfo, { startOffset: 40, leaderEpoch: 3, lag: null });
  } finally {
    await oldAdmin.close();
    await old.stop();
  }
});

test('listShareGroupOffsets rejects with the group-level error', async () => {
  cluster.scripts.set(ApiKey.describeShareGroupOffsets, () => ({
    groups: [{ groupId: 'sg-denied', errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null, topics: [] }],
  }));
  await assert.rejects(admin.listShareGroupOffsets('sg-denied'), (error: unknown) => error instanceof KafkaError && error.code === ErrorCode.GROUP_AUTHORIZATION_FAILED);
});

test('alterShareGroupOffsets groups partitions by topic and reports each partition\'s outcome', async () => {
  cluster.scripts.set(ApiKey.alterShareGroupOffsets, () => ({
    errorCode: 0,
    errorMessage: null,
    responses: [{
      topicName: 't', topicId: ZERO_UUID, partitions: [
        { partitionIndex: 0, errorCode: 0, errorMessage: null },
        { partitionIndex: 1, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'no such partition' },
      ],
    }],
  }));
  const results = await admin.alterShareGroupOffsets('sg-a', [{ topic: 't', partition: 0, startOffset: 10 }, { topic: 't', partition: 1, startOffset: 0 }]);
  const request = cluster.requests(ApiKey.alterShareGroupOffsets).at(-1)!;
  assert.equal(request.body.groupId, 'sg-a');
  assert.deepEqual(request.body.topics, [{ topicName: 't', partitions: [{ partitionIndex: 0, startOffset: 10 }, { partitionIndex: 1, startOffset: 0 }] }]);
  assert.equal(results.get('t-0'), null);
  assert.equal(results.get('t-1')?.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(results.get('t-1')?.detail, 'no such partition');
});

test('alterShareGroupOffsets retries REBALANCE_IN_PROGRESS and spreads a group-level error over every partition', async () => {
  const answers = [ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.NON_EMPTY_GROUP];
  const sentBefore = cluster.requests(ApiKey.alterShareGroupOffsets).length;
  cluster.scripts.set(ApiKey.alterShareGroupOffsets, () => ({ errorCode: answers.shift() ?? 0, errorMessage: 'The group is not empty.', responses: [] }));
  const results = await admin.alterShareGroupOffsets('sg-busy', [{ topic: 't', partition: 0, startOffset: 1 }, { topic: 'u', partition: 3, startOffset: 2 }]);
  assert.equal(cluster.requests(ApiKey.alterShareGroupOffsets).length - sentBefore, 2, 'asked again after REBALANCE_IN_PROGRESS');
  assert.deepEqual([...results].map(([key, error]) => [key, error?.code]), [['t-0', ErrorCode.NON_EMPTY_GROUP], ['u-3', ErrorCode.NON_EMPTY_GROUP]]);
});

test('deleteShareGroupOffsets names whole topics and reports the group\'s error or each topic\'s', async () => {
  cluster.scripts.set(ApiKey.deleteShareGroupOffsets, (request) => request.body.groupId === 'sg-live'
    ? { errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: null, responses: [] }
    : {
      errorCode: 0,
      errorMessage: null,
      responses: [
        { topicName: 't', topicId: ZERO_UUID, errorCode: 0, errorMessage: null },
        { topicName: 'u', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null },
      ],
    });
  const deleted = await admin.deleteShareGroupOffsets('sg-x', ['t', 'u']);
  assert.deepEqual(cluster.requests(ApiKey.deleteShareGroupOffsets).at(-1)!.body.topics, [{ topicName: 't' }, { topicName: 'u' }]);
  assert.equal(deleted.error, null);
  assert.equal(deleted.topics.get('t'), null);
  assert.equal(deleted.topics.get('u')?.code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const refused = await admin.deleteShareGroupOffsets('sg-live', ['t']);
  assert.equal(refused.error?.code, ErrorCode.NON_EMPTY_GROUP);
  assert.equal(refused.topics.size, 0);
});

test('deleteShareGroups sends DeleteGroups and reports each group', async () => {
  cluster.scripts.set(ApiKey.deleteGroups, (request) => {
    const [groupId] = request.body.groupsNames as string[];
    return { results: [{ groupId, errorCode: groupId === 'sg-live' ? ErrorCode.NON_EMPTY_GROUP : 0, errorMessage: null }] };
  });
  const results = await admin.deleteShareGroups(['sg-gone', 'sg-live']);
  assert.equal(results.get('sg-gone'), null);
  assert.equal(results.get('sg-live')?.code, ErrorCode.NON_EMPTY_GROUP);
});
