/**
 * The one scenario every third-party client runs against a real Spool node,
 * and the checks applied to what it reports.
 *
 * A driver (Python script, Go or Java program, shell script for kcat, or
 * in-process code for the npm clients) reads a spec (JSON) and, for phase
 * "run": creates the topic with 3 partitions; for each codec, produces that
 * codec's keyed records with headers (idempotence on where the client has
 * it) and waits for the acks; consumes every partition from the beginning by
 * assignment (no group); lists offsets by timestamp for the timestamps the
 * spec names. For phase "delete": lists and describes the topic, deletes it
 * and lists again. It prints one JSON object (DriverRun / DriverDelete).
 *
 * The checks: every record sent is consumed exactly once with the same key,
 * value, headers and timestamp (exact when the client set it, else CreateTime
 * inside the produce window), in the partition Kafka's murmur2 partitioner
 * picks for its key, with per-key order kept; offsets by timestamp point at
 * the first record at or after the timestamp. `checkLog` reads the partition
 * files with `spool dump-log` to show the codec of every batch and that an
 * idempotent producer id and sequences were used.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { partitionForKey } from '../../../src/client/partitioner.js';
import { SPOOL_BIN } from './spool-process.js';

export const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type Codec = (typeof CODECS)[number];

export const PARTITIONS = 3;
const RECORDS_PER_CODEC = 12;
const KEYS = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
/** Long, repetitive values so every codec actually shrinks the batch (librdkafka sends uncompressed otherwise). */
const FILLER = 'spool-interop-'.repeat(12);

export type Header = [string, string];

export interface SpecRecord {
  key: string;
  value: string;
  headers: Header[];
  /** Set by the producer when not null; null: the client stamps CreateTime itself. */
  timestamp: number | null;
}

export interface SpecBatch {
  codec: Codec;
  records: SpecRecord[];
}

export interface Spec {
  phase: 'run' | 'delete';
  bootstrap: string;
  topic: string;
  partitions: number;
  idempotent: boolean;
  batches: SpecBatch[];
  /** Total records to consume. */
  expectedCount: number;
  /**
   * ListOffsets by timestamp queries (answers are checked against the consumed
   * records). A client that stamps timestamps itself also queries the time it
   * read between two codecs' produce runs.
   */
  timestampQueries: number[];
}

export interface ConsumedRecord {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: Header[];
  timestamp: number;
  /** 'CreateTime' / 'LogAppendTime' where the client tells; omitted otherwise. */
  timestampType?: string;
}

export interface DriverRun {
  client: string;
  consumed: ConsumedRecord[];
  /** Per query and partition: the offset answered, or -1 / null when no record is at or after it. */
  offsetsForTimes: { timestamp: number; partition: number; offset: number | null }[];
  /** Milliseconds since the epoch around the produce calls (for client-stamped timestamps). */
  produceStartMs: number;
  produceEndMs: number;
}

export interface DriverDelete {
  topicsBefore: string[];
  describedPartitions: number;
  topicsAfter: string[];
}

export interface Capabilities {
  codecs: readonly Codec[];
  idempotent: boolean;
  /** False for tools that take one header set per run (kcat -H). */
  perRecordHeaders: boolean;
  /** False for tools that cannot set a record's timestamp (kcat, console producer). */
  explicitTimestamps: boolean;
}

/** The spec a client runs: records for each codec it supports. */
export function makeSpec(client: string, bootstrap: string, capabilities: Capabilities): Spec {
  const topic = `interop-${client}`;
  const baseTimestamp = Date.now() - 10 * 60_000;
  let sequence = 0;
  const batches = capabilities.codecs.map((codec): SpecBatch => {
    const records: SpecRecord[] = [];
    for (let i = 0; i < RECORDS_PER_CODEC; i++, sequence++) {
      records.push({
        key: KEYS[sequence % KEYS.length]!,
        value: `${codec}-${i}-${FILLER}`,
        headers: capabilities.perRecordHeaders
          ? [['seq', String(sequence)], ['codec', codec], ['empty', '']]
          : [['codec', codec], ['client', client]],
        timestamp: capabilities.explicitTimestamps ? baseTimestamp + sequence * 7 : null,
      });
    }
    return { codec, records };
  });
  const expectedCount = batches.reduce((sum, batch) => sum + batch.records.length, 0);
  const timestampQueries = capabilities.explicitTimestamps
    ? [baseTimestamp, baseTimestamp + Math.floor(expectedCount / 2) * 7 + 3, baseTimestamp + expectedCount * 7 + 1000]
    : [Date.now() + 3_600_000];
  return { phase: 'run', bootstrap, topic, partitions: PARTITIONS, idempotent: capabilities.idempotent, batches, expectedCount, timestampQueries };
}

