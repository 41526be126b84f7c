/**
 * The two brokers under test, started the same way: one node (broker and
 * controller in one process, KRaft), the same broker settings, a fresh data
 * directory under the same parent (so on the same disk), removed after the run.
 *
 * Apache Kafka 4.4.0 comes from test/interop/kafka (kafka.sh: Maven-resolved
 * jars, storage formatted on first use, `kafka.Kafka` under setsid). Spool is
 * `node dist/src/cli/main.js start <server.properties>` with the same lines.
 *
 * Startup (scenario 7) is measured from the broker process's own start time
 * (/proc/<pid>/stat, so neither kafka.sh's storage format step nor the
 * harness's polling is counted) to the first produce acknowledged with
 * acks=1, sent by Spool's client in the harness, retrying every 20 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Producer } from '../../src/client/index.js';
import { startKafka, type RunningKafka } from '../../test/interop/kafka/kafka.js';
import { buildRootDir, commandLine, freePortPair, processStartMs, uptimeMs } from './proc.js';

export type BrokerKind = 'kafka' | 'spool';

/** Settings both brokers get, on top of the single-node KRaft lines. */
export function commonBrokerSettings(): Record<string, string> {
  return {
    'num.partitions': '8',
    'default.replication.factor': '1',
    'auto.create.topics.enable': 'true',
    // Same segment size for both; no flush per message (the default: leave it to the OS page cache).
    'log.segment.bytes': String(256 * 1024 * 1024),
    'log.segment.delete.delay.ms': '1000',
    'message.max.bytes': '1048588',
    'group.initial.rebalance.delay.ms': '0',
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'share.coordinator.state.topic.replication.factor': '1',
    'share.coordinator.state.topic.min.isr': '1',
  };
}

