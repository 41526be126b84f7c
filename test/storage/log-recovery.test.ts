/**
 * Recovery and index trust: a torn tail, a zeroed or garbage region, a
 * truncated, missing, disordered or stale index are all repaired on load
 * (the log keeps the valid prefix, indexes are rebuilt and lookups agree),
 * while a clean shutdown reopens without scanning the data.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BATCH_FIELD, BATCH_HEADER_BYTES, writeCrc } from '../../src/protocol/records/batch.js';
import { DIR, type SimEnv, makeBatch, openLog, readAllBatches, simEnv } from './helpers.js';

const CONFIG = { segmentBytes: 2000, indexIntervalBytes: 100 };
const SEGMENT0_LOG = `${DIR}/00000000000000000000.log`;
const SEGMENT0_INDEX = `${DIR}/00000000000000000000.index`;
const SEGMENT0_TIMEINDEX = `${DIR}/00000000000000000000.timeindex`;

/** A log of 40 two-record batches of ~130 bytes, several segments, everything flushed and cleanly closed. */
async function cleanLog(): Promise<{ env: SimEnv; batchBytes: number }> {
  const env = simEnv(11);
  const log = await openLog(env, CONFIG);
  for (let i = 0; i < 40; i++) {
    await log.append(makeBatch({ count: 2, valueBytes: 30, timestampMs: 1_700_000_000_000 + i * 10 }), { leaderEpoch: 0, assignOffsets: true });
  }
  const batchBytes = log.activeSegment.sizeBytes / ((log.logEndOffset - log.activeSegment.baseOffset) / 2);
  await log.close();
  return { env, batchBytes };
}

async function assertWholeLog(env: SimEnv, options: { hadCleanShutdown: boolean; batches: number }) {
  const log = await openLog(env, CONFIG, { hadCleanShutdown: options.hadCleanShutdown, recoveryPoint: options.hadCleanShutdown ? 80 : 0 });
  const headers = await readAllBatches(log);
  assert.equal(headers.length, options.batches);
  assert.deepEqual(headers.map((h) => h.baseOffset), Array.from({ length: options.batches }, (_, i) => i * 2));
  for (let offset = 0; offset < log.logEndOffset; offset += 3) {
    const found = await log.fetchOffsetByTimestamp(1_700_000_000_000 + Math.floor(offset / 2) * 10);
    assert.equal(found!.offset, Math.floor(offset / 2) * 2, `timestamp lookup for batch of ${offset}`);
  }
  return log;
}

describe('recovery after an unclean shutdown', () => {
  it('keeps CRC-valid batches with nanosecond timestamps beyond 2^53, indexes them and finds them by timestamp (issue 9: recovery truncated them)', async () => {
    const env = simEnv(12);
    const log = await openLog(env, CONFIG);
    const nanos = (i: number) => 1_733_000_000_123_456_789n + BigInt(i) * 1_000_000n;
    for (let i = 0; i < 20; i++) {
      const batch = makeBatch({ count: 1, valueBytes: 30, timestampMs: 0 });
      batch.writeBigInt64BE(nanos(i), BATCH_FIELD.baseTimestamp);
      batch.writeBigInt64BE(nanos(i), BATCH_FIELD.maxTimestamp);
      writeCrc(batch, 0);
      await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
    }
    await log.flush(log.logEndOffset);
    const recovered = await openLog(env, CONFIG, { recoveryPoint: 0 });
    assert.equal(recovered.logEndOffset, 20);
    const headers = await readAllBatches(recovered);
    assert.deepEqual(headers.map((h) => h.maxTimestamp), Array.from({ length: 20 }, (_, i) => Number(nanos(i))));
    for (const i of [0, 7, 19]) {
      const found = await recovered.fetchOffsetByTimestamp(Number(nanos(i)));
      assert.equal(found!.offset, i, `timestamp lookup for batch ${i}`);
    }
  });


  it('truncates a torn tail to the last whole batch', async () => {
    const { env } = await cleanLog();
    const log = await openLog(env, CONFIG, { hadCleanShutdown: true });
    const active = log.activeSegment.path;
    const size = log.activeSegment.sizeBytes;
    const handle = await env.fs.open(active, 'readWrite');
    await handle.truncate(size - 7);
    await handle.sync();
    const recovered = await openLog(env, CONFIG, { recoveryPoint: log.activeSegment.baseOffset });
    assert.equal(recovered.logEndOffset, 78);
    assert.equal((await readAllBatches(recovered)).length, 39);
    await recovered.append(makeBatch({ count: 2 }), { leaderEpoch: 1, assignOffsets: true });
    assert.equal((await readAllBatches(recovered)).at(-1)!.baseOffset, 78);
  });

  it('cuts at a zeroed region and drops every later segment', async () => {
    const { env, batchBytes } = await cleanLog();
    env.fs.corrupt(SEGMENT0_LOG, { position: Math.round(batchBytes * 3) + 5, length: 40, mode: 'zero' });
    const log = await openLog(env, CONFIG, { recoveryPoint: 0 });
    assert.equal(log.logEndOffset, 6);
    assert.equal(log.logSegments.length, 1);
    assert.equal((await readAllBatches(log)).length, 3);
  });

  it('cuts at a garbage region (CRC mismatch)', async () => {
    const { env, batchBytes } = await cleanLog();
    env.fs.corrupt(SEGMENT0_LOG, { position: Math.round(batchBytes * 5) + BATCH_HEADER_BYTES + 2, length: 8, mode: 'garbage' });
    const log = await openLog(env, CONFIG, { recoveryPoint: 0 });
    assert.equal(log.logEndOffset, 10);
  });

  it('a clean shutdown reopens without scanning: corrupt data in a sealed segment is not noticed', async () => {
    const { env, batchBytes } = await cleanLog();
    env.fs.corrupt(SEGMENT0_LOG, { position: Math.round(batchBytes * 5) + BATCH_HEADER_BYTES + 2, length: 8, mode: 'garbage' });
    const log = await openLog(env, CONFIG, { hadCleanShutdown: true });
    assert.equal(log.logEndOffset, 80);
  });
});

