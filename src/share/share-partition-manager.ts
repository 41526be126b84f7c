/**
 * The share-partition leaders of this broker (Kafka's SharePartitionManager):
 * for every (share group, topic-partition) this broker leads and a member
 * fetched from, one SharePartition holding which records are acquired, by
 * whom, until when, and how often they were delivered.
 *
 * Loading: the first ShareFetch for a share partition reads its state from
 * the share coordinator (SharePersister.readState at the partition's leader
 * epoch); a share partition never initialized (start offset -1) starts at
 * the group's `share.auto.offset.reset` (latest by default, earliest, or
 * by_duration). Until the read answers, fetches for it wait.
 *
 * Fetching: under a per-share-partition lock (two fetches never acquire from
 * the same read), the log is read from the share partition's next fetch
 * offset up to the high watermark, the batch headers are handed to the
 * SharePartition, which acquires records for the member, and the response
 * carries the whole batches covering what was acquired (the client keeps
 * only the acquired offsets). Nothing acquirable and maxWaitMs > 0: the
 * fetch waits in the share-fetch purgatory until records become acquirable
 * (an append moves the high watermark, an acknowledgement or a lock timeout
 * makes records available again) or maxWaitMs passes.
 *
 * Persisting: every change of delivery state (acknowledgements, releases,
 * lock timeouts) is written to the share coordinator
 * (SharePersister.writeState) before the acknowledgement is answered; one
 * write per share partition is in flight, later changes coalesce into the
 * next. A fenced write (FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH, ...) drops
 * the share partition, so the next fetch reloads it from the coordinator.
 *
 * Leadership: a share partition whose topic-partition this broker no longer
 * leads, or leads at another epoch, is dropped at the next fetch or
 * acknowledgement (its records' locks die with it; the new leader reloads
 * the persisted state, in which acquired records are available again).
 */
import type { Env } from '../io/env.js';
import type { MetadataImage } from '../metadata/image.js';
import { ErrorCode } from '../protocol/errors.js';
import { iterateBatches } from '../protocol/records/batch.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import { DelayedOperation, DelayedOperationPurgatory } from '../replication/purgatory.js';
import { Partition } from '../replication/partition.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import { UNINITIALIZED_START_OFFSET, type PersisterResult, type SharePartitionKey, type SharePersister } from './persister.js';
import { SharePartition, type AcknowledgementBatch, type AcquiredRecords, type FetchedBatch } from './share-partition.js';
import { ShareSessionCache, type ShareSessionPartition } from './share-session.js';

/** What the group's configs say about fetching (group-level configs over the broker's defaults). */
export interface ShareGroupFetchConfig {
  /** share.auto.offset.reset: 'latest', 'earliest' or 'by_duration:<ISO-8601 duration>'. */
  autoOffsetReset: string;
  /** share.record.lock.duration.ms. */
  recordLockDurationMs: number;
}

export interface SharePartitionManagerConfig {
  /** group.share.delivery.count.limit. */
  deliveryCountLimit: number;
  /** group.share.partition.max.record.locks. */
  maxInFlightRecords: number;
  /** group.share.max.share.sessions. */
  sessionsMax: number;
  /** Most share fetches waiting at once (DESIGN.md §3.7). */
  delayedFetchesMax: number;
}

export interface SharePartitionManagerOptions {
  env: Env;
  replicaManager: ReplicaManager;
  persister: SharePersister;
  image: () => MetadataImage;
  logger: { info(message: string): void; warn(message: string): void };
  config: SharePartitionManagerConfig;
  groupConfig: (groupId: string) => ShareGroupFetchConfig;
}

/** One partition of a ShareFetch: the topic id, its name (null when the id is unknown) and index. */
export interface ShareFetchPartition extends ShareSessionPartition {
  topic: string;
}

export interface ShareFetchRequestInput {
  groupId: string;
  memberId: string;
  maxWaitMs: number;
  maxBytes: number;
  maxRecords: number;
  batchSize: number;
  acquireMode: number;
  partitions: readonly ShareFetchPartition[];
}

export interface ShareFetchPartitionResult {
  errorCode: number;
  errorMessage: string | null;
  records: Buffer;
  acquiredRecords: AcquiredRecords[];
}