/** The single-node KRaft lines kafka.sh writes, for Spool's server.properties. */
function singleNodeLines(dir: string, port: number): string[] {
  const controllerPort = port + 1;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${join(dir, 'data')}`,
  ];
}

export interface StartupFigures {
  /** Broker process start to the first acknowledged produce. */
  processStartToFirstAckMs: number | null;
  /** From the harness launching the start command (kafka.sh includes storage format on first use). */
  launchToFirstAckMs: number;
}

export interface BrokerUnderTest {
  kind: BrokerKind;
  bootstrap: string;
  pid: number;
  dir: string;
  startCommand: string;
  startup: StartupFigures;
  /** Clean shutdown; returns any .cpuprofile files written. Removes the directory unless keepDir. */
  stop(options?: { keepDir?: boolean }): Promise<{ cpuProfiles: string[] }>;
}

export interface StartOptions {
  /** Directory for this broker (config, data, logs); created fresh unless reuse. */
  dir: string;
  /** Keep an existing data directory (restart after a fill). */
  reuse?: boolean;
  /** Spool only: run node with --cpu-prof, writing profiles here. */
  cpuProfileDir?: string;
  /** Port to use (default: a free pair). */
  port?: number;
  /**
   * Properties over the common ones (metrics.listener, say, for Spool; for
   * either broker a second listener: later lines win in both brokers'
   * properties files, so `listeners` and the protocol map can be replaced).
   */
  settings?: Record<string, string>;
}

const FIRST_ACK_TIMEOUT_MS = 180_000;
const STARTUP_TOPIC = 'bench-startup';

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([promise, sleepMs(ms).then(() => undefined)]);
}

/** Retries a one-record produce (acks=1) until a broker acknowledges it; resolves with uptimeMs() at the ack. */
export async function firstAcknowledgedProduce(bootstrap: string, timeoutMs = FIRST_ACK_TIMEOUT_MS): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown = null;
  while (performance.now() < deadline) {
    const producer = new Producer({
      bootstrapServers: bootstrap,
      clientId: 'spool-bench-startup',
      acks: 1,
      lingerMs: 0,
      maxBlockMs: 3000,
      requestTimeoutMs: 2000,
      deliveryTimeoutMs: 5000,
      retryBackoffMs: 20,
      retryBackoffMaxMs: 50,
    });
    try {
      await producer.send({ topic: STARTUP_TOPIC, value: 'first' });
      const ackMs = uptimeMs();
      await withTimeout(producer.close(), 2000).catch(() => undefined);
      return ackMs;
    } catch (error) {
      lastError = error;
      await withTimeout(producer.close(), 1000).catch(() => undefined);
      await sleepMs(20);
    }
  }
  throw new Error(`no produce acknowledged within ${timeoutMs} ms: ${String(lastError)}`);
}

function propsLines(settings: Record<string, string>): string[] {
  return Object.entries(settings).map(([name, value]) => `${name}=${value}`);
}

function startupFigures(pid: number, launchedAtMs: number, ackAtMs: number): StartupFigures {
  const processStart = processStartMs(pid);
  return {
    processStartToFirstAckMs: processStart === null ? null : ackAtMs - processStart,
    launchToFirstAckMs: ackAtMs - launchedAtMs,
  };
}

export async function startKafkaBroker(options: StartOptions): Promise<BrokerUnderTest> {
  if (options.reuse !== true) rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true });
  const port = options.port ?? (await freePortPair());
  const bootstrap = `127.0.0.1:${port}`;
  const settings = { ...commonBrokerSettings(), ...options.settings };
  const launchedAtMs = uptimeMs();
  const ack = firstAcknowledgedProduce(bootstrap);
  ack.catch(() => undefined);
  let kafka: RunningKafka;
  try {
    kafka = await startKafka({ port, dir: options.dir, extraConfig: propsLines(settings) });
  } catch (error) {
    throw new Error(`Apache Kafka did not start: ${String(error)}`);
  }
  let ackAtMs: number;
  try {
    ackAtMs = await ack;
  } catch (error) {
    await kafka.stop({ keepDir: true }).catch(() => undefined);
    throw error;
  }
  return track({
    kind: 'kafka',
    bootstrap,
    pid: kafka.pid,
    dir: options.dir,
    startCommand: `KAFKA_EXTRA_CONFIG='${propsLines(settings).join('\\n')}' test/interop/kafka/kafka.sh start <dir> ${port}`,
    startup: startupFigures(kafka.pid, launchedAtMs, ackAtMs),
    async stop(stopOptions = {}) {
      await kafka.stop({ keepDir: true });
      if (stopOptions.keepDir !== true) rmSync(options.dir, { recursive: true, force: true });
      return { cpuProfiles: [] };
    },
  });
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => { clearTimeout(timer); resolve(true); });
  });
}

export const SPOOL_MAIN = 'dist/src/cli/main.js';

export async function startSpoolBroker(options: StartOptions): Promise<BrokerUnderTest> {
  if (options.reuse !== true) rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true });
  const port = options.port ?? (await freePortPair());
  const bootstrap = `127.0.0.1:${port}`;
  const propsFile = join(options.dir, 'server.properties');
  writeFileSync(propsFile, [...singleNodeLines(options.dir, port), ...propsLines({ ...commonBrokerSettings(), ...options.settings })].join('\n') + '\n');
  const nodeArgs = options.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`];
  const args = [...nodeArgs, join(buildRootDir(), SPOOL_MAIN), 'start', propsFile];
  const log = createWriteStream(join(options.dir, 'spool.log'));
  const launchedAtMs = uptimeMs();
  const ack = firstAcknowledgedProduce(bootstrap);
  ack.catch(() => undefined);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`spool start exited during startup (code ${code}, signal ${signal}); see ${join(options.dir, 'spool.log')}`)));
  });
  exited.catch(() => undefined);
  let ackAtMs: number;
  try {
    ackAtMs = await Promise.race([ack, exited]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const pid = child.pid ?? -1;
  return track({
    kind: 'spool',
    bootstrap,
    pid,
    dir: options.dir,
    startCommand: commandLine('node', [...nodeArgs, SPOOL_MAIN, 'start', '<dir>/server.properties']),
    startup: startupFigures(pid, launchedAtMs, ackAtMs),
    async stop(stopOptions = {}) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 60_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5000);
      }
      log.end();
      const cpuProfiles = options.cpuProfileDir === undefined || !existsSync(options.cpuProfileDir)
        ? []
        : readdirSync(options.cpuProfileDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(options.cpuProfileDir!, f));
      if (stopOptions.keepDir !== true) rmSync(options.dir, { recursive: true, force: true });
      return { cpuProfiles };
    },
  });
}

const running = new Set<BrokerUnderTest>();

/** Registers a started broker until it is stopped, for stopAllBrokers(). */
function track(broker: BrokerUnderTest): BrokerUnderTest {
  running.add(broker);
  const stop = broker.stop.bind(broker);
  broker.stop = async (options) => {
    running.delete(broker);
    return stop(options);
  };
  return broker;
}

/** Stops every broker still running (the harness was interrupted); Kafka runs under setsid and would outlive it. */
export async function stopAllBrokers(): Promise<void> {
  await Promise.all([...running].map((broker) => broker.stop().catch(() => undefined)));
}

export function startBroker(kind: BrokerKind, options: StartOptions): Promise<BrokerUnderTest> {
  return kind === 'kafka' ? startKafkaBroker(options) : startSpoolBroker(options);
}
