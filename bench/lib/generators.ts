/**
 * The load generators, each run as its own process and its output parsed:
 * Kafka's ProducerPerformance and ConsumerPerformance (kafka-tools 4.4.0 via
 * `kafka.sh tool`), the fixed-rate end-to-end latency program in
 * bench/java/ (kafka-clients 4.4.0), and bench/node-perf.ts (Spool's client).
 *
 * ProducerPerformance counts records, not seconds; to give each scenario the
 * same wall time on a fast and a slow broker, the harness asks for far more
 * records than it needs, reads the periodic report lines and stops the tool
 * (SIGTERM) once the wanted number of windows has been printed. Throughput is
 * the records of all windows but the first (JVM warm-up, metadata, topic
 * creation) over their summed durations (records / records-per-second of
 * each window, as the tool prints them).
 */
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { buildRootDir, commandLine, REPO_ROOT, runCommand, shownPath, type CommandResult } from './proc.js';

const KAFKA_SH = join(REPO_ROOT, 'test', 'interop', 'kafka', 'kafka.sh');
const KAFKA_SH_SHOWN = 'test/interop/kafka/kafka.sh';
export const PRODUCER_PERFORMANCE = 'org.apache.kafka.tools.ProducerPerformance';
export const CONSUMER_PERFORMANCE = 'org.apache.kafka.tools.ConsumerPerformance';
const E2E_CLASS_DIR = join(REPO_ROOT, 'dist', 'bench', 'java');
const E2E_SOURCE = join(REPO_ROOT, 'bench', 'java', 'EndToEndFixedRate.java');
const LOG4J_TOOLS = join(REPO_ROOT, 'test', 'interop', 'kafka', 'config', 'log4j2-tools.properties');
/** A fixed-rate sender further behind its schedule than this gets a note next to its latency figures. */
const SENDER_LAG_NOTE_MS = 100;
/** Records asked of ProducerPerformance when the harness stops it by time. */
const RECORDS_UNBOUNDED = 1_000_000_000;

/** A generator's outcome: the figures, or why there are none. */
export interface Measured<T> {
  figures: T | null;
  error: string | null;
  /** The exact command, with the broker address. */
  command: string;
}

function tail(text: string, lines = 6): string {
  return text.trim().split('\n').slice(-lines).join(' | ').slice(0, 600);
}

function failure(result: CommandResult): string {
  return `exit ${result.code ?? result.signal}${result.stopped ? ' (stopped by the harness)' : ''}: ${tail(result.stderr || result.stdout)}`;
}

// ---------------------------------------------------------------- ProducerPerformance

export interface ProducerWindow {
  records: number;
  recordsPerS: number;
  mibPerS: number;
  avgLatencyMs: number;
  maxLatencyMs: number;
}

export interface ProducerSummary extends ProducerWindow {
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  p999Ms: number;
}

export interface ProducerFigures {
  recordsPerS: number;
  mibPerS: number;
  /** Seconds the throughput figure covers. */
  measuredS: number;
  windows: ProducerWindow[];
  summary: ProducerSummary | null;
}

const WINDOW_LINE = /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency\.$/;
const SUMMARY_LINE = /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$/;

export function parseProducerWindow(line: string): ProducerWindow | null {
  const m = WINDOW_LINE.exec(line.trim());
  if (m === null) return null;
  return { records: Number(m[1]), recordsPerS: Number(m[2]), mibPerS: Number(m[3]), avgLatencyMs: Number(m[4]), maxLatencyMs: Number(m[5]) };
}

export function parseProducerSummary(line: string): ProducerSummary | null {
  const m = SUMMARY_LINE.exec(line.trim());
  if (m === null) return null;
  return {
    records: Number(m[1]), recordsPerS: Number(m[2]), mibPerS: Number(m[3]), avgLatencyMs: Number(m[4]), maxLatencyMs: Number(m[5]),
    p50Ms: Number(m[6]), p95Ms: Number(m[7]), p99Ms: Number(m[8]), p999Ms: Number(m[9]),
  };
}

