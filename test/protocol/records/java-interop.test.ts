/**
 * Golden batches from Apache Kafka's Java client (kafka-clients 4.4.0,
 * MemoryRecordsBuilder: the producer's batch writer), written by
 * test/interop/java-records/build.sh: none, gzip, snappy (xerial), lz4 and
 * zstd, codec levels, idempotent and transactional batches, LogAppendTime,
 * control markers, many records, and concatenated batches. Proves Spool reads
 * the same header and exactly the records Kafka reads back; that Spool's
 * builder writes byte-identical uncompressed and control batches; and that
 * the Java client validates and reads back batches Spool built (every codec,
 * after offset / epoch / LogAppendTime rewrites).
 *
 * Without the files the tests skip locally, and fail when CI=true.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  iterateBatches,
  readBatchHeader,
  setBaseOffset,
  setLogAppendTime,
  setPartitionLeaderEpoch,
  validateBatch,
  type BatchHeader,
} from '../../../src/protocol/records/batch.js';
import { buildControlBatch, readControlRecord } from '../../../src/protocol/records/control.js';
import { buildBatch, decodeRecords, type Record, type RecordInput } from '../../../src/protocol/records/records.js';

const PROJECT = fileURLToPath(new URL('../../../../', import.meta.url));
const INTEROP = join(PROJECT, 'test/interop/java-records');
const GOLDEN = process.env['SPOOL_JAVA_RECORDS_DIR'] ?? join(INTEROP, 'out');
const CLASSPATH_FILE = join(INTEROP, 'target/classpath.txt');

interface JavaRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
}

interface JavaBatch {
  baseOffset: number;
  lastOffset: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  sizeInBytes: number;
  compression: number;
  timestampType: number;
  isTransactional: boolean;
  isControl: boolean;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  maxTimestamp: number;
  count: number;
  records: JavaRecord[];
}

interface JavaCase {
  name: string;
  file: string;
  batches: JavaBatch[];
}

/** Skips locally when the generated files are missing; in CI their absence is a failure. */
function available(path: string, what: string): { skip?: string } {
  if (existsSync(path)) return {};
  const message = `${what} missing at ${path}: run test/interop/java-records/build.sh`;
  if (process.env['CI'] === 'true') return {};
  return { skip: message };
}

function requireFile(path: string): void {
  assert.ok(existsSync(path), `${path} is missing: test/interop/java-records/build.sh must run first (CI=true)`);
}

function base64(bytes: Buffer | null): string | null {
  return bytes === null ? null : bytes.toString('base64');
}

function asJava(record: Record): JavaRecord {
  return {
    offset: record.offset,
    timestamp: record.timestamp,
    key: base64(record.key),
    value: base64(record.value),
    headers: record.headers.map((header) => ({ key: header.key, value: base64(header.value) })),
  };
}

function headerAsJava(header: BatchHeader): Omit<JavaBatch, 'records'> {
  return {
    baseOffset: header.baseOffset,
    lastOffset: header.lastOffset,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    magic: header.magic,
    crc: header.crc,
    sizeInBytes: header.sizeBytes,
    compression: header.compression,
    timestampType: header.timestampType,
    isTransactional: header.isTransactional,
    isControl: header.isControl,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    maxTimestamp: header.maxTimestamp,
    count: header.recordCount,
  };
}

function loadCases(): JavaCase[] {
  requireFile(join(GOLDEN, 'cases.json'));
  return JSON.parse(readFileSync(join(GOLDEN, 'cases.json'), 'utf8')) as JavaCase[];
}

test('Java client batches: Spool reads the header and records Kafka reads', available(join(GOLDEN, 'cases.json'), 'golden batches'), () => {
  const cases = loadCases();
  assert.ok(cases.length >= 16, `expected the full case list, got ${cases.length}`);
  for (const golden of cases) {
    const bytes = readFileSync(join(GOLDEN, golden.file));
    const found = [...iterateBatches(bytes)];
    assert.equal(found.length, golden.batches.length, `${golden.name}: batch count`);
    found.forEach(({ position, header }, index) => {
      const expected = golden.batches[index]!;
      const batch = bytes.subarray(position, position + header.sizeBytes);
      const { records: _records, ...expectedHeader } = expected;
      assert.equal(validateBatch(batch, 0, { origin: header.isControl ? 'coordinator' : 'client' }), null, golden.name);
      assert.deepEqual(headerAsJava(header), expectedHeader, `${golden.name} batch ${index} header`);
      const decoded = decodeRecords(batch);
      assert.equal(decoded.error, null, `${golden.name}: ${decoded.error?.message}`);
      assert.deepEqual(decoded.records!.map(asJava), expected.records, `${golden.name} batch ${index} records`);
    });
  }
});

