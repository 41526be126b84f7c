/**
 * The cleaning pass, Kafka's test shape: N keys written M times with
 * tombstones mixed in. After cleaning every key's latest record is there at
 * its original offset, nothing else is added, each key appears once,
 * tombstones stay until delete.retention.ms after the pass that first saw
 * them and go at the next pass after that, the log end never moves, active
 * producers keep their last batch, and the first dirty offset is
 * checkpointed in Kafka's cleaner-offset-checkpoint format. With cleanup.policy=compact,delete
 * time retention and compaction both act.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { simEnv } from '../helpers.js';
import { LOG_DIR, TP, appendKeyed, compactConfig, latestByKey, newCleaner, openManager, readAll, type KeyedRecord } from './helpers.js';
import type { Log } from '../../../src/storage/log.js';
import { LogManager } from '../../../src/storage/log-manager.js';
import { dumpLogSegments } from '../../../src/storage/dump-log.js';
import { groupSegmentsBySize } from '../../../src/storage/cleaner/cleaner.js';

const KEYS = 40;
const ROUNDS = 10;

/** Writes every key ROUNDS times, four records a batch; in the last round every fifth key is deleted. */
async function writeVersions(log: Log, clockMs: () => number, options: { compression?: number } = {}): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (let first = 0; first < KEYS; first += 4) {
      const records: KeyedRecord[] = [];
      for (let key = first; key < first + 4; key++) {
        const deleted = round === ROUNDS - 1 && key % 5 === 0;
        records.push({ key: `key-${key}`, value: deleted ? null : `value-${key}-${round}` });
      }
      await appendKeyed(log, records, { timestampMs: clockMs(), ...(options.compression === undefined ? {} : { compression: options.compression }) });
    }
  }
  await log.roll();
}

