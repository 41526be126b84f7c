/**
 * KafkaRaftClient for `__cluster_metadata`: Kafka's KRaft over its own RPCs.
 * The role state machine is quorum-state.ts; this class carries out its
 * effects, runs the timers, talks to the other replicas through a
 * RaftChannel, serves their requests, and delivers committed batches and
 * snapshots to listeners (the controller and the broker's metadata loader),
 * in log order, one at a time.
 *
 * Elections (KIP-595, KIP-996): a voter without a leader for
 * controller.quorum.election.timeout.ms (randomised), or a follower without
 * a successful fetch for controller.quorum.fetch.timeout.ms, asks for
 * pre-votes; with a majority it becomes candidate in the next epoch and asks
 * for votes; with a majority it leads, appends a LeaderChangeMessage and
 * announces the epoch with BeginQuorumEpoch. A leader that hears from no
 * majority for 1.5 fetch timeouts resigns (check quorum), and a leader that
 * shuts down resigns with EndQuorumEpoch, naming the most caught-up voters
 * first so they stand first.
 *
 * Replication: followers and observers (replicas that are not voters, such
 * as brokers) Fetch from the leader with their log end offset and last
 * epoch; the leader answers with batches, with the epoch where their log
 * diverged (they truncate and fetch again), or with a snapshot id when they
 * are below its log start (they copy it with FetchSnapshot). The leader's
 * high watermark is the largest offset a majority of voters has flushed,
 * once it passes the epoch start; observers are not counted.
 *
 * Guarantees to listeners (Kafka's RaftClient.Listener contract):
 * - handleLoadSnapshot comes first when a snapshot exists (and again when a
 *   follower installs a newer one), then handleCommit for every batch from
 *   the snapshot end up to the high watermark, never an uncommitted one;
 * - handleLeaderChange tells a listener that this node leads only after the
 *   listener has seen every batch before the leader's epoch start offset, so
 *   an active controller acts on complete state.
 *
 * Appends are pipelined: append() writes and flushes the batch in turn and
 * resolves once it is committed and delivered to every listener, while the
 * next append is already written. A listener must not await append() from
 * inside a callback: delivery runs on the same queue as appends.
 */
import type { Clock, TimerHandle, Timers } from '../io/clock.js';
import type { FileSystem } from '../io/fs.js';
import type { Random } from '../io/random.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { iterateBatches } from '../protocol/records/batch.js';
import { readControlRecord } from '../protocol/records/control.js';
import { buildBatch, decodeRecords } from '../protocol/records/records.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { Fetch } from '../protocol/schemas/01-fetch.js';
import { Vote } from '../protocol/schemas/52-vote.js';
import { BeginQuorumEpoch } from '../protocol/schemas/53-begin-quorum-epoch.js';
import { EndQuorumEpoch } from '../protocol/schemas/54-end-quorum-epoch.js';
import { DescribeQuorum } from '../protocol/schemas/55-describe-quorum.js';
import { FetchSnapshot } from '../protocol/schemas/59-fetch-snapshot.js';
import { AddRaftVoter } from '../protocol/schemas/80-add-raft-voter.js';
import { RemoveRaftVoter } from '../protocol/schemas/81-remove-raft-voter.js';
import type { StorageLogger } from '../storage/log-config.js';
import { buildRaftControlBatch, decodeControlValue, isRaftControlType, type RaftControlRecord } from './control-records.js';
import { QUORUM_CONFIG_DEFAULTS, type QuorumConfig } from './quorum-config.js';
import { KRaftControlState } from './kraft-control-state.js';
import { QuorumState, type RaftEffect } from './quorum-state.js';
import { readQuorumState, writeQuorumState } from './quorum-state-file.js';
import type { RaftChannel } from './raft-channel.js';
import { RAFT_BATCH_BYTES_MAX, type RaftLog, type StoredBatch } from './raft-log.js';
import {
  METADATA_PARTITION,
  METADATA_TOPIC,
  METADATA_TOPIC_ID,
  SnapshotFetch,
  isSet,
  metadataPartitionOf,
  type FetchPartitionRequest,
  type ReplicaProgress,
} from './raft-rpc.js';
import { readSnapshot, writeSnapshot, type OffsetAndEpoch, type RecordSerde, type SnapshotContent } from './snapshot.js';
import { KRAFT_VERSION_MAX, KRAFT_VERSION_MIN, VoterSet, voterOfRequest, type VoterEndpoint, type VoterNode } from './voter-set.js';

export interface LeaderAndEpoch {
  /** Null while no leader is known. */
  leaderId: number | null;
  epoch: number;
}

export interface Batch<T> {
  baseOffset: number;
  lastOffset: number;
  /** The leader epoch the batch was appended in. */
  epoch: number;
  appendTimestamp: number;
  sizeInBytes: number;
  records: T[];
  /** Raft's own records (LeaderChangeMessage, ...) when this is a control batch. */
  control: RaftControlRecord[];
}

export interface RaftListener<T> {
  handleLoadSnapshot(snapshot: SnapshotContent<T>): Promise<void> | void;
  handleCommit(batch: Batch<T>): Promise<void> | void;
  handleLeaderChange(leader: LeaderAndEpoch): Promise<void> | void;
}

export interface RaftClientOptions<T> {
  nodeId: number;
  voters: readonly number[];
  /** directory.id of the metadata log directory. */
  directoryId: string;
  log: RaftLog;
  serde: RecordSerde<T>;
  env: { fs: FileSystem; clock: Clock; timers: Timers; random: Random };
  /** How requests reach the other replicas; needed unless this node is the only voter. Closed with the client. */
  channel?: RaftChannel;
  quorumConfig?: QuorumConfig;
  /**
   * controller.quorum.bootstrap.servers as channel destinations (KIP-853): where a replica that knows no
   * leader fetches from to find one, instead of the voters (a new controller knows none before it fetched).
   */
  bootstrapServers?: readonly number[];
  /** The controller listener whose endpoint of each voter the channel uses (controller.listener.names' first). */
  listenerName?: string;
  /** This node's own endpoint on that listener (what a leader announces in BeginQuorumEpoch and nodeEndpoints). */
  localEndpoint?: { name: string; host: string; port: number };
  /** Requests naming another cluster are refused (INCONSISTENT_CLUSTER_ID); unchecked when absent. */
  clusterId?: string;
  logger?: StorageLogger;
}

/** The requests of other replicas a Raft client serves (what the RPC handlers call). */
export type RaftRequestServer = Pick<
  KafkaRaftClient<unknown>,
  | 'handleVote'
  | 'handleBeginQuorumEpoch'
  | 'handleEndQuorumEpoch'
  | 'handleFetch'
  | 'handleFetchSnapshot'
  | 'describeQuorum'
  | 'leaderAndEpoch'
  | 'handleAddRaftVoter'
  | 'handleRemoveRaftVoter'
  | 'updateVoter'
  | 'voterEndpoint'
  | 'kraftVersion'
>;

export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError';
}

/** What the client's operations reject with once it is closed (a node stopping); the RPC handlers drop the connection on it. */
export class RaftClosedError extends Error {
  override readonly name = 'RaftClosedError';
}

export class RaftBatchTooLargeError extends Error {
  override readonly name = 'RaftBatchTooLargeError';
}

interface RegisteredListener<T> {
  listener: RaftListener<T>;
  /** The leader this listener has been told about. */
  notified: LeaderAndEpoch | null;
}

/** What a voter change (AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter) answers. */
export interface VoterChangeResult {
  errorCode: number;
  errorMessage: string | null;
}

interface VoterChange {
  kind: 'add' | 'remove' | 'update';
  /** Offset of its VotersRecord. */
  lastOffset: number;
}

function refuse(errorCode: number, errorMessage: string | null): VoterChangeResult {
  return { errorCode, errorMessage };
}

interface CommitWaiter {
  lastOffset: number;
  resolve(): void;
  reject(error: Error): void;
}

/** Kafka's KafkaRaftClient.MAX_FETCH_SIZE_BYTES: the most a raft Fetch or FetchSnapshot response carries. */
const FETCH_BYTES_MAX = 8 * 1024 * 1024;
/** Kafka's LeaderState.isReplicaCaughtUp: a replica to add must have fetched within the last hour. */
const CAUGHT_UP_FETCH_WINDOW_MS = 3_600_000;
/** Kafka's RETRY_BACKOFF_BASE_MS: the unit of a rejected candidate's exponential backoff. */
const ELECTION_BACKOFF_BASE_MS = 100;
/** Kafka's check quorum: a leader resigns after this many fetch timeouts without hearing from a majority. */
const CHECK_QUORUM_FETCH_TIMEOUTS = 1.5;

type VoteRequest = RequestOf<typeof Vote>;
type VoteResponse = ResponseOf<typeof Vote>;
type FetchRequest = RequestOf<typeof Fetch>;
type FetchResponse = ResponseOf<typeof Fetch>;

export class KafkaRaftClient<T> {
  private readonly quorum: QuorumState;
  /** kraft.version and the voter set as the log says (KIP-853). */
  private readonly kraftState: KRaftControlState;
  /** Leader: the one voter change in flight (Kafka allows one at a time). */
  private voterChange: VoterChange | null = null;
  private readonly listeners: RegisteredListener<T>[] = [];
  private readonly log: RaftLog;
  private readonly config: QuorumConfig;
  /** Next offset to deliver to listeners (all listeners move together). */
  private nextDeliveryOffset = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private started = false;
  private closed = false;
  /** Bumped on every role change: timers and responses of an older role are ignored. */
  private generation = 0;
  private roleTimer: TimerHandle | null = null;
  private readonly commitWaiters: CommitWaiter[] = [];
  private caughtUpWaiters: { resolve(): void; reject(error: Error): void }[] = [];
  /** Fetches parked at the leader until new data arrives or their wait ends. */
  private readonly fetchWaiters = new Set<() => void>();
  /** Leader: what each replica (voter or observer) last reported. */
  private replicas = new Map<number, ReplicaProgress>();
  /** Leader: voters that acknowledged its epoch (by BeginQuorumEpoch or a fetch). */
  private acknowledged = new Set<number>();
  /** Follower: when the leader last answered a fetch, and whether it announced its resignation. */
  private lastLeaderContactMs = -Infinity;
  private leaderResigned = false;
  /** Observer: the leader went quiet, so fetch from any voter until one names the leader again. */
  private seekingLeader = false;
  private snapshotFetch: SnapshotFetch | null = null;
  /** When this observer last asked to join the voters (controller.quorum.auto.join.enable). */
  private lastAutoJoinMs = -Infinity;
  /** Rejected elections in a row (the exponential backoff's exponent). */
  private electionRetries = 0;

