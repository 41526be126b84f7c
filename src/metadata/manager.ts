/**
 * MetadataManager: the metadata path of one node, wired the Kafka way
 * (DESIGN.md §3.5):
 *
 *   handler -> QuorumController (records) -> KafkaRaftClient (__cluster_metadata)
 *           -> commit -> controller replay + this loader (image, delta)
 *           -> publishers (replica manager, ...) -> handler answers
 *
 * start(): formats or checks meta.properties in every log directory, opens
 * the metadata log, loads the latest snapshot and replays the log (the
 * controller and the loader both), elects this node in its one-voter
 * quorum, bootstraps a new cluster's features, registers this broker (and
 * this controller), unfences it, and only then publishes the image to the
 * publishers, each awaited in order. Every later committed batch is
 * published as a delta the same way, before the operation that wrote it
 * returns, so a client that creates a topic and produces at once finds it.
 *
 * Snapshots: once the records applied since the last snapshot pass
 * metadata.log.max.record.bytes.between.snapshots, the image is written as a
 * snapshot (outside the commit path).
 */
import { isIoError } from '../storage/errors.js';
import type { Broker } from '../server/broker.js';
import type { Logger } from '../server/logger.js';
import { SECURITY_PROTOCOL_IDS } from '../server/listeners.js';
import { NotControllerError, QuorumController, type Written } from '../controller/quorum-controller.js';
import type { BrokerEndpoint, MetadataDelta, MetadataImage, MetadataPublisher } from './image.js';
import type {
  CreatableTopic,
  CreatableTopicResult,
  CreatePartitionsTopic,
  CreatePartitionsTopicResult,
  DeletableTopic,
  DeletableTopicResult,
} from '../controller/replication-control.js';
import type { AlterableConfig, ConfigResourceChange, ConfigResourceResult, IncrementalAlterableConfig } from '../controller/configuration-control.js';
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../controller/topic-names.js';
import { KafkaRaftClient, type Batch } from '../raft/raft-client.js';
import { RaftLog } from '../raft/raft-log.js';
import type { SnapshotContent } from '../raft/snapshot.js';
import { KafkaConfigSchema } from './config-schema.js';
import { emptyImage, fullDelta, imageFromSnapshot, replayBatch } from './delta.js';
import { METADATA_VERSION_LATEST, SUPPORTED_FEATURES } from './features.js';
import { imageToRecords } from './image-writer.js';
import { ensureMetaProperties, randomUuid } from './meta-properties.js';
import { decodeMetadataRecord, encodeMetadataRecord, type MetadataRecord } from './records.js';
import { brokerConfigLayers, resolveTopicConfig, type BrokerConfigLayers, type TopicConfig } from './topic-config.js';

/** Kafka's transaction.state.log.segment.bytes default. */
const TRANSACTION_LOG_SEGMENT_BYTES_DEFAULT = 104_857_600;

/** Kafka's SecurityProtocol ids. */
export interface ProducerIdBlock {
  firstProducerId: number;
  size: number;
}

export class MetadataManager {
  private readonly publishers: MetadataPublisher[] = [];
  private current: MetadataImage;
  private published = false;
  private raft: KafkaRaftClient<MetadataRecord> | null = null;
  private controllerValue: QuorumController | null = null;
  private brokerEpochValue = -1;
  private bytesSinceSnapshot = 0;
  private snapshotting: Promise<void> = Promise.resolve();
  private readonly ready: Promise<void>;
  private markReady!: () => void;
  private markFailed!: (error: Error) => void;
  private state: 'new' | 'starting' | 'running' | 'stopped' = 'new';

