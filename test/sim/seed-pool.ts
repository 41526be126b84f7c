/**
 * Runs many simulator seeds on worker threads, each seed whole on one
 * thread. A seed's run depends on its options alone (a fresh ClusterSim,
 * clock, network and disks each time; sim-determinism.test.ts proves a
 * replay in one process gives the same trace), so which thread runs it, and
 * after which other seeds, changes nothing in its outcome: a failing seed
 * replays alone with `npm run sim -- --seed S --trace`.
 *
 * Threads take the next seed when they finish one, so a long seed does not
 * hold the others back. With one worker the seeds run in this thread.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { runSeed, type SimRunOptions } from './cluster-sim.js';
import type { Violation } from './invariants.js';

/** What a seed run gives back across threads (its trace stays behind: replay it). */
export interface SeedOutcome {
  seed: number;
  violation: Violation | null;
  simulatedMs: number;
  acked: number;
}

/** Options a worker can be sent: no live trace callback. */
export type PooledRunOptions = Omit<SimRunOptions, 'onTrace'>;

/** The threads a pool uses by default: one per core, at most WORKERS_MAX. */
export const WORKERS_MAX = 4;
export function defaultWorkers(): number {
  return Math.max(1, Math.min(WORKERS_MAX, availableParallelism()));
}

/** Runs every run; outcomes come back in the order of `runs`. */
export async function runSeedsInPool(runs: readonly PooledRunOptions[], options: { workers: number; onOutcome?: (outcome: SeedOutcome) => void }): Promise<SeedOutcome[]> {
  const outcomes: SeedOutcome[] = new Array(runs.length);
  const workers = Math.max(1, Math.min(options.workers, runs.length));
  if (workers === 1) {
    for (const [index, run] of runs.entries()) {
      const result = await runSeed(run);
      outcomes[index] = { seed: result.seed, violation: result.violation, simulatedMs: result.simulatedMs, acked: result.acked };
      options.onOutcome?.(outcomes[index]);
    }
    return outcomes;
  }
  let next = 0;
  const thread = () =>
    new Promise<void>((resolve, reject) => {
      const worker = new Worker(new URL('./seed-worker.js', import.meta.url));
      const give = () => {
        if (next >= runs.length) {
          void worker.terminate().then(() => resolve(), reject);
          return;
        }
        const index = next++;
        worker.postMessage({ index, run: runs[index] });
      };
      worker.on('message', (message: { index: number; outcome: SeedOutcome }) => {
        outcomes[message.index] = message.outcome;
        options.onOutcome?.(message.outcome);
        give();
      });
      worker.on('error', reject);
      give();
    });
  await Promise.all(Array.from({ length: workers }, thread));
  return outcomes;
}
