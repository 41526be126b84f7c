/**
 * Log: appends assign offsets by rewriting headers, reads return byte ranges
 * bounded by maxBytes and maxOffset, segments roll on size / time / full
 * index, truncation, log start offset, leader epochs and flush policy.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readBatchHeader } from '../../src/protocol/records/batch.js';
import { decodeRecords } from '../../src/protocol/records/records.js';
import { KafkaStorageError, OffsetOutOfRangeError, InvalidRecordError, RecordBatchTooLargeError, UnexpectedAppendOffsetError } from '../../src/storage/errors.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from '../../src/storage/log.js';
import { BASE_TIMESTAMP_MS, DIR, batchWithTimestamps, headersOf, makeBatch, openLog, readAllBatches, simEnv } from './helpers.js';

describe('Log append', () => {
  it('assigns offsets from the log end and stamps the leader epoch in the caller buffer', async () => {
    const env = simEnv();
    const log = await openLog(env);
    const first = makeBatch({ count: 3 });
    const info = await log.append(first, { leaderEpoch: 5, assignOffsets: true });
    assert.equal(info.firstOffset, 0);
    assert.equal(info.lastOffset, 2);
    assert.equal(info.recordCount, 3);
    const second = Buffer.concat([makeBatch({ count: 2 }), makeBatch({ count: 4 })]);
    const info2 = await log.append(second, { leaderEpoch: 5, assignOffsets: true });
    assert.deepEqual([info2.firstOffset, info2.lastOffset, info2.batchCount], [3, 8, 2]);
    assert.equal(log.logEndOffset, 9);
    const headers = headersOf(second);
    assert.deepEqual(headers.map((h) => [h.baseOffset, h.partitionLeaderEpoch]), [[3, 5], [5, 5]]);
    assert.deepEqual(log.leaderEpochCache.epochEntries, [{ epoch: 5, startOffset: 0 }]);
  });

  it('reports the max timestamp and the batch holding it', async () => {
    const log = await openLog(simEnv());
    const records = Buffer.concat([batchWithTimestamps([10, 50]), batchWithTimestamps([40, 30])]);
    const info = await log.append(records, { leaderEpoch: 0, assignOffsets: true });
    assert.equal(info.maxTimestamp, 50);
    assert.equal(info.offsetOfMaxTimestamp, 1);
  });

  it('rejects a batch with a bad CRC and appends nothing', async () => {
    const log = await openLog(simEnv());
    const batch = makeBatch({ count: 2 });
    batch[batch.length - 1]! ^= 0xff;
    await assert.rejects(log.append(batch, { leaderEpoch: 0, assignOffsets: true }), InvalidRecordError);
    assert.equal(log.logEndOffset, 0);
  });

  it('rejects trailing bytes that do not form a batch', async () => {
    const log = await openLog(simEnv());
    const records = Buffer.concat([makeBatch({}), Buffer.alloc(20)]);
    await assert.rejects(log.append(records, { leaderEpoch: 0, assignOffsets: true }), InvalidRecordError);
  });

  it('rejects an append larger than segment.bytes', async () => {
    const log = await openLog(simEnv(), { segmentBytes: 200 });
    await assert.rejects(log.append(makeBatch({ count: 5, valueBytes: 100 }), { leaderEpoch: 0, assignOffsets: true }), RecordBatchTooLargeError);
  });

  it('keeps the offsets of replicated batches and rejects ones below the log end', async () => {
    const log = await openLog(simEnv());
    const replicated = Buffer.concat([makeBatch({ count: 2, baseOffset: 10, partitionLeaderEpoch: 3 }), makeBatch({ count: 1, baseOffset: 20, partitionLeaderEpoch: 4 })]);
    const info = await log.append(replicated, { leaderEpoch: -1, assignOffsets: false });
    assert.deepEqual([info.firstOffset, info.lastOffset], [10, 20]);
    assert.equal(log.logEndOffset, 21);
    assert.deepEqual(log.leaderEpochCache.epochEntries, [
      { epoch: 3, startOffset: 10 },
      { epoch: 4, startOffset: 20 },
    ]);
    await assert.rejects(log.append(makeBatch({ baseOffset: 15 }), { leaderEpoch: -1, assignOffsets: false }), UnexpectedAppendOffsetError);
  });

  it('stamps LogAppendTime when the topic asks for it', async () => {
    const env = simEnv();
    const log = await openLog(env, { messageTimestampType: 'LogAppendTime' });
    const batch = makeBatch({ count: 2, timestampMs: 5 });
    const info = await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
    assert.equal(info.logAppendTimeMs, env.clock.nowMs());
    const read = await log.read(0, { maxBytes: 10_000 });
    const decoded = decodeRecords(read.records);
    assert.equal(decoded.error, null);
    assert.deepEqual(decoded.records!.map((r) => r.timestamp), [env.clock.nowMs(), env.clock.nowMs()]);
  });
});

describe('Log read', () => {
  async function logWithBatches(count: number, config = {}) {
    const env = simEnv();
    const log = await openLog(env, config);
    for (let i = 0; i < count; i++) await log.append(makeBatch({ count: 2, valueBytes: 50 }), { leaderEpoch: 0, assignOffsets: true });
    return { env, log };
  }

  it('returns the batch holding the offset, as stored', async () => {
    const { log } = await logWithBatches(10);
    const result = await log.read(7, { maxBytes: 1 << 20 });
    const headers = headersOf(result.records);
    assert.equal(headers[0]!.baseOffset, 6);
    assert.equal(result.firstBatchBaseOffset, 6);
    assert.equal(headers.at(-1)!.lastOffset, 19);
  });

  it('never returns more than maxBytes, and may end with a partial batch', async () => {
    const { log } = await logWithBatches(10);
    const batchBytes = readBatchHeader((await log.read(0, { maxBytes: 1 << 20 })).records, 0).sizeBytes;
    const result = await log.read(0, { maxBytes: batchBytes * 2 + 10 });
    assert.equal(result.records.length, batchBytes * 2 + 10);
    assert.equal(headersOf(result.records).length, 2);
  });

  it('returns the first batch whole with minOneMessage, nothing without it', async () => {
    const { log } = await logWithBatches(3);
    const small = await log.read(0, { maxBytes: 10 });
    assert.equal(small.records.length, 10);
    assert.equal(small.firstEntryIncomplete, true);
    const whole = await log.read(0, { maxBytes: 10, minOneMessage: true });
    assert.equal(headersOf(whole.records).length, 1);
    assert.equal(whole.firstEntryIncomplete, false);
  });

  it('stops before maxOffset (a high watermark) even inside one segment', async () => {
    const { log } = await logWithBatches(10);
    const result = await log.read(0, { maxBytes: 1 << 20, maxOffset: 8 });
    const headers = headersOf(result.records);
    assert.equal(headers.at(-1)!.lastOffset, 7);
    assert.equal(result.records.length, headers.reduce((sum, h) => sum + h.sizeBytes, 0));
    assert.equal((await log.read(8, { maxBytes: 100, maxOffset: 8 })).records.length, 0);
  });

  it('throws OffsetOutOfRange below the log start and past the log end; empty at the end', async () => {
    const { log } = await logWithBatches(2);
    await assert.rejects(log.read(5, { maxBytes: 100 }), OffsetOutOfRangeError);
    assert.equal((await log.read(4, { maxBytes: 100 })).records.length, 0);
    log.updateHighWatermark(4);
    await log.deleteRecordsBefore(2);
    await assert.rejects(log.read(1, { maxBytes: 100 }), OffsetOutOfRangeError);
    assert.equal(headersOf((await log.read(2, { maxBytes: 1000 })).records)[0]!.baseOffset, 2);
  });

  it('reads across rolled segments', async () => {
    const { log } = await logWithBatches(30, { segmentBytes: 600 });
    assert.ok(log.logSegments.length > 5, `segments: ${log.logSegments.length}`);
    const headers = await readAllBatches(log);
    assert.deepEqual(headers.map((h) => h.baseOffset), Array.from({ length: 30 }, (_, i) => i * 2));
    for (const segment of log.logSegments) assert.ok(segment.sizeBytes <= 600);
  });
});

describe('Log roll', () => {
  it('rolls when segment.ms has passed since the first batch timestamp', async () => {
    const env = simEnv();
    const log = await openLog(env, { segmentMs: 1000 });
    await log.append(makeBatch({ timestampMs: BASE_TIMESTAMP_MS }), { leaderEpoch: 0, assignOffsets: true });
    await log.append(makeBatch({ timestampMs: BASE_TIMESTAMP_MS + 1000 }), { leaderEpoch: 0, assignOffsets: true });
    assert.equal(log.logSegments.length, 1);
    await log.append(makeBatch({ timestampMs: BASE_TIMESTAMP_MS + 1001 }), { leaderEpoch: 0, assignOffsets: true });
    assert.deepEqual(log.logSegments.map((s) => s.baseOffset), [0, 2]);
  });

  it('rolls when the offset index is full (segment.index.bytes)', async () => {
    const log = await openLog(simEnv(), { segmentIndexBytes: 16, indexIntervalBytes: 1 });
    for (let i = 0; i < 10; i++) await log.append(makeBatch({}), { leaderEpoch: 0, assignOffsets: true });
    assert.ok(log.logSegments.length >= 3);
    for (const segment of log.logSegments) assert.ok(segment.offsetIndex.entries <= 2);
    assert.equal((await readAllBatches(log)).length, 10);
  });

  it('creates files with Kafka names and flushes the rolled segment, advancing the recovery point', async () => {
    const env = simEnv();
    const log = await openLog(env, { segmentBytes: 300 });
    for (let i = 0; i < 6; i++) await log.append(makeBatch({ valueBytes: 100 }), { leaderEpoch: 0, assignOffsets: true });
    await log.flush(0); // waits for the background roll flushes queued before it
    const names = await env.fs.readdir(DIR);
    assert.ok(names.includes('00000000000000000000.log'));
    assert.ok(names.includes('00000000000000000000.index'));
    assert.ok(names.includes('00000000000000000000.timeindex'));
    assert.equal(log.recoveryPoint, log.activeSegment.baseOffset);
  });
});

describe('Log truncation and log start', () => {
  async function logWith(batches: number, config = {}) {
    const env = simEnv();
    const log = await openLog(env, config);
    for (let i = 0; i < batches; i++) await log.append(makeBatch({ count: 2, valueBytes: 60 }), { leaderEpoch: i < 5 ? 1 : 2, assignOffsets: true });
    return { env, log };
  }

  it('truncateTo removes whole batches from the target on, across segments', async () => {
    const { log } = await logWith(20, { segmentBytes: 500 });
    log.updateHighWatermark(40);
    assert.equal(await log.truncateTo(13), true);
    assert.equal(log.logEndOffset, 12);
    assert.equal(log.highWatermark, 12);
    assert.equal((await readAllBatches(log)).at(-1)!.lastOffset, 11);
    assert.deepEqual(log.leaderEpochCache.epochEntries, [{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 10 }]);
    await log.truncateTo(9);
    assert.deepEqual(log.leaderEpochCache.epochEntries, [{ epoch: 1, startOffset: 0 }]);
    const info = await log.append(makeBatch({}), { leaderEpoch: 3, assignOffsets: true });
    assert.equal(info.firstOffset, 8);
  });

  it('truncateTo at the log end drops an epoch begun there without records (regression: a follower looping on a diverging epoch)', async () => {
    // Bug: a replica that became leader at epoch 3 (cache entry at the log end) but appended nothing, then followed
    // the new leader, kept fetching with last epoch 3; the leader answered "diverging, epoch 2 ends at 20" for ever,
    // because truncating to the log end returned early and left the epoch-3 entry (found by test/fault/).
    const { log } = await logWith(10);
    assert.equal(log.leaderEpochCache.assign(3, log.logEndOffset), true);
    assert.deepEqual(log.leaderEpochCache.epochEntries.at(-1), { epoch: 3, startOffset: 20 });
    assert.equal(await log.truncateTo(20), false, 'no record removed');
    assert.equal(log.logEndOffset, 20);
    assert.deepEqual(log.leaderEpochCache.epochEntries, [{ epoch: 1, startOffset: 0 }, { epoch: 2, startOffset: 10 }]);
    assert.deepEqual(log.endOffsetForEpoch(2), { leaderEpoch: 2, endOffset: 20 });
  });

  it('truncateFullyAndStartAt empties the log at a new offset', async () => {
    const { env, log } = await logWith(10, { segmentBytes: 500 });
    await log.truncateFullyAndStartAt(1000);
    assert.deepEqual([log.logStartOffset, log.logEndOffset, log.logSegments.length], [1000, 1000, 1]);
    const info = await log.append(makeBatch({}), { leaderEpoch: 0, assignOffsets: true });
    assert.equal(info.firstOffset, 1000);
    const names = await env.fs.readdir(DIR);
    assert.ok(names.some((n) => n.endsWith('.log.deleted')));
    env.clock.advance(log.config.fileDeleteDelayMs);
    await log.awaitPendingDeletes();
    assert.ok(!(await env.fs.readdir(DIR)).some((n) => n.endsWith('.deleted')));
  });

  it('deleteRecordsBefore moves the log start offset up to the high watermark only', async () => {
    const { log } = await logWith(10);
    log.updateHighWatermark(10);
    assert.equal(await log.deleteRecordsBefore(7), 7);
    await assert.rejects(log.deleteRecordsBefore(11), OffsetOutOfRangeError);
    assert.equal(log.logStartOffset, 7);
    assert.equal((await log.fetchOffsetByTimestamp(EARLIEST_TIMESTAMP))!.offset, 7);
  });
});

describe('Log lookups', () => {
  it('finds offsets by timestamp, latest and max timestamp', async () => {
    const log = await openLog(simEnv(), { indexIntervalBytes: 1 });
    await log.append(batchWithTimestamps([100, 200, 300]), { leaderEpoch: 0, assignOffsets: true });
    await log.append(batchWithTimestamps([250, 900, 400]), { leaderEpoch: 1, assignOffsets: true });
    await log.append(batchWithTimestamps([500, 600]), { leaderEpoch: 1, assignOffsets: true });
    assert.equal((await log.fetchOffsetByTimestamp(150))!.offset, 1);
    assert.equal((await log.fetchOffsetByTimestamp(250))!.offset, 2);
    assert.equal((await log.fetchOffsetByTimestamp(301))!.offset, 4);
    assert.equal((await log.fetchOffsetByTimestamp(450))!.offset, 4);
    assert.equal((await log.fetchOffsetByTimestamp(901)), null);
    const max = (await log.fetchOffsetByTimestamp(MAX_TIMESTAMP))!;
    assert.deepEqual([max.timestamp, max.offset, max.leaderEpoch], [900, 4, 1]);
    assert.equal((await log.fetchOffsetByTimestamp(LATEST_TIMESTAMP))!.offset, 8);
  });

  it('answers OffsetForLeaderEpoch from the epoch cache', async () => {
    const log = await openLog(simEnv());
    await log.append(makeBatch({ count: 3 }), { leaderEpoch: 1, assignOffsets: true });
    await log.append(makeBatch({ count: 3 }), { leaderEpoch: 4, assignOffsets: true });
    assert.deepEqual(log.endOffsetForEpoch(1), { leaderEpoch: 1, endOffset: 3 });
    assert.deepEqual(log.endOffsetForEpoch(2), { leaderEpoch: 1, endOffset: 3 });
    assert.deepEqual(log.endOffsetForEpoch(4), { leaderEpoch: 4, endOffset: 6 });
    assert.deepEqual(log.endOffsetForEpoch(0), { leaderEpoch: 0, endOffset: 0 });
    assert.deepEqual(log.endOffsetForEpoch(5), { leaderEpoch: -1, endOffset: -1 });
  });
});

describe('Log durability', () => {
  it('flush.messages fsyncs once that many messages are unflushed', async () => {
    const env = simEnv();
    const log = await openLog(env, { flushMessages: 3 });
    await log.append(makeBatch({ count: 2 }), { leaderEpoch: 0, assignOffsets: true });
    assert.equal(log.recoveryPoint, 0);
    await log.append(makeBatch({ count: 1 }), { leaderEpoch: 0, assignOffsets: true });
    assert.equal(log.recoveryPoint, 3);
    env.fs.crash();
    const reopened = await openLog(env, {}, { recoveryPoint: 0 });
    assert.equal(reopened.logEndOffset, 3);
  });

  it('flush.ms fsyncs through the timers seam', async () => {
    const env = simEnv();
    const log = await openLog(env, { flushMs: 500 });
    await log.append(makeBatch({ count: 2 }), { leaderEpoch: 0, assignOffsets: true });
    assert.equal(log.recoveryPoint, 0);
    env.clock.advance(500);
    await log.flush(0);
    assert.equal(log.recoveryPoint, 2);
  });

  it('a disk-full append fails with KafkaStorageError, leaves a valid prefix and takes the log offline', async () => {
    const env = simEnv();
    const log = await openLog(env);
    await log.append(makeBatch({ count: 2, valueBytes: 100 }), { leaderEpoch: 0, assignOffsets: true });
    env.fs.setCapacityBytes(env.fs.usedBytes() + 50);
    await assert.rejects(log.append(makeBatch({ count: 2, valueBytes: 100 }), { leaderEpoch: 0, assignOffsets: true }), KafkaStorageError);
    assert.equal(log.isOffline, true);
    assert.equal(log.logEndOffset, 2);
    await assert.rejects(log.read(0, { maxBytes: 100 }), KafkaStorageError);
    env.fs.setCapacityBytes(null);
    await log.closeUncleanly();
    const reopened = await openLog(env);
    assert.equal(reopened.logEndOffset, 2);
    assert.equal((await readAllBatches(reopened)).length, 1);
  });

  it('an fsync failure takes the log offline without raising the recovery point; restart keeps the prefix', async () => {
    const env = simEnv();
    const log = await openLog(env);
    await log.append(makeBatch({ count: 2 }), { leaderEpoch: 0, assignOffsets: true });
    await log.flush();
    await log.append(makeBatch({ count: 3 }), { leaderEpoch: 0, assignOffsets: true });
    env.fs.injectFault({ operation: 'sync', code: 'EIO', pathIncludes: '.log' });
    await assert.rejects(log.flush(), KafkaStorageError);
    assert.equal(log.isOffline, true);
    assert.equal(log.recoveryPoint, 2);
    await assert.rejects(log.append(makeBatch({}), { leaderEpoch: 0, assignOffsets: true }), KafkaStorageError);
    env.fs.crash({ keepUnsyncedPrefix: true });
    const reopened = await openLog(env, {}, { recoveryPoint: 2 });
    assert.ok(reopened.logEndOffset === 2 || reopened.logEndOffset === 5);
    assert.equal((await readAllBatches(reopened)).length, reopened.logEndOffset === 2 ? 1 : 2);
  });
});
