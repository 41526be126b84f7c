/**
 * What metrics collection costs the produce path: the same Spool-client
 * produce load (bench/node-perf.ts, as `npm run bench` scenarios 1 and 3
 * run it) against a fresh Spool process without metrics.listener and with
 * it, the latter scraped every --scrape-interval-s seconds (Prometheus
 * scrapes every 15 s by default; this is harsher). Runs alternate
 * off/on, on/off, ... so drift in the machine's load falls on both sides,
 * and the medians are compared.
 *
 * Two figures per run: the throughput the generator saw, and the broker
 * process's CPU time (utime + stime from /proc/<pid>/stat) per MiB it
 * appended. On a machine shared with other work the throughput swings by
 * tens of percent between identical runs; CPU per MiB is what the metrics
 * add to the work the broker does, and varies less, but on a busy shared
 * machine still more than the 2% to be shown. So a third figure:
 * `--profile` runs each scenario once with metrics on under
 * `node --cpu-prof` and reports the share of the broker's non-idle CPU
 * samples whose stack is inside the metrics code (src/insight/ and
 * prom-client: the counters bumped per request and per batch, the latency
 * histograms, the scrapes), counted over the samples taken while the
 * produce load ran (the broker's start and stop, where prom-client is
 * loaded and its collectors registered, are reported apart as the
 * whole-process share; the first scrapes, which compile the rendering
 * code, happen before the load, as on a broker that has been scraped
 * before). The share is split into the scrapes' rendering (a fixed cost
 * per scrape) and the rest (per request, batch and event). Sampling makes it independent of how fast the
 * machine happens to be; what it leaves out is the few calls into the
 * metrics from the socket server and the replica manager themselves.
 *
 *   node dist/bench/metrics-cost.js [--rounds 3] [--duration-s 10] [--warmup-s 3] [--scrape-interval-s 5] [--profile]
 *
 * Benchmark code, not product code: it uses timers and the clock directly.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Admin } from '../src/client/index.js';
import { startSpoolBroker, type BrokerUnderTest } from './lib/brokers.js';
import { nodeProduce } from './lib/generators.js';
import { cpuSeconds, freePortPair, loadAverage } from './lib/proc.js';

const ARGS = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'duration-s': { type: 'string', default: '10' },
    'warmup-s': { type: 'string', default: '3' },
    'scrape-interval-s': { type: 'string', default: '5' },
    profile: { type: 'boolean', default: false },
  },
}).values;
const ROUNDS = Number(ARGS.rounds);
const DURATION_S = Number(ARGS['duration-s']);
const WARMUP_S = Number(ARGS['warmup-s']);
const SCRAPE_INTERVAL_MS = Number(ARGS['scrape-interval-s']) * 1000;
const PARTITIONS = 8;
/** Scrapes before the load starts (not counted): V8 compiles the rendering then, as on a broker long in service. */
const WARM_SCRAPES = 3;

const SCENARIOS = [
  { name: 'scenario 1: 1 KiB records, acks=1, batch.size=65536, linger.ms=5', recordSize: 1024, metric: 'mibPerS' },
  { name: 'scenario 3: 100-byte records, acks=1, batch.size=65536, linger.ms=5', recordSize: 100, metric: 'recordsPerS' },
] as const;

type Variant = 'off' | 'on';

interface RunFigures {
  value: number;
  cpuMsPerMiB: number;
  scrapes: number;
  /** When the produce load ran (warm-up included), in CLOCK_MONOTONIC µs: the clock of V8's profile timestamps. */
  loadWindowUs: { startUs: number; endUs: number };
}

function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