export interface ShareAcknowledgeResult {
  errorCode: number;
  errorMessage: string | null;
}

type LoadOutcome = { ok: true; sharePartition: SharePartition } | { ok: false; errorCode: number; errorMessage: string | null };

interface ShareEntry {
  readonly key: SharePartitionKey;
  readonly topicPartition: TopicPartition;
  readonly leaderEpoch: number;
  readonly loaded: Promise<LoadOutcome>;
  sharePartition: SharePartition | null;
  /** The tail of the fetches acquiring from this share partition, one at a time. */
  fetchTail: Promise<unknown>;
  writeRunning: Promise<PersisterResult> | null;
  writeQueued: Promise<PersisterResult> | null;
  dropped: boolean;
}

const EMPTY_RECORDS = Buffer.alloc(0);

/** Persister answers after which a share partition's in-memory state is stale and must be reloaded. */
const FENCING_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.FENCED_STATE_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.GROUP_ID_NOT_FOUND,
]);

export class SharePartitionManager {
  readonly sessions: ShareSessionCache;
  private readonly entries = new Map<string, ShareEntry>();
  private readonly purgatory: DelayedOperationPurgatory<DelayedShareFetch>;
  private closed = false;

  constructor(private readonly options: SharePartitionManagerOptions) {
    this.sessions = new ShareSessionCache(options.config.sessionsMax);
    this.purgatory = new DelayedOperationPurgatory('ShareFetch', options.env.timers, { operationsMax: options.config.delayedFetchesMax });
    // Appends and high-watermark moves wake share fetches waiting on the partition.
    options.replicaManager.onPartitionStateChange((key) => this.purgatory.checkAndComplete(key));
  }

  /** Share partitions loaded or loading (for metrics and tests). */
  get sharePartitionCount(): number {
    return this.entries.size;
  }

  /** The share partition, once loaded (for describe, metrics and tests). */
  sharePartition(key: SharePartitionKey): SharePartition | null {
    return this.entries.get(entryKey(key))?.sharePartition ?? null;
  }

  // ---- fetch

  /**
   * Acquires records for the member from each partition, waiting up to
   * maxWaitMs for something to acquire. Partitions are served in order,
   * each within what earlier ones left of maxBytes and maxRecords.
   */
  async fetchMessages(request: ShareFetchRequestInput): Promise<Map<string, ShareFetchPartitionResult>> {
    const entries = request.partitions.map((part) => this.entryFor(request.groupId, part));
    const first = await this.acquireAll(request, entries);
    const acquiredAny = [...first.values()].some((result) => result.acquiredRecords.length > 0);
    const allFailed = [...first.values()].every((result) => result.errorCode !== ErrorCode.NONE);
    if (acquiredAny || allFailed || request.maxWaitMs <= 0 || this.closed || entries.length === 0) return first;
    await this.waitForAcquirable(request, entries);
    return this.acquireAll(request, entries);
  }

  private async acquireAll(request: ShareFetchRequestInput, entries: readonly (ShareEntry | ShareFetchPartitionResult)[]): Promise<Map<string, ShareFetchPartitionResult>> {
    const results = new Map<string, ShareFetchPartitionResult>();
    const budget = { bytes: request.maxBytes, records: request.maxRecords };
    for (let index = 0; index < entries.length; index++) {
      const part = request.partitions[index]!;
      const entry = entries[index]!;
      const result = 'key' in entry ? await this.acquireFrom(entry, request, budget) : entry;
      results.set(partKey(part), result);
    }
    return results;
  }

  private async acquireFrom(entry: ShareEntry, request: ShareFetchRequestInput, budget: { bytes: number; records: number }): Promise<ShareFetchPartitionResult> {
    const loaded = await entry.loaded;
    if (!loaded.ok) return failed(loaded.errorCode, loaded.errorMessage);
    if (budget.records <= 0 || budget.bytes <= 0) return empty();
    const run = entry.fetchTail.then(() => this.readAndAcquire(entry, loaded.sharePartition, request, budget));
    entry.fetchTail = run.catch(() => undefined);
    return run;
  }

