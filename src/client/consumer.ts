/**
 * Spool's consumer: manual assignment (assign, seek) or group membership
 * (subscribe with a group.id), poll, position, and committed offsets.
 *
 * Groups: subscribe() joins `groupId` with the classic protocol
 * (group-classic.ts) or the KIP-848 consumer protocol
 * (group-consumer-protocol.ts), per `groupProtocol`. poll() drives the
 * membership; partitions it assigns start at the group's committed offset
 * (OffsetFetch), else per auto.offset.reset. Offsets: commitSync /
 * commitAsync (by default every assigned partition's position, i.e. the next
 * offset to read), committed(), and with enable.auto.commit the positions
 * are committed every auto.commit.interval.ms from poll(), before
 * partitions are revoked, and on close. A consumer with a group id and a
 * manual assignment commits as a simple consumer (generation -1).
 *
 * Each assigned partition has a position: the offset of the next record
 * poll() returns. A partition without one (newly assigned, or after
 * seekToBeginning / seekToEnd or OFFSET_OUT_OF_RANGE) is reset through
 * ListOffsets per `auto.offset.reset` (earliest, latest, or none: an error).
 * poll() returns buffered records first; otherwise it waits, within its
 * timeout, for the Fetches in flight. A partition with a position, nothing
 * buffered and no Fetch in flight is fetchable: each leader of fetchable
 * partitions gets one full Fetch (no fetch session, KIP-227 sessions are
 * optional) long-polling up to `fetch.max.wait.ms`, at most one per leader
 * at a time. As in Kafka's consumer, the next Fetches go out before poll()
 * returns records, so they are answered while the application processes
 * them; a Fetch's error is thrown by the next poll(), and a response for a
 * partition whose position moved meanwhile (seek, reset, revocation) is
 * dropped. Fetched batches are decoded with decodeRecords; control
 * batches are skipped, and under read_committed the batches of aborted
 * transactions are dropped using the response's aborted-transaction list.
 */
