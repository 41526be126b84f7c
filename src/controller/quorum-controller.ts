/**
 * The QuorumController: the metadata state machine of the active
 * controller. Operations run one at a time on an event queue; each reads
 * the replayed state, returns {records, response} (the pure functions in
 * replication-control.ts, configuration-control.ts, cluster-control.ts),
 * and the records go through Raft. The response is returned once they are
 * committed and delivered (so the broker's image has them too).
 *
 * State changes only in replay: handleCommit and handleLoadSnapshot, the
 * same code on the leader, on a follower and after a restart. Operations
 * that write nothing (validateOnly, all-errors) answer at once.
 *
 * The controller is active only while Raft reports this node as leader,
 * which it does after this listener has replayed everything before the
 * leader's epoch; otherwise operations fail with NotControllerError
 * (NOT_CONTROLLER on the wire).
 *
 * While active it keeps every registered broker's heartbeat session (in
 * memory, as Kafka does) and a timer on the oldest unfenced session: once
 * it is older than broker.session.timeout.ms the broker is fenced and its
 * leaderships move. With auto.leader.rebalance.enable it also runs preferred
 * leader elections every leader.imbalance.check.interval.seconds while some
 * partition is not led by its first replica, and unclean elections of
 * leaderless partitions whose topic allows them every
 * unclean.leader.election.interval.ms (election-schedule.ts).
 */
import type { Clock, TimerHandle, Timers } from '../io/clock.js';
import { alterUserScramCredentials, type AlterScramRequest, type AlterScramResult } from './scram-control.js';
import { createAcls, deleteAcls, type DeleteAclsFilterResult } from './acl-control.js';
import { updateFeatures, type FeatureUpdate, type QuorumFeatureState } from './feature-control.js';
import { alterClientQuotas, type ClientQuotaAlteration, type ClientQuotaAlterationResult } from './client-quota-control.js';
import type { AclBindingFilter, StandardAcl } from '../security/authorizer/acl.js';
import type { Random } from '../io/random.js';
import { emptyImage, imageFromSnapshot, replayBatch } from '../metadata/delta.js';
import type { MetadataImage } from '../metadata/image.js';
import type { MetadataRecord } from '../metadata/records.js';
import { NotLeaderError, type Batch, type LeaderAndEpoch, type RaftListener } from '../raft/raft-client.js';
import type { SnapshotContent } from '../raft/snapshot.js';
import { BrokerHeartbeatManager } from './broker-heartbeat-manager.js';
import {
  allocateProducerIds,
  bootstrapFeatures,
  maybeFenceOneStaleBroker,
  processBrokerHeartbeat,
  registerBroker,
  registerController,
  unregisterBroker,
  type BrokerHeartbeatReply,
  type BrokerHeartbeatRequest,
  type BrokerRegistrationReply,
  type BrokerRegistrationRequest,
  type ControllerRegistrationRequest,
  type ProducerIdBlock,
} from './cluster-control.js';
import {
  alterConfigs,
  incrementalAlterConfigs,
  type AlterableConfig,
  type ConfigResourceChange,
  type ConfigResourceResult,
  type IncrementalAlterableConfig,
} from './configuration-control.js';
import type { ConfigSchema, ControllerContext, StaticConfig } from './context.js';
import {
  alterPartition,
  createPartitions,
  createTopics,
  deleteTopics,
  partitionsWithNoLeader,
  type AlterPartitionReply,
  type AlterPartitionRequest,
  type CreatableTopic,
  type CreateTopicsOptions,
  type PartitionChangeQuota,
  type CreatableTopicResult,
  type CreatePartitionsTopic,
  type CreatePartitionsTopicResult,
  type DeletableTopic,
  type DeletableTopicResult,
} from './replication-control.js';
import {
  alterPartitionReassignments,
  listPartitionReassignments,
  type AlterPartitionReassignmentsReply,
  type AlterPartitionReassignmentsRequest,
  type OngoingTopicReassignment,
} from './partition-reassignment.js';
import { result, type ApiError, type ControllerResult } from './result.js';
import { arePartitionLeadersImbalanced, electLeaders, maybeBalancePartitionLeaders, maybeElectUncleanLeaders, type ElectLeadersReply, type ElectLeadersRequest } from './elections.js';
import { ElectionSchedule } from './election-schedule.js';

