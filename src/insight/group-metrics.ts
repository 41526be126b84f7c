/**
 * Group gauges, read at each scrape from the shards of the group
 * coordinator this node runs (the `__consumer_offsets` partitions it leads):
 *
 * - Kafka 4's group coordinator: kafka.coordinator.group GroupMetadataManager
 *   NumGroups, NumGroupsPreparingRebalance, NumGroupsCompletingRebalance,
 *   NumGroupsStable, NumGroupsDead, NumGroupsEmpty (classic groups) and
 *   NumOffsets → `kafka_coordinator_group_groupmetadatamanager_<name>`; and
 *   its Kafka metrics `kafka.server:type=group-coordinator-metrics`
 *   group-count{protocol}, consumer-group-count{state} (KIP-848) and
 *   classic-group-count{state}, which the JMX exporter's default naming
 *   makes `kafka_server_group_coordinator_metrics_<name>` with the state
 *   lowercased;
 * - lag as danielqsj/kafka_exporter names it:
 *   `kafka_consumergroup_current_offset{consumergroup,topic,partition}` (the
 *   committed offset), `kafka_consumergroup_lag{...}` (high watermark minus
 *   committed offset, not below 0), `kafka_consumergroup_lag_sum
 *   {consumergroup,topic}` and `kafka_consumergroup_members{consumergroup}`.
 *   The high watermark is this node's replica's: exact on the leader, a
 *   fetch behind on a follower; a partition this node does not host gets a
 *   current offset and no lag (another node's scrape cannot supply it).
 */
import type { Registry } from 'prom-client';
import type { GroupCoordinator } from '../group/coordinator.js';
import type { GroupCoordinatorShard } from '../group/shard.js';
import { ClassicGroupState } from '../group/classic-group.js';
import { ConsumerGroupState } from '../group/consumer-group.js';
import { Labels, LabelsCache, MetricFamily, ValueGauge } from './exposition.js';

export interface GroupMetricsSources {
  groupCoordinator: GroupCoordinator;
  /** The high watermark of a partition this node hosts (online), else null. */
  highWatermark(topic: string, partition: number): number | null;
}

const CLASSIC_STATE_GAUGES: Readonly<Record<string, string>> = {
  [ClassicGroupState.PREPARING_REBALANCE]: 'numgroupspreparingrebalance',
  [ClassicGroupState.COMPLETING_REBALANCE]: 'numgroupscompletingrebalance',
  [ClassicGroupState.STABLE]: 'numgroupsstable',
  [ClassicGroupState.DEAD]: 'numgroupsdead',
  [ClassicGroupState.EMPTY]: 'numgroupsempty',
};

const GROUP_METADATA_MANAGER = 'kafka_coordinator_group_groupmetadatamanager_';
const GROUP_COORDINATOR_METRICS = 'kafka_server_group_coordinator_metrics_';

interface Sample {
  labels: Labels;
  value: number;
}

/** The labelled families and their help, in registration order. */
const FAMILIES = {
  groupCount: [`${GROUP_COORDINATOR_METRICS}group_count`, 'Groups this coordinator holds, by protocol (group-count)'],
  consumerGroupCount: [`${GROUP_COORDINATOR_METRICS}consumer_group_count`, 'KIP-848 consumer groups by state (consumer-group-count)'],
  classicGroupCount: [`${GROUP_COORDINATOR_METRICS}classic_group_count`, 'Classic groups by state (classic-group-count)'],
  currentOffset: ['kafka_consumergroup_current_offset', 'Committed offset of a group on a partition'],
  lag: ['kafka_consumergroup_lag', 'High watermark minus committed offset (partitions hosted on this node)'],
  lagSum: ['kafka_consumergroup_lag_sum', 'Lag of a group summed over a topic\'s partitions hosted on this node'],
  members: ['kafka_consumergroup_members', 'Members of a group'],
} as const;

type Family = keyof typeof FAMILIES;

function emptySnapshot(): Record<Family, Sample[]> {
  return { groupCount: [], consumerGroupCount: [], classicGroupCount: [], currentOffset: [], lag: [], lagSum: [], members: [] };
}

const PROTOCOL_LABELS = { classic: new Labels({ protocol: 'classic' }), consumer: new Labels({ protocol: 'consumer' }) };
const stateLabels = (states: Record<string, string>) => new Map(Object.values(states).map((state) => [state, new Labels({ state: state.toLowerCase() })]));
const CLASSIC_STATE_LABELS = stateLabels(ClassicGroupState);
const CONSUMER_STATE_LABELS = stateLabels(ConsumerGroupState);

