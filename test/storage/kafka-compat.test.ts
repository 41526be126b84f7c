/**
 * Byte compatibility of Spool's partition directories with Apache Kafka
 * 4.4.0's (DESIGN.md §3.2), proved against the real broker and tools.
 *
 * The oracle: a real Kafka broker stores records sent by the real Java
 * producer (keys, null keys and values, empty values, headers with null
 * values, explicit and producer-clock timestamps; every codec; idempotent
 * and transactional batches with commit and abort markers) into a topic with
 * 100 kB segments and a 1 kB index interval, and shuts down cleanly. Kafka's
 * own FileRecords (java/DumpRecords) decodes the directory: that is what
 * Spool must match, and it is what was sent.
 *
 * (a) Kafka writes, Spool reads. Spool's LogManager opens a copy of Kafka's
 *     log dir (checkpoints, clean-shutdown marker, Kafka's indexes) and
 *     reads back every batch and record; reads at every batch's first and
 *     last offset and lookups by timestamp go through Kafka's indexes. A
 *     full recovery of Kafka's segments keeps every batch and rebuilds
 *     offset indexes byte-identical to Kafka's.
 * (b) Spool writes, Kafka reads. Spool's Log appends Kafka's batches as a
 *     follower: the .log, .index and .timeindex files must be byte-identical
 *     to Kafka's. Spool also builds batches itself (every codec) and appends
 *     them as a leader over several segments. On both directories Kafka's
 *     DumpLogSegments must report nothing with --index-sanity-check nor
 *     when it checks every index entry against the log, and must decode the
 *     same records.
 *
 * Interop test: needs the Kafka jars from test/interop/kafka/setup.sh.
 * Without them it is skipped, except under CI=true where it fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaSkipReason, runKafkaTool, startKafka, TOOL } from '../interop/kafka/kafka.js';
import { realEnv } from '../../src/io/env.js';
import { iterateBatches, readBatchHeader } from '../../src/protocol/records/batch.js';
import { compressionId, compressionName } from '../../src/protocol/records/compression.js';
import { buildBatch, decodeRecords } from '../../src/protocol/records/records.js';
import { logConfig } from '../../src/storage/log-config.js';
import { loadLog } from '../../src/storage/log-loader.js';
import { dumpLogSegments, type RecordParser } from '../../src/storage/dump-log.js';
import { LogManager } from '../../src/storage/log-manager.js';
import type { Log } from '../../src/storage/log.js';
import {
  formatProduceLines,
  parseDumpRecords,
  type DumpedPartition,
  type KafkaBatch,
  type KafkaRecord,
  type ProduceLine,
} from '../interop/kafka/records.js';

const TOPIC = 'compat';
const PARTITION_DIR = `${TOPIC}-0`;
const SEGMENT_BYTES = 100_000;
const INDEX_INTERVAL_BYTES = 1024;
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
const RECORDS_PER_CODEC = 400;
const SEED = 0x5eed_c0de;
/** Leader epoch of the batches Spool builds and appends as a leader. */
const BUILT_LEADER_EPOCH = 3;
const LOG_CONFIG = logConfig({ segmentBytes: SEGMENT_BYTES, indexIntervalBytes: INDEX_INTERVAL_BYTES });
/**
 * Record timestamps start ten minutes ago: recent enough that neither Kafka
 * nor Spool rolls segments by age (segment.ms is measured from the first
 * batch's timestamp), and within Kafka's message.timestamp.*.max.ms.
 */
const BASE_TIMESTAMP_MS = Date.now() - 10 * 60_000;

const skipReason = kafkaSkipReason();

