/**
 * Event-loop delay under prom-client's default names, counted here
 * (prom-client's eventLoopLag collector, less one gauge):
 *
 * - `nodejs_eventloop_lag_seconds`: how late a setImmediate queued at the
 *   previous scrape ran (0 before then; prom-client's value is as stale);
 * - `nodejs_eventloop_lag_{min,max,mean,p50,p90,p99}_seconds`: of the
 *   delays monitorEventLoopDelay sampled (every 10 ms, prom-client's
 *   default resolution) since the previous scrape, which resets them.
 *
 * Not `nodejs_eventloop_lag_stddev_seconds`: Node computes a standard
 * deviation by walking every bucket of the histogram (about 0.4 ms a
 * scrape, the largest single item of a scrape after the per-partition
 * gauges; the mean, 0.17 ms, is a walk too but is kept, and the three
 * percentiles stop early). docs/SKIPPED.md lists it.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { realClock, realTimers } from '../io/clock.js';
import { MetricFamily, NO_LABELS } from './exposition.js';

/** prom-client's default sampling resolution of monitorEventLoopDelay, in ms. */
const EVENT_LOOP_MONITORING_PRECISION_MS = 10;
const NS_PER_S = 1e9;
const MS_PER_S = 1e3;

/** The histogram readings, prom-client's name and help for each. */
const READINGS = [
  ['nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', (h: IntervalHistogram) => h.min],
  ['nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', (h: IntervalHistogram) => h.max],
  ['nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', (h: IntervalHistogram) => h.mean],
  ['nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(50)],
  ['nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(90)],
  ['nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(99)],
] as const;

export class EventLoopMetrics {
  private readonly histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_MONITORING_PRECISION_MS });
  /** The readings taken at the latest scrape, in seconds (READINGS' order). */
  private readonly readingsS = new Array<number>(READINGS.length).fill(0);
  private lagS = 0;

  constructor(registry: Registry) {
    this.histogram.enable();
    new MetricFamily(registry, {
      name: 'nodejs_eventloop_lag_seconds',
      help: 'Lag of event loop in seconds.',
      type: 'gauge',
      collect: (writer) => {
        this.read();
        writer.sample(NO_LABELS, this.lagS);
      },
    });
    READINGS.forEach(([name, help], index) => {
      new MetricFamily(registry, { name, help, type: 'gauge', collect: (writer) => writer.sample(NO_LABELS, this.readingsS[index]!) });
    });
  }

  /** Takes the readings and resets the histogram; queues the next lag measurement. Runs first in a scrape (its family is registered first). */
  private read(): void {
    // The real process's loop, through the real seams: the metrics listener does not run in the simulator.
    const startMs = realClock.monotonicMs();
    realTimers.defer(() => {
      this.lagS = (realClock.monotonicMs() - startMs) / MS_PER_S;
    });
    READINGS.forEach(([, , reading], index) => {
      this.readingsS[index] = reading(this.histogram) / NS_PER_S;
    });
    this.histogram.reset();
  }

  stop(): void {
    this.histogram.disable();
  }
}
