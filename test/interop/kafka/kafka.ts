/**
 * Runs the real Apache Kafka 4.4.0 broker and its CLI tools from node tests,
 * through kafka.sh (jars resolved by setup.sh into test/interop/kafka/lib).
 *
 *   const kafka = await startKafka();            // free port, temp dir
 *   await runKafkaTool(TOOL.topics, ['--bootstrap-server', kafka.bootstrap, '--list']);
 *   await kafka.stop();
 *
 * Test code, not product code: it may use node:fs, node:net and child
 * processes directly (DESIGN.md's io seams bind src/ only).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Main classes of the Kafka 4.4.0 command-line tools (see README.md). */
export const TOOL = {
  topics: 'org.apache.kafka.tools.TopicCommand',
  consoleProducer: 'org.apache.kafka.tools.ConsoleProducer',
  consoleConsumer: 'org.apache.kafka.tools.consumer.ConsoleConsumer',
  consumerGroups: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  getOffsets: 'org.apache.kafka.tools.GetOffsetShell',
  dumpLog: 'org.apache.kafka.tools.DumpLogSegments',
  producerPerf: 'org.apache.kafka.tools.ProducerPerformance',
  consumerPerf: 'org.apache.kafka.tools.ConsumerPerformance',
  configs: 'org.apache.kafka.tools.ConfigCommand',
  metadataQuorum: 'org.apache.kafka.tools.MetadataQuorumCommand',
  brokerApiVersions: 'org.apache.kafka.tools.BrokerApiVersionsCommand',
  transactions: 'org.apache.kafka.tools.TransactionsCommand',
  reassignPartitions: 'org.apache.kafka.tools.reassign.ReassignPartitionsCommand',
  leaderElection: 'org.apache.kafka.tools.LeaderElectionCommand',
  storage: 'kafka.tools.StorageTool',
  /** Helpers compiled from java/ by setup.sh. */
  produceRecords: 'ProduceRecords',
  dumpRecords: 'DumpRecords',
  base64Decoder: 'Base64Decoder',
} as const;

/** Directory holding kafka.sh, setup.sh and lib/ (found from the repo root, so it works from dist/ too). */
export const KAFKA_INTEROP_DIR = join(findRepoRoot(), 'test', 'interop', 'kafka');
const KAFKA_SH = join(KAFKA_INTEROP_DIR, 'kafka.sh');

/** True when setup.sh has resolved the jars (lib/.jars.stamp exists). */
export function kafkaLibReady(): boolean {
  return existsSync(join(KAFKA_INTEROP_DIR, 'lib', '.jars.stamp'));
}

/**
 * What an interop test should do about a missing Kafka lib dir: undefined
 * when ready; otherwise a skip message, or throws when CI=true (CI must run it).
 */
export function kafkaSkipReason(): string | undefined {
  if (kafkaLibReady()) return undefined;
  const message = `Kafka jars missing: run ${join(KAFKA_INTEROP_DIR, 'setup.sh')}`;
  if (process.env.CI === 'true') throw new Error(message);
  return message;
}

export interface ToolResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface RunToolOptions {
  /** Bytes written to the tool's stdin (then closed). */
  input?: string | Buffer;
  /** Killed after this long; default 120 s. */
  timeoutMs?: number;
}

/** Runs a Kafka main class (`kafka.sh tool`) and resolves with its output and exit code. */
export function runKafkaTool(mainClass: string, args: readonly string[], options: RunToolOptions = {}): Promise<ToolResult> {
  return run(KAFKA_SH, ['tool', mainClass, ...args], options);
}

export interface StartKafkaOptions {
  /** PLAINTEXT port; the controller listens on port + 1. Default: a free pair. */
  port?: number;
  /** Broker directory (config, data/, server.log). Default: a new temp dir, removed by stop(). */
  dir?: string;
  /** Extra server.properties lines. */
  extraConfig?: readonly string[];
}

export interface RunningKafka {
  bootstrap: string;
  port: number;
  dir: string;
  /** Kafka's log.dirs: partition directories live here, e.g. `${dataDir}/topic-0`. */
  dataDir: string;
  pid: number;
  /** Clean shutdown (SIGTERM, waits); removes the directory if startKafka created it and keepDir is unset. */
  stop(options?: { keepDir?: boolean }): Promise<void>;
}