  constructor(private readonly options: RaftClientOptions<T>) {
    this.log = options.log;
    this.config = options.quorumConfig ?? QUORUM_CONFIG_DEFAULTS;
    this.quorum = new QuorumState(options.nodeId, options.voters, options.directoryId);
    this.kraftState = new KRaftControlState(VoterSet.fromIds(options.voters));
    if (options.channel === undefined && !this.isOnlyVoter) {
      throw new Error(`quorum voters [${options.voters.join(',')}]: node ${options.nodeId} needs a raft channel to reach them`);
    }
  }

  register(listener: RaftListener<T>): void {
    if (this.started) throw new Error('listeners must register before the raft client starts');
    this.listeners.push({ listener, notified: null });
  }

  get leaderAndEpoch(): LeaderAndEpoch {
    return { leaderId: this.quorum.leaderId, epoch: this.quorum.epoch };
  }

  get isLeader(): boolean {
    return this.quorum.isLeader;
  }

  /** The role this replica is in (unattached, prospective, candidate, leader, resigned, follower). */
  get role(): string {
    return this.quorum.state.role;
  }

  get highWatermark(): number | null {
    return this.quorum.highWatermark;
  }

  /** The offset the next appended record gets. */
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  get latestSnapshotId(): OffsetAndEpoch | null {
    return this.log.latestSnapshotId;
  }

  /** Epoch of the record at `offset`, for naming a snapshot that ends after it. */
  epochForOffset(offset: number): number | null {
    return this.log.epochForOffset(offset);
  }

  private get isOnlyVoter(): boolean {
    const voters = this.quorum.voters;
    return voters.length === 1 && voters[0] === this.options.nodeId;
  }

  /**
   * Restores the election state and delivers the latest snapshot. The only
   * voter elects itself at once (a new epoch, a LeaderChangeMessage, the
   * high watermark at the log end once flushed, which delivers every
   * committed batch); with more replicas the timers take over.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('raft client already started');
    this.started = true;
    // In the request queue: a request served while the state is read (a leader's BeginQuorumEpoch reaching a
    // restarted voter) would move it out of unattached before initialize (found by test/fault/'s clean bounce).
    await this.serialized(async () => {
      await this.loadKraftState();
      const persisted = await readQuorumState(this.options.env.fs, this.log.dir);
      await this.run(this.quorum.initialize(persisted, this.log.lastEpoch));
      await this.loadLatestSnapshot();
    });
    await this.serialized(async () => {
      if (!this.isOnlyVoter) {
        this.generation++;
        return this.armRole();
      }
      await this.run(this.quorum.transitionToCandidate());
      if (!this.quorum.isVoteGranted()) throw new Error('a single voter must win its own election');
      await this.becomeLeader();
    });
  }

  /**
   * Appends `records` as one batch in the current epoch. Resolves with its
   * offsets once it is flushed, committed and delivered to every listener;
   * the next append does not wait for that.
   */
  async append(records: readonly T[]): Promise<{ baseOffset: number; lastOffset: number; epoch: number }> {
    if (records.length === 0) throw new Error('append needs at least one record');
    const appended = await this.serialized(async () => {
      if (!this.quorum.isLeader) throw new NotLeaderError(`node ${this.options.nodeId} is not the leader (epoch ${this.quorum.epoch})`);
      const epoch = this.quorum.epoch;
      const timestampMs = this.options.env.clock.nowMs();
      const batch = buildBatch({
        records: records.map((record) => ({ key: null, value: this.options.serde.encode(record), timestamp: timestampMs })),
        baseOffset: this.log.logEndOffset,
        partitionLeaderEpoch: epoch,
      });
      if (batch.length > RAFT_BATCH_BYTES_MAX) throw new RaftBatchTooLargeError(`a batch of ${records.length} records is ${batch.length} bytes, above ${RAFT_BATCH_BYTES_MAX}`);
      const committed = this.awaitCommit(this.log.logEndOffset + records.length - 1);
      // Awaited below once the write succeeded; a failed write leaves it to be rejected unobserved.
      committed.catch(() => undefined);
      const offsets = await this.appendAsLeader(batch, epoch);
      return { offsets, epoch, committed };
    });
    await appended.committed;
    return { baseOffset: appended.offsets.firstOffset, lastOffset: appended.offsets.lastOffset, epoch: appended.epoch };
  }

  /**
   * Resolves once a leader is known and listeners have every committed
   * batch up to its high watermark (on the leader: once its leadership was
   * announced to them, so past its epoch start).
   */
  awaitCaughtUp(): Promise<void> {
    if (this.isCaughtUp()) return Promise.resolve();
    return new Promise((resolve, reject) => this.caughtUpWaiters.push({ resolve, reject }));
  }

  private isCaughtUp(): boolean {
    const state = this.quorum.state;
    if (state.role === 'leader') return state.highWatermark !== null && this.nextDeliveryOffset > state.epochStartOffset;
    const highWatermark = this.quorum.highWatermark;
    return this.quorum.leaderId !== null && highWatermark !== null && this.nextDeliveryOffset >= highWatermark;
  }

  private checkCaughtUp(): void {
    if (this.caughtUpWaiters.length === 0 || !this.isCaughtUp()) return;
    for (const waiter of this.caughtUpWaiters.splice(0)) waiter.resolve();
  }

  /** Writes a snapshot of the state after every record below `id.offset` (which must be committed). */
  async createSnapshot(id: OffsetAndEpoch, records: readonly T[], lastContainedLogTimestamp: number): Promise<void> {
    const highWatermark = this.quorum.highWatermark ?? this.log.highWatermark;
    if (id.offset > highWatermark) throw new Error(`snapshot at ${id.offset} is past the high watermark ${highWatermark}`);
    const timestampMs = this.options.env.clock.nowMs();
    const content = { id, lastContainedLogTimestamp, records: [...records], kraftRecords: this.kraftRecordsAt(id.offset - 1) };
    await writeSnapshot(this.options.env.fs, this.log.dir, content, { serde: this.options.serde, timestampMs });
    await this.serialized(() => this.log.snapshotWritten(id));
  }

  /**
   * Stops the client. A leader first resigns gracefully: EndQuorumEpoch to
   * the other voters (each waits at most controller.quorum.request.timeout.ms),
   * so a successor is elected without waiting for a fetch timeout.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const resignation = this.started && this.failure === null ? this.serialized(() => this.resignForShutdown()).catch(() => []) : Promise.resolve([]);
    const endQuorumEpochs = await resignation;
    await Promise.allSettled(endQuorumEpochs);
    this.closed = true;
    this.cancelRoleTimer();
    this.generation++;
    for (const wake of this.fetchWaiters) wake();
    this.failCommitWaiters(new Error('raft client is closed'));
    for (const waiter of this.caughtUpWaiters.splice(0)) waiter.reject(new Error('raft client is closed'));
    await this.queue.catch(() => undefined);
    await this.options.channel?.close();
    await this.log.close();
  }

  // ---- serving the other replicas' requests (the RPC handlers call these)

  /** Serves one decoded raft request (the simulated network's entry point; the wire's handlers call the methods below). */
  async handleRequest(api: ApiDef, version: number, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    switch (api.key) {
      case Vote.key:
        return this.handleVote(body as VoteRequest);
      case BeginQuorumEpoch.key:
        return this.handleBeginQuorumEpoch(body as RequestOf<typeof BeginQuorumEpoch>);
      case EndQuorumEpoch.key:
        return this.handleEndQuorumEpoch(body as RequestOf<typeof EndQuorumEpoch>);
      case Fetch.key:
        return this.handleFetch(body as FetchRequest, version);
      case FetchSnapshot.key:
        return this.handleFetchSnapshot(body as RequestOf<typeof FetchSnapshot>);
      case DescribeQuorum.key:
        return this.describeQuorum();
      case AddRaftVoter.key:
        return this.handleAddRaftVoter(body as RequestOf<typeof AddRaftVoter>);
      case RemoveRaftVoter.key:
        return this.handleRemoveRaftVoter(body as RequestOf<typeof RemoveRaftVoter>);
      default:
        throw new Error(`${api.name} is not a raft request`);
    }
  }

