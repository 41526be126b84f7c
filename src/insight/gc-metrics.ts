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
 * a bucket search and three additions in per-kind arrays; the cumulative
 * buckets are summed at a scrape, and written with label text made once
 * per kind (exposition.ts). Every entry of a batch the
 * observer delivers is counted (prom-client's reads only the first).
 *
 * One observer per node; it is disconnected when the node stops.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { Labels, MetricFamily, type SampleWriter } from './exposition.js';

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
  /** `{kind}`, and `{le, kind}` for each bucket (prom-client's label order), +Inf last. */
  readonly labels: Labels;
  readonly bucketLabels: readonly Labels[];
  readonly inBucket: number[];
  count: number;
  sumS: number;
}

export class GcMetrics {
  private readonly kinds = new Map<number, KindCounts>();
  private readonly observer: PerformanceObserver;

  constructor(registry: Registry) {
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.record(entry);
    });
    this.observer.observe({ entryTypes: ['gc'] });
    new MetricFamily(registry, {
      name: GC_METRIC_NAME,
      help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
      type: 'histogram',
      collect: (writer) => this.write(writer),
    });
  }

  private record(entry: PerformanceEntry): void {
    const kindCode = (entry as { detail?: { kind?: number } }).detail?.kind ?? -1;
    let counts = this.kinds.get(kindCode);
    if (counts === undefined) {
      const kind = KIND_NAMES.get(kindCode) ?? 'unknown';
      const bucketLabels = [...BUCKETS_S.map(String), '+Inf'].map((le) => new Labels({ le, kind }));
      counts = { labels: new Labels({ kind }), bucketLabels, inBucket: new Array<number>(BUCKETS_S.length + 1).fill(0), count: 0, sumS: 0 };
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
  private write(writer: SampleWriter): void {
    for (const counts of this.kinds.values()) {
      let cumulative = 0;
      BUCKETS_S.forEach((_, index) => {
        cumulative += counts.inBucket[index]!;
        writer.sample(counts.bucketLabels[index]!, cumulative, '_bucket');
      });
      writer.sample(counts.bucketLabels[BUCKETS_S.length]!, counts.count, '_bucket');
      writer.sample(counts.labels, counts.sumS, '_sum');
      writer.sample(counts.labels, counts.count, '_count');
    }
  }

  stop(): void {
    this.observer.disconnect();
  }
}
