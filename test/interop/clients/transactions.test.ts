/**
 * Transactions with the real Java client (kafka-clients 4.4.0,
 * test/interop/java-client/src/TxnDriver.java) against a real Spool process;
 * with SPOOL_TXN_BROKER=kafka the same checks run against Kafka 4.4
 * (test/interop/kafka), to show the expectations are Kafka's.
 *
 * - The last stable offset: records "0" committed, "1" aborted, "2" left
 *   open, "3" committed: a read_committed consumer sees [0] (its end offset
 *   is the LSO, before "2"), and [0, 2, 3] once "2" commits; read_uncommitted
 *   sees all four.
 * - An aborted transaction is invisible to read_committed.
 * - A zombie: a second producer with the same transactional.id fences the
 *   first, whose open transaction is aborted and whose commit fails.
 * - Consume-transform-produce: 1000 records copied in transactions of 75
 *   with sendOffsetsToTransaction; the output holds each input value exactly
 *   once, and the group's committed offset is the input's end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { javaDriverArgs, javaDriverMissing } from './java-client.js';
import { missingToolSkip } from './scenario.js';
import { startSpool } from './spool-process.js';
import { startKafka } from '../kafka/kafka.js';

const run = promisify(execFile);
const JAVA_TIMEOUT_MS = 180_000;

interface Broker {
  bootstrap: string;
  output(): string;
  stop(): Promise<void>;
}

async function startBroker(): Promise<Broker> {
  if (process.env.SPOOL_TXN_BROKER === 'kafka') {
    const kafka = await startKafka();
    return { bootstrap: kafka.bootstrap, output: () => '', stop: () => kafka.stop() };
  }
  const spool = await startSpool();
  return {
    bootstrap: spool.bootstrap,
    output: () => spool.output(),
    async stop() {
      assert.equal(await spool.stop(), 0, 'spool exits 0 on SIGTERM');
    },
  };
}

/** Runs a driver (TxnDriver or ClientDriver) and returns its stdout lines. */
async function java(main: 'TxnDriver' | 'ClientDriver', args: readonly string[], broker: Broker): Promise<string[]> {
  const [first, ...rest] = javaDriverArgs([]);
  const argv = [first!, ...rest.slice(0, -1), main, ...args];
  try {
    const { stdout } = await run('java', argv, { timeout: JAVA_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim().split('\n');
  } catch (error) {
    throw new Error(`${main} ${args.join(' ')} failed: ${(error as Error).message}\nbroker output:\n${broker.output().slice(-4000)}`);
  }
}

test('transactions with the Java client: LSO, aborted records, zombie fencing, consume-transform-produce', { timeout: 600_000 }, async (t) => {
  const missing = javaDriverMissing();
  const skip = missingToolSkip(missing === undefined, missing ?? '');
  if (skip !== undefined) return t.skip(skip);
  const broker = await startBroker();
  try {
    await t.test('read_committed stops at the last stable offset, then sees the open transaction once it commits', async () => {
      const lines = (await java('TxnDriver', ['lso', broker.bootstrap, 'lso-example'], broker)).map((line) => JSON.parse(line) as { phase: string; values: string[] });
      assert.deepEqual(lines, [
        { phase: 'open', values: ['0'] },
        { phase: 'committed', values: ['0', '2', '3'] },
        { phase: 'uncommitted', values: ['0', '1', '2', '3'] },
      ]);
    });

    await t.test('an aborted transaction is invisible to read_committed', async () => {
      const [line] = await java('TxnDriver', ['abort-invisible', broker.bootstrap, 'aborted', 'txn-aborted'], broker);
      assert.deepEqual(JSON.parse(line!), { committed: ['a', 'c'], uncommitted: ['a', 'b', 'c'] });
    });

    await t.test('a zombie producer is fenced by a new one with its transactional.id and writes nothing', async () => {
      const [line] = await java('TxnDriver', ['zombie', broker.bootstrap, 'zombie', 'txn-zombie'], broker);
      const report = JSON.parse(line!) as { zombieError: string; committed: string[] };
      assert.deepEqual(report.committed, ['fresh']);
      assert.ok(['ProducerFencedException', 'InvalidProducerEpochException'].includes(report.zombieError), `zombie failed with ${report.zombieError}`);
    });

    await t.test('consume-transform-produce copies every record exactly once and commits the offsets in the transactions', async () => {
      const count = 1000;
      await java('ClientDriver', ['sequence', broker.bootstrap, 'copy-in', String(count)], broker);
      const [report] = await java('TxnDriver', ['copy', broker.bootstrap, 'copy-in', 'copy-out', 'copier', 'txn-copier', String(count), '75'], broker);
      const { copied, committed } = JSON.parse(report!) as { copied: number; committed: number };
      assert.deepEqual({ copied, committed }, { copied: count, committed: count });
      const dumped = await java('ClientDriver', ['dump', broker.bootstrap, 'copy-out', '1'], broker);
      const values = dumped.filter((line) => !line.startsWith('end ')).map((line) => line.split(' ')[2]);
      assert.deepEqual([...values].sort(), Array.from({ length: count }, (_, i) => String(i)).sort(), 'each value exactly once');
    });
  } finally {
    await broker.stop();
  }
});
