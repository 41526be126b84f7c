/**
 * The Node.js process under the node: prom-client's default metrics
 * (`process_*`, `nodejs_eventloop_lag_*` from monitorEventLoopDelay, heap
 * spaces, GC durations by kind) registered into this node's registry, plus
 * event-loop utilisation, which they lack.
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
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';

export class RuntimeMetrics {
  private lastUtilization: EventLoopUtilization = performance.eventLoopUtilization();
  private readonly utilization: Gauge;
  private readonly networkIdle: Gauge;

  constructor(registry: Registry) {
    collectDefaultMetrics({ register: registry });
    const registers = [registry];
    this.utilization = new Gauge({ name: 'nodejs_eventloop_utilization', help: 'Share of the time since the previous scrape the event loop was busy (performance.eventLoopUtilization)', registers });
    this.networkIdle = new Gauge({
      name: 'kafka_network_socketserver_networkprocessoravgidle_percent',
      help: 'Idle share (0..1) of the event loop, which does network I/O and request handling, since the previous scrape (NetworkProcessorAvgIdlePercent)',
      registers,
    });
  }

  refresh(): void {
    const now = performance.eventLoopUtilization();
    const window = performance.eventLoopUtilization(now, this.lastUtilization);
    this.lastUtilization = now;
    this.utilization.set(window.utilization);
    this.networkIdle.set(1 - window.utilization);
  }
}
