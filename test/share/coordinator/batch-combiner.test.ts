/**
 * The share coordinator's batch combining (Kafka 4.4's
 * PersisterStateBatchCombiner): batches below the start offset are dropped
 * and a straddling one cut; where batches overlap the one with the higher
 * delivery count wins, then the higher delivery state, whichever list it
 * came from; touching runs of one state and count are joined; the output
 * is sorted and free of overlaps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { combineStateBatches } from '../../../src/share/coordinator/batch-combiner.js';
import type { PersisterStateBatch } from '../../../src/share/persister.js';
import { SeededRandom } from '../../../src/io/env.js';

const b = (firstOffset: number, lastOffset: number, deliveryState: number, deliveryCount: number): PersisterStateBatch => ({ firstOffset, lastOffset, deliveryState, deliveryCount });

test('batches below the start offset go and a batch across it is cut to start there', () => {
  assert.deepEqual(combineStateBatches([b(0, 9, 2, 1), b(10, 19, 0, 1)], [], 15), [b(15, 19, 0, 1)]);
  assert.deepEqual(combineStateBatches([b(0, 9, 2, 1)], [b(20, 29, 4, 1)], 30), []);
});

test('start offset -1 (not initialized) prunes nothing', () => {
  assert.deepEqual(combineStateBatches([b(0, 4, 0, 1)], [b(5, 9, 2, 1)], -1), [b(0, 4, 0, 1), b(5, 9, 2, 1)]);
});

test('an overlap takes the higher delivery count, then the higher state, from either list', () => {
  // A redelivered range (count 2) overrides the first delivery's state where they overlap.
  assert.deepEqual(combineStateBatches([b(0, 9, 0, 1)], [b(5, 14, 0, 2)], 0), [b(0, 4, 0, 1), b(5, 14, 0, 2)]);
  // Same count: ACKNOWLEDGED (2) beats AVAILABLE (0), even when the AVAILABLE one came later.
  assert.deepEqual(combineStateBatches([b(0, 9, 2, 1)], [b(0, 9, 0, 1)], 0), [b(0, 9, 2, 1)]);
  // ARCHIVED (4) beats ACKNOWLEDGED.
  assert.deepEqual(combineStateBatches([b(0, 9, 2, 1)], [b(3, 5, 4, 1)], 0), [b(0, 2, 2, 1), b(3, 5, 4, 1), b(6, 9, 2, 1)]);
});

test('touching runs of the same state and count are joined', () => {
  assert.deepEqual(combineStateBatches([b(0, 4, 2, 1)], [b(5, 9, 2, 1), b(10, 12, 2, 1)], 0), [b(0, 12, 2, 1)]);
  assert.deepEqual(combineStateBatches([b(0, 4, 2, 1)], [b(6, 9, 2, 1)], 0), [b(0, 4, 2, 1), b(6, 9, 2, 1)], 'a gap keeps them apart');
});

test('random inputs: sorted, disjoint, every offset keeps the winner of the batches covering it', () => {
  const random = new SeededRandom(932);
  for (let round = 0; round < 300; round++) {
    const draw = () =>
      Array.from({ length: random.nextInt(5) }, () => {
        const first = random.nextInt(40);
        return b(first, first + random.nextInt(10), [0, 2, 4][random.nextInt(3)]!, 1 + random.nextInt(3));
      });
    const soFar = draw();
    const added = draw();
    const start = random.nextInt(3) === 0 ? -1 : random.nextInt(20);
    const out = combineStateBatches(soFar, added, start);
    for (let i = 1; i < out.length; i++) {
      assert.ok(out[i]!.firstOffset > out[i - 1]!.lastOffset, `sorted and disjoint (seed round ${round})`);
      const touching = out[i]!.firstOffset === out[i - 1]!.lastOffset + 1;
      assert.ok(!touching || out[i]!.deliveryState !== out[i - 1]!.deliveryState || out[i]!.deliveryCount !== out[i - 1]!.deliveryCount, 'touching equal runs joined');
    }
    for (let offset = 0; offset < 60; offset++) {
      const covering = [...soFar, ...added].filter((x) => x.firstOffset <= offset && offset <= x.lastOffset && (start === -1 || offset >= start));
      const found = out.find((x) => x.firstOffset <= offset && offset <= x.lastOffset);
      if (covering.length === 0) {
        assert.equal(found, undefined, `offset ${offset} is covered by nothing`);
        continue;
      }
      const winner = covering.reduce((w, x) => (x.deliveryCount > w.deliveryCount || (x.deliveryCount === w.deliveryCount && x.deliveryState > w.deliveryState) ? x : w));
      assert.deepEqual([found?.deliveryState, found?.deliveryCount], [winner.deliveryState, winner.deliveryCount], `offset ${offset}, round ${round}`);
    }
  }
});