describe('indexes are never trusted', () => {
  it('rebuilds an index truncated to a partial entry', async () => {
    const { env } = await cleanLog();
    const handle = await env.fs.open(SEGMENT0_INDEX, 'readWrite');
    await handle.truncate((await handle.size()) - 3);
    await assertWholeLog(env, { hadCleanShutdown: true, batches: 40 });
    assert.equal((await env.fs.readFile(SEGMENT0_INDEX)).length % 8, 0);
  });

  it('rebuilds missing index and time index files', async () => {
    const { env } = await cleanLog();
    await env.fs.unlink(SEGMENT0_INDEX);
    await env.fs.unlink(SEGMENT0_TIMEINDEX);
    const log = await assertWholeLog(env, { hadCleanShutdown: true, batches: 40 });
    assert.ok(log.logSegments[0]!.offsetIndex.entries > 0);
    await log.close();
    assert.ok((await env.fs.stat(SEGMENT0_INDEX))!.size > 0);
  });

  it('rebuilds an index whose entries do not increase', async () => {
    const { env } = await cleanLog();
    const bytes = await env.fs.readFile(SEGMENT0_INDEX);
    bytes.copy(bytes, 8, 0, 8);
    await env.fs.writeFileAtomic(SEGMENT0_INDEX, bytes);
    await assertWholeLog(env, { hadCleanShutdown: true, batches: 40 });
  });

  it('rebuilds an index whose last entry names another batch, and a garbage time index', async () => {
    const { env } = await cleanLog();
    const bytes = await env.fs.readFile(SEGMENT0_INDEX);
    bytes.writeInt32BE(bytes.readInt32BE(bytes.length - 8) + 1, bytes.length - 8);
    await env.fs.writeFileAtomic(SEGMENT0_INDEX, bytes);
    env.fs.corrupt(SEGMENT0_TIMEINDEX, { position: 0, length: 12, mode: 'garbage' });
    await assertWholeLog(env, { hadCleanShutdown: true, batches: 40 });
  });

  it('rebuilds an index pointing past the end of a shortened log', async () => {
    const { env } = await cleanLog();
    const log = await openLog(env, CONFIG, { hadCleanShutdown: true });
    const active = log.activeSegment;
    const handle = await env.fs.open(active.path, 'readWrite');
    await handle.truncate(active.offsetIndex.lastEntry.position);
    await handle.sync();
    const reopened = await openLog(env, CONFIG, { hadCleanShutdown: true });
    const headers = await readAllBatches(reopened);
    assert.equal(headers.at(-1)!.lastOffset + 1, reopened.logEndOffset);
  });
});
