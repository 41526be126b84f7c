/**
 * Timers behind src/io/clock.ts.
 *
 * Regression (issue 9, Timers): Node fires a setTimeout longer than 2^31−1 ms
 * after 1 ms, so flush.ms, file.delete.delay.ms or a retention check interval
 * of a month ran at once, over and over. The real timers wait such a delay
 * out in steps (checked under node:test's mock timers, which reproduce
 * Node's overflow). Both implementations refuse a delay that is negative,
 * NaN or infinite: "never" is the caller's business, not a timer's.
 */
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, realEnv } from '../../src/io/env.js';

const TIMEOUT_MS_MAX = 2 ** 31 - 1;

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

test('real timers: a delay beyond 2^31−1 ms fires when it is due, not after 1 ms', () => {
  const delayMs = 3 * TIMEOUT_MS_MAX + 5;
  let fired = 0;
  realEnv.timers.schedule(delayMs, () => fired++);
  mock.timers.tick(10);
  assert.equal(fired, 0);
  // Node's mock timers run a timer set by a firing one only on a later tick: advance step by step.
  mock.timers.tick(TIMEOUT_MS_MAX - 10);
  mock.timers.tick(TIMEOUT_MS_MAX);
  mock.timers.tick(TIMEOUT_MS_MAX);
  mock.timers.tick(4);
  assert.equal(fired, 0);
  mock.timers.tick(1);
  assert.equal(fired, 1);
  for (let step = 0; step < 4; step++) mock.timers.tick(TIMEOUT_MS_MAX);
  assert.equal(fired, 1);
});

test('real timers: a long delay is cancelled in any of its steps', () => {
  let fired = 0;
  const handle = realEnv.timers.schedule(2 * TIMEOUT_MS_MAX, () => fired++);
  mock.timers.tick(TIMEOUT_MS_MAX);
  mock.timers.tick(1);
  handle.cancel();
  mock.timers.tick(TIMEOUT_MS_MAX);
  mock.timers.tick(TIMEOUT_MS_MAX);
  assert.equal(fired, 0);
});

test('real timers: delays up to 2^31−1 ms fire once, on time', () => {
  let fired = 0;
  realEnv.timers.schedule(TIMEOUT_MS_MAX, () => fired++);
  realEnv.timers.schedule(0, () => fired++);
  mock.timers.tick(0);
  assert.equal(fired, 1);
  mock.timers.tick(TIMEOUT_MS_MAX - 1);
  assert.equal(fired, 1);
  mock.timers.tick(1);
  assert.equal(fired, 2);
});

for (const [name, timers] of [
  ['real timers', realEnv.timers],
  ['ManualClock', new ManualClock(0)],
] as const) {
  test(`${name} refuse a negative, NaN or infinite delay`, () => {
    for (const delayMs of [-1, NaN, Infinity, -Infinity]) {
      assert.throws(() => timers.schedule(delayMs, () => {}), /timer delay/, String(delayMs));
    }
  });
}

test('ManualClock fires a delay beyond 2^31−1 ms exactly when due', () => {
  const clock = new ManualClock(0);
  let fired = 0;
  clock.schedule(2 ** 40, () => fired++);
  clock.advance(2 ** 40 - 1);
  assert.equal(fired, 0);
  clock.advance(1);
  assert.equal(fired, 1);
});