/** Checks a driver's "run" report against its spec; returns the consumed records grouped for later checks. */
export function checkRun(spec: Spec, run: DriverRun): void {
  const sent = spec.batches.flatMap((batch) => batch.records);
  assert.equal(run.consumed.length, sent.length, `consumed ${run.consumed.length} records, sent ${sent.length}`);
  const byValue = new Map<string, ConsumedRecord>();
  for (const record of run.consumed) {
    assert.ok(record.value !== null && !byValue.has(record.value), `duplicate or null value consumed: ${record.value}`);
    byValue.set(record.value, record);
  }
  for (const record of sent) {
    const got = byValue.get(record.value);
    assert.ok(got !== undefined, `record ${record.value} was not consumed`);
    assert.equal(got.key, record.key, `key of ${record.value}`);
    assert.deepEqual(got.headers, record.headers, `headers of ${record.value}`);
    assert.equal(got.partition, partitionForKey(Buffer.from(record.key), spec.partitions), `partition of ${record.value} (murmur2 of its key)`);
    if (record.timestamp !== null) assert.equal(got.timestamp, record.timestamp, `timestamp of ${record.value}`);
    else assert.ok(got.timestamp >= run.produceStartMs - 1 && got.timestamp <= run.produceEndMs + 1, `timestamp ${got.timestamp} of ${record.value} outside the produce window`);
    if (got.timestampType !== undefined) assert.equal(got.timestampType, 'CreateTime', `timestamp type of ${record.value}`);
  }
  checkOffsetsUnique(run.consumed);
  checkPerKeyOrder(sent, byValue);
  checkOffsetsForTimes(spec, run);
}

function checkOffsetsUnique(consumed: readonly ConsumedRecord[]): void {
  const seen = new Set(consumed.map((record) => `${record.partition}@${record.offset}`));
  assert.equal(seen.size, consumed.length, 'two records share a partition and offset');
}

/** Records of one key must be in the log in the order they were sent. */
function checkPerKeyOrder(sent: readonly SpecRecord[], byValue: ReadonlyMap<string, ConsumedRecord>): void {
  const lastOffsetByKey = new Map<string, number>();
  for (const record of sent) {
    const offset = byValue.get(record.value)!.offset;
    const previous = lastOffsetByKey.get(record.key) ?? -1;
    assert.ok(offset > previous, `key ${record.key}: ${record.value} at offset ${offset} is not after offset ${previous}`);
    lastOffsetByKey.set(record.key, offset);
  }
}

/** Kafka's rule: the earliest offset whose timestamp is >= the target, or none. */
function checkOffsetsForTimes(spec: Spec, run: DriverRun): void {
  for (const timestamp of spec.timestampQueries) {
    assert.equal(run.offsetsForTimes.filter((answer) => answer.timestamp === timestamp).length, spec.partitions, `one answer per partition for ${timestamp}`);
  }
  for (const answer of run.offsetsForTimes) {
    const candidates = run.consumed
      .filter((record) => record.partition === answer.partition && record.timestamp >= answer.timestamp)
      .map((record) => record.offset);
    const expected = candidates.length === 0 ? null : Math.min(...candidates);
    const offset = answer.offset === -1 ? null : answer.offset;
    assert.equal(offset, expected, `offset for timestamp ${answer.timestamp} in partition ${answer.partition}`);
  }
  const found = run.offsetsForTimes.filter((answer) => answer.offset !== null && answer.offset !== -1);
  assert.ok(found.some((answer) => answer.offset! > 0), 'a timestamp query found a record past the start of its partition');
  assert.ok(found.length < run.offsetsForTimes.length, 'at least one timestamp query (in the future) found none');
}

export function checkDelete(spec: Spec, report: DriverDelete): void {
  assert.ok(report.topicsBefore.includes(spec.topic), `topic ${spec.topic} listed before the delete: ${report.topicsBefore.join(',')}`);
  assert.equal(report.describedPartitions, spec.partitions);
  assert.ok(!report.topicsAfter.includes(spec.topic), `topic ${spec.topic} still listed after the delete`);
}

