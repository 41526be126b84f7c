/**
 * Kafka's BrokerTopicStats and the ReplicaManager's ISR meters, as the
 * replica manager reports them (src/replication/replication-stats.ts).
 *
 * The hot path only adds to plain numbers: one counters object per topic,
 * found by one map lookup per batch or per fetched partition, plus the
 * all-topics one. A scrape writes the totals with each topic's label text,
 * made once with its counters (exposition.ts), so producing costs no label
 * hashing and no string building. Only topics in the metadata get counters, and
 * deleted ones lose theirs at the next scrape (as Kafka's removeMetrics
 * drops them), so the map is bounded by the topics that exist.
 *
 * Names, as the Prometheus JMX exporter's Kafka rules map
 * `kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec[,topic=T]`:
 * `kafka_server_brokertopicmetrics_bytesin_total{topic}`, and without the
 * topic label for all topics. ReplicationBytesInPerSec and
 * ReplicationBytesOutPerSec are for all topics only, as Kafka's, and
 * BytesInPerSec / BytesOutPerSec leave replication out: a follower's
 * appends are not counted as bytes in, a follower's fetches not as bytes
 * out.
 */
import type { Registry } from 'prom-client';
import type { Clock } from '../io/clock.js';
import type { IsrUpdate, ReplicationStats } from '../replication/replication-stats.js';
import { Labels, MetricFamily, NO_LABELS } from './exposition.js';
import { LatencyHistogram, registerKafkaHistogram } from './summaries.js';

class TopicCounters {
  /** `{topic}`, or none for the all-topics counters and a topic the metadata does not know. */
  constructor(readonly labels: Labels) {}

  totalProduceRequests = 0;
  bytesIn = 0;
  messagesIn = 0;
  failedProduceRequests = 0;
  totalFetchRequests = 0;
  bytesOut = 0;
  failedFetchRequests = 0;
}

/** The BrokerTopicMetrics meters: metric name suffix and the counter field it reads. */
const TOPIC_METERS = [
  { name: 'totalproducerequests', field: 'totalProduceRequests', help: 'Produce requests per partition (TotalProduceRequestsPerSec)' },
  { name: 'bytesin', field: 'bytesIn', help: 'Bytes appended by producers, as batch bytes (BytesInPerSec)' },
  { name: 'messagesin', field: 'messagesIn', help: 'Records appended by producers (MessagesInPerSec)' },
  { name: 'failedproducerequests', field: 'failedProduceRequests', help: 'Partition appends that failed (FailedProduceRequestsPerSec)' },
  { name: 'totalfetchrequests', field: 'totalFetchRequests', help: 'Fetched partitions, consumers and followers (TotalFetchRequestsPerSec)' },
  { name: 'bytesout', field: 'bytesOut', help: 'Record bytes sent to consumers (BytesOutPerSec)' },
  { name: 'failedfetchrequests', field: 'failedFetchRequests', help: 'Fetched partitions that failed (FailedFetchRequestsPerSec)' },
] as const satisfies readonly { name: string; field: keyof TopicCounters; help: string }[];

export class BrokerTopicMetrics implements ReplicationStats {
  private readonly byTopic = new Map<string, TopicCounters>();
  private readonly allTopics = new TopicCounters(NO_LABELS);
  private replicationBytesOut = 0;
  private replicationBytesInTotal = 0;
  private isrShrinks = 0;
  private isrExpands = 0;
  private failedIsrUpdates = 0;
  private readonly logFlush: LatencyHistogram;
  private readonly topicExists: (topic: string) => boolean;

