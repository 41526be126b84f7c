/**
 * kafkajs 2.x transactions driver for transactions.test.ts: the same modes,
 * arguments and JSON lines as test/interop/java-client/src/TxnDriver.java
 * (see there). Run as `node kafkajs-txn-driver.js MODE ARGS...`.
 *
 * Transactions are kafkajs's producer.transaction() (idempotent, one
 * in-flight request, as kafkajs requires); the copier commits the consumed
 * offsets with transaction.sendOffsets. Reads run a group consumer (a fresh
 * group, from the beginning, readUncommitted as the isolation asks) to the
 * end offset the isolation level sees (ListOffsets through kafkajs's cluster
 * at that isolation level: the last stable offset for read_committed),
 * following the position by kafkajs's END_BATCH_PROCESS events, which also
 * cover batches of markers and aborted records only.
 */
import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';

const require = createRequire(import.meta.url);
const { Kafka, logLevel } = kafkajs;
/** kafkajs internals (no types): a cluster at a chosen isolation level, for ListOffsets. */
const Cluster = require('kafkajs/src/cluster') as new (options: Record<string, unknown>) => {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  fetchTopicsOffset(topics: { topic: string; partitions: { partition: number }[] }[]): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
};
const socketFactory = require('kafkajs/src/network/socketFactory') as () => unknown;
const { createLogger, LEVELS } = require('kafkajs/src/loggers') as { createLogger(options: Record<string, unknown>): unknown; LEVELS: { NOTHING: number } };

const TIMEOUT_MS = 60_000;

function kafka(bootstrap: string) {
  return new Kafka({ clientId: 'spool-txn-driver', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 10 } });
}

async function producer(bootstrap: string, transactionalId: string) {
  const p = kafka(bootstrap).producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
  await p.connect();
  return p;
}

type Producer = Awaited<ReturnType<typeof producer>>;

async function write(p: Producer, topic: string, value: string, commit: boolean): Promise<void> {
  const transaction = await p.transaction();
  await transaction.send({ topic, messages: [{ value, partition: 0 }] });
  await (commit ? transaction.commit() : transaction.abort());
}

/** The end offset of partition 0 at the isolation level: 1 read_committed (the LSO), 0 read_uncommitted (the high watermark). */
async function endOffset(bootstrap: string, topic: string, isolationLevel: number): Promise<number> {
  const logger = createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined });
  const cluster = new Cluster({ logger, brokers: [bootstrap], socketFactory: socketFactory(), clientId: 'spool-txn-offsets', isolationLevel, retry: { retries: 5 } });
  await cluster.connect();
  try {
    await cluster.addTargetTopic(topic);
    const [listed] = await cluster.fetchTopicsOffset([{ topic, partitions: [{ partition: 0 }] }]);
    return Number(listed!.partitions.find((p) => p.partition === 0)!.offset);
  } finally {
    await cluster.disconnect();
  }
}

let readers = 0;

async function readAll(bootstrap: string, topic: string, committed: boolean): Promise<string[]> {
  const end = await endOffset(bootstrap, topic, committed ? 1 : 0);
  if (end === 0) return [];
  const consumer = kafka(bootstrap).consumer({ groupId: `txn-driver-reader-${process.pid}-${readers++}`, readUncommitted: !committed });
  const values: string[] = [];
  let position = 0;
  let done!: () => void;
  let failed!: (error: Error) => void;
  const finished = new Promise<void>((resolve, reject) => { done = resolve; failed = reject; });
  const timer = setTimeout(() => failed(new Error(`read ${topic}-0 to ${end}: stopped at ${position}`)), TIMEOUT_MS);
  consumer.on(consumer.events.END_BATCH_PROCESS, (event: { payload: { partition: number; lastOffset: string } }) => {
    if (event.payload.partition !== 0) return;
    position = Math.max(position, Number(event.payload.lastOffset) + 1);
    if (position >= end) done();
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      if (partition === 0 && Number(message.offset) < end) values.push(message.value!.toString());
    },
  });
  try {
    await finished;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return values;
}

