/**
 * The replica sets of a partition reassignment (KIP-455), Kafka's
 * PartitionReassignmentReplicas and PartitionReassignmentRevert: what a
 * target makes of the current replicas (replicas = target then removing,
 * adding = target minus current, removing = current minus target), when an
 * ISR completes it, and what a cancel goes back to. Pure functions of
 * replica lists; partition-change.ts applies them, partition-reassignment.ts
 * serves the APIs.
 */
import type { PartitionRegistration } from '../metadata/image.js';

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