/** Steady-state throughput: all windows but the first, or the summary when there are too few windows. */
export function steadyThroughput(windows: readonly ProducerWindow[], summary: ProducerSummary | null, recordSizeBytes: number): ProducerFigures | null {
  const steady = windows.length >= 3 ? windows.slice(1) : [];
  const seconds = steady.reduce((s, w) => s + (w.recordsPerS > 0 ? w.records / w.recordsPerS : 0), 0);
  const records = steady.reduce((s, w) => s + w.records, 0);
  if (seconds > 0) {
    const recordsPerS = records / seconds;
    return { recordsPerS, mibPerS: (recordsPerS * recordSizeBytes) / 1048576, measuredS: seconds, windows: [...windows], summary };
  }
  if (summary === null) return null;
  return { recordsPerS: summary.recordsPerS, mibPerS: summary.mibPerS, measuredS: summary.records / Math.max(1e-9, summary.recordsPerS), windows: [...windows], summary };
}

export interface ProducerPerformanceOptions {
  bootstrap: string;
  topic: string;
  recordSizeBytes: number;
  props: Record<string, string>;
  /** Run for about this long (windows after the first); omit to run numRecords to the end. */
  durationS?: number;
  numRecords?: number;
  reportingIntervalMs?: number;
  /** ProducerPerformance's --throughput (records/s); default -1, as fast as the broker takes them. */
  recordsPerS?: number;
  /** Hard limit. */
  timeoutS: number;
}

export async function producerPerformance(options: ProducerPerformanceOptions): Promise<Measured<ProducerFigures>> {
  const intervalMs = options.reportingIntervalMs ?? 2000;
  const args = [
    'tool', PRODUCER_PERFORMANCE,
    '--bootstrap-server', options.bootstrap,
    '--topic', options.topic,
    '--num-records', String(options.numRecords ?? RECORDS_UNBOUNDED),
    '--record-size', String(options.recordSizeBytes),
    '--throughput', String(options.recordsPerS ?? -1),
    '--reporting-interval', String(intervalMs),
    '--command-property', ...Object.entries(options.props).map(([k, v]) => `${k}=${v}`),
  ];
  const windowsWanted = options.durationS === undefined ? Infinity : Math.ceil((options.durationS * 1000) / intervalMs) + 1;
  const windows: ProducerWindow[] = [];
  let summary: ProducerSummary | null = null;
  const result = await runCommand(KAFKA_SH, args, {
    timeoutMs: options.timeoutS * 1000,
    onLine(line) {
      const s = parseProducerSummary(line);
      if (s !== null) summary = s;
      const w = parseProducerWindow(line);
      if (w !== null) windows.push(w);
      return windows.length >= windowsWanted;
    },
  });
  const command = commandLine(KAFKA_SH_SHOWN, args);
  const figures = steadyThroughput(windows, summary, options.recordSizeBytes);
  const timedOut = result.stopped && windows.length < windowsWanted;
  const error = figures === null ? failure(result) : timedOut && options.durationS === undefined ? `did not finish in ${options.timeoutS} s; figures from the windows printed` : null;
  return { figures, error, command };
}

// ---------------------------------------------------------------- ConsumerPerformance

export interface ConsumerFigures {
  records: number;
  mib: number;
  /** data.consumed / (end - start), group join included. */
  mibPerS: number;
  /** fetch.MB.sec: rebalance time excluded. */
  fetchMibPerS: number;
  fetchRecordsPerS: number;
  rebalanceMs: number;
  fetchMs: number;
}

export function parseConsumerSummary(stdout: string): ConsumerFigures | null {
  const lines = stdout.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const fields = (lines[i] ?? '').split(',').map((f) => f.trim());
    if (fields.length !== 10 || !/^\d/.test(fields[0] ?? '')) continue;
    const n = fields.map(Number);
    return { mib: n[2]!, mibPerS: n[3]!, records: n[4]!, rebalanceMs: n[6]!, fetchMs: n[7]!, fetchMibPerS: n[8]!, fetchRecordsPerS: n[9]! };
  }
  return null;
}

