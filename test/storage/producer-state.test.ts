/**
 * Proves ProducerStateManager follows Kafka's idempotent-producer rules
 * (ProducerAppendInfo / ProducerStateEntry): duplicates among the last five
 * batches are found, sequence gaps and old epochs are refused, a new epoch
 * restarts at 0, an unknown producer may start anywhere, sequences wrap at
 * Integer.MAX_VALUE; and that snapshots round-trip in Kafka's byte layout,
 * survive reopening, and a corrupt snapshot falls back to an older one.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, writeFile, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realFileSystem } from '../../src/io/fs.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { crc32c } from '../../src/protocol/records/batch.js';
import { decrementSequence, incrementSequence } from '../../src/protocol/records/sequence.js';
import { ProducerStateManager, loadProducersFromBatches } from '../../src/storage/producer-state.js';
import { decodeProducerSnapshot, encodeProducerSnapshot, producerSnapshotPath } from '../../src/storage/producer-state-snapshot.js';
import type { BatchHeader } from '../../src/protocol/records/batch.js';

const INT32_MAX = 0x7fffffff;
const DAY_MS = 86_400_000;

const directories: string[] = [];
after(() => Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true }))));

async function newManager(dir?: string): Promise<{ manager: ProducerStateManager; dir: string }> {
  const directory = dir ?? (await mkdtemp(join(tmpdir(), 'spool-pstate-')));
  if (dir === undefined) directories.push(directory);
  const manager = await ProducerStateManager.open({ dir: directory, fs: realFileSystem, producerIdExpirationMs: DAY_MS });
  return { manager, dir: directory };
}

/** Appends one client batch of `count` records at `offset`; returns the error code (0 on success). */
function append(
  manager: ProducerStateManager,
  batch: { producerId: number; epoch: number; firstSeq: number; count: number; offset: number; timestampMs?: number },
): number {
  const info = manager.prepareUpdate(batch.producerId, 'client');
  const error = info.appendDataBatch({
    producerEpoch: batch.epoch,
    firstSeq: batch.firstSeq,
    lastSeq: incrementSequence(batch.firstSeq, batch.count - 1),
    maxTimestampMs: batch.timestampMs ?? 1000,
    firstOffset: batch.offset,
    lastOffset: batch.offset + batch.count - 1,
    isTransactional: false,
  });
  if (error !== null) return error.errorCode;
  manager.update(info);
  manager.updateMapEndOffset(batch.offset + batch.count);
  return ErrorCode.NONE;
}