/** What the controller needs from Raft: appends as leader, and where the next record goes. */
export interface MetadataRaft {
  append(records: readonly MetadataRecord[]): Promise<{ baseOffset: number; lastOffset: number; epoch: number }>;
  readonly logEndOffset: number;
}

export interface QuorumControllerOptions {
  nodeId: number;
  clusterId: string;
  config: StaticConfig;
  configSchema: ConfigSchema;
  random: Random;
  clock: Clock;
  timers: Timers;
  raft: MetadataRaft;
  /** metadata.version a new cluster starts at. */
  bootstrapMetadataVersion: number;
}

export class NotControllerError extends Error {
  override readonly name = 'NotControllerError';
}

export interface Written<T> {
  response: T;
  /** Offset of the last record written, or null when the operation wrote nothing. */
  lastOffset: number | null;
}

export class QuorumController implements RaftListener<MetadataRecord> {
  private state: MetadataImage;
  private active = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** Heartbeat sessions; null while not active. */
  private sessions: BrokerHeartbeatManager | null = null;
  private staleBrokerCheck: TimerHandle | null = null;
  /** The periodic election passes while active: preferred leaders (auto.leader.rebalance.enable), unclean ones of leaderless partitions. */
  private readonly electionSchedules: readonly ElectionSchedule[];
  /** Where each broker's current RegisterBrokerRecord was replayed (unfencing waits for the broker to reach it). */
  private readonly registerBrokerRecordOffsets = new Map<number, number>();

  constructor(private readonly options: QuorumControllerOptions) {
    this.state = emptyImage(options.clusterId);
    const { config } = options;
    this.electionSchedules = [
      new ElectionSchedule(options.timers, {
        checkIntervalMs: config.bool('auto.leader.rebalance.enable') ? config.int('leader.imbalance.check.interval.seconds') * 1000 : null,
        imbalanced: () => arePartitionLeadersImbalanced({ image: this.state }),
        runPass: async () => (await this.write((context) => maybeBalancePartitionLeaders(context))).response,
      }),
      new ElectionSchedule(options.timers, {
        checkIntervalMs: config.int('unclean.leader.election.interval.ms'),
        imbalanced: () => partitionsWithNoLeader(this.state).length > 0,
        runPass: async () => (await this.write((context) => maybeElectUncleanLeaders(context))).response,
      }),
    ];
  }

  /** The replayed state (committed records only). */
  get image(): MetadataImage {
    return this.state;
  }

  get isActive(): boolean {
    return this.active;
  }

  // ---- replay (RaftListener)

  handleLoadSnapshot(snapshot: SnapshotContent<MetadataRecord>): void {
    this.state = imageFromSnapshot(this.options.clusterId, { endOffset: snapshot.id.offset, records: snapshot.records });
    this.registerBrokerRecordOffsets.clear();
    for (const id of this.state.brokers.keys()) this.registerBrokerRecordOffsets.set(id, this.state.offset);
  }

  handleCommit(batch: Batch<MetadataRecord>): void {
    this.state = replayBatch(this.state, batch).image;
    batch.records.forEach((record, index) => {
      if (record.type === 'RegisterBrokerRecord') this.registerBrokerRecordOffsets.set(record.data.brokerId, batch.baseOffset + index);
      if (record.type === 'UnregisterBrokerRecord') this.registerBrokerRecordOffsets.delete(record.data.brokerId);
    });
    if (this.sessions !== null) this.syncSessions(this.sessions);
    if (this.active) for (const schedule of this.electionSchedules) schedule.maybeSchedule();
  }

  handleLeaderChange(leader: LeaderAndEpoch): void {
    const active = leader.leaderId === this.options.nodeId;
    if (active === this.active) return;
    this.active = active;
    if (active) {
      // A new active controller gives every registered broker a fresh session.
      this.sessions = new BrokerHeartbeatManager(this.options.clock, this.options.config.int('broker.session.timeout.ms'));
      this.syncSessions(this.sessions);
      this.rescheduleStaleBrokerCheck();
      for (const schedule of this.electionSchedules) schedule.maybeSchedule();
    } else {
      this.sessions = null;
      this.staleBrokerCheck?.cancel();
      this.staleBrokerCheck = null;
      for (const schedule of this.electionSchedules) schedule.cancel();
    }
  }

