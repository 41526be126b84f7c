/**
 * Crash safety of cleaning, on the simulated disk, part 1 of 5: a power cut
 * at every FileSystem call of a pass, here over seeded logs 0 and 1
 * (crash-harness.ts says what is checked after each restart; 2400+ crash
 * points over the 5 parts, split so each file runs well inside the timeout).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SEED, crashEveryCall } from './crash-harness.js';

describe('crash safety of the log cleaner', () => {
  it(`a power cut at every call of a pass over seeded logs 0 and 1, seed ${SEED}`, async (t) => {
    const { crashPoints, swapsCompleted } = await crashEveryCall([{ index: 0 }, { index: 1 }]);
    t.diagnostic(`${crashPoints} crash points, ${swapsCompleted} committed swaps`);
    assert.ok(crashPoints >= 850, `only ${crashPoints} crash points were reached`);
    assert.ok(swapsCompleted >= 230, `only ${swapsCompleted} crashes left a committed swap`);
  });
});
