/**
 * `npm run sim -- [options]`: runs the whole-cluster simulator (cluster-sim.ts).
 *   --seeds N        runs N seeds (default 10), starting at --from (default 1)
 *   --seed S         runs seed S alone
 *   --trace          prints the trace of each seed run (with --seed: its replay)
 *   --minutes M      long mode: runs seeds from --from until M minutes of wall-clock time are up
 *   --fault-ms MS    simulated milliseconds of faults per seed (default 20000)
 *   --fault-gap-ms A,B  simulated ms between faults, drawn from [A, B) (default 300,3000; CI's short seeds use 100,1000)
 *   --workers W      runs seeds on W worker threads (default 1; not with --trace): a seed's outcome does not depend on the thread
 *   --faulty-max K   how many nodes may be faulty at once (default 1; 2 takes the quorum away at times)
 *   --clock-skew-ms MS  each host's wall clock off true time by up to ±MS (default 10000; 0 with --clock-drift-ppm 0: true time)
 *   --clock-drift-ppm P each host's wall clock drifting by up to ±P ppm (default 1000)
 *   --clock-step-ms MS  during the faults, NTP steps of one host's wall clock by 128 ms to ±MS (default 30000; 0: none)
 *   --shape S        combined (default: three combined nodes) or split (three controller-only nodes, three broker-only nodes)
 *   --dynamic-quorum a dynamic quorum (KIP-853): voters added and removed during the faults
 *   --no-group       without the consumer group (as CI's short seeds run; a replay of one needs it)
 *   --admin-ops      an operator creates and deletes topics, creates partitions and alters configs during the faults
 *   --log-level L    node log lines in the trace from level L (error, warn, info, debug; default warn)
 * Prints the seeds it runs, one line per failing seed (seed, invariant, detail), and a summary; exits 1 when a seed failed.
 */
import { parseArgs } from 'node:util';
import { runSeed, type SimRunOptions } from './cluster-sim.js';
import { SeedPool, type SeedOutcome } from './seed-pool.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    seed: { type: 'string' },
    from: { type: 'string' },
    trace: { type: 'boolean', default: false },
    minutes: { type: 'string' },
    'fault-ms': { type: 'string' },
    'log-level': { type: 'string' },
    'faulty-max': { type: 'string' },
    'fault-gap-ms': { type: 'string' },
    workers: { type: 'string' },
    'clock-skew-ms': { type: 'string' },
    'clock-drift-ppm': { type: 'string' },
    shape: { type: 'string' },
    'dynamic-quorum': { type: 'boolean', default: false },
    'admin-ops': { type: 'boolean', default: false },
    'no-group': { type: 'boolean', default: false },
    'clock-step-ms': { type: 'string' },
  },
});

