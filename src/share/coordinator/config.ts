/**
 * The share coordinator's settings (KIP-932), under Kafka's broker config
 * names (ShareCoordinatorConfig), with Kafka 4.4 defaults.
 */
import type { ConfigSource } from '../../group/config.js';

export interface ShareCoordinatorConfig {
  /** share.coordinator.state.topic.num.partitions */
  stateTopicPartitions: number;
  /** share.coordinator.state.topic.replication.factor */
  stateTopicReplicationFactor: number;
  /** share.coordinator.state.topic.min.isr */
  stateTopicMinIsr: number;
  /** share.coordinator.state.topic.segment.bytes */
  stateTopicSegmentBytes: number;
  /** share.coordinator.snapshot.update.records.per.snapshot: update records between two snapshots of a share partition */
  snapshotUpdateRecordsPerSnapshot: number;
  /** share.coordinator.write.timeout.ms: how long a write to __share_group_state may take */
  writeTimeoutMs: number;
  /** share.coordinator.cold.partition.snapshot.interval.ms: a share partition not written for this long is snapshotted again */
  coldPartitionSnapshotIntervalMs: number;
}

export const DEFAULT_SHARE_COORDINATOR_CONFIG: ShareCoordinatorConfig = {
  stateTopicPartitions: 50,
  stateTopicReplicationFactor: 3,
  stateTopicMinIsr: 2,
  stateTopicSegmentBytes: 104_857_600,
  snapshotUpdateRecordsPerSnapshot: 500,
  writeTimeoutMs: 5000,
  coldPartitionSnapshotIntervalMs: 300_000,
};

export function shareCoordinatorConfigFrom(source: ConfigSource): ShareCoordinatorConfig {
  const d = DEFAULT_SHARE_COORDINATOR_CONFIG;
  const int = (name: string, fallback: number) => source.optionalInt(name) ?? fallback;
  return {
    stateTopicPartitions: int('share.coordinator.state.topic.num.partitions', d.stateTopicPartitions),
    stateTopicReplicationFactor: int('share.coordinator.state.topic.replication.factor', d.stateTopicReplicationFactor),
    stateTopicMinIsr: int('share.coordinator.state.topic.min.isr', d.stateTopicMinIsr),
    stateTopicSegmentBytes: int('share.coordinator.state.topic.segment.bytes', d.stateTopicSegmentBytes),
    snapshotUpdateRecordsPerSnapshot: int('share.coordinator.snapshot.update.records.per.snapshot', d.snapshotUpdateRecordsPerSnapshot),
    writeTimeoutMs: int('share.coordinator.write.timeout.ms', d.writeTimeoutMs),
    coldPartitionSnapshotIntervalMs: int('share.coordinator.cold.partition.snapshot.interval.ms', d.coldPartitionSnapshotIntervalMs),
  };
}

/**
 * The topic configs Kafka gives `__share_group_state`
 * (ShareCoordinatorService.shareGroupStateTopicConfigs): not compacted but
 * kept forever; the coordinator itself deletes records below the oldest
 * snapshot still needed (not done by Spool, see docs/SKIPPED.md).
 */
export function shareGroupStateTopicConfigs(config: ShareCoordinatorConfig): Record<string, string> {
  return {
    'cleanup.policy': 'delete',
    'compression.type': 'producer',
    'segment.bytes': String(config.stateTopicSegmentBytes),
    'min.insync.replicas': String(config.stateTopicMinIsr),
    'retention.ms': '-1',
  };
}
