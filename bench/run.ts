/**
 * `npm run bench`: Spool next to Apache Kafka 4.4.0 on this machine, in one run.
 *
 * Measures the machine's ceilings (disk write, loopback TCP), then starts
 * Apache Kafka, runs every selected scenario against it, stops it, and does the
 * same for Spool (`node dist/src/cli/main.js start`): same single-node
 * settings, same generators (Kafka's ProducerPerformance / ConsumerPerformance,
 * bench/java/EndToEndFixedRate, and Spool's client in bench/node-perf.ts).
 * Then it profiles Spool (`node --cpu-prof`) under scenarios 1, 3 and 4 and
 * writes bench/results/<date>.json and the run's section of docs/PERFORMANCE.md.
 *
 * Scenarios: 1 produce 1 KiB acks=1; 2 the same with acks=all + idempotence;
 * 3 produce 100 B; 4 consume from the beginning; 5 end-to-end latency at a
 * fixed rate; 6 1,000 partitions, small batches; 7 startup; 8 memory (RSS idle
 * and under scenario 1). Every produce and consume run also gives the
 * broker's CPU seconds per GiB it moved (/proc/<pid>/stat, whatever the core
 * count), and scenario 6 the RSS a partition adds (its topic created, one
 * record each, before the load).
 *
 *   npm run bench                         everything (about 12-15 min on 2 cores)
 *   npm run bench -- --quick              short durations, 256 MiB consume (3-4 min); no docs update
 *   node dist/bench/run.js --scenarios 1,3 --brokers spool --generators java --duration-s 10
 *   options: --scenarios 1,..,8  --brokers kafka,spool  --generators java,node
 *            --duration-s N (produce measuring time, default 15)  --consume-mib N (default 2048)
 *            --latency-mibps N (Java, default 20)  --latency-node-mibps N (default 5)  --latency-s N (default 20)
 *            --node-consume-s N (default 30)  --broker-warmup-s N (unmeasured load after startup, default 10)
 *            --profile-s N (default 10)  --no-profile  --profile-only
 *            --no-ceilings  --docs / --no-docs  --work-dir DIR  --keep
 *
 * Not a test: nothing here runs under `npm test` or .ci/run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Admin, Producer } from '../src/client/index.js';
import { commonBrokerSettings, SPOOL_MAIN, startBroker, stopAllBrokers, type BrokerKind, type BrokerUnderTest } from './lib/brokers.js';
import { measureCeilings, type Ceilings } from './lib/ceilings.js';
import {
  compileJavaHelpers,
  consumerPerformance,
  endToEndFixedRateJava,
  nodeConsume,
  nodeEndToEnd,
  nodeProduce,
  producerPerformance,
  type Measured,
} from './lib/generators.js';
import { cpuSeconds, killRunningCommands, loadAverage, machineInfo, REPO_ROOT, RssSampler, rssKiB, snapshotBuild } from './lib/proc.js';
import { summarizeProfile } from './lib/profile.js';
import { renderMarkdown, updatePerformanceDoc, writeJson, type BenchRun, type Figure, type ProfileEntry } from './lib/report.js';

// ---------------------------------------------------------------- options

const { values: flags } = parseArgs({
  options: {
    scenarios: { type: 'string', default: '1,2,3,4,5,6,7,8' },
    brokers: { type: 'string', default: 'kafka,spool' },
    generators: { type: 'string', default: 'java,node' },
    quick: { type: 'boolean', default: false },
    'duration-s': { type: 'string' },
    'consume-mib': { type: 'string' },
    'node-consume-s': { type: 'string' },
    'latency-mibps': { type: 'string', default: '20' },
    'latency-node-mibps': { type: 'string', default: '5' },
    'latency-s': { type: 'string' },
    'profile-s': { type: 'string' },
    'broker-warmup-s': { type: 'string' },
    'no-profile': { type: 'boolean', default: false },
    'profile-only': { type: 'boolean', default: false },
    'no-ceilings': { type: 'boolean', default: false },
    docs: { type: 'boolean' },
    'no-docs': { type: 'boolean', default: false },
    'work-dir': { type: 'string', default: join(tmpdir(), 'spool-bench') },
    keep: { type: 'boolean', default: false },
  },
});

const QUICK = flags.quick;
const OPTIONS = {
  scenarios: new Set(flags.scenarios.split(',').map(Number)),
  brokers: flags.brokers.split(',').filter((b): b is BrokerKind => b === 'kafka' || b === 'spool'),
  generators: new Set(flags.generators.split(',')),
  durationS: Number(flags['duration-s'] ?? (QUICK ? 6 : 15)),
  consumeMiB: Number(flags['consume-mib'] ?? (QUICK ? 256 : 2048)),
  nodeConsumeS: Number(flags['node-consume-s'] ?? (QUICK ? 15 : 30)),
  latencyMiBPerS: Number(flags['latency-mibps']),
  latencyNodeMiBPerS: Number(flags['latency-node-mibps']),
  latencyWarmupS: QUICK ? 2 : 5,
  latencyS: Number(flags['latency-s'] ?? (QUICK ? 8 : 20)),
  nodeWarmupS: QUICK ? 2 : 3,
  profileS: Number(flags['profile-s'] ?? (QUICK ? 5 : 10)),
  brokerWarmupS: Number(flags['broker-warmup-s'] ?? (QUICK ? 2 : 10)),
  profile: !flags['no-profile'],
  profileOnly: flags['profile-only'],
  ceilings: !flags['no-ceilings'],
  docs: flags['no-docs'] ? false : flags.docs ?? !QUICK,
  workDir: flags['work-dir'],
  keep: flags.keep,
  idleSettleS: QUICK ? 2 : 5,
  diskCeilingMiB: QUICK ? 256 : 1024,
};

const RECORD_1K = 1024;
const RECORD_100B = 100;
const PARTITIONS = 8;
const MANY_PARTITIONS = 1000;
const PRODUCE_1K_PROPS = { acks: '1', 'batch.size': '65536', 'linger.ms': '5' };
const PRODUCE_IDEMPOTENT_PROPS = { acks: 'all', 'enable.idempotence': 'true', 'batch.size': '65536', 'linger.ms': '5' };
const MANY_PARTITIONS_PROPS = {
  acks: '1', 'batch.size': '16384', 'linger.ms': '5',
  'partitioner.class': 'org.apache.kafka.clients.producer.RoundRobinPartitioner',
};
const LATENCY_PROPS = { acks: 'all', 'enable.idempotence': 'true', 'batch.size': '65536', 'linger.ms': '1' };
const THROUGHPUT_TARGET = { op: '>=', ratio: 1.0 } as const;
/** The record each partition of a new topic acknowledges before a scenario starts (shorter than the latency records' 9-byte header). */
const TOPIC_READY_VALUE = 'ready';

