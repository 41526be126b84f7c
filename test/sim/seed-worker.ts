/**
 * A worker thread of seed-pool.ts: runs each seed it is sent and posts back
 * the outcome (seed, violation, simulated time, records acked).
 */
import { parentPort } from 'node:worker_threads';
import { runSeed } from './cluster-sim.js';
import type { PooledRunOptions, SeedOutcome } from './seed-pool.js';

const port = parentPort;
if (port === null) throw new Error('seed-worker.js runs as a worker thread of seed-pool.js');
port.on('message', (message: { index: number; run: PooledRunOptions }) => {
  void runSeed(message.run).then((result) => {
    const outcome: SeedOutcome = { seed: result.seed, violation: result.violation, simulatedMs: result.simulatedMs, acked: result.acked };
    port.postMessage({ index: message.index, outcome });
  });
});
