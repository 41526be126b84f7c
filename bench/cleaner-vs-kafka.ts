/**
 * The log cleaner next to Apache Kafka 4.4's, on the same data.
 *
 *   npx tsc -p . && node dist/bench/cleaner-vs-kafka.js [--mib N] [--keys K] [--brokers spool,kafka]
 *
 * For each broker (bench/lib/brokers.ts: the same single-node settings as
 * `npm run bench`): creates a one-partition topic with cleanup.policy=compact
 * and segment.bytes=16 MiB, produces N MiB (default 256) of 100-byte values
 * over K keys (default 100,000) with Spool's client (acks=1, 64 KiB
 * batches, uncompressed: the same record stream for both), then waits for
 * the cleaner to go quiet (no new pass for QUIET_MS, more than two
 * log.cleaner.backoff.ms of Kafka's default 15 s) and sums the passes the
 * broker logged: Kafka's LogCleaner lines "N MB of log processed in S
 * seconds (R MB/sec)", Spool's "cleaned (...): read N MB, ... in S s (R
 * MB/s)". Both count the bytes a pass recopies over its wall time. Passes
 * start while the producer still writes (a segment rolls, the ratio is
 * reached), the same way for both. Prints the figures; asserts nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin, Producer } from '../src/client/index.js';
import { argument } from './lib/micro.js';
import { startKafkaBroker, startSpoolBroker, stopAllBrokers, type BrokerKind } from './lib/brokers.js';

const MIB = 1024 * 1024;
const TOPIC = 'bench-compacted';
const VALUE_BYTES = 100;
const PASS_WAIT_MS = 300_000;
const QUIET_MS = 35_000;

/** The broker's log file and the pattern of its pass summary (MB read, seconds, MB/s). */
function passLog(kind: BrokerKind, dir: string): { file: string; pattern: RegExp } {
  return kind === 'kafka'
    ? { file: join(dir, 'server.log'), pattern: /([\d.]+) MB of log processed in ([\d.]+) seconds \(([\d.]+) MB\/sec\)/g }
    : { file: join(dir, 'spool.log'), pattern: /cleaned \(dirty ratio [\d.]+%\): read ([\d.]+) MB, .* in ([\d.]+) s \(([\d.]+) MB\/s\)/g };
}

async function produce(bootstrap: string, options: { bytes: number; keys: number }): Promise<number> {
  const producer = new Producer({ bootstrapServers: bootstrap, clientId: 'cleaner-bench', acks: 1, lingerMs: 5, batchSize: 64 * 1024 });
  const value = Buffer.alloc(VALUE_BYTES, 7);
  let sent = 0;
  let sequence = 0;
  try {
    while (sent < options.bytes) {
      const pending: Promise<unknown>[] = [];
      for (let index = 0; index < 10_000; index++) {
        pending.push(producer.send({ topic: TOPIC, partition: 0, key: `key-${(sequence++ * 7919) % options.keys}`, value }));
        sent += VALUE_BYTES + 20;
      }
      await Promise.all(pending);
    }
  } finally {
    await producer.close();
  }
  return sequence;
}

async function measure(kind: BrokerKind, options: { bytes: number; keys: number }): Promise<string> {
  const dir = join(tmpdir(), `spool-cleaner-vs-kafka-${kind}`);
  const broker = kind === 'kafka' ? await startKafkaBroker({ dir }) : await startSpoolBroker({ dir });
  try {
    const admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'cleaner-bench-admin' });
    await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1, configs: { 'cleanup.policy': 'compact', 'segment.bytes': String(16 * MIB) } }]);
    await admin.close();
    const records = await produce(broker.bootstrap, options);
    const { file, pattern } = passLog(kind, dir);
    const passes = () => (existsSync(file) ? [...readFileSync(file, 'utf8').matchAll(pattern)] : []);
    const deadline = Date.now() + PASS_WAIT_MS;
    let seen = 0;
    let quietSinceMs = Date.now();
    while (Date.now() < deadline && (seen === 0 || Date.now() - quietSinceMs < QUIET_MS)) {
      await sleep(500);
      const count = passes().length;
      if (count !== seen) [seen, quietSinceMs] = [count, Date.now()];
    }
    const found = passes();
    const megabytes = found.reduce((sum, match) => sum + Number(match[1]), 0);
    const seconds = found.reduce((sum, match) => sum + Number(match[2]), 0);
    return `${kind}: ${records} records produced; ${found.length} passes read ${megabytes.toFixed(1)} MB in ${seconds.toFixed(1)} s: ${(megabytes / seconds).toFixed(1)} MB/s`;
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const options = { bytes: Number(argument('mib', '256')) * MIB, keys: Number(argument('keys', '100000')) };
  const kinds = argument('brokers', 'spool,kafka').split(',') as BrokerKind[];
  try {
    for (const kind of kinds) console.log(await measure(kind, options));
  } finally {
    await stopAllBrokers();
  }
}

await main();
