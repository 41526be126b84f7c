/**
 * Transactions with real clients against a real Spool process; with
 * SPOOL_TXN_BROKER=kafka the same checks run against Kafka 4.4
 * (test/interop/kafka), to show the expectations are Kafka's
 * (SPOOL_TXN_CLIENTS=a,b runs only those clients). Clients:
 * the Java client (kafka-clients 4.4.0, test/interop/java-client/src/TxnDriver.java;
 * Transactions V2, as Spool finalizes transaction.version 2 like Kafka)
 * and librdkafka through confluent-kafka-python (test/interop/python/txn_driver.py):
 * Debian's (librdkafka 2.0) and PyPI's (a current librdkafka, in the venv of
 * test/interop/groups); franz-go (test/interop/go/txn/main.go, its copier a
 * kgo.GroupTransactSession); kafkajs 2.x (kafkajs-txn-driver.ts). Every
 * client runs, on its own topics:
 *
 * - The last stable offset: records "0" committed, "1" aborted, "2" left
 *   open, "3" committed: a read_committed consumer sees [0] (its end offset
 *   is the LSO, before "2"), and [0, 2, 3] once "2" commits; read_uncommitted
 *   sees all four.
 * - An aborted transaction is invisible to read_committed.
 * - A zombie: a second producer with the same transactional.id fences the
 *   first, whose open transaction is aborted and whose commit fails.
 * - Consume-transform-produce: 1000 records (written by the idempotent Java
 *   producer) copied in transactions of at most 75 with the consumed offsets
 *   sent in each; the output holds each input value exactly once and the
 *   group's committed offset (OffsetFetch with require_stable) is the
 *   input's end.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { javaDriverArgs, javaDriverMissing } from './java-client.js';
import { DEBIAN_PYTHON, PYPI_PYTHON, pythonHas } from './python.js';
import { missingToolSkip } from './scenario.js';
import { startSpool } from './spool-process.js';
import { startKafka } from '../kafka/kafka.js';

const run = promisify(execFile);
const DRIVER_TIMEOUT_MS = 180_000;
const COPY_RECORDS = 1000;
const PYTHON_DRIVER = fileURLToPath(new URL('../../../../test/interop/python/txn_driver.py', import.meta.url));
const KAFKAJS_DRIVER = fileURLToPath(new URL('./kafkajs-txn-driver.js', import.meta.url));
const FRANZ_DRIVER = fileURLToPath(new URL('../../../../test/interop/go/bin/franz-txn', import.meta.url));

interface Broker {
  bootstrap: string;
  output(): string;
  stop(): Promise<void>;
}

interface TxnClient {
  name: string;
  missing(): string | undefined;
  /** The command running one mode of the client's transactional driver. */
  command(args: readonly string[]): { file: string; args: string[] };
}

const javaCommand = (main: string, args: readonly string[]) => {
  const base = javaDriverArgs([]);
  return { file: 'java', args: [...base.slice(0, -1), main, ...args] };
};

const pythonClient = (name: string, python: string): TxnClient => ({
  name,
  missing: () => (pythonHas(['confluent_kafka'], python) ? undefined : `${python} cannot import confluent_kafka: run test/interop/groups/ci-setup.sh`),
  command: (args) => ({ file: python, args: [PYTHON_DRIVER, ...args] }),
});

const CLIENTS: TxnClient[] = [
  { name: 'java', missing: javaDriverMissing, command: (args) => javaCommand('TxnDriver', args) },
  pythonClient('librdkafka-debian', DEBIAN_PYTHON),
  pythonClient('librdkafka-pypi', PYPI_PYTHON),
  {
    name: 'franz-go',
    missing: () => (existsSync(FRANZ_DRIVER) ? undefined : `${FRANZ_DRIVER} is not built: run test/interop/go/ci-setup.sh`),
    command: (args) => ({ file: FRANZ_DRIVER, args: [...args] }),
  },
  { name: 'kafkajs', missing: () => undefined, command: (args) => ({ file: process.execPath, args: [KAFKAJS_DRIVER, ...args] }) },
];

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

