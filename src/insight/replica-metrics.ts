/**
 * Gauges of the partitions this broker hosts, read from the replica manager
 * at each scrape in one walk of the partitions (nothing is added to the
 * produce or fetch path; what is kept between scrapes is each partition's
 * label text, made once per Partition object, see exposition.ts):
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
import type { Registry } from 'prom-client';
import type { TopicPartition } from '../protocol/topic-partition.js';
import type { Partition } from '../replication/partition.js';
import { Labels, LabelsCache, MetricFamily, NO_LABELS, type SampleWriter } from './exposition.js';

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
const PARTITION_GAUGE_NAMES = Object.keys(PARTITION_GAUGES) as PartitionGauge[];

/** A partition's series labels, made once per hosted Partition object. */
interface PartitionLabels {
  readonly partition: Labels;
  /** By replica id, for spool_partition_replica_logendoffset. */
  readonly replicas: Map<number, Labels>;
}

/** What the latest refresh read, which the families write at the scrape that follows it. */
interface Snapshot {
  broker: Record<BrokerGauge, number>;
  /** Per online hosted partition: its labels and each PARTITION_GAUGES value, in PARTITION_GAUGE_NAMES' order. */
  partitions: { labels: Labels; values: number[] }[];
  replicaLogEndOffsets: { labels: Labels; value: number }[];
  purgatory: { produce: PurgatoryCounts; fetch: PurgatoryCounts };
  fetcherLags: { labels: Labels; value: number }[];
}

const PRODUCE_OPERATION = new Labels({ delayedoperation: 'Produce' });
const FETCH_OPERATION = new Labels({ delayedoperation: 'Fetch' });

export class ReplicaMetrics {
  private readonly labelsOf = new WeakMap<Partition, PartitionLabels>();
  /** Fetcher-lag labels by client id, topic and partition, kept while the partition is followed. */
  private readonly fetcherLagLabels = new LabelsCache();
  private snapshot: Snapshot = {
    broker: { partitionCount: 0, leaderCount: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0, offlineReplicas: 0 },
    partitions: [],
    replicaLogEndOffsets: [],
    purgatory: { produce: { delayedCount: 0, watchedCount: 0 }, fetch: { delayedCount: 0, watchedCount: 0 } },
    fetcherLags: [],
  };

  constructor(
    registry: Registry,
    private readonly sources: ReplicaMetricsSources,
  ) {
    const gauge = (name: string, help: string, collect: (writer: SampleWriter) => void) => new MetricFamily(registry, { name, help, type: 'gauge', collect });
    for (const [key, [name, help]] of Object.entries(BROKER_GAUGES)) gauge(name, help, (writer) => writer.sample(NO_LABELS, this.snapshot.broker[key as BrokerGauge]));
    PARTITION_GAUGE_NAMES.forEach((key, index) => {
      const [name, help] = PARTITION_GAUGES[key];
      gauge(name, help, (writer) => {
        for (const row of this.snapshot.partitions) writer.sample(row.labels, row.values[index]!);
      });
    });
    const writeAll = (rows: () => readonly { labels: Labels; value: number }[]) => (writer: SampleWriter) => {
      for (const row of rows()) writer.sample(row.labels, row.value);
    };
    gauge(
      'spool_partition_replica_logendoffset',
      'On the leader: each replica\'s log end offset as the leader knows it (its own, and each follower\'s last fetch offset)',
      writeAll(() => this.snapshot.replicaLogEndOffsets),
    );
    gauge('kafka_server_delayedoperationpurgatory_numdelayedoperations', 'Requests waiting in a purgatory: Produce for acks=all, Fetch for fetch.min.bytes (NumDelayedOperations)', (writer) => {
      writer.sample(PRODUCE_OPERATION, this.snapshot.purgatory.produce.delayedCount);
      writer.sample(FETCH_OPERATION, this.snapshot.purgatory.fetch.delayedCount);
    });
    gauge('kafka_server_delayedoperationpurgatory_purgatorysize', 'Watch entries in a purgatory: a waiting request counts once per partition it waits on (PurgatorySize)', (writer) => {
      writer.sample(PRODUCE_OPERATION, this.snapshot.purgatory.produce.watchedCount);
      writer.sample(FETCH_OPERATION, this.snapshot.purgatory.fetch.watchedCount);
    });
    gauge(
      'kafka_server_fetcherlagmetrics_consumerlag',
      'Per followed partition: leader high watermark at the last fetch answer minus the follower\'s next fetch offset (FetcherLagMetrics ConsumerLag)',
      writeAll(() => this.snapshot.fetcherLags),
    );
  }

