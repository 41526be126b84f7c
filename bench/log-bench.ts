/**
 * Log append / read throughput next to the raw speed of the same disk.
 *
 *   npx tsc -p . && node dist/bench/log-bench.js [--dir DIR] [--gib N] [--chunk-mib M] [--validate true|false]
 *
 * Appends N GiB (default 1) of 64 KiB batches of 1 KiB records into a Log
 * on the real file system, and writes the same bytes with the same write
 * sizes straight to a file through the same FileSystem seam (the raw
 * baseline), alternating chunks of both (default 32 MiB, who goes first
 * alternating too) so both see the same disk, page-cache and machine-load
 * conditions. "buffered" is the
 * time of the writes alone (page cache: what Kafka's default flush policy
 * gives a producer); "durable" adds the fsync (Log.flush) that ends every
 * chunk (disk speed). Then reads the log back sequentially in 1 MiB fetches.
 * `--validate false` appends as the broker does after record-validator.ts
 * already checked the CRC (AppendOptions.validateRecords); the default
 * includes the log's own CRC-32C pass over every byte. Not a test: prints
 * figures, asserts nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../src/io/env.js';
import { argument } from './lib/micro.js';
import { buildBatch } from '../src/protocol/records/records.js';
import { logConfig } from '../src/storage/log-config.js';
import { loadLog } from '../src/storage/log-loader.js';
import type { Log } from '../src/storage/log.js';
import type { FileHandle } from '../src/io/fs.js';
import { iterateBatches } from '../src/protocol/records/batch.js';

const RECORD_VALUE_BYTES = 1024;
const RECORDS_PER_BATCH = 63; // 63 x (1 KiB + record overhead) + header ~ 64 KiB
const READ_FETCH_BYTES = 1024 * 1024;
const MIB = 1024 * 1024;

interface Totals {
  bytes: number;
  batches: number;
  /** Time spent in the writes (appends), summed over chunks. */
  bufferedMs: number;
  /** Time of the fsyncs (flushes) after each chunk. */
  syncMs: number;
  /** Process CPU time (user + system) spent in the writes, microseconds. */
  cpuMicros: number;
}

function makeBatch(seed: number): Buffer {
  const records = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({
    key: null,
    value: Buffer.alloc(RECORD_VALUE_BYTES, (seed + i) & 0xff),
    timestamp: 1_700_000_000_000 + i,
  }));
  return buildBatch({ records });
}

/** The raw baseline: the same buffers, same sizes, one write each, through the same FileSystem seam. */
class RawWriter {
  position = 0;
  private constructor(private readonly handle: FileHandle) {}

  static async open(path: string): Promise<RawWriter> {
    return new RawWriter(await realEnv.fs.open(path, 'readWrite'));
  }

  async write(batch: Buffer): Promise<void> {
    await this.handle.write([batch], this.position);
    this.position += batch.length;
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** Runs `count` writes of `write`, then `sync`, adding elapsed and CPU time to `totals`. */
async function timed(
  totals: Totals,
  count: number,
  next: () => Buffer,
  write: (batch: Buffer) => Promise<unknown>,
  sync: () => Promise<unknown>,
): Promise<void> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < count; i++) await write(next());
  const written = performance.now();
  const used = process.cpuUsage(cpu);
  await sync();
  totals.bufferedMs += written - start;
  totals.syncMs += performance.now() - written;
  totals.cpuMicros += used.user + used.system;
  totals.batches += count;
}

async function readBack(log: Log): Promise<{ bytes: number; ms: number }> {
  const start = performance.now();
  let offset = 0;
  let bytes = 0;
  while (offset < log.logEndOffset) {
    const { records } = await log.read(offset, { maxBytes: READ_FETCH_BYTES, minOneMessage: true });
    // Count whole batches only and continue after the last complete one.
    let position = 0;
    for (const { header } of iterateBatches(records)) {
      offset = header.lastOffset + 1;
      position += header.sizeBytes;
    }
    bytes += position;
  }
  return { bytes, ms: performance.now() - start };
}

function rate(bytes: number, ms: number): string {
  return `${(bytes / MIB / (ms / 1000)).toFixed(0)} MB/s`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(argument('dir', tmpdir()), 'spool-log-bench-'));
  const gib = Number(argument('gib', '1'));
  const chunkMib = Number(argument('chunk-mib', '32'));
  const validateRecords = argument('validate', 'true') !== 'false';
  const batches = Array.from({ length: 8 }, (_, i) => makeBatch(i));
  const batchBytes = batches[0]!.length;
  const total = Math.round((gib * 1024 * MIB) / batchBytes);
  const perChunk = Math.max(1, Math.round((chunkMib * MIB) / batchBytes));
  console.log(`dir ${dir}; ${total} batches of ${batchBytes} bytes (${RECORDS_PER_BATCH} records of ${RECORD_VALUE_BYTES} B) each way, alternating in ${chunkMib} MiB chunks, validateRecords=${validateRecords}`);
  const raw = await RawWriter.open(join(dir, 'raw.bin'));
  const log = await loadLog(realEnv, {
    dir: join(dir, 'bench-0'),
    topicPartition: { topic: 'bench', partition: 0 },
    config: logConfig(),
    hadCleanShutdown: true,
  });
  const rawTotals: Totals = { bytes: 0, batches: 0, bufferedMs: 0, syncMs: 0, cpuMicros: 0 };
  const logTotals: Totals = { bytes: 0, batches: 0, bufferedMs: 0, syncMs: 0, cpuMicros: 0 };
  try {
    let rawNext = 0;
    let logNext = 0;
    for (let done = 0, chunk = 0; done < total; done += perChunk, chunk++) {
      const count = Math.min(perChunk, total - done);
      const rawChunk = () =>
        timed(rawTotals, count, () => batches[rawNext++ % batches.length]!, (batch) => raw.write(batch), () => raw.sync());
      const logChunk = () =>
        timed(
          logTotals,
          count,
          () => batches[logNext++ % batches.length]!,
          (batch) => log.append(batch, { leaderEpoch: 0, assignOffsets: true, validateRecords }),
          () => log.flush(),
        );
      // Alternate who goes first, so neither pays more for the other's writeback.
      if (chunk % 2 === 0) await rawChunk().then(logChunk);
      else await logChunk().then(rawChunk);
    }
    rawTotals.bytes = raw.position;
    logTotals.bytes = log.sizeBytes;
    report(rawTotals, logTotals);
    const read = await readBack(log);
    console.log(`read back: ${rate(read.bytes, read.ms)} (${read.bytes} bytes, ${READ_FETCH_BYTES / MIB} MiB fetches, page cache)`);
  } finally {
    await raw.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(raw: Totals, log: Totals): void {
  const durable = (t: Totals) => t.bufferedMs + t.syncMs;
  const cpu = (t: Totals) => `${(t.cpuMicros / t.batches).toFixed(0)} us CPU/batch`;
  console.log(`raw: ${rate(raw.bytes, raw.bufferedMs)} buffered, ${rate(raw.bytes, durable(raw))} fsynced per chunk, ${cpu(raw)}`);
  console.log(`log: ${rate(log.bytes, log.bufferedMs)} buffered, ${rate(log.bytes, durable(log))} flushed per chunk, ${cpu(log)}`);
  const bufferedRatio = raw.bufferedMs / raw.bytes / (log.bufferedMs / log.bytes);
  const durableRatio = durable(raw) / raw.bytes / (durable(log) / log.bytes);
  console.log(`log/raw: ${bufferedRatio.toFixed(2)} buffered, ${durableRatio.toFixed(2)} durable`);
}

await main();
