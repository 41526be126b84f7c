/**
 * Kafka 4.4's kafka-transactions.sh (TransactionsCommand, run from the jars
 * test/interop/kafka/setup.sh resolves) against a Spool broker: an open
 * transaction the coordinator knows, and a hanging one (a transactional
 * batch in a partition its coordinator never heard of, planted straight
 * into the partition, as a lost coordinator state or a pre-KIP-890 race
 * leaves one), whose start offset holds the last stable offset back.
 *
 * - `list` and `describe` show the open transaction (Ongoing, its partition).
 * - `describe-producers` shows both producers with their
 *   CurrentTransactionStartOffset: where read_committed consumers stop.
 * - `find-hanging` finds only the hanging one: the open one's producer id is
 *   found through ListTransactions' producer filter and its coordinator
 *   lists the partition.
 * - `abort --start-offset` writes the ABORT marker (WriteTxnMarkers from the
 *   admin client); the hanging transaction is gone, and the last stable
 *   offset moves up to the open transaction's start.
 *
 * Skipped when the Kafka jars are missing (not on CI).
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
import { openTransaction, plantHangingTransaction } from './transaction-fixtures.js';

const skip = kafkaSkipReason();
const TOPIC = 'payments';
const OPEN_TXN = 'open-payments';
/** A producer id no coordinator gave out. */
const HANGING_PRODUCER = 777_777;

let running: RunningBroker;
let client: WireClient;
let dir: string;
let openProducerId: number;

const tool = async (...args: string[]) => {
  const result = await runKafkaTool(TOOL.transactions, ['--bootstrap-server', running.bootstrapServers, ...args]);
  assert.equal(result.code, 0, `kafka-transactions.sh ${args.join(' ')}: ${result.stderr}${result.stdout}`);
  return result.stdout.trim().split('\n').map((line) => line.trim().split(/\s+/));
};

const lastStableOffset = async () => {
  const listed = await call(client, ListOffsets, 7, { replicaId: -1, isolationLevel: 1, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
  return listed.topics[0]!.partitions[0]!.offset;
};

before(async () => {
  if (skip !== undefined) return;
  dir = await mkdtemp(join(tmpdir(), 'spool-txn-tool-'));
  running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  const [created] = await running.broker.controller.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
  assert.equal(created!.errorCode, ErrorCode.NONE);
  client = await WireClient.connect(running.bootstrapServers);

  await plantHangingTransaction(running, TOPIC, HANGING_PRODUCER); // offset 0
  openProducerId = await openTransaction(client, TOPIC, OPEN_TXN); // offset 1
});

after(async () => {
  if (skip !== undefined) return;
  client.close();
  await running.stop();
  await rm(dir, { recursive: true, force: true });
});

test('kafka-transactions.sh lists, describes, finds the hanging transaction and aborts it on Spool', { skip: skip ?? false, timeout: 300_000 }, async () => {
  assert.equal(await lastStableOffset(), 0, 'the hanging transaction holds read_committed consumers at its start');

  const listed = await tool('list');
  assert.deepEqual(listed[0], ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState']);
  assert.deepEqual(listed.slice(1), [[OPEN_TXN, '1', String(openProducerId), 'Ongoing']]);

  const described = await tool('describe', '--transactional-id', OPEN_TXN);
  assert.deepEqual(described[0], ['CoordinatorId', 'TransactionalId', 'ProducerId', 'ProducerEpoch', 'TransactionState', 'TransactionTimeoutMs', 'CurrentTransactionStartTimeMs', 'TransactionDurationMs', 'TopicPartitions']);
  const row = described[1]!;
  assert.deepEqual([row[0], row[1], row[2], row[3], row[4], row[5], row.at(-1)], ['1', OPEN_TXN, String(openProducerId), '0', 'Ongoing', '600000', `${TOPIC}-0`]);

  const producers = await tool('describe-producers', '--topic', TOPIC, '--partition', '0');
  assert.deepEqual(producers[0], ['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset']);
  const startOffsets = new Map(producers.slice(1).map((r) => [Number(r[0]), r[5]]));
  assert.deepEqual(startOffsets, new Map([[HANGING_PRODUCER, '0'], [openProducerId, '1']]));

  const hanging = await tool('find-hanging', '--topic', TOPIC, '--max-transaction-timeout', '0');
  assert.deepEqual(hanging[0], ['Topic', 'Partition', 'ProducerId', 'ProducerEpoch', 'CoordinatorEpoch', 'StartOffset', 'LastTimestamp', 'Duration(min)']);
  assert.deepEqual(hanging.slice(1).map((r) => r.slice(0, 6)), [[TOPIC, '0', String(HANGING_PRODUCER), '0', '-1', '0']]);

  await tool('abort', '--topic', TOPIC, '--partition', '0', '--start-offset', '0');
  assert.equal(await lastStableOffset(), 1, 'read_committed consumers now stop at the open transaction');
  const after = await tool('describe-producers', '--topic', TOPIC, '--partition', '0');
  assert.equal(new Map(after.slice(1).map((r) => [Number(r[0]), r[5]])).get(HANGING_PRODUCER), 'None');
  assert.deepEqual((await tool('find-hanging', '--topic', TOPIC, '--max-transaction-timeout', '0')).slice(1), []);
});
