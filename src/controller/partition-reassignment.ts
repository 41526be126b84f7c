/**
 * Partition reassignment (KIP-455) as Kafka's KRaft controller runs it
 * (ReplicationControlManager.alterPartitionReassignments, with
 * PartitionReassignmentReplicas and PartitionReassignmentRevert).
 *
 * A reassignment moves a partition from its current replicas to target
 * replicas in three stages, each a PartitionChangeRecord:
 *   1. replicas become target + (current − target), with addingReplicas =
 *      target − current and removingReplicas = current − target; the ISR is
 *      left alone. Brokers in `replicas` create the log and follow.
 *   2. the leader adds caught-up replicas to the ISR with AlterPartition.
 *   3. once the ISR minus the removing replicas holds every remaining
 *      replica, the same AlterPartition completes it: replicas and ISR lose
 *      the removing replicas, adding and removing are cleared, and a leader
 *      that was being removed gives way to one from the new ISR.
 * A reassignment that needs no new replica (a reorder, an RF shrink whose
 * survivors are in the ISR) completes in its first record. Dropping a
 * replica from `replicas` bumps the leader epoch, so the removed brokers
 * learn it and stop (and delete their logs).
 *
 * Cancelling (null replicas) reverts to the original replicas: adding
 * replicas leave replicas and ISR; if that empties the ISR the first
 * original replica is taken, an unclean election refused unless
 * unclean.leader.election.enable. NO_REASSIGNMENT_IN_PROGRESS when there is
 * nothing to cancel.
 *
 * Eligible leader replicas are left as they are by these records.
 */
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import type { MetadataImage, PartitionRegistration } from '../metadata/image.js';
import { metadataRecord, NO_LEADER_CHANGE, type MetadataRecord, type RecordData } from '../metadata/records.js';
import type { ControllerContext } from './context.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP, result, type ApiError, type ControllerResult } from './result.js';
import { defaultDirectory, isActive, LEADER_RECOVERY_RECOVERING, NO_LEADER, uncleanLeaderElectionEnabled } from './replication-control.js';

// ---- the replica sets of a reassignment (Kafka's PartitionReassignmentReplicas)

export interface ReassignmentReplicas {
  removing: number[];
  adding: number[];
  /** The target replicas, then the ones being removed. */
  replicas: number[];
}

/** The replica sets that take `current` to `target`. */
export function reassignmentReplicas(current: readonly number[], target: readonly number[]): ReassignmentReplicas {
  const removing = [...new Set(current)].filter((replica) => !target.includes(replica)).sort((a, b) => a - b);
  const adding = [...new Set(target)].filter((replica) => !current.includes(replica)).sort((a, b) => a - b);
  return { removing, adding, replicas: [...target, ...removing] };
}

export function isReassignmentInProgress(partition: { addingReplicas: readonly number[]; removingReplicas: readonly number[] }): boolean {
  return partition.addingReplicas.length > 0 || partition.removingReplicas.length > 0;
}

/**
 * Kafka's maybeCompleteReassignment: the replicas and ISR once the
 * removing replicas are gone, when the ISR then holds every replica that
 * stays; null while the reassignment must wait (or is not one).
 */
export function maybeCompleteReassignment(reassignment: ReassignmentReplicas, targetIsr: readonly number[]): { replicas: number[]; isr: number[] } | null {
  if (!isReassignmentInProgress({ addingReplicas: reassignment.adding, removingReplicas: reassignment.removing })) return null;
  const staying = (replica: number): boolean => !reassignment.removing.includes(replica);
  const isr = targetIsr.filter(staying);
  const replicas = reassignment.replicas.filter(staying);
  if (isr.length === 0 || replicas.length === 0) return null;
  if (!replicas.every((replica) => isr.includes(replica))) return null;
  return { replicas, isr };
}

