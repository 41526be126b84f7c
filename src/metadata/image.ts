/**
 * The metadata image: what a broker knows about the cluster, built only by
 * replaying `__cluster_metadata` records (DESIGN.md §3.5). Images are
 * immutable; applying a batch of records yields a new image and a delta,
 * which publishers (the replica manager, the group coordinator) react to.
 *
 * This file is the contract between the metadata room (which builds images)
 * and its consumers; keep it small and stable.
 */
import type { StandardAcl } from '../security/authorizer/acl.js';
import type { ClientQuotaImage } from './client-quotas.js';

export interface PartitionRegistration {
  topicId: string;
  topicName: string;
  partition: number;
  replicas: number[];
  isr: number[];
  /** Eligible leader replicas (KIP-966). */
  elr: number[];
  lastKnownElr: number[];
  removingReplicas: number[];
  addingReplicas: number[];
  /** -1 when the partition has no leader. */
  leader: number;
  /** KIP-704: 1 (RECOVERING) after an unclean election until the leader reports 0 (RECOVERED); absent means 0. */
  leaderRecoveryState?: number;
  leaderEpoch: number;
  partitionEpoch: number;
  /** Log directory id of each replica, in `replicas` order (KIP-858); absent when unassigned. */
  directories?: readonly string[];
}

export interface TopicImage {
  name: string;
  /** Kafka's base64url text form of the topic UUID. */
  id: string;
  partitions: ReadonlyMap<number, PartitionRegistration>;
  /** Topic-level config overrides (only what was set explicitly). */
  configs: ReadonlyMap<string, string>;
}

export interface BrokerEndpoint {
  /** Listener name, e.g. PLAINTEXT. */
  name: string;
  host: string;
  port: number;
  securityProtocol: number;
}

export interface BrokerRegistrationImage {
  id: number;
  epoch: number;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  rack: string | null;
  fenced: boolean;
  inControlledShutdown: boolean;
  /** Directory ids of the broker's online log directories (KIP-858). */
  logDirs: readonly string[];
  /** Feature ranges the broker supports, by name. */
  supportedFeatures: ReadonlyMap<string, { minVersion: number; maxVersion: number }>;
}

export interface ControllerRegistrationImage {
  id: number;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  /** Feature ranges the controller supports, by name (what UpdateFeatures checks a new level against). */
  supportedFeatures: ReadonlyMap<string, { minVersion: number; maxVersion: number }>;
}

/** A user's SCRAM credential as the metadata log stores it (UserScramCredentialRecord): never the password. */
export interface ScramCredential {
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
  iterations: number;
}

export interface MetadataImage {
  /** Offset of the last record applied, -1 for the empty image. */
  offset: number;
  clusterId: string;
  topicsByName: ReadonlyMap<string, TopicImage>;
  topicsById: ReadonlyMap<string, TopicImage>;
  brokers: ReadonlyMap<number, BrokerRegistrationImage>;
  /** Finalized feature levels (metadata.version, kraft.version, ...). */
  features: ReadonlyMap<string, number>;
  /** Cluster-wide dynamic broker configs (resource name ''), per-broker ones by broker id. */
  brokerConfigs: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Dynamic group configs (ConfigRecord resource GROUP) by group id: only what was set; see group-config.ts for effective values. */
  groupConfigs: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Controllers registered through RegisterControllerRecord (KIP-919), by id. */
  controllers: ReadonlyMap<number, ControllerRegistrationImage>;
  /** The first producer id of the next block the controller hands out (ProducerIdsRecord). */
  nextProducerId: number;
  /** SCRAM credentials by user name, then by mechanism type (1 SCRAM-SHA-256, 2 SCRAM-SHA-512). */
  scramCredentials: ReadonlyMap<string, ReadonlyMap<number, ScramCredential>>;
  /** ACLs (AccessControlEntryRecord) by id: what the StandardAuthorizer decides with. */
  acls: ReadonlyMap<string, StandardAcl>;
  /** Client quotas (ClientQuotaRecord) by canonical entity key (clientQuotaEntityKey in client-quotas.ts). */
  clientQuotas: ReadonlyMap<string, ClientQuotaImage>;
}

export interface MetadataDelta {
  /** Partitions created or whose registration changed, with their new state. */
  changedPartitions: readonly PartitionRegistration[];
  /** Topics removed, with their last state. */
  deletedTopics: readonly TopicImage[];
  /** Topics whose config overrides changed. */
  changedTopicConfigs: readonly TopicImage[];
  brokersChanged: boolean;
  /** Feature levels that changed (finalized or removed), with the new level (0 when removed). */
  changedFeatures: ReadonlyMap<string, number>;
  /** Offset of the last record the delta covers. */
  offset: number;
}

/** Reacts to metadata changes; called in log order, one delta at a time. */
export interface MetadataPublisher {
  readonly name: string;
  onMetadataUpdate(delta: MetadataDelta, image: MetadataImage): Promise<void> | void;
}
