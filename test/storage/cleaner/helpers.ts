/**
 * Fixtures for cleaner tests: a LogManager on the simulated disk, a
 * LogCleaner over it, keyed appends and a reader that returns what a
 * consumer reading the whole log would see.
 */
import { iterateBatches } from '../../../src/protocol/records/batch.js';
import { buildBatch, decodeRecords } from '../../../src/protocol/records/records.js';
import { LogCleaner, DEFAULT_CLEANER_CONFIG, type CleanerConfig, type LogCleanerEnv } from '../../../src/storage/cleaner/log-cleaner.js';
import type { LastRecord } from '../../../src/storage/cleaner/cleaner.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { logConfig, type LogConfig } from '../../../src/storage/log-config.js';
import type { Log } from '../../../src/storage/log.js';
import type { SimEnv } from '../helpers.js';

export const LOG_DIR = '/kafka-logs';
export const TP = { topic: 'compacted', partition: 0 };

export function compactConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return logConfig({ cleanupPolicy: ['compact'], segmentBytes: 2048, fileDeleteDelayMs: 0, ...overrides });
}

export async function openManager(env: SimEnv, config: LogConfig): Promise<LogManager> {
  return LogManager.open(env, { logDir: LOG_DIR, configFor: () => config });
}

export function newCleaner(
  env: LogCleanerEnv,
  managers: () => readonly LogManager[],
  options: { config?: Partial<CleanerConfig>; producers?: ReadonlyMap<number, LastRecord> } = {},
): LogCleaner {
  return new LogCleaner(env, {
    config: { ...DEFAULT_CLEANER_CONFIG, dedupeBufferBytes: 64 * 1024, ioBufferBytes: 4096, ...options.config },
    source: {
      logDirs: () => managers().map((manager) => ({ logDir: manager.logDir, logs: manager.allLogs() })),
      lastStableOffset: (log) => log.highWatermark,
      activeProducers: () => options.producers ?? new Map(),
    },
    logger: { error: (message) => console.error(message), warn() {}, info() {}, debug() {} },
    yieldSlice: async () => {},
  });
}

export interface KeyedRecord {
  key: string;
  /** null: a tombstone. */
  value: string | null;
}

/** Appends one batch of keyed records at the leader and raises the high watermark to the log end. */
export async function appendKeyed(log: Log, records: readonly KeyedRecord[], options: { timestampMs: number; producerId?: number; baseSequence?: number; compression?: number }): Promise<void> {
  const batch = buildBatch({
    records: records.map((record) => ({ key: record.key, value: record.value, timestamp: options.timestampMs })),
    compression: options.compression ?? 0,
    ...(options.producerId === undefined ? {} : { producerId: options.producerId, producerEpoch: 0, baseSequence: options.baseSequence ?? 0 }),
  });
  await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
  log.updateHighWatermark(log.logEndOffset);
}

export interface ReadRecord {
  offset: number;
  key: string | null;
  value: string | null;
}

/** Every record from the log start to the log end, in offset order, and the batches' offset ranges. */
export async function readAll(log: Log): Promise<{ records: ReadRecord[]; batches: { baseOffset: number; lastOffset: number }[] }> {
  const records: ReadRecord[] = [];
  const batches: { baseOffset: number; lastOffset: number }[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const read = await log.read(offset, { maxBytes: 64 * 1024, minOneMessage: true });
    let progressed = false;
    for (const { position, header } of iterateBatches(read.records)) {
      const decoded = decodeRecords(read.records.subarray(position, position + header.sizeBytes));
      if (decoded.error !== null) throw new Error(decoded.error.message);
      batches.push({ baseOffset: header.baseOffset, lastOffset: header.lastOffset });
      for (const record of decoded.records) {
        records.push({ offset: record.offset, key: record.key?.toString() ?? null, value: record.value?.toString() ?? null });
      }
      offset = header.lastOffset + 1;
      progressed = true;
    }
    if (!progressed) throw new Error(`no whole batch at offset ${offset}`);
  }
  return { records, batches };
}

/** Latest record per key, as a compacted topic's consumer ends up seeing it. */
export function latestByKey(records: readonly ReadRecord[]): Map<string, ReadRecord> {
  const latest = new Map<string, ReadRecord>();
  for (const record of records) if (record.key !== null) latest.set(record.key, record);
  return latest;
}