describe('storage byte compatibility with Apache Kafka 4.4.0', { skip: skipReason ?? false }, () => {
  let workDir: string;
  /** Kafka's log.dirs after a clean shutdown. */
  let kafkaDataDir: string;
  /** Data records in send order (aborted ones included: they stay in the log). */
  let sent: KafkaRecord[];
  /** Kafka's own decoding of its partition directory. */
  let kafkaView: DumpedPartition;
  /** The directory of batches Spool built, made once by the first test that needs it. */
  let built: Promise<{ dir: string; written: KafkaRecord[] }> | undefined;
  const buildOnce = () => (built ??= appendBuiltBatches(join(workDir, 'b-built', PARTITION_DIR), mulberry32(SEED + 1)));

  before(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'spool-kafka-compat-'));
    const lines = produceScript(SEED);
    sent = lines.flatMap((line) => (line.kind === 'record' ? [line] : []));
    kafkaDataDir = await writeWithKafka(workDir, lines);
    kafkaView = await dumpRecords(join(kafkaDataDir, PARTITION_DIR));
  });

  after(() => {
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  });

  it('the oracle: Kafka stored what the Java producer sent, over several segments and every codec', () => {
    assert.ok(kafkaView.segments.length >= 3, `expected several segments, got ${kafkaView.segments.length}`);
    for (const segment of kafkaView.segments) assert.equal(segment.validBytes, segment.fileBytes);
    assert.deepEqual(new Set(kafkaView.batches.map((b) => b.compression)), new Set(CODECS));
    assert.ok(kafkaView.batches.some((b) => b.isControl), 'transaction markers present');
    assertDataRecordsEqual(dataRecords(kafkaView), sent);
  });

  it("(a) Spool's LogManager opens Kafka's log dir after a clean shutdown and reads every batch and record", async () => {
    const logDir = copyLogDir(kafkaDataDir, join(workDir, 'a-clean'));
    const manager = await LogManager.open(realEnv, { logDir, configFor: () => LOG_CONFIG });
    try {
      const log = manager.getLog({ topic: TOPIC, partition: 0 });
      assert.ok(log !== undefined, 'Spool loaded the partition');
      const logEndOffset = kafkaView.batches.at(-1)!.lastOffset + 1;
      assert.equal(log.logStartOffset, 0);
      assert.equal(log.logEndOffset, logEndOffset);
      assert.equal(log.highWatermark, logEndOffset, "from Kafka's replication-offset-checkpoint");
      assert.deepEqual(await readAllWithSpool(log), withoutPlacement(kafkaView.batches));
      await assertRandomReads(log, kafkaView);
      await assertTimestampLookups(log, kafkaView);
    } finally {
      await manager.close();
    }
  });

  it("(a) Spool recovers Kafka's segments from offset 0, keeps every batch and rebuilds Kafka's offset index bytes", async () => {
    const dir = join(workDir, 'a-recovered', PARTITION_DIR);
    cpSync(join(kafkaDataDir, PARTITION_DIR), dir, { recursive: true });
    const log = await loadLog(realEnv, {
      dir,
      topicPartition: { topic: TOPIC, partition: 0 },
      config: LOG_CONFIG,
      hadCleanShutdown: false,
      recoveryPoint: 0,
    });
    try {
      assert.equal(log.logEndOffset, kafkaView.batches.at(-1)!.lastOffset + 1);
      assert.deepEqual(await readAllWithSpool(log), withoutPlacement(kafkaView.batches));
      await assertRandomReads(log, kafkaView);
    } finally {
      await log.close();
    }
    for (const name of segmentFiles(join(kafkaDataDir, PARTITION_DIR), ['.log', '.index'])) {
      assert.deepEqual(readFileSync(join(dir, name)), readFileSync(join(kafkaDataDir, PARTITION_DIR, name)), name);
    }
  });

  it("(b) Spool's Log writes Kafka's batches into byte-identical segment, index and time-index files that DumpLogSegments accepts", async () => {
    const dir = join(workDir, 'b-replicated', PARTITION_DIR);
    await appendAsFollower(dir, join(kafkaDataDir, PARTITION_DIR));
    const kafkaFiles = segmentFiles(join(kafkaDataDir, PARTITION_DIR), ['.log', '.index', '.timeindex']);
    assert.deepEqual(segmentFiles(dir, ['.log', '.index', '.timeindex']), kafkaFiles, 'same segments');
    for (const name of kafkaFiles) {
      assert.deepEqual(readFileSync(join(dir, name)), readFileSync(join(kafkaDataDir, PARTITION_DIR, name)), name);
    }
    const checked = await checkWithDumpLogSegments(dir);
    assert.deepEqual(checked.records, dumpLogRecords(kafkaView));
    assert.deepEqual(withoutPlacement((await dumpRecords(dir)).batches), withoutPlacement(kafkaView.batches));
  });

  it('(b) Kafka decodes batches Spool built (every codec, keys, headers) from a Spool log of several segments', async () => {
    const { dir, written } = await buildOnce();
    const view = await dumpRecords(dir);
    assert.ok(view.segments.length >= 3, `expected several segments, got ${view.segments.length}`);
    for (const segment of view.segments) assert.equal(segment.validBytes, segment.fileBytes);
    assert.deepEqual(new Set(view.batches.map((b) => b.compression)), new Set(CODECS));
    assert.ok(view.batches.every((b) => b.partitionLeaderEpoch === BUILT_LEADER_EPOCH));
    assertDataRecordsEqual(dataRecords(view), written);
    assert.deepEqual(view.batches.flatMap((b) => b.records.map((r) => r.offset)), written.map((_, offset) => offset));
    const checked = await checkWithDumpLogSegments(dir);
    assert.deepEqual(checked.records, dumpLogRecords(view));
  });

  it("spool dump-log prints what Kafka's DumpLogSegments prints, line for line, in every mode", async () => {
    const dirs = [join(kafkaDataDir, PARTITION_DIR), (await buildOnce()).dir];
    const suffixes = ['.log', '.index', '.timeindex', '.txnindex', '.snapshot'];
    const files = dirs.flatMap((dir) => segmentFiles(dir, suffixes).map((name) => join(dir, name)));
    assert.ok(files.some((file) => file.endsWith('.txnindex')) && files.some((file) => file.endsWith('.snapshot')));
    const modes: { flags: string[]; options: Parameters<typeof dumpLogSegments>[1] }[] = [
      { flags: [], options: { files } },
      { flags: ['--deep-iteration'], options: { files, deepIteration: true } },
      { flags: ['--index-sanity-check'], options: { files, indexSanityCheck: true } },
      {
        flags: ['--print-data-log', '--key-decoder-class', TOOL.base64Decoder, '--value-decoder-class', TOOL.base64Decoder],
        options: { files, printDataLog: true, parser: base64RecordParser },
      },
    ];
    for (const mode of modes) {
      const kafka = await runKafkaTool(TOOL.dumpLog, ['--files', files.join(','), ...mode.flags]);
      assert.equal(kafka.code, 0, kafka.stderr);
      const spool = { out: [] as string[], err: [] as string[] };
      await dumpLogSegments(realEnv.fs, mode.options, { out: (line) => spool.out.push(line), err: (line) => spool.err.push(line) });
      assert.deepEqual(spool.out, lines(kafka.stdout), `stdout with ${mode.flags.join(' ') || 'no flags'}`);
      // stderr: Kafka's reports come in HashMap order of file names; Spool's in the order of --files.
      assert.deepEqual(reportBlocks(spool.err), reportBlocks(lines(kafka.stderr)), `stderr with ${mode.flags.join(' ') || 'no flags'}`);
    }
  });
});

