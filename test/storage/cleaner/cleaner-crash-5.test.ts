/**
 * Crash safety of cleaning, on the simulated disk, part 5 of 5: a power cut
 * at every FileSystem call of a pass, here over seeded logs 3, 4 and 5
 * (crash-harness.ts says what is checked after each restart; 2400+ crash
 * points over the 5 parts, split so each file runs well inside the timeout).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SEED, crashEveryCall } from './crash-harness.js';

describe('crash safety of the log cleaner', () => {
  it(`a power cut at every call of a pass over seeded logs 3, 4 and 5, seed ${SEED}`, async (t) => {
    const { crashPoints, swapsCompleted } = await crashEveryCall([{ index: 3 }, { index: 4 }, { index: 5 }]);
    t.diagnostic(`${crashPoints} crash points, ${swapsCompleted} committed swaps`);
    assert.ok(crashPoints >= 800, `only ${crashPoints} crash points were reached`);
    assert.ok(swapsCompleted >= 210, `only ${swapsCompleted} crashes left a committed swap`);
  });
});
