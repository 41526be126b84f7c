/**
 * Segments Spool cleaned, read by Apache Kafka 4.4.0's own code: a compacted
 * log on the real file system (every codec, tombstones, 8 KiB segments) is
 * cleaned twice by Spool (the first pass gives tombstone batches their
 * delete horizon, KIP-534) and shut down cleanly. Kafka's FileRecords
 * (java/DumpRecords) decodes the directory whole, CRCs checked, to exactly
 * the records Spool serves at their offsets; DumpLogSegments finds nothing
 * wrong with the indexes; and `spool dump-log` prints what DumpLogSegments
 * prints for the cleaned files, line for line (deleteHorizonMs included).
 *
 * Needs the Kafka jars from test/interop/kafka/setup.sh; skipped without
 * them (failing under CI=true, as kafka-compat.test.ts does).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../../src/io/env.js';
import { dumpLogSegments } from '../../../src/storage/dump-log.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../../interop/kafka/kafka.js';
import { parseDumpRecords } from '../../interop/kafka/records.js';
import { appendKeyed, compactConfig, newCleaner, readAll } from './helpers.js';

const TP = { topic: 'cleaned', partition: 0 };
const KEYS = 30;
const ROUNDS = 8;
const CODECS = [0, 1, 2, 3, 4];

const skipReason = kafkaSkipReason();

async function runTool(mainClass: string, args: readonly string[]): Promise<string> {
  const result = await runKafkaTool(mainClass, args);
  assert.equal(result.code, 0, `${mainClass} failed: ${result.stderr}`);
  return result.stdout;
}

describe('segments cleaned by Spool, read by Apache Kafka 4.4.0', { skip: skipReason ?? false }, () => {
  const workDir = mkdtempSync(join(tmpdir(), 'spool-cleaned-compat-'));
  after(() => rmSync(workDir, { recursive: true, force: true }));

  it("Kafka's FileRecords and DumpLogSegments read a log Spool cleaned; spool dump-log prints the same", async () => {
    const logDir = join(workDir, 'logs');
    const config = compactConfig({ segmentBytes: 8192, indexIntervalBytes: 1024, minCleanableDirtyRatio: 0.01, fileDeleteDelayMs: 0 });
    const manager = await LogManager.open(realEnv, { logDir, configFor: () => config });
    const log = await manager.getOrCreateLog(TP);
    const cleaner = newCleaner(realEnv, () => [manager]);
    for (let round = 0; round < ROUNDS; round++) {
      for (let first = 0; first < KEYS; first += 3) {
        const records = [first, first + 1, first + 2].map((key) => ({ key: `key-${key}`, value: round === ROUNDS - 1 && key % 4 === 0 ? null : `value-${key}-${round}` }));
        await appendKeyed(log, records, { timestampMs: Date.now(), compression: CODECS[(round + first) % CODECS.length]! });
      }
      await log.roll();
      if (round >= ROUNDS - 2) assert.equal(await cleaner.cleanFilthiestLog(), true);
    }
    const served = (await readAll(log)).records;
    await log.awaitPendingDeletes();
    await manager.close();
    const partitionDir = join(logDir, `${TP.topic}-${TP.partition}`);

    const view = parseDumpRecords(await runTool(TOOL.dumpRecords, [partitionDir]));
    for (const segment of view.segments) assert.equal(segment.validBytes, segment.fileBytes, `segment ${segment.segmentBaseOffset} is whole`);
    const decoded = view.batches.flatMap((batch) =>
      batch.records.map((record) => ({ offset: record.offset, key: record.key?.toString() ?? null, value: record.value?.toString() ?? null })),
    );
    assert.deepEqual(decoded, served);

    const files = readdirSync(partitionDir)
      .filter((name) => /\.(log|index|timeindex)$/.test(name))
      .sort()
      .map((name) => join(partitionDir, name));
    for (const flags of [[], ['--deep-iteration'], ['--index-sanity-check']]) {
      const kafka = await runKafkaTool(TOOL.dumpLog, ['--files', files.join(','), ...flags]);
      assert.equal(kafka.code, 0, kafka.stderr);
      const out: string[] = [];
      const err: string[] = [];
      await dumpLogSegments(realEnv.fs, { files, deepIteration: flags.includes('--deep-iteration'), indexSanityCheck: flags.includes('--index-sanity-check') }, { out: (line) => out.push(line), err: (line) => err.push(line) });
      assert.deepEqual(out, lines(kafka.stdout), `spool dump-log ${flags.join(' ')}`);
      // The only finding is the one Kafka reports for any compacted log read record by record: the gaps in offsets.
      assert.deepEqual(err, lines(kafka.stderr), `spool dump-log ${flags.join(' ')} findings`);
      if (flags.includes('--deep-iteration')) assert.match(kafka.stderr, /^Non-consecutive offsets in \S+00000000000000000000\.log\n/);
      else assert.equal(kafka.stderr.trim(), '', `DumpLogSegments ${flags.join(' ')} reports a problem`);
    }
    assert.ok(kafkaDumpHasDeleteHorizon(await runTool(TOOL.dumpLog, ['--files', files.filter((file) => file.endsWith('.log')).join(',')])));
  });
});

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** True when some batch carries a delete horizon (a kept tombstone after a pass). */
function kafkaDumpHasDeleteHorizon(stdout: string): boolean {
  return /deleteHorizonMs: OptionalLong\[\d+\]/.test(stdout);
}
