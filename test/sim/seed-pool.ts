/**
 * Runs many simulator seeds on worker threads, each seed whole on one
 * thread. A seed's run depends on its options alone (a fresh ClusterSim,
 * clock, network and disks each time; sim-determinism.test.ts proves a
 * replay in one process gives the same trace), so which thread runs it, and
 * after which other seeds, changes nothing in its outcome: a failing seed
 * replays alone with `npm run sim -- --seed S --trace`.
 *
 * A thread takes the next seed when it finishes one, so a long seed does not
 * hold the others back. The threads live until `close()`, so loading the
 * node's modules and warming them up is paid once per thread, not once per
 * batch. With one worker the seeds run in this thread.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { runSeed, type SimRunOptions, type SimRunResult } from './cluster-sim.js';
import type { Violation } from './invariants.js';

/** What a seed run gives back across threads (its trace stays behind: replay it). */
export interface SeedOutcome {
  seed: number;
  violation: Violation | null;
  simulatedMs: number;
  acked: number;
  /** SHA-256 of the trace, lines joined by newlines: the same seed gives the same one on any thread. */
  traceDigest: string;
}

/** The outcome of a finished run, as a worker posts it. */
export function outcomeOf(result: SimRunResult): SeedOutcome {
  const traceDigest = createHash('sha256').update(result.trace.join('\n')).digest('hex');
  return { seed: result.seed, violation: result.violation, simulatedMs: result.simulatedMs, acked: result.acked, traceDigest };
}

/** Options a worker can be sent: no live trace callback. */
export type PooledRunOptions = Omit<SimRunOptions, 'onTrace'>;

/** The threads a pool uses by default: one per core, at most WORKERS_MAX. */
export const WORKERS_MAX = 4;
export function defaultWorkers(): number {
  return Math.max(1, Math.min(WORKERS_MAX, availableParallelism()));
}

interface Job {
  run: PooledRunOptions;
  done: (outcome: SeedOutcome) => void;
}

export class SeedPool {
  private readonly queue: Job[] = [];
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Job>();
  private readonly workers: Worker[] = [];
  private failure: Error | null = null;

  constructor(readonly workerCount: number) {
    if (!(Number.isSafeInteger(workerCount) && workerCount >= 1)) throw new RangeError(`a pool needs at least one worker, not ${workerCount}`);
  }

  /** Runs every run; outcomes come back in the order of `runs`. */
  async run(runs: readonly PooledRunOptions[], onOutcome?: (outcome: SeedOutcome) => void): Promise<SeedOutcome[]> {
    if (this.workerCount === 1) return this.runHere(runs, onOutcome);
    this.start();
    const outcomes = runs.map(
      (run) =>
        new Promise<SeedOutcome>((resolve) => {
          this.queue.push({
            run,
            done: (outcome) => {
              onOutcome?.(outcome);
              resolve(outcome);
            },
          });
        }),
    );
    this.dispatch();
    const all = await Promise.all(outcomes);
    if (this.failure !== null) throw this.failure;
    return all;
  }

  /** Ends the threads (a pool not closed lets the process exit anyway once its threads are idle). */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
    this.workers.length = 0;
    this.idle.length = 0;
  }

  private async runHere(runs: readonly PooledRunOptions[], onOutcome?: (outcome: SeedOutcome) => void): Promise<SeedOutcome[]> {
    const outcomes: SeedOutcome[] = [];
    for (const run of runs) {
      const outcome = outcomeOf(await runSeed(run));
      onOutcome?.(outcome);
      outcomes.push(outcome);
    }
    return outcomes;
  }

  private start(): void {
    while (this.workers.length < this.workerCount) {
      const worker = new Worker(new URL('./seed-worker.js', import.meta.url));
      worker.unref();
      worker.on('message', (outcome: SeedOutcome) => {
        const job = this.busy.get(worker)!;
        this.busy.delete(worker);
        // An idle thread does not keep the process alive; a busy one does, as its seed's result is awaited.
        worker.unref();
        this.idle.push(worker);
        job.done(outcome);
        this.dispatch();
      });
      worker.on('error', (error) => {
        // A thread that dies takes its seed with it (a bug in the harness): run() rejects once the others finish, and
        // with no thread left the seeds still queued fail too rather than wait for ever.
        this.failure ??= error;
        const failed = (job: Job) => job.done({ seed: job.run.seed, violation: { invariant: 'run-completes', detail: `the worker thread failed: ${error.stack ?? error.message}` }, simulatedMs: 0, acked: 0, traceDigest: '' });
        const job = this.busy.get(worker);
        this.busy.delete(worker);
        this.workers.splice(this.workers.indexOf(worker), 1);
        if (job !== undefined) failed(job);
        if (this.workers.length === 0) for (const queued of this.queue.splice(0)) failed(queued);
      });
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  private dispatch(): void {
    for (;;) {
      const worker = this.idle.pop();
      if (worker === undefined) return;
      const job = this.queue.shift();
      if (job === undefined) {
        this.idle.push(worker);
        return;
      }
      this.busy.set(worker, job);
      worker.ref();
      worker.postMessage(job.run);
    }
  }
}
