/**
 * Crash safety, randomized: thousands of runs each drive a LogManager-owned
 * log through random appends (random batch sizes, codecs, segment and index
 * settings, flush policies), explicit flushes, rolls, checkpoints, and
 * sometimes a disk-full or EIO fault, then cut the power at a random point
 * of the unsynced write stream (a torn last write included). After restart
 * the recovered log must
 *   - be a prefix of what was acknowledged, byte for byte,
 *   - hold every batch below the recovery point reached before the crash,
 *   - serve reads of all of it and accept and serve new appends.
 * Seeded; a failure prints the run's seed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/random.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { KafkaStorageError } from '../../src/storage/errors.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { logConfig, type LogConfig } from '../../src/storage/log-config.js';
import type { Log } from '../../src/storage/log.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import { BASE_TIMESTAMP_MS, type SimEnv, simEnv } from './helpers.js';

const SEED = 0xc0ffee;
const RUNS = 2000;
const TP = { topic: 'crash', partition: 3 };

interface Acked {
  lastOffset: number;
  bytes: Buffer;
}

function randomConfig(random: SeededRandom): LogConfig {
  return logConfig({
    segmentBytes: 4500 + random.nextInt(6000),
    indexIntervalBytes: 1 + random.nextInt(1500),
    segmentIndexBytes: 8 * (2 + random.nextInt(30)),
    flushMessages: random.nextInt(3) === 0 ? 1 + random.nextInt(10) : Infinity,
  });
}

function randomBatch(random: SeededRandom, clockMs: number): Buffer {
  const count = 1 + random.nextInt(6);
  return buildBatch({
    records: Array.from({ length: count }, (_, i) => ({ key: null, value: random.bytes(random.nextInt(200)), timestamp: clockMs + i })),
    compression: random.nextInt(5) === 0 ? 1 : 0,
  });
}

async function openManager(env: SimEnv, config: LogConfig): Promise<LogManager> {
  return LogManager.open(env, { logDir: '/kafka-logs', configFor: () => config });
}

/**
 * Runs random operations; returns the batches appended (acknowledged, plus
 * those of a final append that failed: a crash inside it may keep them),
 * how many were acknowledged, and the recovery point reached.
 */
async function workload(random: SeededRandom, env: SimEnv, log: Log, manager: LogManager) {
  const acked: Acked[] = [];
  let ackedCount = 0;
  const steps = 1 + random.nextInt(60);
  for (let step = 0; step < steps; step++) {
    const choice = random.nextInt(100);
    if (choice < 80) {
      const batches = Array.from({ length: 1 + random.nextInt(3) }, () => randomBatch(random, BASE_TIMESTAMP_MS + step * 100));
      const records = Buffer.concat(batches);
      if (random.nextInt(40) === 0) injectFault(random, env);
      const appended = log.append(records, { leaderEpoch: 1 + Math.floor(step / 20), assignOffsets: true });
      const failed = await appended.then(
        () => false,
        (error: unknown) => {
          assert.ok(error instanceof KafkaStorageError, `unexpected ${String(error)}`);
          return true;
        },
      );
      for (const { position, header } of iterateBatches(records)) {
        acked.push({ lastOffset: header.lastOffset, bytes: Buffer.from(records.subarray(position, position + header.sizeBytes)) });
      }
      if (failed) break;
      ackedCount = acked.length;
    } else if (choice < 88) {
      await log.flush().catch(expectStorageError);
    } else if (choice < 94) {
      await log.roll().catch(expectStorageError);
    } else {
      await manager.checkpointRecoveryPoints();
    }
    if (log.isOffline) break;
  }
  await log.flush(0).catch(expectStorageError); // let background roll flushes settle
  return { acked, ackedCount, flushedOffset: log.recoveryPoint };
}

function injectFault(random: SeededRandom, env: SimEnv): void {
  if (random.nextInt(2) === 0) env.fs.setCapacityBytes(env.fs.usedBytes() + random.nextInt(400));
  else env.fs.injectFault({ operation: 'write', code: 'EIO', pathIncludes: '.log', partialBytes: random.nextInt(100) });
}

function expectStorageError(error: unknown): void {
  if (!(error instanceof KafkaStorageError)) throw error;
}

async function readBack(log: Log): Promise<Buffer[]> {
  const batches: Buffer[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const { records } = await log.read(offset, { maxBytes: 700, minOneMessage: true });
    let progressed = false;
    for (const { position, header } of iterateBatches(records)) {
      batches.push(Buffer.from(records.subarray(position, position + header.sizeBytes)));
      offset = header.lastOffset + 1;
      progressed = true;
    }
    assert.ok(progressed, `no whole batch at offset ${offset}`);
  }
  return batches;
}

async function runOnce(seed: number): Promise<void> {
  const random = new SeededRandom(seed);
  const env = simEnv(seed);
  const config = randomConfig(random);
  const manager = await openManager(env, config);
  const log = await manager.getOrCreateLog(TP);
  const { acked, ackedCount, flushedOffset } = await workload(random, env, log, manager);
  const crashAfterError = random.nextInt(2) === 0 && log.isOffline;
  env.fs.clearFaults();
  env.fs.setCapacityBytes(null);
  if (crashAfterError) await log.closeUncleanly();
  env.fs.crash({ keepUnsyncedPrefix: random.nextInt(4) !== 0 });

  const restarted = await openManager(env, config);
  const recovered = restarted.getLog(TP)!;
  assert.ok(recovered !== undefined, 'the partition directory survived');
  const batches = await readBack(recovered);
  const mustKeep = acked.filter((batch) => batch.lastOffset < flushedOffset).length;
  assert.ok(batches.length <= acked.length, `more batches (${batches.length}) than appended (${acked.length})`);
  if (crashAfterError) assert.ok(batches.length <= ackedCount, 'a failed append left batches behind');
  assert.ok(batches.length >= mustKeep, `lost flushed data: ${batches.length} batches < ${mustKeep} below recovery point ${flushedOffset}`);
  batches.forEach((bytes, i) => assert.deepEqual(bytes, acked[i]!.bytes, `batch ${i} differs`));
  const expectedEnd = batches.length === 0 ? 0 : acked[batches.length - 1]!.lastOffset + 1;
  assert.equal(recovered.logEndOffset, expectedEnd);
  const next = await recovered.append(randomBatch(random, BASE_TIMESTAMP_MS), { leaderEpoch: 99, assignOffsets: true });
  assert.equal(next.firstOffset, expectedEnd);
  assert.equal((await readBack(recovered)).length, batches.length + 1);
}

describe('crash safety of the log', () => {
  it(`${RUNS} random crash points keep a prefix that includes everything flushed, seed ${SEED}`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const seed = SEED + run;
      try {
        await runOnce(seed);
      } catch (error) {
        throw new Error(`crash run failed with seed ${seed}: ${error instanceof Error ? error.stack : String(error)}`);
      }
    }
  });
});
