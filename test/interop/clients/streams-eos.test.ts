/**
 * Kafka Streams 4.4.0 with processing.guarantee=exactly_once_v2 against a
 * Spool broker process: a word count (test/interop/streams/src/WordCount.java,
 * no record cache, so every input word makes one count update) over four
 * rounds of input, with the application killed (kill -9) and restarted,
 * the broker killed (kill -9) and restarted, and the application stopped
 * cleanly (SIGTERM) and restarted between them.
 *
 * Proves: each word's read_committed output is exactly 1, 2, ..., N, its
 * exact count: no update lost and none applied twice, through restarts of
 * the application and of Spool.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Admin } from '../../../src/client/admin.js';
import { Consumer } from '../../../src/client/consumer.js';
import { Producer } from '../../../src/client/producer.js';
import { hasCommand } from './harness.js';
import { missingToolSkip } from './scenario.js';
import { freePort, startSpool, type SpoolProcess } from './spool-process.js';

const STREAMS_DIR = fileURLToPath(new URL('../../../../test/interop/streams/', import.meta.url));
const WORDS = ['kafka', 'spool', 'stream', 'exactly', 'once', 'count', 'word'];
const LINES_PER_ROUND = 200;
const WORDS_PER_LINE = 5;
const WAIT_MS_MAX = 150_000;
const INPUT = 'streams-lines';
const OUTPUT = 'streams-counts';

/** One round's lines: word i of line j is WORDS[(j * 3 + i * 5 + round) % WORDS.length]. */
function lines(round: number): string[] {
  return Array.from({ length: LINES_PER_ROUND }, (_, j) => Array.from({ length: WORDS_PER_LINE }, (_, i) => WORDS[(j * 3 + i * 5 + round) % WORDS.length]!).join(' '));
}

class WordCountApp {
  private child: ChildProcess | null = null;
  output = '';

  constructor(private readonly bootstrap: string, private readonly stateDir: string) {}

  /** Starts the application; resolves once it reports RUNNING. */
  start(): Promise<void> {
    const child = spawn('java', ['-Xmx384m', '-XX:TieredStopAtLevel=1', '-cp', `${STREAMS_DIR}lib/*:${STREAMS_DIR}classes`, 'WordCount', this.bootstrap, 'spool-word-count', INPUT, OUTPUT, this.stateDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stderr!.on('data', (data: Buffer) => { this.output = (this.output + data.toString()).slice(-4000); });
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        this.output = (this.output + line + '\n').slice(-4000);
        if (line.includes('"RUNNING"')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`WordCount exited with ${code} before RUNNING:\n${this.output}`)));
    });
  }

  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

test('Kafka Streams exactly_once_v2 word count: exact counts through application and broker restarts', { timeout: WAIT_MS_MAX * 3 }, async (t) => {
  const ready = hasCommand('java') && existsSync(`${STREAMS_DIR}classes/WordCount.class`);
  const skip = missingToolSkip(ready, `java or the Streams word count missing: run ${STREAMS_DIR}ci-setup.sh`);
  if (skip !== undefined) return t.skip(skip);

  const dir = mkdtempSync(join(tmpdir(), 'spool-streams-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'spool-streams-state-'));
  const port = await freePort();
  let spool: SpoolProcess = await startSpool({ dir, port });
  const bootstrap = `127.0.0.1:${port}`;
  const app = new WordCountApp(bootstrap, stateDir);
  const expected = new Map<string, number>();
  const updates = new Map<string, number[]>();
  const consumer = new Consumer({ bootstrapServers: bootstrap, isolationLevel: 'read_committed', autoOffsetReset: 'earliest', requestTimeoutMs: 10_000 });
  const produceRound = async (round: number) => {
    const producer = new Producer({ bootstrapServers: bootstrap });
    await Promise.all(lines(round).map((value) => producer.send({ topic: INPUT, value })));
    await producer.close();
    for (const line of lines(round)) for (const word of line.split(' ')) expected.set(word, (expected.get(word) ?? 0) + 1);
  };
  /** Reads the output until every word's latest count is the expected one. */
  const countsReach = async (what: string) => {
    const started = Date.now();
    const caughtUp = () => [...expected].every(([word, count]) => updates.get(word)?.at(-1) === count);
    while (!caughtUp()) {
      assert.ok(Date.now() - started < WAIT_MS_MAX, `${what}: counts ${JSON.stringify([...updates].map(([w, c]) => [w, c.at(-1)]))}, expected ${JSON.stringify([...expected])}\n${app.output}`);
      const records = await consumer.poll(500).catch(() => []);
      for (const record of records) {
        const word = record.key!.toString();
        updates.set(word, [...(updates.get(word) ?? []), Number(record.value!.readBigInt64BE(0))]);
      }
    }
  };

  try {
    const admin = new Admin({ bootstrapServers: bootstrap });
    await admin.createTopics([{ name: INPUT, numPartitions: 2, replicationFactor: 1 }, { name: OUTPUT, numPartitions: 2, replicationFactor: 1 }]);
    await admin.close();
    consumer.assign([{ topic: OUTPUT, partition: 0 }, { topic: OUTPUT, partition: 1 }]);

    await app.start();
    await produceRound(0);
    await countsReach('round 0');

    await app.stop('SIGKILL');
    await produceRound(1);
    await app.start();
    await countsReach('round 1, after kill -9 of the application');

    await spool.kill9();
    spool = await startSpool({ dir, port });
    await produceRound(2);
    await countsReach('round 2, after kill -9 of the broker');

    await app.stop('SIGTERM');
    await produceRound(3);
    await app.start();
    await countsReach('round 3, after a clean restart of the application');

    for (const [word, count] of expected) {
      assert.deepEqual(updates.get(word), Array.from({ length: count }, (_, i) => i + 1), `the committed updates of ${word}: each count once, in order`);
    }
  } finally {
    await consumer.close().catch(() => undefined);
    await app.stop('SIGKILL');
    await spool.stop({ keepDir: true });
    rmSync(dir, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  }
});
