/**
 * What TLS costs produce and consume throughput, on Spool and on Apache
 * Kafka 4.4 (issue 15). Each broker runs as one node (bench/lib/brokers.ts:
 * the common single-node settings) with two client listeners, PLAINTEXT and
 * SSL, the latter with a server certificate from a throwaway CA made for the
 * run (test/security/certificates.ts: openssl, a PKCS12 keystore, the same
 * file for both brokers). Kafka's ProducerPerformance (1 KiB records,
 * acks=1, batch.size=65536, linger.ms=5, a fresh 8-partition topic, a fixed
 * record count) and ConsumerPerformance (that topic from the beginning, a
 * fresh group) run over each listener; over SSL with
 * security.protocol=SSL and a PEM truststore holding the CA (hostname
 * verification on: the certificate names 127.0.0.1).
 *
 * A warm-up round on each broker (both protocols, both directions, at most
 * 50,000 records) is not counted. Runs alternate so drift in the machine's load falls on both sides: within
 * a round PLAINTEXT then SSL, the next round SSL then PLAINTEXT, and the two
 * brokers (both started before the first round) swap places each round.
 * Printed per (broker, protocol, direction): the median MiB/s and the
 * broker's CPU time per MiB (utime + stime from /proc/<pid>/stat over the
 * run); per broker and direction the SSL/PLAINTEXT ratio of the medians and
 * the median of each round's own ratio (a pair of runs seconds apart).
 *
 *   node dist/bench/tls-cost.js [--rounds 3] [--records 300000] [--only spool|kafka] [--perf]
 *
 * `--perf` records each counted run of the broker process with Linux perf
 * (`perf record -g -p <pid>`, 999 Hz) and prints the shares of the
 * broker's samples by shared object and the top symbols: where the TLS
 * work goes (libcrypto's AES-GCM, Node's TLS stream, copies) next to the
 * rest. V8's own CPU profiler cannot show it: OpenSSL runs in C++ from
 * libuv's callbacks, outside any JavaScript frame. Meant with --only spool
 * (a JVM's JIT-compiled frames are unnamed to perf).
 *
 * Benchmark code, not product code: it uses timers and the clock directly.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { parseArgs } from 'node:util';
import { Admin } from '../src/client/index.js';
import { makeTestPki, STORE_PASSWORD, type TestPki } from '../test/security/certificates.js';
import { freePort } from '../test/interop/kafka/kafka.js';
import { startBroker, stopAllBrokers, type BrokerKind, type BrokerUnderTest } from './lib/brokers.js';
import { consumerPerformance, producerPerformance } from './lib/generators.js';
import { cpuSeconds, freePortPair, killRunningCommands, loadAverage } from './lib/proc.js';

const ARGS = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    records: { type: 'string', default: '300000' },
    only: { type: 'string' },
    perf: { type: 'boolean', default: false },
  },
}).values;
const ROUNDS = Number(ARGS.rounds);
const RECORDS = Number(ARGS.records);
if (ARGS.only !== undefined && ARGS.only !== 'spool' && ARGS.only !== 'kafka') throw new Error(`--only takes spool or kafka, not ${ARGS.only}`);
const KINDS: BrokerKind[] = ARGS.only === undefined ? ['spool', 'kafka'] : [ARGS.only];
const PARTITIONS = 8;
const RECORD_SIZE = 1024;
const PRODUCE_PROPS = { acks: '1', 'batch.size': '65536', 'linger.ms': '5' };
/** ProducerPerformance's report interval: a short run still gives the windows after the first (JVM warm-up) to measure. */
const REPORT_INTERVAL_MS = 1000;
const RUN_TIMEOUT_S = 600;
/** Records of the uncounted warm-up round on each broker. */
const WARMUP_RECORDS = Math.min(RECORDS, 50_000);

