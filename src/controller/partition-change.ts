/**
 * Kafka's PartitionChangeBuilder: from a partition's registration and a
 * target (ISR, election type), the one PartitionChangeRecord that moves it
 * there, or null when nothing changes. Every leader and ISR change the
 * controller makes goes through here: fencing, unfencing, controlled and
 * unclean shutdown, AlterPartition, ElectLeaders and the leader rebalance.
 *
 * Eligible leader replicas (KIP-966, when `eligible.leader.replicas.version`
 * is 1): when the ISR shrinks below min.insync.replicas, the members that
 * leave it (and had every committed record, since acks=all needed them)
 * move to the ELR instead of being forgotten, and the ISR may become empty.
 * With an empty ISR a member of the ELR can be elected cleanly: it becomes
 * the ISR alone. Once the ISR is back at min.insync.replicas the ELR is
 * cleared. A replica whose broker shut down uncleanly may have lost
 * unflushed records, so it leaves the ELR too. LastKnownElr holds, as
 * Kafka 4.4 keeps it (useLastKnownLeaderInBalancedRecovery), the last
 * leader of a partition whose ISR became empty, the one replica that may be
 * elected when both ISR and ELR are empty (as an unclean election).
 *
 * Leader recovery state (KIP-704): an unclean leader starts RECOVERING and
 * reports RECOVERED through AlterPartition once it may take followers.
 *
 * Reassignment (KIP-455): a target replica list with adding and removing
 * replicas; an ISR that holds every replica staying completes the
 * reassignment first (removing replicas leave replicas and ISR), elections
 * pick from the target replicas, and a replica leaving the list bumps the
 * leader epoch so that it learns it.
 */
import type { PartitionRegistration } from '../metadata/image.js';
import { NO_LEADER_CHANGE, type RecordData } from '../metadata/records.js';
import { maybeCompleteReassignment } from './reassignment-replicas.js';

export const NO_LEADER = -1;

/** Kafka's PartitionChangeBuilder.Election. */
export const Election = {
  /** Elect the first replica when it is in the ISR (or, with an empty ISR, the ELR); else as ONLINE. */
  PREFERRED: 'PREFERRED',
  /** Keep the current leader if it may lead, else the first replica of the ISR (or ELR) that may. */
  ONLINE: 'ONLINE',
  /** As ONLINE, then any live replica, even out of sync (unclean.leader.election.enable). */
  UNCLEAN: 'UNCLEAN',
} as const;
export type Election = (typeof Election)[keyof typeof Election];

/** Kafka's LeaderRecoveryState. */
export const LeaderRecoveryState = { RECOVERED: 0, RECOVERING: 1, NO_CHANGE: -1 } as const;

export interface PartitionChangeOptions {
  /** Whether the broker may lead (registered, unfenced, not shutting down; the caller adds its own exceptions). */
  isAcceptableLeader: (replica: number) => boolean;
  election: Election;
  /** The topic's effective min.insync.replicas (at most its replication factor). */
  minIsr: number;
  elrEnabled: boolean;
  /** The ISR to move to; the current one when absent. */
  targetIsr?: readonly number[];
  /** Replicas whose broker restarted after an unclean shutdown: out of the ELR. */
  uncleanShutdownReplicas?: readonly number[];
  /** The recovery state the leader reports (AlterPartition); unchanged when absent. */
  targetLeaderRecoveryState?: number;
  /** The replica list, adding and removing replicas to move to (reassignment); the current ones when absent. */
  targetReplicas?: readonly number[];
  targetAdding?: readonly number[];
  targetRemoving?: readonly number[];
  /** The log directory of a replica new to the partition (Kafka's DefaultDirProvider). */
  defaultDirectory?: (replica: number) => string;
}

/** What the change moves to: ISR and assignment, after a reassignment the ISR completes. */
interface Target {
  isr: number[];
  replicas: number[];
  adding: number[];
  removing: number[];
}

export type PartitionChangeData = RecordData<'PartitionChangeRecord'>;

interface ElectionResult {
  leader: number;
  unclean: boolean;
}

