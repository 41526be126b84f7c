/**
 * Proves the producer's batching rules on a ManualClock: records of one
 * partition share a batch up to batch.size; a batch is sendable when full,
 * when it has lingered linger.ms, or on flush; a record that does not fit
 * starts a new batch (which makes the older one sendable); a retried batch
 * goes back ahead of newer ones in sequence order, waits out its backoff,
 * and is not sent while another batch of its partition is in flight.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordAccumulator, recordBytesUpperBound, type AccumulatedRecord } from '../../src/client/record-accumulator.js';
import { ManualClock } from '../../src/io/clock.js';

const tp = { topic: 't', partition: 0 };
const noop = { timestamp: 0, resolve: () => undefined, reject: () => undefined };
const options = { flushing: false, inFlightPerPartitionMax: 5 };

function record(valueBytes: number): AccumulatedRecord {
  return { key: null, value: Buffer.alloc(valueBytes), headers: [], timestamp: 0 };
}

test('a batch lingers linger.ms before it is ready, unless flushed', () => {
  const clock = new ManualClock();
  const accumulator = new RecordAccumulator({ clock, batchSizeBytes: 16384, lingerMs: 5 });
  accumulator.append(tp, record(10), noop);
  accumulator.append(tp, record(10), noop);
  assert.equal(accumulator.readyBatches(options).length, 0);
  assert.equal(accumulator.readyBatches({ ...options, flushing: true }).length, 1);
  assert.equal(accumulator.nextReadyMs(), clock.monotonicMs() + 5);
  clock.advance(4);
  assert.equal(accumulator.readyBatches(options).length, 0);
  clock.advance(1);
  const ready = accumulator.readyBatches(options);
  assert.equal(ready.length, 1);
  assert.equal(ready[0]!.recordCount, 2);
});

test('records fill a batch up to batch.size; the next record opens a new batch and the full one is ready at once', () => {
  const clock = new ManualClock();
  const perRecord = recordBytesUpperBound(record(100));
  const accumulator = new RecordAccumulator({ clock, batchSizeBytes: 61 + 3 * perRecord, lingerMs: 1000 });
  const first = accumulator.append(tp, record(100), noop);
  assert.equal(first.batchFullBefore, true);
  accumulator.append(tp, record(100), noop);
  const third = accumulator.append(tp, record(100), noop);
  assert.equal(third.batch, first.batch);
  assert.equal(first.batch.isFull(accumulator.batchSizeBytes), true);
  const fourth = accumulator.append(tp, record(100), noop);
  assert.notEqual(fourth.batch, first.batch);
  assert.equal(fourth.batchFullBefore, true);
  const ready = accumulator.readyBatches(options);
  assert.deepEqual(ready.map((b) => b.recordCount), [3]);
});

test('a record larger than batch.size gets a batch of its own', () => {
  const clock = new ManualClock();
  const accumulator = new RecordAccumulator({ clock, batchSizeBytes: 100, lingerMs: 0 });
  const big = accumulator.append(tp, record(500), noop);
  assert.equal(big.batch.recordCount, 1);
  const next = accumulator.append(tp, record(1), noop);
  assert.notEqual(next.batch, big.batch);
});

test('a retried batch returns ahead of newer batches in sequence order, after its backoff, and not beside an in-flight batch', () => {
  const clock = new ManualClock();
  const accumulator = new RecordAccumulator({ clock, batchSizeBytes: 61 + recordBytesUpperBound(record(10)), lingerMs: 0 });
  const batches = [0, 1, 2].map(() => accumulator.append(tp, record(10), noop).batch);
  batches.forEach((batch, index) => {
    batch.inFlight = true;
    batch.attempts = 1;
    batch.baseSequence = index;
    batch.encoded = Buffer.alloc(0);
  });
  const fresh = accumulator.append(tp, record(10), noop).batch;
  accumulator.reenqueue(batches[1]!, clock.monotonicMs() + 100);
  accumulator.reenqueue(batches[0]!, clock.monotonicMs() + 100);
  assert.equal(accumulator.readyBatches(options).length, 0, 'backing off');
  clock.advance(100);
  assert.equal(accumulator.readyBatches(options).length, 0, 'batch 2 is still in flight');
  accumulator.reenqueue(batches[2]!, clock.monotonicMs() + 100);
  assert.deepEqual(accumulator.batchesOf(tp).map((b) => b.baseSequence), [0, 1, 2, -1]);
  assert.equal(accumulator.batchesOf(tp)[3], fresh);
  assert.deepEqual(accumulator.readyBatches(options).map((b) => b.baseSequence), [0]);
});

test('retried batches keep sequence order across the wrap from Integer.MAX_VALUE to 0 (issue 9: a raw < put 0 before 2147483646)', () => {
  const clock = new ManualClock();
  const accumulator = new RecordAccumulator({ clock, batchSizeBytes: 61 + recordBytesUpperBound(record(10)), lingerMs: 0 });
  const sequences = [2 ** 31 - 2, 2 ** 31 - 1, 0, 1];
  const batches = sequences.map(() => accumulator.append(tp, record(10), noop).batch);
  batches.forEach((batch, index) => {
    batch.inFlight = true;
    batch.attempts = 1;
    batch.baseSequence = sequences[index]!;
    batch.encoded = Buffer.alloc(0);
  });
  for (const batch of [...batches].reverse()) accumulator.reenqueue(batch, clock.monotonicMs());
  assert.deepEqual(accumulator.batchesOf(tp).map((b) => b.baseSequence), sequences);
});

test('at most inFlightPerPartitionMax batches of a partition are in flight', () => {
  const clock = new ManualClock();
  const accumulator = new RecordAccumulator({ clock, batchSizeBytes: 1, lingerMs: 0 });
  for (let i = 0; i < 4; i++) accumulator.append(tp, record(1), noop);
  const limits = { flushing: false, inFlightPerPartitionMax: 2 };
  for (let i = 0; i < 2; i++) {
    const [next] = accumulator.readyBatches(limits);
    next!.inFlight = true;
  }
  assert.equal(accumulator.readyBatches(limits).length, 0);
});
