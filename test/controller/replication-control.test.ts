/**
 * Proves the topic operations of the controller as a state machine:
 * operation -> records -> replay -> state. CreateTopics (defaults, manual
 * assignment, validation with Kafka's codes and messages, validateOnly,
 * collisions, duplicates), DeleteTopics by name and by id, CreatePartitions,
 * and the leader changes when a broker re-registers and is unfenced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import {
  createPartitions,
  createTopics,
  deleteTopics,
  type CreatableTopic,
} from '../../src/controller/replication-control.js';
import { registerBroker } from '../../src/controller/cluster-control.js';
import { EXCESSIVE_BATCH_MESSAGE } from '../../src/controller/result.js';
import { NO_SESSIONS, clusterWith, commit, registrationOf, unfence, uuidOf } from './helpers.js';

const topic = (name: string, fields: Partial<CreatableTopic> = {}): CreatableTopic => ({
  name,
  numPartitions: 1,
  replicationFactor: 1,
  assignments: [],
  configs: [],
  ...fields,
});

test('creating a topic writes TopicRecord, ConfigRecords, PartitionRecords; replay builds the topic', () => {
  const image = clusterWith([1]);
  const created = commit(image, (c) =>
    createTopics(c, [topic('orders', { numPartitions: 3, configs: [{ name: 'retention.ms', value: '1000' }] })], { validateOnly: false }),
  );
  assert.deepEqual(created.records.map((r) => r.type), ['TopicRecord', 'ConfigRecord', 'PartitionRecord', 'PartitionRecord', 'PartitionRecord']);
  const result = created.response[0]!;
  assert.equal(result.errorCode, ErrorCode.NONE);
  assert.equal(result.numPartitions, 3);
  assert.equal(result.replicationFactor, 1);
  const orders = created.image.topicsByName.get('orders')!;
  assert.equal(orders.id, result.topicId);
  assert.equal(created.image.topicsById.get(result.topicId), orders);
  assert.deepEqual(orders.configs, new Map([['retention.ms', '1000']]));
  assert.deepEqual([...orders.partitions.keys()], [0, 1, 2]);
  for (const partition of orders.partitions.values()) {
    assert.deepEqual(partition.replicas, [1]);
    assert.deepEqual(partition.isr, [1]);
    assert.equal(partition.leader, 1);
    assert.equal(partition.leaderEpoch, 0);
    assert.equal(partition.partitionEpoch, 0);
    assert.deepEqual(partition.directories, [uuidOf(101)]);
  }
  const retention = result.configs.find((c) => c.name === 'retention.ms')!;
  assert.deepEqual(retention, { name: 'retention.ms', value: '1000', readOnly: false, configSource: 1, isSensitive: false });
});

test('-1 partitions and replication factor take num.partitions and default.replication.factor', () => {
  const image = clusterWith([1, 2, 3]);
  const created = commit(image, (c) => createTopics(c, [topic('t', { numPartitions: -1, replicationFactor: -1 })], { validateOnly: false }), {
    'num.partitions': 4,
    'default.replication.factor': 2,
  });
  const t = created.image.topicsByName.get('t')!;
  assert.equal(t.partitions.size, 4);
  for (const partition of t.partitions.values()) {
    assert.equal(partition.replicas.length, 2);
    assert.equal(new Set(partition.replicas).size, 2);
    assert.equal(partition.leader, partition.replicas[0]);
  }
  // Leaders spread over the brokers round-robin.
  assert.equal(new Set([...t.partitions.values()].map((p) => p.leader)).size, 3);
});

test('replication factor above the registered brokers is INVALID_REPLICATION_FACTOR', () => {
  const image = clusterWith([1]);
  const { response, records } = commit(image, (c) => createTopics(c, [topic('t', { replicationFactor: 3 })], { validateOnly: false }));
  assert.equal(records.length, 0);
  assert.equal(response[0]!.errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
  assert.equal(response[0]!.errorMessage, 'Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because only 1 broker(s) are registered.');
});

test('invalid requests get Kafka codes and messages, one topic at a time', () => {
  const image = clusterWith([1]);
  const { response, image: after } = commit(image, (c) =>
    createTopics(
      c,
      [
        topic('bad name'),
        topic('zero', { numPartitions: 0 }),
        topic('norf', { replicationFactor: 0 }),
        topic('cfg', { configs: [{ name: 'segment.bytes', value: '5' }] }),
        topic('unknown-cfg', { configs: [{ name: 'no.such.config', value: '5' }] }),
        topic('dup'),
        topic('dup'),
        topic('fine'),
      ],
      { validateOnly: false },
    ),
  );
  const byName = new Map(response.map((r) => [r.name, r]));
  assert.equal(byName.get('bad name')!.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  assert.equal(byName.get('zero')!.errorCode, ErrorCode.INVALID_PARTITIONS);
  assert.equal(byName.get('zero')!.errorMessage, 'Number of partitions was set to an invalid non-positive value.');
  assert.equal(byName.get('norf')!.errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
  assert.equal(byName.get('cfg')!.errorCode, ErrorCode.INVALID_CONFIG);
  assert.equal(byName.get('cfg')!.errorMessage, 'Invalid value 5 for configuration segment.bytes: Value must be at least 1048576');
  assert.equal(byName.get('unknown-cfg')!.errorMessage, 'Unknown topic config name: no.such.config');
  assert.equal(byName.get('dup')!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(byName.get('dup')!.errorMessage, 'Duplicate topic name.');
  assert.equal(response.filter((r) => r.name === 'dup').length, 1);
  assert.equal(byName.get('fine')!.errorCode, ErrorCode.NONE);
  assert.deepEqual([...after.topicsByName.keys()], ['fine']);
});

test('__cluster_metadata is refused with INVALID_REQUEST, validateOnly too; a duplicate of it is just a duplicate', () => {
  // Bug pinned: Spool created a topic of that name and opened its log over the Raft metadata log's directory.
  const prohibited = 'Creation of internal topic __cluster_metadata is prohibited.';
  for (const validateOnly of [false, true]) {
    const { response, records, image } = commit(clusterWith([1]), (c) =>
      createTopics(c, [topic('__cluster_metadata', { numPartitions: -1, replicationFactor: -1 }), topic('fine')], { validateOnly }),
    );
    const byName = new Map(response.map((r) => [r.name, r]));
    assert.equal(byName.get('__cluster_metadata')!.errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal(byName.get('__cluster_metadata')!.errorMessage, prohibited);
    assert.equal(byName.get('__cluster_metadata')!.topicId, ZERO_UUID);
    assert.equal(byName.get('fine')!.errorCode, ErrorCode.NONE);
    assert.ok(!records.some((r) => r.type === 'TopicRecord' && r.data.name === '__cluster_metadata'));
    assert.ok(!image.topicsByName.has('__cluster_metadata'));
  }
  const twice = commit(clusterWith([1]), (c) => createTopics(c, [topic('__cluster_metadata'), topic('__cluster_metadata')], { validateOnly: false }));
  assert.deepEqual(twice.response.map((r) => [r.errorCode, r.errorMessage]), [[ErrorCode.INVALID_REQUEST, 'Duplicate topic name.']]);
});

test('an existing topic and a colliding name are refused', () => {
  const first = commit(clusterWith([1]), (c) => createTopics(c, [topic('a.b')], { validateOnly: false }));
  const { response } = commit(first.image, (c) => createTopics(c, [topic('a.b'), topic('a_b')], { validateOnly: false }));
  assert.equal(response[0]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
  assert.equal(response[0]!.errorMessage, "Topic 'a.b' already exists.");
  assert.equal(response[1]!.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  assert.equal(response[1]!.errorMessage, "Topic 'a_b' collides with existing topic: a.b");
});

test('validateOnly answers as a creation would and writes nothing', () => {
  const image = clusterWith([1]);
  const { response, records, image: after } = commit(image, (c) => createTopics(c, [topic('v', { numPartitions: 2 })], { validateOnly: true }));
  assert.equal(response[0]!.errorCode, ErrorCode.NONE);
  assert.equal(response[0]!.numPartitions, 2);
  assert.equal(records.length, 0);
  assert.equal(after.topicsByName.has('v'), false);
});

test('manual assignments set replicas in order and are checked', () => {
  const image = clusterWith([1, 2, 3]);
  const assignments = [
    { partitionIndex: 0, brokerIds: [3, 1] },
    { partitionIndex: 1, brokerIds: [2, 3] },
  ];
  const created = commit(image, (c) => createTopics(c, [topic('m', { numPartitions: -1, replicationFactor: -1, assignments })], { validateOnly: false }));
  const m = created.image.topicsByName.get('m')!;
  assert.deepEqual(m.partitions.get(0)!.replicas, [3, 1]);
  assert.equal(m.partitions.get(0)!.leader, 3);
  assert.deepEqual(m.partitions.get(1)!.replicas, [2, 3]);
  const cases: [CreatableTopic['assignments'], number, string][] = [
    [[{ partitionIndex: 0, brokerIds: [1, 1] }], ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes the broker 1 more than once.'],
    [[{ partitionIndex: 0, brokerIds: [9] }], ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 9, but no such broker is registered.'],
    [[{ partitionIndex: 1, brokerIds: [1] }], ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'partitions should be a consecutive 0-based integer sequence'],
    [[{ partitionIndex: 0, brokerIds: [] }], ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.'],
  ];
  for (const [bad, code, message] of cases) {
    const { response } = commit(image, (c) => createTopics(c, [topic('x', { numPartitions: -1, replicationFactor: -1, assignments: bad })], { validateOnly: false }));
    assert.equal(response[0]!.errorCode, code);
    assert.equal(response[0]!.errorMessage, message);
  }
  const { response } = commit(image, (c) => createTopics(c, [topic('x', { numPartitions: 2, replicationFactor: -1, assignments })], { validateOnly: false }));
  assert.equal(response[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(response[0]!.errorMessage, 'A manual partition assignment was specified, but numPartitions was not set to -1.');
});

test('an operation writing more than 10000 records fails with POLICY_VIOLATION', () => {
  const { response, records } = commit(clusterWith([1]), (c) => createTopics(c, [topic('huge', { numPartitions: 10_001 })], { validateOnly: false }));
  assert.equal(records.length, 0);
  assert.equal(response[0]!.errorCode, ErrorCode.POLICY_VIOLATION);
  assert.equal(response[0]!.errorMessage, EXCESSIVE_BATCH_MESSAGE);
});

test('topics are deleted by name and by id, with their configs; unknown ones get Kafka errors', () => {
  let image = commit(clusterWith([1]), (c) =>
    createTopics(c, [topic('a', { configs: [{ name: 'retention.ms', value: '5' }] }), topic('b')], { validateOnly: false }),
  ).image;
  const bId = image.topicsByName.get('b')!.id;
  const deleted = commit(image, (c) =>
    deleteTopics(c, [
      { name: 'a', topicId: ZERO_UUID },
      { name: null, topicId: bId },
      { name: 'nope', topicId: ZERO_UUID },
      { name: null, topicId: uuidOf(9) },
      { name: 'a', topicId: bId },
    ]),
  );
  assert.deepEqual(deleted.records.map((r) => r.type), ['RemoveTopicRecord', 'RemoveTopicRecord']);
  assert.deepEqual(deleted.response.map((r) => r.errorCode), [
    ErrorCode.NONE,
    ErrorCode.NONE,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.UNKNOWN_TOPIC_ID,
    ErrorCode.INVALID_REQUEST,
  ]);
  assert.equal(deleted.response[1]!.name, 'b');
  image = deleted.image;
  assert.equal(image.topicsByName.size, 0);
  // Configs went with the topic: a new topic of the same name starts without overrides.
  const again = commit(image, (c) => createTopics(c, [topic('a')], { validateOnly: false }));
  assert.equal(again.image.topicsByName.get('a')!.configs.size, 0);
  const disabled = commit(again.image, (c) => deleteTopics(c, [{ name: 'a', topicId: ZERO_UUID }]), { 'delete.topic.enable': false });
  assert.equal(disabled.response[0]!.errorCode, ErrorCode.TOPIC_DELETION_DISABLED);
});

test('CreatePartitions adds partitions with the topic replication factor and refuses decreases', () => {
  const image = commit(clusterWith([1, 2]), (c) => createTopics(c, [topic('p', { numPartitions: 2, replicationFactor: 2 })], { validateOnly: false })).image;
  const grown = commit(image, (c) => createPartitions(c, [{ name: 'p', count: 5, assignments: null }], { validateOnly: false }));
  assert.equal(grown.response[0]!.errorCode, ErrorCode.NONE);
  const p = grown.image.topicsByName.get('p')!;
  assert.deepEqual([...p.partitions.keys()], [0, 1, 2, 3, 4]);
  assert.ok([...p.partitions.values()].every((partition) => partition.replicas.length === 2));
  const refused = commit(grown.image, (c) =>
    createPartitions(
      c,
      [
        { name: 'p', count: 5, assignments: null },
        { name: 'p2', count: 3, assignments: null },
      ],
      { validateOnly: false },
    ),
  );
  assert.equal(refused.response[0]!.errorCode, ErrorCode.INVALID_PARTITIONS);
  assert.equal(refused.response[0]!.errorMessage, 'Topic already has 5 partition(s).');
  assert.equal(refused.response[1]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const smaller = commit(grown.image, (c) => createPartitions(c, [{ name: 'p', count: 3, assignments: null }], { validateOnly: false }));
  assert.equal(smaller.response[0]!.errorMessage, 'The topic p currently has 5 partition(s); 3 would not be an increase.');
  const wrongCount = commit(grown.image, (c) => createPartitions(c, [{ name: 'p', count: 7, assignments: [{ brokerIds: [1, 2] }] }], { validateOnly: false }));
  assert.equal(wrongCount.response[0]!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  assert.equal(wrongCount.response[0]!.errorMessage, 'Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.');
});

test('a new incarnation loses its leaderships and regains them when unfenced, each change bumping the leader epoch', () => {
  const image = commit(clusterWith([1]), (c) => createTopics(c, [topic('r', { numPartitions: 2 })], { validateOnly: false })).image;
  const registered = commit(image, (c) => registerBroker(c, registrationOf(1, { incarnationId: uuidOf(77) }), NO_SESSIONS));
  assert.deepEqual(registered.records.map((r) => r.type), ['PartitionChangeRecord', 'PartitionChangeRecord', 'RegisterBrokerRecord']);
  // Kafka's broker epoch is the offset the registration's batch starts at.
  assert.equal(registered.response.brokerEpoch, image.offset + 1);
  const fencedView = registered.image.topicsByName.get('r')!.partitions.get(0)!;
  assert.equal(fencedView.leader, -1);
  assert.deepEqual(fencedView.isr, [1]);
  assert.equal(fencedView.leaderEpoch, 1);
  assert.equal(registered.image.brokers.get(1)!.fenced, true);
  const unfenced = unfence(registered.image, 1);
  const back = unfenced.image.topicsByName.get('r')!.partitions.get(0)!;
  assert.equal(back.leader, 1);
  assert.equal(back.leaderEpoch, 2);
  assert.equal(back.partitionEpoch, 2);
  assert.equal(unfenced.image.brokers.get(1)!.fenced, false);
});