export async function consumerPerformance(options: { bootstrap: string; topic: string; numRecords: number; timeoutS: number; group: string; props?: Record<string, string> }): Promise<Measured<ConsumerFigures>> {
  // One flag per property: ConsumerPerformance (joptsimple) takes one value per --command-property.
  const props = Object.entries(options.props ?? {}).flatMap(([k, v]) => ['--command-property', `${k}=${v}`]);
  const args = [
    'tool', CONSUMER_PERFORMANCE,
    '--bootstrap-server', options.bootstrap,
    '--topic', options.topic,
    '--num-records', String(options.numRecords),
    '--group', options.group,
    '--timeout', '30000',
    ...props,
  ];
  const result = await runCommand(KAFKA_SH, args, { timeoutMs: options.timeoutS * 1000 });
  const figures = parseConsumerSummary(result.stdout);
  const command = commandLine(KAFKA_SH_SHOWN, args);
  if (figures === null) return { figures, error: failure(result), command };
  const short = figures.records < options.numRecords ? `read ${figures.records} of ${options.numRecords} records` : null;
  return { figures, error: short, command };
}

// ---------------------------------------------------------------- EndToEndFixedRate (Java)

export interface LatencyFigures {
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  measuredRecords: number;
  missingRecords: number;
  senderMaxLagMs?: number;
}

/** Compiles bench/java/EndToEndFixedRate.java against the Kafka jars (kafka.sh classpath runs setup.sh). */
export function compileJavaHelpers(): string {
  const classpath = execFileSync(KAFKA_SH, ['classpath'], { encoding: 'utf8' }).trim();
  mkdirSync(E2E_CLASS_DIR, { recursive: true });
  execFileSync('javac', ['-nowarn', '-d', E2E_CLASS_DIR, '-cp', classpath, E2E_SOURCE], { stdio: ['ignore', 'inherit', 'inherit'] });
  return classpath;
}

export interface FixedRateOptions {
  bootstrap: string;
  topic: string;
  recordsPerS: number;
  recordSizeBytes: number;
  warmupS: number;
  measureS: number;
  props: Record<string, string>;
}

export async function endToEndFixedRateJava(classpath: string, options: FixedRateOptions): Promise<Measured<LatencyFigures>> {
  const args = [
    '-Xmx512m', `-Dlog4j2.configurationFile=${LOG4J_TOOLS}`, '-cp', `${E2E_CLASS_DIR}:${classpath}`, 'EndToEndFixedRate',
    options.bootstrap, options.topic, String(options.recordsPerS), String(options.recordSizeBytes),
    String(options.warmupS), String(options.measureS),
    ...Object.entries(options.props).map(([k, v]) => `${k}=${v}`),
  ];
  const result = await runCommand('java', args, { timeoutMs: (options.warmupS + options.measureS + 120) * 1000 });
  const shownArgs = args.map((a) => a.replace(REPO_ROOT + '/', '')).map((a) => (a.includes('/lib/*') ? 'dist/bench/java:$(test/interop/kafka/kafka.sh classpath)' : a));
  const command = commandLine('java', shownArgs);
  const json = lastJson(result.stdout);
  if (json === null) return { figures: null, error: failure(result), command };
  const figures = json as unknown as LatencyFigures;
  return { figures, error: latencyCaveats(figures), command };
}

/** What a reader of a latency figure must know: lost records, a sender that could not keep its schedule. */
function latencyCaveats(figures: LatencyFigures): string | null {
  const caveats: string[] = [];
  if (figures.missingRecords > 0) caveats.push(`${figures.missingRecords} measured records never arrived`);
  if ((figures.senderMaxLagMs ?? 0) > SENDER_LAG_NOTE_MS) {
    caveats.push(`the sender fell up to ${figures.senderMaxLagMs!.toFixed(0)} ms behind its schedule (send() blocked or the generator lacked CPU); those records count that delay as latency`);
  }
  return caveats.length === 0 ? null : caveats.join('; ');
}

// ---------------------------------------------------------------- Spool's client (bench/node-perf.ts)

function lastJson(stdout: string): Record<string, unknown> | null {
  const lines = stdout.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim() ?? '';
    if (!line.startsWith('{')) continue;
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
  }
  return null;
}

function nodePerfArgs(mode: string, flags: Record<string, string | number | boolean>): string[] {
  const args = [join(buildRootDir(), 'dist', 'bench', 'node-perf.js'), mode];
  for (const [name, value] of Object.entries(flags)) {
    if (value === false) continue;
    args.push(`--${name}`);
    if (value !== true) args.push(String(value));
  }
  return args;
}

function shownNode(args: readonly string[]): string {
  return commandLine('node', args.map(shownPath));
}

