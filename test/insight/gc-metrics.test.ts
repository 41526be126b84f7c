/**
 * Proves gc-metrics.ts exposes garbage collections as prom-client's
 * `nodejs_gc_duration_seconds` histogram: a forced full collection shows as
 * a `major` one, the buckets are cumulative up to `+Inf` = `_count`, and
 * the text is what Prometheus parses (one HELP, one TYPE histogram).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { GC_METRIC_NAME, GcMetrics } from '../../src/insight/gc-metrics.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
/** Event-loop turns the observer may take to deliver the collection's entry. */
const TURNS_MAX = 10_000;

function samplesOf(text: string, suffix: string, kind: string): { le: string | undefined; value: number }[] {
  const pattern = new RegExp(`^${GC_METRIC_NAME}${suffix}\\{(?:le="([^"]+)",)?kind="${kind}"\\} (\\S+)$`);
  return text.split('\n').flatMap((line) => {
    const match = pattern.exec(line);
    return match === null ? [] : [{ le: match[1], value: Number(match[2]) }];
  });
}

test('a forced full collection is counted as major, in cumulative buckets that end at +Inf = _count', async () => {
  const registry = new Registry();
  const metrics = new GcMetrics(registry);
  try {
    collectGarbage();
    let text = await registry.metrics();
    for (let i = 0; i < TURNS_MAX && samplesOf(text, '_count', 'major').length === 0; i++) {
      await nextTurn();
      text = await registry.metrics();
    }
    assert.equal(text.split('\n').filter((line) => line === `# TYPE ${GC_METRIC_NAME} histogram`).length, 1);
    const [count] = samplesOf(text, '_count', 'major');
    assert.ok(count !== undefined && count.value >= 1, 'the collection is counted');
    const [sum] = samplesOf(text, '_sum', 'major');
    assert.ok(sum !== undefined && sum.value > 0, 'its duration is summed');
    const buckets = samplesOf(text, '_bucket', 'major');
    assert.deepEqual(buckets.map((b) => b.le), ['0.001', '0.01', '0.1', '1', '2', '5', '+Inf']);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value, 'buckets are cumulative');
    assert.equal(buckets.at(-1)!.value, count.value);
  } finally {
    metrics.stop();
  }
});