type Protocol = 'PLAINTEXT' | 'SSL';
type Direction = 'produce' | 'consume';
const PROTOCOLS: readonly Protocol[] = ['PLAINTEXT', 'SSL'];
const DIRECTIONS: readonly Direction[] = ['produce', 'consume'];

interface Node {
  kind: BrokerKind;
  broker: BrokerUnderTest;
  bootstrap: Record<Protocol, string>;
}

/** The SSL listener beside PLAINTEXT (and the controller on port + 1): the same lines for both brokers. */
function sslListenerSettings(port: number, sslPort: number, pki: TestPki): Record<string, string> {
  return {
    listeners: `PLAINTEXT://127.0.0.1:${port},SSL://127.0.0.1:${sslPort},CONTROLLER://127.0.0.1:${port + 1}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port},SSL://127.0.0.1:${sslPort}`,
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT',
    'ssl.keystore.type': 'PKCS12',
    'ssl.keystore.location': pki.serverP12Path,
    'ssl.keystore.password': STORE_PASSWORD,
    'ssl.key.password': STORE_PASSWORD,
  };
}

function clientProps(protocol: Protocol, pki: TestPki): Record<string, string> {
  if (protocol === 'PLAINTEXT') return {};
  return { 'security.protocol': 'SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': pki.caPemPath };
}

async function startNode(kind: BrokerKind, pki: TestPki): Promise<Node> {
  const dir = mkdtempSync(join(tmpdir(), `spool-tls-cost-${kind}-`));
  const port = await freePortPair();
  let sslPort = await freePort();
  while (sslPort === port || sslPort === port + 1) sslPort = await freePort();
  const broker = await startBroker(kind, { dir, port, settings: sslListenerSettings(port, sslPort, pki) });
  return { kind, broker, bootstrap: { PLAINTEXT: broker.bootstrap, SSL: `127.0.0.1:${sslPort}` } };
}

/** The TLS version and cipher the broker's SSL listener picks for a client offering Node's defaults. */
function negotiated(bootstrap: string, pki: TestPki): Promise<string> {
  const [host, port] = bootstrap.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host: host!, port: Number(port), ca: pki.caPem, servername: 'localhost' }, () => {
      const cipher = socket.getCipher();
      resolve(`${socket.getProtocol() ?? '?'} ${cipher.standardName}`);
      socket.end();
    });
    socket.once('error', (error) => resolve(`handshake failed: ${error.message}`));
  });
}

async function withAdmin<T>(bootstrap: string, action: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    return await action(admin);
  } finally {
    await admin.close();
  }
}

async function recordsIn(bootstrap: string, topic: string): Promise<number> {
  return withAdmin(bootstrap, async (admin) => {
    const offsets = await admin.listOffsets(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, spec: 'latest' as const })));
    return offsets.reduce((sum, o) => sum + Number(o.offset), 0);
  });
}