  private async readAndAcquire(entry: ShareEntry, sharePartition: SharePartition, request: ShareFetchRequestInput, budget: { bytes: number; records: number }): Promise<ShareFetchPartitionResult> {
    const partition = this.ledPartition(entry);
    if (!(partition instanceof Partition)) return failed(partition, null);
    if (partition.logStartOffset > sharePartition.startOffset) sharePartition.updateLogStartOffset(partition.logStartOffset);
    const fetchOffset = sharePartition.nextFetchOffset();
    if (!sharePartition.canAcquireRecords() || fetchOffset >= partition.highWatermark) return empty();
    const params = { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: budget.bytes, isolation: 'highWatermark' as const, fetchOnlyFromLeader: true };
    const info = { topicPartition: entry.topicPartition, fetchOffset, logStartOffset: -1, maxBytes: budget.bytes, currentLeaderEpoch: entry.leaderEpoch, lastFetchedEpoch: -1 };
    const [read] = await this.options.replicaManager.readFromLog(params, [info]);
    if (read === undefined) return empty();
    if (read.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE && read.logStartOffset > fetchOffset) {
      // Retention removed what the share partition had not delivered yet: it moves on with the log.
      sharePartition.updateLogStartOffset(read.logStartOffset);
      return empty();
    }
    if (read.errorCode !== ErrorCode.NONE) return failed(read.errorCode, null);
    const batches = fetchedBatches(read.records);
    const acquired = sharePartition.acquire(request.memberId, batches, { maxRecords: budget.records, batchSize: request.batchSize, acquireMode: request.acquireMode, fetchOffset });
    if (acquired.length === 0) return empty();
    // What this fetch left (it may have been limited by maxRecords) is for the fetches waiting on the share partition.
    this.options.env.timers.defer(() => this.purgatory.checkAndComplete(shareWatchKey(entry.key)));
    const records = sliceToAcquired(read.records, acquired);
    budget.records -= acquired.reduce((sum, range) => sum + (range.lastOffset - range.firstOffset + 1), 0);
    budget.bytes -= records.length;
    return { errorCode: ErrorCode.NONE, errorMessage: null, records, acquiredRecords: acquired };
  }

