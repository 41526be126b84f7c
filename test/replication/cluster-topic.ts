/**
 * One topic's partition 0 on a startCluster cluster, for the replication
 * tests on real nodes: as the most advanced running image shows it, and
 * as a node hosts it.
 */
import type { RunningCluster } from '../../src/node/cluster.js';

/** The partition's registration in the most advanced image of the running nodes. */
export function partitionOf(cluster: RunningCluster, topic: string) {
  const images = cluster.nodes.filter((node) => node.running).map((node) => node.node.metadata.image).sort((a, b) => b.offset - a.offset);
  return images[0]?.topicsByName.get(topic)?.partitions.get(0);
}

/** The node's hosted Partition, or null. */
export function hosted(cluster: RunningCluster, nodeId: number, topic: string) {
  return cluster.node(nodeId).node.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === topic && p.topicPartition.partition === 0) ?? null;
}
