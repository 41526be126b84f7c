/**
 * Compaction seen by a real client: kcat (librdkafka) produces many versions
 * of a few hundred keys, with tombstones, into a compacted topic (16 KiB
 * segments, a cleaner that backs off 100 ms); once the broker's
 * cleaner-offset-checkpoint shows a pass over the topic, kcat reads it from
 * the beginning and sees every key's latest value (tombstones as NULL), each
 * key once in the cleaned part (so at most one record a key of the half or
 * more of the log that was cleaned), and original offsets with gaps. The same scenario runs against a real Spool
 * process and against Apache Kafka 4.4 (when test/interop/kafka is set up),
 * which writes the same checkpoint file. The Java consumer (kafka-clients
 * 4.4) then reads the same latest values at their original offsets. Kafka's
 * cleaned log directory is then opened by Spool's LogManager, which serves
 * the same latest values and keeps cleaning it from Kafka's
 * cleaner-offset-checkpoint; the partition Spool cleaned goes back to Kafka,
 * which recovers it (every segment, from offset 0) and serves the same
 * latest values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasCommand } from './harness.js';
import { javaDriverArgs, javaDriverMissing } from './java-client.js';
import { missingToolSkip } from './scenario.js';
import { startSpool } from './spool-process.js';
import { TOOL, kafkaSkipReason, runKafkaTool, startKafka } from '../kafka/kafka.js';
import { realEnv } from '../../../src/io/env.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { appendKeyed, compactConfig, latestByKey, newCleaner, readAll } from '../../storage/cleaner/helpers.js';

const TOPIC = 'compacted-kcat';
const KEYS = 200;
const VERSIONS = 20;
const CHECKPOINT_WAIT_MS = 60_000;

function kcat(args: readonly string[], input?: string): string {
  const result = spawnSync('kcat', args, { input, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, `kcat ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** Every line `key:value`; in the last version every tenth key is deleted (an empty value, sent as NULL with -Z). */
function producedLines(): { lines: string; latest: Map<string, string | null> } {
  const lines: string[] = [];
  const latest = new Map<string, string | null>();
  for (let version = 0; version < VERSIONS; version++) {
    for (let key = 0; key < KEYS; key++) {
      const deleted = version === VERSIONS - 1 && key % 10 === 0;
      const value = deleted ? null : `value-${key}-${version}`;
      lines.push(`key-${key}:${value ?? ''}`);
      latest.set(`key-${key}`, value);
    }
  }
  return { lines: lines.join('\n') + '\n', latest };
}

/** The first dirty offset the cleaner checkpointed for the topic's partition 0, or 0. */
function checkpointedOffset(dir: string): number {
  const path = join(dir, 'cleaner-offset-checkpoint');
  if (!existsSync(path)) return 0;
  const line = readFileSync(path, 'utf8').split('\n').find((entry) => entry.startsWith(`${TOPIC} 0 `));
  return line === undefined ? 0 : Number(line.split(' ')[2]);
}

interface Broker {
  bootstrap: string;
  /** log.dirs: where cleaner-offset-checkpoint is written. */
  dataDir: string;
  output(): string;
}

/**
 * The Java consumer (kafka-clients 4.4, ClientDriver dump prints "<partition>
 * <offset> <value>") reads the topic from the beginning: every record at its
 * original offset (kcat wrote line n at offset n, so the key is offset % KEYS),
 * gaps, and the latest value of every key. Passes may still run, so only what
 * cleaning cannot change is compared.
 */
function javaConsumerSeesLatest(bootstrap: string, latest: ReadonlyMap<string, string | null>): void {
  const result = spawnSync('java', javaDriverArgs(['dump', bootstrap, TOPIC, '1']), { encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 26 });
  assert.equal(result.status, 0, `Java dump failed: ${result.stderr}`);
  const seen = new Map<string, string | null>();
  const offsets: number[] = [];
  for (const line of result.stdout.split('\n').filter((entry) => /^0 \d+ /.test(entry))) {
    const [, offsetText, value] = line.split(' ');
    const offset = Number(offsetText);
    const key = offset % KEYS;
    const version = Math.floor(offset / KEYS);
    assert.ok(value === 'null' || value === `value-${key}-${version}`, `offset ${offset} holds ${value}`);
    seen.set(`key-${key}`, value === 'null' ? null : value!);
    offsets.push(offset);
  }
  assert.deepEqual(seen, latest, 'the Java consumer sees the latest value of every key');
  assert.ok(offsets.length < KEYS * VERSIONS && offsets.at(-1) === KEYS * VERSIONS - 1, 'with gaps, up to the unchanged last offset');
}

