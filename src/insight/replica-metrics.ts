/**
 * Gauges of the partitions this broker hosts, read from the replica manager
 * at each scrape (nothing is kept between scrapes, nothing is added to the
 * produce or fetch path):
 *
 * - kafka.server ReplicaManager: PartitionCount, LeaderCount,
 *   UnderReplicatedPartitions, UnderMinIsrPartitionCount,
 *   AtMinIsrPartitionCount, OfflineReplicaCount →
 *   `kafka_server_replicamanager_<name>`;
 * - kafka.cluster Partition, per partition (non-zero only on its leader, as
 *   Kafka's): UnderReplicated, UnderMinIsr, AtMinIsr, InSyncReplicasCount,
 *   ReplicasCount, LastStableOffsetLag →
 *   `kafka_cluster_partition_<name>{topic,partition}`;
 * - kafka.log Log, per partition: LogStartOffset, LogEndOffset, Size,
 *   NumLogSegments → `kafka_log_log_<name>{topic,partition}`;
 * - kafka.server DelayedOperationPurgatory NumDelayedOperations, for
 *   Produce (acks=all waiting for the ISR) and Fetch (long polls) →
 *   `kafka_server_delayedoperationpurgatory_numdelayedoperations{delayedoperation}`,
 *   and PurgatorySize (watch entries: an operation counts once per
 *   partition it waits on, as Kafka's) →
 *   `kafka_server_delayedoperationpurgatory_purgatorysize{delayedoperation}`;
 * - kafka.server FetcherLagMetrics ConsumerLag, per partition this broker
 *   follows: the leader's high watermark at the fetcher's last answer less
 *   the follower's next fetch offset, at least 0 (Kafka's
 *   AbstractFetcherThread), absent until the first answer →
 *   `kafka_server_fetcherlagmetrics_consumerlag{clientid,topic,partition}`
 *   with clientid `ReplicaFetcherThread-<fetcher id>-<leader id>`.
 *
 * And two of Spool's own, which Kafka has no JMX name for (hence the
 * `spool_` prefix): `spool_partition_highwatermark{topic,partition}` on
 * every replica, and on a leader `spool_partition_replica_logendoffset`
 * {topic,partition,replica} for itself and each follower as last fetched
 * (omitted while a follower has not fetched in this leader epoch), so a
 * lagging follower can be named.
 */
import { Gauge, type Registry } from 'prom-client';
import type { TopicPartition } from '../protocol/topic-partition.js';
import type { Partition } from '../replication/partition.js';

interface PurgatoryCounts {
  readonly delayedCount: number;
  readonly watchedCount: number;
}

export interface ReplicaMetricsSources {
  hostedPartitions(): readonly Partition[];
  readonly producePurgatory: PurgatoryCounts;
  readonly fetchPurgatory: PurgatoryCounts;
  readonly replicaFetcherManager: { fetcherLags(): Iterable<{ clientId: string; topicPartition: TopicPartition; lag: number }> };
}

const BROKER_GAUGES = {
  partitionCount: ['kafka_server_replicamanager_partitioncount', 'Partitions hosted by this broker (PartitionCount)'],
  leaderCount: ['kafka_server_replicamanager_leadercount', 'Partitions this broker leads (LeaderCount)'],
  underReplicated: ['kafka_server_replicamanager_underreplicatedpartitions', 'Led partitions whose ISR is smaller than their replicas (UnderReplicatedPartitions)'],
  underMinIsr: ['kafka_server_replicamanager_underminisrpartitioncount', 'Led partitions whose ISR is below min.insync.replicas (UnderMinIsrPartitionCount)'],
  atMinIsr: ['kafka_server_replicamanager_atminisrpartitioncount', 'Led partitions whose ISR is exactly min.insync.replicas (AtMinIsrPartitionCount)'],
  offlineReplicas: ['kafka_server_replicamanager_offlinereplicacount', 'Hosted partitions whose log directory is offline (OfflineReplicaCount)'],
} as const;

const PARTITION_GAUGES = {
  underReplicated: ['kafka_cluster_partition_underreplicated', '1 when this broker leads the partition and its ISR is smaller than its replicas'],
  underMinIsr: ['kafka_cluster_partition_underminisr', '1 when this broker leads the partition and its ISR is below min.insync.replicas'],
  atMinIsr: ['kafka_cluster_partition_atminisr', '1 when this broker leads the partition and its ISR is exactly min.insync.replicas'],
  inSyncReplicas: ['kafka_cluster_partition_insyncreplicascount', 'ISR size on the leader, 0 elsewhere'],
  replicas: ['kafka_cluster_partition_replicascount', 'Replica count on the leader, 0 elsewhere'],
  lastStableOffsetLag: ['kafka_cluster_partition_laststableoffsetlag', 'High watermark minus last stable offset on the leader (open transactions hold it back)'],
  logStartOffset: ['kafka_log_log_logstartoffset', 'First offset of the local log'],
  logEndOffset: ['kafka_log_log_logendoffset', 'Offset after the last record of the local log'],
  size: ['kafka_log_log_size', 'Bytes of the local log segments'],
  numLogSegments: ['kafka_log_log_numlogsegments', 'Segments of the local log'],
  highWatermark: ['spool_partition_highwatermark', 'This replica\'s high watermark (consumers read below it)'],
} as const;

type BrokerGauge = keyof typeof BROKER_GAUGES;
type PartitionGauge = keyof typeof PARTITION_GAUGES;

