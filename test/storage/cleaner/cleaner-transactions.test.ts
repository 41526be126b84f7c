/**
 * The cleaner and transactions, Kafka's rules (LogCleanerTest's
 * testAbortMarkerRemoval / testCommitMarkerRemoval shape): the records of an
 * aborted transaction go at the first pass and never hide a committed value;
 * its ABORT marker (and `.txnindex` entry) stays while a batch of the
 * transaction does; a COMMIT marker stays while a batch of its transaction
 * does; a marker that may go first gets a delete horizon (KIP-534) and goes
 * at the first pass after delete.retention.ms. Offsets never change.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { iterateBatches } from '../../../src/protocol/records/batch.js';
import { buildControlBatch } from '../../../src/protocol/records/control.js';
import { buildBatch, decodeRecords } from '../../../src/protocol/records/records.js';
import type { Log } from '../../../src/storage/log.js';
import { simEnv, type SimEnv } from '../helpers.js';
import { TP, appendKeyed, compactConfig, latestByKey, newCleaner, openManager, readAll } from './helpers.js';

const DELETE_RETENTION_MS = 60_000;
const COMMITTED = 1;
const ABORTED = 2;

interface SeenBatch {
  baseOffset: number;
  lastOffset: number;
  isControl: boolean;
  producerId: number;
  hasDeleteHorizon: boolean;
  records: number;
}

async function batchesOf(log: Log): Promise<SeenBatch[]> {
  const batches: SeenBatch[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const read = await log.read(offset, { maxBytes: 64 * 1024, minOneMessage: true });
    for (const { position, header } of iterateBatches(read.records)) {
      const decoded = decodeRecords(read.records.subarray(position, position + header.sizeBytes));
      const { baseOffset, lastOffset, isControl, producerId, hasDeleteHorizon } = header;
      batches.push({ baseOffset, lastOffset, isControl, producerId, hasDeleteHorizon, records: decoded.records?.length ?? -1 });
      offset = lastOffset + 1;
    }
  }
  return batches;
}

async function appendTransactional(log: Log, producerId: number, records: { key: string; value: string }[], env: SimEnv): Promise<number> {
  const batch = buildBatch({
    records: records.map((record) => ({ ...record, timestamp: env.clock.nowMs() })),
    producerId,
    producerEpoch: 0,
    baseSequence: 0,
    isTransactional: true,
  });
  const firstOffset = log.logEndOffset;
  await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
  return firstOffset;
}

async function appendMarker(log: Log, producerId: number, type: 'COMMIT' | 'ABORT', env: SimEnv): Promise<number> {
  const markerOffset = log.logEndOffset;
  await log.append(buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, timestamp: env.clock.nowMs() }), {
    leaderEpoch: 0,
    assignOffsets: true,
    origin: 'coordinator',
  });
  log.updateHighWatermark(log.logEndOffset);
  return markerOffset;
}

async function filler(log: Log, env: SimEnv, round: number): Promise<void> {
  await appendKeyed(log, [{ key: 'other', value: `other-${round}` }], { timestampMs: env.clock.nowMs() });
  await log.roll();
}

describe('log cleaner: transactions', () => {
  it('removes aborted records at once, then the markers after delete.retention.ms once their transactions are gone', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig({ minCleanableDirtyRatio: 0.01, deleteRetentionMs: DELETE_RETENTION_MS }));
    const log = await manager.getOrCreateLog(TP);
    const cleaner = newCleaner(env, () => [manager]);
    await appendTransactional(log, COMMITTED, [{ key: 'k1', value: 'committed-1' }, { key: 'k2', value: 'committed-2' }], env);
    const commitOffset = await appendMarker(log, COMMITTED, 'COMMIT', env);
    const abortedFirst = await appendTransactional(log, ABORTED, [{ key: 'k1', value: 'aborted-1' }, { key: 'k3', value: 'aborted-3' }], env);
    const abortOffset = await appendMarker(log, ABORTED, 'ABORT', env);
    await log.appendAbortedTransaction({ producerId: ABORTED, firstOffset: abortedFirst, lastOffset: abortOffset, lastStableOffset: abortOffset + 1 });
    await filler(log, env, 0);
    const endOffset = log.logEndOffset;

    // Pass 1: the aborted records go and never hide k1's committed value; both markers stay.
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    let values = new Map([...latestByKey((await readAll(log)).records)].map(([key, record]) => [key, record.value]));
    assert.equal(values.get('k1'), 'committed-1');
    assert.equal(values.has('k3'), false, 'aborted records are removed');
    let batches = await batchesOf(log);
    assert.equal(batches.some((batch) => batch.producerId === ABORTED && !batch.isControl), false, 'the aborted batch is gone');
    let markers = batches.filter((batch) => batch.isControl);
    assert.deepEqual(markers.map((batch) => [batch.baseOffset, batch.hasDeleteHorizon]), [[commitOffset, false], [abortOffset, false]]);
    assert.deepEqual(log.collectAbortedTransactions(0, endOffset).map((txn) => txn.producerId), [ABORTED], 'the ABORT marker keeps its .txnindex entry');

    // Pass 2: newer values for k1 and k2 remove the committed batch; the ABORT marker, whose transaction is gone, gets a horizon.
    await appendKeyed(log, [{ key: 'k1', value: 'new-1' }, { key: 'k2', value: 'new-2' }], { timestampMs: env.clock.nowMs() });
    await log.roll();
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    batches = await batchesOf(log);
    assert.equal(batches.some((batch) => batch.producerId === COMMITTED && !batch.isControl), false, 'the committed batch is cleaned away');
    markers = batches.filter((batch) => batch.isControl);
    assert.deepEqual(markers.map((batch) => [batch.baseOffset, batch.hasDeleteHorizon]), [[commitOffset, false], [abortOffset, true]]);
    assert.deepEqual(log.collectAbortedTransactions(0, log.logEndOffset), [], 'no batch of the aborted transaction is left to index');

    // Pass 3: the COMMIT marker, whose batches are gone now, gets its horizon; nothing goes before the horizon.
    await filler(log, env, 1);
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    markers = (await batchesOf(log)).filter((batch) => batch.isControl);
    assert.deepEqual(markers.map((batch) => [batch.baseOffset, batch.hasDeleteHorizon]), [[commitOffset, true], [abortOffset, true]]);

    // Pass 4, past delete.retention.ms: both markers go; every surviving record keeps its offset.
    env.clock.advance(DELETE_RETENTION_MS + 1);
    await filler(log, env, 2);
    assert.equal(await cleaner.cleanFilthiestLog(), true);
    batches = await batchesOf(log);
    assert.equal(batches.filter((batch) => batch.isControl).length, 0, 'markers removed after their delete horizon');
    values = new Map([...latestByKey((await readAll(log)).records)].map(([key, record]) => [key, record.value]));
    assert.deepEqual(Object.fromEntries(values), { k1: 'new-1', k2: 'new-2', other: 'other-2' });
    assert.ok(batches.every((batch) => batch.baseOffset >= endOffset), 'only records written after the transactions are left');
  });

  it('keeps an active producer\'s last marker (emptied) so its epoch survives', async () => {
    const env = simEnv();
    const manager = await openManager(env, compactConfig({ minCleanableDirtyRatio: 0.01, deleteRetentionMs: 0 }));
    const log = await manager.getOrCreateLog(TP);
    const abortedFirst = await appendTransactional(log, ABORTED, [{ key: 'k1', value: 'aborted-1' }], env);
    const abortOffset = await appendMarker(log, ABORTED, 'ABORT', env);
    await log.appendAbortedTransaction({ producerId: ABORTED, firstOffset: abortedFirst, lastOffset: abortOffset, lastStableOffset: abortOffset + 1 });
    const cleaner = newCleaner(env, () => [manager], { producers: new Map([[ABORTED, { lastDataOffset: null, producerEpoch: 0 }]]) });
    for (let round = 0; round < 4; round++) {
      env.clock.advance(1);
      await filler(log, env, round);
      assert.equal(await cleaner.cleanFilthiestLog(), true);
    }
    const markers = (await batchesOf(log)).filter((batch) => batch.isControl);
    assert.deepEqual(markers.map((batch) => [batch.baseOffset, batch.records]), [[abortOffset, 0]], 'the marker batch stays, emptied');
  });
});
