/**
 * BrokerServer: the broker role of a node (Kafka's BrokerServer): the
 * replica manager, the group and transaction coordinators (whose markers go
 * to the other leaders over the marker channel), and the
 * broker's own requests to the controller, all through the controller
 * channel: auto topic creation (Kafka's AutoTopicCreationManager) and
 * producer-id blocks (Kafka's RPCProducerIdManager).
 */
import { ClientQuotas } from '../server/client-quota-manager.js';
import { ErrorCode } from '../protocol/errors.js';
import { AllocateProducerIds } from '../protocol/schemas/67-allocate-producer-ids.js';
import { CreateTopics } from '../protocol/schemas/19-create-topics.js';
import { AlterPartition } from '../protocol/schemas/56-alter-partition.js';
import { ListOffsets } from '../protocol/schemas/02-list-offsets.js';
import { interBrokerListenerName } from '../server/listeners.js';
import type { AlterPartitionReply, AlterPartitionRequest } from '../controller/replication-control.js';
import { GROUP_METADATA_TOPIC_NAME, SHARE_GROUP_STATE_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../controller/topic-names.js';
import { ReplicaManager } from '../replication/replica-manager.js';
import { GroupCoordinator } from '../group/coordinator.js';
import { groupCoordinatorConfigFrom } from '../group/config.js';
import { coordinatorLogOver } from '../coordinator/partition-log.js';
import { CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC } from '../group/placement.js';
import { TransactionCoordinator } from '../txn/coordinator.js';
import { transactionCoordinatorConfigFrom } from '../txn/config.js';
import { localMarkerWriter } from '../txn/marker-writer.js';
import { TxnMarkerChannel } from '../txn/marker-channel.js';
import { AddPartitionsToTxnManager } from '../txn/add-partitions-manager.js';
import { InterBrokerChannel } from '../server/inter-broker-channel.js';
import { ProducerIdManager, type ProducerIdBlock, type ProducerIdBlockSource } from '../txn/producer-id-manager.js';
import type { AutoTopicCreation } from '../server/api-context.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import type { ControllerChannel } from './controller-channel.js';
import { BrokerLifecycleManager } from './broker-lifecycle.js';
import { randomUuid } from '../metadata/meta-properties.js';
import type { SharedServer } from './shared-server.js';
import { ShareCoordinator } from '../share/coordinator/coordinator.js';
import { shareCoordinatorConfigFrom, shareGroupStateTopicConfigs } from '../share/coordinator/config.js';
import { DefaultSharePersister } from '../share/default-persister.js';
import type { SharePersister } from '../share/persister.js';
import { SharePartitionManager } from '../share/share-partition-manager.js';
import { effectiveGroupConfig, effectiveGroupTimeouts } from '../metadata/group-config.js';

/** Most ShareFetch requests waiting for records at once (DESIGN.md §3.7), as the fetch purgatory's bound. */
const SHARE_FETCHES_WAITING_MAX = 10_000;

/** Kafka's transaction.state.log.segment.bytes default. */
const TRANSACTION_LOG_SEGMENT_BYTES_DEFAULT = 104_857_600;

export class BrokerServer implements AutoTopicCreation, ProducerIdBlockSource {
  readonly replicaManager: ReplicaManager;
  readonly groupCoordinator: GroupCoordinator;
  readonly transactionCoordinator: TransactionCoordinator;
  readonly addPartitionsToTxn: AddPartitionsToTxnManager;
  readonly shareCoordinator: ShareCoordinator;
  readonly sharePersister: SharePersister;
  readonly sharePartitionManager: SharePartitionManager;
  /** producer_byte_rate and consumer_byte_rate, from the image's client quotas. */
  readonly clientQuotas: ClientQuotas;
  /** The share persister's requests to the share coordinators on other brokers (83-87). */
  private readonly shareChannel: InterBrokerChannel;
  /** The transaction coordinator's and the partition leaders' requests to other brokers (markers, AddPartitionsToTxn). */
  private readonly txnChannel: InterBrokerChannel;
  private lifecycle: BrokerLifecycleManager | null = null;

  constructor(
    private readonly shared: SharedServer,
    private readonly channel: ControllerChannel,
  ) {
    const { nodeId, config, env, log, logDirFailureChannel, loader } = shared;
    this.clientQuotas = new ClientQuotas(config, () => env.clock.monotonicMs());
    this.replicaManager = new ReplicaManager({
      nodeId,
      config,
      env,
      log,
      metadata: loader,
      logDirFailureChannel,
      brokerEpoch: () => this.brokerEpoch,
      interBrokerListenerName: interBrokerListenerName(config),
      alterPartition: (request) => this.alterPartition(request),
    });
    const shareConfig = shareCoordinatorConfigFrom(config);
    this.shareCoordinator = new ShareCoordinator({
      nodeId,
      config: shareConfig,
      env,
      logger: log,
      log: coordinatorLogOver(this.replicaManager, { topic: SHARE_GROUP_STATE_TOPIC_NAME, appendTimeoutMs: shareConfig.writeTimeoutMs }),
      image: () => loader.image,
    });
    this.shareChannel = new InterBrokerChannel({ nodeId, env, image: () => loader.image, listenerName: interBrokerListenerName(config), requestTimeoutMs: config.int('request.timeout.ms'), purpose: 'share-persister' });
    this.sharePersister = new DefaultSharePersister({
      nodeId,
      env,
      image: () => loader.image,
      coordinator: this.shareCoordinator,
      channel: this.shareChannel,
      createStateTopic: () => this.createInternalTopic(SHARE_GROUP_STATE_TOPIC_NAME),
    });
    const groupConfig = groupCoordinatorConfigFrom(config);
    this.groupCoordinator = new GroupCoordinator({
      nodeId,
      config: groupConfig,
      env,
      logger: log,
      log: coordinatorLogOver(this.replicaManager, { topic: CONSUMER_OFFSETS_TOPIC, appendTimeoutMs: groupConfig.offsetCommitTimeoutMs }),
      image: () => loader.image,
      persister: this.sharePersister,
      latestOffset: (topic, partition) => this.latestOffset(topic, partition),
      groupTimeouts: (groupId, type) => effectiveGroupTimeouts(loader.image, groupId, type, config),
    });
    this.sharePartitionManager = new SharePartitionManager({
      env,
      replicaManager: this.replicaManager,
      persister: this.sharePersister,
      image: () => loader.image,
      logger: log,
      config: {
        deliveryCountLimit: config.int('group.share.delivery.count.limit'),
        maxInFlightRecords: config.int('group.share.partition.max.record.locks'),
        sessionsMax: config.int('group.share.max.share.sessions'),
        delayedFetchesMax: SHARE_FETCHES_WAITING_MAX,
      },
      groupConfig: (groupId) => {
        const effective = effectiveGroupConfig(loader.image, groupId, config);
        return { autoOffsetReset: effective.shareAutoOffsetReset, recordLockDurationMs: effective.shareRecordLockDurationMs };
      },
    });
    const txnConfig = transactionCoordinatorConfigFrom(config);
    const markerWriter = localMarkerWriter({
      image: () => loader.image,
      clock: env.clock,
      requestTimeoutMs: txnConfig.requestTimeoutMs,
      replicas: this.replicaManager,
      groups: this.groupCoordinator,
    });
    this.txnChannel = new InterBrokerChannel({
      nodeId,
      env,
      image: () => loader.image,
      listenerName: interBrokerListenerName(config),
      requestTimeoutMs: txnConfig.requestTimeoutMs,
      purpose: 'txn',
    });
    const markerChannel = new TxnMarkerChannel({ nodeId, logger: log, image: () => loader.image, local: markerWriter, channel: this.txnChannel });
    this.transactionCoordinator = new TransactionCoordinator({
      nodeId,
      config: txnConfig,
      env,
      logger: log,
      log: coordinatorLogOver(this.replicaManager, { topic: TRANSACTION_STATE_TOPIC, appendTimeoutMs: txnConfig.requestTimeoutMs }),
      image: () => loader.image,
      producerIds: new ProducerIdManager(nodeId, this),
      markerWriter,
      markerSender: markerChannel,
      offsetsTopicPartitions: groupConfig.offsetsTopicPartitions,
    });
    this.addPartitionsToTxn = new AddPartitionsToTxnManager({ nodeId, image: () => loader.image, coordinator: this.transactionCoordinator, channel: this.txnChannel });
  }

  /**
   * A partition's latest offset (ListOffsets LATEST, read_uncommitted) at its
   * leader: this broker's replica manager, or the leader over the share
   * channel. For share-group lag (DescribeShareGroupOffsets).
   */
  private async latestOffset(topic: string, partition: number): Promise<{ errorCode: number; offset: number }> {
    const { nodeId, loader } = this.shared;
    const leader = loader.image.topicsByName.get(topic)?.partitions.get(partition)?.leader ?? -1;
    if (leader < 0) return { errorCode: ErrorCode.LEADER_NOT_AVAILABLE, offset: -1 };
    const query = { partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1 };
    if (leader === nodeId) {
      const found = await this.replicaManager.fetchOffsetForTimestamp({ topicPartition: { topic, partition }, timestamp: -1, currentLeaderEpoch: -1, isolationLevel: 0, fetchOnlyFromLeader: true });
      return { errorCode: found.errorCode, offset: found.offset };
    }
    try {
      const response = await this.shareChannel.send(leader, ListOffsets, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [query] }], timeoutMs: this.shared.config.int('request.timeout.ms') });
      const answer = response.topics[0]?.partitions[0];
      return answer === undefined ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, offset: -1 } : { errorCode: answer.errorCode, offset: answer.offset };
    } catch {
      return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1 };
    }
  }

  /** This broker's epoch from its registration, -1 before. */
  get brokerEpoch(): number {
    return this.lifecycle?.brokerEpoch ?? -1;
  }

  /** Before the metadata log is replayed: the publishers, and the logs already on disk. */
  async startUp(): Promise<void> {
    this.shared.loader.addPublisher(this.clientQuotas);
    this.shared.loader.addPublisher(this.replicaManager);
    this.shared.loader.addPublisher(this.groupCoordinator);
    this.shared.loader.addPublisher(this.transactionCoordinator);
    this.shared.loader.addPublisher(this.shareCoordinator);
    await this.replicaManager.start();
  }

  /**
   * Registers with the controller and heartbeats from now on; resolves once
   * the controller says this broker has caught up with the metadata log
   * (Kafka's STARTING to RECOVERY).
   */
  async register(listeners: readonly BrokerEndpoint[]): Promise<void> {
    const { nodeId, config, env, log, loader } = this.shared;
    const lifecycle = new BrokerLifecycleManager({
      channel: this.channel,
      timers: env.timers,
      random: env.random,
      logger: log,
      heartbeatIntervalMs: config.int('broker.heartbeat.interval.ms'),
      sessionTimeoutMs: config.int('broker.session.timeout.ms'),
      metadataOffset: () => loader.image.offset,
    });
    this.lifecycle = lifecycle;
    lifecycle.start({ brokerId: nodeId, clusterId: this.shared.clusterId, incarnationId: randomUuid(env.random), listeners, rack: config.string('broker.rack'), logDirs: this.shared.logDirIds, previousBrokerEpoch: this.replicaManager.previousBrokerEpoch });
    await lifecycle.whenCaughtUp();
  }

  /** Once the metadata is published: asks to be unfenced and resolves when the controller has (RECOVERY to RUNNING). */
  async unfence(): Promise<void> {
    const lifecycle = this.lifecycle;
    if (lifecycle === null) throw new Error('the broker has not registered');
    lifecycle.setReadyToUnfence();
    await lifecycle.whenUnfenced();
  }

  /** Kafka's controlled shutdown: the controller moves this broker's leaderships away while it still serves. */
  async controlledShutdown(): Promise<void> {
    await this.lifecycle?.beginControlledShutdown();
  }

  /** The node cannot reach its controller any more (its metadata log failed): no controlled shutdown. */
  abandonController(): void {
    this.lifecycle?.close();
  }

  beginShutdown(): void {
    this.replicaManager.beginShutdown();
  }

  async stop(): Promise<void> {
    this.lifecycle?.close();
    await this.transactionCoordinator.shutdown();
    this.txnChannel.close();
    this.sharePartitionManager.close();
    await this.shareCoordinator.shutdown();
    this.shareChannel.close();
    await this.groupCoordinator.shutdown();
    await this.replicaManager.stop();
  }

  // ---- the broker's requests to the controller

  /**
   * auto.create.topics.enable: creates missing topics with the broker
   * defaults; the coordinators' internal topics get their own partition
   * counts, replication factors and configs, as Kafka's
   * AutoTopicCreationManager gives them.
   */
  async autoCreateTopics(names: readonly string[]) {
    const response = await this.channel.send(CreateTopics, {
      topics: names.map((name) => this.creatableTopic(name)),
      timeoutMs: this.shared.config.int('request.timeout.ms'),
      validateOnly: false,
    });
    return response.topics;
  }

  private creatableTopic(name: string) {
    const config = this.shared.config;
    const compacted = (entries: Record<string, string>) => Object.entries({ 'cleanup.policy': 'compact', ...entries }).map(([key, value]) => ({ name: key, value }));
    if (name === GROUP_METADATA_TOPIC_NAME) {
      return {
        name,
        numPartitions: config.int('offsets.topic.num.partitions'),
        replicationFactor: config.int('offsets.topic.replication.factor'),
        assignments: [],
        configs: compacted({ 'compression.type': 'producer', 'segment.bytes': String(config.int('offsets.topic.segment.bytes')) }),
      };
    }
    if (name === TRANSACTION_STATE_TOPIC_NAME) {
      return {
        name,
        numPartitions: config.int('transaction.state.log.num.partitions'),
        replicationFactor: config.int('transaction.state.log.replication.factor'),
        assignments: [],
        configs: compacted({
          'compression.type': 'uncompressed',
          'min.insync.replicas': String(config.int('transaction.state.log.min.isr')),
          'segment.bytes': config.explicit.get('transaction.state.log.segment.bytes') ?? String(TRANSACTION_LOG_SEGMENT_BYTES_DEFAULT),
          'unclean.leader.election.enable': 'false',
        }),
      };
    }
    if (name === SHARE_GROUP_STATE_TOPIC_NAME) {
      const share = shareCoordinatorConfigFrom(config);
      return {
        name,
        numPartitions: share.stateTopicPartitions,
        replicationFactor: share.stateTopicReplicationFactor,
        assignments: [],
        configs: Object.entries(shareGroupStateTopicConfigs(share)).map(([key, value]) => ({ name: key, value })),
      };
    }
    return { name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] };
  }

  /** Creates an internal topic unless the image has it; resolves with whether it exists now. */
  private async createInternalTopic(name: string): Promise<boolean> {
    if (this.shared.loader.image.topicsByName.has(name)) return true;
    const [created] = await this.autoCreateTopics([name]);
    if (created === undefined || (created.errorCode !== ErrorCode.NONE && created.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS)) {
      this.shared.log.warn(`cannot create ${name}: ${created?.errorMessage ?? String(created?.errorCode)}`);
      return false;
    }
    await this.shared.loader.whenReady();
    return this.shared.loader.image.topicsByName.has(name);
  }

  /** An ISR change for partitions this broker leads (AlterPartition v3, Kafka's AlterPartitionManager). */
  async alterPartition(request: AlterPartitionRequest): Promise<AlterPartitionReply> {
    const topics = request.topics.map((topic) => ({
      topicId: topic.topicId,
      partitions: topic.partitions.map((partition) => ({ ...partition, newIsrWithEpochs: [...partition.newIsrWithEpochs] })),
    }));
    const response = await this.channel.send(AlterPartition, { brokerId: request.brokerId, brokerEpoch: request.brokerEpoch, topics }, { version: 3 });
    return { errorCode: response.errorCode, topics: response.topics };
  }

  /** A block of producer ids for this broker (AllocateProducerIds); throws when none can be had. */
  async allocateProducerIdBlock(brokerId: number): Promise<ProducerIdBlock> {
    const block = await this.channel.send(AllocateProducerIds, { brokerId, brokerEpoch: this.brokerEpoch });
    if (block.errorCode !== ErrorCode.NONE) throw new Error(`producer id block allocation failed with error ${block.errorCode}`);
    return { firstProducerId: block.producerIdStart, size: block.producerIdLen };
  }
}
