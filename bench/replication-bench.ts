/**
 * Replication figures, Spool next to Apache Kafka 4.4.0, three combined
 * (broker,controller) nodes each on this machine:
 *
 *   npx tsc -p . && node dist/bench/replication-bench.js [--rounds 2] [--brokers kafka,spool]
 *        [--warmup-s 20] [--duration-s 30] [--rate-mibps 2] [--catch-up-mib 1024] [--elections 3]
 *        [--kafka-heap '-Xms512m -Xmx1g'] [--quick]
 *
 * Each round starts a fresh cluster of each kind in turn (Kafka, then Spool,
 * so load from other work on the machine hits both), creates a topic of 8
 * partitions at RF=3 with min.insync.replicas=2 (Kafka's TopicCommand for
 * both), and measures:
 *
 * 1. acks=all produce with Kafka's ProducerPerformance (1 KiB records,
 *    batch.size=65536, linger.ms=5): first `--warmup-s` unmeasured (the
 *    brokers' and the tool's JIT), then `--duration-s` as fast as it goes
 *    (throughput of the report windows but the first), then the same time at
 *    a fixed `--rate-mibps` (the tool's p50 / p99 / p99.9 over the whole fixed
 *    run). CPU seconds of the three broker processes (/proc utime + stime)
 *    over each run, per GiB produced.
 * 2. Catch-up: one follower (a node that is not the active controller) is
 *    stopped cleanly (SIGTERM), the survivors drop it from every ISR,
 *    `--catch-up-mib` MiB are produced (acks=1: the fill is not measured), then it is
 *    restarted on its data: the time from the restart to the survivors'
 *    Metadata showing it back in all 8 ISRs (startup included; the time to
 *    its port answering is given too).
 * 3. Re-election: `--elections` times, kill -9 of partition 0's leader, then
 *    the survivors' Metadata polled every 50 ms until both name the same
 *    other leader (the fault suite's definition, docs/PERFORMANCE.md
 *    "Re-election after kill -9"); no produce load meanwhile. The killed
 *    node restarts and rejoins every ISR before the next one.
 *
 * Both clusters get the same lines: the fault suite's broker session
 * (`broker.session.timeout.ms=4000`, `broker.heartbeat.interval.ms=500`),
 * Kafka's defaults otherwise (replica.lag.time.max.ms 30 s, quorum timeouts).
 * Prints one line per measurement and a table at the end; the figures are
 * rough on a shared two-core machine: load averages are printed around
 * every run. `--quick` is a smoke run (short, 64 MiB catch-up, one election).
 *
 * Not a test, not in CI. Benchmark code: child processes, the clock and
 * node:fs directly.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../src/protocol/errors.js';
import { DescribeQuorum } from '../src/protocol/schemas/55-describe-quorum.js';
import { Metadata } from '../src/protocol/schemas/03-metadata.js';
import { freePort, startSpool, type SpoolProcess } from '../test/interop/clients/spool-process.js';
import { runKafkaTool, startKafkaNode, TOOL, type RunningKafka } from '../test/interop/kafka/kafka.js';
import { producerPerformance, type ProducerFigures } from './lib/generators.js';
import { ask } from './lib/quorum.js';
import { cpuSeconds, killRunningCommands, loadAverage, machineInfo, processAlive } from './lib/proc.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    brokers: { type: 'string', default: 'kafka,spool' },
    'warmup-s': { type: 'string' },
    'duration-s': { type: 'string' },
    'rate-mibps': { type: 'string', default: '2' },
    'catch-up-mib': { type: 'string' },
    elections: { type: 'string' },
    'kafka-heap': { type: 'string', default: '-Xms512m -Xmx1g' },
    quick: { type: 'boolean', default: false },
  },
});
const QUICK = flags.quick;
const ROUNDS = Number(flags.rounds);
const KINDS = flags.brokers.split(',').filter((k): k is Kind => k === 'kafka' || k === 'spool');
const WARMUP_S = Number(flags['warmup-s'] ?? (QUICK ? 4 : 20));
const DURATION_S = Number(flags['duration-s'] ?? (QUICK ? 6 : 30));
const RATE_MIBPS = Number(flags['rate-mibps']);
const CATCH_UP_MIB = Number(flags['catch-up-mib'] ?? (QUICK ? 64 : 1024));
const ELECTIONS = Number(flags.elections ?? (QUICK ? 1 : 3));
process.env.KAFKA_HEAP_OPTS = flags['kafka-heap'];
// A JVM restarting under a load average of 30-40 on two cores has been seen to need more than kafka.sh's default 60 s.
process.env.KAFKA_START_TIMEOUT_S ??= '180';

type Kind = 'kafka' | 'spool';
const TOPIC = 'repl-bench';
const PARTITIONS = 8;
const RECORD_BYTES = 1024;
const NODE_IDS = [0, 1, 2] as const;
const POLL_MS = 50;
const WAIT_MS = 180_000;
/** request.timeout.ms of the one-off Metadata and DescribeQuorum requests the bench polls with. */
const ASK_TIMEOUT_MS = 3000;
const GIB = 2 ** 30;
const PRODUCER_PROPS = { acks: 'all', 'batch.size': '65536', 'linger.ms': '5' };