async function measure(scenario: (typeof SCENARIOS)[number], variant: Variant, round: number, options: { cpuProfileDir?: string } = {}): Promise<RunFigures> {
  const dir = mkdtempSync(join(tmpdir(), `spool-metrics-cost-${variant}-`));
  const metricsPort = variant === 'on' ? await freePortPair() : null;
  const settings: Record<string, string> = metricsPort === null ? {} : { 'metrics.listener': `http://127.0.0.1:${metricsPort}` };
  const broker: BrokerUnderTest = await startSpoolBroker({ dir, settings, ...options });
  let scrapes = 0;
  let scraper: NodeJS.Timeout | null = null;
  try {
    const topic = `metrics-cost-${round}-${variant}`;
    const admin = new Admin({ bootstrapServers: broker.bootstrap });
    await admin.createTopics([{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 }]).finally(() => admin.close());
    if (metricsPort !== null) {
      // A broker in service has been scraped before: the first scrapes compile the rendering code, and a
      // load window of seconds would otherwise charge that one-off cost to the produce path.
      for (let i = 0; i < WARM_SCRAPES; i++) await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      scraper = setInterval(() => {
        fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(async (response) => {
          await response.text();
          if (response.ok) scrapes++;
        }, () => undefined);
      }, SCRAPE_INTERVAL_MS);
    }
    const cpuBefore = cpuSeconds(broker.pid);
    const startUs = monotonicUs();
    const measured = await nodeProduce({ bootstrap: broker.bootstrap, topic, 'record-size': scenario.recordSize, 'warmup-s': WARMUP_S, 'duration-s': DURATION_S, acks: '1', 'batch-size': 65536, 'linger-ms': 5 }, WARMUP_S + DURATION_S * 3 + 60);
    const cpu = cpuSeconds(broker.pid) - cpuBefore;
    const loadWindowUs = { startUs, endUs: monotonicUs() };
    if (measured.figures === null) throw new Error(`produce failed: ${measured.error}`);
    const appendedMiB = await appendedBytes(broker.bootstrap, topic, scenario.recordSize) / (1024 * 1024);
    return { value: measured.figures[scenario.metric], cpuMsPerMiB: (cpu * 1000) / appendedMiB, scrapes, loadWindowUs };
  } finally {
    if (scraper !== null) clearInterval(scraper);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Record bytes (values only) the topic holds: its records times the record size. */
async function appendedBytes(bootstrap: string, topic: string, recordSize: number): Promise<number> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    const offsets = await admin.listOffsets(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, spec: 'latest' as const })));
    return offsets.reduce((sum, o) => sum + Number(o.offset), 0) * recordSize;
  } finally {
    await admin.close();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Frames only a scrape runs: NodeMetrics.renderNow, and prom-client's text
 * building, which resumes after an await (so renderNow is no longer on its
 * stack).
 */
const SCRAPE_FRAMES = [
  ['renderNow', '/src/insight/metrics.js'],
  ['getMetricsAsString', '/prom-client/lib/registry.js'],
] as const;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface MetricsShare {
  percent: number;
  scrapePercent: number;
  nonIdleMs: number;
  scrapeMs: number;
  /** The same shares counted in samples rather than sampled time (see metricsShare). */
  samplePercent: number;
  sampleScrapePercent: number;
  top: string[];
}

/**
 * Shares of the profile's non-idle time: inside the metrics code, and the
 * total non-idle ms; the metrics frames by samples. With `windowUs`,
 * only the samples taken while the produce load ran: the broker's start
 * (loading prom-client, registering the collectors) and stop are not the
 * produce path's cost.
 *
 * Also counted in samples, each sample one: V8 samples on a wall-clock
 * tick, so when the broker's thread was descheduled (the machine busy with
 * other work) the next sample carries the whole gap as its time delta, and
 * that sample is often at a system call (a scrape reads /proc, calls
 * getrusage). On a loaded machine the time-weighted share then charges
 * other processes' work to whatever code made a system call; the sample
 * count is closer to the CPU the code used.
 */
function metricsShare(profile: CpuProfile, windowUs: { startUs: number; endUs: number } | null): MetricsShare {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const inMetrics = new Map<number, boolean>();
  const isMetrics = (id: number): boolean => {
    const known = inMetrics.get(id);
    if (known !== undefined) return known;
    const url = byId.get(id)!.callFrame.url;
    const parent = parentOf.get(id);
    const answer = /\/src\/insight\/|\/prom-client\//.test(url) || (parent !== undefined && isMetrics(parent));
    inMetrics.set(id, answer);
    return answer;
  };
  /** Whether the sample was taken while a scrape rendered (one of SCRAPE_FRAMES on the stack): the fixed cost per scrape. */
  const inScrape = new Map<number, boolean>();
  const isScrape = (id: number): boolean => {
    const known = inScrape.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)!.callFrame;
    const parent = parentOf.get(id);
    const answer = SCRAPE_FRAMES.some(([name, url]) => frame.functionName === name && frame.url.endsWith(url)) || (parent !== undefined && isScrape(parent));
    inScrape.set(id, answer);
    return answer;
  };
  let nonIdleUs = 0;
  let metricsUs = 0;
  let scrapeUs = 0;
  const samples = { nonIdle: 0, metrics: 0, scrape: 0 };
  /** Samples of the metrics code by the nearest metrics frame (where the metrics code was, or what it called). */
  const byEntry = new Map<string, number>();
  const entryOf = (id: number): string => {
    let at: number | undefined = id;
    while (at !== undefined && !/\/src\/insight\/|\/prom-client\//.test(byId.get(at)!.callFrame.url)) at = parentOf.get(at);
    const frame = byId.get(at ?? id)!.callFrame;
    return `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(src|node_modules)\//, '$1/')}`;
  };
  let atUs = profile.startTime;
  profile.samples.forEach((id, index) => {
    atUs += profile.timeDeltas[index] ?? 0;
    if (windowUs !== null && (atUs < windowUs.startUs || atUs > windowUs.endUs)) return;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(program)') return;
    const us = profile.timeDeltas[index + 1] ?? 0;
    nonIdleUs += us;
    samples.nonIdle++;
    if (!isMetrics(id)) return;
    metricsUs += us;
    samples.metrics++;
    if (isScrape(id)) {
      scrapeUs += us;
      samples.scrape++;
    }
    const entry = entryOf(id);
    byEntry.set(entry, (byEntry.get(entry) ?? 0) + 1);
  });
  const top = [...byEntry].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([entry, count]) => `${((count / samples.nonIdle) * 100).toFixed(2)}% of samples ${entry}`);
  return {
    percent: (metricsUs / nonIdleUs) * 100,
    scrapePercent: (scrapeUs / nonIdleUs) * 100,
    nonIdleMs: nonIdleUs / 1000,
    scrapeMs: scrapeUs / 1000,
    samplePercent: (samples.metrics / samples.nonIdle) * 100,
    sampleScrapePercent: (samples.scrape / samples.nonIdle) * 100,
    top,
  };
}

