/**
 * Leader elections run by the controller (Kafka's ReplicationControlManager
 * electLeaders, maybeBalancePartitionLeaders, the AlterPartition change and
 * a new incarnation's shutdown handling),
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
import { NO_LEADER, generateLeaderAndIsrUpdates, isActive, partitionsWithBrokerInElr, partitionsWithBrokerInIsr, partitionsWithNoLeader, uncleanLeaderElectionEnabled } from './replication-control.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP, result, type ControllerResult } from './result.js';

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

// ---- ElectLeaders

/** Kafka's ElectionType (ElectLeaders v1+): 0 PREFERRED, 1 UNCLEAN. */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;

export interface ElectLeadersRequest {
  electionType: number;
  /** Null: every partition of every topic. */
  topicPartitions: readonly { topic: string; partitions: readonly number[] }[] | null;
}

export interface ElectLeadersPartitionResult {
  partitionId: number;
  errorCode: number;
  errorMessage: string | null;
}

export interface ElectLeadersReply {
  /** INVALID_REQUEST for an unknown election type, with no results. */
  errorCode: number;
  replicaElectionResults: { topic: string; partitionResult: ElectLeadersPartitionResult[] }[];
}

/**
 * Kafka's ReplicationControlManager.electLeaders: per partition,
 * ELECTION_NOT_NEEDED when a PREFERRED election finds the preferred replica
 * leading or an UNCLEAN one finds a leader; else the election's record, or
 * PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE when it
 * changes nothing. For every partition (null topics) those needing no
 * election are left out of the answer, as Kafka does.
 */
export function electLeaders(context: ControllerContext, request: ElectLeadersRequest): ControllerResult<ElectLeadersReply> {
  if (request.electionType !== ElectionType.PREFERRED && request.electionType !== ElectionType.UNCLEAN) {
    return result([], { errorCode: ErrorCode.INVALID_REQUEST, replicaElectionResults: [] });
  }
  const records: MetadataRecord[] = [];
  const all = request.topicPartitions === null;
  const wanted = request.topicPartitions ?? [...context.image.topicsByName.values()].map((topic) => ({ topic: topic.name, partitions: [...topic.partitions.keys()] }));
  const replicaElectionResults = wanted.map(({ topic, partitions }) => {
    const partitionResult: ElectLeadersPartitionResult[] = [];
    for (const partitionId of partitions) {
      const outcome = electLeader(context, { topic, partitionId, electionType: request.electionType });
      records.push(...outcome.records);
      if (all && outcome.response.errorCode === ErrorCode.ELECTION_NOT_NEEDED) continue;
      partitionResult.push({ partitionId, ...outcome.response });
    }
    return { topic, partitionResult };
  });
  if (records.length > MAX_RECORDS_PER_USER_OP) {
    const refused = replicaElectionResults.map(({ topic, partitionResult }) => ({
      topic,
      partitionResult: partitionResult.map((p) => (p.errorCode === ErrorCode.NONE ? { ...p, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE } : p)),
    }));
    return result([], { errorCode: ErrorCode.NONE, replicaElectionResults: refused });
  }
  return result(records, { errorCode: ErrorCode.NONE, replicaElectionResults });
}

/** Kafka's electLeader for one partition. */
function electLeader(
  context: ControllerContext,
  target: { topic: string; partitionId: number; electionType: number },
): ControllerResult<{ errorCode: number; errorMessage: string | null }> {
  const refused = (errorCode: number, errorMessage: string | null = null) => result([], { errorCode, errorMessage });
  const topic = context.image.topicsByName.get(target.topic);
  if (topic === undefined) return refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `No such topic as ${target.topic}`);
  const partition = topic.partitions.get(target.partitionId);
  if (partition === undefined) return refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `No such partition as ${target.topic}-${target.partitionId}`);
  const preferred = target.electionType === ElectionType.PREFERRED;
  if (preferred ? hasPreferredLeader(partition) : partition.leader !== NO_LEADER) return refused(ErrorCode.ELECTION_NOT_NEEDED);
  const change = buildPartitionChange(partition, {
    ...partitionChangeOptions(context, partition),
    isAcceptableLeader: (replica) => isActive(context.image, replica),
    election: preferred ? Election.PREFERRED : Election.UNCLEAN,
  });
  if (change === null) return refused(preferred ? ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE : ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
  return result([partitionChangeRecord(change)], { errorCode: ErrorCode.NONE, errorMessage: null });
}

/** True when the first replica leads (Kafka's PartitionRegistration.hasPreferredLeader). */
export function hasPreferredLeader(partition: PartitionRegistration): boolean {
  return partition.replicas.length > 0 && partition.leader === partition.replicas[0];
}

// ---- auto.leader.rebalance.enable

/** Kafka's QuorumController.MAX_ELECTIONS_PER_IMBALANCE: preferred elections one balancing pass writes at most. */
export const MAX_ELECTIONS_PER_IMBALANCE = 1000;

/** True when some partition is not led by its preferred replica (Kafka's arePartitionLeadersImbalanced). */
export function arePartitionLeadersImbalanced(context: Pick<ControllerContext, 'image'>): boolean {
  for (const topic of context.image.topicsById.values()) {
    for (const partition of topic.partitions.values()) if (!hasPreferredLeader(partition)) return true;
  }
  return false;
}

/**
 * Kafka's maybeBalancePartitionLeaders: a PREFERRED election on each
 * partition not led by its preferred replica, at most `electionsMax`; the
 * response says whether the pass stopped at the limit (run again at once).
 */
export function maybeBalancePartitionLeaders(context: ControllerContext, electionsMax = MAX_ELECTIONS_PER_IMBALANCE): ControllerResult<boolean> {
  const records: MetadataRecord[] = [];
  for (const topic of context.image.topicsById.values()) {
    for (const partition of topic.partitions.values()) {
      if (records.length >= electionsMax) return result(records, true);
      if (hasPreferredLeader(partition)) continue;
      const change = buildPartitionChange(partition, {
        ...partitionChangeOptions(context, partition),
        isAcceptableLeader: (replica) => isActive(context.image, replica),
        election: Election.PREFERRED,
      });
      if (change !== null) records.push(partitionChangeRecord(change));
    }
  }
  return result(records, records.length >= electionsMax);
}

/**
 * Kafka's maybeElectUncleanLeaders: an UNCLEAN election on each leaderless
 * partition whose topic has unclean.leader.election.enable (turned on after
 * it lost its leader, say), at most `electionsMax`; the response says
 * whether the pass stopped at the limit.
 */
export function maybeElectUncleanLeaders(context: ControllerContext, electionsMax = MAX_ELECTIONS_PER_IMBALANCE): ControllerResult<boolean> {
  const records: MetadataRecord[] = [];
  for (const partition of partitionsWithNoLeader(context.image)) {
    if (records.length >= electionsMax) return result(records, true);
    if (!uncleanLeaderElectionEnabled(context, partition.topicName)) continue;
    records.push(...electLeader(context, { topic: partition.topicName, partitionId: partition.partition, electionType: ElectionType.UNCLEAN }).records);
  }
  return result(records, records.length >= electionsMax);
}
