/**
 * log.cleaner.io.max.bytes.per.second: the cleaner's Throttler, on a manual
 * clock. As Kafka's Throttler, it counts bytes over check periods of 300 ms
 * and, after a period that ran faster than the limit, sleeps until the
 * period's average is back at the limit; a period within the limit, or an
 * unlimited rate, never sleeps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/io/clock.js';
import { Throttler } from '../../../src/storage/cleaner/throttler.js';

/** Lets settled promises run their callbacks (no time passes on the manual clock). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function tracked(promise: Promise<void>): { done: boolean } {
  const state = { done: false };
  void promise.then(() => { state.done = true; });
  return state;
}

test('an unlimited rate never waits', async () => {
  const clock = new ManualClock();
  const throttler = new Throttler(Infinity, { clock, timers: clock });
  for (let i = 0; i < 10; i++) {
    clock.advance(1000);
    const call = tracked(throttler.maybeThrottle(1 << 30));
    await settle();
    assert.equal(call.done, true);
  }
  assert.equal(clock.pendingCount, 0);
});

test('a period faster than the limit sleeps until its average is at the limit, then a new period starts', async () => {
  const clock = new ManualClock();
  const throttler = new Throttler(1000, { clock, timers: clock });
  const first = tracked(throttler.maybeThrottle(100));
  await settle();
  assert.equal(first.done, true, 'within the first 300 ms nothing is checked');

  clock.advance(300);
  // 1000 bytes in 300 ms at 1000 B/s: the period should have lasted 1000 ms, so 700 ms more.
  const second = tracked(throttler.maybeThrottle(900));
  await settle();
  assert.equal(second.done, false);
  clock.advance(699);
  await settle();
  assert.equal(second.done, false, 'still sleeping 1 ms before the period reaches 1000 ms');
  clock.advance(1);
  await settle();
  assert.equal(second.done, true);

  const third = tracked(throttler.maybeThrottle(900));
  await settle();
  assert.equal(third.done, true, 'the sleep ended the period: the next bytes start a new one');
});

test('a period within the limit does not sleep', async () => {
  const clock = new ManualClock();
  const throttler = new Throttler(1000, { clock, timers: clock });
  await throttler.maybeThrottle(100);
  clock.advance(300);
  // 300 bytes in 300 ms is exactly the limit.
  const call = tracked(throttler.maybeThrottle(200));
  await settle();
  assert.equal(call.done, true);
  assert.equal(clock.pendingCount, 0);
});