export class ReplicaMetrics {
  private readonly broker: Record<BrokerGauge, Gauge>;
  private readonly partition: Record<PartitionGauge, Gauge<'topic' | 'partition'>>;
  private readonly replicaLogEndOffset: Gauge<'topic' | 'partition' | 'replica'>;
  private readonly delayedOperations: Gauge<'delayedoperation'>;
  private readonly purgatorySize: Gauge<'delayedoperation'>;
  private readonly fetcherLag: Gauge<'clientid' | 'topic' | 'partition'>;

  constructor(
    registry: Registry,
    private readonly sources: ReplicaMetricsSources,
  ) {
    this.broker = mapValues(BROKER_GAUGES, ([name, help]) => new Gauge({ name, help, registers: [registry] }));
    this.partition = mapValues(PARTITION_GAUGES, ([name, help]) => new Gauge({ name, help, labelNames: ['topic', 'partition'] as const, registers: [registry] }));
    this.replicaLogEndOffset = new Gauge({
      name: 'spool_partition_replica_logendoffset',
      help: 'On the leader: each replica\'s log end offset as the leader knows it (its own, and each follower\'s last fetch offset)',
      labelNames: ['topic', 'partition', 'replica'],
      registers: [registry],
    });
    this.delayedOperations = new Gauge({
      name: 'kafka_server_delayedoperationpurgatory_numdelayedoperations',
      help: 'Requests waiting in a purgatory: Produce for acks=all, Fetch for fetch.min.bytes (NumDelayedOperations)',
      labelNames: ['delayedoperation'],
      registers: [registry],
    });
    this.purgatorySize = new Gauge({
      name: 'kafka_server_delayedoperationpurgatory_purgatorysize',
      help: 'Watch entries in a purgatory: a waiting request counts once per partition it waits on (PurgatorySize)',
      labelNames: ['delayedoperation'],
      registers: [registry],
    });
    this.fetcherLag = new Gauge({
      name: 'kafka_server_fetcherlagmetrics_consumerlag',
      help: 'Per followed partition: leader high watermark at the last fetch answer minus the follower\'s next fetch offset (FetcherLagMetrics ConsumerLag)',
      labelNames: ['clientid', 'topic', 'partition'],
      registers: [registry],
    });
  }

  /** Sets every gauge from the partitions as they are now. */
  refresh(): void {
    for (const gauge of Object.values(this.partition)) gauge.reset();
    this.replicaLogEndOffset.reset();
    const counts: Record<BrokerGauge, number> = { partitionCount: 0, leaderCount: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0, offlineReplicas: 0 };
    for (const partition of this.sources.hostedPartitions()) {
      counts.partitionCount++;
      if (partition.log.isOffline) {
        counts.offlineReplicas++;
        continue;
      }
      const state = this.refreshPartition(partition);
      if (partition.isLeader) counts.leaderCount++;
      if (state.underReplicated) counts.underReplicated++;
      if (state.underMinIsr) counts.underMinIsr++;
      if (state.atMinIsr) counts.atMinIsr++;
    }
    for (const [gauge, value] of Object.entries(counts)) this.broker[gauge as BrokerGauge].set(value);
    this.delayedOperations.set({ delayedoperation: 'Produce' }, this.sources.producePurgatory.delayedCount);
    this.delayedOperations.set({ delayedoperation: 'Fetch' }, this.sources.fetchPurgatory.delayedCount);
    this.purgatorySize.set({ delayedoperation: 'Produce' }, this.sources.producePurgatory.watchedCount);
    this.purgatorySize.set({ delayedoperation: 'Fetch' }, this.sources.fetchPurgatory.watchedCount);
    this.fetcherLag.reset();
    for (const { clientId, topicPartition, lag } of this.sources.replicaFetcherManager.fetcherLags()) {
      this.fetcherLag.set({ clientid: clientId, topic: topicPartition.topic, partition: String(topicPartition.partition) }, lag);
    }
  }

  private refreshPartition(partition: Partition): { underReplicated: boolean; underMinIsr: boolean; atMinIsr: boolean } {
    const labels = { topic: partition.topicPartition.topic, partition: String(partition.topicPartition.partition) };
    const log = partition.log;
    const leader = partition.isLeader;
    const isrSize = partition.isr.size;
    const minIsr = partition.config.minInsyncReplicas;
    const state = {
      underReplicated: leader && isrSize < partition.replicas.length,
      underMinIsr: leader && isrSize < minIsr,
      atMinIsr: leader && isrSize === minIsr,
    };
    const gauges = this.partition;
    gauges.underReplicated.set(labels, state.underReplicated ? 1 : 0);
    gauges.underMinIsr.set(labels, state.underMinIsr ? 1 : 0);
    gauges.atMinIsr.set(labels, state.atMinIsr ? 1 : 0);
    gauges.inSyncReplicas.set(labels, leader ? isrSize : 0);
    gauges.replicas.set(labels, leader ? partition.replicas.length : 0);
    gauges.lastStableOffsetLag.set(labels, leader ? log.highWatermark - partition.lastStableOffset() : 0);
    gauges.logStartOffset.set(labels, log.logStartOffset);
    gauges.logEndOffset.set(labels, log.logEndOffset);
    gauges.size.set(labels, log.sizeBytes);
    gauges.numLogSegments.set(labels, log.logSegments.length);
    gauges.highWatermark.set(labels, log.highWatermark);
    if (leader) {
      this.replicaLogEndOffset.set({ ...labels, replica: String(partition.leaderId) }, log.logEndOffset);
      for (const remote of partition.remoteReplicas.values()) {
        if (remote.logEndOffset >= 0) this.replicaLogEndOffset.set({ ...labels, replica: String(remote.brokerId) }, remote.logEndOffset);
      }
    }
    return state;
  }
}

function mapValues<K extends string, V, W>(record: Readonly<Record<K, V>>, map: (value: V) => W): Record<K, W> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value as V)])) as Record<K, W>;
}
