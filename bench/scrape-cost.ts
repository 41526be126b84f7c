/**
 * What one scrape of GET /metrics costs, alone: an embedded broker (one
 * combined node in this process) gets a produce of --records 100-byte
 * records to an 8-partition topic (the exposition bench/metrics-cost.ts
 * scrapes, about 300 samples; with --group also a committed offset per
 * partition, so the group gauges report and __consumer_offsets' 50
 * partitions are hosted: about 930 samples), and then renders its exposition
 * --scrapes times in a row (after --warm-scrapes not counted, which
 * compile the rendering). Prints the process CPU time per scrape
 * (process.cpuUsage, user + system) and the exposition's size. The
 * broker is idle while it renders, so this is the fixed cost of a scrape
 * without the contention of a produce load (bench/metrics-cost.ts
 * measures it under load). Run under `node --cpu-prof` to see where the
 * time goes.
 *
 * `--dump FILE` writes the last exposition there (to compare two builds'
 * text).
 *
 *   node dist/bench/scrape-cost.js [--scrapes 500] [--warm-scrapes 50] [--records 20000] [--group] [--dump FILE]
 *
 * Benchmark code, not product code: it reads the node's NodeMetrics through a
 * cast (the node keeps it private) to time the rendering without HTTP.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Admin, Producer } from '../src/client/index.js';
import { silentLogger } from '../src/common/logger.js';
import type { NodeMetrics } from '../src/insight/metrics.js';
import { startBroker } from '../src/node/embedded.js';
import { loadAverage } from './lib/proc.js';

const ARGS = parseArgs({
  options: {
    scrapes: { type: 'string', default: '500' },
    'warm-scrapes': { type: 'string', default: '50' },
    records: { type: 'string', default: '20000' },
    dump: { type: 'string' },
    group: { type: 'boolean', default: false },
  },
}).values;
const SCRAPES = Number(ARGS.scrapes);
const WARM_SCRAPES = Number(ARGS['warm-scrapes']);
const RECORDS = Number(ARGS.records);
const TOPIC = 'scrape-cost';
const PARTITIONS = 8;
const RECORD_BYTES = 100;

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function workload(bootstrapServers: string): Promise<void> {
  const admin = new Admin({ bootstrapServers });
  try {
    await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers, acks: 1, batchSize: 65536 });
    const value = Buffer.alloc(RECORD_BYTES, 'x');
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < RECORDS; i++) sends.push(producer.send({ topic: TOPIC, value }));
    await Promise.all(sends);
    await producer.close();
    if (ARGS.group) await admin.alterConsumerGroupOffsets('scrape-cost-group', Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, offset: 1 })));
  } finally {
    await admin.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'spool-scrape-cost-'));
  const running = await startBroker({ config: { 'log.dirs': dir, 'metrics.listener': 'http://127.0.0.1:0' }, logger: silentLogger });
  try {
    await workload(running.bootstrapServers);
    const metrics = (running.broker as unknown as { metrics: NodeMetrics }).metrics;
    let text = '';
    for (let i = 0; i < WARM_SCRAPES; i++) text = await metrics.render();
    const startMs = cpuMs();
    for (let i = 0; i < SCRAPES; i++) text = await metrics.render();
    const perScrapeMs = (cpuMs() - startMs) / SCRAPES;
    if (ARGS.dump !== undefined) writeFileSync(ARGS.dump, text);
    const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
    console.log(`scrape cost: ${perScrapeMs.toFixed(3)} ms CPU a scrape over ${SCRAPES} scrapes; ${samples} samples, ${text.length} bytes; load average ${loadAverage().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
