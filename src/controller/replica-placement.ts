/**
 * Where a new partition's replicas go (a simplified StripedReplicaPlacer):
 * usable brokers are the registered, unfenced ones not shutting down, in id
 * order; partition p starts at a random offset plus p so leaders spread
 * round-robin, and its followers are the next brokers in the ring (fenced
 * brokers last). Racks are not considered yet.
 */
import type { Random } from '../io/random.js';
import type { MetadataImage } from '../metadata/image.js';

export class InvalidReplicationFactorError extends Error {
  override readonly name = 'InvalidReplicationFactorError';
}

/** Brokers that can take new replicas and lead: registered, unfenced, not in controlled shutdown. */
export function usableBrokers(image: MetadataImage): number[] {
  return [...image.brokers.values()]
    .filter((broker) => !broker.fenced && !broker.inControlledShutdown)
    .map((broker) => broker.id)
    .sort((a, b) => a - b);
}

/** Replica lists for `count` new partitions of `replicationFactor` replicas each; leaders on unfenced brokers. */
export function placeReplicas(
  image: MetadataImage,
  options: { count: number; replicationFactor: number; random: Random },
): number[][] {
  const unfenced = usableBrokers(image);
  const fenced = [...image.brokers.values()].filter((b) => b.fenced && !b.inControlledShutdown).map((b) => b.id).sort((a, b) => a - b);
  const total = unfenced.length + fenced.length;
  if (options.replicationFactor > total) {
    throw new InvalidReplicationFactorError(
      `The target replication factor of ${options.replicationFactor} cannot be reached because only ${total} broker(s) are registered.`,
    );
  }
  if (unfenced.length === 0) throw new InvalidReplicationFactorError('All brokers are currently fenced.');
  const start = options.random.nextInt(unfenced.length);
  const placements: number[][] = [];
  for (let p = 0; p < options.count; p++) {
    // Unfenced brokers first, rotated so leaders spread; fenced ones only to reach the factor.
    const ring = [...unfenced.slice((start + p) % unfenced.length), ...unfenced.slice(0, (start + p) % unfenced.length), ...fenced];
    placements.push(ring.slice(0, options.replicationFactor));
  }
  return placements;
}