async function profileShares(): Promise<void> {
  for (const scenario of SCENARIOS) {
    const cpuProfileDir = mkdtempSync(join(tmpdir(), 'spool-metrics-profile-'));
    try {
      const { loadWindowUs, scrapes } = await measure(scenario, 'on', 0, { cpuProfileDir });
      const profiles = readdirSync(cpuProfileDir).filter((file) => file.endsWith('.cpuprofile'));
      for (const file of profiles) {
        const profile = JSON.parse(readFileSync(join(cpuProfileDir, file), 'utf8')) as CpuProfile;
        const whole = metricsShare(profile, null);
        const share = metricsShare(profile, loadWindowUs);
        console.log(`${scenario.name}: metrics code ${share.percent.toFixed(2)}% of the broker's ${(share.nonIdleMs / 1000).toFixed(1)} s non-idle CPU while the load ran; ${whole.percent.toFixed(2)}% of ${(whole.nonIdleMs / 1000).toFixed(1)} s over the whole process, start and stop included (${file})`);
        const perScrapeMs = scrapes > 0 ? share.scrapeMs / scrapes : 0;
        console.log(`    of which ${share.scrapePercent.toFixed(2)}% rendering ${scrapes} scrapes (${perScrapeMs.toFixed(1)} ms each), ${(share.percent - share.scrapePercent).toFixed(2)}% per request, batch and event`);
        console.log(`    counted in samples: ${share.samplePercent.toFixed(2)}%, of which ${share.sampleScrapePercent.toFixed(2)}% rendering`);
        for (const line of share.top) console.log(`    ${line}`);
      }
    } finally {
      rmSync(cpuProfileDir, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  if (ARGS.profile) return profileShares();
  console.log(`metrics cost: ${ROUNDS} rounds, ${WARMUP_S} s warm-up + ${DURATION_S} s measured per run, scrape every ${SCRAPE_INTERVAL_MS / 1000} s; load average at start ${loadAverage().map((l) => l.toFixed(2)).join(' ')}`);
  for (const scenario of SCENARIOS) {
    const results: Record<Variant, RunFigures[]> = { off: [], on: [] };
    const unit = scenario.metric === 'mibPerS' ? 'MiB/s' : 'records/s';
    for (let round = 0; round < ROUNDS; round++) {
      const order: Variant[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const variant of order) {
        const run = await measure(scenario, variant, round);
        results[variant].push(run);
        console.log(`  ${scenario.name} | round ${round + 1} metrics ${variant}: ${run.value.toFixed(1)} ${unit}, ${run.cpuMsPerMiB.toFixed(1)} broker CPU ms/MiB${variant === 'on' ? ` (${run.scrapes} scrapes)` : ''}`);
      }
    }
    for (const [figure, read] of [[unit, (r: RunFigures) => r.value], ['broker CPU ms/MiB', (r: RunFigures) => r.cpuMsPerMiB]] as const) {
      const off = median(results.off.map(read));
      const on = median(results.on.map(read));
      console.log(`${scenario.name}: ${figure} median off ${off.toFixed(1)}, on ${on.toFixed(1)}: ${(((on - off) / off) * 100).toFixed(1)}% (off ${results.off.map(read).map((v) => v.toFixed(1)).join(', ')}; on ${results.on.map(read).map((v) => v.toFixed(1)).join(', ')})`);
    }
  }
  console.log(`load average at end ${loadAverage().map((l) => l.toFixed(2)).join(' ')}`);
}

await main();