  constructor(private readonly broker: Broker) {
    this.current = emptyImage('');
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.markFailed = reject;
    });
    this.ready.catch(() => undefined);
  }

  private get log(): Logger {
    return this.broker.log;
  }

  /** Publishers get the first image after start's registration, then every delta, in order. */
  addPublisher(publisher: MetadataPublisher): void {
    if (this.published) throw new Error(`publisher ${publisher.name} added after the first image was published`);
    this.publishers.push(publisher);
  }

  /** The latest image this broker has applied (and published, once running). */
  get image(): MetadataImage {
    return this.current;
  }

  get controller(): QuorumController {
    if (this.controllerValue === null) throw new Error('metadata manager not started');
    return this.controllerValue;
  }

  /** This broker's epoch from its registration. */
  get brokerEpoch(): number {
    return this.brokerEpochValue;
  }

  /** Resolves once the first image is published (handlers await it before reading metadata). */
  whenReady(): Promise<void> {
    return this.ready;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`metadata manager is ${this.state}`);
    this.state = 'starting';
    try {
      await this.startUp();
      this.state = 'running';
      this.markReady();
    } catch (error) {
      this.markFailed(error as Error);
      throw error;
    }
  }

  private async startUp(): Promise<void> {
    const { config, env, nodeId } = this.broker;
    const logDirs = config.logDirs;
    const metadataDir = config.string('metadata.log.dir') ?? logDirs[0]!;
    const dirs = [...new Set([...logDirs, metadataDir])];
    const formatted = await ensureMetaProperties(env, { dirs, nodeId, configuredClusterId: config.string('cluster.id') });
    this.current = emptyImage(formatted.clusterId);
    const raftLog = await RaftLog.open(env, {
      logDir: metadataDir,
      segmentBytes: config.int('metadata.log.segment.bytes'),
      segmentMs: 604_800_000,
      retentionBytes: config.int('metadata.max.retention.bytes'),
      logger: this.log,
      onIoError: (error) => this.broker.logDirFailureChannel?.maybeAddOfflineLogDir(metadataDir, `${metadataDir}: I/O error in the metadata log`, error),
    });
    this.broker.logDirFailureChannel?.onOfflineLogDir((logDir) => {
      if (logDir === metadataDir) raftLog.markOffline(this.broker.logDirFailureChannel!.offlineCause(logDir)!);
    });
    const raft = new KafkaRaftClient<MetadataRecord>({
      nodeId,
      voters: this.voters(),
      directoryId: formatted.directoryIds.get(metadataDir)!,
      log: raftLog,
      serde: { encode: encodeMetadataRecord, decode: decodeMetadataRecord },
      env,
      logger: this.log,
    });
    this.raft = raft;
    const controller = new QuorumController({
      nodeId,
      clusterId: formatted.clusterId,
      config,
      configSchema: new KafkaConfigSchema(config, nodeId),
      random: env.random,
      raft,
      bootstrapMetadataVersion: METADATA_VERSION_LATEST,
    });
    this.controllerValue = controller;
    raft.register(controller);
    raft.register({
      handleLoadSnapshot: (snapshot) => this.loadSnapshot(snapshot),
      handleCommit: (batch) => this.applyCommitted(batch),
      handleLeaderChange: () => undefined,
    });
    await raft.start();
    await controller.activate();
    await this.register(controller, [...logDirs].map((dir) => formatted.directoryIds.get(dir)!));
    await this.publish(fullDelta(this.current));
    this.log.info(`metadata: cluster ${formatted.clusterId}, node ${nodeId} leads epoch ${raft.leaderAndEpoch.epoch}, image at offset ${this.current.offset}`);
  }

  /** controller.quorum.voters ids, or this node alone (a combined single node). */
  private voters(): number[] {
    const configured = this.broker.config.list('controller.quorum.voters');
    if (configured.length === 0) return [this.broker.nodeId];
    return configured.map((entry) => Number(entry.split('@')[0]));
  }

  private endpoints(controllerListeners: boolean): BrokerEndpoint[] {
    const controllerNames = new Set(this.broker.config.list('controller.listener.names'));
    return this.broker.listeners
      .filter((listener) => controllerNames.has(listener.name) === controllerListeners)
      .map((listener) => ({
        name: listener.name,
        host: listener.advertisedHost,
        port: listener.advertisedPort,
        securityProtocol: SECURITY_PROTOCOL_IDS[listener.securityProtocol],
      }));
  }

  private async register(controller: QuorumController, logDirIds: string[]): Promise<void> {
    const { env, nodeId, config } = this.broker;
    const features = SUPPORTED_FEATURES.map((f) => ({ name: f.name, minSupportedVersion: f.minVersion, maxSupportedVersion: f.maxVersion }));
    if (config.list('process.roles').includes('controller')) {
      await controller.registerController({ controllerId: nodeId, incarnationId: randomUuid(env.random), listeners: this.endpoints(true), features });
    }
    const registered = await controller.registerBroker({
      brokerId: nodeId,
      incarnationId: randomUuid(env.random),
      listeners: this.endpoints(false),
      rack: config.string('broker.rack'),
      features,
      logDirs: logDirIds,
    });
    if (registered.response.errorCode !== 0) throw new Error(`broker registration failed: ${registered.response.errorMessage ?? registered.response.errorCode}`);
    this.brokerEpochValue = registered.response.brokerEpoch;
    const unfenced = await controller.unfenceBroker(nodeId, this.brokerEpochValue);
    if (unfenced.response.errorCode !== 0) throw new Error(`unfencing failed: ${unfenced.response.errorMessage ?? unfenced.response.errorCode}`);
  }

  // ---- the loader (a raft listener)

  private loadSnapshot(snapshot: SnapshotContent<MetadataRecord>): void {
    this.current = imageFromSnapshot(this.current.clusterId, { endOffset: snapshot.id.offset, records: snapshot.records });
  }

  private async applyCommitted(batch: Batch<MetadataRecord>): Promise<void> {
    const { image, delta } = replayBatch(this.current, batch);
    this.current = image;
    this.bytesSinceSnapshot += batch.sizeInBytes;
    if (this.published) await this.publish(delta);
    this.maybeSnapshot(batch);
  }

  private async publish(delta: MetadataDelta): Promise<void> {
    this.published = true;
    const image = this.current;
    for (const publisher of this.publishers) await publisher.onMetadataUpdate(delta, image);
  }

  private maybeSnapshot(batch: Batch<MetadataRecord>): void {
    const limitBytes = this.broker.config.int('metadata.log.max.record.bytes.between.snapshots');
    if (this.bytesSinceSnapshot < limitBytes || this.raft === null) return;
    this.bytesSinceSnapshot = 0;
    const image = this.current;
    const raft = this.raft;
    const id = { offset: image.offset + 1, epoch: batch.epoch };
    // Written outside the commit path: the raft queue is busy delivering this very batch.
    this.snapshotting = this.snapshotting
      .then(() => raft.createSnapshot(id, imageToRecords(image), batch.appendTimestamp))
      .then(() => this.log.info(`metadata: wrote snapshot ${id.offset}-${id.epoch}`))
      .catch((error: unknown) => this.onSnapshotFailure(error, `metadata: snapshot ${id.offset}-${id.epoch} failed`));
  }

  /** A snapshot that could not be written for a disk error takes the metadata log directory offline (the node then stops). */
  private onSnapshotFailure(error: unknown, message: string): void {
    const { config } = this.broker;
    const metadataDir = config.string('metadata.log.dir') ?? config.logDirs[0]!;
    if (isIoError(error)) this.broker.logDirFailureChannel?.maybeAddOfflineLogDir(metadataDir, message, error);
    else this.log.error(`${message}: ${String(error)}`);
  }

  /** Resolves when snapshots started so far are written (tests, shutdown). */
  awaitSnapshots(): Promise<void> {
    return this.snapshotting;
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    await this.snapshotting;
    await this.raft?.close();
  }

  // ---- topic configs for publishers

  /** The broker config layers (static and dynamic) topic configs fall back to. */
  brokerConfigLayers(image: MetadataImage = this.current): BrokerConfigLayers {
    return brokerConfigLayers(this.broker.config, image.brokerConfigs, this.broker.nodeId);
  }

  /** The effective config of a topic (overrides over broker defaults). */
  topicConfig(topicName: string, image: MetadataImage = this.current): TopicConfig {
    return resolveTopicConfig(image.topicsByName.get(topicName)?.configs ?? new Map(), this.brokerConfigLayers(image));
  }

  // ---- controller operations for handlers

  createTopics(topics: readonly CreatableTopic[], options: { validateOnly: boolean }): Promise<CreatableTopicResult[]> {
    return this.response(() => this.controller.createTopics(topics, options));
  }

  /**
   * auto.create.topics.enable: creates missing topics with the broker
   * defaults; the coordinators' internal topics get their own partition
   * counts, replication factors and configs, as Kafka's
   * AutoTopicCreationManager gives them.
   */
  autoCreateTopics(names: readonly string[]): Promise<CreatableTopicResult[]> {
    return this.createTopics(names.map((name) => this.creatableTopic(name)), { validateOnly: false });
  }

  private creatableTopic(name: string): CreatableTopic {
    const config = this.broker.config;
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
    return { name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] };
  }

  deleteTopics(topics: readonly DeletableTopic[]): Promise<DeletableTopicResult[]> {
    return this.response(() => this.controller.deleteTopics(topics));
  }

  createPartitions(topics: readonly CreatePartitionsTopic[], options: { validateOnly: boolean }): Promise<CreatePartitionsTopicResult[]> {
    return this.response(() => this.controller.createPartitions(topics, options));
  }

  alterConfigs(resources: readonly ConfigResourceChange<AlterableConfig>[], options: { validateOnly: boolean }): Promise<ConfigResourceResult[]> {
    return this.response(() => this.controller.alterConfigs(resources, options));
  }

  incrementalAlterConfigs(resources: readonly ConfigResourceChange<IncrementalAlterableConfig>[], options: { validateOnly: boolean }): Promise<ConfigResourceResult[]> {
    return this.response(() => this.controller.incrementalAlterConfigs(resources, options));
  }

  /** A block of 1000 producer ids for this broker (ProducerIdsRecord); throws when none can be had. */
  async allocateProducerIdBlock(brokerId: number = this.broker.nodeId): Promise<ProducerIdBlock> {
    const block = await this.response(() => this.controller.allocateProducerIds(brokerId, this.brokerEpochValue));
    if (block.errorCode !== 0) throw new Error(`producer id block allocation failed with error ${block.errorCode}`);
    return { firstProducerId: block.producerIdStart, size: block.producerIdLen };
  }

  /** The response once its records (if any) are committed and published. */
  private async response<T>(operation: () => Promise<Written<T>>): Promise<T> {
    await this.ready;
    const outcome = await operation();
    if (outcome.lastOffset !== null && this.current.offset < outcome.lastOffset) {
      throw new Error(`records up to ${outcome.lastOffset} committed but the image is at ${this.current.offset}`);
    }
    return outcome.response;
  }
}

export { NotControllerError };