  private waitForAcquirable(request: ShareFetchRequestInput, entries: readonly (ShareEntry | ShareFetchPartitionResult)[]): Promise<void> {
    const waiting = entries.filter((entry): entry is ShareEntry => 'key' in entry);
    if (waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const operation = new DelayedShareFetch(request.maxWaitMs, () => waiting.some((entry) => this.isAcquirable(entry)), resolve);
      const keys = waiting.flatMap((entry) => [topicPartitionKey(entry.topicPartition), shareWatchKey(entry.key)]);
      this.purgatory.tryCompleteElseWatch(operation, keys);
    });
  }

  /** True when a fetch would acquire something now (or must answer: the share partition failed or moved). */
  private isAcquirable(entry: ShareEntry): boolean {
    if (entry.dropped) return true;
    const sharePartition = entry.sharePartition;
    if (sharePartition === null) return false;
    const partition = this.ledPartition(entry);
    if (!(partition instanceof Partition)) return true;
    return sharePartition.canAcquireRecords() && sharePartition.nextFetchOffset() < partition.highWatermark;
  }

  // ---- acknowledge and release

  /** Applies each partition's acknowledgements and persists the new state before answering. */
  async acknowledge(groupId: string, memberId: string, acknowledgements: ReadonlyMap<string, { part: ShareFetchPartition; batches: readonly AcknowledgementBatch[] }>): Promise<Map<string, ShareAcknowledgeResult>> {
    const pending = [...acknowledgements].map(async ([key, { part, batches }]) => [key, await this.acknowledgePartition(groupId, memberId, part, batches)] as const);
    return new Map(await Promise.all(pending));
  }

  private async acknowledgePartition(groupId: string, memberId: string, part: ShareFetchPartition, batches: readonly AcknowledgementBatch[]): Promise<ShareAcknowledgeResult> {
    const entry = this.entries.get(entryKey({ groupId, topicId: part.topicId, partition: part.partition }));
    const sharePartition = entry === undefined ? null : await entry.loaded.then((loaded) => (loaded.ok ? loaded.sharePartition : null));
    if (entry === undefined || sharePartition === null || entry.dropped) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
    const partition = this.ledPartition(entry);
    if (!(partition instanceof Partition)) return { errorCode: partition, errorMessage: null };
    const outcome = sharePartition.acknowledge(memberId, batches);
    if (outcome.errorCode !== ErrorCode.NONE) return outcome;
    this.purgatory.checkAndComplete(shareWatchKey(entry.key));
    const written = await this.persist(entry);
    return { errorCode: written.errorCode, errorMessage: written.errorMessage };
  }

  /**
   * The member is gone (its session ended or its connection closed): the
   * records it holds in the group's share partitions become available to
   * the others (archived at the delivery limit).
   */
  async releaseSession(groupId: string, memberId: string): Promise<void> {
    const writes: Promise<PersisterResult>[] = [];
    for (const entry of this.entries.values()) {
      if (entry.key.groupId !== groupId || entry.sharePartition === null || entry.dropped) continue;
      if (!entry.sharePartition.releaseAcquiredRecords(memberId)) continue;
      this.purgatory.checkAndComplete(shareWatchKey(entry.key));
      writes.push(this.persist(entry));
    }
    await Promise.all(writes);
  }

  /** The member's final request was answered: its session ends and its records are released. */
  async releaseSessionAndForget(groupId: string, memberId: string): Promise<void> {
    this.sessions.removeSession(groupId, memberId);
    await this.releaseSession(groupId, memberId);
    this.maybeEvictGroup(groupId);
  }

  /**
   * The group's last share session here ended (Kafka's onGroupEmpty): its
   * share partitions leave the cache, so the next fetch reads the state
   * afresh (an AlterShareGroupOffsets on the empty group moved it).
   */
  private maybeEvictGroup(groupId: string): void {
    if (this.sessions.hasGroup(groupId)) return;
    for (const entry of [...this.entries.values()]) {
      if (entry.key.groupId === groupId && entry.writeQueued === null && entry.writeRunning === null) this.drop(entry);
    }
  }

  /** The group's fetch configs (share.auto.offset.reset, share.record.lock.duration.ms). */
  groupConfig(groupId: string): ShareGroupFetchConfig {
    return this.options.groupConfig(groupId);
  }

  /** Resolves after `delayMs` (Kafka's idle share-fetch timer for a member refused a session). */
  idle(delayMs: number): Promise<void> {
    if (delayMs <= 0) return Promise.resolve();
    return new Promise((resolve) => this.options.env.timers.schedule(delayMs, resolve));
  }

  /** A connection closed: its share sessions end and their members' records are released. */
  connectionClosed(connectionId: string): void {
    for (const session of this.sessions.connectionClosed(connectionId)) {
      void this.releaseSession(session.groupId, session.memberId).then(() => this.maybeEvictGroup(session.groupId));
    }
  }

  /** Stops every share partition's lock timers and answers the waiting fetches. */
  close(): void {
    this.closed = true;
    this.sessions.clear();
    for (const entry of [...this.entries.values()]) this.drop(entry);
    this.purgatory.shutdown();
  }

  // ---- loading

  private entryFor(groupId: string, part: ShareFetchPartition): ShareEntry | ShareFetchPartitionResult {
    const topicPartition = { topic: part.topic, partition: part.partition };
    const key = { groupId, topicId: part.topicId, partition: part.partition };
    const partition = this.options.replicaManager.getPartitionOrError(topicPartition);
    if (!(partition instanceof Partition)) return failed(partition.errorCode, null);
    if (!partition.isLeader) return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER, null);
    const existing = this.entries.get(entryKey(key));
    if (existing !== undefined && existing.leaderEpoch === partition.leaderEpoch && !existing.dropped) return existing;
    if (existing !== undefined) this.drop(existing);
    const entry: ShareEntry = {
      key,
      topicPartition,
      leaderEpoch: partition.leaderEpoch,
      loaded: Promise.resolve({ ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null }),
      sharePartition: null,
      fetchTail: Promise.resolve(),
      writeRunning: null,
      writeQueued: null,
      dropped: false,
    };
    (entry as { loaded: Promise<LoadOutcome> }).loaded = this.load(entry, partition);
    this.entries.set(entryKey(key), entry);
    return entry;
  }

  private async load(entry: ShareEntry, partition: Partition): Promise<LoadOutcome> {
    const read = await this.options.persister.readState(entry.key, { leaderEpoch: entry.leaderEpoch }).catch((error: unknown) => ({
      errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
      errorMessage: String(error),
      stateEpoch: 0,
      startOffset: UNINITIALIZED_START_OFFSET,
      stateBatches: [],
    }));
    if (read.errorCode !== ErrorCode.NONE) {
      this.forget(entry);
      return { ok: false, errorCode: read.errorCode, errorMessage: read.errorMessage };
    }
    const groupConfig = this.options.groupConfig(entry.key.groupId);
    const startOffset = read.startOffset === UNINITIALIZED_START_OFFSET ? await this.resetOffset(entry, groupConfig.autoOffsetReset) : read.startOffset;
    if (startOffset < 0) {
      this.forget(entry);
      return { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: `could not resolve share.auto.offset.reset ${groupConfig.autoOffsetReset}` };
    }
    if (entry.dropped) return { ok: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null };
    const { config, env } = this.options;
    const sharePartition = new SharePartition({
      clock: env.clock,
      timers: env.timers,
      recordLockDurationMs: groupConfig.recordLockDurationMs,
      deliveryCountLimit: config.deliveryCountLimit,
      maxInFlightRecords: config.maxInFlightRecords,
      state: { stateEpoch: read.stateEpoch, startOffset: Math.max(startOffset, partition.logStartOffset), stateBatches: read.stateBatches },
      onLocksExpired: () => {
        this.purgatory.checkAndComplete(shareWatchKey(entry.key));
        void this.persist(entry);
      },
    });
    entry.sharePartition = sharePartition;
    // Fetches parked while loading look again.
    this.purgatory.checkAndComplete(shareWatchKey(entry.key));
    return { ok: true, sharePartition };
  }

  /** share.auto.offset.reset for a share partition never initialized: the log's latest or earliest offset, or the first at a time. */
  private async resetOffset(entry: ShareEntry, strategy: string): Promise<number> {
    const timestamp = resetTimestamp(strategy, this.options.env.clock.nowMs());
    const found = await this.options.replicaManager.fetchOffsetForTimestamp({
      topicPartition: entry.topicPartition,
      timestamp,
      currentLeaderEpoch: entry.leaderEpoch,
      isolationLevel: 0,
      fetchOnlyFromLeader: true,
    });
    if (found.errorCode !== ErrorCode.NONE) return -1;
    // No record at or after the time: start at the end, as Kafka's offsetForTimestamp falls back to latest.
    if (found.offset < 0) return this.resetOffset(entry, 'latest');
    return found.offset;
  }

  // ---- persisting

  /** Writes the share partition's state; coalesces with a write already waiting to start. */
  private persist(entry: ShareEntry): Promise<PersisterResult> {
    if (entry.writeQueued !== null) return entry.writeQueued;
    const previous = entry.writeRunning ?? Promise.resolve();
    // Always after this call returns (a then-callback), so writeQueued is set before the write takes it.
    const queued = previous.then(
      () => this.writeNow(entry),
      () => this.writeNow(entry),
    );
    entry.writeQueued = queued;
    return queued;
  }

  private async writeNow(entry: ShareEntry): Promise<PersisterResult> {
    entry.writeQueued = null;
    const sharePartition = entry.sharePartition;
    if (sharePartition === null || entry.dropped) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null };
    const state = sharePartition.persistentState();
    const running = this.options.persister.writeState(entry.key, { stateEpoch: sharePartition.stateEpoch, leaderEpoch: entry.leaderEpoch, ...state });
    entry.writeRunning = running;
    const result = await running.catch((error: unknown) => ({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: String(error) }));
    if (entry.writeRunning === running) entry.writeRunning = null;
    if (FENCING_ERRORS.has(result.errorCode)) {
      this.options.logger.warn(`share partition ${describeKey(entry.key)} was fenced writing its state (error ${result.errorCode}); it will be reloaded`);
      this.drop(entry);
    }
    return result;
  }

  // ---- leadership

  /** The partition this entry was loaded for, or the error a fetch or acknowledgement gets now. */
  private ledPartition(entry: ShareEntry): Partition | number {
    const partition = this.options.replicaManager.getPartitionOrError(entry.topicPartition);
    if (!(partition instanceof Partition)) {
      this.drop(entry);
      return partition.errorCode;
    }
    if (!partition.isLeader || partition.leaderEpoch !== entry.leaderEpoch) {
      this.drop(entry);
      return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    }
    return partition;
  }

  private drop(entry: ShareEntry): void {
    if (entry.dropped) return;
    entry.dropped = true;
    entry.sharePartition?.close();
    this.forget(entry);
    this.purgatory.checkAndComplete(shareWatchKey(entry.key));
  }

  private forget(entry: ShareEntry): void {
    const key = entryKey(entry.key);
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }
}

