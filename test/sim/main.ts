/**
 * `npm run sim -- [options]`: runs the whole-cluster simulator (cluster-sim.ts).
 *   --seeds N        runs N seeds (default 10), starting at --from (default 1)
 *   --seed S         runs seed S alone
 *   --trace          prints the trace of each seed run (with --seed: its replay)
 *   --minutes M      long mode: runs seeds from --from until M minutes of wall-clock time are up
 *   --fault-ms MS    simulated milliseconds of faults per seed (default 20000)
 *   --faulty-max K   how many nodes may be faulty at once (default 1; 2 takes the quorum away at times)
 *   --log-level L    node log lines in the trace from level L (error, warn, info, debug; default warn)
 * Prints the seeds it runs, one line per failing seed (seed, invariant, detail), and a summary; exits 1 when a seed failed.
 */
import { parseArgs } from 'node:util';
import { runSeed } from './cluster-sim.js';

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
const faultPhaseMs = integer('fault-ms', values['fault-ms'], 20_000);
const faultyNodesMax = integer('faulty-max', values['faulty-max'], 1);
const from = integer('from', values.from, 1);
const single = values.seed === undefined ? null : integer('seed', values.seed, 0);
const minutes = values.minutes === undefined ? null : Number(values.minutes);
const count = integer('seeds', values.seeds, 10);

const startedMs = performance.now();
const deadlineMs = minutes === null ? null : startedMs + minutes * 60_000;
const seeds = single !== null ? [single] : null;
console.log(single !== null ? `seed ${single}` : minutes !== null ? `seeds from ${from} for ${minutes} minutes` : `seeds ${from}..${from + count - 1}`);

let ran = 0;
let simulatedMs = 0;
const failed: number[] = [];
for (let index = 0; ; index++) {
  const seed = seeds !== null ? seeds[index] : from + index;
  if (seed === undefined) break;
  if (seeds === null && deadlineMs === null && index >= count) break;
  if (deadlineMs !== null && performance.now() >= deadlineMs) break;
  const result = await runSeed({ seed, faultPhaseMs, faultyNodesMax, nodeLogLevel: logLevel as 'warn', ...(values.trace ? { onTrace: (line: string) => console.log(line) } : {}) });
  ran++;
  simulatedMs += result.simulatedMs;
  if (result.violation !== null) {
    failed.push(seed);
    console.log(`FAIL seed ${seed}: ${result.violation.invariant}: ${result.violation.detail.split('\n')[0]}`);
  }
}
const wallS = (performance.now() - startedMs) / 1000;
console.log(
  `${ran} seeds, ${failed.length} failed${failed.length > 0 ? ` (${failed.join(' ')})` : ''}; ` +
    `${(simulatedMs / 1000).toFixed(0)} simulated s in ${wallS.toFixed(1)} wall s ` +
    `(${(simulatedMs / 1000 / wallS).toFixed(1)} simulated s per wall s, ${((ran / wallS) * 60).toFixed(1)} seeds per minute)`,
);
process.exitCode = failed.length > 0 ? 1 : 0;