describe('log cleaner: a cleaning pass', () => {
  for (const compression of [0, 1, 4]) {
    it(`keeps each key's latest record at its offset and drops the rest (codec ${compression})`, async () => {
      const env = simEnv();
      const manager = await openManager(env, compactConfig());
      const log = await manager.getOrCreateLog(TP);
      await writeVersions(log, () => env.clock.nowMs(), { compression });
      const before = await readAll(log);
      const endBefore = log.logEndOffset;
      const sizeBefore = log.sizeBytes;
      const cleaner = newCleaner(env, () => [manager]);

      assert.equal(await cleaner.cleanFilthiestLog(), true);

      const after = await readAll(log);
      assert.deepEqual(latestByKey(after.records), latestByKey(before.records));
      assert.equal(after.records.length, KEYS, 'one record per key (tombstones kept within delete.retention.ms)');
      const original = new Map(before.records.map((record) => [record.offset, record]));
      for (const record of after.records) assert.deepEqual(record, original.get(record.offset), `record at ${record.offset} changed`);
      assert.equal(log.logEndOffset, endBefore);
      assert.ok(log.sizeBytes < sizeBefore / 3, `size ${log.sizeBytes} not well below ${sizeBefore}`);
      assert.equal(await cleaner.cleanFilthiestLog(), false, 'nothing dirty is left');
    });
  }

  it('drops tombstones at the first pass after delete.retention.ms since the pass that saw them', async () => {
    const env = simEnv();
    const config = compactConfig({ deleteRetentionMs: 60_000, minCleanableDirtyRatio: 0.01 });
    const manager = await openManager(env, config);
    const log = await manager.getOrCreateLog(TP);
    await writeVersions(log, () => env.clock.nowMs());
    const cleaner = newCleaner(env, () => [manager]);
    await cleaner.cleanFilthiestLog();
    const tombstones = (await readAll(log)).records.filter((record) => record.value === null).length;
    assert.equal(tombstones, KEYS / 5);

    // Still inside delete.retention.ms: a new pass keeps them.
    env.clock.advance(30_000);
    await appendKeyed(log, [{ key: 'other', value: 'x' }], { timestampMs: env.clock.nowMs() });
    await log.roll();
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    assert.equal((await readAll(log)).records.filter((record) => record.value === null).length, KEYS / 5);

    env.clock.advance(30_001);
    await appendKeyed(log, [{ key: 'other', value: 'y' }], { timestampMs: env.clock.nowMs() });
    await log.roll();
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    const after = await readAll(log);
    assert.equal(after.records.filter((record) => record.value === null).length, 0);
    assert.equal(after.records.length, KEYS - KEYS / 5 + 1);
  });

  it('never cleans the active segment, nor below min.cleanable.dirty.ratio', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig({ segmentBytes: 1024 * 1024 }));
    const log = await manager.getOrCreateLog(TP);
    for (let round = 0; round < 5; round++) await appendKeyed(log, [{ key: 'k', value: `v${round}` }], { timestampMs: env.clock.nowMs() });
    const cleaner = newCleaner(env, () => [manager]);
    assert.equal(await cleaner.cleanFilthiestLog(), false, 'all in the active segment');
    await log.roll();
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    assert.deepEqual((await readAll(log)).records.map((record) => record.value), ['v4']);
    // Clean 1 record, dirty 1: a ratio of 0.5 is not above 0.5.
    await appendKeyed(log, [{ key: 'k', value: 'v5' }], { timestampMs: env.clock.nowMs() });
    await log.roll();
    assert.equal(await cleaner.cleanFilthiestLog(), false);
  });

  it('honours min.compaction.lag.ms and max.compaction.lag.ms', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig({ minCompactionLagMs: 60_000, minCleanableDirtyRatio: 0.99 }));
    const log = await manager.getOrCreateLog(TP);
    for (let round = 0; round < 5; round++) await appendKeyed(log, [{ key: 'k', value: `v${round}` }], { timestampMs: env.clock.nowMs() });
    await log.roll();
    const cleaner = newCleaner(env, () => [manager]);
    assert.equal(await cleaner.cleanFilthiestLog(), false, 'younger than min.compaction.lag.ms, and the ratio is not reached');
    env.clock.advance(60_001);
    log.updateConfig(compactConfig({ minCompactionLagMs: 60_000, minCleanableDirtyRatio: 0.99, maxCompactionLagMs: 60_000 }));
    assert.equal(await cleaner.cleanFilthiestLog(), true, 'max.compaction.lag.ms forces it despite the ratio');
    assert.deepEqual((await readAll(log)).records.map((record) => record.value), ['v4']);
  });

  it('cleanup.policy=compact,delete: time retention drops old segments, the cleaner compacts what is left; compact alone keeps them', async () => {
    const env = simEnv();
    const retentionMs = 60_000;
    const both = { topic: 'compact-delete', partition: 0 };
    const manager = await LogManager.open(env, {
      logDir: LOG_DIR,
      configFor: (tp) => compactConfig({ minCleanableDirtyRatio: 0.01, retentionMs, ...(tp.topic === both.topic ? { cleanupPolicy: ['compact', 'delete'] } : {}) }),
    });
    const logs = [await manager.getOrCreateLog(both), await manager.getOrCreateLog(TP)];
    for (const log of logs) {
      for (let key = 0; key < 10; key++) await appendKeyed(log, [{ key: `k${key}`, value: 'old' }], { timestampMs: env.clock.nowMs() });
      await log.roll();
    }
    env.clock.advance(retentionMs + 1);
    for (const log of logs) {
      for (let key = 0; key < 5; key++) await appendKeyed(log, [{ key: `k${key}`, value: 'new' }], { timestampMs: env.clock.nowMs() });
      await log.roll();
      await log.deleteOldSegments();
    }
    const cleaner = newCleaner(env, () => [manager]);
    while (await cleaner.cleanFilthiestLog());
    const valuesOf = async (log: Log) => Object.fromEntries([...latestByKey((await readAll(log)).records)].map(([key, record]) => [key, record.value]));
    const newOnly = { k0: 'new', k1: 'new', k2: 'new', k3: 'new', k4: 'new' };
    assert.deepEqual(await valuesOf(logs[0]!), newOnly, 'compact,delete: the segments past retention.ms are gone');
    assert.equal(logs[0]!.logStartOffset, 10);
    assert.deepEqual(await valuesOf(logs[1]!), { ...newOnly, k5: 'old', k6: 'old', k7: 'old', k8: 'old', k9: 'old' }, 'compact: only older versions go');
    assert.equal(logs[1]!.logStartOffset, 0);
    assert.equal((await readAll(logs[0]!)).records.length, 5, 'compacted too');
  });

  it("keeps an active producer's last batch (emptied) so its sequence survives", async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig());
    const log = await manager.getOrCreateLog(TP);
    await appendKeyed(log, [{ key: 'a', value: 'from-producer' }], { timestampMs: env.clock.nowMs(), producerId: 7, baseSequence: 0 });
    const producerBatchOffset = log.logEndOffset - 1;
    for (let round = 0; round < 5; round++) await appendKeyed(log, [{ key: 'a', value: `v${round}` }], { timestampMs: env.clock.nowMs() });
    await log.roll();
    const cleaner = newCleaner(env, () => [manager], { producers: new Map([[7, { lastDataOffset: producerBatchOffset, producerEpoch: 0 }]]) });
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    const after = await readAll(log);
    assert.deepEqual(after.records.map((record) => record.value), ['v4']);
    assert.deepEqual(after.batches[0], { baseOffset: producerBatchOffset, lastOffset: producerBatchOffset }, 'the empty producer batch is kept');
  });

  it('checkpoints the first dirty offset in cleaner-offset-checkpoint, in Kafka\'s format', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig());
    const log = await manager.getOrCreateLog(TP);
    await writeVersions(log, () => env.clock.nowMs());
    await newCleaner(env, () => [manager]).cleanFilthiestLog();
    const text = (await env.fs.readFile(`${LOG_DIR}/cleaner-offset-checkpoint`)).toString();
    assert.equal(text, `0\n1\ncompacted 0 ${log.activeSegment.baseOffset}\n`);
  });

  it('spool dump-log shows each compacted log\'s first dirty offset and dirty ratio from cleaner-offset-checkpoint', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig());
    const log = await manager.getOrCreateLog(TP);
    await writeVersions(log, () => env.clock.nowMs());
    const cleaner = newCleaner(env, () => [manager]);
    await cleaner.cleanFilthiestLog();
    const dump = async () => {
      const out: string[] = [];
      await dumpLogSegments(env.fs, { files: [`${LOG_DIR}/cleaner-offset-checkpoint`] }, { out: (line) => out.push(line), err: (line) => assert.fail(line) });
      return out;
    };
    const cleanBytes = log.sizeBytes - log.activeSegment.sizeBytes;
    assert.deepEqual(await dump(), [
      `Dumping ${LOG_DIR}/cleaner-offset-checkpoint`,
      `topic: ${TP.topic} partition: 0 firstDirtyOffset: ${log.activeSegment.baseOffset} cleanBytes: ${cleanBytes} dirtyBytes: 0 dirtyRatio: 0.000`,
    ]);
    const firstDirtyOffset = log.activeSegment.baseOffset;
    await writeVersions(log, () => env.clock.nowMs());
    const described = await cleaner.manager.describe(log, LOG_DIR, env.clock.nowMs());
    assert.ok(described !== null && described.cleanableRatio > 0.5);
    const dirtyBytes = log.sizeBytes - log.activeSegment.sizeBytes - cleanBytes;
    assert.deepEqual((await dump())[1], `topic: ${TP.topic} partition: 0 firstDirtyOffset: ${firstDirtyOffset} cleanBytes: ${cleanBytes} dirtyBytes: ${dirtyBytes} dirtyRatio: ${described.cleanableRatio.toFixed(3)}`, 'the ratio the cleaner computes');
  });

  it('reconfigure restarts the cleaner loops with the new settings (AlterConfigs of log.cleaner.*)', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig());
    const log = await manager.getOrCreateLog(TP);
    const checkpointed = async () => {
      if ((await env.fs.stat(`${LOG_DIR}/cleaner-offset-checkpoint`)) === null) return 0;
      return Number((await env.fs.readFile(`${LOG_DIR}/cleaner-offset-checkpoint`)).toString().trim().split(/\s+/).at(-1));
    };
    /** Event-loop turns until the checkpoint reaches `offset` (the simulated clock never moves: no timer can fire). */
    const checkpointReaches = async (offset: number) => {
      for (let turn = 0; turn < 10_000 && (await checkpointed()) < offset; turn++) await new Promise((resolve) => setImmediate(resolve));
      return checkpointed();
    };
    const cleaner = newCleaner(env, () => [manager], { config: { backoffMs: 86_400_000 } });
    await writeVersions(log, () => env.clock.nowMs());
    cleaner.startup();
    assert.equal(await checkpointReaches(log.activeSegment.baseOffset), log.activeSegment.baseOffset, 'the first loop turn cleans');
    const firstPass = log.activeSegment.baseOffset;
    await writeVersions(log, () => env.clock.nowMs());
    assert.equal(await checkpointReaches(log.activeSegment.baseOffset), firstPass, 'the loop sleeps log.cleaner.backoff.ms (a day) before looking again');
    await cleaner.reconfigure({ ...cleaner.config, backoffMs: 100, threads: 2 });
    assert.equal(cleaner.config.threads, 2);
    assert.equal(await checkpointReaches(log.activeSegment.baseOffset), log.activeSegment.baseOffset, 'restarted loops clean at once');
    await cleaner.shutdown();
  });

  it('recopies segments in groups bounded by segment.bytes and segment.index.bytes (Kafka\'s groupSegmentsBySize)', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig({ segmentBytes: 1024, indexIntervalBytes: 64 }));
    const log = await manager.getOrCreateLog(TP);
    await writeVersions(log, () => env.clock.nowMs());
    const segments = log.logSegments.slice(0, -1);
    const groupCounts: number[] = [];
    for (const segmentIndexBytes of [10 * 1024 * 1024, 40]) {
      const groups = groupSegmentsBySize(segments, { segmentBytes: 2500, segmentIndexBytes, firstUncleanableOffset: log.activeSegment.baseOffset });
      assert.deepEqual(groups.flat(), segments, 'every segment once, in order');
      for (const group of groups) {
        const sum = (size: (segment: (typeof group)[number]) => number) => group.reduce((total, segment) => total + size(segment), 0);
        if (group.length === 1) continue;
        assert.ok(sum((segment) => segment.sizeBytes) <= 2500);
        assert.ok(sum((segment) => segment.offsetIndex.sizeBytes) <= segmentIndexBytes);
        assert.ok(sum((segment) => segment.timeIndex.sizeBytes) <= segmentIndexBytes);
      }
      groupCounts.push(groups.length);
    }
    assert.ok(groupCounts[0]! < segments.length, 'small segments are merged');
    assert.ok(groupCounts[1]! > groupCounts[0]!, 'a smaller segment.index.bytes makes smaller groups');
  });

  it('bounds a pass by log.cleaner.dedupe.buffer.size and finishes the log in later passes', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig({ minCleanableDirtyRatio: 0.01 }));
    const log = await manager.getOrCreateLog(TP);
    await writeVersions(log, () => env.clock.nowMs());
    const before = await readAll(log);
    // 24 bytes a slot: 30 slots, 27 keys a pass at load factor 0.9.
    const cleaner = newCleaner(env, () => [manager], { config: { dedupeBufferBytes: 30 * 24 } });
    let passes = 0;
    while (await cleaner.cleanFilthiestLog()) passes++;
    assert.ok(passes > 1, `${passes} pass(es)`);
    const after = await readAll(log);
    assert.deepEqual(latestByKey(after.records), latestByKey(before.records));
  });
});
