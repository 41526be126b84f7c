/**
 * Byte compatibility of Spool's partition directories with Apache Kafka
 * 4.4.0's (DESIGN.md §3.2), proved against the real broker and tools:
 *
 * (a) Kafka writes, Spool reads. A real Kafka broker stores records sent by
 *     the real Java producer (keys, null keys and values, headers, explicit
 *     timestamps; every codec; idempotent and transactional batches with
 *     commit and abort markers) into a topic with 100 kB segments and a
 *     1 kB index interval. After a clean shutdown, Spool's Log opens the
 *     partition directory and must read back every batch and record that
 *     Kafka's own FileRecords decodes (and those are what was sent).
 * (b) Spool writes, Kafka reads. Spool's Log appends the same batches into a
 *     new directory (several segments, with Spool's .index/.timeindex);
 *     Kafka's DumpLogSegments must find no error with --index-sanity-check,
 *     nor when it checks every index entry against the log, and must decode
 *     the same batches and records as from Kafka's own files.
 *
 * Interop test: needs the Kafka jars from test/interop/kafka/setup.sh.
 * Without them it is skipped, except under CI=true where it fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaSkipReason, runKafkaTool, startKafka, TOOL } from '../interop/kafka/kafka.js';
import {
  formatProduceLines,
  parseDumpRecords,
  type DumpedPartition,
  type KafkaRecord,
  type ProduceLine,
} from '../interop/kafka/records.js';

const TOPIC = 'compat';
const SEGMENT_BYTES = 100_000;
const INDEX_INTERVAL_BYTES = 1024;
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
const RECORDS_PER_CODEC = 300;
const BASE_TIMESTAMP_MS = 1_700_000_000_000;
const SEED = 0x5eed_c0de;

const skipReason = kafkaSkipReason();

describe('storage byte compatibility with Apache Kafka 4.4.0', { skip: skipReason ?? false }, () => {
  let workDir: string;
  /** Kafka's log.dirs after a clean shutdown. */
  let kafkaDataDir: string;
  /** Data records in send order (aborted ones included: they stay in the log). */
  let sent: KafkaRecord[];
  /** Kafka's own decoding of its partition directory. */
  let kafkaView: DumpedPartition;

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
    await appendAsFollower(dir, kafkaView, join(kafkaDataDir, PARTITION_DIR));
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
    const dir = join(workDir, 'b-built', PARTITION_DIR);
    const written = await appendBuiltBatches(dir, mulberry32(SEED + 1));
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

/** Starts Kafka, creates the topic, sends `lines` with the Java producer, stops Kafka cleanly; returns the partition dir. */
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
  return join(kafka.dataDir, `${TOPIC}-0`);
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