/** Kafka's PartitionReassignmentRevert: the replicas and ISR a cancelled reassignment goes back to. */
export function revertReassignment(partition: PartitionRegistration): { replicas: number[]; isr: number[]; unclean: boolean } {
  const replicas = partition.replicas.filter((replica) => !partition.addingReplicas.includes(replica));
  const isr = partition.isr.filter((replica) => !partition.addingReplicas.includes(replica));
  if (isr.length > 0) return { replicas, isr, unclean: false };
  // Only an image that began with an empty replica list could get here.
  if (replicas.length === 0) throw new Error(`${partition.topicName}-${partition.partition}: addingReplicas contains all replicas`);
  return { replicas, isr: [replicas[0]!], unclean: true };
}

// ---- one partition's change (the reassignment part of Kafka's PartitionChangeBuilder)

export interface PartitionChangeTarget {
  isr?: readonly number[];
  replicas?: readonly number[];
  adding?: readonly number[];
  removing?: readonly number[];
  /** Elect outside the ISR when no ISR member can lead (Kafka's Election.UNCLEAN). */
  unclean?: boolean;
}

/**
 * The PartitionChangeRecord that takes `partition` to `target`, or null
 * when nothing changes. As Kafka's PartitionChangeBuilder.build: complete
 * the reassignment if the ISR allows, keep the leader while it is in the
 * ISR and may lead, else elect the first replica that is; bump the leader
 * epoch when a replica leaves; write only the fields that change.
 */
export function buildReassignmentChange(context: ControllerContext, partition: PartitionRegistration, target: PartitionChangeTarget): MetadataRecord | null {
  let isr = [...(target.isr ?? partition.isr)];
  let replicas = [...(target.replicas ?? partition.replicas)];
  let adding = [...(target.adding ?? partition.addingReplicas)];
  let removing = [...(target.removing ?? partition.removingReplicas)];
  const completed = maybeCompleteReassignment({ removing, adding, replicas }, isr);
  if (completed !== null) {
    ({ isr, replicas } = completed);
    adding = [];
    removing = [];
  }
  const fields: globalThis.Partial<RecordData<'PartitionChangeRecord'>> = {};
  const election = electLeader(context.image, partition, { isr, replicas, unclean: target.unclean === true });
  if (election.leader !== partition.leader) {
    fields.leader = election.leader;
    if (election.unclean) Object.assign(fields, { isr: [election.leader], leaderRecoveryState: LEADER_RECOVERY_RECOVERING });
  }
  // A replica leaving must learn it: the leader epoch moves even when the leader stays.
  if (fields.leader === undefined && !partition.replicas.every((replica) => replicas.includes(replica))) fields.leader = partition.leader;
  if (fields.isr === undefined && isr.length > 0 && !sameList(isr, partition.isr)) fields.isr = isr;
  if (replicas.length > 0) {
    const directories = replicas.map((replica) => directoryOf(context.image, partition, replica));
    if (!sameList(directories, partition.directories ?? [])) fields.directories = directories;
    if (!sameList(replicas, partition.replicas)) fields.replicas = replicas;
  }
  if (!sameList(removing, partition.removingReplicas)) fields.removingReplicas = removing;
  if (!sameList(adding, partition.addingReplicas)) fields.addingReplicas = adding;
  if (Object.keys(fields).length === 0) return null;
  return metadataRecord('PartitionChangeRecord', { partitionId: partition.partition, topicId: partition.topicId, ...fields });
}

/** Kafka's electAnyLeader (Election.ONLINE, or UNCLEAN when allowed), without eligible leader replicas. */
function electLeader(image: MetadataImage, partition: PartitionRegistration, target: { isr: readonly number[]; replicas: readonly number[]; unclean: boolean }): { leader: number; unclean: boolean } {
  const valid = (replica: number): boolean => target.isr.includes(replica) && isActive(image, replica);
  if (valid(partition.leader)) return { leader: partition.leader, unclean: false };
  const online = target.replicas.find(valid);
  if (online !== undefined) return { leader: online, unclean: false };
  const unclean = target.unclean ? target.replicas.find((replica) => isActive(image, replica)) : undefined;
  if (unclean !== undefined) return { leader: unclean, unclean: true };
  return { leader: NO_LEADER, unclean: false };
}

