/**
 * Kafka's Yammer histograms (TotalTimeMs, LogFlushRateAndTimeMs) as the
 * Prometheus JMX exporter's Kafka rules export them: each percentile
 * attribute (`50thPercentile` ... `999thPercentile`) becomes a gauge sample
 * with `quantile="0.50"` ... `quantile="0.999"`, and `Count` a counter
 * `<name>_count`.
 *
 * Recording must be cheap, since TotalTimeMs is recorded for every request:
 * prom-client's Summary (a t-digest per age bucket) costs about 2.5 µs an
 * observation, so a value here only bumps one slot of a fixed log-linear
 * bucket array (8 buckets per doubling from 0.01 ms, so a quantile is
 * within ~5% of the truth; 256 slots reach hours). Quantiles are computed
 * when scraped. Kafka's reservoirs are exponentially decaying, biased to
 * the last five minutes; here the buckets form two windows of
 * WINDOW_MS, rotated when a scrape finds the current one older than that,
 * and quantiles read both (the last 2.5 to 5 minutes while scraped).
 */
import type { Registry } from 'prom-client';
import { MetricFamily, type Labels } from './exposition.js';

/** Kafka's histogram percentiles, as the JMX exporter's `quantile: "0.$N"` spells them. */
export const KAFKA_QUANTILES = [
  { quantile: 0.5, label: '0.50' },
  { quantile: 0.75, label: '0.75' },
  { quantile: 0.95, label: '0.95' },
  { quantile: 0.98, label: '0.98' },
  { quantile: 0.99, label: '0.99' },
  { quantile: 0.999, label: '0.999' },
] as const;

const WINDOW_MS = 150_000;
/** The smallest value told apart from 0, in ms. */
const RESOLUTION_MS = 0.01;
const BUCKETS_PER_DOUBLING = 8;
const BUCKET_COUNT = 256;

function bucketOf(valueMs: number): number {
  const scaled = valueMs / RESOLUTION_MS;
  if (!(scaled >= 1)) return 0;
  return Math.min(BUCKET_COUNT - 1, 1 + Math.floor(Math.log2(scaled) * BUCKETS_PER_DOUBLING));
}

/** A value inside bucket `index` (its geometric middle). */
function valueOfBucket(index: number): number {
  return index === 0 ? 0 : RESOLUTION_MS * 2 ** ((index - 0.5) / BUCKETS_PER_DOUBLING);
}

/** One latency distribution: counts by bucket in two windows, and the all-time count. */
export class LatencyHistogram {
  private current = new Float64Array(BUCKET_COUNT);
  private previous = new Float64Array(BUCKET_COUNT);
  private currentStartMs: number;
  count = 0;

  constructor(private readonly nowMs: () => number) {
    this.currentStartMs = nowMs();
  }

  record(valueMs: number): void {
    this.current[bucketOf(valueMs)]!++;
    this.count++;
  }

  /**
   * The value at each quantile over the two windows (0 while empty); rotates the windows first when due.
   * `wanted` ascending (as KAFKA_QUANTILES): one walk over the buckets answers them all, for a scrape reads every histogram.
   */
  quantiles(wanted: readonly number[]): number[] {
    const nowMs = this.nowMs();
    if (nowMs - this.currentStartMs >= WINDOW_MS) {
      const recycled = this.previous;
      recycled.fill(0);
      this.previous = this.current;
      this.current = recycled;
      this.currentStartMs = nowMs;
    }
    let total = 0;
    for (let index = 0; index < BUCKET_COUNT; index++) total += this.current[index]! + this.previous[index]!;
    const values = new Array<number>(wanted.length).fill(total === 0 ? 0 : valueOfBucket(BUCKET_COUNT - 1));
    if (total === 0) return values;
    let next = 0;
    let seen = 0;
    for (let index = 0; index < BUCKET_COUNT && next < wanted.length; index++) {
      seen += this.current[index]! + this.previous[index]!;
      for (; next < wanted.length && seen >= wanted[next]! * total; next++) values[next] = valueOfBucket(index);
    }
    return values;
  }
}

/** The quantile label sets of each series' labels, made once (KAFKA_QUANTILES' order). */
const quantileLabels = new WeakMap<Labels, Labels[]>();

function withQuantiles(labels: Labels): Labels[] {
  let sets = quantileLabels.get(labels);
  if (sets === undefined) {
    sets = KAFKA_QUANTILES.map((q) => labels.with('quantile', q.label));
    quantileLabels.set(labels, sets);
  }
  return sets;
}

const WANTED_QUANTILES = KAFKA_QUANTILES.map((q) => q.quantile);

/**
 * Registers `<name>{...labels, quantile}` (gauge) and `<name>_count{...labels}`
 * (counter) read from the histograms `histograms()` lists when scraped.
 * Each histogram's `labels` should be kept with it: its quantile label sets
 * are made once per Labels object.
 */
export function registerKafkaHistogram(
  registry: Registry,
  options: { name: string; help: string; histograms: () => Iterable<{ labels: Labels; histogram: LatencyHistogram }> },
): void {
  const { name, help, histograms } = options;
  new MetricFamily(registry, {
    name,
    help: `${help}: percentiles of the last 2.5 to 5 minutes`,
    type: 'gauge',
    collect(writer) {
      for (const { labels, histogram } of histograms()) {
        const values = histogram.quantiles(WANTED_QUANTILES);
        withQuantiles(labels).forEach((quantile, index) => writer.sample(quantile, values[index]!));
      }
    },
  });
  new MetricFamily(registry, {
    name: `${name}_count`,
    help: `${help}: how many were recorded`,
    type: 'counter',
    collect(writer) {
      for (const { labels, histogram } of histograms()) writer.sample(labels, histogram.count);
    },
  });
}