/** Values by key of a Spool log, as a consumer of the compacted topic ends up with them. */
async function latestValues(log: Parameters<typeof readAll>[0]): Promise<Map<string, string | null>> {
  return new Map([...latestByKey((await readAll(log)).records)].map(([key, record]) => [key, record.value]));
}

/**
 * Spool opens a copy of Kafka's log dir, serves the same values, and cleans
 * a new version of every key into it; returns the partition directory Spool
 * left (in `workDir`) and the latest values.
 */
async function spoolKeepsCleaning(kafkaDataDir: string, workDir: string, latest: Map<string, string | null>): Promise<string> {
  const logDir = join(workDir, 'spool-logs');
  cpSync(kafkaDataDir, logDir, { recursive: true, filter: (path) => !path.includes('__cluster_metadata-') });
  const manager = await LogManager.open(realEnv, { logDir, configFor: () => compactConfig({ segmentBytes: 16384, minCleanableDirtyRatio: 0.01 }) });
  const log = manager.getLog({ topic: TOPIC, partition: 0 })!;
  assert.deepEqual(await latestValues(log), latest, "Spool serves Kafka's cleaned log");
  const firstDirtyBefore = checkpointedOffset(logDir);
  for (let key = 0; key < KEYS; key += 4) {
    const records = [key, key + 1, key + 2, key + 3].map((index) => ({ key: `key-${index}`, value: `spool-${index}` }));
    await appendKeyed(log, records, { timestampMs: Date.now() });
    for (const record of records) latest.set(record.key, record.value);
  }
  await log.roll();
  assert.equal(await newCleaner(realEnv, () => [manager]).cleanFilthiestLog(), true);
  assert.ok(checkpointedOffset(logDir) > firstDirtyBefore, "the pass starts from Kafka's checkpoint and moves it");
  assert.deepEqual(await latestValues(log), latest);
  const keys = (await readAll(log)).records.filter((record) => record.offset < checkpointedOffset(logDir)).map((record) => record.key);
  assert.equal(new Set(keys).size, keys.length, 'each key once in the part Spool cleaned');
  await log.awaitPendingDeletes();
  await manager.close();
  return join(logDir, `${TOPIC}-0`);
}

/**
 * Puts the partition directory Spool cleaned in place of Kafka's and makes
 * Kafka recover it at its next start: no clean-shutdown marker, and the
 * partition's recovery point back at 0 (so every segment is re-read and its
 * indexes rebuilt by Kafka's LogLoader).
 */
function handBackToKafka(kafkaDataDir: string, spoolPartitionDir: string): void {
  const partitionDir = join(kafkaDataDir, `${TOPIC}-0`);
  rmSync(partitionDir, { recursive: true, force: true });
  cpSync(spoolPartitionDir, partitionDir, { recursive: true });
  rmSync(join(kafkaDataDir, '.kafka_cleanshutdown'), { force: true });
  const checkpoint = join(kafkaDataDir, 'recovery-point-offset-checkpoint');
  const lines = readFileSync(checkpoint, 'utf8').split('\n').map((line) => (line.startsWith(`${TOPIC} 0 `) ? `${TOPIC} 0 0` : line));
  writeFileSync(checkpoint, lines.join('\n'));
}