export interface LogBatch {
  partition: number;
  codec: string;
  producerId: number;
  baseSequence: number;
  lastSequence: number;
  count: number;
}

/** Every batch header of the topic's partitions, as `spool dump-log` prints them (Kafka's DumpLogSegments lines). */
export async function readLogBatches(dataDirs: string | readonly string[], topic: string, partitions: number): Promise<LogBatch[]> {
  const batches: LogBatch[] = [];
  for (let partition = 0; partition < partitions; partition++) {
    const dir = partitionDir(dataDirs, topic, partition);
    const files = readdirSync(dir).filter((name) => name.endsWith('.log')).map((name) => join(dir, name));
    const out = await execText(process.execPath, [SPOOL_BIN, 'dump-log', '--files', files.join(',')]);
    for (const line of out.split('\n')) {
      const match = /^baseOffset: \d+ lastOffset: \d+ count: (\d+) baseSequence: (-?\d+) lastSequence: (-?\d+) producerId: (-?\d+) .* compresscodec: (\w+) /.exec(line);
      if (match === null) continue;
      batches.push({
        partition,
        count: Number(match[1]),
        baseSequence: Number(match[2]),
        lastSequence: Number(match[3]),
        producerId: Number(match[4]),
        codec: match[5]!,
      });
    }
  }
  return batches;
}

/** The one data dir (of a node's, or of several nodes' with RF=1) that holds the partition's log. */
export function partitionDir(dataDirs: string | readonly string[], topic: string, partition: number): string {
  const found = (typeof dataDirs === 'string' ? [dataDirs] : dataDirs).map((dataDir) => join(dataDir, `${topic}-${partition}`)).filter((dir) => existsSync(dir));
  assert.equal(found.length, 1, `partition dir ${topic}-${partition} exists on exactly one node`);
  return found[0]!;
}

/** The batches on disk carry each codec the client sent and, when idempotent, producer ids and gap-free sequences. */
export function checkLog(spec: Spec, batches: readonly LogBatch[]): void {
  const total = batches.reduce((sum, batch) => sum + batch.count, 0);
  assert.equal(total, spec.expectedCount, 'records on disk');
  const codecs = new Set(batches.map((batch) => batch.codec));
  assert.deepEqual([...codecs].sort(), spec.batches.map((batch) => batch.codec).sort(), 'codecs of the batches on disk');
  if (!spec.idempotent) return;
  const nextSequence = new Map<string, number>();
  for (const batch of batches) {
    assert.ok(batch.producerId >= 0, `idempotent batch has a producer id (got ${batch.producerId})`);
    const stream = `${batch.producerId}/${batch.partition}`;
    assert.equal(batch.baseSequence, nextSequence.get(stream) ?? 0, `sequence of ${stream}`);
    assert.equal(batch.lastSequence, batch.baseSequence + batch.count - 1);
    nextSequence.set(stream, batch.lastSequence + 1);
  }
}

function execText(file: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 1 << 26, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

export interface DriverOutput {
  stdout: string;
  stderr: string;
  code: number | null;
  /** The signal that ended the driver (a crash, or the timeout's SIGTERM), when no exit code did. */
  signal?: NodeJS.Signals | null;
}

/** Runs a driver with the spec in a temp file (path as its last argument); parses the last stdout line as JSON. */
export async function runDriver<T>(command: string, args: readonly string[], spec: Spec, specPath: string, options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<T> {
  writeFileSync(specPath, JSON.stringify(spec));
  const result = await new Promise<DriverOutput>((resolve, reject) => {
    execFile(command, [...args, specPath], { timeout: options.timeoutMs ?? 120_000, maxBuffer: 1 << 26, encoding: 'utf8', env: options.env ?? process.env }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number' && error.signal === null) reject(error);
      else resolve({ stdout, stderr, code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, signal: error?.signal ?? null });
    });
  });
  assert.equal(result.code, 0, `${command} ${args.join(' ')} exited with ${result.code ?? `signal ${result.signal}`}:\n${result.stderr}\n${result.stdout}`);
  const lines = result.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

/**
 * What a client test does about a missing tool: undefined when `present`;
 * otherwise a skip message, or a thrown error when CI=true (CI must run every client).
 */
export function missingToolSkip(present: boolean, message: string): string | undefined {
  if (present) return undefined;
  if (process.env.CI === 'true') throw new Error(`${message} (CI=true: a missing tool fails the test)`);
  return message;
}
