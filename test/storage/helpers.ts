/**
 * Shared fixtures for storage tests: a simulated environment (SimFileSystem,
 * ManualClock, seeded Random) and record-batch builders.
 */
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { buildBatch, type RecordInput } from '../../src/protocol/records/records.js';
import { iterateBatches, type BatchHeader } from '../../src/protocol/records/batch.js';
import type { LogEnv } from '../../src/storage/log.js';
import { logConfig, type LogConfig } from '../../src/storage/log-config.js';
import { loadLog } from '../../src/storage/log-loader.js';
import type { Log } from '../../src/storage/log.js';

export const BASE_TIMESTAMP_MS = 1_700_000_000_000;

export interface SimEnv extends LogEnv {
  fs: SimFileSystem;
  clock: ManualClock;
  timers: ManualClock;
  random: SeededRandom;
}

export function simEnv(seed = 1): SimEnv {
  const clock = new ManualClock(BASE_TIMESTAMP_MS);
  const random = new SeededRandom(seed);
  return { fs: new SimFileSystem(new SeededRandom(seed ^ 0x5a5a5a5a), clock), clock, timers: clock, random };
}

/** A batch of `count` records with values of `valueBytes` bytes and timestamps starting at `timestampMs`. */
export function makeBatch(options: {
  count?: number;
  valueBytes?: number;
  timestampMs?: number;
  /** Per-record timestamp step; default 1. */
  timestampStepMs?: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  compression?: number;
  fill?: number;
}): Buffer {
  const count = options.count ?? 1;
  const records: RecordInput[] = [];
  for (let i = 0; i < count; i++) {
    records.push({
      key: `k${i}`,
      value: Buffer.alloc(options.valueBytes ?? 10, options.fill ?? i),
      timestamp: (options.timestampMs ?? BASE_TIMESTAMP_MS) + i * (options.timestampStepMs ?? 1),
    });
  }
  return buildBatch({
    records,
    baseOffset: options.baseOffset ?? 0,
    partitionLeaderEpoch: options.partitionLeaderEpoch ?? -1,
    compression: options.compression ?? 0,
  });
}

/** A batch whose records carry the given timestamps (one record per timestamp). */
export function batchWithTimestamps(timestamps: readonly number[], options: { baseOffset?: number; valueBytes?: number } = {}): Buffer {
  return buildBatch({
    records: timestamps.map((timestamp, i) => ({ key: null, value: Buffer.alloc(options.valueBytes ?? 8, i), timestamp })),
    baseOffset: options.baseOffset ?? 0,
  });
}

export function headersOf(records: Buffer): BatchHeader[] {
  return [...iterateBatches(records)].map((batch) => batch.header);
}

export const TP = { topic: 'test', partition: 0 };
export const DIR = '/data/test-0';

export function openLog(env: LogEnv, config: Partial<LogConfig> = {}, extra: { recoveryPoint?: number; hadCleanShutdown?: boolean; logStartOffset?: number; highWatermark?: number } = {}): Promise<Log> {
  return loadLog(env, {
    dir: DIR,
    topicPartition: TP,
    config: logConfig(config),
    hadCleanShutdown: extra.hadCleanShutdown ?? false,
    recoveryPoint: extra.recoveryPoint ?? 0,
    ...(extra.logStartOffset === undefined ? {} : { logStartOffset: extra.logStartOffset }),
    ...(extra.highWatermark === undefined ? {} : { highWatermark: extra.highWatermark }),
  });
}

/** Reads the whole log [from, LEO) batch by batch; returns the headers. */
export async function readAllBatches(log: Log, from = log.logStartOffset): Promise<BatchHeader[]> {
  const headers: BatchHeader[] = [];
  let offset = from;
  while (offset < log.logEndOffset) {
    const result = await log.read(offset, { maxBytes: 1 << 20, minOneMessage: true });
    const batches = headersOf(result.records);
    if (batches.length === 0) throw new Error(`read at ${offset} returned no whole batch`);
    for (const header of batches) {
      if (header.lastOffset >= offset) headers.push(header);
      offset = header.lastOffset + 1;
    }
  }
  return headers;
}