/** Data records of a dump, in offset order, without their offsets. */
function dataRecords(view: DumpedPartition): KafkaRecord[] {
  return view.batches
    .filter((batch) => !batch.isControl)
    .flatMap((batch) => batch.records.map(({ key, value, timestampMs, headers }) => ({ key, value, timestampMs, headers })));
}

function assertDataRecordsEqual(actual: readonly KafkaRecord[], expected: readonly KafkaRecord[]): void {
  assert.equal(actual.length, expected.length, 'record count');
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i]!;
    const got = actual[i]!;
    assert.deepEqual(got.key, want.key, `key of record ${i}`);
    assert.deepEqual(got.value, want.value, `value of record ${i}`);
    assert.deepEqual(got.headers, want.headers, `headers of record ${i}`);
    if (want.timestampMs !== null) assert.equal(got.timestampMs, want.timestampMs, `timestamp of record ${i}`);
  }
}

/**
 * The ProduceRecords script: per codec an idempotent producer sending
 * RECORDS_PER_CODEC records, then a transactional producer committing,
 * aborting and committing again.
 */
function produceScript(seed: number): ProduceLine[] {
  const random = mulberry32(seed);
  const lines: ProduceLine[] = [];
  let index = 0;
  const records = (count: number) => {
    for (let i = 0; i < count; i++) lines.push({ kind: 'record', ...randomRecord(random, index++) });
  };
  for (const codec of CODECS) {
    lines.push({ kind: 'directive', text: `#config compression.type=${codec} linger.ms=20 batch.size=8192` });
    records(RECORDS_PER_CODEC);
  }
  // Transactions last, and with the producer's clock on every other record:
  // timestamps stay increasing before them, so lookups by time have one answer.
  lines.push({ kind: 'directive', text: '#config compression.type=zstd transactional.id=spool-compat linger.ms=20' });
  for (const end of ['#commit', '#abort', '#commit']) {
    lines.push({ kind: 'directive', text: '#begin' });
    const first = lines.length;
    records(40);
    for (let i = first; i < lines.length; i += 2) (lines[i] as KafkaRecord).timestampMs = null;
    lines.push({ kind: 'directive', text: end });
  }
  return lines;
}