export interface NodeProduceFigures {
  records: number;
  firstAckS: number | null;
  recordsPerS: number;
  mibPerS: number;
  measuredS: number;
  errors: number;
  firstError: string | null;
}

export async function nodeProduce(flags: Record<string, string | number | boolean>, timeoutS: number): Promise<Measured<NodeProduceFigures>> {
  const args = nodePerfArgs('produce', flags);
  const result = await runCommand(process.execPath, args, { timeoutMs: timeoutS * 1000 });
  const json = lastJson(result.stdout) as unknown as NodeProduceFigures | null;
  const command = shownNode(args);
  if (json === null) return { figures: null, error: failure(result), command };
  const error = json.records === 0
    ? `no record acknowledged in the measured window${json.firstAckS === null ? ' (none at all before the generator gave up)' : ''}${json.firstError === null ? '' : `: ${json.firstError}`}`
    : json.errors > 0 ? `${json.errors} sends failed: ${json.firstError}` : null;
  return { figures: json.records === 0 ? null : json, error, command };
}

export interface NodeConsumeFigures {
  records: number;
  bytes: number;
  seconds: number;
  recordsPerS: number;
  mibPerS: number;
  complete: boolean;
}

export async function nodeConsume(flags: Record<string, string | number | boolean>, timeoutS: number): Promise<Measured<NodeConsumeFigures>> {
  const args = nodePerfArgs('consume', { ...flags, 'timeout-s': timeoutS });
  const result = await runCommand(process.execPath, args, { timeoutMs: (timeoutS + 30) * 1000 });
  const json = lastJson(result.stdout) as unknown as NodeConsumeFigures | null;
  const command = shownNode(args);
  if (json === null || json.records === 0) return { figures: null, error: json === null ? failure(result) : 'no record consumed', command };
  return { figures: json, error: json.complete ? null : `read ${json.records} records before the ${timeoutS} s limit`, command };
}

/** Fixed-rate latency through Spool's client: a consumer process, then a fixed-rate producer process. */
export async function nodeEndToEnd(options: FixedRateOptions & { producerFlags: Record<string, string | number | boolean> }): Promise<Measured<LatencyFigures>> {
  const total = Math.floor(options.warmupS * options.recordsPerS) + Math.floor(options.measureS * options.recordsPerS);
  const measuredExpected = total - Math.floor(options.warmupS * options.recordsPerS);
  const timeoutS = options.warmupS + options.measureS + 60;
  const consumerArgs = nodePerfArgs('e2e-consume', { bootstrap: options.bootstrap, topic: options.topic, records: total, 'timeout-s': timeoutS });
  const producerArgs = nodePerfArgs('e2e-produce', {
    bootstrap: options.bootstrap, topic: options.topic, rate: options.recordsPerS, 'record-size': options.recordSizeBytes,
    'warmup-s': options.warmupS, 'duration-s': options.measureS, ...options.producerFlags,
  });
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => { markReady = resolve; });
  const consumer = runCommand(process.execPath, consumerArgs, {
    timeoutMs: (timeoutS + 30) * 1000,
    onLine(line) { if (line.trim() === 'ready') markReady(); },
  });
  const consumerDone = consumer.then((r) => { markReady(); return r; });
  await ready;
  const producer = await runCommand(process.execPath, producerArgs, { timeoutMs: (timeoutS + 30) * 1000 });
  const consumed = await consumerDone;
  const command = `${shownNode(consumerArgs)} & ${shownNode(producerArgs)}`;
  const json = lastJson(consumed.stdout);
  if (json === null || Number(json.measuredRecords) === 0) {
    return { figures: null, error: `consumer ${failure(consumed)}; producer ${failure(producer)}`, command };
  }
  const sent = lastJson(producer.stdout);
  const figures: LatencyFigures = {
    p50Ms: Number(json.p50Ms), p99Ms: Number(json.p99Ms), p999Ms: Number(json.p999Ms), maxMs: Number(json.maxMs),
    measuredRecords: Number(json.measuredRecords),
    missingRecords: measuredExpected - Number(json.measuredRecords),
    ...(sent !== null ? { senderMaxLagMs: Number(sent.senderMaxLagMs) } : {}),
  };
  return { figures, error: latencyCaveats(figures), command };
}