/** Starts a single-node KRaft Kafka (broker+controller) and resolves once its port answers. */
export async function startKafka(options: StartKafkaOptions = {}): Promise<RunningKafka> {
  const port = options.port ?? (await freePortPair());
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'spool-kafka-'));
  const env = { ...process.env, KAFKA_EXTRA_CONFIG: (options.extraConfig ?? []).join('\n') };
  const started = await run(KAFKA_SH, ['start', dir, String(port)], { env });
  if (started.code !== 0) {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw new Error(`kafka.sh start failed (${started.code}): ${started.stderr}`);
  }
  let stopped = false;
  return {
    bootstrap: `127.0.0.1:${port}`,
    port,
    dir,
    dataDir: join(dir, 'data'),
    pid: Number(started.stdout.trim()),
    async stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      const result = await run(KAFKA_SH, ['stop', dir], {});
      if (ownDir && stopOptions.keepDir !== true) rmSync(dir, { recursive: true, force: true });
      if (result.code !== 0) throw new Error(`kafka.sh stop failed (${result.code}): ${result.stderr}`);
    },
  };
}

export interface StartKafkaNodeOptions {
  /** server.properties lines (process.roles, node.id, listeners, the quorum, log.dirs is added). */
  properties: readonly string[];
  /** The port that answers once the node is up: a controller's listener, or a broker's (Kafka opens it once unfenced). */
  port: number;
  /** kafka-storage.sh format's --cluster-id; default a random one. */
  clusterId?: string;
  /** More kafka-storage.sh format arguments (--release-version, --feature, --standalone, --no-initial-controllers). */
  formatArgs?: readonly string[];
  /** Default: a new temp dir, removed by stop(). */
  dir?: string;
}

/** Starts a Kafka node of any role with the caller's properties (a controller-only or broker-only node of a cluster). */
export async function startKafkaNode(options: StartKafkaNodeOptions): Promise<RunningKafka> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'spool-kafka-node-'));
  writeFileSync(join(dir, 'server.properties'), [...options.properties, `log.dirs=${join(dir, 'data')}`, ''].join('\n'));
  const env = {
    ...process.env,
    KAFKA_FORMAT_ARGS: (options.formatArgs ?? []).join(' '),
    ...(options.clusterId === undefined ? {} : { KAFKA_CLUSTER_ID: options.clusterId }),
  };
  const started = await run(KAFKA_SH, ['start-config', dir, String(options.port)], { env });
  if (started.code !== 0) {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw new Error(`kafka.sh start-config failed (${started.code}): ${started.stderr}`);
  }
  let stopped = false;
  return {
    bootstrap: `127.0.0.1:${options.port}`,
    port: options.port,
    dir,
    dataDir: join(dir, 'data'),
    pid: Number(started.stdout.trim()),
    async stop(stopOptions = {}) {
      if (stopped) return;
      stopped = true;
      const result = await run(KAFKA_SH, ['stop', dir], {});
      if (ownDir && stopOptions.keepDir !== true) rmSync(dir, { recursive: true, force: true });
      if (result.code !== 0) throw new Error(`kafka.sh stop failed (${result.code}): ${result.stderr}`);
    },
  };
}

/** A free loopback port (free a moment ago). */
export function freePort(): Promise<number> {
  return listenOnce(0);
}

interface RunOptions extends RunToolOptions {
  env?: NodeJS.ProcessEnv;
}

function run(file: string, args: readonly string[], options: RunOptions): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { env: options.env ?? process.env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 1 << 30, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        if (error !== null && code === -1 && error.signal === null) reject(error);
        else resolve({ stdout, stderr, code });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

/** A port p such that p and p + 1 were both free a moment ago (PLAINTEXT and CONTROLLER). */
export async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await listenOnce(0);
    if (port < 65535 && (await listenOnce(port + 1).then(() => true, () => false))) return port;
  }
  throw new Error('no free port pair found');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : port;
      server.close(() => resolve(bound));
    });
  });
}

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

/** Starts a long-running tool (e.g. a console consumer) that a test reads while it runs; kafka.sh execs java, so child.kill() reaches the JVM. */
export function spawnKafkaTool(mainClass: string, args: readonly string[]) {
  return spawn(KAFKA_SH, ['tool', mainClass, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
}
