/**
 * `nodejs_gc_duration_seconds`: garbage collection pauses by kind (major,
 * minor, incremental, weakcb), the histogram prom-client's default metrics
 * export under that name, with its buckets, counted here instead.
 *
 * prom-client's own collector observes each collection through a labelled
 * histogram: a label object built and hashed per GC. Small records make
 * many young-generation collections, and under the 100-byte produce
 * benchmark that bookkeeping was the largest single cost of the metrics
 * (0.7% of the broker's CPU, docs/PERFORMANCE.md). Here a collection costs
 * a bucket search and three additions in per-kind arrays; the labels and
 * the cumulative buckets are built at a scrape. Every entry of a batch the
 * observer delivers is counted (prom-client's reads only the first).
 *
 * One observer per node; it is disconnected when the node stops.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import type { Registry } from 'prom-client';

export const GC_METRIC_NAME = 'nodejs_gc_duration_seconds';
/** prom-client's default GC buckets, in seconds. */
const BUCKETS_S = [0.001, 0.01, 0.1, 1, 2, 5] as const;

const KIND_NAMES = new Map<number, string>([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/** One kind's collections: how many fell in each bucket (not cumulative; the last slot is +Inf), their count and total seconds. */
interface KindCounts {
  readonly kind: string;
  readonly inBucket: number[];
  count: number;
  sumS: number;
}

/** A sample of prom-client's exposition: what Registry.metrics() renders from a metric's get(). */
interface ExposedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
}

export class GcMetrics {
  private readonly kinds = new Map<number, KindCounts>();
  private readonly observer: PerformanceObserver;

  constructor(registry: Registry) {
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.record(entry);
    });
    this.observer.observe({ entryTypes: ['gc'] });
    const metrics = this;
    // A metric of prom-client's shape (name, help, type, get, reset), rendered by the registry like its own histograms.
    const metric = {
      name: GC_METRIC_NAME,
      help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({ name: GC_METRIC_NAME, help: metric.help, type: 'histogram', aggregator: 'sum', values: metrics.exposed() }),
      reset: () => metrics.kinds.clear(),
    };
    registry.registerMetric(metric as never);
  }

  private record(entry: PerformanceEntry): void {
    const kindCode = (entry as { detail?: { kind?: number } }).detail?.kind ?? -1;
    let counts = this.kinds.get(kindCode);
    if (counts === undefined) {
      counts = { kind: KIND_NAMES.get(kindCode) ?? 'unknown', inBucket: new Array<number>(BUCKETS_S.length + 1).fill(0), count: 0, sumS: 0 };
      this.kinds.set(kindCode, counts);
    }
    const seconds = entry.duration / 1000;
    let bucket = 0;
    while (bucket < BUCKETS_S.length && seconds > BUCKETS_S[bucket]!) bucket++;
    counts.inBucket[bucket]!++;
    counts.count++;
    counts.sumS += seconds;
  }

  /** The `_bucket` (cumulative, `le`), `_sum` and `_count` samples per kind, as prom-client exposes a histogram. */
  private exposed(): ExposedValue[] {
    const values: ExposedValue[] = [];
    for (const counts of this.kinds.values()) {
      let cumulative = 0;
      BUCKETS_S.forEach((bound, index) => {
        cumulative += counts.inBucket[index]!;
        values.push({ value: cumulative, labels: { le: bound, kind: counts.kind }, metricName: `${GC_METRIC_NAME}_bucket` });
      });
      values.push({ value: counts.count, labels: { le: '+Inf', kind: counts.kind }, metricName: `${GC_METRIC_NAME}_bucket` });
      values.push({ value: counts.sumS, labels: { kind: counts.kind }, metricName: `${GC_METRIC_NAME}_sum` });
      values.push({ value: counts.count, labels: { kind: counts.kind }, metricName: `${GC_METRIC_NAME}_count` });
    }
    return values;
  }

  stop(): void {
    this.observer.disconnect();
  }
}