export class GroupMetrics {
  private readonly groupMetadataManager = new Map<string, ValueGauge>();
  /** What the latest refresh read, written by the families at the scrape. */
  private snapshot = emptySnapshot();
  /** Labels of the group, group-topic and group-topic-partition series, kept while they exist. */
  private readonly labels = new LabelsCache();

  constructor(
    registry: Registry,
    private readonly sources: GroupMetricsSources,
  ) {
    for (const name of ['numgroups', ...Object.values(CLASSIC_STATE_GAUGES), 'numoffsets']) {
      this.groupMetadataManager.set(name, new ValueGauge(registry, { name: GROUP_METADATA_MANAGER + name, help: `Classic groups (and committed offsets) this coordinator holds (GroupMetadataManager ${name})` }));
    }
    for (const [family, [name, help]] of Object.entries(FAMILIES)) {
      new MetricFamily(registry, {
        name,
        help,
        type: 'gauge',
        collect: (writer) => {
          for (const sample of this.snapshot[family as Family]) writer.sample(sample.labels, sample.value);
        },
      });
    }
  }

  refresh(): void {
    const snapshot = emptySnapshot();
    this.labels.rotate();
    const classicByState = new Map<string, number>(Object.values(ClassicGroupState).map((state) => [state, 0]));
    const consumerByState = new Map<string, number>(Object.values(ConsumerGroupState).map((state) => [state, 0]));
    let offsets = 0;
    const runtime = this.sources.groupCoordinator.runtime;
    for (const partition of runtime.activePartitions()) {
      const shard = runtime.shard(partition);
      if (shard === undefined) continue;
      for (const group of shard.groups.values()) {
        const byState = group.type === 'classic' ? classicByState : consumerByState;
        byState.set(group.state, (byState.get(group.state) ?? 0) + 1);
        snapshot.members.push({ labels: this.labels.get(group.groupId, () => ({ consumergroup: group.groupId })), value: group.members.size });
      }
      offsets += this.readOffsets(shard, snapshot);
    }
    let classicGroups = 0;
    for (const [state, count] of classicByState) {
      classicGroups += count;
      snapshot.classicGroupCount.push({ labels: CLASSIC_STATE_LABELS.get(state) ?? new Labels({ state: state.toLowerCase() }), value: count });
      const name = CLASSIC_STATE_GAUGES[state];
      if (name !== undefined) this.groupMetadataManager.get(name)!.set(count);
    }
    let consumerGroups = 0;
    for (const [state, count] of consumerByState) {
      consumerGroups += count;
      snapshot.consumerGroupCount.push({ labels: CONSUMER_STATE_LABELS.get(state) ?? new Labels({ state: state.toLowerCase() }), value: count });
    }
    this.groupMetadataManager.get('numgroups')!.set(classicGroups);
    this.groupMetadataManager.get('numoffsets')!.set(offsets);
    snapshot.groupCount.push({ labels: PROTOCOL_LABELS.classic, value: classicGroups }, { labels: PROTOCOL_LABELS.consumer, value: consumerGroups });
    this.snapshot = snapshot;
  }

  /** The shard's committed offsets and their lag; returns how many offsets it holds. */
  private readOffsets(shard: GroupCoordinatorShard, snapshot: Record<Family, Sample[]>): number {
    let offsets = 0;
    for (const groupId of shard.offsets.groupIds()) {
      for (const [topic, partitions] of shard.offsets.groupOffsets(groupId) ?? []) {
        let lagSum = 0;
        let hosted = false;
        for (const [partition, committed] of partitions) {
          offsets++;
          const labels = this.labels.get(`${groupId}\n${topic}\n${partition}`, () => ({ consumergroup: groupId, topic, partition: String(partition) }));
          snapshot.currentOffset.push({ labels, value: committed.committedOffset });
          const highWatermark = this.sources.highWatermark(topic, partition);
          if (highWatermark === null || committed.committedOffset < 0) continue;
          const lag = Math.max(0, highWatermark - committed.committedOffset);
          snapshot.lag.push({ labels, value: lag });
          lagSum += lag;
          hosted = true;
        }
        if (hosted) snapshot.lagSum.push({ labels: this.labels.get(`${groupId}\n${topic}`, () => ({ consumergroup: groupId, topic })), value: lagSum });
      }
    }
    return offsets;
  }
}