import { realEnv } from '../io/env.js';
import { ErrorCode } from '../protocol/errors.js';
import { iterateBatches, type BatchHeader } from '../protocol/records/batch.js';
import { readControlRecord } from '../protocol/records/control.js';
import { decodeRecords } from '../protocol/records/records.js';
import { ZERO_UUID } from '../protocol/reader.js';
import type { ResponseOf } from '../protocol/schema.js';
import { Fetch } from '../protocol/schemas/01-fetch.js';
import { parseTopicPartitionKey, topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { Cluster, type ClientOptions } from './cluster.js';
import { KafkaError, needsMetadataRefresh } from './errors.js';
import { IsolationLevel, listOffsets, OffsetSpec, type IsolationLevelName } from './list-offsets.js';
import { RangeAssignor, RoundRobinAssignor, type PartitionAssignor } from './group-assignors.js';
import { ClassicMembership } from './group-classic.js';
import { ConsumerProtocolMembership } from './group-consumer-protocol.js';
import { commitOffsets, fetchOffsets, GroupCoordinator, SIMPLE_COMMITTER, type CommitIdentity, type OffsetAndMetadata, type OffsetToCommit } from './group-coordinator.js';
import { GROUP_DEFAULTS, Signal, untilDeadline, type GroupSettings, type Membership, type MembershipHost, type RebalanceListener, type Subscription } from './group-membership.js';
import { CooperativeStickyAssignor } from './group-sticky-assignor.js';

export interface ConsumerOptions extends ClientOptions {
  /** isolation.level. Default read_uncommitted. */
  isolationLevel?: IsolationLevelName;
  /** fetch.min.bytes. Default 1. */
  fetchMinBytes?: number;
  /** fetch.max.wait.ms. Default 500. */
  fetchMaxWaitMs?: number;
  /** fetch.max.bytes. Default 52428800. */
  fetchMaxBytes?: number;
  /** max.partition.fetch.bytes. Default 1048576. */
  maxPartitionFetchBytes?: number;
  /** max.poll.records. Default 500. */
  maxPollRecords?: number;
  /** auto.offset.reset. Default latest. */
  autoOffsetReset?: 'earliest' | 'latest' | 'none';
  /** group.id: needed for subscribe() and for committing offsets. */
  groupId?: string;
  /** group.protocol. Default classic. */
  groupProtocol?: 'classic' | 'consumer';
  /** group.instance.id: a static member (KIP-345). */
  groupInstanceId?: string;
  /** session.timeout.ms (classic). Default 45000. */
  sessionTimeoutMs?: number;
  /** heartbeat.interval.ms (classic). Default 3000. */
  heartbeatIntervalMs?: number;
  /** max.poll.interval.ms, sent as the rebalance timeout. Default 300000. */
  rebalanceTimeoutMs?: number;
  /** partition.assignment.strategy (classic): names (range, roundrobin, cooperative-sticky) or assignors. Default [range, cooperative-sticky]. */
  partitionAssignmentStrategy?: readonly (string | PartitionAssignor)[];
  /** group.remote.assignor (consumer protocol): uniform or range; default: the coordinator's choice. */
  groupRemoteAssignor?: string;
  /** enable.auto.commit. Default true when a group id is set. */
  enableAutoCommit?: boolean;
  /** auto.commit.interval.ms. Default 5000. */
  autoCommitIntervalMs?: number;
  /** Where the consumer reports what it cannot throw (failed auto-commits, listener errors). Default: nowhere. */
  logger?: (message: string) => void;
}

/** Kafka's built-in classic assignors by name. */
export const ASSIGNORS: Readonly<Record<string, PartitionAssignor>> = {
  range: RangeAssignor,
  roundrobin: RoundRobinAssignor,
  'cooperative-sticky': CooperativeStickyAssignor,
};

/** Group identity for transactional producers (Kafka's ConsumerGroupMetadata). */
export interface ConsumerGroupMetadata {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export type { RebalanceListener, OffsetAndMetadata, OffsetToCommit };

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  timestampType: 'CreateTime' | 'LogAppendTime';
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  leaderEpoch: number;
}

export const CONSUMER_DEFAULTS = {
  fetchMinBytes: 1,
  fetchMaxWaitMs: 500,
  fetchMaxBytes: 52_428_800,
  maxPartitionFetchBytes: 1_048_576,
  maxPollRecords: 500,
} as const;

interface PartitionState {
  topicPartition: TopicPartition;
  /** Next offset poll() returns; null until reset. */
  position: number | null;
  /** A reset to perform before fetching. */
  reset: 'earliest' | 'latest' | null;
  /** Assigned by the group: look up the committed offset before resetting. */
  fetchCommitted: boolean;
  /** Leader epoch of the last record returned (committed with the position). */
  lastLeaderEpoch: number;
  /** Records fetched but not yet returned. */
  buffered: ConsumerRecord[];
  /** The position after the buffered records (batches may end past the last record). */
  nextFetchOffset: number;
  highWatermark: number;
  /** The fetch offset of this partition's Fetch in flight, or null. */
  fetchingOffset: number | null;
}

type FetchPartitionResponse = ResponseOf<typeof Fetch>['responses'][number]['partitions'][number];

/** How long close() waits to commit and leave the group (Kafka's default close timeout). */
const CLOSE_TIMEOUT_MS = 30_000;

type FetchSettings = Required<Pick<ConsumerOptions, 'isolationLevel' | 'fetchMinBytes' | 'fetchMaxWaitMs' | 'fetchMaxBytes' | 'maxPartitionFetchBytes' | 'maxPollRecords' | 'autoOffsetReset'>>;

export class Consumer {
  readonly cluster: Cluster;
  private readonly settings: FetchSettings;
  private readonly partitions = new Map<string, PartitionState>();
  private closed = false;
  private readonly group: GroupSettings | null;
  private readonly groupProtocol: 'classic' | 'consumer';
  private readonly autoCommit: { enabled: boolean; intervalMs: number; nextMs: number };
  private readonly log: (message: string) => void;
  private coordinatorLink: GroupCoordinator | null = null;
  private membership: Membership | null = null;
  private subscribed: Subscription | null = null;
  private listener: RebalanceListener = {};
  private lastPollAtMs: number;
  /** Offset commits not yet answered (close() waits for them; commitAsync keeps their order). */
  private commitChain: Promise<unknown> = Promise.resolve();
  private readonly idle: Signal;
  /** Fetches in flight, by leader node id: at most one per node. */
  private readonly fetchesInFlight = new Map<number, Promise<void>>();
  /** A metadata lookup for fetchable partitions whose leader is unknown or whose metadata is stale. */
  private leaderLookup: Promise<void> | null = null;
  /** Notified whenever a Fetch or a leader lookup ends. */
  private readonly fetchEnded: Signal;
  /** The first error of a Fetch or lookup since the last poll(), which throws it. */
  private fetchFailure: Error | null = null;
  private readonly metadataMaxAgeMs: number;
  private patternCheckedAtMs = -Infinity;

  constructor(options: ConsumerOptions) {
    this.cluster = new Cluster({ ...options, env: options.env ?? realEnv });
    this.settings = {
      isolationLevel: options.isolationLevel ?? 'read_uncommitted',
      fetchMinBytes: options.fetchMinBytes ?? CONSUMER_DEFAULTS.fetchMinBytes,
      fetchMaxWaitMs: options.fetchMaxWaitMs ?? CONSUMER_DEFAULTS.fetchMaxWaitMs,
      fetchMaxBytes: options.fetchMaxBytes ?? CONSUMER_DEFAULTS.fetchMaxBytes,
      maxPartitionFetchBytes: options.maxPartitionFetchBytes ?? CONSUMER_DEFAULTS.maxPartitionFetchBytes,
      maxPollRecords: options.maxPollRecords ?? CONSUMER_DEFAULTS.maxPollRecords,
      autoOffsetReset: options.autoOffsetReset ?? 'latest',
    };
    this.group = groupSettings(options);
    this.groupProtocol = options.groupProtocol ?? 'classic';
    this.log = options.logger ?? (() => undefined);
    const intervalMs = options.autoCommitIntervalMs ?? GROUP_DEFAULTS.autoCommitIntervalMs;
    this.autoCommit = { enabled: this.group !== null && (options.enableAutoCommit ?? true), intervalMs, nextMs: this.cluster.env.clock.monotonicMs() + intervalMs };
    this.lastPollAtMs = this.cluster.env.clock.monotonicMs();
    this.idle = new Signal(this.cluster.env);
    this.fetchEnded = new Signal(this.cluster.env);
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? 300_000;
  }

  /** Replaces the assignment; partitions kept keep their positions. */
  assign(topicPartitions: readonly TopicPartition[]): void {
    if (this.subscribed !== null) throw new Error('Subscription to topics, partitions and pattern are mutually exclusive');
    this.setAssignment(topicPartitions, { fetchCommitted: this.group !== null });
  }

  private setAssignment(topicPartitions: readonly TopicPartition[], options: { fetchCommitted: boolean }): void {
    const keep = new Map<string, PartitionState>();
    for (const tp of topicPartitions) {
      const key = topicPartitionKey(tp);
      keep.set(key, this.partitions.get(key) ?? newPartitionState(tp, options.fetchCommitted));
    }
    this.partitions.clear();
    for (const [key, state] of keep) this.partitions.set(key, state);
  }

  assignment(): TopicPartition[] {
    return [...this.partitions.values()].map((s) => ({ ...s.topicPartition }));
  }

  private state(tp: TopicPartition): PartitionState {
    const state = this.partitions.get(topicPartitionKey(tp));
    if (state === undefined) throw new Error(`No current assignment for partition ${tp.topic}-${tp.partition}`);
    return state;
  }

  /** The next poll() starts at `offset`. */
  seek(tp: TopicPartition, offset: number): void {
    if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`seek offset must not be a negative number: ${offset}`);
    const state = this.state(tp);
    state.position = offset;
    state.reset = null;
    state.fetchCommitted = false;
    state.buffered = [];
    state.nextFetchOffset = offset;
  }

  seekToBeginning(tps: readonly TopicPartition[] = this.assignment()): void {
    for (const tp of tps) this.requestReset(this.state(tp), 'earliest');
  }

  seekToEnd(tps: readonly TopicPartition[] = this.assignment()): void {
    for (const tp of tps) this.requestReset(this.state(tp), 'latest');
  }

  private requestReset(state: PartitionState, reset: 'earliest' | 'latest'): void {
    state.position = null;
    state.reset = reset;
    state.fetchCommitted = false;
    state.buffered = [];
  }

  /** The offset of the next record poll() returns for `tp`, resetting it first if needed. */
  async position(tp: TopicPartition): Promise<number> {
    const state = this.state(tp);
    if (state.position === null) await this.updateFetchPositions();
    return state.position!;
  }

  /** Up to max.poll.records records, waiting at most `timeoutMs` for some to arrive. */
  async poll(timeoutMs: number): Promise<ConsumerRecord[]> {
    if (this.closed) throw new Error('This consumer has already been closed.');
    const clock = this.cluster.env.clock;
    const deadlineMs = clock.monotonicMs() + timeoutMs;
    this.lastPollAtMs = clock.monotonicMs();
    for (;;) {
      this.throwFetchFailure();
      if (this.membership !== null) {
        await this.membership.poll(deadlineMs);
        this.maybeAutoCommit();
      }
      await this.updateFetchPositions();
      const records = this.drainBuffered();
      if (records.length > 0) {
        this.sendFetches();
        return records;
      }
      const remainingMs = deadlineMs - clock.monotonicMs();
      if (remainingMs <= 0 && timeoutMs > 0) return [];
      this.sendFetches();
      const waitUntilMs = clock.monotonicMs() + Math.max(0, Math.min(this.settings.fetchMaxWaitMs, remainingMs));
      if (this.fetchesInFlight.size > 0 || this.leaderLookup !== null) await this.fetchEnded.wait(waitUntilMs);
      else await (this.membership?.changed ?? this.idle).wait(waitUntilMs);
      if (timeoutMs <= 0) return this.drainBuffered();
    }
  }

  private throwFetchFailure(): void {
    const failure = this.fetchFailure;
    if (failure === null) return;
    this.fetchFailure = null;
    throw failure;
  }

  /** Leaves the group (committing first with auto-commit) and closes every connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      // Kafka's close() gives up on the group after 30 s (an unreachable coordinator must not hang it).
      const deadlineMs = this.cluster.env.clock.monotonicMs() + CLOSE_TIMEOUT_MS;
      if (this.membership !== null) await untilDeadline(this.cluster.env, this.membership.leave('the consumer is being closed'), deadlineMs);
      else if (this.autoCommit.enabled && this.partitions.size > 0) await this.commitSync().catch((error: Error) => this.log(`auto-commit on close failed: ${error.message}`));
      await this.commitChain;
    } finally {
      await this.membership?.close();
      await this.coordinatorLink?.close();
      await this.cluster.close({ abandonInFlight: true });
      this.idle.notify();
      this.fetchEnded.notify();
    }
  }

  // ---- groups ----

  /**
   * Joins the group with `topics` (names) or a pattern matched against the
   * cluster's topics. The group is joined from poll().
   */
  subscribe(topics: readonly string[] | RegExp, listener: RebalanceListener = {}): void {
    if (this.closed) throw new Error('This consumer has already been closed.');
    if (this.group === null) throw new KafkaError(ErrorCode.INVALID_GROUP_ID, 'To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.');
    if (this.subscribed === null && this.partitions.size > 0) throw new Error('Subscription to topics, partitions and pattern are mutually exclusive');
    if (Array.isArray(topics) && topics.some((t) => t.trim() === '')) throw new Error('Topic collection to subscribe to cannot contain null or empty topic');
    this.subscribed = topics instanceof RegExp ? { pattern: topics } : { topics: [...new Set(topics as readonly string[])].sort() };
    this.listener = listener;
    if (this.membership === null) this.membership = this.newMembership(this.group);
    else if (this.membership instanceof ConsumerProtocolMembership) this.membership.subscriptionChanged();
    else if (this.membership instanceof ClassicMembership) this.membership.requestRejoin();
  }

  /** Leaves the group and drops the assignment. */
  async unsubscribe(): Promise<void> {
    if (this.membership !== null) {
      await this.membership.leave('the consumer unsubscribed');
      await this.membership.close();
      this.membership = null;
    }
    this.subscribed = null;
    this.partitions.clear();
  }

  /** The subscribed topic names (for a pattern, those that matched at the last join). */
  subscription(): string[] {
    if (this.subscribed === null) return [];
    return 'topics' in this.subscribed ? [...this.subscribed.topics] : [...new Set(this.assignment().map((tp) => tp.topic))].sort();
  }

  groupMetadata(): ConsumerGroupMetadata {
    if (this.group === null) throw new KafkaError(ErrorCode.INVALID_GROUP_ID, 'To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.');
    return {
      groupId: this.group.groupId,
      generationId: this.membership?.generationId ?? -1,
      memberId: this.membership?.memberId ?? '',
      groupInstanceId: this.group.groupInstanceId,
    };
  }

  private coordinator(): GroupCoordinator {
    if (this.group === null) throw new KafkaError(ErrorCode.INVALID_GROUP_ID, 'To use the group management or offset commit APIs, you must provide a valid group.id in the consumer configuration.');
    if (this.coordinatorLink === null) {
      // A JoinGroup may wait a whole rebalance: Kafka's client gives it rebalance timeout + 5 s.
      const requestTimeoutMs = Math.max(this.cluster.requestTimeoutMs, this.group.rebalanceTimeoutMs + 5_000);
      this.coordinatorLink = new GroupCoordinator(this.cluster, this.group.groupId, { requestTimeoutMs });
    }
    return this.coordinatorLink;
  }

  private newMembership(group: GroupSettings): Membership {
    const consumer = this;
    const host: MembershipHost = {
      cluster: this.cluster,
      get listener() { return consumer.listener; },
      subscription: () => this.subscribed ?? { topics: [] },
      subscribedTopics: (options) => this.subscribedTopics(options),
      owned: () => this.assignment(),
      addPartitions: (tps) => this.setAssignment([...this.assignment(), ...tps], { fetchCommitted: true }),
      removePartitions: (tps) => {
        for (const tp of tps) this.partitions.delete(topicPartitionKey(tp));
      },
      commitBeforeRevocation: (tps, who) => this.commitBeforeRevocation(tps, who),
      lastPollMs: () => this.lastPollAtMs,
      log: this.log,
    };
    return this.groupProtocol === 'consumer'
      ? new ConsumerProtocolMembership(host, this.coordinator(), group)
      : new ClassicMembership(host, this.coordinator(), group);
  }

  /** The topics the subscription names that exist; a pattern is matched against every non-internal topic. */
  private async subscribedTopics(options: { refresh?: boolean } = {}): Promise<string[]> {
    const subscription = this.subscribed;
    if (subscription === null) return [];
    if ('topics' in subscription) return [...subscription.topics];
    const now = this.cluster.env.clock.monotonicMs();
    // New topics matching a pattern are found by refreshing all metadata each metadata.max.age.ms, as Kafka does.
    if (options.refresh === true || now - this.patternCheckedAtMs >= this.metadataMaxAgeMs) {
      await this.cluster.retry(() => this.cluster.refreshMetadata(null));
      this.patternCheckedAtMs = now;
    }
    return [...this.cluster.topics.values()]
      .filter((t) => !t.isInternal && t.errorCode === ErrorCode.NONE && subscription.pattern.test(t.name))
      .map((t) => t.name)
      .sort();
  }

  private identity(): CommitIdentity {
    if (this.membership !== null) return this.membership.identity();
    return SIMPLE_COMMITTER;
  }

  /** Every assigned partition's position: what commitSync() commits by default. */
  private consumedOffsets(partitions?: readonly TopicPartition[]): OffsetToCommit[] {
    const states = partitions === undefined
      ? [...this.partitions.values()]
      : partitions.map((tp) => this.partitions.get(topicPartitionKey(tp))).filter((s): s is PartitionState => s !== undefined);
    return states
      .filter((s) => s.position !== null)
      .map((s) => ({ ...s.topicPartition, offset: s.position!, leaderEpoch: s.lastLeaderEpoch, metadata: '' }));
  }

  /**
   * Commits `offsets` (default: every assigned partition's position) and
   * waits for the answer; a partition's error rejects with Kafka's error
   * (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS mean the
   * group has moved on: the records must be processed again by whoever owns
   * them now).
   */
  async commitSync(offsets?: readonly OffsetToCommit[]): Promise<void> {
    const list = offsets ?? this.consumedOffsets();
    const done = this.commitChain.then(() => this.commit(list));
    this.commitChain = done.catch(() => undefined);
    await done;
  }

  /** Commits in the background, in call order; `callback` hears the outcome. */
  commitAsync(offsets?: readonly OffsetToCommit[], callback?: (error: Error | null, offsets: readonly OffsetToCommit[]) => void): void {
    const list = offsets ?? this.consumedOffsets();
    this.commitChain = this.commitChain
      .then(() => this.commit(list))
      .then(() => callback?.(null, list), (error: Error) => {
        if (callback !== undefined) callback(error, list);
        else this.log(`async commit failed: ${error.message}`);
      });
  }

  private async commit(offsets: readonly OffsetToCommit[]): Promise<void> {
    if (offsets.length === 0) return;
    for (const o of offsets) {
      if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new Error(`Invalid negative offset ${o.offset} for ${o.topic}-${o.partition}`);
    }
    const coordinator = this.coordinator();
    if (this.membership !== null && !this.membership.active) {
      throw new KafkaError(ErrorCode.REBALANCE_IN_PROGRESS, 'Offset commit cannot be completed since the consumer is not part of an active group for auto partition assignment; it is likely that the consumer was kicked out of the group.');
    }
    for (let attempt = 0; ; attempt++) {
      const errors = await commitOffsets(coordinator, this.identity(), offsets);
      const failed = [...errors].find(([, code]) => code !== ErrorCode.NONE);
      if (failed === undefined) return;
      // KIP-848: a commit sent just before a heartbeat bumped the epoch is retried with the new one.
      if (failed[1] === ErrorCode.STALE_MEMBER_EPOCH && attempt < 3) {
        await this.cluster.sleep(this.cluster.backoffMs(attempt));
        continue;
      }
      throw commitError(failed[1], failed[0]);
    }
  }

  private async commitBeforeRevocation(partitions: readonly TopicPartition[], who: CommitIdentity): Promise<void> {
    if (!this.autoCommit.enabled) return;
    const offsets = this.consumedOffsets(partitions);
    if (offsets.length === 0) return;
    try {
      const errors = await commitOffsets(this.coordinator(), who, offsets);
      const failed = [...errors].find(([, code]) => code !== ErrorCode.NONE);
      if (failed !== undefined) this.log(`offset commit before revocation failed: ${commitError(failed[1], failed[0]).message}`);
    } catch (error) {
      this.log(`offset commit before revocation failed: ${(error as Error).message}`);
    }
  }

  private maybeAutoCommit(): void {
    if (!this.autoCommit.enabled || this.membership === null || !this.membership.active) return;
    const now = this.cluster.env.clock.monotonicMs();
    if (now < this.autoCommit.nextMs) return;
    this.autoCommit.nextMs = now + this.autoCommit.intervalMs;
    this.commitAsync(undefined, (error) => {
      if (error !== null) this.log(`auto-commit failed: ${error.message}`);
    });
  }

  /**
   * The group's committed offsets for `partitions`, in the same order;
   * null where the group has none.
   */
  async committed(partitions: readonly TopicPartition[]): Promise<(OffsetAndMetadata | null)[]> {
    const found = await fetchOffsets(this.coordinator(), partitions, { requireStable: true });
    return partitions.map((tp) => {
      const entry = found.get(topicPartitionKey(tp));
      return entry === undefined ? null : { offset: entry.offset, leaderEpoch: entry.leaderEpoch, metadata: entry.metadata };
    });
  }

  /** Committed offsets for newly assigned partitions, then ListOffsets resets for the rest. */
  private async updateFetchPositions(): Promise<void> {
    const pending = [...this.partitions.values()].filter((s) => s.position === null && s.fetchCommitted);
    if (pending.length > 0 && this.group !== null) {
      const found = await fetchOffsets(this.coordinator(), pending.map((s) => s.topicPartition), { requireStable: true });
      for (const state of pending) {
        state.fetchCommitted = false;
        const committed = found.get(topicPartitionKey(state.topicPartition));
        if (committed === undefined || state.position !== null || this.partitions.get(topicPartitionKey(state.topicPartition)) !== state) continue;
        state.position = committed.offset;
        state.nextFetchOffset = committed.offset;
      }
    }
    await this.resetPositions();
  }

  private drainBuffered(): ConsumerRecord[] {
    const out: ConsumerRecord[] = [];
    for (const state of this.partitions.values()) {
      if (state.position === null) continue;
      const take = state.buffered.splice(0, this.settings.maxPollRecords - out.length);
      out.push(...take);
      if (take.length > 0) {
        state.position = take[take.length - 1]!.offset + 1;
        state.lastLeaderEpoch = take[take.length - 1]!.leaderEpoch;
      }
      if (state.buffered.length === 0 && state.nextFetchOffset > state.position) state.position = state.nextFetchOffset;
      if (out.length >= this.settings.maxPollRecords) break;
    }
    return out;
  }

  /** Resolves positions of partitions that need a reset, via ListOffsets. */
  private async resetPositions(): Promise<void> {
    const pending = [...this.partitions.values()].filter((s) => s.position === null);
    if (pending.length === 0) return;
    const queries = pending.map((state) => {
      const policy = state.reset ?? this.settings.autoOffsetReset;
      if (policy === 'none') {
        throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `no position for ${state.topicPartition.topic}-${state.topicPartition.partition} and auto.offset.reset is none`);
      }
      return { ...state.topicPartition, timestamp: policy === 'earliest' ? OffsetSpec.earliest : OffsetSpec.latest };
    });
    const offsets = await listOffsets(this.cluster, queries, { isolationLevel: this.settings.isolationLevel });
    for (const state of pending) {
      const listed = offsets.get(topicPartitionKey(state.topicPartition));
      if (listed === undefined || state.position !== null) continue;
      state.position = listed.offset;
      state.nextFetchOffset = listed.offset;
      state.reset = null;
    }
  }

  /**
   * Sends a Fetch to each leader of fetchable partitions that has none in
   * flight; partitions whose leader is unknown or whose metadata is stale
   * start a metadata lookup instead, and are fetched once it ends.
   */
  private sendFetches(): void {
    if (this.closed) return;
    const byLeader = new Map<number, PartitionState[]>();
    const lookUp = new Set<string>();
    for (const state of this.partitions.values()) {
      if (state.position === null || state.buffered.length > 0 || state.fetchingOffset !== null) continue;
      const { topic, partition } = state.topicPartition;
      const leader = this.cluster.freshTopic(topic) === undefined ? -1 : this.cluster.leaderFor(topic, partition);
      if (leader < 0) {
        lookUp.add(topic);
        continue;
      }
      if (this.fetchesInFlight.has(leader)) continue;
      const states = byLeader.get(leader);
      if (states === undefined) byLeader.set(leader, [state]);
      else states.push(state);
    }
    if (lookUp.size > 0 && this.leaderLookup === null) this.lookUpLeaders([...lookUp]);
    for (const [nodeId, states] of byLeader) this.startFetch(nodeId, states);
  }

  private lookUpLeaders(topics: readonly string[]): void {
    this.leaderLookup = (async () => {
      for (const topic of topics) await this.cluster.retry(() => this.cluster.topic(topic), { timeoutMs: this.cluster.requestTimeoutMs });
      // A partition still without a leader (an election under way): ask again after the backoff.
      const leaderless = [...this.partitions.values()].some((s) => topics.includes(s.topicPartition.topic) && this.cluster.leaderFor(s.topicPartition.topic, s.topicPartition.partition) < 0);
      if (leaderless) {
        this.cluster.invalidate();
        await this.cluster.sleep(this.cluster.retryBackoffMs);
      }
    })()
      .catch((error: unknown) => this.fetchFailed(error))
      .finally(() => {
        this.leaderLookup = null;
        this.fetchEnded.notify();
      });
  }

  private startFetch(nodeId: number, states: readonly PartitionState[]): void {
    for (const state of states) state.fetchingOffset = state.position;
    const fetch = this.fetchFrom(nodeId, states)
      .catch((error: unknown) => this.fetchFailed(error))
      .finally(() => {
        for (const state of states) state.fetchingOffset = null;
        this.fetchesInFlight.delete(nodeId);
        this.fetchEnded.notify();
      });
    this.fetchesInFlight.set(nodeId, fetch);
  }

  private fetchFailed(error: unknown): void {
    if (this.closed) return;
    this.fetchFailure ??= error instanceof Error ? error : new Error(String(error));
  }

  private async fetchFrom(nodeId: number, states: readonly PartitionState[]): Promise<void> {
    let response: ResponseOf<typeof Fetch>;
    let version: number;
    try {
      const connection = await this.cluster.connection(nodeId);
      const useTopicIds = states.every((s) => this.topicId(s.topicPartition.topic) !== ZERO_UUID);
      ({ version, response } = await connection.sendVersioned(Fetch, this.fetchRequest(states), { versionMax: useTopicIds ? Infinity : 12 }));
    } catch (error) {
      if (!(error instanceof KafkaError) || !error.retriable || this.closed) throw error;
      this.cluster.invalidate();
      await this.cluster.sleep(this.cluster.retryBackoffMs);
      return;
    }
    if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, 'Fetch');
    const names = new Map([...this.cluster.topics.values()].map((t) => [t.topicId, t.name]));
    for (const topic of response.responses) {
      const name = version >= 13 ? names.get(topic.topicId) : topic.topic;
      if (name === undefined) continue;
      for (const partition of topic.partitions) {
        const state = this.partitions.get(topicPartitionKey({ topic: name, partition: partition.partitionIndex }));
        // Dropped when the partition was revoked, or its position moved (seek, reset) while the Fetch was out.
        if (state === undefined || !states.includes(state) || state.position !== state.fetchingOffset || state.buffered.length > 0) continue;
        this.onPartitionData(state, partition);
      }
    }
  }

  private topicId(topic: string): string {
    return this.cluster.topics.get(topic)?.topicId ?? ZERO_UUID;
  }

  private fetchRequest(states: readonly PartitionState[]) {
    const byTopic = new Map<string, PartitionState[]>();
    for (const state of states) byTopic.set(state.topicPartition.topic, [...(byTopic.get(state.topicPartition.topic) ?? []), state]);
    return {
      replicaId: -1,
      maxWaitMs: this.settings.fetchMaxWaitMs,
      minBytes: this.settings.fetchMinBytes,
      maxBytes: this.settings.fetchMaxBytes,
      isolationLevel: IsolationLevel[this.settings.isolationLevel],
      sessionId: 0,
      sessionEpoch: -1,
      topics: [...byTopic].map(([topic, list]) => ({
        topic,
        topicId: this.topicId(topic),
        partitions: list.map((state) => ({
          partition: state.topicPartition.partition,
          currentLeaderEpoch: this.cluster.partitionInfo(topic, state.topicPartition.partition)?.leaderEpoch ?? -1,
          fetchOffset: state.position!,
          lastFetchedEpoch: -1,
          logStartOffset: -1,
          partitionMaxBytes: this.settings.maxPartitionFetchBytes,
        })),
      })),
      forgottenTopicsData: [],
      rackId: '',
    };
  }

  private onPartitionData(state: PartitionState, data: FetchPartitionResponse): void {
    const tp = state.topicPartition;
    if (data.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      if (this.settings.autoOffsetReset === 'none') throw new KafkaError(data.errorCode, `fetch offset ${state.position} is out of range for ${tp.topic}-${tp.partition}`);
      this.requestReset(state, this.settings.autoOffsetReset);
      return;
    }
    if (data.errorCode !== ErrorCode.NONE) {
      if (needsMetadataRefresh(data.errorCode) || new KafkaError(data.errorCode).retriable) {
        this.cluster.invalidate();
        return;
      }
      throw new KafkaError(data.errorCode, `Fetch for ${tp.topic}-${tp.partition}`);
    }
    state.highWatermark = data.highWatermark;
    if (data.records === null || data.records.length === 0) return;
    this.decodeBatches(state, data);
  }

  /** Buffers the records of every complete batch at or after the position. */
  private decodeBatches(state: PartitionState, data: FetchPartitionResponse): void {
    const tp = state.topicPartition;
    const position = state.position!;
    const aborted = new AbortedTransactions(this.settings.isolationLevel === 'read_committed' ? data.abortedTransactions ?? [] : []);
    let nextFetchOffset = position;
    for (const { position: at, header } of iterateBatches(data.records!)) {
      if (header.lastOffset < position) continue;
      nextFetchOffset = header.lastOffset + 1;
      const batch = data.records!.subarray(at, at + header.sizeBytes);
      const decoded = decodeRecords(batch);
      if (decoded.error !== null) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `${tp.topic}-${tp.partition} at offset ${header.baseOffset}: ${decoded.error.message}`);
      const abortedBatch = aborted.isAborted(header);
      if (header.isControl) {
        for (const record of decoded.records) {
          const control = readControlRecord(record);
          if (!('code' in control) && control.type === 'ABORT') aborted.markerSeen(header.producerId);
        }
        continue;
      }
      if (abortedBatch) continue;
      for (const record of decoded.records) {
        if (record.offset < position) continue;
        state.buffered.push({
          topic: tp.topic,
          partition: tp.partition,
          offset: record.offset,
          timestamp: record.timestamp,
          timestampType: header.timestampType === 1 ? 'LogAppendTime' : 'CreateTime',
          key: record.key,
          value: record.value,
          headers: record.headers,
          leaderEpoch: header.partitionLeaderEpoch,
        });
      }
    }
    state.nextFetchOffset = nextFetchOffset;
  }
}

