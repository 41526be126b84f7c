/**
 * The pieces of a share fetch that are pure functions: the batches of a log
 * read are sliced to those holding acquired offsets (a view, no copy; a
 * batch partly acquired is sent whole, as Kafka's ShareFetchUtils slices);
 * share.auto.offset.reset maps to ListOffsets' timestamps (latest -1,
 * earliest -2, by_duration now minus the ISO-8601 duration Java's
 * Duration.parse reads).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildBatch } from '../../src/protocol/records/records.js';
import { fetchedBatches, isoDurationMs, resetTimestamp, sliceToAcquired } from '../../src/share/share-partition-manager.js';

const batch = (baseOffset: number, count: number) =>
  buildBatch({ baseOffset, records: Array.from({ length: count }, (_, index) => ({ key: null, value: Buffer.from(`v${baseOffset + index}`), headers: [] })) });

test('a log read is sliced to the batches that hold acquired offsets', () => {
  const first = batch(0, 3);
  const second = batch(3, 2);
  const third = batch(5, 4);
  const read = Buffer.concat([first, second, third]);
  assert.deepEqual(fetchedBatches(read), [
    { baseOffset: 0, lastOffset: 2, isControl: false },
    { baseOffset: 3, lastOffset: 4, isControl: false },
    { baseOffset: 5, lastOffset: 8, isControl: false },
  ]);
  const middle = sliceToAcquired(read, [{ firstOffset: 4, lastOffset: 4, deliveryCount: 1 }]);
  assert.deepEqual(middle, second);
  assert.equal(middle.buffer, read.buffer, 'a view of the read, not a copy');
  const span = sliceToAcquired(read, [{ firstOffset: 1, lastOffset: 1, deliveryCount: 2 }, { firstOffset: 6, lastOffset: 7, deliveryCount: 1 }]);
  assert.deepEqual(span, read);
  assert.equal(sliceToAcquired(read, [{ firstOffset: 20, lastOffset: 21, deliveryCount: 1 }]).length, 0);
});

test('share.auto.offset.reset strategies become ListOffsets timestamps', () => {
  const now = 1_700_000_000_000;
  assert.equal(resetTimestamp('latest', now), -1);
  assert.equal(resetTimestamp('earliest', now), -2);
  assert.equal(resetTimestamp('by_duration:PT1H', now), now - 3_600_000);
  assert.equal(resetTimestamp('by_duration:P1DT30M', now), now - 86_400_000 - 1_800_000);
  assert.equal(isoDurationMs('PT0.5S'), 500);
  for (const malformed of ['P', 'PT', '1H', 'PT1X', '']) assert.equal(isoDurationMs(malformed), null, malformed);
});