/** A replica's directory: the one it has, else its broker's default. */
function directoryOf(image: MetadataImage, partition: PartitionRegistration, replica: number): string {
  const index = partition.replicas.indexOf(replica);
  const known = index >= 0 ? partition.directories?.[index] : undefined;
  return known ?? defaultDirectory(image, replica);
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}

// ---- AlterPartitionReassignments

export interface AlterPartitionReassignmentsRequest {
  /** false (v1+, KIP-860): a target with another replication factor is INVALID_REPLICATION_FACTOR. */
  allowReplicationFactorChange: boolean;
  topics: readonly { name: string; partitions: readonly { partitionIndex: number; replicas: readonly number[] | null }[] }[];
}

export interface ReassignablePartitionResult extends ApiError {
  partitionIndex: number;
}

export interface AlterPartitionReassignmentsReply {
  topics: { name: string; partitions: ReassignablePartitionResult[] }[];
}

/** Kafka's alterPartitionReassignments: each partition is answered on its own; the records are written together. */
export function alterPartitionReassignments(context: ControllerContext, request: AlterPartitionReassignmentsRequest): ControllerResult<AlterPartitionReassignmentsReply> {
  const records: MetadataRecord[] = [];
  const topics: AlterPartitionReassignmentsReply['topics'] = [];
  for (const topic of request.topics) {
    const partitions: ReassignablePartitionResult[] = [];
    topics.push({ name: topic.name, partitions });
    for (const target of topic.partitions) {
      const outcome = alterPartitionReassignment(context, topic.name, target, request.allowReplicationFactorChange);
      if ('errorCode' in outcome) {
        partitions.push({ partitionIndex: target.partitionIndex, ...outcome });
        continue;
      }
      if (outcome.record !== null) records.push(outcome.record);
      partitions.push({ partitionIndex: target.partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null });
    }
  }
  if (records.length > MAX_RECORDS_PER_USER_OP) {
    const refused = (p: ReassignablePartitionResult) => (p.errorCode === ErrorCode.NONE ? { ...p, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE } : p);
    return result([], { topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map(refused) })) });
  }
  return result(records, { topics });
}

function alterPartitionReassignment(
  context: ControllerContext,
  topicName: string,
  target: { partitionIndex: number; replicas: readonly number[] | null },
  allowReplicationFactorChange: boolean,
): { record: MetadataRecord | null } | ApiError {
  const topic = context.image.topicsByName.get(topicName);
  if (topic === undefined) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unable to find a topic named ${topicName}.` };
  const partition = topic.partitions.get(target.partitionIndex);
  if (partition === undefined) {
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unable to find partition ${topicName}:${target.partitionIndex}.` };
  }
  if (target.replicas === null) return cancelPartitionReassignment(context, partition);
  const problem = validateTargetReplicas(context.image, target.replicas) ?? (allowReplicationFactorChange ? null : replicationFactorChange(partition, target.replicas));
  if (problem !== null) return problem;
  const reassignment = reassignmentReplicas(partition.replicas, target.replicas);
  return {
    record: buildReassignmentChange(context, partition, {
      replicas: reassignment.replicas,
      ...(reassignment.removing.length > 0 ? { removing: reassignment.removing } : {}),
      ...(reassignment.adding.length > 0 ? { adding: reassignment.adding } : {}),
    }),
  };
}

function cancelPartitionReassignment(context: ControllerContext, partition: PartitionRegistration): { record: MetadataRecord | null } | ApiError {
  if (!isReassignmentInProgress(partition)) return { errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: errorInfo(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS).message };
  const unclean = uncleanLeaderElectionEnabled(context, partition.topicName);
  const revert = revertReassignment(partition);
  if (revert.unclean && !unclean) {
    return {
      errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      errorMessage: `Unable to revert partition assignment for ${partition.topicName}:${partition.partition} because it would require an unclean leader election.`,
    };
  }
  return { record: buildReassignmentChange(context, partition, { isr: revert.isr, replicas: revert.replicas, removing: [], adding: [], unclean }) };
}

