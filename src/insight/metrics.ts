/**
 * `GET /metrics`: a node's metrics in Prometheus text format, on the
 * listener `metrics.listener` (`http://host:port`, off by default;
 * `spool start --metrics`).
 *
 * Names are Kafka's JMX metrics as the Prometheus JMX exporter's example
 * Kafka rules map them (`kafka.server<type=ReplicaManager,
 * name=UnderReplicatedPartitions><>Value` →
 * `kafka_server_replicamanager_underreplicatedpartitions`; a `...PerSec`
 * meter's Count → `..._total` without the `PerSec`; a histogram's
 * percentiles → a `quantile` label; all lowercased), so dashboards and
 * alerts written for Kafka read Spool unchanged. Consumer lag follows
 * danielqsj/kafka_exporter. Each collector file lists its metrics:
 * request-metrics.ts, broker-topic-metrics.ts, replica-metrics.ts,
 * controller-metrics.ts, group-metrics.ts, raft-metrics.ts, quota-metrics.ts,
 * runtime-metrics.ts.
 *
 * One prom-client Registry per node (several nodes share a process in
 * tests and embedded clusters; the global registry would mix them). Counters
 * on the request and produce paths are plain numbers bumped per request or
 * per batch; gauges are computed when scraped from the state the node
 * already keeps. Concurrent scrapes share one rendering, so a scrape never
 * sees gauges another one is resetting. The families a scrape spends most
 * on write their own text (exposition.ts); prom-client renders the rest.
 */
import { Registry } from 'prom-client';
import type { BrokerConfig } from '../common/config.js';
import type { Clock } from '../io/clock.js';
import { parseHttpListener, textResponse, type HttpListener, type HttpListenerAddress, type HttpNetwork, type HttpRequest, type HttpResponse } from '../io/http.js';
import type { GroupCoordinator } from '../group/coordinator.js';
import type { MetadataImage } from '../metadata/image.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import { Partition } from '../replication/partition.js';
import type { RequestObserver } from '../server/socket-server.js';
import { BrokerTopicMetrics } from './broker-topic-metrics.js';
import { ControllerMetrics } from './controller-metrics.js';
import { renderRegistry } from './exposition.js';
import { GroupMetrics } from './group-metrics.js';
import { RaftMetrics, type RaftMetricsSources } from './raft-metrics.js';
import { QuotaMetrics, type QuotaMetricsSources } from './quota-metrics.js';
import { ReplicaMetrics } from './replica-metrics.js';
import { RequestMetrics } from './request-metrics.js';
import { RuntimeMetrics } from './runtime-metrics.js';

/** The config that turns the metrics listener on. */
export const METRICS_LISTENER_CONFIG = 'metrics.listener';
export const METRICS_PATH = '/metrics';

/** What a node hands its metrics: the parts it runs (null for a role it does not have). */
export interface NodeMetricsSources {
  clock: Clock;
  socketServer: { requestObserver: RequestObserver | null; readonly queuedRequestCount: number };
  replicaManager: ReplicaManager | null;
  groupCoordinator: GroupCoordinator | null;
  image(): MetadataImage;
  /** The controller role, or null on a broker-only node. */
  controller: { isActive(): boolean } | null;
  /** This node's id and its metadata log's Raft client (null while the log is not open). */
  raft?: RaftMetricsSources;
  /** The client quota managers this node runs (byte rates and request time on a broker, mutations on a controller). */
  quotas?: QuotaMetricsSources;
}

interface Refreshable {
  refresh(): void;
}

export class NodeMetrics {
  readonly registry = new Registry();
  private readonly refreshables: Refreshable[] = [];
  private readonly runtime: RuntimeMetrics;
  private rendering: Promise<string> | null = null;

  /** The node's metrics when `metrics.listener` is set, else null; a malformed value throws a ConfigError. */
  static fromConfig(config: BrokerConfig, sources: NodeMetricsSources): NodeMetrics | null {
    const value = config.string(METRICS_LISTENER_CONFIG);
    if (value === null || value === '') return null;
    return new NodeMetrics(parseHttpListener(METRICS_LISTENER_CONFIG, value), sources);
  }

  constructor(
    readonly address: HttpListenerAddress,
    sources: NodeMetricsSources,
  ) {
    const registry = this.registry;
    sources.socketServer.requestObserver = new RequestMetrics(registry, { clock: sources.clock, queuedRequestCount: () => sources.socketServer.queuedRequestCount });
    const replicaManager = sources.replicaManager;
    if (replicaManager !== null) {
      replicaManager.stats = new BrokerTopicMetrics(registry, { clock: sources.clock, topicExists: (topic) => sources.image().topicsByName.has(topic) });
      this.refreshables.push(new ReplicaMetrics(registry, replicaManager));
      const groupCoordinator = sources.groupCoordinator;
      if (groupCoordinator !== null) this.refreshables.push(new GroupMetrics(registry, { groupCoordinator, highWatermark: (topic, partition) => hostedHighWatermark(replicaManager, topic, partition) }));
    }
    const controller = sources.controller;
    if (controller !== null) this.refreshables.push(new ControllerMetrics(registry, { image: sources.image, isActive: () => controller.isActive() }));
    if (sources.raft !== undefined) this.refreshables.push(new RaftMetrics(registry, sources.raft));
    if (sources.quotas !== undefined) this.refreshables.push(new QuotaMetrics(registry, sources.quotas));
    this.runtime = new RuntimeMetrics(registry);
    this.refreshables.push(this.runtime);
  }

  /** Releases what outlives a scrape (the GC observer); the node stopped. */
  stop(): void {
    this.runtime.stop();
  }

  /** The Prometheus text exposition of everything, as of now. */
  render(): Promise<string> {
    if (this.rendering !== null) return this.rendering;
    const rendering = this.renderNow().finally(() => {
      this.rendering = null;
    });
    this.rendering = rendering;
    return rendering;
  }

  private async renderNow(): Promise<string> {
    for (const collector of this.refreshables) collector.refresh();
    return renderRegistry(this.registry);
  }

  /** Serves GET /metrics on `address` through the node's HTTP (port 0 picks a free port: the listener says which). */
  listen(http: HttpNetwork): Promise<HttpListener> {
    return http.listen(this.address, (request) => this.handle(request));
  }

  private async handle(request: HttpRequest): Promise<HttpResponse> {
    if (request.path !== METRICS_PATH) return textResponse(404, `not found: the metrics are at ${METRICS_PATH}\n`);
    if (request.method !== 'GET' && request.method !== 'HEAD') return { ...textResponse(405, 'only GET\n'), headers: { allow: 'GET, HEAD' } };
    return { status: 200, contentType: this.registry.contentType, body: await this.render() };
  }
}

function hostedHighWatermark(replicaManager: ReplicaManager, topic: string, partition: number): number | null {
  const found = replicaManager.getPartitionOrError({ topic, partition });
  return found instanceof Partition ? found.highWatermark : null;
}
