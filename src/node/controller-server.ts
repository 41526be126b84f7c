/**
 * ControllerServer: the controller role of a node (Kafka's ControllerServer).
 * It owns the QuorumController, registered on the shared Raft client before
 * Raft starts so it replays the whole log; once this node leads, it writes a
 * new cluster's bootstrap records and registers this controller's endpoints
 * (KIP-919).
 *
 * Its operations (ControllerOperations) answer once their records are
 * committed and in this node's image, so a combined node's handlers and its
 * in-process controller channel see their own writes at once.
 */
import type { AlterScramRequest } from '../controller/scram-control.js';
import type { AclBindingFilter, StandardAcl } from '../security/authorizer/acl.js';
import type { FeatureUpdate } from '../controller/feature-control.js';
import type { ClientQuotaAlteration } from '../controller/client-quota-control.js';
import type { ControllerOperations } from '../server/api-context.js';
import { NotControllerError, QuorumController, type Written } from '../controller/quorum-controller.js';
import type { BrokerHeartbeatRequest, BrokerRegistrationRequest, ControllerRegistrationRequest } from '../controller/cluster-control.js';
import type { AlterableConfig, ConfigResourceChange, IncrementalAlterableConfig } from '../controller/configuration-control.js';
import type { AlterPartitionReassignmentsRequest } from '../controller/partition-reassignment.js';
import type { ElectLeadersRequest } from '../controller/elections.js';
import type { AlterPartitionRequest, CreatableTopic, CreatePartitionsTopic, CreateTopicsOptions, DeletableTopic, PartitionChangeQuota } from '../controller/replication-control.js';
import { KafkaConfigSchema } from '../metadata/config-schema.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import { METADATA_VERSION_LATEST, supportedFeatureRanges } from '../metadata/features.js';
import { randomUuid } from '../metadata/meta-properties.js';
import type { SharedServer } from './shared-server.js';
import type { ControllerChannel } from './controller-channel.js';
import { ControllerRegistration } from '../protocol/schemas/70-controller-registration.js';
import { ErrorCode } from '../protocol/errors.js';
import type { TimerHandle } from '../io/clock.js';

/** Kafka's ControllerRegistrationManager retries a failed registration after this long (its resendExponentialBackoff starts at 100 ms). */
const REGISTRATION_RETRY_MS = 100;
/** ... and backs off to at most this. */
const REGISTRATION_RETRY_MAX_MS = 10_000;

export class ControllerServer implements ControllerOperations {
  private controllerValue: QuorumController | null = null;
  private registrationRetry: TimerHandle | null = null;
  private stopped = false;

  constructor(private readonly shared: SharedServer) {}

  get controller(): QuorumController {
    if (this.controllerValue === null) throw new Error('controller not started');
    return this.controllerValue;
  }

  /** Creates the controller and registers it on Raft; call between SharedServer.open and SharedServer.startRaft. */
  attach(): void {
    const { config, env, nodeId } = this.shared;
    const controller = new QuorumController({
      nodeId,
      clusterId: this.shared.clusterId,
      config,
      configSchema: new KafkaConfigSchema(config, nodeId),
      random: env.random,
      clock: env.clock,
      timers: env.timers,
      raft: this.shared.raft,
      bootstrapMetadataVersion: METADATA_VERSION_LATEST,
    });
    this.shared.raft.register(controller);
    this.controllerValue = controller;
  }

  /** After Raft elected this node: the bootstrap records, then this controller's registration. */
  async activate(listeners: readonly BrokerEndpoint[]): Promise<void> {
    await this.controller.activate();
    const registered = await this.registerController({
      controllerId: this.shared.nodeId,
      incarnationId: randomUuid(this.shared.env.random),
      listeners,
      features: supportedFeatureRanges(),
    });
    if (registered.errorCode !== 0) throw new Error(`controller registration failed: ${registered.errorMessage ?? registered.errorCode}`);
  }

  /**
   * A controller that follows another leader registers with the active
   * controller over `channel` (Kafka's ControllerRegistrationManager), in
   * the background, retrying with a growing backoff until it is accepted;
   * the registration is what DescribeCluster names it by once it leads.
   */
  registerRemotely(channel: ControllerChannel, listeners: readonly BrokerEndpoint[]): void {
    const { env, log, nodeId } = this.shared;
    const request = {
      controllerId: nodeId,
      incarnationId: randomUuid(env.random),
      zkMigrationReady: false,
      listeners: [...listeners],
      features: supportedFeatureRanges(),
    };
    const attempt = (delayMs: number): void => {
      if (this.stopped) return;
      channel.send(ControllerRegistration, request).then(
        (response) => {
          if (response.errorCode === ErrorCode.NONE) return log.info(`controller ${nodeId} registered with the active controller`);
          retry(delayMs, `error ${response.errorCode}`);
        },
        (error: unknown) => retry(delayMs, String(error)),
      );
    };
    const retry = (delayMs: number, why: string): void => {
      if (this.stopped) return;
      log.debug(`controller ${nodeId} registration failed (${why}); retrying in ${delayMs} ms`);
      this.registrationRetry = env.timers.schedule(delayMs, () => attempt(Math.min(delayMs * 2, REGISTRATION_RETRY_MAX_MS)));
    };
    attempt(REGISTRATION_RETRY_MS);
  }

