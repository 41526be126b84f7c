/**
 * Compaction seen by a real client: kcat (librdkafka) produces many versions
 * of a few hundred keys, with tombstones, into a compacted topic of a real
 * Spool process (tiny segments, a cleaner that backs off 100 ms); once the
 * broker's cleaner-offset-checkpoint shows a pass over the topic, kcat reads
 * it from the beginning and sees every key's latest value (tombstones as
 * NULL), each key once in the cleaned part, original offsets with gaps, and
 * far fewer records than were produced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasCommand } from './harness.js';
import { missingToolSkip } from './scenario.js';
import { startSpool } from './spool-process.js';

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

test('kcat sees the latest value of every key after Spool cleans a compacted topic', { timeout: 180_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const spool = await startSpool({
    overrides: ['num.partitions=1', 'log.cleanup.policy=compact', 'log.segment.bytes=16384', 'log.cleaner.backoff.ms=100'],
  });
  try {
    const { lines, latest } = producedLines();
    kcat(['-P', '-b', spool.bootstrap, '-t', TOPIC, '-p', '0', '-K', ':', '-Z', '-X', 'enable.idempotence=true', '-X', 'batch.size=2048'], lines);
    const produced = KEYS * VERSIONS;
    const deadline = Date.now() + CHECKPOINT_WAIT_MS;
    while (checkpointedOffset(spool.dir) < produced / 2) {
      assert.ok(Date.now() < deadline, `no cleaning pass within ${CHECKPOINT_WAIT_MS} ms:\n${spool.output()}`);
      await sleep(100);
    }
    const cleanedUpTo = checkpointedOffset(spool.dir);
    const out = kcat(['-C', '-b', spool.bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-Z', '-f', '%o\t%k\t%S\t%s\n']);
    const records = out.trim().split('\n').map((line) => {
      const [offset, key, size, value] = line.split('\t');
      return { offset: Number(offset), key: key!, value: Number(size) < 0 ? null : value! };
    });
    const seen = new Map<string, string | null>();
    for (const record of records) seen.set(record.key, record.value);
    assert.deepEqual(seen, latest, 'the latest value of every key');
    const cleanedKeys = records.filter((record) => record.offset < cleanedUpTo).map((record) => record.key);
    assert.equal(new Set(cleanedKeys).size, cleanedKeys.length, 'each key at most once below the cleaned offset');
    assert.ok(records.length < produced / 4, `${records.length} of ${produced} records are still there`);
    assert.equal(records.at(-1)!.offset, produced - 1, 'the last offset is unchanged');
    const contiguousFromZero = records.every((record, index) => record.offset === index);
    assert.ok(!contiguousFromZero, 'offsets keep their values, so the consumer sees gaps');
  } finally {
    await spool.stop();
  }
});
