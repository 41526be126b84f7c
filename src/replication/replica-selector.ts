/**
 * replica.selector.class (KIP-392, Kafka's ReplicaSelector): which replica
 * a consumer should fetch from, asked by the leader of a partition for each
 * fetch of a v11+ consumer that named its rack (client.rack).
 *
 * Kafka's default (no class) serves every consumer from the leader. The one
 * selector Kafka ships, org.apache.kafka.common.replica.RackAwareReplicaSelector,
 * picks the leader when it is in the client's rack or when no replica is,
 * else the most caught-up replica of that rack: the largest log end offset,
 * then the shortest time since it was last caught up, then the largest
 * broker id (Kafka's ReplicaView.comparator). The leader offers only
 * in-sync replicas holding the fetch offset (ReplicaManager
 * .findPreferredReadReplica). Other class names are refused at start: Spool
 * loads no Java plugins.
 */
import { ConfigError } from '../common/config.js';

/** Kafka's ReplicaView: one candidate replica. */
export interface ReplicaView {
  brokerId: number;
  /** The broker's rack; null when it has none or no endpoint on the client's listener (Kafka's Node.noNode()). */
  rack: string | null;
  logEndOffset: number;
  timeSinceLastCaughtUpMs: number;
}

/** Kafka's ReplicaSelector.select: the chosen replica (the leader to stay on it), or null. */
export type ReplicaSelector = (clientRackId: string, replicas: readonly ReplicaView[], leader: ReplicaView) => ReplicaView | null;

export const RACK_AWARE_REPLICA_SELECTOR = 'org.apache.kafka.common.replica.RackAwareReplicaSelector';

/** Kafka's RackAwareReplicaSelector. */
export const rackAwareReplicaSelector: ReplicaSelector = (clientRackId, replicas, leader) => {
  if (clientRackId === '') return leader;
  let best: ReplicaView | null = null;
  for (const replica of replicas) {
    if (replica.rack !== clientRackId) continue;
    if (replica === leader) return leader;
    if (best === null || compareReplicaViews(replica, best) > 0) best = replica;
  }
  return best ?? leader;
};

/** Kafka's ReplicaView.comparator: log end offset, then time since caught up (shorter is better), then broker id. */
export function compareReplicaViews(a: ReplicaView, b: ReplicaView): number {
  if (a.logEndOffset !== b.logEndOffset) return a.logEndOffset - b.logEndOffset;
  if (a.timeSinceLastCaughtUpMs !== b.timeSinceLastCaughtUpMs) return b.timeSinceLastCaughtUpMs - a.timeSinceLastCaughtUpMs;
  return a.brokerId - b.brokerId;
}

/** The selector named by replica.selector.class; null (leader only) when unset. */
export function replicaSelectorFor(className: string | null): ReplicaSelector | null {
  if (className === null || className === '') return null;
  if (className === RACK_AWARE_REPLICA_SELECTOR) return rackAwareReplicaSelector;
  throw new ConfigError(`Invalid value ${className} for configuration replica.selector.class: Class ${className} could not be found.`);
}
