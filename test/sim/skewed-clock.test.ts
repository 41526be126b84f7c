/**
 * A skewed host clock: its wall clock is offset and drifts from true time,
 * its monotonic clock is the shared one, an NTP step moves the wall clock
 * alone (back as well as forward), and a seeded draw replays.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { drawSkew, drawStep, SkewedClock } from './skewed-clock.js';

test('the wall clock is offset and drifts; monotonic time is the shared clock', () => {
  const base = new ManualClock(1_000_000);
  const ahead = new SkewedClock(base, { offsetMs: 5_000, driftPpm: 1_000 });
  const behind = new SkewedClock(base, { offsetMs: -2_000, driftPpm: -500_000 });
  assert.equal(ahead.nowMs(), 1_005_000);
  assert.equal(behind.nowMs(), 998_000);
  base.advance(10_000);
  // 1000 ppm of 10 s is 10 ms; -50% of 10 s is -5 s.
  assert.equal(ahead.nowMs(), 1_015_010);
  assert.equal(behind.nowMs(), 1_003_000);
  assert.equal(ahead.monotonicMs(), base.monotonicMs());
  assert.equal(behind.monotonicMs(), base.monotonicMs());
});

test('a slow clock never goes backwards; a drift that would stop it is refused', () => {
  const base = new ManualClock(0);
  const slow = new SkewedClock(base, { offsetMs: 0, driftPpm: -999_999 });
  let last = slow.nowMs();
  for (let i = 0; i < 1000; i++) {
    base.advance(7);
    assert.ok(slow.nowMs() >= last);
    last = slow.nowMs();
  }
  assert.throws(() => new SkewedClock(base, { offsetMs: 0, driftPpm: -1_000_000 }), RangeError);
});

test('skews are drawn within their bounds and replay from the seed', () => {
  const draws = (seed: number) => Array.from({ length: 50 }, ((random) => () => drawSkew(random, 10_000, 1_000))(new SeededRandom(seed)));
  const first = draws(7);
  assert.deepEqual(first, draws(7));
  for (const { offsetMs, driftPpm } of first) {
    assert.ok(Math.abs(offsetMs) <= 10_000 && Number.isInteger(offsetMs));
    assert.ok(Math.abs(driftPpm) <= 1_000 && Number.isInteger(driftPpm));
  }
  assert.ok(first.some(({ offsetMs }) => offsetMs < 0) && first.some(({ offsetMs }) => offsetMs > 0));
  assert.deepEqual(drawSkew(new SeededRandom(1), 0, 0), { offsetMs: 0, driftPpm: 0 });
});

test('a step moves the wall clock forward or back at once, and monotonic time not at all', () => {
  const base = new ManualClock(1_000_000);
  const clock = new SkewedClock(base, { offsetMs: 1_000, driftPpm: 0 });
  clock.step(-30_000);
  assert.equal(clock.nowMs(), 971_000);
  assert.equal(clock.monotonicMs(), 1_000_000);
  base.advance(500);
  clock.step(45_000);
  assert.equal(clock.nowMs(), 1_016_500);
  assert.equal(clock.stepsMs, 15_000);
  assert.equal(clock.monotonicMs(), 1_000_500);
  assert.throws(() => clock.step(0.5), RangeError);
});

test('steps are drawn past NTP\'s 128 ms threshold, both ways, within the bound, and replay', () => {
  const draws = (seed: number) => Array.from({ length: 50 }, ((random) => () => drawStep(random, 30_000))(new SeededRandom(seed)));
  const first = draws(3);
  assert.deepEqual(first, draws(3));
  for (const stepMs of first) assert.ok(Math.abs(stepMs) >= 128 && Math.abs(stepMs) <= 30_000 && Number.isInteger(stepMs));
  assert.ok(first.some((stepMs) => stepMs < 0) && first.some((stepMs) => stepMs > 0));
  assert.throws(() => drawStep(new SeededRandom(1), 100), RangeError);
});