/** A share fetch waiting for records to become acquirable (Kafka's DelayedShareFetch). */
class DelayedShareFetch extends DelayedOperation {
  constructor(
    delayMs: number,
    private readonly acquirable: () => boolean,
    private readonly done: () => void,
  ) {
    super(delayMs);
  }

  tryComplete(): boolean {
    return this.acquirable() ? this.forceComplete() : false;
  }

  protected onComplete(): void {
    this.done();
  }
}

/** The batch headers of a log read, as the SharePartition acquires from them. */
export function fetchedBatches(records: Buffer): FetchedBatch[] {
  const batches: FetchedBatch[] = [];
  for (const { header } of iterateBatches(records)) batches.push({ baseOffset: header.baseOffset, lastOffset: header.lastOffset, isControl: header.isControl });
  return batches;
}

/**
 * The batches of a log read that hold acquired offsets, from the first
 * that ends at or after the first acquired offset to the last that starts
 * at or before the last acquired one (Kafka's ShareFetchUtils slicing): a
 * subarray of the read, no copy.
 */
export function sliceToAcquired(records: Buffer, acquired: readonly AcquiredRecords[]): Buffer {
  const firstOffset = acquired[0]!.firstOffset;
  const lastOffset = acquired[acquired.length - 1]!.lastOffset;
  let start = -1;
  let end = -1;
  for (const { position, header } of iterateBatches(records)) {
    if (header.lastOffset < firstOffset) continue;
    if (header.baseOffset > lastOffset) break;
    if (start < 0) start = position;
    end = position + header.sizeBytes;
  }
  return start < 0 ? EMPTY_RECORDS : records.subarray(start, end);
}

