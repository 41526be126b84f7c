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
import { Gauge, type Registry } from 'prom-client';
import type { GroupCoordinator } from '../group/coordinator.js';
import type { GroupCoordinatorShard } from '../group/shard.js';
import { ClassicGroupState } from '../group/classic-group.js';
import { ConsumerGroupState } from '../group/consumer-group.js';

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

export class GroupMetrics {
  private readonly groupMetadataManager = new Map<string, Gauge>();
  private readonly groupCount: Gauge<'protocol'>;
  private readonly consumerGroupCount: Gauge<'state'>;
  private readonly classicGroupCount: Gauge<'state'>;
  private readonly currentOffset: Gauge<'consumergroup' | 'topic' | 'partition'>;
  private readonly lag: Gauge<'consumergroup' | 'topic' | 'partition'>;
  private readonly lagSum: Gauge<'consumergroup' | 'topic'>;
  private readonly members: Gauge<'consumergroup'>;

  constructor(
    registry: Registry,
    private readonly sources: GroupMetricsSources,
  ) {
    const registers = [registry];
    for (const name of ['numgroups', ...Object.values(CLASSIC_STATE_GAUGES), 'numoffsets']) {
      this.groupMetadataManager.set(name, new Gauge({ name: GROUP_METADATA_MANAGER + name, help: `Classic groups (and committed offsets) this coordinator holds (GroupMetadataManager ${name})`, registers }));
    }
    this.groupCount = new Gauge({ name: `${GROUP_COORDINATOR_METRICS}group_count`, help: 'Groups this coordinator holds, by protocol (group-count)', labelNames: ['protocol'], registers });
    this.consumerGroupCount = new Gauge({ name: `${GROUP_COORDINATOR_METRICS}consumer_group_count`, help: 'KIP-848 consumer groups by state (consumer-group-count)', labelNames: ['state'], registers });
    this.classicGroupCount = new Gauge({ name: `${GROUP_COORDINATOR_METRICS}classic_group_count`, help: 'Classic groups by state (classic-group-count)', labelNames: ['state'], registers });
    this.currentOffset = new Gauge({ name: 'kafka_consumergroup_current_offset', help: 'Committed offset of a group on a partition', labelNames: ['consumergroup', 'topic', 'partition'], registers });
    this.lag = new Gauge({ name: 'kafka_consumergroup_lag', help: 'High watermark minus committed offset (partitions hosted on this node)', labelNames: ['consumergroup', 'topic', 'partition'], registers });
    this.lagSum = new Gauge({ name: 'kafka_consumergroup_lag_sum', help: 'Lag of a group summed over a topic\'s partitions hosted on this node', labelNames: ['consumergroup', 'topic'], registers });
    this.members = new Gauge({ name: 'kafka_consumergroup_members', help: 'Members of a group', labelNames: ['consumergroup'], registers });
  }

  refresh(): void {
    for (const gauge of [this.groupCount, this.consumerGroupCount, this.classicGroupCount, this.currentOffset, this.lag, this.lagSum, this.members]) gauge.reset();
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
        this.members.set({ consumergroup: group.groupId }, group.members.size);
      }
      offsets += this.refreshOffsets(shard);
    }
    let classicGroups = 0;
    for (const [state, count] of classicByState) {
      classicGroups += count;
      this.classicGroupCount.set({ state: state.toLowerCase() }, count);
      const name = CLASSIC_STATE_GAUGES[state];
      if (name !== undefined) this.groupMetadataManager.get(name)!.set(count);
    }
    let consumerGroups = 0;
    for (const [state, count] of consumerByState) {
      consumerGroups += count;
      this.consumerGroupCount.set({ state: state.toLowerCase() }, count);
    }
    this.groupMetadataManager.get('numgroups')!.set(classicGroups);
    this.groupMetadataManager.get('numoffsets')!.set(offsets);
    this.groupCount.set({ protocol: 'classic' }, classicGroups);
    this.groupCount.set({ protocol: 'consumer' }, consumerGroups);
  }

  /** The shard's committed offsets and their lag; returns how many offsets it holds. */
  private refreshOffsets(shard: GroupCoordinatorShard): number {
    let offsets = 0;
    for (const groupId of shard.offsets.groupIds()) {
      for (const [topic, partitions] of shard.offsets.groupOffsets(groupId) ?? []) {
        let lagSum = 0;
        let hosted = false;
        for (const [partition, committed] of partitions) {
          offsets++;
          const labels = { consumergroup: groupId, topic, partition: String(partition) };
          this.currentOffset.set(labels, committed.committedOffset);
          const highWatermark = this.sources.highWatermark(topic, partition);
          if (highWatermark === null || committed.committedOffset < 0) continue;
          const lag = Math.max(0, highWatermark - committed.committedOffset);
          this.lag.set(labels, lag);
          lagSum += lag;
          hosted = true;
        }
        if (hosted) this.lagSum.set({ consumergroup: groupId, topic }, lagSum);
      }
    }
    return offsets;
  }
}
