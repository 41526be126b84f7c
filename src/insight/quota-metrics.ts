/**
 * Client quota metrics, per sensor (the user / client-id pair a quota counts,
 * '' for a side not counted), read from the quota managers at each scrape.
 * Kafka's JMX names kafka.server:type=<Produce|Fetch|Request|ControllerMutation>,
 * user=<user>,client-id=<client-id> with their attributes, Spool's usual
 * mapping (`kafka_server_<type>_<attribute>`, lowercased, `-` as `_`, the
 * tags as labels `user` and `client_id`):
 *
 * - Produce, Fetch: byte-rate (bytes a second, Kafka's Rate over the quota
 *   windows) → `kafka_server_produce_byte_rate`, `kafka_server_fetch_byte_rate`;
 * - Request: request-time (percent of the event loop, see
 *   src/server/client-request-quota.ts) → `kafka_server_request_request_time`;
 * - ControllerMutation: mutation-rate (partitions a second) and tokens (left
 *   in the bucket) → `kafka_server_controllermutation_mutation_rate`,
 *   `kafka_server_controllermutation_tokens`;
 * - each: throttle-time, the mean throttle time (ms) of the throttled
 *   requests in the windows → `kafka_server_<type>_throttle_time`. Spool
 *   records each quota's own throttle time where Kafka records only the one
 *   that won (the larger) for a request throttled by two.
 *
 * A sensor idle for an hour is dropped with its metrics, as Kafka's.
 */
import { Gauge, type Registry } from 'prom-client';
import type { QuotaSensorMetrics } from '../server/client-quota-manager.js';

/** A quota manager, as far as its metrics read it. */
export interface QuotaMetricsSource {
  sensorMetrics(): QuotaSensorMetrics[];
}

/** The node's quota managers (absent: the node has none of that kind). */
export interface QuotaMetricsSources {
  produce?: QuotaMetricsSource;
  fetch?: QuotaMetricsSource;
  request?: QuotaMetricsSource;
  controllerMutation?: QuotaMetricsSource;
}

type Labels = 'user' | 'client_id';

interface Kind {
  source: QuotaMetricsSource;
  value: Gauge<Labels>;
  throttle: Gauge<Labels>;
  tokens: Gauge<Labels> | null;
}

export class QuotaMetrics {
  private readonly kinds: Kind[] = [];

  constructor(registry: Registry, sources: QuotaMetricsSources) {
    const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: ['user', 'client_id'] as const, registers: [registry] });
    const add = (source: QuotaMetricsSource | undefined, type: string, attribute: string, what: string) => {
      if (source === undefined) return;
      this.kinds.push({
        source,
        value: gauge(`kafka_server_${type}_${attribute}`, `${what} per user/client-id (kafka.server type=${type}, ${attribute.replaceAll('_', '-')})`),
        throttle: gauge(`kafka_server_${type}_throttle_time`, `Mean throttle time (ms) of the throttled requests per user/client-id (kafka.server type=${type}, throttle-time)`),
        tokens: type === 'controllermutation' ? gauge('kafka_server_controllermutation_tokens', 'Tokens left in the controller mutation bucket per user/client-id (kafka.server type=ControllerMutation, tokens)') : null,
      });
    };
    add(sources.produce, 'produce', 'byte_rate', 'Produced bytes a second');
    add(sources.fetch, 'fetch', 'byte_rate', 'Fetched bytes a second');
    add(sources.request, 'request', 'request_time', 'Request time, percent of the event loop');
    add(sources.controllerMutation, 'controllermutation', 'mutation_rate', 'Partitions created, added or deleted a second');
  }

  refresh(): void {
    for (const kind of this.kinds) {
      kind.value.reset();
      kind.throttle.reset();
      kind.tokens?.reset();
      for (const sensor of kind.source.sensorMetrics()) {
        const labels = { user: sensor.user, client_id: sensor.clientId };
        kind.value.set(labels, sensor.value);
        kind.throttle.set(labels, sensor.throttleTimeMs);
        if (kind.tokens !== null && sensor.tokens !== undefined) kind.tokens.set(labels, sensor.tokens);
      }
    }
  }
}
