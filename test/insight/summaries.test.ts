/**
 * Proves the latency histograms behind TotalTimeMs and
 * LogFlushRateAndTimeMs: quantiles within the bucket precision (8 buckets
 * per doubling: under 5% off), 0 while empty, a count that never resets,
 * and windows that rotate when a scrape finds the current one 150 s old,
 * so a value leaves the quantiles two rotations after it was recorded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatencyHistogram } from '../../src/insight/summaries.js';

const PRECISION = 0.05;

function assertNear(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= expected * PRECISION, `${what}: ${actual} is within ${PRECISION * 100}% of ${expected}`);
}

test('quantiles of 1..1000 ms are within the bucket precision, and an empty histogram reads 0', () => {
  const histogram = new LatencyHistogram(() => 0);
  assert.deepEqual(histogram.quantiles([0.5, 0.99]), [0, 0]);
  for (let value = 1; value <= 1000; value++) histogram.record(value);
  const [median, p99, p999] = histogram.quantiles([0.5, 0.99, 0.999]);
  assertNear(median!, 500, 'median');
  assertNear(p99!, 990, 'p99');
  assertNear(p999!, 999, 'p999');
  assert.equal(histogram.count, 1000);
});

test('values below the resolution count as 0, values past the last bucket in it', () => {
  const histogram = new LatencyHistogram(() => 0);
  histogram.record(0);
  histogram.record(0.001);
  assert.deepEqual(histogram.quantiles([0.5, 1]), [0, 0]);
  histogram.record(1e12);
  assert.ok(histogram.quantiles([1])[0]! > 1e6);
});

test('a value leaves the quantiles after two rotations; the count keeps it', () => {
  let nowMs = 0;
  const histogram = new LatencyHistogram(() => nowMs);
  histogram.record(100);
  nowMs = 150_000;
  assertNear(histogram.quantiles([0.5])[0]!, 100, 'after one rotation, in the previous window');
  histogram.record(10);
  nowMs = 300_000;
  assertNear(histogram.quantiles([1])[0]!, 10, 'after two rotations only the later value');
  nowMs = 450_000;
  assert.deepEqual(histogram.quantiles([0.5]), [0]);
  assert.equal(histogram.count, 2);
});