  /** Reads every gauge from the partitions as they are now. */
  refresh(): void {
    const snapshot: Snapshot = {
      broker: { partitionCount: 0, leaderCount: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0, offlineReplicas: 0 },
      partitions: [],
      replicaLogEndOffsets: [],
      purgatory: {
        produce: { delayedCount: this.sources.producePurgatory.delayedCount, watchedCount: this.sources.producePurgatory.watchedCount },
        fetch: { delayedCount: this.sources.fetchPurgatory.delayedCount, watchedCount: this.sources.fetchPurgatory.watchedCount },
      },
      fetcherLags: this.readFetcherLags(),
    };
    const counts = snapshot.broker;
    for (const partition of this.sources.hostedPartitions()) {
      counts.partitionCount++;
      if (partition.log.isOffline) {
        counts.offlineReplicas++;
        continue;
      }
      const state = this.readPartition(partition, snapshot);
      if (partition.isLeader) counts.leaderCount++;
      if (state.underReplicated) counts.underReplicated++;
      if (state.underMinIsr) counts.underMinIsr++;
      if (state.atMinIsr) counts.atMinIsr++;
    }
    this.snapshot = snapshot;
  }

  private readFetcherLags(): { labels: Labels; value: number }[] {
    const cache = this.fetcherLagLabels;
    cache.rotate();
    const lags: { labels: Labels; value: number }[] = [];
    for (const { clientId, topicPartition, lag } of this.sources.replicaFetcherManager.fetcherLags()) {
      const { topic, partition } = topicPartition;
      lags.push({ labels: cache.get(`${clientId}\n${topic}\n${partition}`, () => ({ clientid: clientId, topic, partition: String(partition) })), value: lag });
    }
    return lags;
  }

  private partitionLabels(partition: Partition): PartitionLabels {
    let labels = this.labelsOf.get(partition);
    if (labels === undefined) {
      labels = { partition: new Labels({ topic: partition.topicPartition.topic, partition: String(partition.topicPartition.partition) }), replicas: new Map() };
      this.labelsOf.set(partition, labels);
    }
    return labels;
  }

  private replicaLabels(labels: PartitionLabels, replicaId: number): Labels {
    let replica = labels.replicas.get(replicaId);
    if (replica === undefined) {
      replica = labels.partition.with('replica', String(replicaId));
      labels.replicas.set(replicaId, replica);
    }
    return replica;
  }

  private readPartition(partition: Partition, snapshot: Snapshot): { underReplicated: boolean; underMinIsr: boolean; atMinIsr: boolean } {
    const labels = this.partitionLabels(partition);
    const log = partition.log;
    const leader = partition.isLeader;
    const isrSize = partition.isr.size;
    const minIsr = partition.config.minInsyncReplicas;
    const state = {
      underReplicated: leader && isrSize < partition.replicas.length,
      underMinIsr: leader && isrSize < minIsr,
      atMinIsr: leader && isrSize === minIsr,
    };
    const values: Record<PartitionGauge, number> = {
      underReplicated: state.underReplicated ? 1 : 0,
      underMinIsr: state.underMinIsr ? 1 : 0,
      atMinIsr: state.atMinIsr ? 1 : 0,
      inSyncReplicas: leader ? isrSize : 0,
      replicas: leader ? partition.replicas.length : 0,
      lastStableOffsetLag: leader ? log.highWatermark - partition.lastStableOffset() : 0,
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
      size: log.sizeBytes,
      numLogSegments: log.logSegments.length,
      highWatermark: log.highWatermark,
    };
    snapshot.partitions.push({ labels: labels.partition, values: PARTITION_GAUGE_NAMES.map((key) => values[key]) });
    if (leader) {
      snapshot.replicaLogEndOffsets.push({ labels: this.replicaLabels(labels, partition.leaderId), value: log.logEndOffset });
      for (const remote of partition.remoteReplicas.values()) {
        if (remote.logEndOffset >= 0) snapshot.replicaLogEndOffsets.push({ labels: this.replicaLabels(labels, remote.brokerId), value: remote.logEndOffset });
      }
    }
    return state;
  }
}
