/**
 * Leader elections run by the controller (Kafka's ReplicationControlManager
 * electLeaders, maybeBalancePartitionLeaders and the AlterPartition change),
 * each a pure function of the replayed image returning records plus a
 * response; partition-change.ts decides each partition's change.
 */
import { isElrEnabled } from '../metadata/features.js';
import type { PartitionRegistration } from '../metadata/image.js';
import { ELR_RECORD_VERSION, metadataRecord, NO_LEADER_CHANGE, type MetadataRecord } from '../metadata/records.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ControllerContext } from './context.js';
import { Election, buildPartitionChange, leaderRecoveryStateOf, type PartitionChangeData } from './partition-change.js';
import type { AlterPartitionPartitionResult, AlterPartitionRequest } from './replication-control.js';
import { NO_LEADER, generateLeaderAndIsrUpdates, isActive, partitionsWithBrokerInElr, partitionsWithBrokerInIsr, uncleanLeaderElectionEnabled } from './replication-control.js';
import { result, type ControllerResult } from './result.js';

/** The topic's min.insync.replicas: its override, else the cluster's dynamic default, else the static config; at most its replication factor. */
export function effectiveMinIsr(context: ControllerContext, partition: PartitionRegistration): number {
  const name = 'min.insync.replicas';
  const value = context.image.topicsByName.get(partition.topicName)?.configs.get(name) ?? context.image.brokerConfigs.get('')?.get(name);
  const minIsr = value !== undefined ? Number(value) : context.config.int(name);
  return Math.min(minIsr, partition.replicas.length);
}

/** What every change of the partition reads from the cluster: min.insync.replicas and whether ELR is on. */
export function partitionChangeOptions(context: ControllerContext, partition: PartitionRegistration): { minIsr: number; elrEnabled: boolean } {
  return { minIsr: effectiveMinIsr(context, partition), elrEnabled: isElrEnabled(context.image.features) };
}

/** The PartitionChangeRecord for a change; v2 when it carries ELR fields (KIP-966). */
export function partitionChangeRecord(data: PartitionChangeData): MetadataRecord {
  const record = metadataRecord('PartitionChangeRecord', data);
  return data.eligibleLeaderReplicas !== null || data.lastKnownElr !== null ? { ...record, version: ELR_RECORD_VERSION } : record;
}

/** The partition as it is after the change is replayed (Kafka's PartitionRegistration.merge), for answers given before replay. */
export function mergePartitionChange(partition: PartitionRegistration, change: PartitionChangeData): PartitionRegistration {
  const leaderChanged = change.leader !== NO_LEADER_CHANGE;
  return {
    ...partition,
    isr: change.isr ?? partition.isr,
    elr: change.eligibleLeaderReplicas ?? partition.elr,
    lastKnownElr: change.lastKnownElr ?? partition.lastKnownElr,
    leader: leaderChanged ? change.leader : partition.leader,
    leaderEpoch: leaderChanged ? partition.leaderEpoch + 1 : partition.leaderEpoch,
    partitionEpoch: partition.partitionEpoch + 1,
    leaderRecoveryState: change.leaderRecoveryState === -1 ? leaderRecoveryStateOf(partition) : change.leaderRecoveryState,
  };
}

type AlterPartitionData = AlterPartitionRequest['topics'][number]['partitions'][number];

/**
 * The accepted ISR proposal of a leader, through the change builder: an ISR
 * shrinking below min.insync.replicas moves members to the ELR, one
 * reaching it clears the ELR, and a RECOVERED report ends leader recovery.
 * A change that moves the leader elsewhere (the leader is shutting down)
 * is answered NEW_LEADER_ELECTED, as Kafka does.
 */
export function alterPartitionChange(
  context: ControllerContext,
  partition: PartitionRegistration,
  data: AlterPartitionData,
): ControllerResult<AlterPartitionPartitionResult> {
  const change = buildPartitionChange(partition, {
    ...partitionChangeOptions(context, partition),
    isAcceptableLeader: (replica) => isActive(context.image, replica),
    election: uncleanLeaderElectionEnabled(context, partition.topicName) ? Election.UNCLEAN : Election.ONLINE,
    targetIsr: data.newIsrWithEpochs.map((member) => member.brokerId),
    targetLeaderRecoveryState: data.leaderRecoveryState,
  });
  if (change === null) return result([], alterPartitionAnswer(partition, ErrorCode.NONE));
  const after = mergePartitionChange(partition, change);
  const leaderMoved = change.leader !== NO_LEADER_CHANGE && change.leader !== partition.leader;
  return result([partitionChangeRecord(change)], alterPartitionAnswer(after, leaderMoved ? ErrorCode.NEW_LEADER_ELECTED : ErrorCode.NONE));
}

function alterPartitionAnswer(partition: PartitionRegistration, errorCode: number): AlterPartitionPartitionResult {
  if (errorCode !== ErrorCode.NONE) {
    return { partitionIndex: partition.partition, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 };
  }
  return {
    partitionIndex: partition.partition,
    errorCode,
    leaderId: partition.leader,
    leaderEpoch: partition.leaderEpoch,
    isr: [...partition.isr],
    leaderRecoveryState: leaderRecoveryStateOf(partition),
    partitionEpoch: partition.partitionEpoch,
  };
}

/**
 * Kafka 4.4's handleBrokerShutdown, for a new incarnation of a broker: it
 * leaves every ISR and leadership. With ELR on, a broker that did not shut
 * down cleanly (KIP-966: the previousBrokerEpoch it registers with, read
 * from its clean-shutdown marker, is not its registered epoch) may have
 * lost unflushed records, so it leaves every ELR too.
 */
export function brokerShutdownRecords(context: ControllerContext, brokerId: number, options: { cleanShutdown: boolean }): MetadataRecord[] {
  const { image } = context;
  if (!isElrEnabled(image.features) || options.cleanShutdown) {
    return generateLeaderAndIsrUpdates(context, { brokerToRemove: brokerId, brokerToAdd: NO_LEADER }, partitionsWithBrokerInIsr(image, brokerId));
  }
  const unclean = { brokerToRemove: NO_LEADER, brokerToAdd: NO_LEADER, brokerWithUncleanShutdown: brokerId };
  return [
    ...generateLeaderAndIsrUpdates(context, unclean, partitionsWithBrokerInIsr(image, brokerId)),
    ...generateLeaderAndIsrUpdates(context, unclean, partitionsWithBrokerInElr(image, brokerId)),
  ];
}