/** Lines both clusters get on top of their node's own (roles, id, listeners, voters). */
const COMMON_LINES = [
  'num.partitions=8',
  'default.replication.factor=3',
  'min.insync.replicas=2',
  'offsets.topic.replication.factor=3',
  'transaction.state.log.replication.factor=3',
  'transaction.state.log.min.isr=2',
  'group.initial.rebalance.delay.ms=0',
  `log.segment.bytes=${256 * 1024 * 1024}`,
  'broker.session.timeout.ms=4000',
  'broker.heartbeat.interval.ms=500',
];

interface Node {
  id: number;
  port: number;
  controllerPort: number;
  dir: string;
  pid: number | null;
}

interface Cluster {
  kind: Kind;
  nodes: Node[];
  bootstrap: string;
  start(node: Node): Promise<void>;
  /** SIGTERM, wait for exit; keeps the data. */
  stop(node: Node): Promise<void>;
  kill9(node: Node): Promise<void>;
  destroy(): Promise<void>;
}

// ---------------------------------------------------------------- clusters

async function allocate(kind: Kind): Promise<Node[]> {
  const nodes: Node[] = [];
  for (const id of NODE_IDS) nodes.push({ id, port: await freePort(), controllerPort: await freePort(), dir: mkdtempSync(join(tmpdir(), `repl-bench-${kind}-${id}-`)), pid: null });
  return nodes;
}

const votersOf = (nodes: readonly Node[]): string => nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');

/** A started node process as kafka.ts and spool-process.ts give it. */
interface NodeProcess {
  pid: number;
  stop(options: { keepDir: boolean }): Promise<unknown>;
}

/** Starts the three nodes with `launch` and wraps them in a Cluster; `kill9` ends one process with SIGKILL and waits. */
async function startCluster<P extends NodeProcess>(kind: Kind, launch: (node: Node, nodes: readonly Node[]) => Promise<P>, kill9: (process: P) => Promise<void>): Promise<Cluster> {
  const nodes = await allocate(kind);
  const running = new Map<number, P>();
  const cluster: Cluster = {
    kind,
    nodes,
    bootstrap: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    async start(node) {
      const started = await launch(node, nodes);
      running.set(node.id, started);
      node.pid = started.pid;
    },
    async stop(node) {
      await running.get(node.id)?.stop({ keepDir: true });
      running.delete(node.id);
      node.pid = null;
    },
    async kill9(node) {
      const victim = running.get(node.id);
      if (victim !== undefined) await kill9(victim);
      running.delete(node.id);
      node.pid = null;
    },
    async destroy() {
      for (const node of nodes) await cluster.kill9(node);
      for (const node of nodes) rmSync(node.dir, { recursive: true, force: true });
    },
  };
  const started = await Promise.allSettled(nodes.map((node) => cluster.start(node)));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) {
    await cluster.destroy();
    throw failed.reason;
  }
  return cluster;
}

