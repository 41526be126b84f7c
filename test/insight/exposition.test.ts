/**
 * Proves exposition.ts writes what prom-client writes for the same samples,
 * byte for byte: HELP (backslash and newline escaped) and TYPE lines, label
 * values escaped (backslash, newline, double quote) in the order given,
 * values as prom-client prints them (Nan, +Inf, -Inf, exponents), a
 * labelled family without samples as its two header lines, and a
 * histogram's `_bucket`/`_sum`/`_count` lines; that a family seen through
 * prom-client's own Registry (metrics(), getMetricsAsJSON) gives the same
 * as the direct rendering; and that the event-loop-delay collector exports
 * prom-client's names but the standard deviation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Gauge, Histogram, Registry } from 'prom-client';
import { EventLoopMetrics } from '../../src/insight/event-loop-metrics.js';
import { Labels, MetricFamily, NO_LABELS, ValueGauge, renderRegistry } from '../../src/insight/exposition.js';

const AWKWARD = 'back\\slash "quoted"\nnext line';
const HELP = 'Help with a back\\slash\nand a second line';
const SERIES = [
  { labels: { topic: 'plain', partition: '0' }, value: 42 },
  { labels: { topic: AWKWARD, partition: '1' }, value: 0.1 },
  { labels: { topic: 'nan', partition: '2' }, value: NaN },
  { labels: { topic: 'inf', partition: '3' }, value: Infinity },
  { labels: { topic: 'minus-inf', partition: '4' }, value: -Infinity },
  { labels: { topic: 'big', partition: '5' }, value: 1e21 },
  { labels: { topic: 'negative', partition: '6' }, value: -3.5 },
] as const;

test('a labelled gauge is the text prom-client writes for it, escapes and special values included', async () => {
  const theirs = new Registry();
  const gauge = new Gauge({ name: 'spool_test_gauge', help: HELP, labelNames: ['topic', 'partition'], registers: [theirs] });
  for (const { labels, value } of SERIES) gauge.set(labels, value);
  new Gauge({ name: 'spool_test_unlabelled', help: 'Set once', registers: [theirs] }).set(7);
  new Gauge({ name: 'spool_test_empty', help: 'No series yet', labelNames: ['topic'], registers: [theirs] });

  const ours = new Registry();
  const labelled = SERIES.map(({ labels, value }) => ({ labels: new Labels(labels), value }));
  new MetricFamily(ours, {
    name: 'spool_test_gauge',
    help: HELP,
    type: 'gauge',
    collect: (writer) => {
      for (const { labels, value } of labelled) writer.sample(labels, value);
    },
  });
  new ValueGauge(ours, { name: 'spool_test_unlabelled', help: 'Set once' }).set(7);
  new MetricFamily(ours, { name: 'spool_test_empty', help: 'No series yet', type: 'gauge', collect: () => undefined });

  const expected = await theirs.metrics();
  assert.ok(expected.includes('topic="back\\\\slash \\"quoted\\"\\nnext line"'), 'prom-client escapes the awkward value');
  assert.ok(expected.includes(`# HELP spool_test_gauge Help with a back\\\\slash\\nand a second line\n`));
  assert.equal(await renderRegistry(ours), expected);
  assert.equal(await ours.metrics(), expected, 'prom-client rendering the family through get() agrees');
});

test('a histogram family writes the _bucket, _sum and _count lines prom-client writes', async () => {
  const theirs = new Registry();
  const histogram = new Histogram({ name: 'spool_test_seconds', help: 'Durations', labelNames: ['kind'], buckets: [0.01, 1], registers: [theirs] });
  for (const value of [0.005, 0.5, 0.5, 3]) histogram.observe({ kind: 'minor' }, value);

  const ours = new Registry();
  const kind = new Labels({ kind: 'minor' });
  const buckets = [['0.01', 1], ['1', 3], ['+Inf', 4]] as const;
  new MetricFamily(ours, {
    name: 'spool_test_seconds',
    help: 'Durations',
    type: 'histogram',
    collect: (writer) => {
      for (const [le, count] of buckets) writer.sample(new Labels({ le, kind: 'minor' }), count, '_bucket');
      writer.sample(kind, 4.005, '_sum');
      writer.sample(kind, 4, '_count');
    },
  });
  assert.equal(await renderRegistry(ours), await theirs.metrics());
});

test('families mixed with prom-client metrics keep registration order, and JSON sees their samples', async () => {
  const registry = new Registry();
  new Gauge({ name: 'spool_test_first', help: 'prom-client', registers: [registry] }).set(1);
  new MetricFamily(registry, { name: 'spool_test_second', help: 'own', type: 'counter', collect: (writer) => writer.sample(new Labels({ request: 'Produce', version: '11' }), 5) });
  new Gauge({ name: 'spool_test_third', help: 'prom-client', registers: [registry] }).set(3);

  const text = await renderRegistry(registry);
  assert.equal(text, await registry.metrics());
  assert.deepEqual(text.split('\n').filter((line) => line.startsWith('# TYPE')), ['# TYPE spool_test_first gauge', '# TYPE spool_test_second counter', '# TYPE spool_test_third gauge']);
  const second = (await registry.getMetricsAsJSON()).find((metric) => metric.name === 'spool_test_second');
  assert.deepEqual(second?.values, [{ value: 5, labels: { request: 'Produce', version: '11' }, metricName: 'spool_test_second' }]);
});

test('Labels.with appends a label after the others, and no labels write no braces', () => {
  const partition = new Labels({ topic: 't', partition: '3' });
  assert.equal(partition.with('replica', '2').text, 'topic="t",partition="3",replica="2"');
  assert.equal(partition.text, 'topic="t",partition="3"', 'the original is unchanged');
  assert.equal(NO_LABELS.text, '');
});

test("the event-loop-delay collector exports prom-client's names but the standard deviation", async () => {
  const registry = new Registry();
  const metrics = new EventLoopMetrics(registry);
  try {
    await renderRegistry(registry);
    // The lag of the setImmediate queued by the first scrape is what the second reports.
    await nextTurn();
    const text = await renderRegistry(registry);
    const names = text.split('\n').filter((line) => line.startsWith('# TYPE')).map((line) => line.split(' ')[2]);
    assert.deepEqual(names, ['min', 'max', 'mean', 'p50', 'p90', 'p99'].reduce((all, reading) => [...all, `nodejs_eventloop_lag_${reading}_seconds`], ['nodejs_eventloop_lag_seconds']));
    const lag = /^nodejs_eventloop_lag_seconds (\S+)$/m.exec(text);
    assert.ok(lag !== null && Number(lag[1]) > 0, 'the lag of the previous scrape is measured');
  } finally {
    metrics.stop();
  }
});
