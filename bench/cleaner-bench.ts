/**
 * Log cleaner throughput, and append latency of another log while it runs.
 *
 *   npx tsc -p . && node dist/bench/cleaner-bench.js [--dir DIR] [--mib N] [--keys K] [--io-max-mib-per-s R]
 *
 * Fills a compacted log on the real file system with N MiB (default 256) of
 * 100-byte values over K keys (default 100,000), 100 records a batch,
 * uncompressed, 64 MiB segments, then runs one cleaning pass with Kafka's
 * default cleaner settings (128 MiB offset map, 512 KiB I/O buffer, one
 * thread; `--io-max-mib-per-s` sets log.cleaner.io.max.bytes.per.second) and
 * reports MB/s read. Meanwhile a second log takes one 1 KiB append every
 * millisecond and each append's latency (call to resolution, which includes
 * waiting for the event loop) is recorded; the same append loop also runs
 * alone first, for the baseline. Not a test: prints figures, asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { realEnv } from '../src/io/env.js';
import { argument } from './lib/micro.js';
import { buildBatch } from '../src/protocol/records/records.js';
import { DEFAULT_CLEANER_CONFIG, LogCleaner } from '../src/storage/cleaner/log-cleaner.js';
import { logConfig } from '../src/storage/log-config.js';
import { loadLog } from '../src/storage/log-loader.js';
import type { Log } from '../src/storage/log.js';

const MIB = 1024 * 1024;
const VALUE_BYTES = 100;
const RECORDS_PER_BATCH = 100;
const PROBE_INTERVAL_MS = 1;

async function openLog(dir: string, name: string, compact: boolean): Promise<Log> {
  return loadLog(realEnv, {
    dir: join(dir, `${name}-0`),
    topicPartition: { topic: name, partition: 0 },
    config: logConfig({ segmentBytes: 64 * MIB, cleanupPolicy: compact ? ['compact'] : ['delete'] }),
    hadCleanShutdown: true,
  });
}

async function fill(log: Log, options: { bytes: number; keys: number }): Promise<number> {
  let written = 0;
  let sequence = 0;
  const value = Buffer.alloc(VALUE_BYTES, 7);
  while (written < options.bytes) {
    const records = Array.from({ length: RECORDS_PER_BATCH }, () => ({ key: `key-${(sequence++ * 7919) % options.keys}`, value, timestamp: Date.now() }));
    const batch = buildBatch({ records });
    await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
    written += batch.length;
  }
  await log.roll();
  log.updateHighWatermark(log.logEndOffset);
  await log.flush();
  return written;
}

/** Appends a 1 KiB batch every PROBE_INTERVAL_MS until `until` resolves; returns each append's latency in ms. */
async function probeAppends(log: Log, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.then(() => (done = true));
  const latencies: number[] = [];
  const batch = buildBatch({ records: [{ key: 'probe', value: Buffer.alloc(1024, 1), timestamp: Date.now() }] });
  while (!done) {
    const started = performance.now();
    await log.append(Buffer.from(batch), { leaderEpoch: 0, assignOffsets: true });
    latencies.push(performance.now() - started);
    await sleep(PROBE_INTERVAL_MS);
  }
  return latencies;
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0;
}

function describe(name: string, latencies: number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const format = (value: number) => value.toFixed(2);
  return `${name}: ${sorted.length} appends, p50 ${format(percentile(sorted, 0.5))} ms, p99 ${format(percentile(sorted, 0.99))} ms, max ${format(sorted.at(-1) ?? 0)} ms`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(argument('dir', tmpdir()), 'spool-cleaner-bench-'));
  const bytes = Number(argument('mib', '256')) * MIB;
  const keys = Number(argument('keys', '100000'));
  const ioMax = Number(argument('io-max-mib-per-s', 'Infinity')) * MIB;
  try {
    const compacted = await openLog(dir, 'compacted', true);
    const probe = await openLog(dir, 'probe', false);
    const written = await fill(compacted, { bytes, keys });
    console.log(`filled ${(written / MIB).toFixed(0)} MiB, ${compacted.logEndOffset} records over ${keys} keys, ${compacted.logSegments.length} segments`);
    console.log(describe('appends, cleaner idle', await probeAppends(probe, sleep(5000))));
    const cleaner = new LogCleaner(realEnv, {
      config: { ...DEFAULT_CLEANER_CONFIG, ioBytesPerSecondMax: ioMax },
      source: {
        logDirs: () => [{ logDir: dir, logs: [compacted] }],
        lastStableOffset: (log) => log.highWatermark,
        activeProducers: () => new Map(),
      },
      logger: { error: console.error, warn: console.warn, info() {}, debug() {} },
    });
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const pass = cleaner.cleanFilthiestLog();
    const latencies = await probeAppends(probe, pass);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    loopDelay.disable();
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const stats = cleaner.lastStats!;
    const readMib = stats.bytesRead / MIB;
    console.log(
      `cleaned: read ${readMib.toFixed(1)} MiB, wrote ${(stats.bytesWritten / MIB).toFixed(1)} MiB in ${seconds.toFixed(2)} s ` +
        `(${(readMib / seconds).toFixed(1)} MB/s wall, as Kafka's log-cleaner.log counts it; ${(readMib / cpuSeconds).toFixed(1)} MB per CPU second)`,
    );
    console.log(describe('appends, cleaner running', latencies));
    const ms = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(1);
    console.log(`event-loop delay while cleaning: p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, max ${ms(loopDelay.max)} ms`);
    await compacted.close();
    await probe.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