// ---------------------------------------------------------------- figures

const figures = new Map<string, Figure>();
const runNotes: string[] = [];

interface FigureSpec {
  scenario: number;
  title: string;
  generator: string;
  metric: string;
  unit: string;
  better: 'higher' | 'lower';
  target?: Figure['target'];
}

/** Records one broker's value for a figure (creating the row on first use; rows keep creation order). */
function record(spec: FigureSpec, kind: BrokerKind, value: number | null, extra: { note?: string | null; command?: string; details?: unknown } = {}): void {
  const key = `${spec.scenario}|${spec.title}|${spec.generator}|${spec.metric}|${spec.unit}`;
  const figure: Figure = figures.get(key) ?? { ...spec, values: {}, notes: {}, commands: {}, details: {} } as Figure;
  figure.values[kind] = value !== null && Number.isFinite(value) ? value : null;
  if (extra.note !== undefined && extra.note !== null) figure.notes[kind] = `${kind === 'kafka' ? 'Kafka' : 'Spool'}, scenario ${spec.scenario}, ${spec.generator}: ${extra.note}`;
  if (extra.command !== undefined) figure.commands[kind] = extra.command;
  if (extra.details !== undefined) figure.details[kind] = extra.details;
  figures.set(key, figure);
}

function recordMeasured<T>(spec: FigureSpec, kind: BrokerKind, measured: Measured<T>, pick: (f: T) => number): void {
  record(spec, kind, measured.figures === null ? null : pick(measured.figures), { note: measured.error, command: measured.command, details: measured.figures });
}

const GIB = 1024 ** 3;

/**
 * The broker's CPU seconds per GiB of record bytes a generator moved: its
 * /proc/<pid>/stat CPU time over the run, divided by `bytes` (a figure that
 * does not depend on how many cores the machine has).
 */
function recordCpuPerGib(spec: Omit<FigureSpec, 'metric' | 'unit' | 'better'>, broker: BrokerUnderTest, cpuS: number, bytes: number, direction: 'produced' | 'consumed'): void {
  const value = bytes > 0 ? cpuS / (bytes / GIB) : null;
  record({ ...spec, metric: `broker CPU per GiB ${direction}`, unit: 's/GiB', better: 'lower' }, broker.kind, value, { details: { cpuS, bytes } });
}

/** Runs `action` and returns its result with the broker's CPU seconds spent meanwhile. */
async function withBrokerCpu<T>(broker: BrokerUnderTest, action: () => Promise<T>): Promise<{ result: T; cpuS: number }> {
  const before = cpuSeconds(broker.pid);
  const result = await action();
  return { result, cpuS: cpuSeconds(broker.pid) - before };
}