  /** Kafka's replay into the heartbeat manager: sessions follow registrations and their fencing. */
  private syncSessions(sessions: BrokerHeartbeatManager): void {
    for (const broker of this.state.brokers.values()) {
      if (!sessions.has(broker.id) || sessions.isFenced(broker.id) !== broker.fenced) sessions.register(broker.id, broker.fenced);
    }
    for (const id of sessions.brokerIds()) if (!this.state.brokers.has(id)) sessions.remove(id);
  }

  // ---- operations

  /** On becoming active: the bootstrap records of a new cluster. */
  activate(): Promise<Written<void>> {
    return this.write((context) => bootstrapFeatures(context, this.options.bootstrapMetadataVersion));
  }

  registerBroker(request: BrokerRegistrationRequest): Promise<Written<BrokerRegistrationReply>> {
    return this.write((context, sessions) => {
      const outcome = registerBroker(context, request, sessions);
      if (outcome.response.errorCode === 0) {
        const existing = context.image.brokers.get(request.brokerId);
        if (existing?.incarnationId !== request.incarnationId) sessions.remove(request.brokerId);
        sessions.register(request.brokerId, existing?.incarnationId === request.incarnationId ? existing.fenced : true);
        this.rescheduleStaleBrokerCheck();
      }
      return outcome;
    });
  }

  /** Kafka's processBrokerHeartbeat; a broker entering controlled shutdown must wait until every active broker has its records. */
  processBrokerHeartbeat(request: BrokerHeartbeatRequest): Promise<Written<BrokerHeartbeatReply>> {
    return this.write(
      (context, sessions) => {
        const outcome = processBrokerHeartbeat(context, request, { sessions, registerBrokerRecordOffset: this.registerBrokerRecordOffsets.get(request.brokerId) ?? null });
        this.rescheduleStaleBrokerCheck();
        return outcome;
      },
      (response, batchEndOffset, sessions) => {
        if (response.inControlledShutdown) sessions.maybeUpdateControlledShutdownOffset(request.brokerId, batchEndOffset);
      },
    );
  }

  unregisterBroker(brokerId: number): Promise<Written<ApiError>> {
    return this.write((context) => unregisterBroker(context, brokerId));
  }

  registerController(request: ControllerRegistrationRequest): Promise<Written<ApiError>> {
    return this.write((context) => registerController(context, request));
  }

  createTopics(topics: readonly CreatableTopic[], options: CreateTopicsOptions): Promise<Written<CreatableTopicResult[]>> {
    return this.write((context) => createTopics(context, topics, options));
  }

  deleteTopics(topics: readonly DeletableTopic[], options: { partitionChangeQuota?: PartitionChangeQuota | undefined } = {}): Promise<Written<DeletableTopicResult[]>> {
    return this.write((context) => deleteTopics(context, topics, options));
  }

  createPartitions(topics: readonly CreatePartitionsTopic[], options: CreateTopicsOptions): Promise<Written<CreatePartitionsTopicResult[]>> {
    return this.write((context) => createPartitions(context, topics, options));
  }

  alterConfigs(resources: readonly ConfigResourceChange<AlterableConfig>[], options: { validateOnly: boolean }): Promise<Written<ConfigResourceResult[]>> {
    return this.write((context) => alterConfigs(context, resources, options));
  }

  incrementalAlterConfigs(
    resources: readonly ConfigResourceChange<IncrementalAlterableConfig>[],
    options: { validateOnly: boolean },
  ): Promise<Written<ConfigResourceResult[]>> {
    return this.write((context) => incrementalAlterConfigs(context, resources, options));
  }

  /** A partition leader's ISR change (Kafka's ReplicationControlManager.alterPartition). */
  alterPartition(request: AlterPartitionRequest): Promise<Written<AlterPartitionReply>> {
    return this.write((context) => alterPartition(context, request));
  }

