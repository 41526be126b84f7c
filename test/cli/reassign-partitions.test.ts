/**
 * The pure parts of `spool reassign-partitions`, against Kafka's own
 * examples and rules: --generate's placement is AdminUtils'
 * (the table of its javadoc for 10 partitions on 5 brokers at start index 0;
 * rack-aware placement puts a partition's replicas on distinct racks, over
 * the rack-alternated broker list), the reassignment JSON is read and
 * written as Kafka's tool does (version 1, partitions sorted, log dirs
 * "any"), and bad files are refused with its messages.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assignReplicasToBrokers, formatAsReassignmentJson, parseReassignmentJson } from '../../src/cli/reassign-partitions.js';
import { CliError } from '../../src/cli/io.js';
import { SeededRandom, type Random } from '../../src/io/random.js';

/** Kafka's fixedStartIndex 0: both draws are 0. */
const ZERO: Random = { nextInt: () => 0, nextFloat: () => 0, bytes: (length) => Buffer.alloc(length), uuid: () => Buffer.alloc(16) };

test('rack-unaware placement is AdminUtils\' round robin (its javadoc table at start index 0)', () => {
  const brokers = [0, 1, 2, 3, 4].map((id) => ({ id, rack: null }));
  const placed = assignReplicasToBrokers(brokers, { partitions: 10, replicationFactor: 3, random: ZERO });
  assert.deepEqual(placed.slice(0, 5), [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1]]);
  assert.deepEqual(placed.slice(5), [[0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2]], 'the second round shifts the followers by one more');
  assert.throws(() => assignReplicasToBrokers(brokers, { partitions: 1, replicationFactor: 6, random: ZERO }), /Replication factor: 6 larger than available brokers: 5\./);
});

test('rack-aware placement alternates racks and never puts two replicas of a partition on one rack while another rack has none', () => {
  const racks = ['r1', 'r1', 'r1', 'r2', 'r2', 'r2', 'r3', 'r3', 'r3'];
  const brokers = racks.map((rack, id) => ({ id, rack }));
  const first = assignReplicasToBrokers(brokers, { partitions: 9, replicationFactor: 3, random: ZERO });
  assert.deepEqual(first.map((replicas) => replicas[0]), [0, 3, 6, 1, 4, 7, 2, 5, 8], 'leaders follow the rack-alternated list');
  const random = new SeededRandom(11);
  for (const replicas of assignReplicasToBrokers(brokers, { partitions: 30, replicationFactor: 3, random })) {
    assert.equal(new Set(replicas.map((id) => racks[id])).size, 3, `${replicas.join(',')} spans the three racks`);
  }
});

test('the reassignment JSON: read with Kafka\'s rules, written sorted with log dirs', () => {
  const text = JSON.stringify({ version: 1, partitions: [{ topic: 'b', partition: 1, replicas: [2, 3] }, { topic: 'a', partition: 0, replicas: [1], log_dirs: ['any'] }] });
  const parsed = parseReassignmentJson(text);
  assert.deepEqual(parsed, [{ tp: { topic: 'b', partition: 1 }, replicas: [2, 3] }, { tp: { topic: 'a', partition: 0 }, replicas: [1] }]);
  assert.equal(
    formatAsReassignmentJson(parsed, new Map([['b-1-3', '/data/d1']])),
    '{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["any"]},{"topic":"b","partition":1,"replicas":[2,3],"log_dirs":["any","/data/d1"]}]}',
  );
  const refused = (json: string) => assert.throws(() => parseReassignmentJson(json), CliError);
  refused('not json');
  refused(JSON.stringify({ version: 2, partitions: [] }));
  refused(JSON.stringify({ version: 1, partitions: [{ topic: 't', partition: 0, replicas: [1, 2], log_dirs: ['any'] }] }));
  assert.throws(() => parseReassignmentJson('{'), /The input string is not a valid JSON/);
});