/** ListOffsets' timestamp for a share.auto.offset.reset strategy: -1 latest, -2 earliest, or now minus the duration. */
export function resetTimestamp(strategy: string, nowMs: number): number {
  if (strategy === 'earliest') return -2;
  if (strategy.startsWith('by_duration:')) {
    const durationMs = isoDurationMs(strategy.slice('by_duration:'.length));
    if (durationMs !== null) return Math.max(0, nowMs - durationMs);
  }
  return -1;
}

/** An ISO-8601 duration as Java's Duration.parse reads it (PnDTnHnMn.nS), in milliseconds; null when malformed. */
export function isoDurationMs(text: string): number | null {
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(text);
  if (match === null || text.toUpperCase() === 'P' || text.toUpperCase().endsWith('T')) return null;
  const [, days, hours, minutes, seconds] = match;
  return ((Number(days ?? 0) * 24 + Number(hours ?? 0)) * 60 + Number(minutes ?? 0)) * 60_000 + Math.round(Number(seconds ?? 0) * 1000);
}

function empty(): ShareFetchPartitionResult {
  return { errorCode: ErrorCode.NONE, errorMessage: null, records: EMPTY_RECORDS, acquiredRecords: [] };
}

function failed(errorCode: number, errorMessage: string | null): ShareFetchPartitionResult {
  return { errorCode, errorMessage, records: EMPTY_RECORDS, acquiredRecords: [] };
}

export function partKey(part: ShareSessionPartition): string {
  return `${part.topicId}:${part.partition}`;
}

function entryKey(key: SharePartitionKey): string {
  return `${key.groupId}\u0000${key.topicId}:${key.partition}`;
}

function shareWatchKey(key: SharePartitionKey): string {
  return `share\u0000${entryKey(key)}`;
}

function describeKey(key: SharePartitionKey): string {
  return `${key.groupId}:${key.topicId}:${key.partition}`;
}