/** A record with the shapes Kafka allows: null keys and values, empty and binary payloads, 0-3 headers. */
function randomRecord(random: () => number, index: number): KafkaRecord {
  const key = index % 10 === 3 ? null : Buffer.from(`key-${index}`);
  const value = index % 25 === 7 ? null : randomPayload(random, index);
  const headers = Array.from({ length: Math.floor(random() * 4) }, (_, h) => ({
    key: `h${h}-${index % 3}`,
    value: random() < 0.2 ? null : randomBytes(random, Math.floor(random() * 20)),
  }));
  return { key, value, timestampMs: BASE_TIMESTAMP_MS + index * 7, headers };
}

/** Half random bytes (incompressible), half repetitive text (compressible), some empty. */
function randomPayload(random: () => number, index: number): Buffer {
  if (index % 37 === 0) return Buffer.alloc(0);
  const length = 50 + Math.floor(random() * 400);
  if (random() < 0.5) return randomBytes(random, length);
  return Buffer.from(`record ${index} `.repeat(Math.ceil(length / 12)).slice(0, length));
}

function randomBytes(random: () => number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

/** A small seeded PRNG, so a failing run can be replayed exactly. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Starts Kafka, creates the topic, sends `lines` with the Java producer, stops Kafka cleanly; returns its log dir. */
async function writeWithKafka(workDir: string, lines: readonly ProduceLine[]): Promise<string> {
  const kafka = await startKafka({ dir: join(workDir, 'kafka') });
  try {
    await expectTool(TOOL.topics, [
      '--bootstrap-server', kafka.bootstrap, '--create', '--topic', TOPIC, '--partitions', '1',
      '--config', `internal.segment.bytes=${SEGMENT_BYTES}`,
      '--config', `index.interval.bytes=${INDEX_INTERVAL_BYTES}`,
    ]);
    const inputPath = join(workDir, 'produce.txt');
    writeFileSync(inputPath, formatProduceLines(lines));
    await expectTool(TOOL.produceRecords, [kafka.bootstrap, TOPIC, inputPath, 'acks=all']);
  } finally {
    await kafka.stop();
  }
  return kafka.dataDir;
}

async function dumpRecords(partitionDir: string): Promise<DumpedPartition> {
  return parseDumpRecords(await expectTool(TOOL.dumpRecords, [partitionDir]));
}

/** Runs a Kafka tool and returns its stdout; fails the test on a non-zero exit. */
async function expectTool(mainClass: string, args: readonly string[]): Promise<string> {
  const result = await runKafkaTool(mainClass, args);
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')} exited ${result.code}:\n${result.stderr}`);
  return result.stdout;
}


// ---- Spool reading ------------------------------------------------------------------

type PlacedBatch = Omit<KafkaBatch, 'position' | 'segmentBaseOffset'>;

/** Batches without their file placement (which segment, which byte position). */
function withoutPlacement(batches: readonly KafkaBatch[]): PlacedBatch[] {
  return batches.map(({ position: _position, segmentBaseOffset: _segment, ...rest }) => rest);
}

/** Copies a Kafka log dir, leaving out the KRaft metadata log (Spool's Raft owns that, not its LogManager). */
function copyLogDir(from: string, to: string): string {
  cpSync(from, to, { recursive: true, filter: (path) => !path.includes('__cluster_metadata-') });
  return to;
}

/** Reads the whole log through Log.read, batch after batch, and decodes it as DumpRecords does. */
async function readAllWithSpool(log: Log): Promise<PlacedBatch[]> {
  const batches: PlacedBatch[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const read = await log.read(offset, { maxBytes: 64 * 1024, minOneMessage: true });
    let progressed = false;
    for (const { position, header } of iterateBatches(read.records)) {
      if (header.lastOffset < offset) continue;
      batches.push(decodeWithSpool(read.records.subarray(position, position + header.sizeBytes)));
      offset = header.lastOffset + 1;
      progressed = true;
    }
    assert.ok(progressed, `Log.read(${offset}) returned no whole batch`);
  }
  return batches;
}

function decodeWithSpool(batch: Buffer): PlacedBatch {
  const header = readBatchHeader(batch);
  const decoded = decodeRecords(batch);
  assert.equal(decoded.error, null, `batch at offset ${header.baseOffset} decodes`);
  return {
    baseOffset: header.baseOffset,
    lastOffset: header.lastOffset,
    compression: compressionName(header.compression) ?? `id ${header.compression}`,
    timestampType: header.timestampType === 0 ? 'CreateTime' : 'LogAppendTime',
    maxTimestampMs: header.maxTimestamp,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    isTransactional: header.isTransactional,
    isControl: header.isControl,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    recordCount: header.recordCount,
    records: decoded.records!.map((r) => ({ offset: r.offset, timestampMs: r.timestamp, key: r.key, value: r.value, headers: r.headers })),
  };
}

/** A read at the first and last offset of every batch starts at that batch (offset-index lookups in every segment). */
async function assertRandomReads(log: Log, view: DumpedPartition): Promise<void> {
  for (const batch of view.batches) {
    for (const offset of new Set([batch.baseOffset, batch.lastOffset])) {
      const read = await log.read(offset, { maxBytes: 1, minOneMessage: true });
      assert.equal(read.firstBatchBaseOffset, batch.baseOffset, `read(${offset})`);
      assert.equal(readBatchHeader(read.records).lastOffset, batch.lastOffset, `read(${offset})`);
    }
  }
}

/**
 * ListOffsets by timestamp (time-index lookups): the first record, in
 * offset order, whose timestamp is >= the target; every 10th record's
 * timestamp and the gaps just after them.
 */
async function assertTimestampLookups(log: Log, view: DumpedPartition): Promise<void> {
  const records = view.batches.flatMap((batch) => batch.records);
  const targets = records.filter((_, i) => i % 10 === 0).flatMap((r) => [r.timestampMs!, r.timestampMs! + 1]);
  for (const target of [records[0]!.timestampMs! - 1, ...targets]) {
    const expected = records.find((r) => r.timestampMs! >= target);
    const found = await log.fetchOffsetByTimestamp(target);
    assert.equal(found?.offset, expected?.offset, `offset for timestamp ${target}`);
    assert.equal(found?.timestamp, expected?.timestampMs, `timestamp for ${target}`);
  }
}

/** Segment file names with the given suffixes, sorted. */
function segmentFiles(dir: string, suffixes: readonly string[]): string[] {
  return readdirSync(dir)
    .filter((name) => /^\d{20}\./.test(name) && suffixes.some((suffix) => name.endsWith(suffix)))
    .sort();
}

// ---- Spool writing ------------------------------------------------------------------

async function openEmptyLog(dir: string): Promise<Log> {
  return loadLog(realEnv, { dir, topicPartition: { topic: TOPIC, partition: 0 }, config: LOG_CONFIG, hadCleanShutdown: true });
}

/** Appends every batch of Kafka's segment files, one append each, keeping offsets and epochs (a follower's appends). */
async function appendAsFollower(dir: string, kafkaPartitionDir: string): Promise<void> {
  const log = await openEmptyLog(dir);
  try {
    for (const name of segmentFiles(kafkaPartitionDir, ['.log'])) {
      const file = readFileSync(join(kafkaPartitionDir, name));
      for (const { position, header } of iterateBatches(file)) {
        const batch = Buffer.from(file.subarray(position, position + header.sizeBytes));
        await log.append(batch, { assignOffsets: false, leaderEpoch: header.partitionLeaderEpoch });
      }
    }
  } finally {
    await log.close();
  }
}

/**
 * Builds batches with Spool's encoder (10-30 records each, every codec,
 * an idempotent producer's header fields) and appends them as a leader.
 * Returns the directory and the records in offset order.
 */
async function appendBuiltBatches(dir: string, random: () => number): Promise<{ dir: string; written: KafkaRecord[] }> {
  const log = await openEmptyLog(dir);
  const written: KafkaRecord[] = [];
  let sequence = 0;
  try {
    for (const codec of CODECS) {
      for (let n = 0; n < 25; n++) {
        const records = Array.from({ length: 10 + Math.floor(random() * 21) }, () => randomRecord(random, written.length));
        const batch = buildBatch({
          records: records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestampMs! })),
          compression: compressionId(codec)!,
          producerId: 4242,
          producerEpoch: 0,
          baseSequence: sequence,
        });
        sequence += records.length;
        written.push(...records);
        await log.append(batch, { assignOffsets: true, leaderEpoch: BUILT_LEADER_EPOCH });
      }
    }
  } finally {
    await log.close();
  }
  return { dir, written };
}