/** What kcat reads from the beginning of the topic: the latest value of every key. */
function kcatLatest(bootstrap: string): Map<string, string | null> {
  const out = kcat(['-C', '-b', bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-Z', '-f', '%k\t%S\t%s\n']);
  const seen = new Map<string, string | null>();
  for (const line of out.trim().split('\n')) {
    const [key, size, value] = line.split('\t');
    seen.set(key!, Number(size) < 0 ? null : value!);
  }
  return seen;
}

async function scenario(broker: Broker): Promise<Map<string, string | null>> {
  const { lines, latest } = producedLines();
  kcat(['-P', '-b', broker.bootstrap, '-t', TOPIC, '-p', '0', '-K', ':', '-Z', '-X', 'enable.idempotence=true', '-X', 'batch.size=2048'], lines);
  const produced = KEYS * VERSIONS;
  const deadline = Date.now() + CHECKPOINT_WAIT_MS;
  while (checkpointedOffset(broker.dataDir) < produced / 2) {
    assert.ok(Date.now() < deadline, `no cleaning pass within ${CHECKPOINT_WAIT_MS} ms:\n${broker.output()}`);
    await sleep(100);
  }
  const cleanedUpTo = checkpointedOffset(broker.dataDir);
  const out = kcat(['-C', '-b', broker.bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-Z', '-f', '%o\t%k\t%S\t%s\n']);
  const records = out.trim().split('\n').map((line) => {
    const [offset, key, size, value] = line.split('\t');
    return { offset: Number(offset), key: key!, value: Number(size) < 0 ? null : value! };
  });
  const seen = new Map<string, string | null>();
  for (const record of records) seen.set(record.key, record.value);
  assert.deepEqual(seen, latest, 'the latest value of every key');
  const cleanedKeys = records.filter((record) => record.offset < cleanedUpTo).map((record) => record.key);
  assert.equal(new Set(cleanedKeys).size, cleanedKeys.length, 'each key at most once below the cleaned offset');
  // Passes may run while kcat still produces: only the checkpointed part is known to be clean.
  assert.ok(cleanedKeys.length <= KEYS, `${cleanedKeys.length} records left of the ${cleanedUpTo} below the cleaned offset`);
  assert.equal(records.at(-1)!.offset, produced - 1, 'the last offset is unchanged');
  const contiguousFromZero = records.every((record, index) => record.offset === index);
  assert.ok(!contiguousFromZero, 'offsets keep their values, so the consumer sees gaps');
  if (javaDriverMissing() === undefined) javaConsumerSeesLatest(broker.bootstrap, latest);
  else if (process.env.CI === 'true') assert.fail(javaDriverMissing());
  return latest;
}

test('kcat sees the latest value of every key after Spool cleans a compacted topic', { timeout: 180_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const spool = await startSpool({
    overrides: ['num.partitions=1', 'log.cleanup.policy=compact', 'log.segment.bytes=16384', 'log.cleaner.backoff.ms=100'],
  });
  try {
    await scenario({ bootstrap: spool.bootstrap, dataDir: spool.dir, output: () => spool.output() });
  } finally {
    await spool.stop();
  }
});

test("the same scenario against Apache Kafka 4.4; Spool keeps cleaning Kafka's cleaned log, and Kafka recovers and serves what Spool cleaned", { timeout: 420_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh') ?? kafkaSkipReason();
  if (skip !== undefined) return t.skip(skip);
  const kafka = await startKafka({ extraConfig: ['log.cleaner.backoff.ms=100'] });
  const workDir = mkdtempSync(join(tmpdir(), 'spool-from-kafka-'));
  try {
    // Kafka 4 wants segment.bytes >= 1 MiB; internal.segment.bytes is its test-only way to small segments.
    const created = await runKafkaTool(TOOL.topics, [
      '--bootstrap-server', kafka.bootstrap, '--create', '--topic', TOPIC, '--partitions', '1',
      '--config', 'cleanup.policy=compact', '--config', 'internal.segment.bytes=16384',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const latest = await scenario({ bootstrap: kafka.bootstrap, dataDir: kafka.dataDir, output: () => '' });
    await kafka.stop({ keepDir: true });
    const spoolPartitionDir = await spoolKeepsCleaning(kafka.dataDir, workDir, latest);
    handBackToKafka(kafka.dataDir, spoolPartitionDir);
    const restarted = await startKafka({ dir: kafka.dir, port: kafka.port, extraConfig: ['log.cleaner.backoff.ms=100'] });
    try {
      assert.deepEqual(kcatLatest(restarted.bootstrap), latest, 'Kafka serves the log Spool cleaned');
      assert.match(readFileSync(join(kafka.dir, 'server.log'), 'utf8'), new RegExp(`Recovering unflushed segment \\d+[^\\n]*${TOPIC}-0`), 'Kafka recovered it');
    } finally {
      await restarted.stop();
    }
  } finally {
    await kafka.stop();
    rmSync(kafka.dir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  }
});
