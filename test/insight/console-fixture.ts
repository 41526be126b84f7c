/**
 * A live broker with its web console on a free port and a known workload,
 * shared by the console's API and browser tests:
 *
 * - topic `orders` (2 partitions): partition 0 holds 20 keyed records with
 *   headers and timestamps BASE_TIMESTAMP_MS + i s (the log rolled after
 *   the 5th and the 10th), one record
 *   with a binary value and a null key, one whose value is HTML, then an
 *   open transaction of 2 records by TRANSACTIONAL_ID, which holds the last
 *   stable offset at its first offset (its batches carry the current time,
 *   so segment.ms rolls the log there too); partition 1 holds 5 records.
 * - group EMPTY_GROUP: offsets committed by the admin client, no members.
 * - group LIVE_GROUP (its id is markup, to prove the page escapes it): one
 *   classic member owning both partitions, with a committed offset.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { Admin, Consumer, Producer } from '../../src/client/index.js';
import { Partition } from '../../src/replication/partition.js';
import { GROUP_TEST_BROKER_CONFIG } from '../client/group-fixture.js';

export const TOPIC = 'orders';
export const EMPTY_GROUP = 'billing';
export const LIVE_GROUP = 'live <b>members</b>';
export const TRANSACTIONAL_ID = 'stuck-txn';
export const BASE_TIMESTAMP_MS = 1_700_000_000_000;
export const KEYED_RECORDS = 20;
/** Offsets on partition 0. */
export const BINARY_OFFSET = KEYED_RECORDS;
export const HTML_OFFSET = KEYED_RECORDS + 1;
export const OPEN_TXN_FIRST_OFFSET = KEYED_RECORDS + 2;
export const PARTITION_0_END_OFFSET = OPEN_TXN_FIRST_OFFSET + 2;
export const PARTITION_1_RECORDS = 5;
export const BINARY_VALUE = Buffer.from([0xff, 0xfe, 0x00, 0x01]);
export const HTML_VALUE = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>';
export const EMPTY_GROUP_OFFSETS = [10, 2] as const;
export const LIVE_GROUP_OFFSET = 5;

export interface ConsoleFixture {
  running: RunningBroker;
  admin: Admin;
  /** http://host:port of the console. */
  consoleUrl: string;
  transactionalProducer: Producer;
  liveMember: Consumer;
  close(): Promise<void>;
}

export async function startConsoleFixture(config: Record<string, string | number | boolean> = {}): Promise<ConsoleFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-console-'));
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1, 'console.listener': 'http://127.0.0.1:0', ...GROUP_TEST_BROKER_CONFIG, ...config }, logger: silentLogger });
  const address = running.broker.consoleListener;
  assert.ok(address !== null, 'console.listener is bound');
  const admin = new Admin({ bootstrapServers: running.bootstrapServers });
  await admin.createTopics([{ name: TOPIC, numPartitions: 2, replicationFactor: 1 }]);

  const producer = new Producer({ bootstrapServers: running.bootstrapServers, lingerMs: 0 });
  for (let i = 0; i < KEYED_RECORDS; i++) {
    await producer.send({ topic: TOPIC, partition: 0, key: `key-${i}`, value: `value-${i}`, headers: { trace: `t-${i}` }, timestamp: BASE_TIMESTAMP_MS + i * 1000 });
    if (i === 4 || i === 9) await localPartition(running, 0).log.roll();
  }
  await producer.send({ topic: TOPIC, partition: 0, key: null, value: BINARY_VALUE, timestamp: BASE_TIMESTAMP_MS + KEYED_RECORDS * 1000 });
  await producer.send({ topic: TOPIC, partition: 0, key: 'html', value: HTML_VALUE, timestamp: BASE_TIMESTAMP_MS + (KEYED_RECORDS + 1) * 1000 });
  for (let i = 0; i < PARTITION_1_RECORDS; i++) await producer.send({ topic: TOPIC, partition: 1, key: `p1-${i}`, value: `v-${i}` });
  await producer.close();

  const transactionalProducer = new Producer({ bootstrapServers: running.bootstrapServers, transactionalId: TRANSACTIONAL_ID, lingerMs: 0 });
  await transactionalProducer.initTransactions();
  transactionalProducer.beginTransaction();
  await transactionalProducer.send({ topic: TOPIC, partition: 0, key: 'txn-0', value: 'pending' });
  await transactionalProducer.send({ topic: TOPIC, partition: 0, key: 'txn-1', value: 'pending' });

  await admin.alterConsumerGroupOffsets(EMPTY_GROUP, EMPTY_GROUP_OFFSETS.map((offset, partition) => ({ topic: TOPIC, partition, offset })));

  const liveMember = new Consumer({ bootstrapServers: running.bootstrapServers, groupId: LIVE_GROUP, groupProtocol: 'classic', clientId: 'console-live', autoOffsetReset: 'earliest' });
  liveMember.subscribe([TOPIC]);
  for (let polls = 0; polls < 120 && liveMember.assignment().length < 2; polls++) await liveMember.poll(250);
  assert.equal(liveMember.assignment().length, 2, 'the live member owns both partitions');
  await liveMember.commitSync([{ topic: TOPIC, partition: 0, offset: LIVE_GROUP_OFFSET }]);

  return {
    running,
    admin,
    consoleUrl: `http://127.0.0.1:${address.port}`,
    transactionalProducer,
    liveMember,
    close: async () => {
      await liveMember.close();
      await transactionalProducer.close();
      await admin.close();
      await running.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function localPartition(running: RunningBroker, partition: number): Partition {
  const found = running.broker.replicaManager.getPartitionOrError({ topic: TOPIC, partition });
  assert.ok(found instanceof Partition, `${TOPIC}-${partition} is hosted`);
  return found;
}

/** GET a console API path; the parsed body and status. */
export async function getJson(consoleUrl: string, path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${consoleUrl}/api/${path}`);
  return { status: response.status, body: await response.json() };
}

export async function postJson(consoleUrl: string, path: string, body: unknown = {}, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${consoleUrl}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}