// ---- Kafka's DumpLogSegments --------------------------------------------------------

/** A record line of DumpLogSegments --print-data-log with Base64Decoder keys and values. */
interface DumpLogRecord {
  offset: number;
  timestampMs: number;
  keySize: number;
  valueSize: number;
  headerKeys: string;
  key: string | null;
  value: string | null;
}

/** What DumpLogSegments should print for the data records of a DumpRecords view. */
function dumpLogRecords(view: DumpedPartition): DumpLogRecord[] {
  return view.batches
    .filter((batch) => !batch.isControl)
    .flatMap((batch) =>
      batch.records.map((r) => ({
        offset: r.offset,
        timestampMs: r.timestampMs!,
        keySize: r.key === null ? -1 : r.key.length,
        valueSize: r.value === null ? -1 : r.value.length,
        headerKeys: r.headers.map((h) => h.key).join(','),
        key: r.key === null ? null : r.key.toString('base64'),
        value: r.value === null ? null : r.value.toString('base64'),
      })),
    );
}

/**
 * Runs kafka-dump-log on every .log/.index/.timeindex file of `dir` twice:
 * with --index-sanity-check (the broker's startup check), then with
 * --print-data-log, which also checks every index entry against the log.
 * Asserts Kafka reports no error and returns the data records it decoded.
 */
