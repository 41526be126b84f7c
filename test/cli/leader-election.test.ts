/**
 * `spool leader-election` refuses what kafka-leader-election.sh refuses,
 * with its messages, before connecting anywhere: missing required options,
 * not exactly one of --topic, --all-topic-partitions and
 * --path-to-json-file, --partition without --topic; and it reads Kafka's
 * JSON file, refusing duplicates and a missing "partitions" field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseElectionJson } from '../../src/cli/leader-election.js';
import { spool } from './cli-io.js';

const SERVER = ['--bootstrap-server', '127.0.0.1:1'];

test('flags are checked as Kafka\'s LeaderElectionCommandOptions.validate checks them', async () => {
  const cases: [readonly string[], string][] = [
    [['--topic', 't', '--partition', '0'], 'Missing required option(s): bootstrap-server, election-type'],
    [[...SERVER, '--election-type', 'PREFERRED'], 'One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file'],
    [[...SERVER, '--election-type', 'PREFERRED', '--topic', 't', '--partition', '0', '--all-topic-partitions'], 'One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file'],
    [[...SERVER, '--election-type', 'PREFERRED', '--all-topic-partitions', '--partition', '0'], 'Option partition is only allowed if topic is used'],
    [[...SERVER, '--election-type', 'sideways', '--all-topic-partitions'], 'Unknown election type sideways: expected one of PREFERRED, UNCLEAN'],
  ];
  for (const [args, message] of cases) {
    const result = await spool(['leader-election', ...args]);
    assert.deepEqual({ code: result.code, err: result.err.trim() }, { code: 1, err: message }, args.join(' '));
  }
});

test('the JSON file is Kafka\'s {"partitions":[{"topic","partition"}]}, without duplicates', () => {
  assert.deepEqual(parseElectionJson('{"partitions":[{"topic":"foo","partition":1},{"topic":"bar","partition":2}]}'), [
    { topic: 'foo', partition: 1 },
    { topic: 'bar', partition: 2 },
  ]);
  assert.throws(() => parseElectionJson('{"version":1}'), { message: 'Replica election data is missing "partitions" field' });
  assert.throws(() => parseElectionJson('{"partitions":[{"topic":"foo","partition":1},{"topic":"foo","partition":1}]}'), {
    message: 'Replica election data contains duplicate partitions: [foo-1]',
  });
});