function log(message: string): void {
  const elapsedS = ((performance.now() - RUN_START_MS) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[bench ${elapsedS}s] ${message}\n`);
}

const RUN_START_MS = performance.now();

// ---------------------------------------------------------------- broker helpers

async function withAdmin<T>(bootstrap: string, action: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ bootstrapServers: bootstrap, clientId: 'spool-bench-admin' });
  try {
    return await action(admin);
  } finally {
    await admin.close().catch(() => undefined);
  }
}

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Creates a topic and waits until it is ready: every partition has a leader
 * and has acknowledged one small record (Kafka creates partition logs after
 * the metadata names the leaders, so a load started right away would be
 * measured against half-created partitions).
 */
async function createTopic(bootstrap: string, name: string, partitions: number): Promise<void> {
  await withAdmin(bootstrap, async (admin) => {
    await admin.createTopics([{ name, numPartitions: partitions, replicationFactor: 1 }]);
    const deadline = performance.now() + 60_000;
    for (;;) {
      const [topic] = await admin.describeTopics([name]).catch(() => [undefined]);
      if (topic !== undefined && topic.partitions.length === partitions && topic.partitions.every((p) => p.leader >= 0)) break;
      if (performance.now() > deadline) throw new Error(`topic ${name}: partitions without a leader after 60 s`);
      await sleepMs(100);
    }
  });
  const producer = new Producer({ bootstrapServers: bootstrap, clientId: 'spool-bench-topic-ready', acks: 1, lingerMs: 5, deliveryTimeoutMs: 120_000 });
  try {
    await Promise.all(Array.from({ length: partitions }, (_, partition) => producer.send({ topic: name, partition, value: TOPIC_READY_VALUE })));
  } finally {
    await producer.close().catch(() => undefined);
  }
}

async function deleteTopic(bootstrap: string, name: string): Promise<void> {
  await withAdmin(bootstrap, (admin) => admin.deleteTopics([name])).catch((error: unknown) => log(`delete ${name}: ${String(error)}`));
}

/** Sum of the partitions' end offsets (records written, for topics that only received appends). */
async function recordsIn(bootstrap: string, topic: string, partitions: number): Promise<number> {
  return withAdmin(bootstrap, async (admin) => {
    const offsets = await admin.listOffsets(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, spec: 'latest' as const })));
    return offsets.reduce((sum, o) => sum + Number(o.offset), 0);
  });
}

/** Runs one generator on a fresh topic, deleting it afterwards. */
async function onFreshTopic<T>(broker: BrokerUnderTest, name: string, partitions: number, action: (topic: string) => Promise<T>): Promise<T | null> {
  try {
    await createTopic(broker.bootstrap, name, partitions);
  } catch (error) {
    log(`create topic ${name} on ${broker.kind}: ${String(error)}`);
    return null;
  }
  try {
    return await action(name);
  } finally {
    await deleteTopic(broker.bootstrap, name);
  }
}

function topicError(name: string): Measured<never> {
  return { figures: null, error: `could not create topic ${name} (see the harness log)`, command: '' };
}

// ---------------------------------------------------------------- scenarios

const java = (): boolean => OPTIONS.generators.has('java');
const node = (): boolean => OPTIONS.generators.has('node');

function produceTimeoutS(): number {
  return OPTIONS.durationS * 3 + 60;
}

/**
 * Runs a produce generator on `topic`, with the broker's CPU seconds over
 * the run and the record bytes it produced: the records the topic holds
 * afterwards (less the topic-ready ones) times the record size, warm-up
 * included, as the CPU time is.
 */
async function producedWithCpu<T>(broker: BrokerUnderTest, spec: { recordSizeBytes: number; partitions: number }, topic: string, run: () => Promise<T>): Promise<{ result: T; cpuS: number; bytes: number; rssAtStartKiB: number | null }> {
  const rssAtStartKiB = rssKiB(broker.pid);
  const { result, cpuS } = await withBrokerCpu(broker, run);
  const records = await recordsIn(broker.bootstrap, topic, spec.partitions).catch(() => 0);
  return { result, cpuS, bytes: Math.max(0, records - spec.partitions) * spec.recordSizeBytes, rssAtStartKiB };
}

/** The broker's RSS growth from creating the scenario's topic (each partition written once), per partition. */
function recordRssPerPartition(spec: { scenario: number; title: string; partitions: number }, broker: BrokerUnderTest, beforeKiB: number | null, afterKiB: number | null): void {
  const value = beforeKiB === null || afterKiB === null ? null : ((afterKiB - beforeKiB) * 1024) / spec.partitions;
  record({ scenario: spec.scenario, title: spec.title, generator: 'harness (/proc)', metric: 'RSS added per partition (topic created, one record each)', unit: 'bytes', better: 'lower' }, broker.kind, value, { details: { beforeKiB, afterKiB } });
}

/** Scenarios 1-3 and 6: ProducerPerformance, then the Node generator, each on its own topic. */
async function produceScenario(
  broker: BrokerUnderTest,
  spec: { scenario: number; title: string; recordSizeBytes: number; partitions: number; props: Record<string, string>; nodeFlags: Record<string, string | number | boolean>; metric: 'MiB/s' | 'records/s'; target?: Figure['target'] },
  onJavaRun?: (pid: number) => () => void,
): Promise<void> {
  const kind = broker.kind;
  const figureOf = (generator: string, unit: 'MiB/s' | 'records/s'): FigureSpec => ({
    scenario: spec.scenario, title: spec.title, generator, metric: 'throughput', unit, better: 'higher',
    ...(spec.target !== undefined && unit === spec.metric ? { target: spec.target } : {}),
  });
  if (java()) {
    const topic = `bench-s${spec.scenario}-java`;
    log(`${kind}: scenario ${spec.scenario} (${spec.title}), ProducerPerformance`);
    const finish = onJavaRun?.(broker.pid);
    const rssBeforeKiB = rssKiB(broker.pid);
    const run = await onFreshTopic(broker, topic, spec.partitions, (t) => producedWithCpu(broker, spec, t, () => producerPerformance({
      bootstrap: broker.bootstrap, topic: t, recordSizeBytes: spec.recordSizeBytes, props: spec.props, durationS: OPTIONS.durationS, timeoutS: produceTimeoutS(),
    })));
    finish?.();
    const measured = run?.result ?? topicError(topic);
    if (run !== null && spec.partitions >= MANY_PARTITIONS) recordRssPerPartition(spec, broker, rssBeforeKiB, run.rssAtStartKiB);
    recordMeasured(figureOf('ProducerPerformance', spec.metric), kind, measured, (f) => (spec.metric === 'MiB/s' ? f.mibPerS : f.recordsPerS));
    if (spec.metric === 'records/s') recordMeasured(figureOf('ProducerPerformance', 'MiB/s'), kind, measured, (f) => f.mibPerS);
    if (run !== null && measured.figures !== null) recordCpuPerGib({ scenario: spec.scenario, title: spec.title, generator: 'ProducerPerformance' }, broker, run.cpuS, run.bytes, 'produced');
    log(`${kind}: scenario ${spec.scenario} ProducerPerformance: ${measured.figures === null ? measured.error : `${measured.figures.mibPerS.toFixed(1)} MiB/s, ${measured.figures.recordsPerS.toFixed(0)} records/s`}`);
  }
  if (node()) {
    const topic = `bench-s${spec.scenario}-node`;
    log(`${kind}: scenario ${spec.scenario} (${spec.title}), Spool client (Node)`);
    const run = await onFreshTopic(broker, topic, spec.partitions, (t) => producedWithCpu(broker, spec, t, () => nodeProduce({
      bootstrap: broker.bootstrap, topic: t, 'record-size': spec.recordSizeBytes, 'warmup-s': OPTIONS.nodeWarmupS, 'duration-s': OPTIONS.durationS, ...spec.nodeFlags,
    }, OPTIONS.nodeWarmupS + OPTIONS.durationS * 3 + 120)));
    const measured = run?.result ?? topicError(topic);
    recordMeasured(figureOf('Spool client (Node)', spec.metric), kind, measured, (f) => (spec.metric === 'MiB/s' ? f.mibPerS : f.recordsPerS));
    if (spec.metric === 'records/s') recordMeasured(figureOf('Spool client (Node)', 'MiB/s'), kind, measured, (f) => f.mibPerS);
    if (run !== null && measured.figures !== null) recordCpuPerGib({ scenario: spec.scenario, title: spec.title, generator: 'Spool client (Node)' }, broker, run.cpuS, run.bytes, 'produced');
    log(`${kind}: scenario ${spec.scenario} Spool client: ${measured.figures === null ? measured.error : `${measured.figures.mibPerS.toFixed(1)} MiB/s, ${measured.figures.recordsPerS.toFixed(0)} records/s`}`);
  }
}

const SCENARIO_1 = { scenario: 1, title: 'produce 1 KiB records, 8 partitions, acks=1, batch.size=65536, linger.ms=5', recordSizeBytes: RECORD_1K, partitions: PARTITIONS, props: PRODUCE_1K_PROPS, nodeFlags: { acks: '1', 'batch-size': 65536, 'linger-ms': 5 }, metric: 'MiB/s', target: THROUGHPUT_TARGET } as const;
const SCENARIO_2 = { scenario: 2, title: 'scenario 1 with acks=all and idempotence', recordSizeBytes: RECORD_1K, partitions: PARTITIONS, props: PRODUCE_IDEMPOTENT_PROPS, nodeFlags: { acks: 'all', idempotence: true, 'batch-size': 65536, 'linger-ms': 5 }, metric: 'MiB/s', target: THROUGHPUT_TARGET } as const;
const SCENARIO_3 = { scenario: 3, title: 'produce 100-byte records (otherwise scenario 1)', recordSizeBytes: RECORD_100B, partitions: PARTITIONS, props: PRODUCE_1K_PROPS, nodeFlags: { acks: '1', 'batch-size': 65536, 'linger-ms': 5 }, metric: 'records/s', target: THROUGHPUT_TARGET } as const;
const SCENARIO_6 = { scenario: 6, title: '1,000 partitions, 1 KiB records round-robin, batch.size=16384, linger.ms=5, acks=1 (small batches)', recordSizeBytes: RECORD_1K, partitions: MANY_PARTITIONS, props: MANY_PARTITIONS_PROPS, nodeFlags: { acks: '1', 'batch-size': 16384, 'linger-ms': 5, 'round-robin': true }, metric: 'records/s' } as const;

/** Scenario 1, sampling the broker's RSS while ProducerPerformance runs (scenario 8). */
async function scenario1(broker: BrokerUnderTest): Promise<void> {
  await produceScenario(broker, SCENARIO_1, (pid) => {
    const sampler = new RssSampler(pid);
    return () => {
      const rss = sampler.stop();
      if (OPTIONS.scenarios.has(8)) {
        record({ scenario: 8, title: 'memory: RSS under scenario 1 (ProducerPerformance)', generator: 'harness (/proc)', metric: 'peak RSS', unit: 'MiB', better: 'lower' }, broker.kind, rss.peakMiB, { details: rss });
        record({ scenario: 8, title: 'memory: RSS under scenario 1 (ProducerPerformance)', generator: 'harness (/proc)', metric: 'mean RSS', unit: 'MiB', better: 'lower' }, broker.kind, rss.meanMiB, { details: rss });
      }
    };
  });
}

/** Scenario 4: fill a topic with consumeMiB of 1 KiB records, then read it all from the beginning. */
async function scenario4(broker: BrokerUnderTest): Promise<void> {
  const kind = broker.kind;
  const title = `consume ${OPTIONS.consumeMiB} MiB of 1 KiB records from the beginning, 8 partitions`;
  const topic = 'bench-s4';
  const wanted = OPTIONS.consumeMiB * 1024;
  try {
    await createTopic(broker.bootstrap, topic, PARTITIONS);
  } catch (error) {
    record({ scenario: 4, title, generator: 'ConsumerPerformance', metric: 'throughput', unit: 'MiB/s', better: 'higher', target: THROUGHPUT_TARGET }, kind, null, { note: `could not create topic: ${String(error)}` });
    return;
  }
  log(`${kind}: scenario 4: filling ${topic} with ${wanted} records (ProducerPerformance, not measured)`);
  const fill = await producerPerformance({ bootstrap: broker.bootstrap, topic, recordSizeBytes: RECORD_1K, props: PRODUCE_1K_PROPS, numRecords: wanted, timeoutS: Math.max(180, OPTIONS.consumeMiB / 8) });
  const available = await recordsIn(broker.bootstrap, topic, PARTITIONS).catch(() => 0);
  const fillNote = available < wanted ? `the fill stored ${available} of ${wanted} records (${fill.error ?? 'stopped'}); read what was there` : undefined;
  if (available === 0) {
    record({ scenario: 4, title, generator: 'ConsumerPerformance', metric: 'throughput', unit: 'MiB/s', better: 'higher', target: THROUGHPUT_TARGET }, kind, null, { note: `fill failed: ${fill.error}` });
    await deleteTopic(broker.bootstrap, topic);
    return;
  }
  if (java()) {
    log(`${kind}: scenario 4: ConsumerPerformance reading ${available} records`);
    const { result: measured, cpuS } = await withBrokerCpu(broker, () => consumerPerformance({ bootstrap: broker.bootstrap, topic, numRecords: available, timeoutS: 600, group: `bench-cp-${kind}-${Date.now()}` }));
    const note = [fillNote, measured.error].filter((n) => n !== undefined && n !== null).join('; ') || null;
    const spec = { scenario: 4, title, generator: 'ConsumerPerformance', metric: 'throughput (fetch.MB.sec)', unit: 'MiB/s', better: 'higher', target: THROUGHPUT_TARGET } as const;
    record(spec, kind, measured.figures?.fetchMibPerS ?? null, { note, command: measured.command, details: measured.figures });
    const { target: _target, ...withoutTarget } = spec;
    record({ ...withoutTarget, metric: 'throughput incl. group join (MB.sec)' }, kind, measured.figures?.mibPerS ?? null, { command: measured.command });
    if (measured.figures !== null) recordCpuPerGib({ scenario: 4, title, generator: 'ConsumerPerformance' }, broker, cpuS, available * RECORD_1K, 'consumed');
    log(`${kind}: scenario 4 ConsumerPerformance: ${measured.figures === null ? measured.error : `${measured.figures.fetchMibPerS.toFixed(1)} MiB/s`}`);
  }
  if (node()) {
    log(`${kind}: scenario 4: Spool client consumer (at most ${OPTIONS.nodeConsumeS} s)`);
    const { result: measured, cpuS } = await withBrokerCpu(broker, () => nodeConsume({ bootstrap: broker.bootstrap, topic, records: available }, OPTIONS.nodeConsumeS));
    const spec = { scenario: 4, title, generator: 'Spool client (Node)', metric: 'throughput', unit: 'MiB/s', better: 'higher', target: THROUGHPUT_TARGET } as const;
    recordMeasured(spec, kind, measured, (f) => f.mibPerS);
    if (measured.figures !== null) recordCpuPerGib({ scenario: 4, title, generator: 'Spool client (Node)' }, broker, cpuS, measured.figures.bytes, 'consumed');
    log(`${kind}: scenario 4 Spool client: ${measured.figures === null ? measured.error : `${measured.figures.mibPerS.toFixed(1)} MiB/s`}`);
  }
  await deleteTopic(broker.bootstrap, topic);
}

/** Scenario 5: end-to-end latency at a fixed rate, Java and Node. */
async function scenario5(broker: BrokerUnderTest, javaClasspath: string | null): Promise<void> {
  const kind = broker.kind;
  const latencyRows = (generator: string, rateMiB: number, measured: Measured<{ p50Ms: number; p99Ms: number; p999Ms: number; maxMs: number }>): void => {
    const title = `end-to-end latency at ${rateMiB} MiB/s fixed rate (1 KiB records, 8 partitions, acks=all, linger.ms=1)`;
    const base = { scenario: 5, title, generator, unit: 'ms', better: 'lower' } as const;
    recordMeasured({ ...base, metric: 'p50' }, kind, measured, (f) => f.p50Ms);
    recordMeasured({ ...base, metric: 'p99', target: { op: '<=', ratio: 1.0 } }, kind, measured, (f) => f.p99Ms);
    recordMeasured({ ...base, metric: 'p99.9' }, kind, measured, (f) => f.p999Ms);
    recordMeasured({ ...base, metric: 'max' }, kind, measured, (f) => f.maxMs);
  };
  if (java() && javaClasspath !== null) {
    log(`${kind}: scenario 5: EndToEndFixedRate (Java) at ${OPTIONS.latencyMiBPerS} MiB/s`);
    const measured = await onFreshTopic(broker, 'bench-s5-java', PARTITIONS, (topic) => endToEndFixedRateJava(javaClasspath, {
      bootstrap: broker.bootstrap, topic, recordsPerS: OPTIONS.latencyMiBPerS * 1024, recordSizeBytes: RECORD_1K,
      warmupS: OPTIONS.latencyWarmupS, measureS: OPTIONS.latencyS, props: LATENCY_PROPS,
    })) ?? topicError('bench-s5-java');
    latencyRows('EndToEndFixedRate (Java)', OPTIONS.latencyMiBPerS, measured);
    log(`${kind}: scenario 5 Java: ${measured.figures === null ? measured.error : `p50 ${measured.figures.p50Ms} ms, p99 ${measured.figures.p99Ms} ms, max ${measured.figures.maxMs} ms`}`);
  }
  if (node()) {
    log(`${kind}: scenario 5: Spool client (Node) at ${OPTIONS.latencyNodeMiBPerS} MiB/s`);
    const measured = await onFreshTopic(broker, 'bench-s5-node', PARTITIONS, (topic) => nodeEndToEnd({
      bootstrap: broker.bootstrap, topic, recordsPerS: OPTIONS.latencyNodeMiBPerS * 1024, recordSizeBytes: RECORD_1K,
      warmupS: OPTIONS.latencyWarmupS, measureS: OPTIONS.latencyS, props: LATENCY_PROPS,
      producerFlags: { acks: 'all', idempotence: true, 'batch-size': 65536, 'linger-ms': 1 },
    })) ?? topicError('bench-s5-node');
    latencyRows('Spool client (Node)', OPTIONS.latencyNodeMiBPerS, measured);
    log(`${kind}: scenario 5 Node: ${measured.figures === null ? measured.error : `p50 ${measured.figures.p50Ms.toFixed(1)} ms, p99 ${measured.figures.p99Ms.toFixed(1)} ms`}`);
  }
}

function recordStartup(broker: BrokerUnderTest): void {
  const kind = broker.kind;
  const title = 'startup: broker process start to first acknowledged produce (empty data directory)';
  const note = kind === 'kafka'
    ? `kafka.sh formats the storage first (kafka-storage format, a separate JVM, not counted); launch of kafka.sh to first ack: ${(broker.startup.launchToFirstAckMs / 1000).toFixed(2)} s`
    : undefined;
  record({ scenario: 7, title, generator: 'harness (Spool client, acks=1)', metric: 'startup', unit: 's', better: 'lower', target: { op: '<=', ratio: 0.1 } }, kind,
    broker.startup.processStartToFirstAckMs === null ? null : broker.startup.processStartToFirstAckMs / 1000,
    { ...(note !== undefined ? { note } : {}), command: broker.startCommand, details: broker.startup });
}

async function recordIdleMemory(broker: BrokerUnderTest): Promise<void> {
  await sleepMs(OPTIONS.idleSettleS * 1000);
  const kib = rssKiB(broker.pid);
  record({ scenario: 8, title: `memory: RSS idle (${OPTIONS.idleSettleS} s after startup and one produce)`, generator: 'harness (/proc)', metric: 'RSS', unit: 'MiB', better: 'lower', target: { op: '<=', ratio: 0.25 } },
    broker.kind, kib === null ? null : kib / 1024, kib === null ? { note: 'process not found' } : {});
}

/**
 * A load that is not measured, so the first scenario does not pay for the
 * broker's JIT warm-up alone: scenario 1's ProducerPerformance for a few seconds.
 */
async function warmUp(broker: BrokerUnderTest): Promise<void> {
  if (OPTIONS.brokerWarmupS <= 0 || !java()) return;
  log(`${broker.kind}: warm-up, ${OPTIONS.brokerWarmupS} s of scenario 1 (not measured)`);
  await onFreshTopic(broker, 'bench-warmup', PARTITIONS, (topic) => producerPerformance({
    bootstrap: broker.bootstrap, topic, recordSizeBytes: RECORD_1K, props: PRODUCE_1K_PROPS, durationS: OPTIONS.brokerWarmupS, timeoutS: OPTIONS.brokerWarmupS * 3 + 60,
  }));
}

// ---------------------------------------------------------------- per broker

function brokerFailed(kind: BrokerKind, error: unknown): void {
  const message = `${kind === 'kafka' ? 'Apache Kafka' : 'Spool'} did not start: ${String(error).slice(0, 400)}`;
  runNotes.push(message);
  log(message);
}

async function benchBroker(kind: BrokerKind, javaClasspath: string | null): Promise<Partial<Record<BrokerKind, string>>> {
  log(`starting ${kind}`);
  let broker: BrokerUnderTest;
  try {
    broker = await startBroker(kind, { dir: join(OPTIONS.workDir, kind) });
  } catch (error) {
    brokerFailed(kind, error);
    return {};
  }
  log(`${kind} up (pid ${broker.pid}) at ${broker.bootstrap}; ${((broker.startup.processStartToFirstAckMs ?? NaN) / 1000).toFixed(2)} s to first ack`);
  try {
    if (OPTIONS.scenarios.has(7)) recordStartup(broker);
    if (OPTIONS.scenarios.has(8)) await recordIdleMemory(broker);
    await warmUp(broker);
    if (OPTIONS.scenarios.has(1)) await scenario1(broker);
    if (OPTIONS.scenarios.has(2)) await produceScenario(broker, SCENARIO_2);
    if (OPTIONS.scenarios.has(3)) await produceScenario(broker, SCENARIO_3);
    if (OPTIONS.scenarios.has(6)) await produceScenario(broker, SCENARIO_6);
    if (OPTIONS.scenarios.has(5)) await scenario5(broker, javaClasspath);
    if (OPTIONS.scenarios.has(4)) await scenario4(broker);
  } catch (error) {
    runNotes.push(`${kind}: the run stopped early: ${String(error).slice(0, 400)}`);
    log(`${kind}: ${String(error)}`);
  } finally {
    log(`stopping ${kind}`);
    await broker.stop({ keepDir: OPTIONS.keep }).catch((error: unknown) => log(`stop ${kind}: ${String(error)}`));
  }
  return { [kind]: broker.startCommand };
}

// ---------------------------------------------------------------- profiles

function newestProfile(dir: string): string | null {
  if (!existsSync(dir)) return null;
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  files.sort((a, b) => statSync(b).size - statSync(a).size);
  return files[0] ?? null;
}

/** Runs one load against a profiled Spool and summarizes the profile. */
async function profileSpool(scenario: number, title: string, load: (broker: BrokerUnderTest) => Promise<string>, prepare?: (broker: BrokerUnderTest) => Promise<void>): Promise<ProfileEntry> {
  const dir = join(OPTIONS.workDir, `spool-profile-${scenario}`);
  const profileDir = join(OPTIONS.workDir, `cpu-profile-${scenario}`);
  rmSync(profileDir, { recursive: true, force: true });
  let command = '';
  try {
    if (prepare !== undefined) {
      const filler = await startBroker('spool', { dir });
      try {
        await prepare(filler);
      } finally {
        await filler.stop({ keepDir: true });
      }
    }
    const broker = await startBroker('spool', { dir, reuse: prepare !== undefined, cpuProfileDir: profileDir });
    try {
      command = `${broker.startCommand}; ${await load(broker)}`;
    } finally {
      await broker.stop({ keepDir: OPTIONS.keep });
    }
    const file = newestProfile(profileDir);
    if (file === null) return { scenario, title, command, summary: null, error: 'no .cpuprofile written (does `spool start` exit through process.exit on SIGTERM?)' };
    const summary = summarizeProfile(file);
    return { scenario, title, command, summary, error: null };
  } catch (error) {
    return { scenario, title, command, summary: null, error: String(error).slice(0, 400) };
  } finally {
    if (!OPTIONS.keep) rmSync(dir, { recursive: true, force: true });
  }
}

async function profiles(): Promise<ProfileEntry[]> {
  const out: ProfileEntry[] = [];
  const produceLoad = (spec: typeof SCENARIO_1 | typeof SCENARIO_3) => async (broker: BrokerUnderTest): Promise<string> => {
    await createTopic(broker.bootstrap, 'bench-profile', PARTITIONS);
    const measured = await producerPerformance({ bootstrap: broker.bootstrap, topic: 'bench-profile', recordSizeBytes: spec.recordSizeBytes, props: spec.props, durationS: OPTIONS.profileS, timeoutS: OPTIONS.profileS * 3 + 60 });
    if (measured.figures !== null) log(`profiled spool, scenario ${spec.scenario}: ${measured.figures.mibPerS.toFixed(1)} MiB/s`);
    return measured.command;
  };
  if (OPTIONS.scenarios.has(1)) {
    log('profiling spool under scenario 1');
    out.push(await profileSpool(1, SCENARIO_1.title + ' (ProducerPerformance)', produceLoad(SCENARIO_1)));
  }
  if (OPTIONS.scenarios.has(3)) {
    log('profiling spool under scenario 3');
    out.push(await profileSpool(3, SCENARIO_3.title + ' (ProducerPerformance)', produceLoad(SCENARIO_3)));
  }
  if (OPTIONS.scenarios.has(4)) {
    log('profiling spool under scenario 4');
    const records = Math.min(OPTIONS.consumeMiB, 1024) * 1024;
    out.push(await profileSpool(4, `consume ${records / 1024} MiB from the beginning (ConsumerPerformance; filled before the profiled process started)`, async (broker) => {
      const measured = await consumerPerformance({ bootstrap: broker.bootstrap, topic: 'bench-profile', numRecords: records, timeoutS: 600, group: `bench-profile-${Date.now()}` });
      return measured.command;
    }, async (broker) => {
      await createTopic(broker.bootstrap, 'bench-profile', PARTITIONS);
      await producerPerformance({ bootstrap: broker.bootstrap, topic: 'bench-profile', recordSizeBytes: RECORD_1K, props: PRODUCE_1K_PROPS, numRecords: records, timeoutS: 300 });
    }));
  }
  return out;
}

// ---------------------------------------------------------------- main

function versions(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const git = (args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  const dirty = git(['status', '--porcelain', '--', 'src']) === '' ? '' : ' + uncommitted changes in src/';
  const libDir = join(REPO_ROOT, 'test', 'interop', 'kafka', 'lib');
  const kafkaJar = existsSync(libDir) ? readdirSync(libDir).find((f) => /^kafka_2\.13-.*\.jar$/.test(f)) : undefined;
  return {
    'Apache Kafka': kafkaJar?.replace(/^kafka_2\.13-|\.jar$/g, '') ?? '4.4.0',
    Spool: `${pkg.version} (git ${git(['rev-parse', '--short', 'HEAD'])}${dirty})`,
    Node: process.version,
  };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  mkdirSync(OPTIONS.workDir, { recursive: true });
  const machine = machineInfo(OPTIONS.workDir);
  log(`options: ${JSON.stringify({ ...OPTIONS, scenarios: [...OPTIONS.scenarios], generators: [...OPTIONS.generators] })}`);
  if (OPTIONS.brokers.includes('spool') && !existsSync(join(REPO_ROOT, SPOOL_MAIN))) {
    runNotes.push(`${SPOOL_MAIN} is missing: build first (npx tsc -p .)`);
  }
  snapshotBuild(join(OPTIONS.workDir, 'build'));
  let javaClasspath: string | null = null;
  if (java()) {
    log('resolving Kafka jars and compiling bench/java');
    javaClasspath = compileJavaHelpers();
  }
  let ceilings: Ceilings | null = null;
  if (OPTIONS.ceilings) {
    log('measuring ceilings: disk write, loopback TCP');
    ceilings = await measureCeilings(OPTIONS.workDir, { diskMiB: OPTIONS.diskCeilingMiB, tcpSeconds: QUICK ? 2 : 4 });
    log(`ceilings: disk ${ceilings.diskWriteBufferedMiBPerS.toFixed(0)} MiB/s (page cache), ${ceilings.diskWriteSyncedMiBPerS.toFixed(0)} MiB/s (fdatasync); loopback ${ceilings.loopbackTcpMiBPerS.toFixed(0)} MiB/s`);
  }
  let startCommands: Partial<Record<BrokerKind, string>> = {};
  for (const kind of OPTIONS.profileOnly ? [] : OPTIONS.brokers) startCommands = { ...startCommands, ...(await benchBroker(kind, javaClasspath)) };
  const profileEntries = OPTIONS.profile && OPTIONS.brokers.includes('spool') && java() ? await profiles() : [];
  machine.loadAverageEnd = loadAverage();

  const finishedAt = new Date();
  const stamp = startedAt.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const jsonPath = `bench/results/${stamp}${QUICK ? '-quick' : ''}.json`;
  const run: BenchRun = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    command: process.env.npm_lifecycle_event === 'bench' ? `npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}` : `node dist/bench/run.js ${process.argv.slice(2).join(' ')}`.trim(),
    options: { ...OPTIONS, scenarios: [...OPTIONS.scenarios], generators: [...OPTIONS.generators] },
    machine,
    versions: versions(),
    brokerSettings: commonBrokerSettings(),
    brokerStartCommands: startCommands,
    ceilings,
    figures: [...figures.values()].sort((a, b) => a.scenario - b.scenario),
    profiles: profileEntries,
    notes: runNotes,
  };
  writeJson(join(REPO_ROOT, jsonPath), run);
  const markdown = renderMarkdown(run, jsonPath);
  if (OPTIONS.docs) updatePerformanceDoc(join(REPO_ROOT, 'docs', 'PERFORMANCE.md'), markdown);
  process.stdout.write(markdown + '\n');
  log(`wrote ${jsonPath}${OPTIONS.docs ? ' and docs/PERFORMANCE.md' : ''}`);
  if (!OPTIONS.keep) rmSync(OPTIONS.workDir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the generators and brokers`);
    killRunningCommands();
    void stopAllBrokers().finally(() => process.exit(130));
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  },
);