async function checkWithDumpLogSegments(dir: string): Promise<{ records: DumpLogRecord[] }> {
  const indexFiles = segmentFiles(dir, ['.index', '.timeindex']);
  const files = segmentFiles(dir, ['.log', '.index', '.timeindex']).map((name) => join(dir, name)).join(',');

  const sanity = await runKafkaTool(TOOL.dumpLog, ['--files', files, '--index-sanity-check']);
  assert.equal(sanity.code, 0, sanity.stderr);
  assert.equal(knownDumpLogNoise(sanity.stderr), '', 'no errors from --index-sanity-check');
  for (const name of indexFiles) {
    assert.match(sanity.stdout, new RegExp(`${name} (passed sanity check|is empty)\\.`), `${name} sanity`);
  }

  const full = await runKafkaTool(TOOL.dumpLog, [
    '--files', files, '--print-data-log',
    '--key-decoder-class', TOOL.base64Decoder, '--value-decoder-class', TOOL.base64Decoder,
  ]);
  assert.equal(full.code, 0, full.stderr);
  assert.equal(knownDumpLogNoise(full.stderr), '', 'no index mismatches, time-index errors or offset gaps');
  assert.doesNotMatch(full.stdout, /invalid bytes/);
  const batchLines = full.stdout.split('\n').filter((line) => line.startsWith('baseOffset: '));
  assert.ok(batchLines.length > 0);
  for (const line of batchLines) assert.match(line, /isvalid: true$/);
  return { records: parseDumpLogRecords(full.stdout) };
}

