/**
 * The group coordinator's settings, under Kafka's broker config names, with
 * Kafka 4.x defaults for names the broker config table does not define.
 */

/** What the coordinator reads from the broker configuration (BrokerConfig satisfies it). */
export interface ConfigSource {
  optionalInt(name: string): number | null;
  list(name: string): string[];
  string(name: string): string | null;
}

export interface GroupCoordinatorConfig {
  /** offsets.topic.num.partitions */
  offsetsTopicPartitions: number;
  /** offsets.topic.replication.factor */
  offsetsTopicReplicationFactor: number;
  /** offsets.topic.segment.bytes */
  offsetsTopicSegmentBytes: number;
  /** offsets.retention.minutes, in ms */
  offsetsRetentionMs: number;
  /** offsets.retention.check.interval.ms */
  offsetsRetentionCheckIntervalMs: number;
  /** offsets.commit.timeout.ms: how long an operation may wait for its records to be written */
  offsetCommitTimeoutMs: number;
  /** offset.metadata.max.bytes (characters of a committed offset's metadata) */
  offsetMetadataMaxBytes: number;
  /** group.initial.rebalance.delay.ms */
  classicGroupInitialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms */
  classicGroupMinSessionTimeoutMs: number;
  /** group.max.session.timeout.ms */
  classicGroupMaxSessionTimeoutMs: number;
  /** group.max.size */
  classicGroupMaxSize: number;
  /** Kafka's fixed 5 minute bound on a new member's parked JoinGroup. */
  classicGroupNewMemberJoinTimeoutMs: number;
  /** group.consumer.session.timeout.ms */
  consumerGroupSessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms */
  consumerGroupHeartbeatIntervalMs: number;
  /** group.consumer.max.size */
  consumerGroupMaxSize: number;
  /** group.consumer.assignors, the first being the default */
  consumerGroupAssignors: string[];
  /** group.coordinator.rebalance.protocols */
  rebalanceProtocols: string[];
  /** group.share.session.timeout.ms (KIP-932) */
  shareGroupSessionTimeoutMs: number;
  /** group.share.heartbeat.interval.ms */
  shareGroupHeartbeatIntervalMs: number;
  /** group.share.max.size */
  shareGroupMaxSize: number;
  /** group.share.initialize.retry.interval.ms: an initialization still pending after this long is asked for again */
  shareGroupInitializeRetryIntervalMs: number;
  /** group.share.record.lock.duration.ms: the default acquisition lock of a share group's records */
  shareGroupRecordLockDurationMs: number;
  /** group.share.delivery.count.limit */
  shareGroupDeliveryCountLimit: number;
  /** group.share.partition.max.record.locks */
  shareGroupPartitionMaxRecordLocks: number;
}

export const DEFAULT_GROUP_COORDINATOR_CONFIG: GroupCoordinatorConfig = {
  offsetsTopicPartitions: 50,
  offsetsTopicReplicationFactor: 3,
  offsetsTopicSegmentBytes: 104857600,
  offsetsRetentionMs: 10080 * 60_000,
  offsetsRetentionCheckIntervalMs: 600_000,
  offsetCommitTimeoutMs: 5000,
  offsetMetadataMaxBytes: 4096,
  classicGroupInitialRebalanceDelayMs: 3000,
  classicGroupMinSessionTimeoutMs: 6000,
  classicGroupMaxSessionTimeoutMs: 1_800_000,
  classicGroupMaxSize: 2147483647,
  classicGroupNewMemberJoinTimeoutMs: 5 * 60_000,
  consumerGroupSessionTimeoutMs: 45000,
  consumerGroupHeartbeatIntervalMs: 5000,
  consumerGroupMaxSize: 2147483647,
  consumerGroupAssignors: ['uniform', 'range'],
  rebalanceProtocols: ['classic', 'consumer', 'streams'],
  shareGroupSessionTimeoutMs: 45000,
  shareGroupHeartbeatIntervalMs: 5000,
  shareGroupMaxSize: 200,
  shareGroupInitializeRetryIntervalMs: 30000,
  shareGroupRecordLockDurationMs: 30000,
  shareGroupDeliveryCountLimit: 5,
  shareGroupPartitionMaxRecordLocks: 2000,
};

export function groupCoordinatorConfigFrom(source: ConfigSource): GroupCoordinatorConfig {
  const d = DEFAULT_GROUP_COORDINATOR_CONFIG;
  const int = (name: string, fallback: number) => source.optionalInt(name) ?? fallback;
  const list = (name: string, fallback: string[]) => {
    const value = source.list(name);
    return value.length > 0 ? value : fallback;
  };
  return {
    offsetsTopicPartitions: int('offsets.topic.num.partitions', d.offsetsTopicPartitions),
    offsetsTopicReplicationFactor: int('offsets.topic.replication.factor', d.offsetsTopicReplicationFactor),
    offsetsTopicSegmentBytes: int('offsets.topic.segment.bytes', d.offsetsTopicSegmentBytes),
    offsetsRetentionMs: int('offsets.retention.minutes', d.offsetsRetentionMs / 60_000) * 60_000,
    offsetsRetentionCheckIntervalMs: int('offsets.retention.check.interval.ms', d.offsetsRetentionCheckIntervalMs),
    offsetCommitTimeoutMs: int('offsets.commit.timeout.ms', d.offsetCommitTimeoutMs),
    offsetMetadataMaxBytes: int('offset.metadata.max.bytes', d.offsetMetadataMaxBytes),
    classicGroupInitialRebalanceDelayMs: int('group.initial.rebalance.delay.ms', d.classicGroupInitialRebalanceDelayMs),
    classicGroupMinSessionTimeoutMs: int('group.min.session.timeout.ms', d.classicGroupMinSessionTimeoutMs),
    classicGroupMaxSessionTimeoutMs: int('group.max.session.timeout.ms', d.classicGroupMaxSessionTimeoutMs),
    classicGroupMaxSize: int('group.max.size', d.classicGroupMaxSize),
    classicGroupNewMemberJoinTimeoutMs: d.classicGroupNewMemberJoinTimeoutMs,
    consumerGroupSessionTimeoutMs: int('group.consumer.session.timeout.ms', d.consumerGroupSessionTimeoutMs),
    consumerGroupHeartbeatIntervalMs: int('group.consumer.heartbeat.interval.ms', d.consumerGroupHeartbeatIntervalMs),
    consumerGroupMaxSize: int('group.consumer.max.size', d.consumerGroupMaxSize),
    consumerGroupAssignors: list('group.consumer.assignors', d.consumerGroupAssignors),
    rebalanceProtocols: list('group.coordinator.rebalance.protocols', d.rebalanceProtocols).map((p) => p.toLowerCase()),
    shareGroupSessionTimeoutMs: int('group.share.session.timeout.ms', d.shareGroupSessionTimeoutMs),
    shareGroupHeartbeatIntervalMs: int('group.share.heartbeat.interval.ms', d.shareGroupHeartbeatIntervalMs),
    shareGroupMaxSize: int('group.share.max.size', d.shareGroupMaxSize),
    shareGroupInitializeRetryIntervalMs: int('group.share.initialize.retry.interval.ms', d.shareGroupInitializeRetryIntervalMs),
    shareGroupRecordLockDurationMs: int('group.share.record.lock.duration.ms', d.shareGroupRecordLockDurationMs),
    shareGroupDeliveryCountLimit: int('group.share.delivery.count.limit', d.shareGroupDeliveryCountLimit),
    shareGroupPartitionMaxRecordLocks: int('group.share.partition.max.record.locks', d.shareGroupPartitionMaxRecordLocks),
  };
}
