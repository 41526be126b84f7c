/**
 * Retention (cleanup.policy=delete): retention.ms and retention.bytes drop
 * whole segments from the oldest, never the active segment nor data at or
 * above the high watermark; dropped segments are renamed `.deleted` and
 * removed after file.delete.delay.ms; the log start offset follows.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIR, makeBatch, openLog, readAllBatches, simEnv } from './helpers.js';

async function filledLog(config: Record<string, unknown>, batches = 20) {
  const env = simEnv();
  const log = await openLog(env, { segmentBytes: 600, ...config });
  for (let i = 0; i < batches; i++) {
    await log.append(makeBatch({ count: 2, valueBytes: 60, timestampMs: env.clock.nowMs() }), { leaderEpoch: 0, assignOffsets: true });
    env.clock.advance(1000);
  }
  log.updateHighWatermark(log.logEndOffset);
  return { env, log };
}

describe('retention', () => {
  it('retention.ms deletes segments whose newest record is older, and moves the log start offset', async () => {
    const { env, log } = await filledLog({ retentionMs: 10_500 });
    const before = log.logSegments.map((s) => s.baseOffset);
    const deleted = await log.deleteOldSegments();
    assert.ok(deleted > 0);
    const first = log.logSegments[0]!;
    assert.equal(log.logStartOffset, first.baseOffset);
    assert.ok(env.clock.nowMs() - first.maxTimestampSoFar <= 10_500);
    assert.deepEqual(log.logSegments.map((s) => s.baseOffset), before.slice(deleted));
    assert.equal((await readAllBatches(log))[0]!.baseOffset, log.logStartOffset);
  });

  it('retention.bytes deletes the oldest segments while the log is over the limit', async () => {
    const { log } = await filledLog({ retentionBytes: 1500 });
    await log.deleteOldSegments();
    assert.ok(log.sizeBytes <= 1500 + log.logSegments[0]!.sizeBytes);
    const smaller = log.sizeBytes - log.logSegments[0]!.sizeBytes;
    assert.ok(smaller < 1500, 'stops as soon as one more deletion would go below the limit');
  });

  it('never deletes the active segment, nor segments not below the high watermark', async () => {
    const { env, log } = await filledLog({ retentionMs: 1 });
    log.updateHighWatermark(log.logSegments[2]!.baseOffset);
    await log.deleteOldSegments();
    assert.equal(log.logSegments[0]!.baseOffset, log.logStartOffset);
    assert.equal(log.logSegments.length >= 2, true);
    log.updateHighWatermark(log.logEndOffset);
    env.clock.advance(100_000);
    await log.deleteOldSegments();
    assert.equal(log.logSegments.length, 1, 'only the active segment is left');
    assert.ok(log.activeSegment.sizeBytes > 0);
  });

  it('deleted segments are renamed .deleted and removed after file.delete.delay.ms', async () => {
    const { env, log } = await filledLog({ retentionBytes: 0, fileDeleteDelayMs: 30_000 });
    await log.deleteOldSegments();
    const names = await env.fs.readdir(DIR);
    assert.ok(names.includes('00000000000000000000.log.deleted'));
    assert.ok(names.includes('00000000000000000000.index.deleted'));
    env.clock.advance(29_999);
    await log.awaitPendingDeletes();
    assert.ok((await env.fs.readdir(DIR)).includes('00000000000000000000.log.deleted'));
    env.clock.advance(1);
    await log.awaitPendingDeletes();
    assert.ok(!(await env.fs.readdir(DIR)).some((name) => name.endsWith('.deleted')));
  });

  it('.deleted leftovers are removed when the log is loaded', async () => {
    const { env, log } = await filledLog({ retentionBytes: 0 });
    await log.deleteOldSegments();
    await log.close();
    const reopened = await openLog(env, { segmentBytes: 600 }, { hadCleanShutdown: true, logStartOffset: log.logStartOffset });
    assert.ok(!(await env.fs.readdir(DIR)).some((name) => name.endsWith('.deleted')));
    assert.equal(reopened.logStartOffset, log.logStartOffset);
  });

  it('DeleteRecords below a segment boundary lets the next pass drop whole segments, even with cleanup.policy=compact', async () => {
    const { log } = await filledLog({ cleanupPolicy: ['compact'], retentionMs: 1 });
    const third = log.logSegments[2]!.baseOffset;
    await log.deleteRecordsBefore(third + 1);
    assert.equal(await log.deleteOldSegments(), 2);
    assert.equal(log.logStartOffset, third + 1);
    assert.equal(log.logSegments[0]!.baseOffset, third);
  });
});
