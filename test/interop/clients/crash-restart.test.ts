/**
 * kill -9 in the middle of an acks=all idempotent produce, then restart on
 * the same data dir and port: every record the Java producer saw
 * acknowledged is in the log exactly once, at the partition and offset it
 * was acknowledged with, and no record appears twice (the producer's retries
 * of batches in flight at the crash are deduplicated by the restarted
 * broker, which rebuilt producer state from its log).
 *
 * Producer: ClientDriver sequence (kafka-clients 4.4.0), values 0..N-1,
 * retrying for up to two minutes while the broker is down. Reader:
 * ClientDriver dump (assign + seekToBeginning up to the end offsets).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { javaDriverArgs, javaDriverMissing } from './java-client.js';
import { missingToolSkip } from './scenario.js';
import { freePort, startSpool, type SpoolProcess } from './spool-process.js';

const TOPIC = 'crash-sequence';
const PARTITIONS = 3;
const RECORD_COUNT = 30_000;
/** Acknowledged records seen before the kill. */
const KILL_AFTER_ACKS = 4_000;
const OVERRIDES = [`num.partitions=${PARTITIONS}`];

interface Ack { partition: number; offset: number }

test('kill -9 during an acks=all idempotent produce: after restart every acknowledged record is there exactly once', { timeout: 240_000 }, async (t) => {
  const missing = javaDriverMissing();
  const skip = missingToolSkip(missing === undefined, missing ?? '');
  if (skip !== undefined) return t.skip(skip);
  const dir = mkdtempSync(join(tmpdir(), 'spool-crash-'));
  const port = await freePort();
  let spool: SpoolProcess | undefined = await startSpool({ dir, port, overrides: OVERRIDES });
  const producer = spawn('java', javaDriverArgs(['sequence', spool.bootstrap, TOPIC, String(RECORD_COUNT)]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let producerErrors = '';
  producer.stderr.on('data', (data: Buffer) => { producerErrors += data.toString(); });
  try {
    const acks = new Map<number, Ack>();
    const failed: string[] = [];
    let acksAtKill = -1;
    let restarted: Promise<SpoolProcess> | undefined;
    const done = new Promise<void>((resolve, reject) => {
      producer.once('exit', (code) => reject(new Error(`producer exited with ${code} before "done": ${producerErrors}`)));
      createInterface({ input: producer.stdout }).on('line', (line) => {
        const [kind, value, partition, offset] = line.split(' ');
        if (kind === 'ack') {
          assert.ok(!acks.has(Number(value)), `value ${value} acknowledged twice`);
          acks.set(Number(value), { partition: Number(partition), offset: Number(offset) });
        } else if (kind === 'failed') failed.push(line);
        else if (kind === 'done') resolve();
        if (acks.size >= KILL_AFTER_ACKS && acksAtKill < 0) {
          acksAtKill = acks.size;
          const killed = spool!;
          spool = undefined;
          restarted = killed.kill9().then(() => startSpool({ dir, port, overrides: OVERRIDES }));
          restarted.then((next) => { spool = next; }, reject);
        }
      });
    });
    await done;
    await restarted;
    assert.ok(acksAtKill > 0 && acksAtKill < RECORD_COUNT, `killed in the middle (after ${acksAtKill} of ${RECORD_COUNT} acks)`);
    assert.deepEqual(failed, [], 'no record given up on');
    assert.equal(acks.size, RECORD_COUNT, 'every record acknowledged in the end');

    const log = await dump(spool!.bootstrap);
    const seen = new Map<number, Ack>();
    for (const record of log) {
      assert.ok(!seen.has(record.value), `value ${record.value} is in the log twice (at ${JSON.stringify(seen.get(record.value))} and ${record.partition}@${record.offset})`);
      seen.set(record.value, { partition: record.partition, offset: record.offset });
    }
    for (const [value, ack] of acks) assert.deepEqual(seen.get(value), ack, `acknowledged value ${value} in the log where it was acknowledged`);
    assert.equal(log.length, RECORD_COUNT, 'nothing but the sequence in the log');
  } finally {
    producer.kill('SIGKILL');
    const last = spool as SpoolProcess | undefined;
    if (last !== undefined) assert.equal(await last.stop({ keepDir: true }), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

function dump(bootstrap: string): Promise<{ value: number; partition: number; offset: number }[]> {
  return new Promise((resolve, reject) => {
    execFile('java', javaDriverArgs(['dump', bootstrap, TOPIC, String(PARTITIONS)]), { maxBuffer: 1 << 28, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`dump failed: ${error.message}\n${stderr}`));
      const records = stdout.split('\n').filter((line) => /^\d+ \d+ \d+$/.test(line)).map((line) => {
        const [partition, offset, value] = line.split(' ').map(Number);
        return { value: value!, partition: partition!, offset: offset! };
      });
      resolve(records);
    });
  });
}
