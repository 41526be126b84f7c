/**
 * Ready time of embedded clusters (src/node/cluster.ts): from
 * startCluster() to every node serving, median of several runs, for one
 * combined node, three combined nodes and 1 controller + 3 brokers. The
 * issue's target: three combined nodes ready in under 200 ms. A shape that
 * cannot start yet prints why.
 *
 * Run: npx tsc -p . && node dist/bench/cluster-bench.js [--runs N]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startCluster, type StartClusterOptions } from '../src/node/cluster.js';

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(flags.runs);

const SHAPES: readonly { name: string; options: StartClusterOptions }[] = [
  { name: '1 combined node', options: { combined: 1 } },
  { name: '3 combined nodes', options: { combined: 3 } },
  { name: '1 controller + 3 brokers', options: { controllers: 1, brokers: 3 } },
];

async function readyMs(options: StartClusterOptions): Promise<number> {
  const started = performance.now();
  const cluster = await startCluster(options);
  const elapsed = performance.now() - started;
  await cluster.stop();
  return elapsed;
}

for (const shape of SHAPES) {
  const times: number[] = [];
  try {
    for (let run = 0; run < RUNS; run++) times.push(await readyMs(shape.options));
  } catch (error) {
    console.log(`${shape.name}: cannot start yet: ${(error as Error).message}`);
    continue;
  }
  times.sort((a, b) => a - b);
  console.log(`${shape.name}: ready in ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms (median of ${RUNS}; min ${times[0]!.toFixed(1)}, max ${times.at(-1)!.toFixed(1)})`);
}
