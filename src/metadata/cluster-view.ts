/**
 * How the metadata image looks to a client on one listener (Kafka's
 * KRaftMetadataCache): the live brokers with that listener's advertised
 * endpoint, a partition's leader / replicas / ISR with Kafka's per-partition
 * errors, and the authorized-operations bit fields Kafka returns when no
 * authorizer is configured (every supported operation).
 */
import { ErrorCode } from '../protocol/errors.js';
import type { MetadataImage, PartitionRegistration } from './image.js';

/** Kafka's "not requested" value for authorized-operations fields. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/** AclOperation codes (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12). */
const TOPIC_OPERATIONS = [3, 4, 5, 6, 7, 8, 10, 11];
const CLUSTER_OPERATIONS = [5, 7, 8, 9, 10, 11, 12];

const bitField = (codes: readonly number[]) => codes.reduce((bits, code) => bits | (1 << code), 0);

/** Every operation Kafka supports on a topic (there is no authorizer, so all are allowed). */
export const TOPIC_AUTHORIZED_OPERATIONS = bitField(TOPIC_OPERATIONS);
export const CLUSTER_AUTHORIZED_OPERATIONS = bitField(CLUSTER_OPERATIONS);

export interface NodeEndpoint {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
  fenced: boolean;
}

/** Registered brokers that have `listenerName`, sorted by id; fenced ones only when asked. */
export function brokersOnListener(image: MetadataImage, listenerName: string, options: { includeFenced?: boolean } = {}): NodeEndpoint[] {
  const nodes: NodeEndpoint[] = [];
  for (const broker of image.brokers.values()) {
    if (broker.fenced && options.includeFenced !== true) continue;
    const endpoint = broker.listeners.find((l) => l.name === listenerName);
    if (endpoint === undefined) continue;
    nodes.push({ nodeId: broker.id, host: endpoint.host, port: endpoint.port, rack: broker.rack, fenced: broker.fenced });
  }
  return nodes.sort((a, b) => a.nodeId - b.nodeId);
}

/** Registered controllers with an endpoint on `listenerName`. */
export function controllersOnListener(image: MetadataImage, listenerName: string): NodeEndpoint[] {
  const nodes: NodeEndpoint[] = [];
  for (const controller of image.controllers.values()) {
    const endpoint = controller.listeners.find((l) => l.name === listenerName);
    if (endpoint !== undefined) nodes.push({ nodeId: controller.id, host: endpoint.host, port: endpoint.port, rack: null, fenced: false });
  }
  return nodes.sort((a, b) => a.nodeId - b.nodeId);
}

/**
 * The controller id a KRaft broker reports to clients: a live broker (clients
 * cannot reach KRaft controllers). Prefers `preferredId` (this broker), as
 * any live broker is correct and a stable answer is kinder to clients.
 */
export function aliveBrokerId(image: MetadataImage, preferredId: number): number {
  const preferred = image.brokers.get(preferredId);
  if (preferred !== undefined && !preferred.fenced) return preferredId;
  for (const broker of image.brokers.values()) if (!broker.fenced) return broker.id;
  return -1;
}

export interface PartitionView {
  errorCode: number;
  partitionIndex: number;
  leaderId: number;
  leaderEpoch: number;
  replicaNodes: number[];
  isrNodes: number[];
  offlineReplicas: number[];
  eligibleLeaderReplicas: number[];
  lastKnownElr: number[];
}

function isOnline(image: MetadataImage, brokerId: number): boolean {
  const broker = image.brokers.get(brokerId);
  return broker !== undefined && !broker.fenced;
}

/**
 * A partition as Metadata and DescribeTopicPartitions show it: no leader
 * gives LEADER_NOT_AVAILABLE (leader -1); a leader without this listener
 * gives LISTENER_NOT_FOUND (or LEADER_NOT_AVAILABLE before Metadata v6);
 * with `errorUnavailableEndpoints` (Metadata v0) replicas that are down are
 * left out and reported as REPLICA_NOT_AVAILABLE.
 */
export function partitionView(
  image: MetadataImage,
  partition: PartitionRegistration,
  options: { listenerName: string; errorUnavailableListeners: boolean; errorUnavailableEndpoints: boolean },
): PartitionView {
  const reachable = (id: number) => isOnline(image, id) && image.brokers.get(id)!.listeners.some((l) => l.name === options.listenerName);
  const replicaNodes = options.errorUnavailableEndpoints ? partition.replicas.filter(reachable) : [...partition.replicas];
  const isrNodes = options.errorUnavailableEndpoints ? partition.isr.filter(reachable) : [...partition.isr];
  const offlineReplicas = partition.replicas.filter((id) => !isOnline(image, id));
  const base = {
    partitionIndex: partition.partition,
    leaderEpoch: partition.leaderEpoch,
    replicaNodes,
    isrNodes,
    offlineReplicas,
    eligibleLeaderReplicas: [...partition.elr],
    lastKnownElr: [...partition.lastKnownElr],
  };
  const leader = image.brokers.get(partition.leader);
  if (partition.leader < 0 || leader === undefined) return { ...base, errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1 };
  if (!leader.listeners.some((l) => l.name === options.listenerName)) {
    return { ...base, errorCode: options.errorUnavailableListeners ? ErrorCode.LISTENER_NOT_FOUND : ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1 };
  }
  const incomplete = replicaNodes.length < partition.replicas.length || isrNodes.length < partition.isr.length;
  return { ...base, errorCode: incomplete ? ErrorCode.REPLICA_NOT_AVAILABLE : ErrorCode.NONE, leaderId: partition.leader };
}
