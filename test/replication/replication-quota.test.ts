/**
 * Replication quotas (Kafka's ReplicationQuotaManager) on a ManualClock:
 * the rate is Kafka's SimpleRate (bytes over the retained samples, over the
 * time since the oldest began, at least one window), replaying the steps of
 * Kafka's ReplicationQuotaManagerTest.shouldExceedQuotaThenReturnBackBelow
 * BoundAsTimePasses; samples idle for the whole span are dropped; the
 * default bound (Long.MAX_VALUE) is never exceeded; the throttled-replicas
 * lists parse as Kafka's TopicConfigHandler parses them (`*`, or the items
 * naming this broker).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/io/clock.js';
import { ReplicationQuotaManager, SimpleRate } from '../../src/replication/replication-quota.js';

function quotaOn(clock: ManualClock, windowCount = 10, windowSizeMs = 1000) {
  return new ReplicationQuotaManager({ windowCount, windowSizeMs }, () => clock.monotonicMs());
}

test('Kafka\'s steps: over the bound, back below as time passes, over again', () => {
  const clock = new ManualClock();
  const started = clock.monotonicMs();
  const rate = new SimpleRate({ windowCount: 10, windowSizeMs: 1000 });
  const quota = new ReplicationQuotaManager({ windowCount: 10, windowSizeMs: 1000 }, () => clock.monotonicMs());
  // The same steps on a bare rate and on the manager, so the rate's value can be read at each.
  const record = (bytes: number) => {
    rate.record(bytes, clock.monotonicMs());
    quota.record(bytes);
  };
  const elapsedS = () => (clock.monotonicMs() - started) / 1000;
  quota.updateQuota(100);
  rate.measure(clock.monotonicMs());
  assert.equal(quota.isQuotaExceeded(), false, 'not exceeded at the start');
  clock.advance(1500);
  record(1);
  assert.equal(quota.isQuotaExceeded(), false);
  record(149);
  assert.equal(quota.isQuotaExceeded(), false, '150 B over 1.5 s');
  record(1);
  assert.equal(rate.measure(clock.monotonicMs()), 151 / elapsedS());
  assert.equal(quota.isQuotaExceeded(), true, '151 B over 1.5 s is above 100 B/s');
  clock.advance(500);
  assert.equal(rate.measure(clock.monotonicMs()), 151 / 2);
  assert.equal(quota.isQuotaExceeded(), false, 'the same bytes over 2 s');
  clock.advance(500);
  record(99);
  assert.equal(rate.measure(clock.monotonicMs()), 250 / 2.5);
  assert.equal(quota.isQuotaExceeded(), false, 'exactly the bound is not above it');
  record(1);
  assert.equal(quota.isQuotaExceeded(), true);
  clock.advance(2000);
  assert.equal(rate.measure(clock.monotonicMs()), 251 / 4.5);
  assert.equal(quota.isQuotaExceeded(), false);
});

test('a first burst is measured over one whole window; samples idle for every window are dropped', () => {
  const clock = new ManualClock();
  const rate = new SimpleRate({ windowCount: 3, windowSizeMs: 1000 });
  rate.record(600, clock.monotonicMs());
  clock.advance(10);
  assert.equal(rate.measure(clock.monotonicMs()), 600, '600 B in 10 ms counts as 600 B over 1 s');
  clock.advance(3000);
  assert.equal(rate.measure(clock.monotonicMs()), 0, 'nothing recorded in the last 3 windows');
});

test('the default bound, Long.MAX_VALUE, is never exceeded', () => {
  const clock = new ManualClock();
  const quota = quotaOn(clock);
  quota.record(Number.MAX_SAFE_INTEGER);
  assert.equal(quota.upperBound, Infinity);
  assert.equal(quota.isQuotaExceeded(), false);
  quota.updateQuota(1000);
  assert.equal(quota.isQuotaExceeded(), true);
});

test('throttled replicas: `*`, or the partitions whose items name this broker', () => {
  const quota = quotaOn(new ManualClock());
  assert.equal(quota.hasThrottledPartitions, false);
  quota.markThrottled('all', ['*'], 1);
  assert.equal(quota.isThrottled({ topic: 'all', partition: 7 }), true);
  assert.equal(quota.isThrottled({ topic: 'other', partition: 0 }), false);
  quota.markThrottled('some', ['0:1', '1:2', '2:1'], 1);
  assert.deepEqual([0, 1, 2, 3].map((partition) => quota.isThrottled({ topic: 'some', partition })), [true, false, true, false]);
  quota.markThrottled('none-here', ['0:2'], 1);
  assert.equal(quota.isThrottled({ topic: 'none-here', partition: 0 }), false);
  quota.markThrottled('some', [], 1);
  assert.equal(quota.isThrottled({ topic: 'some', partition: 0 }), false, 'an empty list lifts the throttle');
  quota.removeThrottle('all');
  assert.equal(quota.hasThrottledPartitions, false);
});
