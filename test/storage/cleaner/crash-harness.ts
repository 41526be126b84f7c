/**
 * The crash-safety harness of the log cleaner (used by cleaner-crash-*.test.ts,
 * split so that each file stays well inside the test timeout on a loaded
 * machine): for a seeded log, the power is cut at every FileSystem call of a
 * cleaning pass (keeping no unsynced operation, or a random prefix of them
 * with a torn last write). After restart the log must be readable from start
 * to end, hold every key's latest record at its original offset, hold no
 * record that was not written, keep its log end, and be cleanable again to
 * the same result. A failure names the seed and the crash point.
 */
import assert from 'node:assert/strict';
import { SeededRandom } from '../../../src/io/random.js';
import type { Log } from '../../../src/storage/log.js';
import type { LogConfig } from '../../../src/storage/log-config.js';
import { simEnv, type SimEnv } from '../helpers.js';
import { LOG_DIR, TP, appendKeyed, compactConfig, latestByKey, newCleaner, openManager, readAll, type ReadRecord } from './helpers.js';

export const SEED = 0xc1ea4;
const PARTITION_DIR = `${LOG_DIR}/${TP.topic}-${TP.partition}`;

interface Workload {
  config: LogConfig;
  keys: number;
  batches: number;
  compression: number;
}

function randomWorkload(random: SeededRandom): Workload {
  return {
    config: compactConfig({
      segmentBytes: 600 + random.nextInt(1500),
      indexIntervalBytes: 1 + random.nextInt(300),
      minCleanableDirtyRatio: 0.01,
    }),
    keys: 5 + random.nextInt(30),
    batches: 20 + random.nextInt(40),
    compression: random.nextInt(3) === 0 ? 1 : 0,
  };
}

/** A durable log (flushed, recovery point checkpointed) with several versions of each key. */
async function buildLog(env: SimEnv, workload: Workload, seed: number) {
  const random = new SeededRandom(seed);
  const manager = await openManager(env, workload.config);
  const log = await manager.getOrCreateLog(TP);
  for (let batch = 0; batch < workload.batches; batch++) {
    const records = Array.from({ length: 1 + random.nextInt(4) }, () => {
      // Keys drift over the log, so every segment holds some key's latest record.
      const key = Math.floor((batch * workload.keys) / workload.batches) + random.nextInt(5);
      return { key: `key-${key}`, value: random.nextInt(6) === 0 ? null : `value-${key}-${batch}-${random.nextInt(1000)}` };
    });
    await appendKeyed(log, records, { timestampMs: env.clock.nowMs(), compression: workload.compression });
  }
  await log.roll();
  await log.flush();
  await manager.checkpointAll();
  return { manager, log };
}

async function checkRecovered(log: Log, original: readonly ReadRecord[], endOffset: number, where: string): Promise<void> {
  const after = await readAll(log);
  assert.deepEqual(latestByKey(after.records), latestByKey(original), `${where}: latest records differ`);
  const byOffset = new Map(original.map((record) => [record.offset, record]));
  for (const record of after.records) assert.deepEqual(record, byOffset.get(record.offset), `${where}: record at ${record.offset} was never written`);
  assert.equal(log.logEndOffset, endOffset, `${where}: log end moved`);
}

async function crashAt(workload: Workload, seed: number, crashPoint: { afterCalls: number; keepUnsyncedPrefix: boolean }) {
  const env = simEnv(seed);
  const { manager, log } = await buildLog(env, workload, seed);
  const original = (await readAll(log)).records;
  const endOffset = log.logEndOffset;
  env.fs.schedulePowerCut(crashPoint);
  await newCleaner(env, () => [manager]).cleanFilthiestLog().catch(() => false);
  const crashed = env.fs.isPoweredOff;
  env.fs.powerOn();
  if (!crashed) env.fs.crash();
  const committedSwap = (await env.fs.readdir(PARTITION_DIR)).some((name) => name.endsWith('.log.swap'));
  const restarted = await openManager(env, workload.config);
  const recovered = restarted.getLog(TP)!;
  const where = `seed ${seed}, crash after ${crashPoint.afterCalls} calls (keep unsynced: ${crashPoint.keepUnsyncedPrefix})`;
  await checkRecovered(recovered, original, endOffset, where);
  if (committedSwap) {
    // Completed, not discarded: the cleaned segment replaced records.
    assert.ok((await readAll(recovered)).records.length < original.length, `${where}: a committed swap was not completed`);
  }
  const cleaner = newCleaner(env, () => [restarted]);
  while (await cleaner.cleanFilthiestLog());
  await checkRecovered(recovered, original, endOffset, `${where}, cleaned again`);
  const keys = (await readAll(recovered)).records.map((record) => record.key);
  assert.equal(new Set(keys).size, keys.length, `${where}: a key appears twice after cleaning again`);
  return { crashed, committedSwap };
}

/** FileSystem calls of an uninterrupted pass over the workload's log. */
async function callsOfPass(workload: Workload, seed: number): Promise<number> {
  const env = simEnv(seed);
  const { manager } = await buildLog(env, workload, seed);
  const before = env.fs.totalCalls;
  assert.equal(await newCleaner(env, () => [manager]).cleanFilthiestLog(), true);
  return env.fs.totalCalls - before;
}

/**
 * Crashes a pass over the seeded log SEED + index at every call (or, with
 * `shard`, at the calls n with n % shard.count === shard.index, so one log's
 * crash points can be split between test files); counts what was reached.
 */
export async function crashEveryCall(
  logs: readonly { index: number; shard?: { index: number; count: number } }[],
): Promise<{ crashPoints: number; swapsCompleted: number }> {
  let crashPoints = 0;
  let swapsCompleted = 0;
  for (const { index, shard = { index: 0, count: 1 } } of logs) {
    const seed = SEED + index;
    const workload = randomWorkload(new SeededRandom(seed));
    const calls = await callsOfPass(workload, seed);
    for (let afterCalls = shard.index; afterCalls <= calls; afterCalls += shard.count) {
      for (const keepUnsyncedPrefix of [false, true]) {
        const { crashed, committedSwap } = await crashAt(workload, seed, { afterCalls, keepUnsyncedPrefix });
        if (crashed) crashPoints++;
        if (committedSwap) swapsCompleted++;
      }
    }
  }
  return { crashPoints, swapsCompleted };
}
