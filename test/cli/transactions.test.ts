/**
 * `spool transactions` (kafka-transactions.sh on Spool's admin client)
 * against a real Spool broker holding one open transaction its coordinator
 * knows and two hanging ones (transactional batches of producer ids no
 * coordinator gave out, planted straight into the partition).
 *
 * - list, describe and describe-producers show what the broker holds, in
 *   Kafka's columns; find-hanging finds exactly the two hanging ones.
 * - abort --start-offset and abort --producer-id/--producer-epoch/
 *   --coordinator-epoch each end one, and the last stable offset moves up
 *   to the open transaction's start.
 * - Bad invocations answer with Kafka's messages and exit 1.
 * - Where the Kafka jars are present, Kafka's own tool prints the same
 *   tables (all but the columns that read the clock), hanging ones in the
 *   same order.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ListOffsets } from '../../src/protocol/schemas/02-list-offsets.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../interop/kafka/kafka.js';
import { WireClient, call } from '../server/wire-client.js';
import { spool } from './cli-io.js';
import { openTransaction, plantHangingTransaction } from './transaction-fixtures.js';

const kafkaSkip = kafkaSkipReason();
const TOPIC = 'payments';
const OPEN_TXN = 'open-payments';
/** Producer ids no coordinator gave out: their transactions hang. */
const HANGING = [777_777, 888_888] as const;

let running: RunningBroker;
let client: WireClient;
let dir: string;
let openProducerId: number;

/** A table printed by prettyPrintTable, as rows of trimmed cells. */
const table = (out: string): string[][] => out.split('\n').filter((line) => line !== '').map((line) => line.split('\t').slice(0, -1).map((cell) => cell.trim()));

const transactions = async (...args: string[]) => {
  const result = await spool(['transactions', '--bootstrap-server', running.bootstrapServers, ...args]);
  assert.equal(result.code, 0, `spool transactions ${args.join(' ')}: ${result.err}`);
  return result.out;
};

