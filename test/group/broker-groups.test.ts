/**
 * Consumer groups end to end: a broker from startBroker(), driven over TCP
 * by Spool's own encoder. Proves: FindCoordinator creates __consumer_offsets
 * (compacted, offsets.topic.num.partitions partitions), and
 * __transaction_state for a transactional id, and points at this
 * node in every version's shape; a classic group forms (KIP-394 join,
 * SyncGroup, Heartbeat), commits and fetches offsets (v8 single and v8+
 * multi-group, v10 by topic id), is described and listed, and leaves;
 * unknown topics get UNKNOWN_TOPIC_OR_PARTITION; committed offsets and the
 * group survive a broker restart (the coordinator loads its partition); a
 * KIP-848 consumer group gets its assignment from ConsumerGroupHeartbeat and
 * is described; and with Kafka's default offsets.topic.replication.factor=3
 * a one-node cluster answers COORDINATOR_NOT_AVAILABLE, as Kafka 4 does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../src/protocol/schema.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { OffsetCommit } from '../../src/protocol/schemas/08-offset-commit.js';
import { OffsetFetch } from '../../src/protocol/schemas/09-offset-fetch.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { JoinGroup } from '../../src/protocol/schemas/11-join-group.js';
import { Heartbeat } from '../../src/protocol/schemas/12-heartbeat.js';
import { LeaveGroup } from '../../src/protocol/schemas/13-leave-group.js';
import { SyncGroup } from '../../src/protocol/schemas/14-sync-group.js';
import { DescribeGroups } from '../../src/protocol/schemas/15-describe-groups.js';
import { ListGroups } from '../../src/protocol/schemas/16-list-groups.js';
import { ConsumerGroupHeartbeat } from '../../src/protocol/schemas/68-consumer-group-heartbeat.js';
import { ConsumerGroupDescribe } from '../../src/protocol/schemas/69-consumer-group-describe.js';
import { encodeSubscription, encodeAssignment } from '../../src/protocol/consumer-protocol.js';
import { WireClient } from '../server/wire-client.js';

let correlationId = 0;

async function call<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
  const id = ++correlationId;
  client.send(encodeRequest(api, { apiVersion: version, correlationId: id, clientId: 'e2e' }, body));
  const frame = await client.next();
  assert.ok(frame !== null, `${api.name} v${version}: connection closed`);
  const decoded = decodeResponse(api, version, frame);
  assert.ok(decoded.ok, `${api.name} v${version}: response did not decode`);
  assert.equal(decoded.correlationId, id);
  return decoded.body;
}

async function start(dir: string, config: Record<string, string | number> = {}): Promise<RunningBroker> {
  return startBroker({
    config: {
      'log.dirs': dir,
      'node.id': 1,
      'offsets.topic.replication.factor': 1,
      'offsets.topic.num.partitions': 5,
      'group.initial.rebalance.delay.ms': 0,
      ...config,
    },
    logger: silentLogger,
  });
}

async function createTopic(running: RunningBroker, name: string, partitions: number): Promise<string> {
  const [created] = await running.broker.controller.createTopics([{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
  assert.equal(created!.errorCode, ErrorCode.NONE);
  return created!.topicId;
}

test('classic group, offsets and a restart, over the wire', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-groups-'));
  let running = await start(dir);
  try {
    const topicId = await createTopic(running, 'events', 3);
    let client = await WireClient.connect(running.bootstrapServers);
    const [host, port] = running.bootstrapServers.split(':');

    const v3 = await call(client, FindCoordinator, 3, { key: 'g', keyType: 0 });
    assert.deepEqual([v3.errorCode, v3.nodeId, v3.host, v3.port], [ErrorCode.NONE, 1, host, Number(port)]);
    const v4 = await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['g', 'other'] });
    assert.deepEqual(v4.coordinators.map((c) => [c.key, c.errorCode, c.nodeId]), [['g', 0, 1], ['other', 0, 1]]);
    const offsetsTopic = running.broker.metadata.image.topicsByName.get('__consumer_offsets');
    assert.equal(offsetsTopic?.partitions.size, 5);
    assert.equal(offsetsTopic?.configs.get('cleanup.policy'), 'compact');
    // A transactional id (key type 1) creates __transaction_state the same way.
    const txn = await call(client, FindCoordinator, 4, { keyType: 1, coordinatorKeys: ['t'] });
    assert.deepEqual([txn.coordinators[0]!.errorCode, txn.coordinators[0]!.nodeId], [ErrorCode.NONE, 1]);
    const stateTopic = running.broker.metadata.image.topicsByName.get('__transaction_state');
    assert.deepEqual([stateTopic?.partitions.size, stateTopic?.configs.get('cleanup.policy')], [50, 'compact']);

    const joinBody = (memberId: string) => ({
      groupId: 'g',
      sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: 30_000,
      memberId,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['events'] }) }],
    });
    const first = await call(client, JoinGroup, 9, joinBody(''));
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    const joined = await call(client, JoinGroup, 9, joinBody(first.memberId));
    assert.deepEqual([joined.errorCode, joined.generationId, joined.leader, joined.protocolName, joined.protocolType], [0, 1, first.memberId, 'range', 'consumer']);
    const assignment = encodeAssignment({ assignedPartitions: [{ topic: 'events', partitions: [0, 1, 2] }] });
    const synced = await call(client, SyncGroup, 5, {
      groupId: 'g',
      generationId: 1,
      memberId: first.memberId,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId: first.memberId, assignment }],
    });
    assert.equal(synced.errorCode, ErrorCode.NONE);
    assert.deepEqual(synced.assignment, assignment);
    assert.equal((await call(client, Heartbeat, 4, { groupId: 'g', generationId: 1, memberId: first.memberId })).errorCode, ErrorCode.NONE);

    const committed = await call(client, OffsetCommit, 8, {
      groupId: 'g',
      generationIdOrMemberEpoch: 1,
      memberId: first.memberId,
      topics: [
        { name: 'events', partitions: [{ partitionIndex: 1, committedOffset: 42, committedLeaderEpoch: 0, committedMetadata: 'hi' }, { partitionIndex: 7, committedOffset: 1, committedMetadata: null }] },
        { name: 'nope', partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: null }] },
      ],
    });
    assert.deepEqual(
      committed.topics.map((t) => t.partitions.map((p) => p.errorCode)),
      [[ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
    );
    const single = await call(client, OffsetFetch, 7, { groupId: 'g', topics: [{ name: 'events', partitionIndexes: [1, 2] }] });
    assert.deepEqual(single.topics[0]!.partitions.map((p) => [p.committedOffset, p.metadata]), [[42, 'hi'], [-1, '']]);
    const multi = await call(client, OffsetFetch, 8, { groups: [{ groupId: 'g', topics: null }, { groupId: 'missing', topics: null }] });
    assert.deepEqual(multi.groups.map((g) => [g.groupId, g.topics.length]), [['g', 1], ['missing', 0]]);
    const byId = await call(client, OffsetFetch, 10, { groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: [{ topicId, partitionIndexes: [1] }] }] });
    assert.deepEqual(byId.groups[0]!.topics.map((t) => [t.topicId, t.partitions[0]!.committedOffset]), [[topicId, 42]]);

    const described = await call(client, DescribeGroups, 5, { groups: ['g', 'unknown'] });
    assert.deepEqual(described.groups.map((g) => [g.groupId, g.groupState]), [['g', 'Stable'], ['unknown', 'Dead']]);
    assert.equal(described.groups[0]!.members[0]!.clientHost, '/127.0.0.1');
    assert.equal(described.groups[0]!.members[0]!.clientId, 'e2e');
    const listed = await call(client, ListGroups, 5, { statesFilter: ['stable'], typesFilter: [] });
    assert.deepEqual(listed.groups, [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }]);
    const left = await call(client, LeaveGroup, 5, { groupId: 'g', members: [{ memberId: first.memberId }] });
    assert.deepEqual([left.errorCode, left.members[0]!.errorCode], [0, 0]);
    client.close();

    await running.stop();
    running = await start(dir);
    client = await WireClient.connect(running.bootstrapServers);
    let afterRestart = await call(client, OffsetFetch, 8, { groups: [{ groupId: 'g', topics: null }] });
    for (let attempt = 0; afterRestart.groups[0]!.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && attempt < 50; attempt++) {
      await new Promise((resolve) => setImmediate(resolve));
      afterRestart = await call(client, OffsetFetch, 8, { groups: [{ groupId: 'g', topics: null }] });
    }
    assert.equal(afterRestart.groups[0]!.topics[0]!.partitions[0]!.committedOffset, 42);
    const describedAgain = await call(client, DescribeGroups, 5, { groups: ['g'] });
    assert.equal(describedAgain.groups[0]!.groupState, 'Empty');
    client.close();
  } finally {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a KIP-848 consumer group over the wire', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-groups-'));
  const running = await start(dir);
  try {
    const topicId = await createTopic(running, 'orders', 4);
    const client = await WireClient.connect(running.bootstrapServers);
    await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['cg'] });
    const beat = await call(client, ConsumerGroupHeartbeat, 1, {
      groupId: 'cg',
      memberId: 'member-1',
      memberEpoch: 0,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['orders'],
      topicPartitions: [],
    });
    assert.equal(beat.errorCode, ErrorCode.NONE);
    assert.equal(beat.memberEpoch, 1);
    assert.deepEqual(beat.assignment?.topicPartitions, [{ topicId, partitions: [0, 1, 2, 3] }]);
    const described = await call(client, ConsumerGroupDescribe, 1, { groupIds: ['cg'], includeAuthorizedOperations: true });
    const group = described.groups[0]!;
    assert.deepEqual([group.errorCode, group.groupState, group.groupEpoch, group.assignorName], [0, 'Stable', 1, 'uniform']);
    assert.deepEqual(group.members[0]!.assignment.topicPartitions, [{ topicId, topicName: 'orders', partitions: [0, 1, 2, 3] }]);
    assert.equal(group.members[0]!.memberType, 1);
    assert.notEqual(group.authorizedOperations, -2147483648);
    const listed = await call(client, ListGroups, 5, { statesFilter: [], typesFilter: ['consumer'] });
    assert.deepEqual(listed.groups.map((g) => [g.groupId, g.groupType, g.protocolType]), [['cg', 'consumer', 'consumer']]);
    client.close();
  } finally {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test("with Kafka's default offsets.topic.replication.factor=3 a one-node cluster has no group coordinator", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-groups-'));
  const running = await start(dir, { 'offsets.topic.replication.factor': 3 });
  try {
    const client = await WireClient.connect(running.bootstrapServers);
    const found = await call(client, FindCoordinator, 2, { key: 'g', keyType: 0 });
    assert.deepEqual([found.errorCode, found.nodeId, found.host, found.port], [ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, '', -1]);
    assert.ok(found.errorMessage !== null);
    client.close();
  } finally {
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