test('Java control batches are end-transaction markers Spool reads and rebuilds byte for byte', available(join(GOLDEN, 'cases.json'), 'golden batches'), () => {
  const cases = loadCases();
  for (const [name, type, coordinatorEpoch, baseOffset, timestamp] of [
    ['control-commit', 'COMMIT', 11, 42, 1_700_000_001_000],
    ['control-abort', 'ABORT', 12, 43, 1_700_000_002_000],
  ] as const) {
    const golden = cases.find((entry) => entry.name === name)!;
    const bytes = readFileSync(join(GOLDEN, golden.file));
    const [record] = decodeRecords(bytes).records!;
    assert.deepEqual(readControlRecord(record!), { version: 0, type, typeId: type === 'COMMIT' ? 1 : 0, coordinatorEpoch });
    const rebuilt = buildControlBatch({
      type,
      producerId: 99,
      producerEpoch: 0,
      coordinatorEpoch,
      timestamp,
      baseOffset,
      partitionLeaderEpoch: 5,
    });
    assert.deepEqual(rebuilt, bytes, name);
  }
});

test("Spool's builder writes Java's uncompressed batches byte for byte", available(join(GOLDEN, 'cases.json'), 'golden batches'), () => {
  for (const golden of loadCases().filter((entry) => entry.name === 'none' || entry.name === 'many-none')) {
    const bytes = readFileSync(join(GOLDEN, golden.file));
    const expected = golden.batches[0]!;
    const records: RecordInput[] = expected.records.map((record) => ({
      key: record.key === null ? null : Buffer.from(record.key, 'base64'),
      value: record.value === null ? null : Buffer.from(record.value, 'base64'),
      timestamp: record.timestamp,
      headers: record.headers.map((header) => ({
        key: header.key,
        value: header.value === null ? null : Buffer.from(header.value, 'base64'),
      })),
    }));
    assert.deepEqual(buildBatch({ records, baseOffset: expected.baseOffset }), bytes, golden.name);
  }
});

const SPOOL_RECORDS: RecordInput[] = [
  { key: 'spool-0', value: 'to java', timestamp: 1_700_000_000_000, headers: [{ key: 'h', value: null }, { key: 'ü', value: 'x' }] },
  { key: null, value: Buffer.alloc(300_000, 'spool batch '), timestamp: 1_700_000_000_010 },
  { key: 'tombstone', value: null, timestamp: 1_699_999_999_000 },
];

function spoolBatches(): Map<string, { batch: Buffer; records: Record[] }> {
  const out = new Map<string, { batch: Buffer; records: Record[] }>();
  for (const compression of [0, 1, 2, 3, 4]) {
    const batch = buildBatch({ records: SPOOL_RECORDS, compression, producerId: 8, producerEpoch: 1, baseSequence: 0 });
    setBaseOffset(batch, 0, 123_456);
    setPartitionLeaderEpoch(batch, 0, 3);
    if (compression === 3) setLogAppendTime(batch, 0, 1_750_000_000_000);
    out.set(`spool-${compression}.bin`, { batch, records: decodeRecords(batch).records! });
  }
  const marker = buildControlBatch({ type: 'ABORT', producerId: 8, producerEpoch: 1, coordinatorEpoch: 2, timestamp: 5 });
  out.set('spool-control.bin', { batch: marker, records: decodeRecords(marker).records! });
  return out;
}

test('the Java client validates and reads batches Spool built', available(CLASSPATH_FILE, 'the built Java reader'), () => {
  requireFile(CLASSPATH_FILE);
  const directory = mkdtempSync(join(tmpdir(), 'spool-java-records-'));
  try {
    const batches = spoolBatches();
    for (const [file, { batch }] of batches) writeFileSync(join(directory, file), batch);
    const classpath = `${join(INTEROP, 'target/classes')}:${readFileSync(CLASSPATH_FILE, 'utf8').trim()}`;
    const files = [...batches.keys()].map((file) => join(directory, file));
    const output = execFileSync('java', ['-cp', classpath, 'spool.records.Main', 'read', ...files], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const results = JSON.parse(output) as { file: string; batches?: JavaBatch[]; error?: string }[];
    assert.equal(results.length, batches.size);
    for (const result of results) {
      const expected = batches.get(result.file)!;
      assert.equal(result.error, undefined, `${result.file}: ${result.error}`);
      const [javaBatch] = result.batches!;
      const { records: _records, ...javaHeader } = javaBatch!;
      assert.deepEqual(javaHeader, headerAsJava(readBatchHeader(expected.batch)), result.file);
      assert.deepEqual(javaBatch!.records, expected.records.map(asJava), result.file);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