const lastStableOffset = async () => {
  const listed = await call(client, ListOffsets, 7, { replicaId: -1, isolationLevel: 1, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
  return listed.topics[0]!.partitions[0]!.offset;
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spool-txn-cli-'));
  running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  const [created] = await running.broker.controller.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
  assert.equal(created!.errorCode, ErrorCode.NONE);
  client = await WireClient.connect(running.bootstrapServers);

  await plantHangingTransaction(running, TOPIC, HANGING[0]); // offset 0
  openProducerId = await openTransaction(client, TOPIC, OPEN_TXN); // offset 1
  await plantHangingTransaction(running, TOPIC, HANGING[1]); // offset 2
});

after(async () => {
  client.close();
  await running.stop();
  await rm(dir, { recursive: true, force: true });
});

test('list, describe and describe-producers show the transactions in Kafka columns', async () => {
  assert.deepEqual(table(await transactions('list')), [['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState'], [OPEN_TXN, '1', String(openProducerId), 'Ongoing']]);

  const [header, row] = table(await transactions('describe', '--transactional-id', OPEN_TXN));
  assert.deepEqual(header, ['CoordinatorId', 'TransactionalId', 'ProducerId', 'ProducerEpoch', 'TransactionState', 'TransactionTimeoutMs', 'CurrentTransactionStartTimeMs', 'TransactionDurationMs', 'TopicPartitions']);
  assert.deepEqual([row![0], row![1], row![2], row![3], row![4], row![5], row![8]], ['1', OPEN_TXN, String(openProducerId), '0', 'Ongoing', '600000', `${TOPIC}-0`]);
  assert.ok(Number(row![6]) > 0 && Number(row![7]) >= 0, `start time and duration: ${row!.join(' ')}`);

  const producers = table(await transactions('describe-producers', '--topic', TOPIC, '--partition', '0'));
  assert.deepEqual(producers[0], ['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset']);
  assert.deepEqual(new Map(producers.slice(1).map((r) => [Number(r[0]), [r[1], r[2], r[3], r[5]]])), new Map([
    [HANGING[0], ['0', '-1', '0', '0']],
    [openProducerId, ['0', '-1', '0', '1']],
    [HANGING[1], ['0', '-1', '0', '2']],
  ]));
  const onReplica = table(await transactions('describe-producers', '--topic', TOPIC, '--partition', '0', '--broker-id', '1'));
  assert.deepEqual(onReplica, producers, 'the leader named by --broker-id answers the same');
});

test('bad invocations answer with Kafka\'s messages and exit 1', async () => {
  const run = (...args: string[]) => spool(['transactions', '--bootstrap-server', running.bootstrapServers, ...args]);
  const cases: [string[], string][] = [
    [['describe', '--transactional-id', 'nobody'], 'Failed to describe transaction state of transactional-id `nobody`: '],
    [['find-hanging'], 'The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search'],
    [['find-hanging', '--broker-id', '1', '--partition', '0'], 'The --partition argument requires --topic to be provided'],
    [['abort', '--topic', TOPIC, '--partition', '0'], 'The transaction to abort must be identified either with --start-offset'],
    [['abort', '--topic', TOPIC, '--partition', '0', '--producer-id', '5'], 'Missing required argument --producer-epoch'],
    [['abort', '--topic', TOPIC, '--partition', '0', '--producer-id', '5', '--producer-epoch', '0'], 'Missing required argument --coordinator-epoch'],
    [['abort', '--topic', TOPIC, '--partition', '0', '--start-offset', '9'], `Could not find any open transactions starting at offset 9 on partition ${TOPIC}-0`],
    [['describe-producers', '--topic', TOPIC, '--partition', 'zero'], "argument --partition: could not convert 'zero' to Integer"],
  ];
  for (const [args, message] of cases) {
    const result = await run(...args);
    assert.equal(result.code, 1, args.join(' '));
    assert.ok(result.err.startsWith(message), `${args.join(' ')}: ${result.err}`);
  }
});

test('Kafka\'s kafka-transactions.sh prints the same tables', { skip: kafkaSkip ?? false, timeout: 240_000 }, async () => {
  const kafka = async (...args: string[]) => {
    const result = await runKafkaTool(TOOL.transactions, ['--bootstrap-server', running.bootstrapServers, ...args]);
    assert.equal(result.code, 0, `kafka-transactions.sh ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  /** Blanks the columns that read the tool's clock. */
  const clockless = (rows: string[][], columns: readonly number[]) => rows.map((row, i) => (i === 0 ? row : row.map((cell, c) => (columns.includes(c) ? '' : cell))));
  const commands: [string[], number[]][] = [
    [['list'], []],
    [['describe', '--transactional-id', OPEN_TXN], [7]],
    [['describe-producers', '--topic', TOPIC, '--partition', '0'], []],
    [['find-hanging', '--topic', TOPIC, '--max-transaction-timeout', '0'], [7]],
  ];
  for (const [args, clockColumns] of commands) {
    assert.deepEqual(clockless(table(await transactions(...args)), clockColumns), clockless(table(await kafka(...args)), clockColumns), args.join(' '));
  }
});

test('find-hanging finds the two hanging transactions; abort ends each, by start offset and by producer', async () => {
  assert.equal(await lastStableOffset(), 0, 'the first hanging transaction holds read_committed consumers at its start');
  const hanging = table(await transactions('find-hanging', '--topic', TOPIC, '--max-transaction-timeout', '0'));
  assert.deepEqual(hanging[0], ['Topic', 'Partition', 'ProducerId', 'ProducerEpoch', 'CoordinatorEpoch', 'StartOffset', 'LastTimestamp', 'Duration(min)']);
  assert.deepEqual(hanging.slice(1).map((r) => r.slice(0, 6)).sort(), [[TOPIC, '0', String(HANGING[0]), '0', '-1', '0'], [TOPIC, '0', String(HANGING[1]), '0', '-1', '2']]);
  assert.ok(hanging.slice(1).every((r) => Number(r[7]) >= 59), 'an hour-old transaction has run about 60 minutes');
  const onBroker = table(await transactions('find-hanging', '--broker-id', '1'));
  assert.deepEqual(onBroker.slice(1).map((r) => r.slice(0, 6)).sort(), hanging.slice(1).map((r) => r.slice(0, 6)).sort(), 'every partition on broker 1, past the default 15 minutes');

  assert.equal(await transactions('abort', '--topic', TOPIC, '--partition', '0', '--start-offset', '0'), '');
  assert.equal(await lastStableOffset(), 1, 'read_committed consumers now stop at the open transaction');
  await transactions('abort', '--topic', TOPIC, '--partition', '0', '--producer-id', String(HANGING[1]), '--producer-epoch', '0', '--coordinator-epoch', '-1');
  const producers = table(await transactions('describe-producers', '--topic', TOPIC, '--partition', '0'));
  assert.deepEqual(new Map(producers.slice(1).map((r) => [Number(r[0]), r[5]])), new Map([[HANGING[0], 'None'], [openProducerId, '1'], [HANGING[1], 'None']]));
  assert.deepEqual(table(await transactions('find-hanging', '--topic', TOPIC, '--max-transaction-timeout', '0')).slice(1), []);
  assert.equal(await lastStableOffset(), 1, 'the open transaction still holds them');
});
