/**
 * What an API handler may use of its node: the narrow context each handler
 * factory receives instead of the whole node (src/node/node.ts builds it).
 * A handler reads metadata from the published image, writes metadata only
 * through the controller (ControllerOperations: the local controller, or
 * NOT_CONTROLLER where there is none), and reaches the data plane through
 * the replica manager and the group and transaction coordinators.
 */
import type { ListenerTlsReloader } from './listener-tls-reloader.js';
import type { BrokerConfig } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import type { MetadataImage } from '../metadata/image.js';
import type { TopicConfig } from '../metadata/topic-config.js';
import type {
  BrokerHeartbeatReply,
  BrokerHeartbeatRequest,
  BrokerRegistrationReply,
  BrokerRegistrationRequest,
  ControllerRegistrationRequest,
  ProducerIdBlock,
} from '../controller/cluster-control.js';
import type { AlterableConfig, ConfigResourceChange, ConfigResourceResult, IncrementalAlterableConfig } from '../controller/configuration-control.js';
import type {
  CreatableTopic,
  CreateTopicsOptions,
  PartitionChangeQuota,
  CreatableTopicResult,
  CreatePartitionsTopic,
  CreatePartitionsTopicResult,
  DeletableTopic,
  DeletableTopicResult,
  AlterPartitionReply,
  AlterPartitionRequest,
} from '../controller/replication-control.js';
import type { AlterPartitionReassignmentsReply, AlterPartitionReassignmentsRequest, OngoingTopicReassignment } from '../controller/partition-reassignment.js';
import type { ApiError } from '../controller/result.js';
import type { ControllerMutationQuotaManager } from './controller-mutation-quota.js';
import type { ElectLeadersReply, ElectLeadersRequest } from '../controller/elections.js';
import type { AlterScramRequest, AlterScramResult } from '../controller/scram-control.js';
import type { DeleteAclsFilterResult } from '../controller/acl-control.js';
import type { ClientQuotaAlteration, ClientQuotaAlterationResult } from '../controller/client-quota-control.js';
import type { FeatureUpdate } from '../controller/feature-control.js';
import type { AclBindingFilter, StandardAcl } from '../security/authorizer/acl.js';
import type { StandardAuthorizer } from '../security/authorizer/standard-authorizer.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import type { GroupCoordinator } from '../group/coordinator.js';
import type { SharePartitionManager } from '../share/share-partition-manager.js';
import type { AddPartitionsToTxnManager } from '../txn/add-partitions-manager.js';
import type { TransactionCoordinator } from '../txn/coordinator.js';
import type { RaftRequestServer } from '../raft/raft-client.js';
import type { ShareCoordinator } from '../share/coordinator/coordinator.js';
import type { SharePersister } from '../share/persister.js';
import type { RequestHandlerTable } from './request-handler.js';
import type { ClientQuotas } from './client-quota-manager.js';

/** The published metadata image and topic configs resolved against it. */
export interface MetadataView {
  readonly image: MetadataImage;
  /** Resolves once the node published its first image. */
  whenReady(): Promise<void>;
  topicConfig(topicName: string, image?: MetadataImage): TopicConfig;
}

/**
 * The controller's operations, answered once their records are committed
 * and in this node's image. Each rejects with NotControllerError where this
 * node's controller is not active (or the node has none).
 */