async function lines(command: { file: string; args: string[] }, broker: Broker): Promise<string[]> {
  try {
    const { stdout } = await run(command.file, command.args, { timeout: DRIVER_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim().split('\n');
  } catch (error) {
    throw new Error(`${command.args.join(' ')} failed: ${(error as Error).message}\nbroker output:\n${broker.output().slice(-4000)}`);
  }
}

async function checkClient(t: TestContext, client: TxnClient, broker: Broker): Promise<void> {
  const name = client.name;
  const driver = (args: readonly string[]) => lines(client.command(args), broker);
  await t.test(`${name}: read_committed stops at the last stable offset, then sees the open transaction once it commits`, async () => {
    const phases = (await driver(['lso', broker.bootstrap, `${name}-lso`])).map((line) => JSON.parse(line) as unknown);
    assert.deepEqual(phases, [
      { phase: 'open', values: ['0'] },
      { phase: 'committed', values: ['0', '2', '3'] },
      { phase: 'uncommitted', values: ['0', '1', '2', '3'] },
    ]);
  });
  await t.test(`${name}: an aborted transaction is invisible to read_committed`, async () => {
    const [line] = await driver(['abort-invisible', broker.bootstrap, `${name}-aborted`, `${name}-txn-aborted`]);
    assert.deepEqual(JSON.parse(line!), { committed: ['a', 'c'], uncommitted: ['a', 'b', 'c'] });
  });
  await t.test(`${name}: a zombie producer is fenced by a new one with its transactional.id and writes nothing`, async () => {
    const [line] = await driver(['zombie', broker.bootstrap, `${name}-zombie`, `${name}-txn-zombie`]);
    const report = JSON.parse(line!) as { zombieError: string; committed: string[] };
    assert.deepEqual(report.committed, ['fresh']);
    const fenced = ['ProducerFencedException', 'InvalidProducerEpochException', '_FENCED', 'PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH'];
    assert.ok(fenced.includes(report.zombieError), `zombie failed with ${report.zombieError}`);
  });
  await t.test(`${name}: consume-transform-produce copies every record exactly once and commits the offsets in the transactions`, async () => {
    const input = `${name}-copy-in`;
    const output = `${name}-copy-out`;
    await lines(javaCommand('ClientDriver', ['sequence', broker.bootstrap, input, String(COPY_RECORDS)]), broker);
    const [report] = await driver(['copy', broker.bootstrap, input, output, `${name}-copier`, `${name}-txn-copier`, String(COPY_RECORDS), '75']);
    const { copied, committed } = JSON.parse(report!) as { copied: number; committed: number };
    assert.deepEqual({ copied, committed }, { copied: COPY_RECORDS, committed: COPY_RECORDS });
    const dumped = await lines(javaCommand('ClientDriver', ['dump', broker.bootstrap, output, '1']), broker);
    const values = dumped.filter((line) => !line.startsWith('end ')).map((line) => line.split(' ')[2]);
    assert.deepEqual([...values].sort(), Array.from({ length: COPY_RECORDS }, (_, i) => String(i)).sort(), 'each value exactly once');
  });
}

test('transactions with real clients: LSO, aborted records, zombie fencing, consume-transform-produce', { timeout: 900_000 }, async (t) => {
  const javaMissing = javaDriverMissing();
  const skip = missingToolSkip(javaMissing === undefined, javaMissing ?? '');
  if (skip !== undefined) return t.skip(skip);
  const broker = await startBroker();
  try {
    // SPOOL_TXN_CLIENTS=java,kafkajs runs only the clients named.
    const only = process.env.SPOOL_TXN_CLIENTS?.split(',');
    for (const client of CLIENTS.filter((c) => only === undefined || only.includes(c.name))) {
      const missing = client.missing();
      if (missing !== undefined) {
        const reason = missingToolSkip(false, missing)!;
        await t.test(client.name, (sub) => sub.skip(reason));
        continue;
      }
      await checkClient(t, client, broker);
    }
  } finally {
    await broker.stop();
  }
});