/** Linux perf on the broker process while `action` runs; prints where its CPU went. */
async function underPerf<T>(pid: number, label: string, action: () => Promise<T>): Promise<T> {
  if (!ARGS.perf) return action();
  const dir = mkdtempSync(join(tmpdir(), 'spool-tls-perf-'));
  const data = join(dir, 'perf.data');
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-p', String(pid), '-o', data], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => perf.once('exit', () => resolve()));
  try {
    return await action();
  } finally {
    perf.kill('SIGINT');
    await exited;
    const report = (sort: string, limit: string): string[] => {
      try {
        return execFileSync('perf', ['report', '-i', data, '--stdio', '--no-children', '-g', 'none', '--sort', sort, '--percent-limit', limit], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28 })
          .split('\n').filter((line) => /^\s+\d/.test(line)).map((line) => line.trim().replace(/\s+/g, ' '));
      } catch (error) {
        return [`perf report failed: ${String(error)}`];
      }
    };
    console.log(`    perf, ${label}: by shared object: ${report('dso', '2').join('; ')}`);
    for (const line of report('dso,sym', '1.5').slice(0, 14)) console.log(`      ${line}`);
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Run {
  mibPerS: number;
  cpuMsPerMiB: number;
}

type Results = Map<string, Run[]>;
const key = (kind: BrokerKind, protocol: Protocol, direction: Direction): string => `${kind} ${protocol} ${direction}`;

function note(results: Results, kind: BrokerKind, protocol: Protocol, direction: Direction, run: Run, extra: string): void {
  const k = key(kind, protocol, direction);
  results.set(k, [...(results.get(k) ?? []), run]);
  console.log(`  ${k}: ${run.mibPerS.toFixed(1)} MiB/s, broker ${run.cpuMsPerMiB.toFixed(1)} CPU ms/MiB${extra}`);
}

function perfUnlessWarmup<T>(node: Node, label: string, roundIndex: number | 'warmup', action: () => Promise<T>): Promise<T> {
  return roundIndex === 'warmup' ? action() : underPerf(node.broker.pid, `${node.kind} ${label}`, action);
}

/** One round on one broker: produce over each protocol (in `order`) to its own topic, then consume each topic over the same protocol. */
async function round(node: Node, order: readonly Protocol[], roundIndex: number | 'warmup', records: number, pki: TestPki, results: Results): Promise<void> {
  const topics = new Map<Protocol, string>();
  for (const protocol of order) {
    const topic = `tls-cost-${roundIndex}-${protocol.toLowerCase()}`;
    await withAdmin(node.broker.bootstrap, (admin) => admin.createTopics([{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 }]));
    topics.set(protocol, topic);
    const cpuBefore = cpuSeconds(node.broker.pid);
    const measured = await perfUnlessWarmup(node, `${protocol} produce`, roundIndex, () => producerPerformance({
      bootstrap: node.bootstrap[protocol], topic, recordSizeBytes: RECORD_SIZE, numRecords: records,
      props: { ...PRODUCE_PROPS, ...clientProps(protocol, pki) }, reportingIntervalMs: REPORT_INTERVAL_MS, timeoutS: RUN_TIMEOUT_S,
    }));
    const cpu = cpuSeconds(node.broker.pid) - cpuBefore;
    if (measured.figures === null) throw new Error(`${node.kind} ${protocol} produce failed: ${measured.error}\n${measured.command}`);
    const stored = await recordsIn(node.broker.bootstrap, topic);
    const windows = Math.max(0, measured.figures.windows.length - 1);
    note(results, node.kind, protocol, 'produce', { mibPerS: measured.figures.mibPerS, cpuMsPerMiB: (cpu * 1000) / ((stored * RECORD_SIZE) / 1048576) },
      ` (${windows >= 2 ? `${windows} windows after the first, ${measured.figures.measuredS.toFixed(1)} s` : 'whole run'}; ${stored} records stored${measured.error === null ? '' : `; ${measured.error}`})`);
  }
  for (const protocol of order) {
    const topic = topics.get(protocol)!;
    const stored = await recordsIn(node.broker.bootstrap, topic);
    const cpuBefore = cpuSeconds(node.broker.pid);
    const measured = await perfUnlessWarmup(node, `${protocol} consume`, roundIndex, () => consumerPerformance({
      bootstrap: node.bootstrap[protocol], topic, numRecords: stored, timeoutS: RUN_TIMEOUT_S,
      group: `tls-cost-${node.kind}-${roundIndex}-${protocol.toLowerCase()}`, props: clientProps(protocol, pki),
    }));
    const cpu = cpuSeconds(node.broker.pid) - cpuBefore;
    if (measured.figures === null) throw new Error(`${node.kind} ${protocol} consume failed: ${measured.error}\n${measured.command}`);
    note(results, node.kind, protocol, 'consume', { mibPerS: measured.figures.fetchMibPerS, cpuMsPerMiB: (cpu * 1000) / measured.figures.mib },
      ` (fetch.MB.sec; ${measured.figures.records} records, ${(measured.figures.fetchMs / 1000).toFixed(1)} s, group join ${measured.figures.rebalanceMs} ms${measured.error === null ? '' : `; ${measured.error}`})`);
  }
  await withAdmin(node.broker.bootstrap, (admin) => admin.deleteTopics([...topics.values()]));
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function summary(results: Results): void {
  console.log('');
  console.log('| broker | direction | PLAINTEXT MiB/s | SSL MiB/s | SSL/PLAINTEXT (medians) | SSL/PLAINTEXT per round (median; each) | broker CPU ms/MiB PLAINTEXT / SSL |');
  console.log('|---|---|---|---|---|---|---|');
  for (const kind of KINDS) {
    for (const direction of DIRECTIONS) {
      const plain = results.get(key(kind, 'PLAINTEXT', direction)) ?? [];
      const ssl = results.get(key(kind, 'SSL', direction)) ?? [];
      if (plain.length === 0 || ssl.length === 0) continue;
      const ratios = plain.slice(0, ssl.length).map((p, i) => ssl[i]!.mibPerS / p.mibPerS);
      const runs = (list: Run[]) => list.map((r) => r.mibPerS.toFixed(1)).join(', ');
      console.log(`| ${kind === 'spool' ? 'Spool' : 'Kafka 4.4'} | ${direction} | ${median(plain.map((r) => r.mibPerS)).toFixed(1)} (${runs(plain)}) | ${median(ssl.map((r) => r.mibPerS)).toFixed(1)} (${runs(ssl)}) | `
        + `${(median(ssl.map((r) => r.mibPerS)) / median(plain.map((r) => r.mibPerS))).toFixed(2)} | ${median(ratios).toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')}) | `
        + `${median(plain.map((r) => r.cpuMsPerMiB)).toFixed(1)} / ${median(ssl.map((r) => r.cpuMsPerMiB)).toFixed(1)} |`);
    }
  }
}

async function main(): Promise<void> {
  console.log(`tls cost: ${ROUNDS} rounds of ${RECORDS} records of ${RECORD_SIZE} bytes per run, ${KINDS.join(' and ')}; load average at start ${loadAverage().map((l) => l.toFixed(2)).join(' ')}`);
  const pki = makeTestPki();
  const nodes: Node[] = [];
  const results: Results = new Map();
  try {
    for (const kind of KINDS) {
      const node = await startNode(kind, pki);
      nodes.push(node);
      console.log(`${kind}: PLAINTEXT ${node.bootstrap.PLAINTEXT}, SSL ${node.bootstrap.SSL} (${await negotiated(node.bootstrap.SSL, pki)} with Node's client defaults)`);
    }
    // Not counted: the first runs load the group coordinator (__consumer_offsets is created by the first
    // consumer group), JIT-compile both brokers' produce and fetch paths and the TLS code.
    for (const node of nodes) {
      console.log(`warm-up, ${node.kind} (not counted)`);
      await round(node, PROTOCOLS, 'warmup', WARMUP_RECORDS, pki, new Map());
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order: readonly Protocol[] = r % 2 === 0 ? PROTOCOLS : [...PROTOCOLS].reverse();
      const nodeOrder = r % 2 === 0 ? nodes : [...nodes].reverse();
      for (const node of nodeOrder) {
        console.log(`round ${r + 1}, ${node.kind}, ${order.join(' then ')} (load average ${loadAverage().map((l) => l.toFixed(2)).join(' ')})`);
        await round(node, order, r, RECORDS, pki, results);
      }
    }
  } finally {
    await Promise.all(nodes.map((node) => node.broker.stop().catch(() => undefined)));
    pki.remove();
  }
  summary(results);
  console.log(`load average at end ${loadAverage().map((l) => l.toFixed(2)).join(' ')}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killRunningCommands();
    void stopAllBrokers().finally(() => process.exit(130));
  });
}

await main();