/**
 * DumpLogSegments' stderr without the one report it makes on every healthy
 * log: its gap check starts each file at offset -1, so a segment based at N
 * prints "-1 is followed by N".
 */
function knownDumpLogNoise(stderr: string): string {
  return stderr.replace(/Non-consecutive offsets in \S*?(\d{20})\.log\n {2}-1 is followed by (\d+)\n/g, (whole, base: string, next: string) =>
    Number(base) === Number(next) ? '' : whole,
  );
}

const RECORD_LINE =
  /^\| offset: (\d+) CreateTime: (-?\d+) keySize: (-?\d+) valueSize: (-?\d+) sequence: -?\d+ headerKeys: \[([^\]]*)\](?: key: (\S*))?(?: payload: (\S*))?$/;

function parseDumpLogRecords(stdout: string): DumpLogRecord[] {
  const records: DumpLogRecord[] = [];
  let control = false;
  for (const line of stdout.split('\n')) {
    if (line.startsWith('baseOffset: ')) control = line.includes('isControl: true');
    if (!line.startsWith('| ') || control) continue;
    const match = RECORD_LINE.exec(line);
    assert.ok(match !== null, `unexpected DumpLogSegments record line: ${line}`);
    records.push({
      offset: Number(match[1]),
      timestampMs: Number(match[2]),
      keySize: Number(match[3]),
      valueSize: Number(match[4]),
      headerKeys: match[5]!,
      key: match[6] ?? null,
      value: match[7] ?? null,
    });
  }
  return records;
}

/** Spool's counterpart of java/Base64Decoder for --key-decoder-class / --value-decoder-class. */
const base64RecordParser: RecordParser = {
  parse(record) {
    return {
      ...(record.key === null ? {} : { key: record.key.toString('base64') }),
      ...(record.value === null ? {} : { payload: record.value.toString('base64') }),
    };
  },
};

/** A tool's output as lines, without the empty string after the final newline. */
function lines(text: string): string[] {
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all;
}

/** Stderr report blocks (a header line and its indented detail lines), sorted: Kafka prints them in HashMap order. */
function reportBlocks(stderrLines: readonly string[]): string[] {
  const blocks: string[] = [];
  for (const line of stderrLines) {
    if (line.startsWith('  ') && blocks.length > 0) blocks[blocks.length - 1] += `\n${line}`;
    else blocks.push(line);
  }
  return blocks.sort();
}