  /** Vote (key 52), pre-votes included (KIP-996). */
  handleVote(request: VoteRequest): Promise<Partial<VoteResponse>> {
    return this.serialized(async () => {
      const refused = this.refusedTopLevel(request.clusterId, request.topics, (t) => t.topicName, (p) => p.partitionIndex);
      if (refused !== null) return { errorCode: refused, topics: [] };
      const partition = request.topics[0]!.partitions[0]!;
      const respond = (errorCode: number, voteGranted: boolean): Partial<VoteResponse> => ({
        errorCode: ErrorCode.NONE,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, errorCode, ...this.currentLeaderFields(), voteGranted }] }],
        nodeEndpoints: this.leaderNodeEndpoints(),
      });
      const { replicaEpoch, replicaId, lastOffsetEpoch, lastOffset, preVote } = partition;
      if (lastOffset < 0 || lastOffsetEpoch < 0 || lastOffsetEpoch > replicaEpoch || (!preVote && lastOffsetEpoch === replicaEpoch)) return respond(ErrorCode.INVALID_REQUEST, false);
      if (replicaEpoch < this.quorum.epoch) return respond(ErrorCode.FENCED_LEADER_EPOCH, false);
      if (replicaId < 0) return respond(ErrorCode.INVALID_REQUEST, false);
      if (replicaEpoch > this.quorum.epoch && !preVote) await this.transition(this.quorum.transitionToUnattached(replicaEpoch));
      if (!this.isThisVoterKey(request.voterId, partition.voterDirectoryId)) return respond(ErrorCode.INVALID_VOTER_KEY, false);
      const logUpToDate = compareOffsetAndEpoch({ offset: lastOffset, epoch: lastOffsetEpoch }, this.endOffset()) >= 0;
      const granted = this.quorum.canGrantVote(replicaId, { logUpToDate, preVote, leaderReachable: this.leaderReachable() });
      if (granted && !preVote) await this.transition(this.quorum.recordVote(replicaId));
      return respond(ErrorCode.NONE, granted);
    });
  }

  /** BeginQuorumEpoch (key 53): a new leader announces its epoch. */
  handleBeginQuorumEpoch(request: RequestOf<typeof BeginQuorumEpoch>): Promise<Partial<ResponseOf<typeof BeginQuorumEpoch>>> {
    return this.serialized(async () => {
      const refused = this.refusedTopLevel(request.clusterId, request.topics, (t) => t.topicName, (p) => p.partitionIndex);
      if (refused !== null) return { errorCode: refused, topics: [] };
      const { leaderId, leaderEpoch } = request.topics[0]!.partitions[0]!;
      this.learnEndpoint(leaderId, request.leaderEndpoints);
      const errorCode = await this.acceptLeader(leaderId, leaderEpoch, request.voterId, request.topics[0]!.partitions[0]!.voterDirectoryId);
      return {
        errorCode: ErrorCode.NONE,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, errorCode, ...this.currentLeaderFields() }] }],
        nodeEndpoints: this.leaderNodeEndpoints(),
      };
    });
  }

  /** EndQuorumEpoch (key 54): the leader resigned; its preferred successors stand first (strict exponential backoff by rank). */
  handleEndQuorumEpoch(request: RequestOf<typeof EndQuorumEpoch>): Promise<Partial<ResponseOf<typeof EndQuorumEpoch>>> {
    return this.serialized(async () => {
      const refused = this.refusedTopLevel(request.clusterId, request.topics, (t) => t.topicName, (p) => p.partitionIndex);
      if (refused !== null) return { errorCode: refused, topics: [] };
      const partition = request.topics[0]!.partitions[0]!;
      const errorCode = await this.acceptLeader(partition.leaderId, partition.leaderEpoch, -1);
      const state = this.quorum.state;
      if (errorCode === ErrorCode.NONE && state.role === 'follower' && state.leaderId === partition.leaderId) {
        const successors = partition.preferredCandidates.length > 0 ? partition.preferredCandidates.map((c) => c.candidateId) : partition.preferredSuccessors;
        this.leaderResigned = true;
        this.armRoleTimer(this.successorBackoffMs(successors.indexOf(this.options.nodeId), successors.length), () => this.onFetchTimeout());
      }
      return {
        errorCode: ErrorCode.NONE,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, errorCode, ...this.currentLeaderFields() }] }],
        nodeEndpoints: this.leaderNodeEndpoints(),
      };
    });
  }

  /** Fetch (key 1) of `__cluster_metadata` at the leader: records, a diverging epoch, or a snapshot id; held up to maxWaitMs when nothing is new. */
  async handleFetch(request: FetchRequest, version: number): Promise<Partial<FetchResponse>> {
    const refused = await this.serialized(async () => this.refusedFetch(request));
    if (refused !== null) return refused;
    const partition = request.topics[0]!.partitions[0]!;
    const replicaId = version <= 14 ? request.replicaId : request.replicaState.replicaId;
    const first = await this.serialized(() => this.tryCompleteFetch(replicaId, partition));
    // Kafka's reasons to answer at once; the last (KIP-1166): the replica's high watermark is behind the leader's.
    const highWatermarkUpdated = first.errorCode === ErrorCode.NONE && (this.quorum.highWatermark ?? -1) > partition.highWatermark;
    if (!isEmptyFetch(first) || request.maxWaitMs === 0 || highWatermarkUpdated) return this.fetchResponse(first);
    await this.awaitNewData(request.maxWaitMs);
    if (this.closed) return this.fetchResponse(first);
    return this.fetchResponse(await this.serialized(() => this.tryCompleteFetch(replicaId, partition)));
  }

  /** FetchSnapshot (key 59) at the leader: a chunk of a snapshot file from `position`. */
  handleFetchSnapshot(request: RequestOf<typeof FetchSnapshot>): Promise<Partial<ResponseOf<typeof FetchSnapshot>>> {
    return this.serialized(async () => {
      const refused = this.refusedTopLevel(request.clusterId, request.topics, (t) => t.name, (p) => p.partition);
      if (refused !== null) return { errorCode: refused, topics: [] };
      const partition = request.topics[0]!.partitions[0]!;
      // A voter copying a snapshot is in touch with the leader (check quorum counts it).
      if (this.quorum.isLeader && request.replicaId >= 0) this.touchReplica(request.replicaId, partition.replicaDirectoryId);
      const answer = await SnapshotFetch.serve(this.options.env.fs, this.log, {
        leaderError: this.leaderOnlyError(partition.currentLeaderEpoch),
        snapshotId: { offset: partition.snapshotId.endOffset, epoch: partition.snapshotId.epoch },
        position: partition.position,
        maxBytes: Math.min(request.maxBytes, FETCH_BYTES_MAX),
      });
      return {
        errorCode: ErrorCode.NONE,
        topics: [{ name: METADATA_TOPIC, partitions: [{ index: METADATA_PARTITION, ...answer, snapshotId: partition.snapshotId, currentLeader: this.currentLeaderFields() }] }],
      };
    });
  }

  /** DescribeQuorum (key 55): the leader's view of every replica; other replicas answer NOT_LEADER_OR_FOLLOWER. */
  describeQuorum(): Partial<ResponseOf<typeof DescribeQuorum>> {
    const state = this.quorum.state;
    if (state.role !== 'leader') return { errorCode: ErrorCode.NONE, topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null }] }] };
    const nowMs = this.options.env.clock.nowMs();
    this.replicas.set(this.options.nodeId, { endOffset: this.log.logEndOffset, lastFetchTimestamp: nowMs, lastCaughtUpTimestamp: nowMs, directoryId: this.options.directoryId });
    const describe = (id: number): Record<string, unknown> => {
      const progress = this.replicas.get(id);
      return { replicaId: id, replicaDirectoryId: progress?.directoryId ?? ZERO_UUID, logEndOffset: progress?.endOffset ?? -1, lastFetchTimestamp: progress?.lastFetchTimestamp ?? -1, lastCaughtUpTimestamp: progress?.lastCaughtUpTimestamp ?? -1 };
    };
    const voters = this.kraftState.lastVoterSet;
    const observers = [...this.replicas.keys()].filter((id) => !voters.hasId(id)).sort((a, b) => a - b);
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      topics: [{
        topicName: METADATA_TOPIC,
        partitions: [{
          partitionIndex: METADATA_PARTITION,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          leaderId: this.options.nodeId,
          leaderEpoch: state.epoch,
          highWatermark: state.highWatermark ?? -1,
          currentVoters: voters.ids.map(describe),
          observers: observers.map(describe),
        }],
      }],
      nodes: voters.voters.filter((voter) => voter.endpoints.length > 0).map((voter) => ({ nodeId: voter.id, listeners: voter.endpoints.map((e) => ({ ...e })) })),
    } as Partial<ResponseOf<typeof DescribeQuorum>>;
  }


  // ---- the voter set (KIP-853)

  /** kraft.version as the log says (0: static voters). */
  get kraftVersion(): number {
    return this.kraftState.lastKraftVersion;
  }

  /** The voters as of the log end, uncommitted changes included. */
  get voterSet(): VoterSet {
    return this.kraftState.lastVoterSet;
  }

  /**
   * The voter sets committed so far (VotersRecords below the HW), oldest
   * first: each at its offset in the log, or, one a snapshot holds, at the
   * offset just below the snapshot (`fromSnapshot`). Empty before the HW is
   * known and with static voters.
   */
  get committedVoterSets(): readonly { offset: number; fromSnapshot: boolean; voters: VoterSet }[] {
    const highWatermark = this.quorum.highWatermark;
    if (highWatermark === null) return [];
    const logStartOffset = this.log.logStartOffset;
    return this.kraftState.voterSetsBelow(highWatermark).map((entry) => ({ offset: entry.offset, fromSnapshot: entry.offset < logStartOffset, voters: entry.value }));
  }

  /** Voter `id`'s endpoint on the controller listener, as the log's voter set has it. */
  voterEndpoint(id: number): VoterEndpoint | undefined {
    return this.kraftState.lastVoterSet.endpoint(id, this.options.listenerName);
  }

  /** A snapshot's KRaftVersionRecord and VotersRecord for the state at `offset` (none with kraft.version 0). */
  private kraftRecordsAt(offset: number): RaftControlRecord[] {
    const kraftVersion = this.kraftState.kraftVersionAt(offset);
    if (kraftVersion < 1) return [];
    const records: RaftControlRecord[] = [{ type: 'KRAFT_VERSION', data: { version: 0, kRaftVersion: kraftVersion } }];
    const voters = this.kraftState.recordedVoterSetAt(offset);
    if (voters !== null) records.push({ type: 'KRAFT_VOTERS', data: voters.toVotersRecord() });
    return records;
  }

  /**
   * Kafka's LeaderState.appendStartOfEpochControlRecords: with kraft.version
   * 1 and voters known only from the bootstrap snapshot (not yet in the log),
   * the first leader writes KRaftVersionRecord and VotersRecord after its
   * LeaderChangeMessage, so replicas that copy the log learn the voters.
   */
  private startOfEpochKraftRecords(): RaftControlRecord[] {
    const entry = this.kraftState.lastVoterSetEntry;
    const kraftVersion = this.kraftState.lastKraftVersion;
    if (kraftVersion < 1 || entry === null || entry.offset >= this.log.logStartOffset) return [];
    return [{ type: 'KRAFT_VERSION', data: { version: 0, kRaftVersion: kraftVersion } }, { type: 'KRAFT_VOTERS', data: entry.value.toVotersRecord() }];
  }

  /** At start: the latest snapshot's kraft records, then every control batch of the log after it. */
  private async loadKraftState(): Promise<void> {
    const id = this.log.latestSnapshotId;
    if (id !== null) {
      const snapshot = await readSnapshot(this.options.env.fs, this.log.dir, id, this.options.serde);
      this.kraftState.resetToSnapshot(id.offset, snapshot.kraftRecords ?? []);
    }
    for await (const stored of this.log.readBatches(this.log.logStartOffset, this.log.logEndOffset)) {
      if (stored.header.isControl) this.kraftState.replay(this.decodeBatch(stored).control, stored.header.baseOffset);
    }
    this.syncVoters();
  }

  /** Batches just appended from the leader: their KRaftVersion and Voters records apply at once. */
  private replayControlRecords(records: Buffer): void {
    let changed = false;
    for (const { position, header } of iterateBatches(records)) {
      if (!header.isControl) continue;
      const batch = this.decodeBatch({ header, bytes: records.subarray(position, position + header.sizeBytes) });
      this.kraftState.replay(batch.control, header.baseOffset);
      changed = true;
    }
    if (changed) this.syncVoters();
  }

  /** Makes the role state machine, the channel and a leader's timers follow the log's voter set. */
  private syncVoters(): void {
    const voters = this.kraftState.lastVoterSet;
    this.options.channel?.updateEndpoints?.(voters.voters.flatMap((voter) => {
      const endpoint = voters.endpoint(voter.id, this.options.listenerName);
      return endpoint === undefined ? [] : [{ nodeId: voter.id, host: endpoint.host, port: endpoint.port }];
    }));
    const ids = voters.ids;
    const current = this.quorum.voters;
    if (ids.length === current.length && ids.every((id) => current.includes(id))) return;
    this.options.logger?.info(`raft: node ${this.options.nodeId}: voters are now ${voters.describe()}`);
    this.quorum.setVoters(ids);
    // A leader starts announcing its epoch to a new voter, and checks the quorum over the new set.
    if (this.started && this.quorum.isLeader) this.armRole();
  }

  /** AddRaftVoter (key 80) as it comes off the wire: the new voter supports Spool's kraft.version range (no ApiVersions asked). */
  async handleAddRaftVoter(request: RequestOf<typeof AddRaftVoter>): Promise<Partial<ResponseOf<typeof AddRaftVoter>>> {
    const voter = voterOfRequest(request, { min: KRAFT_VERSION_MIN, max: KRAFT_VERSION_MAX });
    const result = await this.addVoter(voter, { timeoutMs: request.timeoutMs, ackWhenCommitted: request.ackWhenCommitted, clusterId: request.clusterId });
    return { throttleTimeMs: 0, ...result };
  }

  /** RemoveRaftVoter (key 81) as it comes off the wire. */
  async handleRemoveRaftVoter(request: RequestOf<typeof RemoveRaftVoter>): Promise<Partial<ResponseOf<typeof RemoveRaftVoter>>> {
    const result = await this.removeVoter(request.voterId, request.voterDirectoryId, { clusterId: request.clusterId });
    return { throttleTimeMs: 0, ...result };
  }

  /** AddRaftVoter (key 80) at the leader, with Kafka's checks (AddVoterHandler); resolves once the change commits. */
  addVoter(voter: VoterNode, options: { timeoutMs: number; ackWhenCommitted: boolean; clusterId?: string | null }): Promise<VoterChangeResult> {
    const invalid = this.invalidVoter(voter, options.clusterId ?? null);
    if (invalid !== null) return Promise.resolve(invalid);
    return this.changeVoters('add', options, () => {
      const voters = this.kraftState.lastVoterSet;
      if (voters.hasId(voter.id)) return refuse(ErrorCode.DUPLICATE_VOTER, `The voter id for ReplicaKey(id=${voter.id}, directoryId=${voter.directoryId}) is already part of the set of voters ${voters.describe()}.`);
      if (!this.isReplicaCaughtUp(voter.id, voter.directoryId)) {
        return refuse(ErrorCode.REQUEST_TIMED_OUT, `Aborted add voter operation for ReplicaKey(id=${voter.id}, directoryId=${voter.directoryId}) since it is lagging behind`);
      }
      return voters.addVoter(voter)!;
    });
  }

  /** RemoveRaftVoter (key 81) at the leader (RemoveVoterHandler); a leader that removed itself resigns once that commits. */
  removeVoter(voterId: number, voterDirectoryId: string, options: { clusterId?: string | null } = {}): Promise<VoterChangeResult> {
    if (this.clusterIdRefused(options.clusterId ?? null)) return Promise.resolve(refuse(ErrorCode.INCONSISTENT_CLUSTER_ID, null));
    if (voterId < 0 || voterDirectoryId === ZERO_UUID) return Promise.resolve(refuse(ErrorCode.INVALID_REQUEST, "Remove voter request didn't include a valid voter"));
    return this.changeVoters('remove', { timeoutMs: this.config.requestTimeoutMs, ackWhenCommitted: true }, () => {
      const voters = this.kraftState.lastVoterSet;
      const next = voters.removeVoter(voterId, voterDirectoryId);
      if (next === null) return refuse(ErrorCode.VOTER_NOT_FOUND, `Cannot remove voter ReplicaKey(id=${voterId}, directoryId=${voterDirectoryId}) from the set of voters ${voters.describe()}`);
      return next;
    });
  }

  /** UpdateRaftVoter (key 82) at the leader (UpdateVoterHandler): a voter's new endpoints; answered once appended. */
  updateVoter(voter: VoterNode, currentLeaderEpoch: number, options: { clusterId?: string | null } = {}): Promise<VoterChangeResult> {
    const invalid = this.invalidVoter(voter, options.clusterId ?? null);
    if (invalid !== null) return Promise.resolve(invalid);
    const epochError = this.leaderOnlyError(currentLeaderEpoch);
    if (epochError !== ErrorCode.NONE) return Promise.resolve({ errorCode: epochError, errorMessage: null });
    return this.changeVoters('update', { timeoutMs: this.config.requestTimeoutMs, ackWhenCommitted: false }, () => {
      const kraftVersion = this.kraftState.lastKraftVersion;
      if (kraftVersion < voter.kraftVersionMin || kraftVersion > voter.kraftVersionMax) {
        return refuse(ErrorCode.INVALID_REQUEST, `The voter's kraft.version range [${voter.kraftVersionMin}, ${voter.kraftVersionMax}] does not support the finalized version ${kraftVersion}`);
      }
      const next = this.kraftState.lastVoterSet.updateVoter(voter);
      if (next === null) return refuse(ErrorCode.VOTER_NOT_FOUND, `ReplicaKey(id=${voter.id}, directoryId=${voter.directoryId}) is not a voter`);
      return next;
    });
  }

  private clusterIdRefused(clusterId: string | null): boolean {
    const expected = this.options.clusterId;
    return clusterId !== null && clusterId !== '' && expected !== undefined && clusterId !== expected;
  }

  /** Kafka's request checks before a voter is added or updated: the cluster, a voter key with a directory id, an endpoint on the controller listener. */
  private invalidVoter(voter: VoterNode, clusterId: string | null): VoterChangeResult | null {
    if (this.clusterIdRefused(clusterId)) return refuse(ErrorCode.INCONSISTENT_CLUSTER_ID, null);
    if (voter.id < 0 || voter.directoryId === ZERO_UUID) return refuse(ErrorCode.INVALID_REQUEST, "Add voter request didn't include a valid voter");
    const listenerName = this.options.listenerName;
    if (listenerName !== undefined && !voter.endpoints.some((e) => e.name === listenerName)) {
      const endpoints = voter.endpoints.map((e) => `${e.name}://${e.host}:${e.port}`).join(', ');
      return refuse(ErrorCode.INVALID_REQUEST, `Add voter request didn't include the endpoint (${endpoints}) for the default listener ${listenerName}`);
    }
    return null;
  }

  /**
   * The checks every voter change makes first (one change at a time, the
   * leader's high watermark established in its epoch, kraft.version 1, the
   * last VotersRecord committed), then `next` names the new set or refuses;
   * the new VotersRecord is appended and, with `ackWhenCommitted`, awaited
   * until committed or `timeoutMs`.
   */
  private async changeVoters(
    kind: 'add' | 'remove' | 'update',
    options: { timeoutMs: number; ackWhenCommitted: boolean },
    next: () => VoterSet | VoterChangeResult,
  ): Promise<VoterChangeResult> {
    const appended = await this.serialized(async (): Promise<VoterChangeResult | { lastOffset: number; committed: Promise<void> }> => {
      const state = this.quorum.state;
      if (state.role !== 'leader') return refuse(ErrorCode.NOT_LEADER_OR_FOLLOWER, null);
      if (this.voterChange !== null) return refuse(ErrorCode.REQUEST_TIMED_OUT, 'Request timed out waiting for leader to handle previous voter change request');
      const highWatermark = state.highWatermark;
      if (highWatermark === null) return refuse(ErrorCode.REQUEST_TIMED_OUT, 'Request timed out waiting for leader to establish HWM and fence previous voter changes');
      const kraftVersion = this.kraftState.lastKraftVersion;
      const verb = kind === 'add' ? 'adding' : kind === 'remove' ? 'removing' : 'updating';
      if (kraftVersion < 1) return refuse(ErrorCode.UNSUPPORTED_VERSION, `Cluster doesn't support ${verb} voter because the kraft.version feature is ${kraftVersion}`);
      const entry = this.kraftState.lastVoterSetEntry;
      if (entry === null || entry.offset >= highWatermark) {
        return refuse(ErrorCode.REQUEST_TIMED_OUT, `Request timed out waiting for voters to commit the latest voter change at ${entry?.offset ?? 'none'} with HWM ${highWatermark}`);
      }
      const voters = next();
      if (!(voters instanceof VoterSet)) return voters;
      const lastOffset = this.log.logEndOffset;
      const committed = this.awaitCommit(lastOffset);
      committed.catch(() => undefined);
      this.voterChange = { kind, lastOffset };
      const batch = buildRaftControlBatch([{ type: 'KRAFT_VOTERS', data: voters.toVotersRecord() }], { baseOffset: lastOffset, epoch: state.epoch, timestampMs: this.options.env.clock.nowMs() });
      this.kraftState.replay([{ type: 'KRAFT_VOTERS', data: voters.toVotersRecord() }], lastOffset);
      this.syncVoters();
      await this.appendAsLeader(batch, state.epoch);
      return { lastOffset, committed };
    });
    if ('errorCode' in appended) return appended;
    if (!options.ackWhenCommitted) return { errorCode: ErrorCode.NONE, errorMessage: null };
    return this.awaitVoterChange(appended.committed, options.timeoutMs);
  }

  private awaitVoterChange(committed: Promise<void>, timeoutMs: number): Promise<VoterChangeResult> {
    return new Promise((resolve) => {
      const timer = this.options.env.timers.schedule(timeoutMs, () => resolve(refuse(ErrorCode.REQUEST_TIMED_OUT, `The voter change did not commit within ${timeoutMs} ms`)));
      committed.then(
        () => {
          timer.cancel();
          resolve({ errorCode: ErrorCode.NONE, errorMessage: null });
        },
        (error: Error) => {
          timer.cancel();
          resolve(refuse(error instanceof NotLeaderError ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_SERVER_ERROR, error.message));
        },
      );
    });
  }

  /** Leader, high watermark moved: a committed voter change ends; a leader no longer among the voters resigns. */
  private async maybeCompleteVoterChange(highWatermark: number): Promise<void> {
    const change = this.voterChange;
    if (change === null || highWatermark <= change.lastOffset) return;
    this.voterChange = null;
    if (this.quorum.isLeader && !this.quorum.voters.includes(this.options.nodeId)) {
      this.options.logger?.info(`raft: leader ${this.options.nodeId} is no longer a voter; resigning epoch ${this.quorum.epoch}`);
      await this.transition(this.quorum.transitionToResigned());
      this.sendEndQuorumEpochs();
    }
  }

  /**
   * controller.quorum.auto.join.enable (KIP-853, Kafka's
   * shouldSendAddOrRemoveVoterRequest): a controller observing a kraft.version
   * 1 quorum asks its leader to add it, at most once per fetch timeout; when
   * its id votes with another directory id (a controller whose disk was
   * replaced), it first asks for that stale voter's removal. The leader's
   * refusals (not caught up yet, a change in flight) are only retried.
   */
  private maybeAutoJoin(): void {
    const endpoint = this.options.localEndpoint;
    const state = this.quorum.state;
    if (!this.config.autoJoinEnable || endpoint === undefined || state.role !== 'follower' || this.kraftState.lastKraftVersion < 1) return;
    const voters = this.kraftState.lastVoterSet;
    const self = voters.get(this.options.nodeId);
    if (self !== undefined && self.directoryId === this.options.directoryId) return;
    const nowMs = this.options.env.clock.monotonicMs();
    if (nowMs - this.lastAutoJoinMs < this.config.fetchTimeoutMs) return;
    this.lastAutoJoinMs = nowMs;
    const clusterId = this.options.clusterId ?? null;
    const sent = self !== undefined
      ? this.options.channel!.send(state.leaderId, RemoveRaftVoter, { clusterId, voterId: self.id, voterDirectoryId: self.directoryId })
      : this.options.channel!.send(state.leaderId, AddRaftVoter, {
        clusterId,
        timeoutMs: this.config.requestTimeoutMs,
        voterId: this.options.nodeId,
        voterDirectoryId: this.options.directoryId,
        listeners: [{ ...endpoint }],
        ackWhenCommitted: false,
      });
    sent.then(
      (response) => this.options.logger?.info(`raft: node ${this.options.nodeId} asked to ${self === undefined ? 'join' : 'replace its stale voter'}: error ${response.errorCode}`),
      (error: Error) => this.options.logger?.debug(`raft: auto-join request failed: ${error.message}`),
    );
  }

  /** Kafka's isReplicaCaughtUp for a replica to add: an observer with this directory id that caught up and fetched within the last hour. */
  private isReplicaCaughtUp(replicaId: number, directoryId: string): boolean {
    const progress = this.replicas.get(replicaId);
    if (progress === undefined || progress.directoryId !== directoryId) return false;
    const nowMs = this.options.env.clock.nowMs();
    return progress.lastCaughtUpTimestamp > 0 && progress.lastFetchTimestamp > nowMs - CAUGHT_UP_FETCH_WINDOW_MS;
  }

  // ---- roles and timers

  /** Arms what the current role waits for; called after every transition, inside the queue. */
  private armRole(): void {
    this.cancelRoleTimer();
    const generation = this.generation;
    const state = this.quorum.state;
    switch (state.role) {
      case 'unattached':
        if (this.quorum.isVoter) this.armRoleTimer(this.randomElectionTimeoutMs(), () => this.transition(this.quorum.transitionToProspective()));
        else this.fetchLoop(generation);
        return;
      case 'prospective':
        this.armRoleTimer(this.randomElectionTimeoutMs(), () => this.transition(this.quorum.transitionFromProspective()));
        return;
      case 'candidate':
        this.armRoleTimer(this.randomElectionTimeoutMs(), () => this.standForElection());
        return;
      case 'leader':
        if (this.isOnlyVoter) return;
        this.armRoleTimer(this.config.fetchTimeoutMs * CHECK_QUORUM_FETCH_TIMEOUTS, () => this.checkQuorum());
        this.sendBeginQuorumEpochs(generation);
        return;
      case 'resigned':
        if (!this.quorum.isVoter) {
          // A leader that removed itself (KIP-853) follows the log as an observer once the voters elect a successor.
          this.seekingLeader = true;
          this.fetchLoop(generation);
          return;
        }
        this.armRoleTimer(this.randomElectionTimeoutMs(), () => this.standForElection());
        return;
      case 'follower':
        // Like Kafka's fresh FollowerState: until a fetch succeeds, the leader is not known to be reachable (pre-votes are granted).
        this.lastLeaderContactMs = -Infinity;
        this.leaderResigned = false;
        this.seekingLeader = false;
        this.armRoleTimer(this.config.fetchTimeoutMs, () => this.onFetchTimeout());
        this.fetchLoop(generation);
        return;
    }
  }

  private armRoleTimer(delayMs: number, onExpiry: () => Promise<void> | void): void {
    this.cancelRoleTimer();
    const generation = this.generation;
    this.roleTimer = this.options.env.timers.schedule(delayMs, () => {
      void this.serialized(async () => {
        if (this.generation === generation) await onExpiry();
      }).catch((error: unknown) => this.logFailure(error));
    });
  }

  private cancelRoleTimer(): void {
    this.roleTimer?.cancel();
    this.roleTimer = null;
  }

  /**
   * Runs the transition's effects, then arms the new role. The generation
   * moves first, so requests the effects send (votes) belong to the new role
   * and anything of the old one is ignored from here on.
   */
  private async transition(effects: readonly RaftEffect[]): Promise<void> {
    this.generation++;
    this.cancelRoleTimer();
    await this.run(effects);
    if (!this.quorum.isLeader) this.leaveLeadership();
    const role = this.quorum.state.role;
    // Kafka's maybeTransitionForward: an election this replica's own vote already decides (the only voter, e.g. once a
    // removed leader resigned to it) goes on at once, as no other voter's answer will come to move it.
    if ((role === 'prospective' || role === 'candidate') && this.quorum.isVoteGranted()) {
      return role === 'prospective' ? this.transition(this.quorum.transitionToCandidate()) : this.becomeLeader();
    }
    this.armRole();
  }

  /** An election timeout: a voter asks for pre-votes again; a replica removed from the voters meanwhile seeks the leader instead. */
  private async standForElection(): Promise<void> {
    if (this.quorum.isVoter) return this.transition(this.quorum.transitionToProspective());
    this.seekingLeader = true;
    this.fetchLoop(this.generation);
  }

  private leaveLeadership(): void {
    this.voterChange = null;
    this.failCommitWaiters(new NotLeaderError(`node ${this.options.nodeId} lost the leadership in epoch ${this.quorum.epoch}`));
    for (const wake of this.fetchWaiters) wake();
  }

  private randomElectionTimeoutMs(): number {
    return this.config.electionTimeoutMs + this.options.env.random.nextInt(this.config.electionTimeoutMs);
  }

  /** A follower that stopped hearing from its leader seeks a new one: a voter by pre-vote, an observer by asking the voters. */
  private async onFetchTimeout(): Promise<void> {
    if (this.quorum.isVoter && this.quorum.state.role !== 'resigned') return this.transition(this.quorum.transitionToProspective());
    this.seekingLeader = true;
    this.armRoleTimer(this.config.fetchTimeoutMs, () => this.onFetchTimeout());
  }

  private leaderReachable(): boolean {
    if (this.quorum.state.role !== 'follower' || this.leaderResigned) return false;
    return this.options.env.clock.monotonicMs() - this.lastLeaderContactMs < this.config.fetchTimeoutMs;
  }

  private successorBackoffMs(position: number, total: number): number {
    if (position === 0) return 0;
    if (position < 0 || position >= total) return this.config.electionBackoffMaxMs;
    const baseMs = this.config.electionBackoffMaxMs >> (total - 1);
    return Math.min(this.config.electionBackoffMaxMs, baseMs << (position - 1));
  }

  private electionBackoffMs(): number {
    this.electionRetries++;
    const bound = 2 << Math.min(20, this.electionRetries - 1);
    return Math.min(ELECTION_BACKOFF_BASE_MS * this.options.env.random.nextInt(bound), this.config.electionBackoffMaxMs);
  }

  // ---- elections

  private sendVoteRequests(voters: readonly number[], preVote: boolean): void {
    const generation = this.generation;
    const endOffset = this.endOffset();
    for (const voterId of voters) {
      const request: Partial<VoteRequest> = {
        clusterId: this.options.clusterId ?? null,
        voterId,
        topics: [{
          topicName: METADATA_TOPIC,
          partitions: [{
            partitionIndex: METADATA_PARTITION,
            replicaEpoch: this.quorum.epoch,
            replicaId: this.options.nodeId,
            replicaDirectoryId: this.options.directoryId,
            voterDirectoryId: this.kraftState.lastVoterSet.get(voterId)?.directoryId ?? ZERO_UUID,
            lastOffsetEpoch: endOffset.epoch,
            lastOffset: endOffset.offset,
            preVote,
          }],
        }],
      };
      this.sendRequest(voterId, Vote, request, { versionMin: preVote ? 2 : 0 }, {
        onResponse: (response) => this.handleVoteResponse(voterId, response, generation),
        onError: (error) => this.handleVoteError(voterId, error, { generation, preVote }),
      });
    }
  }

  private async handleVoteResponse(voterId: number, response: VoteResponse, generation: number): Promise<void> {
    const partition = metadataPartitionOf(response.topics, (t) => t.topicName, (p) => p.partitionIndex);
    if (response.errorCode !== ErrorCode.NONE || partition === null) return;
    this.learnNodeEndpoints(response.nodeEndpoints);
    if (await this.maybeHandleCommonResponse(partition)) return;
    if (this.generation !== generation || partition.errorCode !== ErrorCode.NONE) return;
    // A replica removed from the voters since the request was sent has no vote to count.
    if (!this.quorum.voters.includes(voterId)) return;
    const state = this.quorum.state;
    if (state.role !== 'candidate' && state.role !== 'prospective') return;
    if (partition.voteGranted) {
      if (!this.quorum.recordGrantedVote(voterId)) return;
      if (state.role === 'prospective') return this.transition(this.quorum.transitionToCandidate());
      return this.becomeLeader();
    }
    if (!this.quorum.recordRejectedVote(voterId)) return;
    if (state.role === 'prospective') return this.transition(this.quorum.transitionFromProspective());
    // A rejected candidate backs off (exponentially, randomised) before asking for pre-votes again.
    this.armRoleTimer(this.electionBackoffMs(), () => this.standForElection());
  }

  private async handleVoteError(voterId: number, error: Error, sent: { generation: number; preVote: boolean }): Promise<void> {
    if (this.generation !== sent.generation) return;
    // KIP-996: a voter too old for pre-votes (Vote v2) cannot answer one, so the prospective stands as candidate at once.
    if (sent.preVote && errorCodeOf(error) === ErrorCode.UNSUPPORTED_VERSION) return this.transition(this.quorum.transitionToCandidate());
    this.retryLater(sent.generation, () => this.sendVoteRequests([voterId], sent.preVote));
  }

  private async becomeLeader(): Promise<void> {
    this.electionRetries = 0;
    this.replicas = new Map();
    this.acknowledged = new Set([this.options.nodeId]);
    await this.transition(this.quorum.transitionToLeader(this.log.logEndOffset));
  }

  private sendBeginQuorumEpochs(generation: number): void {
    const epoch = this.quorum.epoch;
    const pending = this.quorum.voters.filter((voterId) => voterId !== this.options.nodeId && !this.acknowledged.has(voterId));
    for (const voterId of pending) {
      const request: Partial<RequestOf<typeof BeginQuorumEpoch>> = {
        clusterId: this.options.clusterId ?? null,
        voterId,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, voterDirectoryId: this.kraftState.lastVoterSet.get(voterId)?.directoryId ?? ZERO_UUID, leaderId: this.options.nodeId, leaderEpoch: epoch }] }],
        leaderEndpoints: this.localLeaderEndpoints(),
      };
      this.sendRequest(voterId, BeginQuorumEpoch, request, {}, {
        onResponse: async (response) => {
          const partition = metadataPartitionOf(response.topics, (t) => t.topicName, (p) => p.partitionIndex);
          if (partition === null || (await this.maybeHandleCommonResponse(partition))) return;
          if (this.generation === generation && partition.errorCode === ErrorCode.NONE) this.acknowledged.add(voterId);
        },
        onError: () => undefined,
      });
    }
    if (pending.length === 0) return;
    // Voters that have not acknowledged the epoch hear it again after half a fetch timeout (Kafka's beginQuorumEpochTimeoutMs).
    this.options.env.timers.schedule(this.config.fetchTimeoutMs / 2, () => {
      void this.serialized(async () => {
        if (this.generation === generation) this.sendBeginQuorumEpochs(generation);
      }).catch((error: unknown) => this.logFailure(error));
    });
  }

  /** Leader: resigns when no majority of voters fetched within the check-quorum window. */
  private async checkQuorum(): Promise<void> {
    const windowMs = this.config.fetchTimeoutMs * CHECK_QUORUM_FETCH_TIMEOUTS;
    const nowMs = this.options.env.clock.nowMs();
    const heard = this.quorum.voters.filter((id) => id === this.options.nodeId || nowMs - (this.replicas.get(id)?.lastFetchTimestamp ?? -Infinity) < windowMs);
    if (heard.length > this.quorum.voters.length / 2) {
      this.armRoleTimer(windowMs, () => this.checkQuorum());
      return;
    }
    this.options.logger?.info(`raft: leader ${this.options.nodeId} heard from only [${heard.join(',')}] in ${windowMs} ms; resigning epoch ${this.quorum.epoch}`);
    await this.transition(this.quorum.transitionToResigned());
    this.sendEndQuorumEpochs();
  }

  private async resignForShutdown(): Promise<Promise<unknown>[]> {
    if (!this.quorum.isLeader || this.isOnlyVoter) return [];
    await this.transition(this.quorum.transitionToResigned());
    return this.sendEndQuorumEpochs();
  }

  /** EndQuorumEpoch to the other voters, the most caught-up first as preferred candidates. */
  private sendEndQuorumEpochs(): Promise<unknown>[] {
    const others = this.quorum.voters.filter((id) => id !== this.options.nodeId);
    const successors = [...others].sort((a, b) => (this.replicas.get(b)?.endOffset ?? -1) - (this.replicas.get(a)?.endOffset ?? -1));
    const request: Partial<RequestOf<typeof EndQuorumEpoch>> = {
      clusterId: this.options.clusterId ?? null,
      topics: [{
        topicName: METADATA_TOPIC,
        partitions: [{
          partitionIndex: METADATA_PARTITION,
          leaderId: this.options.nodeId,
          leaderEpoch: this.quorum.epoch,
          preferredSuccessors: successors,
          preferredCandidates: successors.map((candidateId) => ({ candidateId, candidateDirectoryId: this.replicas.get(candidateId)?.directoryId ?? ZERO_UUID })),
        }],
      }],
      leaderEndpoints: this.localLeaderEndpoints(),
    };
    return others.map((voterId) => this.options.channel!.send(voterId, EndQuorumEpoch, request).catch(() => undefined));
  }

  /**
   * Kafka's maybeHandleCommonResponse: a response from a later epoch moves
   * this replica there (following the leader it names); a leader named for
   * the current epoch is followed. True when the response was consumed.
   */
  private async maybeHandleCommonResponse(partition: { errorCode: number; leaderId: number; leaderEpoch: number }): Promise<boolean> {
    const { errorCode, leaderId, leaderEpoch } = partition;
    if (leaderEpoch === this.quorum.epoch && leaderId >= 0 && leaderId === this.quorum.leaderId) this.seekingLeader = false;
    if (leaderEpoch < this.quorum.epoch || errorCode === ErrorCode.UNKNOWN_LEADER_EPOCH) return true;
    if (leaderEpoch > this.quorum.epoch || errorCode === ErrorCode.FENCED_LEADER_EPOCH || errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
      await this.maybeTransition(leaderId, leaderEpoch);
      return true;
    }
    if (leaderId >= 0 && this.quorum.leaderId === null && leaderId !== this.options.nodeId) {
      await this.transition(this.quorum.transitionToFollower(leaderEpoch, leaderId));
      return errorCode !== ErrorCode.NONE;
    }
    return false;
  }

  private async maybeTransition(leaderId: number, epoch: number): Promise<void> {
    const known = leaderId >= 0 && leaderId !== this.options.nodeId;
    if (epoch > this.quorum.epoch) {
      await this.transition(known ? this.quorum.transitionToFollower(epoch, leaderId) : this.quorum.transitionToUnattached(epoch));
    } else if (epoch === this.quorum.epoch && known && this.quorum.leaderId !== leaderId) {
      await this.transition(this.quorum.transitionToFollower(epoch, leaderId));
    }
  }

  /** KIP-853: a request addressed to (voterId, voterDirectoryId) is for this replica (-1 and ZERO name no one in particular). */
  private isThisVoterKey(voterId: number, voterDirectoryId: string): boolean {
    if (voterId < 0) return true;
    if (voterId !== this.options.nodeId) return false;
    return voterDirectoryId === ZERO_UUID || voterDirectoryId === this.options.directoryId;
  }

  /** A new leader's endpoints (BeginQuorumEpoch's leaderEndpoints), on this node's controller listener. */
  private learnEndpoint(nodeId: number, endpoints: readonly { name: string; host: string; port: number }[]): void {
    if (this.options.voters.length > 0) return; // static voters: their addresses are controller.quorum.voters'
    const endpoint = endpoints.find((e) => this.options.listenerName === undefined || e.name === this.options.listenerName);
    if (endpoint !== undefined && nodeId >= 0) this.options.channel?.updateEndpoints?.([{ nodeId, host: endpoint.host, port: endpoint.port }]);
  }

  /** A response's nodeEndpoints (KIP-853): how to reach the leader it names. */
  private learnNodeEndpoints(nodes: readonly { nodeId: number; host: string; port: number }[] | undefined): void {
    if (this.options.voters.length > 0) return; // static voters: their addresses are controller.quorum.voters'
    if (nodes !== undefined && nodes.length > 0) this.options.channel?.updateEndpoints?.(nodes.map(({ nodeId, host, port }) => ({ nodeId, host, port })));
  }

  /**
   * The endpoint of the leader a response names, for its nodeEndpoints
   * (KIP-853): a follower's answer carries it as the leader's does, so that
   * an observer that asked a bootstrap server can reach the leader it is
   * told of. Empty while no leader is known, or its endpoint is not.
   */
  private leaderNodeEndpoints(): { nodeId: number; host: string; port: number }[] {
    const leaderId = this.quorum.leaderId;
    if (leaderId === null) return [];
    const own = leaderId === this.options.nodeId;
    const endpoint = this.kraftState.lastVoterSet.endpoint(leaderId, this.options.listenerName) ?? (own ? this.options.localEndpoint : undefined);
    return endpoint === undefined ? [] : [{ nodeId: leaderId, host: endpoint.host, port: endpoint.port }];
  }

  /** This leader's endpoints for BeginQuorumEpoch and EndQuorumEpoch requests. */
  private localLeaderEndpoints(): { name: string; host: string; port: number }[] {
    const voter = this.kraftState.lastVoterSet.get(this.options.nodeId);
    if (voter !== undefined && voter.endpoints.length > 0) return voter.endpoints.map((e) => ({ ...e }));
    return this.options.localEndpoint === undefined ? [] : [{ ...this.options.localEndpoint }];
  }

  /** BeginQuorumEpoch and EndQuorumEpoch: the sender leads `leaderEpoch`; returns the partition error. */
  private async acceptLeader(leaderId: number, leaderEpoch: number, voterId: number, voterDirectoryId: string = ZERO_UUID): Promise<number> {
    if (leaderEpoch < this.quorum.epoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (leaderId < 0) return ErrorCode.INVALID_REQUEST;
    if (!this.isThisVoterKey(voterId, voterDirectoryId)) return ErrorCode.INVALID_VOTER_KEY;
    if (leaderId === this.options.nodeId) return leaderEpoch === this.quorum.epoch ? ErrorCode.NONE : ErrorCode.INVALID_REQUEST;
    await this.maybeTransition(leaderId, leaderEpoch);
    return ErrorCode.NONE;
  }

  // ---- replication: the fetching side

  /** Fetches from the leader (an observer without one asks a random voter) until the role changes. */
  private fetchLoop(generation: number): void {
    if (this.closed || this.generation !== generation) return;
    if (this.snapshotFetch !== null) return this.sendFetchSnapshot(generation, this.snapshotFetch);
    const destination = this.fetchDestination();
    const request = this.buildFetchRequest();
    this.sendRequest(destination, Fetch, request, {}, {
      onResponse: async (response) => {
        if (await this.handleFetchResponse(response, generation)) this.fetchLoop(generation);
        else this.retryLater(generation, () => this.fetchLoop(generation));
      },
      onError: async (error) => {
        this.options.logger?.debug(`raft: fetch from ${destination} failed: ${error.message}`);
        this.retryLater(generation, () => this.fetchLoop(generation));
      },
    });
  }

  private fetchDestination(): number {
    const leaderId = this.quorum.leaderId;
    if (leaderId !== null && leaderId !== this.options.nodeId && !this.seekingLeader) return leaderId;
    const others = this.quorum.voters.filter((id) => id !== this.options.nodeId);
    const bootstrap = this.options.bootstrapServers ?? [];
    // KIP-853: without a leader, ask the bootstrap servers (the voters this replica knows may be gone).
    const candidates = bootstrap.length > 0 && (leaderId === null || this.seekingLeader || others.length === 0) ? bootstrap : others;
    if (candidates.length === 0) throw new Error(`node ${this.options.nodeId} knows no voter and no bootstrap server to fetch from`);
    return candidates[this.options.env.random.nextInt(candidates.length)]!;
  }

  private buildFetchRequest(): Partial<FetchRequest> {
    const partition: Partial<FetchPartitionRequest> = {
      partition: METADATA_PARTITION,
      currentLeaderEpoch: this.quorum.epoch,
      fetchOffset: this.log.logEndOffset,
      lastFetchedEpoch: this.log.lastEpoch,
      logStartOffset: this.log.logStartOffset,
      partitionMaxBytes: 0,
      replicaDirectoryId: this.options.directoryId,
      // KIP-1166: the leader answers at once, rather than parking the fetch, when it knows a higher high watermark.
      highWatermark: this.quorum.highWatermark ?? -1,
    };
    return {
      clusterId: this.options.clusterId ?? null,
      replicaId: this.options.nodeId,
      replicaState: { replicaId: this.options.nodeId, replicaEpoch: -1 },
      maxWaitMs: this.config.fetchMaxWaitMs,
      minBytes: 0,
      maxBytes: FETCH_BYTES_MAX,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: METADATA_TOPIC, topicId: METADATA_TOPIC_ID, partitions: [partition as FetchPartitionRequest] }],
      forgottenTopicsData: [],
      rackId: '',
    };
  }

  /**
   * Applies a fetch response; true to fetch again at once, false to wait
   * controller.quorum.retry.backoff.ms first. A fetch loop whose role ended
   * stops at its next turn (the new role runs its own).
   */
  private async handleFetchResponse(response: FetchResponse, generation: number): Promise<boolean> {
    if (this.generation !== generation) return false;
    const partition = metadataPartitionOf(response.responses, (t) => (t.topicId === METADATA_TOPIC_ID ? METADATA_TOPIC : t.topic), (p) => p.partitionIndex);
    if (response.errorCode !== ErrorCode.NONE || partition === null) return false;
    this.learnNodeEndpoints(response.nodeEndpoints);
    const leader = { errorCode: partition.errorCode, leaderId: partition.currentLeader.leaderId, leaderEpoch: partition.currentLeader.leaderEpoch };
    if ((await this.maybeHandleCommonResponse(leader)) || this.generation !== generation) return false;
    if (partition.errorCode !== ErrorCode.NONE || this.quorum.state.role !== 'follower') return false;
    this.heardFromLeader();
    if (isSet(partition.divergingEpoch)) {
      const endOffset = await this.log.truncateToEndOffset({ offset: partition.divergingEpoch.endOffset, epoch: partition.divergingEpoch.epoch });
      this.kraftState.truncateNewEntries(endOffset);
      this.syncVoters();
      return true;
    }
    if (isSet({ epoch: partition.snapshotId.epoch, endOffset: partition.snapshotId.endOffset })) {
      this.snapshotFetch = new SnapshotFetch({ offset: partition.snapshotId.endOffset, epoch: partition.snapshotId.epoch });
      return true;
    }
    if (partition.records !== null && partition.records.length > 0) {
      await this.log.appendAsFollower(partition.records);
      await this.log.flush();
      this.replayControlRecords(partition.records);
    }
    await this.followHighWatermark(partition.highWatermark);
    return true;
  }

  private heardFromLeader(): void {
    this.lastLeaderContactMs = this.options.env.clock.monotonicMs();
    this.maybeAutoJoin();
    if (this.leaderResigned) return;
    this.armRoleTimer(this.config.fetchTimeoutMs, () => this.onFetchTimeout());
  }

  private async followHighWatermark(leaderHighWatermark: number): Promise<void> {
    if (leaderHighWatermark < 0) return;
    await this.run(this.quorum.updateFollowerHighWatermark(Math.min(leaderHighWatermark, this.log.logEndOffset)));
  }

  private sendFetchSnapshot(generation: number, fetch: SnapshotFetch): void {
    const request: Partial<RequestOf<typeof FetchSnapshot>> = {
      clusterId: this.options.clusterId ?? null,
      replicaId: this.options.nodeId,
      maxBytes: FETCH_BYTES_MAX,
      topics: [{
        name: METADATA_TOPIC,
        partitions: [{
          partition: METADATA_PARTITION,
          currentLeaderEpoch: this.quorum.epoch,
          snapshotId: { endOffset: fetch.id.offset, epoch: fetch.id.epoch },
          position: fetch.position,
          replicaDirectoryId: this.options.directoryId,
        }],
      }],
    };
    this.sendRequest(this.fetchDestination(), FetchSnapshot, request, {}, {
      onResponse: async (response) => {
        if (await this.handleFetchSnapshotResponse(response, generation, fetch)) this.fetchLoop(generation);
        else this.retryLater(generation, () => this.fetchLoop(generation));
      },
      onError: async () => this.retryLater(generation, () => this.fetchLoop(generation)),
    });
  }

  private async handleFetchSnapshotResponse(response: ResponseOf<typeof FetchSnapshot>, generation: number, fetch: SnapshotFetch): Promise<boolean> {
    if (this.generation !== generation || this.snapshotFetch !== fetch) return false;
    const partition = metadataPartitionOf(response.topics, (t) => t.name, (p) => p.index);
    if (response.errorCode !== ErrorCode.NONE || partition === null) return false;
    const leader = { errorCode: partition.errorCode, leaderId: partition.currentLeader.leaderId, leaderEpoch: partition.currentLeader.leaderEpoch };
    if (await this.maybeHandleCommonResponse(leader)) return false;
    if (partition.errorCode === ErrorCode.SNAPSHOT_NOT_FOUND || partition.errorCode === ErrorCode.POSITION_OUT_OF_RANGE) {
      // The leader's snapshot moved on: fetch again, and the leader names its current one.
      this.snapshotFetch = null;
      return true;
    }
    if (partition.errorCode !== ErrorCode.NONE) return false;
    this.heardFromLeader();
    if (!fetch.accept(partition.position, partition.size, partition.unalignedRecords ?? Buffer.alloc(0))) return true;
    await this.installSnapshot(fetch);
    return true;
  }

  /** A complete snapshot from the leader replaces the log, and listeners load it. */
  private async installSnapshot(fetch: SnapshotFetch): Promise<void> {
    await fetch.write(this.options.env.fs, this.log.dir);
    const content = await readSnapshot(this.options.env.fs, this.log.dir, fetch.id, this.options.serde);
    await this.log.installSnapshot(fetch.id);
    this.kraftState.resetToSnapshot(fetch.id.offset, content.kraftRecords ?? []);
    this.syncVoters();
    this.snapshotFetch = null;
    for (const { listener } of this.listeners) await listener.handleLoadSnapshot(content);
    this.nextDeliveryOffset = fetch.id.offset;
    this.options.logger?.info(`raft: node ${this.options.nodeId} installed snapshot ${fetch.id.offset}-${fetch.id.epoch} from the leader`);
  }

  // ---- replication: the leader's side

  private refusedFetch(request: FetchRequest): Partial<FetchResponse> | null {
    const refused = this.refusedTopLevel(request.clusterId, request.topics, (t) => (t.topicId === METADATA_TOPIC_ID ? METADATA_TOPIC : t.topic), (p) => p.partition);
    if (refused !== null) return { errorCode: refused, responses: [] };
    const partition = request.topics[0]!.partitions[0]!;
    const invalid = request.maxWaitMs < 0 || partition.fetchOffset < 0 || partition.lastFetchedEpoch < 0 || partition.lastFetchedEpoch > partition.currentLeaderEpoch;
    return invalid ? this.fetchResponse({ errorCode: ErrorCode.INVALID_REQUEST }) : null;
  }

  private async tryCompleteFetch(replicaId: number, partition: FetchPartitionRequest): Promise<FetchAnswer> {
    const error = this.leaderOnlyError(partition.currentLeaderEpoch);
    if (error !== ErrorCode.NONE) return { errorCode: error };
    this.touchReplica(replicaId, partition.replicaDirectoryId);
    // An empty replica copies the latest snapshot rather than the log, unless that is only the bootstrap snapshot 0-0 of `storage format`.
    const latest = this.log.latestSnapshotId;
    const snapshotFirst = partition.fetchOffset === 0 && latest !== null && latest.offset > 0;
    const validity = snapshotFirst ? { kind: 'snapshot' as const, id: latest } : this.log.validateOffsetAndEpoch(partition.fetchOffset, partition.lastFetchedEpoch);
    if (validity.kind === 'snapshot') return { errorCode: ErrorCode.NONE, snapshotId: validity.id };
    if (validity.kind === 'diverging') return { errorCode: ErrorCode.NONE, divergingEpoch: validity.end };
    const records = await this.log.read(partition.fetchOffset, FETCH_BYTES_MAX);
    await this.updateReplica(replicaId, partition);
    return { errorCode: ErrorCode.NONE, records };
  }

  /** Leader: a replica fetched (check quorum counts a voter's fetch, whatever the answer). */
  private touchReplica(replicaId: number, directoryId: string): void {
    const previous = this.replicas.get(replicaId);
    this.replicas.set(replicaId, {
      endOffset: previous?.endOffset ?? -1,
      lastFetchTimestamp: this.options.env.clock.nowMs(),
      lastCaughtUpTimestamp: previous?.lastCaughtUpTimestamp ?? -1,
      directoryId,
    });
    if (this.quorum.voters.includes(replicaId)) this.acknowledged.add(replicaId);
  }

  /** Leader: a replica fetched from `fetchOffset`, so it holds every entry below it; a voter's may advance the high watermark. */
  private async updateReplica(replicaId: number, partition: FetchPartitionRequest): Promise<void> {
    const progress = this.replicas.get(replicaId)!;
    progress.endOffset = partition.fetchOffset;
    if (partition.fetchOffset >= this.log.logEndOffset) progress.lastCaughtUpTimestamp = progress.lastFetchTimestamp;
    if (!this.quorum.voters.includes(replicaId) || replicaId === this.options.nodeId) return;
    await this.run(this.quorum.updateVoterEndOffset(replicaId, partition.fetchOffset));
  }

  private fetchResponse(answer: FetchAnswer): Partial<FetchResponse> {
    return {
      errorCode: ErrorCode.NONE,
      sessionId: 0,
      nodeEndpoints: this.leaderNodeEndpoints().map((node) => ({ ...node, rack: null })),
      responses: [{
        topic: METADATA_TOPIC,
        topicId: METADATA_TOPIC_ID,
        partitions: [{
          partitionIndex: METADATA_PARTITION,
          errorCode: answer.errorCode,
          highWatermark: this.quorum.highWatermark ?? -1,
          lastStableOffset: -1,
          logStartOffset: this.log.logStartOffset,
          divergingEpoch: { epoch: answer.divergingEpoch?.epoch ?? -1, endOffset: answer.divergingEpoch?.offset ?? -1 },
          currentLeader: this.currentLeaderFields(),
          snapshotId: { endOffset: answer.snapshotId?.offset ?? -1, epoch: answer.snapshotId?.epoch ?? -1 },
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: answer.records ?? Buffer.alloc(0),
        }],
      }],
    };
  }

  private awaitNewData(maxWaitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        timer.cancel();
        this.fetchWaiters.delete(wake);
        resolve();
      };
      const timer = this.options.env.timers.schedule(maxWaitMs, wake);
      this.fetchWaiters.add(wake);
    });
  }

  private leaderOnlyError(requestEpoch: number): number {
    if (requestEpoch < this.quorum.epoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (requestEpoch > this.quorum.epoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
    if (!this.quorum.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    return ErrorCode.NONE;
  }

  private currentLeaderFields(): { leaderId: number; leaderEpoch: number } {
    return { leaderId: this.quorum.leaderId ?? -1, leaderEpoch: this.quorum.epoch };
  }

  /** Top-level checks every raft request gets: the cluster id, and exactly `__cluster_metadata` partition 0. */
  private refusedTopLevel<TT extends { partitions: readonly unknown[] }>(
    clusterId: string | null,
    topics: readonly TT[],
    topicName: (t: TT) => string,
    partitionIndex: (p: TT['partitions'][number]) => number,
  ): number | null {
    const expected = this.options.clusterId;
    if (clusterId !== null && clusterId !== '' && expected !== undefined && clusterId !== expected) return ErrorCode.INCONSISTENT_CLUSTER_ID;
    return metadataPartitionOf(topics, topicName, partitionIndex) === null ? ErrorCode.INVALID_REQUEST : null;
  }

  /** This log's end offset and last epoch (what a vote compares). */
  private endOffset(): OffsetAndEpoch {
    return { offset: this.log.logEndOffset, epoch: this.log.lastEpoch };
  }

  // ---- sending

  /** Sends through the channel; the response or failure is handled on the queue, unless the client closed. */
  private sendRequest<A extends ApiDef>(
    destinationId: number,
    api: A,
    body: Partial<RequestOf<A>>,
    options: { versionMin?: number },
    handlers: { onResponse(response: ResponseOf<A>): Promise<void>; onError(error: Error): Promise<void> | void },
  ): void {
    const onFailure = (error: unknown): void => this.logFailure(error);
    this.options.channel!.send(destinationId, api, body, options).then(
      (response) => {
        if (!this.closed) void this.serialized(() => handlers.onResponse(response)).catch(onFailure);
      },
      (error: Error) => {
        if (!this.closed) void this.serialized(async () => handlers.onError(error)).catch(onFailure);
      },
    );
  }

  private retryLater(generation: number, retry: () => void): void {
    this.options.env.timers.schedule(this.config.retryBackoffMs, () => {
      if (!this.closed && this.generation === generation) retry();
    });
  }

  private logFailure(error: unknown): void {
    if (error instanceof NotLeaderError || this.closed) return;
    this.options.logger?.error(`raft: node ${this.options.nodeId}: ${(error as Error).stack ?? String(error)}`);
  }

  // ---- the queue, effects and delivery

  /** Runs `operation` after every earlier append and delivery; a failure poisons the client. */
  private serialized<R>(operation: () => Promise<R>): Promise<R> {
    const run = this.queue.then(async () => {
      if (this.failure !== null) throw this.failure;
      if (this.closed) throw new RaftClosedError('raft client is closed');
      try {
        return await operation();
      } catch (error) {
        if (!(error instanceof NotLeaderError) && !(error instanceof RaftBatchTooLargeError)) this.failure = error as Error;
        throw error;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private awaitCommit(lastOffset: number): Promise<void> {
    return new Promise((resolve, reject) => this.commitWaiters.push({ lastOffset, resolve, reject }));
  }

  private failCommitWaiters(error: Error): void {
    for (const waiter of this.commitWaiters.splice(0)) waiter.reject(error);
  }

  private async appendAsLeader(batch: Buffer, epoch: number): Promise<{ firstOffset: number; lastOffset: number }> {
    const appended = await this.log.appendAsLeader(batch, epoch);
    await this.log.flush();
    for (const wake of this.fetchWaiters) wake();
    if (this.quorum.voters.includes(this.options.nodeId)) await this.run(this.quorum.updateVoterEndOffset(this.options.nodeId, this.log.logEndOffset));
    return appended;
  }

  private async run(effects: readonly RaftEffect[]): Promise<void> {
    for (const effect of effects) await this.apply(effect);
  }

  private async apply(effect: RaftEffect): Promise<void> {
    switch (effect.type) {
      case 'persist':
        await writeQuorumState(this.options.env.fs, this.log.dir, effect.election, this.kraftState.lastKraftVersion >= 1 ? 1 : 0);
        return;
      case 'appendLeaderChange': {
        const message: RaftControlRecord = {
          type: 'LEADER_CHANGE',
          data: {
            version: 0,
            leaderId: effect.leaderId,
            voters: effect.voters.map((voterId) => ({ voterId, voterDirectoryId: '' })),
            grantingVoters: effect.grantingVoters.map((voterId) => ({ voterId, voterDirectoryId: '' })),
          },
        };
        const records = [message, ...this.startOfEpochKraftRecords()];
        const baseOffset = this.log.logEndOffset;
        const batch = buildRaftControlBatch(records, { baseOffset, epoch: effect.epoch, timestampMs: this.options.env.clock.nowMs() });
        this.kraftState.replay(records, baseOffset);
        await this.appendAsLeader(batch, effect.epoch);
        return;
      }
      case 'sendVoteRequests':
        this.sendVoteRequests(effect.voters, effect.preVote);
        return;
      case 'leaderChanged':
        await this.maybeFireLeaderChange();
        return;
      case 'highWatermark':
        this.log.updateHighWatermark(effect.offset);
        // As Kafka's leader completes its fetch purgatory when the high watermark moves: followers and observers
        // parked in a long-poll learn of the commit now, not after replica.fetch.wait.max.ms.
        if (this.quorum.isLeader) for (const wake of this.fetchWaiters) wake();
        await this.deliverCommitted(effect.offset);
        await this.maybeFireLeaderChange();
        await this.maybeCompleteVoterChange(effect.offset);
        this.checkCaughtUp();
        return;
    }
  }

  private async loadLatestSnapshot(): Promise<void> {
    const id = this.log.latestSnapshotId;
    if (id === null) {
      this.nextDeliveryOffset = this.log.logStartOffset;
      return;
    }
    const snapshot = await readSnapshot(this.options.env.fs, this.log.dir, id, this.options.serde);
    for (const { listener } of this.listeners) await listener.handleLoadSnapshot(snapshot);
    this.nextDeliveryOffset = id.offset;
  }

  private async deliverCommitted(highWatermark: number): Promise<void> {
    if (this.nextDeliveryOffset < highWatermark) {
      for await (const stored of this.log.readBatches(this.nextDeliveryOffset, highWatermark)) {
        const batch = this.decodeBatch(stored);
        for (const { listener } of this.listeners) await listener.handleCommit(batch);
        this.nextDeliveryOffset = batch.lastOffset + 1;
      }
    }
    const delivered = this.commitWaiters.filter((waiter) => waiter.lastOffset < this.nextDeliveryOffset);
    for (const waiter of delivered) {
      this.commitWaiters.splice(this.commitWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  private decodeBatch(stored: StoredBatch): Batch<T> {
    const decoded = decodeRecords(stored.bytes);
    if (decoded.error !== null) throw new Error(`${this.log.dir}: batch at ${stored.header.baseOffset}: ${decoded.error.message}`);
    const batch: Batch<T> = {
      baseOffset: stored.header.baseOffset,
      lastOffset: stored.header.lastOffset,
      epoch: stored.header.partitionLeaderEpoch,
      appendTimestamp: stored.header.maxTimestamp,
      sizeInBytes: stored.header.sizeBytes,
      records: [],
      control: [],
    };
    for (const record of decoded.records) {
      if (!stored.header.isControl) {
        batch.records.push(this.options.serde.decode(record.value ?? Buffer.alloc(0)));
        continue;
      }
      const control = readControlRecord(record);
      if ('code' in control) throw new Error(`${this.log.dir}: control record at ${record.offset}: ${control.message}`);
      if (isRaftControlType(control.type)) batch.control.push(decodeControlValue(control.type, record.value ?? Buffer.alloc(0)));
    }
    return batch;
  }

  /** Tells listeners about the current leader; this node's leadership only once they reached its epoch start. */
  private async maybeFireLeaderChange(): Promise<void> {
    const current = this.leaderAndEpoch;
    const state = this.quorum.state;
    if (state.role === 'leader' && this.nextDeliveryOffset <= state.epochStartOffset) return;
    for (const registered of this.listeners) {
      const told = registered.notified;
      if (told !== null && told.epoch === current.epoch && told.leaderId === current.leaderId) continue;
      registered.notified = current;
      await registered.listener.handleLeaderChange(current);
    }
  }
}

/** What the leader answers one fetch with, before it is shaped into a response. */
interface FetchAnswer {
  errorCode: number;
  records?: Buffer;
  divergingEpoch?: OffsetAndEpoch;
  snapshotId?: OffsetAndEpoch;
}

function isEmptyFetch(answer: FetchAnswer): boolean {
  return answer.errorCode === ErrorCode.NONE && answer.divergingEpoch === undefined && answer.snapshotId === undefined && (answer.records?.length ?? 0) === 0;
}

function compareOffsetAndEpoch(a: OffsetAndEpoch, b: OffsetAndEpoch): number {
  return a.epoch !== b.epoch ? a.epoch - b.epoch : a.offset - b.offset;
}

function errorCodeOf(error: Error): number | null {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' ? code : null;
}
