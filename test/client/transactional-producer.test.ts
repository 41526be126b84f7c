/**
 * Spool's transactional producer against a real Spool broker, twice: a
 * cluster at transaction.version 2 (Transactions V2, as a new cluster is
 * formatted: partitions added by Produce, an epoch bump per EndTxn) and one
 * formatted at transaction.version 1 (AddPartitionsToTxn, AddOffsetsToTxn).
 *
 * - The last stable offset, as the literature tells it: transactions 0
 *   committed, 1 aborted, 2 still open, 3 committed. A read_committed
 *   consumer sees [0] until 2 commits, then [0, 2, 3]; read_uncommitted
 *   sees all four; aborted records never reach read_committed.
 * - Zombie fencing: a second producer with the same transactional id fences
 *   the first, whose send and commit then fail with PRODUCER_FENCED or
 *   INVALID_PRODUCER_EPOCH, and whose records are never visible.
 * - Consume-transform-produce: offsets sent in a committed transaction are
 *   the group's committed offsets; in an aborted one they are not.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerRecord } from '../../src/client/consumer.js';
import { KafkaError } from '../../src/client/errors.js';
import { Producer } from '../../src/client/producer.js';
import { BrokerConfig, SINGLE_NODE_DEFAULTS } from '../../src/common/config.js';
import { createLogger, silentLogger } from '../../src/common/logger.js';
import { realEnv } from '../../src/io/env.js';
import { randomUuid } from '../../src/metadata/meta-properties.js';
import { formatStorage } from '../../src/node/formatter.js';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const LISTENERS = { listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0' };
/** Bound on every wait for records (generous: the machine is shared). */
const WAIT_MS_MAX = 60_000;

async function startAt(transactionVersion: 1 | 2): Promise<{ running: RunningBroker; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), `spool-txn-producer-v${transactionVersion}-`));
  const config = { ...SINGLE_NODE_DEFAULTS, ...LISTENERS, 'log.dirs': dir, 'node.id': 1, 'num.partitions': 1 };
  if (transactionVersion === 1) {
    await formatStorage(realEnv, BrokerConfig.fromObject(config), { clusterId: randomUuid(realEnv.random), initialVoters: { kind: 'standalone' }, features: new Map([['transaction.version', 1]]), ignoreFormatted: false });
  }
  const logger = process.env.SPOOL_TEST_BROKER_LOG === '1' ? createLogger({ name: `v${transactionVersion}`, level: 'warn', sink: (line) => process.stderr.write(`${line}\n`) }) : silentLogger;
  return { running: await startBroker({ config, logger }), dir };
}