function newPartitionState(tp: TopicPartition, fetchCommitted: boolean): PartitionState {
  return {
    topicPartition: { topic: tp.topic, partition: tp.partition },
    position: null,
    reset: null,
    fetchCommitted,
    lastLeaderEpoch: -1,
    buffered: [],
    nextFetchOffset: -1,
    highWatermark: -1,
    fetchingOffset: null,
  };
}

function groupSettings(options: ConsumerOptions): GroupSettings | null {
  if (options.groupId === undefined || options.groupId === '') return null;
  const strategy = options.partitionAssignmentStrategy ?? ['range', 'cooperative-sticky'];
  const assignors = strategy.map((entry) => {
    if (typeof entry !== 'string') return entry;
    const assignor = ASSIGNORS[entry.trim()];
    if (assignor === undefined) throw new Error(`Invalid value ${entry} for configuration partition.assignment.strategy: class not found (built-in: ${Object.keys(ASSIGNORS).join(', ')})`);
    return assignor;
  });
  if (assignors.length === 0) throw new Error('partition.assignment.strategy must name at least one assignor');
  return {
    groupId: options.groupId,
    groupInstanceId: options.groupInstanceId ?? null,
    sessionTimeoutMs: options.sessionTimeoutMs ?? GROUP_DEFAULTS.sessionTimeoutMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? GROUP_DEFAULTS.heartbeatIntervalMs,
    rebalanceTimeoutMs: options.rebalanceTimeoutMs ?? GROUP_DEFAULTS.rebalanceTimeoutMs,
    assignors,
    remoteAssignor: options.groupRemoteAssignor ?? null,
  };
}