async function lso(bootstrap: string, topic: string): Promise<void> {
  const [committed, aborted, open, later] = await Promise.all(['committed', 'aborted', 'open', 'later'].map((name) => producer(bootstrap, `${topic}-${name}`)));
  await write(committed!, topic, '0', true);
  await write(aborted!, topic, '1', false);
  const transaction = await open!.transaction();
  await transaction.send({ topic, messages: [{ value: '2', partition: 0 }] });
  await write(later!, topic, '3', true);
  console.log(JSON.stringify({ phase: 'open', values: await readAll(bootstrap, topic, true) }));
  await transaction.commit();
  console.log(JSON.stringify({ phase: 'committed', values: await readAll(bootstrap, topic, true) }));
  console.log(JSON.stringify({ phase: 'uncommitted', values: await readAll(bootstrap, topic, false) }));
  for (const p of [committed, aborted, open, later]) await p!.disconnect();
}

async function abortInvisible(bootstrap: string, topic: string, transactionalId: string): Promise<void> {
  const p = await producer(bootstrap, transactionalId);
  await write(p, topic, 'a', true);
  await write(p, topic, 'b', false);
  await write(p, topic, 'c', true);
  await p.disconnect();
  console.log(JSON.stringify({ committed: await readAll(bootstrap, topic, true), uncommitted: await readAll(bootstrap, topic, false) }));
}

/** The Kafka error a kafkajs failure carries (kafkajs names them by type: PRODUCER_FENCED, ...). */
function errorName(error: unknown): string {
  const e = error as { type?: string; originalError?: { type?: string }; message?: string };
  return e.type ?? e.originalError?.type ?? e.message ?? String(error);
}

async function zombie(bootstrap: string, topic: string, transactionalId: string): Promise<void> {
  const old = await producer(bootstrap, transactionalId);
  const transaction = await old.transaction();
  await transaction.send({ topic, messages: [{ value: 'zombie', partition: 0 }] });
  const fresh = await producer(bootstrap, transactionalId);
  await write(fresh, topic, 'fresh', true);
  let zombieError = 'none';
  try {
    await transaction.send({ topic, messages: [{ value: 'zombie-2', partition: 0 }] });
    await transaction.commit();
  } catch (error) {
    zombieError = errorName(error);
  }
  await fresh.disconnect();
  await old.disconnect().catch(() => undefined);
  console.log(JSON.stringify({ zombieError, committed: await readAll(bootstrap, topic, true) }));
}

async function copy(bootstrap: string, source: string, target: string, group: string, transactionalId: string, count: number, perTxn: number): Promise<void> {
  const client = kafka(bootstrap);
  const p = await producer(bootstrap, transactionalId);
  const consumer = client.consumer({ groupId: group, readUncommitted: false });
  let copied = 0;
  let transactions = 0;
  let done!: () => void;
  let failed!: (error: Error) => void;
  const finished = new Promise<void>((resolve, reject) => { done = resolve; failed = reject; });
  const timer = setTimeout(() => failed(new Error(`copied ${copied} of ${count}`)), 120_000);
  await consumer.connect();
  await consumer.subscribe({ topic: source, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset }) => {
      for (let start = 0; start < batch.messages.length; start += perTxn) {
        const messages = batch.messages.slice(start, start + perTxn);
        const transaction = await p.transaction();
        await transaction.send({ topic: target, messages: messages.map((m) => ({ key: m.key, value: m.value!.toString().toUpperCase() })) });
        const next = String(Number(messages.at(-1)!.offset) + 1);
        await transaction.sendOffsets({ consumerGroupId: group, topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
        await transaction.commit();
        for (const m of messages) resolveOffset(m.offset);
        transactions++;
        copied += messages.length;
      }
      if (copied >= count) done();
    },
  });
  try {
    await finished;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
    await p.disconnect();
  }
  const admin = client.admin();
  await admin.connect();
  const fetched = await admin.fetchOffsets({ groupId: group, topics: [source] });
  await admin.disconnect();
  const committed = fetched.flatMap((topic) => topic.partitions).reduce((sum, partition) => sum + Math.max(0, Number(partition.offset)), 0);
  console.log(JSON.stringify({ copied, transactions, committed }));
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  switch (mode) {
    case 'lso':
      return lso(args[0]!, args[1]!);
    case 'abort-invisible':
      return abortInvisible(args[0]!, args[1]!, args[2]!);
    case 'zombie':
      return zombie(args[0]!, args[1]!, args[2]!);
    case 'copy':
      return copy(args[0]!, args[1]!, args[2]!, args[3]!, args[4]!, Number(args[5]), Number(args[6]));
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