  /** Starts or cancels reassignments (Kafka's alterPartitionReassignments, KIP-455). */
  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest): Promise<Written<AlterPartitionReassignmentsReply>> {
    return this.write((context) => alterPartitionReassignments(context, request));
  }

  /** The reassignments in progress, read after every earlier operation committed. */
  listPartitionReassignments(topics: readonly { name: string; partitionIndexes: readonly number[] }[] | null): Promise<Written<OngoingTopicReassignment[]>> {
    return this.write((context) => result([], listPartitionReassignments(context.image, topics)));
  }

  alterUserScramCredentials(request: AlterScramRequest): Promise<Written<AlterScramResult[]>> {
    return this.write((context) => alterUserScramCredentials(context, request));
  }

  alterClientQuotas(alterations: readonly ClientQuotaAlteration[], options: { validateOnly: boolean }): Promise<Written<ClientQuotaAlterationResult[]>> {
    return this.write((context) => alterClientQuotas(context, alterations, options));
  }

  updateFeatures(quorum: QuorumFeatureState, updates: readonly FeatureUpdate[], options: { validateOnly: boolean }): Promise<Written<ApiError>> {
    return this.write((context) => updateFeatures(context, quorum, updates, options));
  }

  createAcls(acls: readonly StandardAcl[]): Promise<Written<ApiError[]>> {
    return this.write((context) => createAcls(context, acls));
  }

  deleteAcls(filters: readonly AclBindingFilter[]): Promise<Written<DeleteAclsFilterResult[]>> {
    return this.write((context) => deleteAcls(context, filters));
  }

  allocateProducerIds(brokerId: number, brokerEpoch: number): Promise<Written<ProducerIdBlock>> {
    return this.write((context) => allocateProducerIds(context, brokerId, brokerEpoch));
  }

  /** Kafka's electLeaders: PREFERRED or UNCLEAN elections on the named partitions (all when null). */
  electLeaders(request: ElectLeadersRequest): Promise<Written<ElectLeadersReply>> {
    return this.write((context) => electLeaders(context, request));
  }

  /** Schedules the next check for an expired session (Kafka's rescheduleMaybeFenceStaleBrokers). */
  private rescheduleStaleBrokerCheck(): void {
    this.staleBrokerCheck?.cancel();
    this.staleBrokerCheck = null;
    const dueMs = this.sessions?.nextCheckTimeMs() ?? null;
    if (dueMs === null) return;
    const delayMs = Math.max(0, dueMs - this.options.clock.monotonicMs());
    this.staleBrokerCheck = this.options.timers.schedule(delayMs, () => {
      this.staleBrokerCheck = null;
      this.write((context, sessions) => {
        const outcome = maybeFenceOneStaleBroker(context, sessions);
        // Several sessions may have expired together: check again at once.
        this.rescheduleStaleBrokerCheck();
        return outcome;
      }).catch(() => undefined);
    });
  }

  /**
   * Runs an operation after every earlier one has committed, so each sees
   * the state its predecessors produced. `afterWrite` learns the offset of
   * the operation's last record (the log end when it wrote none), as
   * Kafka's processBatchEndOffset.
   */
  private write<T>(
    operation: (context: ControllerContext, sessions: BrokerHeartbeatManager) => ControllerResult<T>,
    afterWrite?: (response: T, batchEndOffset: number, sessions: BrokerHeartbeatManager) => void,
  ): Promise<Written<T>> {
    const run = this.queue.then(async (): Promise<Written<T>> => {
      const sessions = this.sessions;
      if (!this.active || sessions === null) throw new NotControllerError(`node ${this.options.nodeId} is not the active controller`);
      const outcome = operation(this.context(), sessions);
      if (outcome.records.length === 0) {
        afterWrite?.(outcome.response, this.options.raft.logEndOffset - 1, sessions);
        return { response: outcome.response, lastOffset: null };
      }
      const appended = await this.options.raft.append(outcome.records).catch((error: unknown) => {
        // Raft resigned since this controller became active (check quorum, or a leader removed from the voters):
        // NOT_CONTROLLER, so the client finds the next active controller.
        if (error instanceof NotLeaderError) throw new NotControllerError(`node ${this.options.nodeId} is no longer the active controller: ${error.message}`);
        throw error;
      });
      afterWrite?.(outcome.response, appended.lastOffset, sessions);
      return { response: outcome.response, lastOffset: appended.lastOffset };
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Stops the session timer (the node is shutting down). */
  close(): void {
    this.staleBrokerCheck?.cancel();
    this.staleBrokerCheck = null;
    for (const schedule of this.electionSchedules) schedule.cancel();
    this.sessions = null;
    this.active = false;
  }

  private context(): ControllerContext {
    return {
      image: this.state,
      nodeId: this.options.nodeId,
      config: this.options.config,
      configSchema: this.options.configSchema,
      random: this.options.random,
      nextWriteOffset: this.options.raft.logEndOffset,
    };
  }
}