for (const transactionVersion of [2, 1] as const) {
  describe(`transaction.version ${transactionVersion}`, () => {
    let running: RunningBroker;
    let dir: string;
    let admin: Admin;
    const closing: { close(): Promise<void> }[] = [];
    let topics = 0;

    const newTopic = async () => {
      const name = `txn-v${transactionVersion}-${++topics}`;
      await admin.createTopics([{ name, numPartitions: 1, replicationFactor: 1 }]);
      return name;
    };
    const producer = async (transactionalId: string) => {
      const made = new Producer({ bootstrapServers: running.bootstrapServers, transactionalId, lingerMs: 0 });
      closing.push(made);
      await made.initTransactions();
      return made;
    };
    const consumer = (topic: string, isolationLevel: 'read_committed' | 'read_uncommitted', groupId?: string) => {
      const made = new Consumer({ bootstrapServers: running.bootstrapServers, isolationLevel, ...(groupId === undefined ? {} : { groupId }), autoOffsetReset: 'earliest', enableAutoCommit: false });
      closing.push(made);
      made.assign([{ topic, partition: 0 }]);
      return made;
    };
    /** Polls until the consumer's position reaches `offset`; returns the values read. */
    const readUpTo = async (reader: Consumer, topic: string, offset: number, seen: string[] = []) => {
      const tp = { topic, partition: 0 };
      const started = Date.now();
      while ((await reader.position(tp)) < offset) {
        assert.ok(Date.now() - started < WAIT_MS_MAX, `position ${await reader.position(tp)} never reached ${offset}`);
        seen.push(...(await reader.poll(500)).map((r: ConsumerRecord) => r.value!.toString()));
      }
      return seen;
    };
    const endOffset = async (topic: string, isolationLevel: 'read_committed' | 'read_uncommitted') =>
      (await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }], { isolationLevel }))[0]!.offset;
    /**
     * The last stable offset once it reached `expected`, or the high
     * watermark once they agree (EndTxn answers before its markers are
     * written, so an ended transaction holds both back briefly).
     */
    const lastStableOffset = async (topic: string, expected: number | 'highWatermark') => {
      const started = Date.now();
      for (;;) {
        const offset = await endOffset(topic, 'read_committed');
        const target = expected === 'highWatermark' ? await endOffset(topic, 'read_uncommitted') : expected;
        if (offset >= target || Date.now() - started > WAIT_MS_MAX) return { offset, target };
        await new Promise((resolve) => setImmediate(resolve));
      }
    };

    before(async () => {
      ({ running, dir } = await startAt(transactionVersion));
      admin = new Admin({ bootstrapServers: running.bootstrapServers });
      assert.equal(running.broker.metadata.image.features.get('transaction.version'), transactionVersion);
    });

    after(async () => {
      for (const made of closing) await made.close();
      await admin.close();
      await running.stop();
      await rm(dir, { recursive: true, force: true });
    });

    test('read_committed stops at the open transaction: [0], then [0, 2, 3] once it commits', async () => {
      const topic = await newTopic();
      const first = await producer(`lso-first-v${transactionVersion}`);
      first.beginTransaction();
      await first.send({ topic, value: '0' });
      await first.commitTransaction();
      first.beginTransaction();
      await first.send({ topic, value: '1' });
      await first.abortTransaction();
      const open = await producer(`lso-open-v${transactionVersion}`);
      open.beginTransaction();
      const openOffset = (await open.send({ topic, value: '2' })).offset;
      const last = await producer(`lso-last-v${transactionVersion}`);
      last.beginTransaction();
      await last.send({ topic, value: '3' });
      await last.commitTransaction();

      const held = await lastStableOffset(topic, openOffset);
      assert.equal(held.offset, openOffset, 'the last stable offset is where the open transaction starts');
      const committed = consumer(topic, 'read_committed');
      const seen = await readUpTo(committed, topic, openOffset);
      assert.deepEqual(seen, ['0']);

      await open.commitTransaction();
      const settled = await lastStableOffset(topic, 'highWatermark');
      assert.equal(settled.offset, settled.target, 'with nothing open the last stable offset is the high watermark');
      const highWatermark = settled.target;
      assert.deepEqual(await readUpTo(committed, topic, highWatermark, seen), ['0', '2', '3']);
      assert.deepEqual(await readUpTo(consumer(topic, 'read_uncommitted'), topic, highWatermark), ['0', '1', '2', '3'], 'read_uncommitted also sees the aborted record');
    });

    test('a second producer with the same transactional id fences the first, which writes nothing', async () => {
      const topic = await newTopic();
      const transactionalId = `zombie-v${transactionVersion}`;
      const zombie = await producer(transactionalId);
      zombie.beginTransaction();
      await zombie.send({ topic, value: 'zombie-before' });

      const successor = await producer(transactionalId);
      const fenced = (error: unknown) => error instanceof KafkaError && (error.code === ErrorCode.PRODUCER_FENCED || error.code === ErrorCode.INVALID_PRODUCER_EPOCH);
      await assert.rejects(zombie.send({ topic, value: 'zombie-after' }), fenced);
      await assert.rejects(zombie.commitTransaction(), fenced);
      await assert.rejects(zombie.send({ topic, value: 'zombie-later' }), fenced, 'fencing is fatal');

      successor.beginTransaction();
      await successor.send({ topic, value: 'successor' });
      await successor.commitTransaction();
      const highWatermark = await endOffset(topic, 'read_uncommitted');
      assert.deepEqual(await readUpTo(consumer(topic, 'read_committed'), topic, highWatermark), ['successor']);
    });

    test('offsets sent to a committed transaction are committed; to an aborted one, not', async () => {
      const input = await newTopic();
      const output = await newTopic();
      const groupId = `copier-v${transactionVersion}`;
      const seed = new Producer({ bootstrapServers: running.bootstrapServers });
      closing.push(seed);
      for (let i = 0; i < 10; i++) await seed.send({ topic: input, value: `r${i}` });

      const source = consumer(input, 'read_committed', groupId);
      const copied = await readUpTo(source, input, 10);
      const copier = await producer(`copier-v${transactionVersion}`);
      const copyRange = async (from: number, to: number, commit: boolean) => {
        copier.beginTransaction();
        for (const value of copied.slice(from, to)) await copier.send({ topic: output, value: `copy-${value}` });
        await copier.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: to }], source.groupMetadata());
        await (commit ? copier.commitTransaction() : copier.abortTransaction());
      };
      await copyRange(0, 5, true);
      await copyRange(5, 10, false);

      const offsets = await admin.listConsumerGroupOffsets(groupId);
      assert.deepEqual(offsets.map((o) => [o.topic, o.partition, o.offset]), [[input, 0, 5]]);
      const highWatermark = await endOffset(output, 'read_uncommitted');
      assert.deepEqual(await readUpTo(consumer(output, 'read_committed'), output, highWatermark), ['r0', 'r1', 'r2', 'r3', 'r4'].map((v) => `copy-${v}`));
    });
  });
}