/** Kafka's validateManualPartitionAssignment (brokers checked in id order). */
function validateTargetReplicas(image: MetadataImage, replicas: readonly number[]): ApiError | null {
  const invalid = (message: string): ApiError => ({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: `The manual partition assignment ${message}` });
  if (replicas.length === 0) return invalid('includes an empty replica list.');
  const sorted = [...replicas].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i++) {
    const brokerId = sorted[i]!;
    if (!image.brokers.has(brokerId)) return invalid(`includes broker ${brokerId}, but no such broker is registered.`);
    if (i > 0 && sorted[i - 1] === brokerId) return invalid(`includes the broker ${brokerId} more than once.`);
  }
  return null;
}

/** KIP-860: the replication factor a partition has (its target one while reassigning) against the request's. */
function replicationFactorChange(partition: PartitionRegistration, replicas: readonly number[]): ApiError | null {
  const current = isReassignmentInProgress(partition)
    ? new Set([...partition.replicas, ...partition.addingReplicas].filter((replica) => !partition.removingReplicas.includes(replica))).size
    : partition.replicas.length;
  if (current === replicas.length) return null;
  return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: `The replication factor is changed from ${current} to ${replicas.length}` };
}

// ---- ListPartitionReassignments

export interface OngoingPartitionReassignment {
  partitionIndex: number;
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface OngoingTopicReassignment {
  name: string;
  partitions: OngoingPartitionReassignment[];
}

/**
 * Kafka's listPartitionReassignments: every reassigning partition (null
 * topics), or those of the named partitions that are reassigning; unknown
 * topics and partitions are left out.
 */
export function listPartitionReassignments(image: MetadataImage, topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null): OngoingTopicReassignment[] {
  const wanted = topics ?? [...image.topicsById.values()].map((topic) => ({ name: topic.name, partitionIndexes: [...topic.partitions.keys()].sort((a, b) => a - b) }));
  const listed: OngoingTopicReassignment[] = [];
  for (const request of wanted) {
    const topic = image.topicsByName.get(request.name);
    if (topic === undefined) continue;
    const partitions: OngoingPartitionReassignment[] = [];
    for (const index of request.partitionIndexes) {
      const partition = topic.partitions.get(index);
      if (partition === undefined || !isReassignmentInProgress(partition)) continue;
      partitions.push({ partitionIndex: index, replicas: [...partition.replicas], addingReplicas: [...partition.addingReplicas], removingReplicas: [...partition.removingReplicas] });
    }
    if (partitions.length > 0) listed.push({ name: topic.name, partitions });
  }
  return listed;
}

// ---- AlterPartition during a reassignment

/**
 * The ISR change a leader proposes for a reassigning partition (Kafka's
 * alterPartition through the PartitionChangeBuilder): it may complete the
 * reassignment. Returns the record (null when nothing changes) and the
 * partition as it will be; when the completion moved leadership away from
 * the sender, Kafka answers NEW_LEADER_ELECTED (AlterPartition v2+) and
 * still writes the record.
 */
export function alterIsrOfReassigningPartition(
  context: ControllerContext,
  partition: PartitionRegistration,
  newIsr: readonly number[],
): { record: MetadataRecord | null; errorCode: number; isr: number[]; leader: number; leaderEpoch: number; partitionEpoch: number } {
  const record = buildReassignmentChange(context, partition, { isr: newIsr, unclean: uncleanLeaderElectionEnabled(context, partition.topicName) });
  if (record === null || record.type !== 'PartitionChangeRecord') {
    return { record: null, errorCode: ErrorCode.NONE, isr: [...partition.isr], leader: partition.leader, leaderEpoch: partition.leaderEpoch, partitionEpoch: partition.partitionEpoch };
  }
  const change = record.data;
  const leaderChanged = change.leader !== NO_LEADER_CHANGE;
  const leader = leaderChanged ? change.leader : partition.leader;
  return {
    record,
    errorCode: leader !== partition.leader ? ErrorCode.NEW_LEADER_ELECTED : ErrorCode.NONE,
    isr: change.isr ?? [...partition.isr],
    leader,
    leaderEpoch: leaderChanged ? partition.leaderEpoch + 1 : partition.leaderEpoch,
    partitionEpoch: partition.partitionEpoch + 1,
  };
}