test('an unknown producer may start at any sequence; later batches must continue it', async () => {
  const { manager } = await newManager();
  assert.equal(append(manager, { producerId: 7, epoch: 0, firstSeq: 42, count: 3, offset: 0 }), ErrorCode.NONE);
  assert.equal(manager.lastEntry(7)!.lastSeq, 44);
  assert.equal(append(manager, { producerId: 7, epoch: 0, firstSeq: 45, count: 1, offset: 3 }), ErrorCode.NONE);
  assert.equal(append(manager, { producerId: 7, epoch: 0, firstSeq: 47, count: 1, offset: 4 }), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(append(manager, { producerId: 7, epoch: 0, firstSeq: 45, count: 1, offset: 4 }), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(manager.lastEntry(7)!.lastSeq, 45);
});

test('a retried batch among the last five is found with its original offsets; the sixth-oldest is not', async () => {
  const { manager } = await newManager();
  for (let i = 0; i < 6; i++) {
    assert.equal(append(manager, { producerId: 1, epoch: 3, firstSeq: i * 2, count: 2, offset: 100 + i * 2, timestampMs: 5000 + i }), ErrorCode.NONE);
  }
  const entry = manager.lastEntry(1)!;
  assert.equal(entry.batches.length, 5);
  const retry = entry.findDuplicateBatch({ producerEpoch: 3, baseSequence: 2, lastOffsetDelta: 1 });
  assert.deepEqual(retry, { lastSeq: 3, lastOffset: 103, offsetDelta: 1, timestampMs: 5001 });
  assert.equal(entry.findDuplicateBatch({ producerEpoch: 3, baseSequence: 0, lastOffsetDelta: 1 }), null);
  // Same sequences under another epoch are not duplicates.
  assert.equal(entry.findDuplicateBatch({ producerEpoch: 4, baseSequence: 2, lastOffsetDelta: 1 }), null);
  // A different range overlapping a retained batch is not a duplicate either.
  assert.equal(entry.findDuplicateBatch({ producerEpoch: 3, baseSequence: 2, lastOffsetDelta: 2 }), null);
});

test('an older epoch gets INVALID_PRODUCER_EPOCH; a newer epoch must restart at sequence 0', async () => {
  const { manager } = await newManager();
  assert.equal(append(manager, { producerId: 9, epoch: 5, firstSeq: 0, count: 1, offset: 0 }), ErrorCode.NONE);
  assert.equal(append(manager, { producerId: 9, epoch: 4, firstSeq: 1, count: 1, offset: 1 }), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(append(manager, { producerId: 9, epoch: 6, firstSeq: 1, count: 1, offset: 1 }), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(append(manager, { producerId: 9, epoch: 6, firstSeq: 0, count: 1, offset: 1 }), ErrorCode.NONE);
  const entry = manager.lastEntry(9)!;
  assert.equal(entry.producerEpoch, 6);
  assert.equal(entry.batches.length, 1, 'a new epoch forgets the old epoch batches');
});

test('sequences wrap from Integer.MAX_VALUE to 0', async () => {
  assert.equal(incrementSequence(INT32_MAX, 1), 0);
  assert.equal(incrementSequence(INT32_MAX - 1, 3), 1);
  assert.equal(decrementSequence(1, 3), INT32_MAX - 1);
  const { manager } = await newManager();
  assert.equal(append(manager, { producerId: 2, epoch: 0, firstSeq: INT32_MAX - 1, count: 2, offset: 0 }), ErrorCode.NONE);
  assert.equal(manager.lastEntry(2)!.lastSeq, INT32_MAX);
  assert.equal(append(manager, { producerId: 2, epoch: 0, firstSeq: 0, count: 2, offset: 2 }), ErrorCode.NONE);
  const wrapped = manager.lastEntry(2)!;
  assert.equal(wrapped.lastSeq, 1);
  assert.notEqual(wrapped.findDuplicateBatch({ producerEpoch: 0, baseSequence: INT32_MAX - 1, lastOffsetDelta: 1 }), null);
  // A batch spanning the wrap: its retry is a duplicate, the next batch follows it, a gap is out of order.
  assert.equal(append(manager, { producerId: 3, epoch: 0, firstSeq: INT32_MAX - 1, count: 4, offset: 4 }), ErrorCode.NONE);
  assert.equal(manager.lastEntry(3)!.lastSeq, 1);
  assert.notEqual(manager.lastEntry(3)!.findDuplicateBatch({ producerEpoch: 0, baseSequence: INT32_MAX - 1, lastOffsetDelta: 3 }), null);
  assert.equal(append(manager, { producerId: 3, epoch: 0, firstSeq: 3, count: 1, offset: 8 }), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(append(manager, { producerId: 3, epoch: 0, firstSeq: 2, count: 1, offset: 8 }), ErrorCode.NONE);
});

test('a producer snapshot keeps a nanosecond timestamp (beyond 2^53) instead of calling the file corrupt', () => {
  const timestampMs = 1_733_000_000_123_456_768; // exactly representable
  const bytes = encodeProducerSnapshot([
    { producerId: 7, epoch: 0, lastSequence: 0, lastOffset: 0, offsetDelta: 0, timestampMs, coordinatorEpoch: -1, currentTxnFirstOffset: -1 },
  ]);
  assert.equal(decodeProducerSnapshot(bytes)[0]!.timestampMs, timestampMs);
});

test('snapshot bytes follow Kafka ProducerSnapshot v1: version, CRC-32C over the rest, 46-byte entries', () => {
  const bytes = encodeProducerSnapshot([
    { producerId: 1000, epoch: 2, lastSequence: 9, lastOffset: 77, offsetDelta: 4, timestampMs: 1_700_000_000_123, coordinatorEpoch: -1, currentTxnFirstOffset: -1 },
  ]);
  assert.equal(bytes.length, 2 + 4 + 4 + 46);
  assert.equal(bytes.readInt16BE(0), 1);
  assert.equal(bytes.readUInt32BE(2), crc32c(bytes.subarray(6)));
  assert.equal(bytes.readInt32BE(6), 1);
  assert.equal(bytes.readBigInt64BE(10), 1000n);
  assert.equal(bytes.readInt16BE(18), 2);
  assert.equal(bytes.readInt32BE(20), 9);
  assert.equal(bytes.readBigInt64BE(24), 77n);
  assert.equal(bytes.readInt32BE(32), 4);
  assert.equal(bytes.readBigInt64BE(36), 1_700_000_000_123n);
  assert.equal(bytes.readInt32BE(44), -1);
  assert.equal(bytes.readBigInt64BE(48), -1n);
  assert.equal(decodeProducerSnapshot(bytes)[0]!.lastOffset, 77);
  const garbled = Buffer.from(bytes);
  garbled[30] = garbled[30]! ^ 0xff;
  assert.throws(() => decodeProducerSnapshot(garbled), /crc/);
});

test('state survives a snapshot and reopen; the last batch still deduplicates', async () => {
  const { manager, dir } = await newManager();
  const nowMs = 1000;
  assert.equal(append(manager, { producerId: 5, epoch: 1, firstSeq: 0, count: 10, offset: 0, timestampMs: nowMs }), ErrorCode.NONE);
  assert.equal(await manager.takeSnapshot(), 10);
  assert.equal(await manager.takeSnapshot(), null, 'no new snapshot when nothing moved');
  assert.deepEqual((await readdir(dir)).sort(), ['00000000000000000010.snapshot']);

  const reopened = (await newManager(dir)).manager;
  await reopened.truncateAndReload(0, 10, nowMs);
  assert.equal(reopened.mapEndOffset, 10);
  const entry = reopened.lastEntry(5)!;
  assert.equal(entry.producerEpoch, 1);
  assert.deepEqual(entry.findDuplicateBatch({ producerEpoch: 1, baseSequence: 0, lastOffsetDelta: 9 }), { lastSeq: 9, lastOffset: 9, offsetDelta: 9, timestampMs: nowMs });
  assert.equal(append(reopened, { producerId: 5, epoch: 1, firstSeq: 11, count: 1, offset: 10 }), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(append(reopened, { producerId: 5, epoch: 1, firstSeq: 10, count: 1, offset: 10 }), ErrorCode.NONE);
});

test('a corrupt newest snapshot is deleted and the older one loaded', async () => {
  const { manager, dir } = await newManager();
  append(manager, { producerId: 1, epoch: 0, firstSeq: 0, count: 5, offset: 0 });
  await manager.takeSnapshot();
  append(manager, { producerId: 1, epoch: 0, firstSeq: 5, count: 5, offset: 5 });
  await manager.takeSnapshot();
  const newest = producerSnapshotPath(dir, 10);
  const bytes = await readFile(newest);
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
  await writeFile(newest, bytes);

  const reopened = (await newManager(dir)).manager;
  await reopened.truncateAndReload(0, 10, 1000);
  assert.equal(reopened.mapEndOffset, 5);
  assert.equal(reopened.lastEntry(1)!.lastSeq, 4);
  assert.deepEqual(await readdir(dir), ['00000000000000000005.snapshot']);
});

test('snapshots beyond the log end or at/below the log start are dropped on reload', async () => {
  const { manager, dir } = await newManager();
  for (let i = 0; i < 3; i++) {
    append(manager, { producerId: 1, epoch: 0, firstSeq: i * 5, count: 5, offset: i * 5 });
    await manager.takeSnapshot();
  }
  const reopened = (await newManager(dir)).manager;
  await reopened.truncateAndReload(5, 12, 1000);
  assert.deepEqual(await readdir(dir), ['00000000000000000010.snapshot']);
  assert.equal(reopened.mapEndOffset, 10);
});

test('replaying the log after a snapshot rebuilds the last five batches without sequence checks', async () => {
  const { manager } = await newManager();
  const header = (baseOffset: number, baseSequence: number): BatchHeader => ({
    baseOffset, batchLength: 0, partitionLeaderEpoch: 0, magic: 2, crc: 0, attributes: 0, compression: 0, timestampType: 0,
    isTransactional: false, isControl: false, hasDeleteHorizon: false, lastOffsetDelta: 1, baseTimestamp: 0, maxTimestamp: 2000,
    producerId: 3, producerEpoch: 0, baseSequence, recordCount: 2, lastOffset: baseOffset + 1, sizeBytes: 0,
  });
  // Sequence 100 after 0-1 would fail a client check, but replay trusts the log.
  loadProducersFromBatches(manager, [{ header: header(0, 0) }, { header: header(2, 100) }]);
  const entry = manager.lastEntry(3)!;
  assert.equal(entry.batches.length, 2);
  assert.equal(entry.lastSeq, 101);
  assert.equal(entry.lastDataOffset, 3);
});

test('idle producers expire after producer.id.expiration.ms', async () => {
  const { manager } = await newManager();
  append(manager, { producerId: 1, epoch: 0, firstSeq: 0, count: 1, offset: 0, timestampMs: 0 });
  append(manager, { producerId: 2, epoch: 0, firstSeq: 0, count: 1, offset: 1, timestampMs: DAY_MS });
  manager.removeExpiredProducers(DAY_MS + 1);
  assert.equal(manager.lastEntry(1), undefined);
  assert.notEqual(manager.lastEntry(2), undefined);
});