function startKafkaCluster(): Promise<Cluster> {
  const clusterId = randomBytes(16).toString('base64url');
  const properties = (node: Node, nodes: readonly Node[]): string[] => [
    'process.roles=broker,controller',
    `node.id=${node.id}`,
    `controller.quorum.voters=${votersOf(nodes)}`,
    `listeners=PLAINTEXT://127.0.0.1:${node.port},CONTROLLER://127.0.0.1:${node.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${node.port}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    ...COMMON_LINES,
  ];
  return startCluster<RunningKafka>(
    'kafka',
    // The broker port answers once the node is unfenced (kafka.sh start-config waits for it).
    (node, nodes) => startKafkaNode({ port: node.port, clusterId, dir: node.dir, properties: properties(node, nodes) }),
    (kafka) => killAndWait(kafka.pid),
  );
}

/** SIGKILL to a process that is not our child (Kafka runs under setsid), then waits until it is gone. */
async function killAndWait(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  while (processAlive(pid)) await sleep(10);
}

function startSpoolCluster(): Promise<Cluster> {
  const clusterId = randomBytes(16).toString('base64url');
  return startCluster<SpoolProcess>(
    'spool',
    (node, nodes) =>
      startSpool({
        dir: node.dir,
        port: node.port,
        controllerPort: node.controllerPort,
        overrides: [`node.id=${node.id}`, 'process.roles=broker,controller', `controller.quorum.voters=${votersOf(nodes)}`, `cluster.id=${clusterId}`, ...COMMON_LINES],
      }),
    (spool) => spool.kill9(),
  );
}

// ---------------------------------------------------------------- observing

interface PartitionView {
  leader: number;
  isr: number[];
}

/** The topic's partitions as `node` sees them (index = partition), or null. */
async function partitionsSeenBy(node: Node): Promise<PartitionView[] | null> {
  if (node.pid === null) return null;
  const metadata = await ask(node.port, (c) => c.send(Metadata, { topics: [{ name: TOPIC }], allowAutoTopicCreation: false }), ASK_TIMEOUT_MS);
  const topic = metadata?.topics[0];
  if (topic === undefined || topic.errorCode !== ErrorCode.NONE || topic.partitions.length !== PARTITIONS) return null;
  const views: PartitionView[] = [];
  for (const p of topic.partitions) views[p.partitionIndex] = { leader: p.leaderId, isr: [...p.isrNodes].sort() };
  return views;
}

/** Polls until every live node but `except` sees a state `accept` takes; returns the first node's view. */
async function untilSeen(what: string, nodes: readonly Node[], accept: (views: PartitionView[]) => boolean, except: readonly number[] = []): Promise<PartitionView[]> {
  const deadline = performance.now() + WAIT_MS;
  const askNodes = nodes.filter((n) => !except.includes(n.id));
  for (;;) {
    const views = await Promise.all(askNodes.map((n) => partitionsSeenBy(n)));
    if (views.every((v) => v !== null && accept(v))) return views[0]!;
    if (performance.now() > deadline) throw new Error(`not seen within ${WAIT_MS} ms: ${what}`);
    await sleep(POLL_MS);
  }
}

const fullyReplicated = (views: PartitionView[]): boolean => views.every((p) => p.leader >= 0 && p.isr.length === NODE_IDS.length);

/** The active controller's node id (DescribeQuorum on a controller listener), or -1. */
async function activeController(nodes: readonly Node[]): Promise<number> {
  for (const node of nodes) {
    if (node.pid === null) continue;
    const described = await ask(node.controllerPort, (c) => c.send(DescribeQuorum, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }), ASK_TIMEOUT_MS);
    const p = described?.topics[0]?.partitions[0];
    if (p?.errorCode === ErrorCode.NONE && p.leaderId >= 0) return p.leaderId;
  }
  return -1;
}

const clusterCpu = (cluster: Cluster): number => cluster.nodes.reduce((sum, n) => sum + (n.pid === null ? 0 : cpuSeconds(n.pid)), 0);
const load = (): string => loadAverage().join(' ');

// ---------------------------------------------------------------- measurements

interface ProduceResult {
  mibPerS: number;
  avgLatencyMs: number;
  p50Ms: number | null;
  p99Ms: number | null;
  p999Ms: number | null;
  cpuSPerGiB: number;
}

async function produce(cluster: Cluster, options: { durationS: number; recordsPerS?: number }): Promise<ProduceResult> {
  const cpuBefore = clusterCpu(cluster);
  const fixed = options.recordsPerS !== undefined;
  const measured = await producerPerformance({
    bootstrap: cluster.bootstrap,
    topic: TOPIC,
    recordSizeBytes: RECORD_BYTES,
    props: PRODUCER_PROPS,
    // At a fixed rate the tool runs its records to the end and prints its percentiles; at full speed it is stopped by time.
    ...(fixed ? { numRecords: Math.round(options.recordsPerS! * options.durationS), recordsPerS: options.recordsPerS! } : { durationS: options.durationS }),
    reportingIntervalMs: 2000,
    timeoutS: options.durationS * 4 + 60,
  });
  const cpu = clusterCpu(cluster) - cpuBefore;
  if (measured.figures === null) throw new Error(`ProducerPerformance failed: ${measured.error}\n${measured.command}`);
  const figures: ProducerFigures = measured.figures;
  const records = figures.summary?.records ?? figures.windows.reduce((s, w) => s + w.records, 0);
  const steady = figures.windows.slice(1);
  const avgLatencyMs = figures.summary?.avgLatencyMs ?? steady.reduce((s, w) => s + w.avgLatencyMs * w.records, 0) / Math.max(1, steady.reduce((s, w) => s + w.records, 0));
  return {
    mibPerS: fixed && figures.summary !== null ? figures.summary.mibPerS : figures.mibPerS,
    avgLatencyMs,
    p50Ms: figures.summary?.p50Ms ?? null,
    p99Ms: figures.summary?.p99Ms ?? null,
    p999Ms: figures.summary?.p999Ms ?? null,
    cpuSPerGiB: cpu / ((records * RECORD_BYTES) / GIB),
  };
}

interface CatchUp {
  readyMs: number;
  inIsrMs: number;
  followerCpuS: number;
  /** Bytes of the topic's .log segments on each node once the follower is back: the follower must hold what the others do. */
  logMiB: number[];
  clusterCpuS: number;
}

async function catchUp(cluster: Cluster): Promise<CatchUp> {
  const controller = await activeController(cluster.nodes);
  const follower = cluster.nodes.find((n) => n.id !== controller)!;
  await cluster.stop(follower);
  await untilSeen(`node ${follower.id} out of every ISR`, cluster.nodes, (views) => views.every((p) => p.leader >= 0 && p.leader !== follower.id && !p.isr.includes(follower.id)), [follower.id]);
  const records = Math.round((CATCH_UP_MIB * 1024 * 1024) / RECORD_BYTES);
  // acks=1 for the fill only: it is not measured, and it goes faster on a loaded machine.
  const fill = await producerPerformance({ bootstrap: cluster.bootstrap, topic: TOPIC, recordSizeBytes: RECORD_BYTES, props: { ...PRODUCER_PROPS, acks: '1' }, numRecords: records, timeoutS: 1200 });
  if (fill.figures?.summary === null || fill.figures === null) throw new Error(`fill failed: ${fill.error}`);
  console.log(`  ${cluster.kind}: node ${follower.id} stopped, ${CATCH_UP_MIB} MiB produced (acks=1) at ${fill.figures.summary.mibPerS.toFixed(1)} MiB/s with ISR of two; restarting it (load ${load()})`);
  const cpuBefore = clusterCpu(cluster);
  const startedAt = performance.now();
  await cluster.start(follower);
  const readyMs = performance.now() - startedAt;
  await untilSeen(`node ${follower.id} back in every ISR`, cluster.nodes, (views) => views.every((p) => p.isr.includes(follower.id)), [follower.id]);
  const inIsrMs = performance.now() - startedAt;
  const clusterCpuS = clusterCpu(cluster) - cpuBefore;
  return { readyMs, inIsrMs, followerCpuS: cpuSeconds(follower.pid!), clusterCpuS, logMiB: cluster.nodes.map((n) => topicLogBytes(n.dir) / 2 ** 20) };
}

/** Sum of the topic's segment files (`*.log` under `<TOPIC>-<n>` directories) below `dir`. */
function topicLogBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += topicLogBytes(path);
    else if (entry.name.endsWith('.log') && dir.split('/').pop()!.startsWith(`${TOPIC}-`)) bytes += statSync(path).size;
  }
  return bytes;
}

interface Election {
  ms: number;
  victimWasController: boolean;
}

async function reElection(cluster: Cluster): Promise<Election> {
  const before = await untilSeen('fully replicated', cluster.nodes, fullyReplicated);
  const victim = cluster.nodes.find((n) => n.id === before[0]!.leader)!;
  const controller = await activeController(cluster.nodes);
  const killedAt = performance.now();
  await cluster.kill9(victim);
  await untilSeen(`partition 0 led by another node`, cluster.nodes, (views) => views[0]!.leader >= 0 && views[0]!.leader !== victim.id, [victim.id]);
  // Both survivors must name the same leader: ask again until they agree.
  for (;;) {
    const views = await Promise.all(cluster.nodes.filter((n) => n !== victim).map((n) => partitionsSeenBy(n)));
    const leaders = views.map((v) => v?.[0]?.leader);
    if (leaders.every((l) => l !== undefined && l >= 0 && l !== victim.id && l === leaders[0])) break;
    await sleep(POLL_MS);
  }
  const ms = performance.now() - killedAt;
  await cluster.start(victim);
  await untilSeen('fully replicated after the restart', cluster.nodes, fullyReplicated);
  return { ms, victimWasController: victim.id === controller };
}

interface RoundResult {
  kind: Kind;
  max: ProduceResult;
  fixed: ProduceResult;
  catchUp: CatchUp;
  elections: Election[];
  loadBefore: string;
  loadAfter: string;
}

/** The cluster under measurement, for SIGINT: Kafka runs under setsid and would outlive the harness. */
let current: Cluster | null = null;

async function oneRound(kind: Kind): Promise<RoundResult> {
  const loadBefore = load();
  console.log(`${kind}: starting three combined nodes (load ${loadBefore})`);
  const cluster = kind === 'kafka' ? await startKafkaCluster() : await startSpoolCluster();
  current = cluster;
  try {
    const created = await runKafkaTool(TOOL.topics, [
      '--bootstrap-server', cluster.bootstrap, '--create', '--topic', TOPIC, '--partitions', String(PARTITIONS), '--replication-factor', '3', '--config', 'min.insync.replicas=2',
    ]);
    if (created.code !== 0) throw new Error(`topic creation failed: ${created.stderr}`);
    await untilSeen('fully replicated', cluster.nodes, fullyReplicated);
    await produce(cluster, { durationS: WARMUP_S });
    const max = await produce(cluster, { durationS: DURATION_S });
    console.log(`  ${kind}: max ${max.mibPerS.toFixed(1)} MiB/s, avg latency ${max.avgLatencyMs.toFixed(1)} ms, ${max.cpuSPerGiB.toFixed(1)} CPU s/GiB (load ${load()})`);
    const fixed = await produce(cluster, { durationS: DURATION_S, recordsPerS: Math.round((RATE_MIBPS * 1024 * 1024) / RECORD_BYTES) });
    console.log(`  ${kind}: at ${RATE_MIBPS} MiB/s p50 ${fixed.p50Ms} / p99 ${fixed.p99Ms} / p99.9 ${fixed.p999Ms} ms, ${fixed.cpuSPerGiB.toFixed(1)} CPU s/GiB (load ${load()})`);
    const caught = await catchUp(cluster);
    console.log(`  ${kind}: catch-up of ${CATCH_UP_MIB} MiB: port answering after ${caught.readyMs.toFixed(0)} ms, back in every ISR after ${caught.inIsrMs.toFixed(0)} ms; follower ${caught.followerCpuS.toFixed(1)} CPU s, cluster ${caught.clusterCpuS.toFixed(1)} CPU s; topic logs ${caught.logMiB.map((m) => m.toFixed(0)).join(' / ')} MiB on nodes 0 / 1 / 2 (load ${load()})`);
    const elections: Election[] = [];
    for (let i = 0; i < ELECTIONS; i++) {
      const election = await reElection(cluster);
      elections.push(election);
      console.log(`  ${kind}: kill -9 of partition 0's leader${election.victimWasController ? ' (also the active controller)' : ''}: new leader agreed after ${election.ms.toFixed(0)} ms (load ${load()})`);
    }
    return { kind, max, fixed, catchUp: caught, elections, loadBefore, loadAfter: load() };
  } finally {
    current = null;
    await cluster.destroy();
  }
}

