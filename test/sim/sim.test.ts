/**
 * The whole-cluster simulator in CI, bounded: a run without faults acks and
 * reads back every record; a few hundred short seeds with faults (kills,
 * power cuts, partitions both ways and one way, resets, pauses, slow links,
 * fsync failures and full disks) break no invariant, some of them with a
 * consumer group committing what it reads; and a few long seeds, with and
 * without the group, break none either. Every run also has a transactional
 * producer committing and aborting, and a read_committed consumer, and
 * every host's wall clock is skewed and drifting (cluster-sim.ts,
 * clockSkewMs) and, at some fault draws, stepped forward or back as by NTP
 * (clockStepMs); a run with the group also waits for it to become stable.
 * A few dozen short seeds run the split shape (three controller-only and
 * three broker-only nodes) with a dynamic quorum whose voters an operator
 * adds and removes, and admin operations (topics created and deleted,
 * partitions created, configs altered) whose acknowledged outcomes must
 * hold after the heal.
 *
 * Short seeds have 1.5 s of faults, one every 0.1 to 1 s, so each draws a
 * few of the eight fault kinds (each equally likely at every draw) and the
 * cluster then heals from them; across the seeds every kind comes up many
 * times. Long seeds have the default schedule (one every 0.3 to 3 s) for
 * 10 s, so faults also meet a cluster that has been running a while.
 * Seeds run on worker threads (seed-pool.ts; SPOOL_SIM_WORKERS, default one
 * per core up to 4): each seed's outcome depends on its options alone.
 * The long form is `npm run sim -- --seeds N` or `--minutes M`; replay is
 * proved by sim-determinism.test.ts.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed } from './cluster-sim.js';
import { defaultWorkers, SeedPool, type PooledRunOptions } from './seed-pool.js';

/** Short seeds without a consumer group, in SHORT_BATCHES tests (each test has its own timeout). */
const CI_SHORT_SEEDS = 200;
const SHORT_BATCHES = 4;
/** Short seeds with a consumer group (a group makes a seed about twice as dear). */
const CI_SHORT_GROUP_SEEDS = 16;
/** Short seeds of the split shape, with a dynamic quorum (voters added and removed) and admin operations, without the group. */
const CI_SPLIT_SEEDS = 24;
/** Long seeds without and with a group. */
const CI_LONG_SEEDS = 2;
const CI_LONG_GROUP_SEEDS = 2;
/** Simulated milliseconds of faults per short seed, and the gap between its faults. */
const SHORT_FAULT_PHASE_MS = 1_500;
const SHORT_FAULT_GAP_MS = { min: 100, max: 1_000 };
/** Simulated milliseconds of faults per long seed (default gaps). */
const LONG_FAULT_PHASE_MS = 10_000;

const workers = process.env.SPOOL_SIM_WORKERS === undefined ? defaultWorkers() : Number(process.env.SPOOL_SIM_WORKERS);
if (!(Number.isSafeInteger(workers) && workers >= 1)) throw new Error(`SPOOL_SIM_WORKERS must be a positive integer, not ${process.env.SPOOL_SIM_WORKERS}`);

/** One pool for every test of the file: each thread loads the node's code once. */
const pool = new SeedPool(workers);
after(() => pool.close());

async function failuresOf(runs: PooledRunOptions[]): Promise<string[]> {
  const outcomes = await pool.run(runs);
  assert.equal(outcomes.length, runs.length);
  return outcomes.filter((outcome) => outcome.violation !== null).map((outcome) => `seed ${outcome.seed}: ${outcome.violation!.invariant}: ${outcome.violation!.detail}`);
}

function seeds(from: number, count: number, options: Omit<PooledRunOptions, 'seed'>): PooledRunOptions[] {
  return Array.from({ length: count }, (_, index) => ({ seed: from + index, ...options }));
}

test('without faults every record is acked and read back', async () => {
  const result = await runSeed({ seed: 7, faults: false, groups: false, faultPhaseMs: LONG_FAULT_PHASE_MS });
  assert.equal(result.violation, null, result.trace.join('\n'));
  assert.ok(result.acked > 100, `${result.acked} acked`);
  assert.equal(result.consumed, result.acked);
  assert.ok(result.transactions.committed > 10 && result.transactions.aborted > 5, JSON.stringify(result.transactions));
  assert.equal(result.transactions['in-doubt'], 0);
  // The producer's skewed wall clock stamps its records: the newest one, sent shortly before the final read, is off
  // true time by the producer's offset (plus at most 10 ms of drift in this run), less its age.
  const trace = result.trace.join('\n');
  const skewMs = Number(/clock of producer: ([+-][\d.]+) s/.exec(trace)![1]) * 1000;
  const stampedMs = Number(/checker: the producer's newest record is stamped (-?\d+) ms from true time/.exec(trace)![1]);
  assert.ok(Math.abs(skewMs) >= 1000, `seed 7 draws a producer skew of ${skewMs} ms`);
  assert.ok(stampedMs <= skewMs + 10 && stampedMs > skewMs - 1000, `stamped ${stampedMs} ms, producer skew ${skewMs} ms`);
});

test('the harness reports group-stabilises when the group is given no time to become stable', async () => {
  // The checker's own cases are in invariants.test.ts; this proves a run reaches it and fails on it.
  const result = await runSeed({ seed: 7, faults: false, faultPhaseMs: SHORT_FAULT_PHASE_MS, groupStableBoundMs: 0 });
  assert.equal(result.violation?.invariant, 'group-stabilises', result.trace.join('\n'));
  assert.match(result.violation!.detail, /group sim-group is not stable 0 ms after the cluster became whole/);
});

const batchSeeds = CI_SHORT_SEEDS / SHORT_BATCHES;
for (let batch = 0; batch < SHORT_BATCHES; batch++) {
  const from = 1 + batch * batchSeeds;
  test(`short seeds ${from}..${from + batchSeeds - 1} with faults break no invariant`, async () => {
    assert.deepEqual(await failuresOf(seeds(from, batchSeeds, { faultPhaseMs: SHORT_FAULT_PHASE_MS, faultGapMs: SHORT_FAULT_GAP_MS, groups: false })), []);
  });
}

test(`${CI_SHORT_GROUP_SEEDS} short seeds with faults and a committing consumer group break no invariant`, async () => {
  assert.deepEqual(await failuresOf(seeds(1001, CI_SHORT_GROUP_SEEDS, { faultPhaseMs: SHORT_FAULT_PHASE_MS, faultGapMs: SHORT_FAULT_GAP_MS })), []);
});

test(`${CI_SPLIT_SEEDS} short seeds of 3 controllers and 3 brokers, voters added and removed, admin operations, break no invariant`, async () => {
  const options = { shape: 'split' as const, dynamicQuorum: true, adminOps: true, faultPhaseMs: SHORT_FAULT_PHASE_MS, faultGapMs: SHORT_FAULT_GAP_MS, groups: false };
  assert.deepEqual(await failuresOf(seeds(3001, CI_SPLIT_SEEDS, options)), []);
});

test(`${CI_LONG_SEEDS + CI_LONG_GROUP_SEEDS} long seeds with faults, ${CI_LONG_GROUP_SEEDS} with the group, break no invariant`, async () => {
  const runs = [...seeds(1, CI_LONG_SEEDS, { faultPhaseMs: LONG_FAULT_PHASE_MS, groups: false }), ...seeds(101, CI_LONG_GROUP_SEEDS, { faultPhaseMs: LONG_FAULT_PHASE_MS })];
  assert.deepEqual(await failuresOf(runs), []);
});