/** The PartitionChangeRecord's data for the change, or null when it would change nothing. */
export function buildPartitionChange(partition: PartitionRegistration, options: PartitionChangeOptions): PartitionChangeData | null {
  const target = completeReassignmentIfNeeded(partition, options);
  let targetIsr = target.isr;
  let targetElr = targetEligibleReplicas(partition, targetIsr, options);
  const record: PartitionChangeData = {
    partitionId: partition.partition,
    topicId: partition.topicId,
    isr: null,
    leader: NO_LEADER_CHANGE,
    replicas: null,
    removingReplicas: null,
    addingReplicas: null,
    leaderRecoveryState: LeaderRecoveryState.NO_CHANGE,
    directories: null,
    eligibleLeaderReplicas: null,
    lastKnownElr: null,
  };
  const elected = electLeader(partition, { targetIsr, targetElr, targetReplicas: target.replicas, options });
  if (elected.leader !== partition.leader) {
    if (targetElr.includes(elected.leader)) {
      // A clean election from the ELR: the new leader is the whole ISR.
      targetIsr = [elected.leader];
      targetElr = targetElr.filter((replica) => replica !== elected.leader);
    }
    record.leader = elected.leader;
    if (elected.unclean) {
      // Unclean: the ISR is forced to the new leader alone; records may be lost.
      record.isr = [elected.leader];
      if (leaderRecoveryStateOf(partition) !== LeaderRecoveryState.RECOVERING) record.leaderRecoveryState = LeaderRecoveryState.RECOVERING;
    }
  }
  // A replica leaving the list must learn it: the leader epoch moves even when the leader stays.
  if (record.leader === NO_LEADER_CHANGE && !partition.replicas.every((replica) => target.replicas.includes(replica))) record.leader = partition.leader;
  // An unclean election, or ELR disabled, clears the ELR.
  if (record.isr !== null || !options.elrEnabled) targetElr = [];
  if (!sameList(targetElr, partition.elr)) record.eligibleLeaderReplicas = targetElr;
  // With ELR the ISR may become empty; without, its last member stays in it, leaderless.
  if (record.isr === null && (targetIsr.length > 0 || options.elrEnabled) && !sameList(targetIsr, partition.isr)) record.isr = targetIsr;
  maybeUpdateLastKnownLeader(partition, record, options.elrEnabled);
  setAssignmentChanges(partition, record, { target, options });
  if (options.targetLeaderRecoveryState !== undefined && options.targetLeaderRecoveryState !== leaderRecoveryStateOf(partition)) {
    record.leaderRecoveryState = options.targetLeaderRecoveryState;
  }
  return isNoOp(record) ? null : record;
}

/** Kafka's completeReassignmentIfNeeded: the target, with the reassignment done when the target ISR allows it. */
function completeReassignmentIfNeeded(partition: PartitionRegistration, options: PartitionChangeOptions): Target {
  const target: Target = {
    isr: [...(options.targetIsr ?? partition.isr)],
    replicas: [...(options.targetReplicas ?? partition.replicas)],
    adding: [...(options.targetAdding ?? partition.addingReplicas)],
    removing: [...(options.targetRemoving ?? partition.removingReplicas)],
  };
  const completed = maybeCompleteReassignment({ replicas: target.replicas, adding: target.adding, removing: target.removing }, target.isr);
  return completed === null ? target : { ...completed, adding: [], removing: [] };
}

/** Kafka's setAssignmentChanges: replicas (with their directories), adding and removing, where they change. */
function setAssignmentChanges(partition: PartitionRegistration, record: PartitionChangeData, change: { target: Target; options: PartitionChangeOptions }): void {
  const { target, options } = change;
  if (target.replicas.length > 0 && !sameList(target.replicas, partition.replicas)) {
    record.replicas = target.replicas;
    record.directories = target.replicas.map((replica) => {
      const known = partition.directories?.[partition.replicas.indexOf(replica)];
      if (known !== undefined && partition.replicas.includes(replica)) return known;
      if (options.defaultDirectory === undefined) throw new Error(`no directory for new replica ${replica} of ${partition.topicName}-${partition.partition}`);
      return options.defaultDirectory(replica);
    });
  }
  if (!sameList(target.removing, partition.removingReplicas)) record.removingReplicas = target.removing;
  if (!sameList(target.adding, partition.addingReplicas)) record.addingReplicas = target.adding;
}