export interface ControllerOperations {
  createTopics(topics: readonly CreatableTopic[], options: CreateTopicsOptions): Promise<CreatableTopicResult[]>;
  deleteTopics(topics: readonly DeletableTopic[], options?: { partitionChangeQuota?: PartitionChangeQuota | undefined }): Promise<DeletableTopicResult[]>;
  createPartitions(topics: readonly CreatePartitionsTopic[], options: CreateTopicsOptions): Promise<CreatePartitionsTopicResult[]>;
  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest): Promise<AlterPartitionReassignmentsReply>;
  electLeaders(request: ElectLeadersRequest): Promise<ElectLeadersReply>;
  listPartitionReassignments(topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null): Promise<OngoingTopicReassignment[]>;
  alterConfigs(resources: readonly ConfigResourceChange<AlterableConfig>[], options: { validateOnly: boolean }): Promise<ConfigResourceResult[]>;
  incrementalAlterConfigs(resources: readonly ConfigResourceChange<IncrementalAlterableConfig>[], options: { validateOnly: boolean }): Promise<ConfigResourceResult[]>;
  alterUserScramCredentials(request: AlterScramRequest): Promise<AlterScramResult[]>;
  alterClientQuotas(alterations: readonly ClientQuotaAlteration[], options: { validateOnly: boolean }): Promise<ClientQuotaAlterationResult[]>;
  /** Kafka's FeatureControlManager.updateFeatures: one error for the whole request. */
  updateFeatures(updates: readonly FeatureUpdate[], options: { validateOnly: boolean }): Promise<ApiError>;
  createAcls(acls: readonly StandardAcl[]): Promise<ApiError[]>;
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<DeleteAclsFilterResult[]>;
  registerBroker(request: BrokerRegistrationRequest): Promise<BrokerRegistrationReply>;
  /** A broker's heartbeat: its session renewed, and it fenced, unfenced or shut down by Kafka's rules. */
  processBrokerHeartbeat(request: BrokerHeartbeatRequest): Promise<BrokerHeartbeatReply>;
  unregisterBroker(brokerId: number): Promise<ApiError>;
  registerController(request: ControllerRegistrationRequest): Promise<ApiError>;
  allocateProducerIds(brokerId: number, brokerEpoch: number): Promise<ProducerIdBlock>;
  /** A partition leader's ISR change. */
  alterPartition(request: AlterPartitionRequest): Promise<AlterPartitionReply>;
}

/** Topic creation on a broker's own behalf (Kafka's AutoTopicCreationManager), through the controller channel. */
export interface AutoTopicCreation {
  autoCreateTopics(names: readonly string[]): Promise<readonly { name: string; errorCode: number; errorMessage: string | null }[]>;
}

/** What the KRaft RPC handlers use: the node's Raft client, which serves them. */
export interface RaftApiContext {
  readonly config: BrokerConfig;
  readonly raft: RaftRequestServer;
}

/** What the controller's API handlers use. */
export interface ControllerApiContext extends RaftApiContext {
  readonly nodeId: number;
  readonly config: BrokerConfig;
  readonly log: Logger;
  readonly metadata: MetadataView;
  readonly controller: ControllerOperations;
  readonly handlers: Pick<RequestHandlerTable, 'roleOf' | 'advertisedVersions' | 'handlerFor'>;
  /** authorizer.class.name's authorizer; absent when none is configured, and then every request is allowed (as Kafka). */
  readonly authorizer?: StandardAuthorizer | null;
  /** controller_mutation_rate (KIP-599) of CreateTopics, CreatePartitions, DeleteTopics; absent where this node has no controller (nothing is counted). */
  readonly controllerMutationQuota?: ControllerMutationQuotaManager | undefined;
  /** The broker-side check of listener keystore and truststore changes (Kafka's dynamic keystore update); absent on a controller-only node. */
  readonly listenerTls?: Pick<ListenerTlsReloader, 'validate'>;
}

/** What the broker's API handlers use (a combined node's handlers serve both roles from it). */
export interface ApiContext extends ControllerApiContext {
  readonly replicaManager: ReplicaManager;
  readonly groupCoordinator: GroupCoordinator;
  /** The share-partition leaders of this broker and the share sessions (ShareFetch, ShareAcknowledge). */
  readonly sharePartitionManager: SharePartitionManager;
  readonly autoTopicCreation: AutoTopicCreation;
  /** Transactional ids, and producer ids for InitProducerId (blocks from the controller through AllocateProducerIds). */
  readonly transactionCoordinator: TransactionCoordinator;
  /** KIP-890 verification and adds at the coordinator of a transactional id, wherever it is. */
  readonly addPartitionsToTxn: AddPartitionsToTxnManager;
  /** The share coordinator of the `__share_group_state` partitions this node leads (the RPCs 83-87 it answers). */
  readonly shareCoordinator: ShareCoordinator;
  /** Share-partition state wherever its coordinator is (this node's, or another broker's over 83-87). */
  readonly sharePersister: SharePersister;
  /** Client byte-rate quotas (Produce, consumer Fetch). */
  readonly clientQuotas: ClientQuotas;
}
