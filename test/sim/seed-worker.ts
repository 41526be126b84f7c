/**
 * A worker thread of seed-pool.ts: runs each seed it is sent and posts back
 * the outcome (seed, violation, simulated time, records acked, trace digest).
 */
import { parentPort } from 'node:worker_threads';
import { runSeed } from './cluster-sim.js';
import { outcomeOf, type PooledRunOptions } from './seed-pool.js';

const port = parentPort;
if (port === null) throw new Error('seed-worker.js runs as a worker thread of seed-pool.js');
port.on('message', (run: PooledRunOptions) => {
  void runSeed(run).then((result) => port.postMessage(outcomeOf(result)));
});