/** The partition's leader recovery state (RECOVERED when the image does not say). */
export function leaderRecoveryStateOf(partition: PartitionRegistration): number {
  return partition.leaderRecoveryState ?? LeaderRecoveryState.RECOVERED;
}

/**
 * Kafka's maybePopulateTargetElr: with the ISR at min.insync.replicas or
 * more the ELR is empty; below it, the ELR is the old ISR and ELR minus the
 * new ISR and minus replicas that shut down uncleanly.
 */
function targetEligibleReplicas(partition: PartitionRegistration, targetIsr: readonly number[], options: PartitionChangeOptions): number[] {
  if (!options.elrEnabled) return [...partition.elr];
  if (targetIsr.length >= options.minIsr) return [];
  const unclean = options.uncleanShutdownReplicas ?? [];
  // Ascending, the order Kafka's HashSet of broker ids iterates in.
  return unique([...partition.elr, ...partition.isr])
    .filter((replica) => !targetIsr.includes(replica) && !unclean.includes(replica))
    .sort((a, b) => a - b);
}

/** Kafka's electLeader: PREFERRED first tries the preferred replica, then as ONLINE; UNCLEAN falls back to any live replica. */
function electLeader(
  partition: PartitionRegistration,
  target: { targetIsr: readonly number[]; targetElr: readonly number[]; targetReplicas: readonly number[]; options: PartitionChangeOptions },
): ElectionResult {
  const { targetIsr, targetElr, targetReplicas, options } = target;
  // A valid new leader is in the ISR, or in the ELR when the ISR is empty, and may lead.
  const valid = (replica: number): boolean =>
    (targetIsr.includes(replica) || (targetIsr.length === 0 && targetElr.includes(replica))) && options.isAcceptableLeader(replica);
  const preferred = targetReplicas[0];
  if (options.election === Election.PREFERRED && preferred !== undefined && valid(preferred)) return { leader: preferred, unclean: false };
  if (valid(partition.leader)) return { leader: partition.leader, unclean: false };
  const online = targetReplicas.find(valid);
  if (online !== undefined) return { leader: online, unclean: false };
  const lastKnownLeader = partition.lastKnownElr[0];
  const canElectLastKnownLeader =
    options.elrEnabled && targetElr.length === 0 && targetIsr.length === 0 && partition.lastKnownElr.length === 1 && options.isAcceptableLeader(lastKnownLeader!);
  if (canElectLastKnownLeader) return { leader: lastKnownLeader!, unclean: true };
  if (options.election === Election.UNCLEAN) {
    const unclean = targetReplicas.find(options.isAcceptableLeader);
    if (unclean !== undefined) return { leader: unclean, unclean: true };
  }
  return { leader: NO_LEADER, unclean: false };
}

/**
 * Kafka's maybeUpdateLastKnownLeader: the leader of a partition whose ISR
 * becomes empty is remembered (once); LastKnownElr is cleared when the
 * partition has, or keeps, a leader.
 */
function maybeUpdateLastKnownLeader(partition: PartitionRegistration, record: PartitionChangeData, elrEnabled: boolean): void {
  if (!elrEnabled) return;
  const remembered = partition.lastKnownElr.length === 1 && partition.lastKnownElr[0] === partition.leader;
  if (record.isr !== null && record.isr.length === 0 && !remembered) {
    record.lastKnownElr = [partition.leader];
  } else if ((record.leader >= 0 || (partition.leader !== NO_LEADER && record.leader !== NO_LEADER)) && partition.lastKnownElr.length > 0) {
    record.lastKnownElr = [];
  }
}

function isNoOp(record: PartitionChangeData): boolean {
  return (
    record.isr === null &&
    record.leader === NO_LEADER_CHANGE &&
    record.replicas === null &&
    record.removingReplicas === null &&
    record.addingReplicas === null &&
    record.leaderRecoveryState === LeaderRecoveryState.NO_CHANGE &&
    record.directories === null &&
    record.eligibleLeaderReplicas === null &&
    record.lastKnownElr === null
  );
}

function unique(values: readonly number[]): number[] {
  return [...new Set(values)];
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
