/**
 * Per-partition log settings, named after Kafka's topic configs (camelCase,
 * units last). Defaults are Kafka's. `Infinity` stands for Kafka's
 * Long.MAX_VALUE ("never"), and -1 keeps its Kafka meaning where Kafka uses it
 * (retention.ms / retention.bytes = unlimited).
 */

export interface LogConfig {
  /** segment.bytes: roll when the active segment would grow past this. */
  segmentBytes: number;
  /** segment.ms: roll when the active segment's first batch is this old. */
  segmentMs: number;
  /** segment.index.bytes: size cap of each index; a full index forces a roll. */
  segmentIndexBytes: number;
  /** index.interval.bytes: appended bytes between two offset-index entries. */
  indexIntervalBytes: number;
  /** flush.messages: fsync after this many unflushed messages (Infinity = leave it to the OS). */
  flushMessages: number;
  /** flush.ms: fsync when data has been unflushed this long (Infinity = never). */
  flushMs: number;
  /** retention.ms: delete segments whose newest timestamp is older (-1 = keep forever). */
  retentionMs: number;
  /** retention.bytes: delete oldest segments while the log is bigger (-1 = no limit). */
  retentionBytes: number;
  /** file.delete.delay.ms: how long `.deleted` files wait before removal. */
  fileDeleteDelayMs: number;
  /** max.message.bytes: the largest batch the log accepts. */
  maxMessageBytes: number;
  /** message.timestamp.type. */
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  /** cleanup.policy: retention here acts on `delete`; compaction lives in the cleaner (cleaner/). */
  cleanupPolicy: readonly ('delete' | 'compact')[];
  /** delete.retention.ms: how long a tombstone outlives the first cleaning that saw it. */
  deleteRetentionMs: number;
  /** min.cleanable.dirty.ratio: dirty bytes over all bytes above which the log is cleaned. */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms: segments whose newest record is younger are not cleaned. */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms: a dirty segment whose first batch is older is cleaned whatever the ratio. */
  maxCompactionLagMs: number;
}

export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze<LogConfig>({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  flushMessages: Infinity,
  flushMs: Infinity,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  fileDeleteDelayMs: 60_000,
  maxMessageBytes: 1024 * 1024 + 12,
  messageTimestampType: 'CreateTime',
  cleanupPolicy: ['delete'],
  deleteRetentionMs: 86_400_000,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Infinity,
});

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...DEFAULT_LOG_CONFIG, ...overrides };
}

/** Where storage reports what it does; the broker passes its own logger. */
export interface StorageLogger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
}

export const silentStorageLogger: StorageLogger = { error() {}, warn() {}, info() {}, debug() {} };