// ---------------------------------------------------------------- main

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const spread = (values: readonly number[], digits = 0): string =>
  values.length === 1 ? values[0]!.toFixed(digits) : `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)})`;

function table(results: readonly RoundResult[]): string {
  const of = (kind: Kind) => results.filter((r) => r.kind === kind);
  const rows: [string, (rs: RoundResult[]) => string][] = [
    ['acks=all produce, MiB/s (max)', (rs) => spread(rs.map((r) => r.max.mibPerS), 1)],
    ['  avg latency at max, ms', (rs) => spread(rs.map((r) => r.max.avgLatencyMs), 1)],
    ['  broker CPU s per GiB at max (3 nodes)', (rs) => spread(rs.map((r) => r.max.cpuSPerGiB), 1)],
    [`p50 latency at ${RATE_MIBPS} MiB/s, ms`, (rs) => spread(rs.map((r) => r.fixed.p50Ms ?? NaN))],
    [`p99 latency at ${RATE_MIBPS} MiB/s, ms`, (rs) => spread(rs.map((r) => r.fixed.p99Ms ?? NaN))],
    [`p99.9 latency at ${RATE_MIBPS} MiB/s, ms`, (rs) => spread(rs.map((r) => r.fixed.p999Ms ?? NaN))],
    [`  broker CPU s per GiB at ${RATE_MIBPS} MiB/s`, (rs) => spread(rs.map((r) => r.fixed.cpuSPerGiB), 1)],
    [`catch-up of ${CATCH_UP_MIB} MiB: restart to back in every ISR, s`, (rs) => spread(rs.map((r) => r.catchUp.inIsrMs / 1000), 1)],
    ['  restart to port answering, s', (rs) => spread(rs.map((r) => r.catchUp.readyMs / 1000), 1)],
    ['  port answering to back in every ISR, s', (rs) => spread(rs.map((r) => (r.catchUp.inIsrMs - r.catchUp.readyMs) / 1000), 1)],
    ['  follower CPU s during catch-up', (rs) => spread(rs.map((r) => r.catchUp.followerCpuS), 1)],
    ['re-election after kill -9 of the leader, ms', (rs) => spread(rs.flatMap((r) => r.elections.map((e) => e.ms)))],
  ];
  const kinds = KINDS.filter((k) => of(k).length > 0);
  const lines = [`| | ${kinds.map((k) => (k === 'kafka' ? 'Apache Kafka 4.4.0' : 'Spool')).join(' | ')} |`, `|---|${kinds.map(() => '---:').join('|')}|`];
  for (const [name, cell] of rows) lines.push(`| ${name} | ${kinds.map((k) => cell(of(k))).join(' | ')} |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const machine = machineInfo(tmpdir());
  console.log(`${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.kernel}, node ${machine.node}, ${machine.java}; load ${machine.loadAverageStart.join(' ')}`);
  console.log(`rounds ${ROUNDS}, warm-up ${WARMUP_S} s, runs of ${DURATION_S} s, fixed rate ${RATE_MIBPS} MiB/s, catch-up ${CATCH_UP_MIB} MiB, ${ELECTIONS} elections, Kafka heap ${flags['kafka-heap']}`);
  const results: RoundResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of KINDS) {
      console.log(`-- round ${round}`);
      results.push(await oneRound(kind));
    }
  }
  console.log('');
  console.log(table(results));
  console.log('');
  for (const r of results) {
    console.log(`${r.kind}: load ${r.loadBefore} -> ${r.loadAfter}; elections ${r.elections.map((e) => `${e.ms.toFixed(0)}${e.victimWasController ? '*' : ''}`).join(', ')} ms (* the victim was also the active controller)`);
  }
}

process.on('SIGINT', () => {
  killRunningCommands();
  for (const node of current?.nodes ?? []) if (node.pid !== null) process.kill(node.pid, 'SIGKILL');
  process.exit(130);
});
await main();
