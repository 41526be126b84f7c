/**
 * Ready time of embedded clusters (src/node/cluster.ts): from
 * startCluster() to every node serving, median of several runs, for one
 * combined node, three combined nodes (also without fsyncs, `durable: false`)
 * and 1 controller + 3 brokers. The
 * issue's target: three combined nodes ready in under 200 ms. Each run also
 * reports the CPU time the process spent starting (all nodes share it), the
 * figure a loaded machine distorts least.
 *
 * Run: npx tsc -p . && node dist/bench/cluster-bench.js [--runs N] [--shape NAME]
 * (--shape: only the shapes whose name contains NAME, e.g. "3 combined", for a profile).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startCluster, type StartClusterOptions } from '../src/node/cluster.js';

const { values: flags } = parseArgs({ options: { runs: { type: 'string', default: '7' }, shape: { type: 'string' } } });
const RUNS = Number(flags.runs);

const SHAPES: readonly { name: string; options: StartClusterOptions }[] = [
  { name: '1 combined node', options: { combined: 1 } },
  { name: '3 combined nodes', options: { combined: 3 } },
  { name: '3 combined nodes, durable: false', options: { combined: 3, durable: false } },
  { name: '1 controller + 3 brokers', options: { controllers: 1, brokers: 3 } },
];

/** Wall time to ready, and the CPU time this process spent on it (user + system: less sensitive to a loaded machine). */
async function ready(options: StartClusterOptions): Promise<{ wallMs: number; cpuMs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const cluster = await startCluster(options);
  const wallMs = performance.now() - started;
  const spent = process.cpuUsage(cpu);
  await cluster.stop();
  return { wallMs, cpuMs: (spent.user + spent.system) / 1000 };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

for (const shape of SHAPES.filter((s) => flags.shape === undefined || s.name.includes(flags.shape))) {
  const runs: { wallMs: number; cpuMs: number }[] = [];
  try {
    for (let run = 0; run < RUNS; run++) runs.push(await ready(shape.options));
  } catch (error) {
    console.log(`${shape.name}: cannot start: ${(error as Error).message}`);
    continue;
  }
  const walls = runs.map((r) => r.wallMs);
  console.log(
    `${shape.name}: ready in ${median(walls).toFixed(1)} ms (median of ${RUNS}; min ${Math.min(...walls).toFixed(1)}, max ${Math.max(...walls).toFixed(1)}); ` +
      `CPU ${median(runs.map((r) => r.cpuMs)).toFixed(1)} ms (median)`,
  );
}
