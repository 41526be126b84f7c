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
 */
import type { Random } from '../io/random.js';
import { emptyImage, imageFromSnapshot, replayBatch } from '../metadata/delta.js';
import type { MetadataImage } from '../metadata/image.js';
import type { MetadataRecord } from '../metadata/records.js';
import type { Batch, LeaderAndEpoch, RaftListener } from '../raft/raft-client.js';
import type { SnapshotContent } from '../raft/snapshot.js';
import {
  allocateProducerIds,
  bootstrapFeatures,
  fenceBroker,
  registerBroker,
  registerController,
  unfenceBroker,
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
  createPartitions,
  createTopics,
  deleteTopics,
  type CreatableTopic,
  type CreatableTopicResult,
  type CreatePartitionsTopic,
  type CreatePartitionsTopicResult,
  type DeletableTopic,
  type DeletableTopicResult,
} from './replication-control.js';
import type { ApiError, ControllerResult } from './result.js';

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

  constructor(private readonly options: QuorumControllerOptions) {
    this.state = emptyImage(options.clusterId);
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
  }

  handleCommit(batch: Batch<MetadataRecord>): void {
    this.state = replayBatch(this.state, batch).image;
  }

  handleLeaderChange(leader: LeaderAndEpoch): void {
    this.active = leader.leaderId === this.options.nodeId;
  }

  // ---- operations

  /** On becoming active: the bootstrap records of a new cluster. */
  activate(): Promise<Written<void>> {
    return this.write((context) => bootstrapFeatures(context, this.options.bootstrapMetadataVersion));
  }

  registerBroker(request: BrokerRegistrationRequest): Promise<Written<{ errorCode: number; errorMessage: string | null; brokerEpoch: number }>> {
    return this.write((context) => registerBroker(context, request));
  }

  unfenceBroker(brokerId: number, brokerEpoch: number): Promise<Written<ApiError>> {
    return this.write((context) => unfenceBroker(context, brokerId, brokerEpoch));
  }

  fenceBroker(brokerId: number): Promise<Written<ApiError>> {
    return this.write((context) => fenceBroker(context, brokerId));
  }

  registerController(request: ControllerRegistrationRequest): Promise<Written<ApiError>> {
    return this.write((context) => registerController(context, request));
  }

  createTopics(topics: readonly CreatableTopic[], options: { validateOnly: boolean }): Promise<Written<CreatableTopicResult[]>> {
    return this.write((context) => createTopics(context, topics, options));
  }

  deleteTopics(topics: readonly DeletableTopic[]): Promise<Written<DeletableTopicResult[]>> {
    return this.write((context) => deleteTopics(context, topics));
  }

  createPartitions(topics: readonly CreatePartitionsTopic[], options: { validateOnly: boolean }): Promise<Written<CreatePartitionsTopicResult[]>> {
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

  allocateProducerIds(brokerId: number, brokerEpoch: number): Promise<Written<ProducerIdBlock>> {
    return this.write((context) => allocateProducerIds(context, brokerId, brokerEpoch));
  }

  /**
   * Runs an operation after every earlier one has committed, so each sees
   * the state its predecessors produced.
   */
  private write<T>(operation: (context: ControllerContext) => ControllerResult<T>): Promise<Written<T>> {
    const run = this.queue.then(async (): Promise<Written<T>> => {
      if (!this.active) throw new NotControllerError(`node ${this.options.nodeId} is not the active controller`);
      const outcome = operation(this.context());
      if (outcome.records.length === 0) return { response: outcome.response, lastOffset: null };
      const appended = await this.options.raft.append(outcome.records);
      return { response: outcome.response, lastOffset: appended.lastOffset };
    });
    this.queue = run.catch(() => undefined);
    return run;
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
