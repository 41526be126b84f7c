/**
 * One topic's partition 0 on a startCluster cluster, for the replication
 * tests on real nodes: as the most advanced running image shows it, and
 * as a node hosts it; the quick-failover settings they start with.
 */
import type { RunningCluster } from '../../src/node/cluster.js';

/** Sessions and lag bounds short enough that a killed node is fenced and dropped from the ISR in seconds; no rebalancing behind a test's back. */
export const QUICK_FAILOVER_CONFIG = {
  'broker.session.timeout.ms': 2000,
  'broker.heartbeat.interval.ms': 200,
  'replica.lag.time.max.ms': 2000,
  'replica.fetch.backoff.ms': 100,
  'auto.leader.rebalance.enable': false,
} as const;

/** The partition's registration in the most advanced image of the running nodes. */
export function partitionOf(cluster: RunningCluster, topic: string) {
  const images = cluster.nodes.filter((node) => node.running).map((node) => node.node.metadata.image).sort((a, b) => b.offset - a.offset);
  return images[0]?.topicsByName.get(topic)?.partitions.get(0);
}

/** The node's hosted Partition, or null. */
export function hosted(cluster: RunningCluster, nodeId: number, topic: string) {
  return cluster.node(nodeId).node.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === topic && p.topicPartition.partition === 0) ?? null;
}
