/**
 * The Node.js process under the node: prom-client's default metrics
 * (`process_*`, heap spaces) registered into this node's registry, two
 * under prom-client's names but counted here (GC durations by kind in
 * gc-metrics.ts: prom-client's GC collector is the one default collector
 * with a cost per event; `nodejs_eventloop_lag_*` in event-loop-metrics.ts,
 * without prom-client's costly standard deviation), so the other default
 * collectors are registered one by one, plus event-loop utilisation, which
 * they lack.
 *
 * Utilisation is `performance.eventLoopUtilization()` over the time since
 * this node's previous scrape (since its start for the first): the share of
 * that time the loop spent running callbacks rather than waiting in the
 * poll phase. It is exported twice:
 * - `nodejs_eventloop_utilization` (0..1);
 * - Kafka's `kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent`,
 *   `kafka_network_socketserver_networkprocessoravgidle_percent`, as
 *   1 - utilisation. Kafka's value is the average idle fraction (0..1,
 *   despite the name) of its network threads. Spool has one thread, the
 *   event loop, that does the network I/O and the request handling both,
 *   so its idle fraction is the honest counterpart: near 0 means the
 *   process is saturated, whether by sockets or by handlers. Several
 *   scrapers of one node share the window (each scrape starts a new one).
 */
import { createRequire } from 'node:module';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { ValueGauge } from './exposition.js';
import { EventLoopMetrics } from './event-loop-metrics.js';
import { GcMetrics } from './gc-metrics.js';

/** prom-client's default collectors (lib/defaultMetrics.js) but `gc` and `eventLoopLag`, each a module registering its metrics. */
const DEFAULT_COLLECTORS_KEPT = [
  'processCpuTotal', 'processStartTime', 'osMemoryHeap', 'processOpenFileDescriptors', 'processMaxFileDescriptors',
  'processResources', 'processHandles', 'processRequests', 'heapSizeAndUsed', 'heapSpacesSizeAndUsed', 'version',
] as const;

type DefaultCollector = (registry: Registry, config: Record<string, never>) => void;
const requireHere = createRequire(import.meta.url);

function registerDefaultCollectorsKept(registry: Registry): void {
  for (const name of DEFAULT_COLLECTORS_KEPT) {
    const collector = requireHere(`prom-client/lib/metrics/${name}`) as DefaultCollector;
    collector(registry, {});
  }
}

export class RuntimeMetrics {
  private lastUtilization: EventLoopUtilization = performance.eventLoopUtilization();
  private readonly utilization: ValueGauge;
  private readonly networkIdle: ValueGauge;
  private readonly gc: GcMetrics;
  private readonly eventLoop: EventLoopMetrics;

  constructor(registry: Registry) {
    registerDefaultCollectorsKept(registry);
    this.eventLoop = new EventLoopMetrics(registry);
    this.gc = new GcMetrics(registry);
    this.utilization = new ValueGauge(registry, { name: 'nodejs_eventloop_utilization', help: 'Share of the time since the previous scrape the event loop was busy (performance.eventLoopUtilization)' });
    this.networkIdle = new ValueGauge(registry, {
      name: 'kafka_network_socketserver_networkprocessoravgidle_percent',
      help: 'Idle share (0..1) of the event loop, which does network I/O and request handling, since the previous scrape (NetworkProcessorAvgIdlePercent)',
    });
  }

  refresh(): void {
    const now = performance.eventLoopUtilization();
    const window = performance.eventLoopUtilization(now, this.lastUtilization);
    this.lastUtilization = now;
    this.utilization.set(window.utilization);
    this.networkIdle.set(1 - window.utilization);
  }

  /** Stops observing garbage collections and event-loop delay (the node stopped). */
  stop(): void {
    this.gc.stop();
    this.eventLoop.stop();
  }
}