/** Kafka's CommitFailedException wording for generation errors; the plain error otherwise. */
function commitError(code: number, key: string): KafkaError {
  const { topic, partition } = parseTopicPartitionKey(key);
  if (code === ErrorCode.ILLEGAL_GENERATION || code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.FENCED_MEMBER_EPOCH || code === ErrorCode.REBALANCE_IN_PROGRESS) {
    return new KafkaError(code, 'Commit cannot be completed since the group has already rebalanced and assigned the partitions to another member. This means that the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time message processing.');
  }
  return new KafkaError(code, `OffsetCommit for ${topic}-${partition}`);
}

/**
 * The aborted transactions of one fetch response, consumed in offset order
 * (as Kafka's consumer does): a producer's transactional batches are
 * dropped from the aborted transaction's first offset until its ABORT marker.
 */
class AbortedTransactions {
  private readonly pending: { producerId: number; firstOffset: number }[];
  private readonly active = new Set<number>();

  constructor(list: readonly { producerId: number; firstOffset: number }[]) {
    this.pending = [...list].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  isAborted(header: BatchHeader): boolean {
    while (this.pending.length > 0 && this.pending[0]!.firstOffset <= header.lastOffset) this.active.add(this.pending.shift()!.producerId);
    return header.isTransactional && this.active.has(header.producerId);
  }

  markerSeen(producerId: number): void {
    this.active.delete(producerId);
  }
}