  /** `topicExists` says which topics have counters (the metadata image's). */
  constructor(registry: Registry, sources: { topicExists: (topic: string) => boolean; clock: Clock }) {
    this.topicExists = sources.topicExists;
    for (const meter of TOPIC_METERS) this.registerTopicMeter(registry, meter);
    this.registerCounter(registry, 'kafka_server_brokertopicmetrics_replicationbytesout_total', 'Record bytes sent to follower replicas (ReplicationBytesOutPerSec)', () => this.replicationBytesOut);
    this.registerCounter(registry, 'kafka_server_brokertopicmetrics_replicationbytesin_total', 'Record bytes this broker appended as a follower, fetched from leaders (ReplicationBytesInPerSec)', () => this.replicationBytesInTotal);
    this.registerCounter(registry, 'kafka_server_replicamanager_isrshrinks_total', 'ISR shrinks this broker committed as leader (IsrShrinksPerSec)', () => this.isrShrinks);
    this.registerCounter(registry, 'kafka_server_replicamanager_isrexpands_total', 'ISR expansions this broker committed as leader (IsrExpandsPerSec)', () => this.isrExpands);
    this.registerCounter(registry, 'kafka_server_replicamanager_failedisrupdates_total', 'ISR changes the controller refused or that could not be sent (FailedIsrUpdatesPerSec)', () => this.failedIsrUpdates);
    const logFlush = new LatencyHistogram(() => sources.clock.monotonicMs());
    this.logFlush = logFlush;
    registerKafkaHistogram(registry, {
      name: 'kafka_log_logflushstats_logflushrateandtimems',
      help: 'Time of log flushes that fsynced data, in ms (LogFlushRateAndTimeMs)',
      histograms: () => [{ labels: NO_LABELS, histogram: logFlush }],
    });
  }

  /** The topic's counters; a name the metadata does not know (a produce to a missing topic) counts for all topics only. */
  private topic(name: string): TopicCounters {
    let counters = this.byTopic.get(name);
    if (counters !== undefined) return counters;
    if (!this.topicExists(name)) return new TopicCounters(NO_LABELS);
    counters = new TopicCounters(new Labels({ topic: name }));
    this.byTopic.set(name, counters);
    return counters;
  }

  produceRequest(topic: string): void {
    this.topic(topic).totalProduceRequests++;
    this.allTopics.totalProduceRequests++;
  }

  appended(topic: string, bytes: number, records: number): void {
    const counters = this.topic(topic);
    counters.bytesIn += bytes;
    counters.messagesIn += records;
    this.allTopics.bytesIn += bytes;
    this.allTopics.messagesIn += records;
  }

  failedProduce(topic: string): void {
    this.topic(topic).failedProduceRequests++;
    this.allTopics.failedProduceRequests++;
  }

  fetched(topic: string, bytes: number, options: { fromFollower: boolean }): void {
    const counters = this.topic(topic);
    counters.totalFetchRequests++;
    this.allTopics.totalFetchRequests++;
    // Kafka's updateBytesOut: follower fetches count as replication, for all topics only.
    if (options.fromFollower) this.replicationBytesOut += bytes;
    else {
      counters.bytesOut += bytes;
      this.allTopics.bytesOut += bytes;
    }
  }

  replicationBytesIn(bytes: number): void {
    this.replicationBytesInTotal += bytes;
  }

  failedFetch(topic: string): void {
    this.topic(topic).failedFetchRequests++;
    this.allTopics.failedFetchRequests++;
  }

  isrUpdated(update: IsrUpdate): void {
    if (update === 'shrink') this.isrShrinks++;
    else if (update === 'expand') this.isrExpands++;
    else this.failedIsrUpdates++;
  }

  logFlushed(durationMs: number): void {
    this.logFlush.record(durationMs);
  }

  private registerTopicMeter(registry: Registry, meter: (typeof TOPIC_METERS)[number]): void {
    new MetricFamily(registry, {
      name: `kafka_server_brokertopicmetrics_${meter.name}_total`,
      help: `${meter.help}; without the topic label for all topics`,
      type: 'counter',
      collect: (writer) => {
        this.dropDeletedTopics();
        writer.sample(NO_LABELS, this.allTopics[meter.field]);
        for (const counters of this.byTopic.values()) writer.sample(counters.labels, counters[meter.field]);
      },
    });
  }

  private registerCounter(registry: Registry, name: string, help: string, value: () => number): void {
    new MetricFamily(registry, { name, help, type: 'counter', collect: (writer) => writer.sample(NO_LABELS, value()) });
  }

  private dropDeletedTopics(): void {
    for (const topic of this.byTopic.keys()) if (!this.topicExists(topic)) this.byTopic.delete(topic);
  }
}
