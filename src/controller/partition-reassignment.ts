/**
 * Partition reassignment (KIP-455) as Kafka's KRaft controller runs it
 * (ReplicationControlManager.alterPartitionReassignments; the replica sets
 * of PartitionReassignmentReplicas and PartitionReassignmentRevert are in
 * reassignment-replicas.ts).
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
 * Each change goes through Kafka's PartitionChangeBuilder (partition-change.ts),
 * so eligible leader replicas follow the ISR as in every other change; the
 * leader's AlterPartition completes a reassignment there too.
 */
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import type { MetadataImage, PartitionRegistration } from '../metadata/image.js';
import type { MetadataRecord } from '../metadata/records.js';
import type { ControllerContext } from './context.js';
import { partitionChangeOptions, partitionChangeRecord } from './elections.js';
import { buildPartitionChange, Election, type PartitionChangeOptions } from './partition-change.js';
import { isReassignmentInProgress, reassignmentReplicas, revertReassignment } from './reassignment-replicas.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP, result, type ApiError, type ControllerResult } from './result.js';
import { defaultDirectory, isActive, uncleanLeaderElectionEnabled } from './replication-control.js';

// ---- one partition's change

/** The reassignment's target for the change builder (partition-change.ts); what is absent stays as it is. */
interface ReassignmentTarget {
  isr?: readonly number[];
  replicas: readonly number[];
  adding?: readonly number[];
  removing?: readonly number[];
  election: Election;
}

/** The PartitionChangeRecord that takes `partition` to `target` through Kafka's PartitionChangeBuilder, or null when nothing changes. */
function reassignmentChange(context: ControllerContext, partition: PartitionRegistration, target: ReassignmentTarget): MetadataRecord | null {
  const options: PartitionChangeOptions = {
    ...partitionChangeOptions(context, partition),
    isAcceptableLeader: (replica) => isActive(context.image, replica),
    election: target.election,
    targetReplicas: target.replicas,
    defaultDirectory: (replica) => defaultDirectory(context.image, replica),
  };
  if (target.isr !== undefined) options.targetIsr = target.isr;
  if (target.adding !== undefined) options.targetAdding = target.adding;
  if (target.removing !== undefined) options.targetRemoving = target.removing;
  const change = buildPartitionChange(partition, options);
  return change === null ? null : partitionChangeRecord(change);
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
    record: reassignmentChange(context, partition, {
      replicas: reassignment.replicas,
      ...(reassignment.removing.length > 0 ? { removing: reassignment.removing } : {}),
      ...(reassignment.adding.length > 0 ? { adding: reassignment.adding } : {}),
      election: Election.ONLINE,
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
  const election = unclean ? Election.UNCLEAN : Election.ONLINE;
  return { record: reassignmentChange(context, partition, { isr: revert.isr, replicas: revert.replicas, removing: [], adding: [], election }) };
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