  /** Stops the controller's session timer and any pending registration (the node is stopping). */
  stop(): void {
    this.stopped = true;
    this.registrationRetry?.cancel();
    this.controllerValue?.close();
  }

  // ---- ControllerOperations

  createTopics(topics: readonly CreatableTopic[], options: CreateTopicsOptions) {
    return this.adminResponse(() => this.controller.createTopics(topics, options));
  }

  deleteTopics(topics: readonly DeletableTopic[], options: { partitionChangeQuota?: PartitionChangeQuota | undefined } = {}) {
    return this.adminResponse(() => this.controller.deleteTopics(topics, options));
  }

  createPartitions(topics: readonly CreatePartitionsTopic[], options: CreateTopicsOptions) {
    return this.adminResponse(() => this.controller.createPartitions(topics, options));
  }

  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest) {
    return this.adminResponse(() => this.controller.alterPartitionReassignments(request));
  }

  electLeaders(request: ElectLeadersRequest) {
    return this.adminResponse(() => this.controller.electLeaders(request));
  }

  listPartitionReassignments(topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null) {
    return this.adminResponse(() => this.controller.listPartitionReassignments(topics));
  }

  alterConfigs(resources: readonly ConfigResourceChange<AlterableConfig>[], options: { validateOnly: boolean }) {
    return this.adminResponse(() => this.controller.alterConfigs(resources, options));
  }

  incrementalAlterConfigs(resources: readonly ConfigResourceChange<IncrementalAlterableConfig>[], options: { validateOnly: boolean }) {
    return this.adminResponse(() => this.controller.incrementalAlterConfigs(resources, options));
  }

  alterUserScramCredentials(request: AlterScramRequest) {
    return this.adminResponse(() => this.controller.alterUserScramCredentials(request));
  }

  alterClientQuotas(alterations: readonly ClientQuotaAlteration[], options: { validateOnly: boolean }) {
    return this.adminResponse(() => this.controller.alterClientQuotas(alterations, options));
  }

  updateFeatures(updates: readonly FeatureUpdate[], options: { validateOnly: boolean }) {
    const raft = this.shared.raft;
    return this.adminResponse(() => this.controller.updateFeatures({ kraftVersion: raft.kraftVersion, voterIds: raft.voterSet.ids }, updates, options));
  }

  createAcls(acls: readonly StandardAcl[]) {
    return this.adminResponse(() => this.controller.createAcls(acls));
  }

  deleteAcls(filters: readonly AclBindingFilter[]) {
    return this.adminResponse(() => this.controller.deleteAcls(filters));
  }

  registerBroker(request: BrokerRegistrationRequest) {
    return this.response(() => this.controller.registerBroker(request));
  }

  processBrokerHeartbeat(request: BrokerHeartbeatRequest) {
    return this.response(() => this.controller.processBrokerHeartbeat(request));
  }

  unregisterBroker(brokerId: number) {
    return this.response(() => this.controller.unregisterBroker(brokerId));
  }

  registerController(request: ControllerRegistrationRequest) {
    return this.response(() => this.controller.registerController(request));
  }

  alterPartition(request: AlterPartitionRequest) {
    return this.response(() => this.controller.alterPartition(request));
  }

  allocateProducerIds(brokerId: number, brokerEpoch: number) {
    return this.response(() => this.controller.allocateProducerIds(brokerId, brokerEpoch));
  }

  /** Requests from clients wait for the node's first image, as every handler does; registrations must not (they come before it). */
  private async adminResponse<T>(operation: () => Promise<Written<T>>): Promise<T> {
    await this.shared.loader.whenReady();
    return this.response(operation);
  }

  /** The response once its records (if any) are committed and in this node's image. */
  private async response<T>(operation: () => Promise<Written<T>>): Promise<T> {
    if (this.controllerValue === null) throw new NotControllerError(`node ${this.shared.nodeId} has not started its controller`);
    const outcome = await operation();
    const image = this.shared.loader.image;
    if (outcome.lastOffset !== null && image.offset < outcome.lastOffset) {
      throw new Error(`records up to ${outcome.lastOffset} committed but the image is at ${image.offset}`);
    }
    return outcome.response;
  }
}

/** The operations of a node without a controller role: every one is NOT_CONTROLLER until requests are forwarded. */
export const NO_LOCAL_CONTROLLER: ControllerOperations = new Proxy({} as ControllerOperations, {
  get: (_target, name) => () => Promise.reject(new NotControllerError(`this node has no controller role (${String(name)})`)),
});