function integer(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name} must be a non-negative integer, not ${text}`);
  return value;
}

const logLevel = values['log-level'] ?? 'warn';
if (!['error', 'warn', 'info', 'debug'].includes(logLevel)) throw new Error(`--log-level must be error, warn, info or debug`);
const shape = values.shape ?? 'combined';
if (shape !== 'combined' && shape !== 'split') throw new Error('--shape must be combined or split');
const faultPhaseMs = integer('fault-ms', values['fault-ms'], 20_000);
const faultyNodesMax = integer('faulty-max', values['faulty-max'], 1);
const clockSkewMs = integer('clock-skew-ms', values['clock-skew-ms'], 10_000);
const clockDriftPpm = integer('clock-drift-ppm', values['clock-drift-ppm'], 1_000);
const clockStepMs = integer('clock-step-ms', values['clock-step-ms'], 30_000);
if (clockStepMs !== 0 && clockStepMs < 128) throw new Error('--clock-step-ms must be 0 or at least 128 (NTP steps past 128 ms)');
const from = integer('from', values.from, 1);
const single = values.seed === undefined ? null : integer('seed', values.seed, 0);
const minutes = values.minutes === undefined ? null : Number(values.minutes);
const count = integer('seeds', values.seeds, 10);
const workers = Math.max(1, integer('workers', values.workers, 1));
if (workers > 1 && values.trace) throw new Error('--trace prints a seed as it runs: not with --workers');
const gapText = values['fault-gap-ms']?.split(',');
if (gapText !== undefined && gapText.length !== 2) throw new Error('--fault-gap-ms takes MIN,MAX');
const faultGapMs = gapText === undefined ? null : { min: integer('fault-gap-ms', gapText[0], 0), max: integer('fault-gap-ms', gapText[1], 0) };
if (faultGapMs !== null && faultGapMs.max <= faultGapMs.min) throw new Error('--fault-gap-ms: MAX must be above MIN');

/** Seeds per thread in one round of long mode with --workers (the time is checked between rounds). */
const LONG_MODE_ROUND_SEEDS = 5;

const startedMs = performance.now();
const deadlineMs = minutes === null ? null : startedMs + minutes * 60_000;
const seeds = single !== null ? [single] : null;
console.log(single !== null ? `seed ${single}` : minutes !== null ? `seeds from ${from} for ${minutes} minutes` : `seeds ${from}..${from + count - 1}`);

let ran = 0;
let simulatedMs = 0;
const failed: number[] = [];
const optionsOf = (seed: number): SimRunOptions => ({ seed, shape, dynamicQuorum: values['dynamic-quorum'], adminOps: values['admin-ops'], groups: !values['no-group'], faultPhaseMs, faultyNodesMax, clockSkewMs, clockDriftPpm, clockStepMs, nodeLogLevel: logLevel as 'warn', ...(faultGapMs === null ? {} : { faultGapMs }) });
const tally = (outcome: Pick<SeedOutcome, 'seed' | 'violation' | 'simulatedMs'>): void => {
  ran++;
  simulatedMs += outcome.simulatedMs;
  if (outcome.violation !== null) {
    failed.push(outcome.seed);
    console.log(`FAIL seed ${outcome.seed}: ${outcome.violation.invariant}: ${outcome.violation.detail.split('\n')[0]}`);
  }
};
if (workers > 1 && seeds === null && deadlineMs === null) {
  // A fixed list of seeds: the pool hands them out as threads come free.
  const pool = new SeedPool(workers);
  await pool.run(Array.from({ length: count }, (_, index) => optionsOf(from + index)), tally);
  await pool.close();
} else if (workers > 1 && deadlineMs !== null) {
  // Long mode: rounds of LONG_MODE_ROUND_SEEDS seeds per thread until the time is up.
  const round = workers * LONG_MODE_ROUND_SEEDS;
  const pool = new SeedPool(workers);
  for (let next = from; performance.now() < deadlineMs; next += round) {
    await pool.run(Array.from({ length: round }, (_, index) => optionsOf(next + index)), tally);
  }
  await pool.close();
} else {
  for (let index = 0; ; index++) {
    const seed = seeds !== null ? seeds[index] : from + index;
    if (seed === undefined) break;
    if (seeds === null && deadlineMs === null && index >= count) break;
    if (deadlineMs !== null && performance.now() >= deadlineMs) break;
    tally(await runSeed({ ...optionsOf(seed), ...(values.trace ? { onTrace: (line: string) => console.log(line) } : {}) }));
  }
}
const wallS = (performance.now() - startedMs) / 1000;
console.log(
  `${ran} seeds, ${failed.length} failed${failed.length > 0 ? ` (${failed.join(' ')})` : ''}; ` +
    `${(simulatedMs / 1000).toFixed(0)} simulated s in ${wallS.toFixed(1)} wall s ` +
    `(${(simulatedMs / 1000 / wallS).toFixed(1)} simulated s per wall s, ${((ran / wallS) * 60).toFixed(1)} seeds per minute)`,
);
process.exitCode = failed.length > 0 ? 1 : 0;
