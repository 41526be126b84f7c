/**
 * Incremental fetch sessions (KIP-227; Kafka's FetchSession / FetchManager).
 *
 * A fetcher (consumer or follower) that sends sessionId 0, epoch 0 asks for a
 * full fetch and, if the cache has room, gets a session id back. Its next
 * requests carry that id and the next epoch (1, 2, ... wrapping to 1 after
 * Integer.MAX_VALUE) and list only partitions that changed (added or with a
 * new fetch position) plus those to forget; the broker answers only
 * partitions with new data, a changed high watermark or log start offset, or
 * an error. Epoch -1 (FINAL_EPOCH) closes a session; with session id 0 it is
 * a sessionless full fetch.
 *
 * Errors: an unknown session id gives FETCH_SESSION_ID_NOT_FOUND, a wrong
 * epoch INVALID_FETCH_SESSION_EPOCH, switching between names (v12-) and topic
 * ids (v13+) within a session FETCH_SESSION_TOPIC_ID_ERROR; each answered with
 * no partitions and session id 0.
 *
 * The cache holds at most max.incremental.fetch.session.cache.slots sessions.
 * When full, a new session may evict one that is stale (unused for
 * evictionMs), else the least valuable one: unprivileged (consumer) before
 * privileged (follower), then fewer partitions, and only sessions older than
 * evictionMs, except that a follower may evict a new consumer session.
 */
import type { Random } from '../io/random.js';
import { ErrorCode } from '../protocol/errors.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';

export const INVALID_SESSION_ID = 0;
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
/** Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS. */
export const FETCH_SESSION_EVICTION_MS = 120_000;
const INT32_MAX = 0x7fffffff;

export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  return epoch === INT32_MAX ? 1 : epoch + 1;
}

/** A partition as a fetch request names it: by topic id (v13+) or by name. */
export interface TopicIdPartition {
  /** Kafka's base64url text; the zero UUID when the request uses names. */
  topicId: string;
  /** null when a v13+ request names a topic id this broker does not know. */
  topic: string | null;
  partition: number;
}

/** What a fetcher asks of one partition. */
export interface PartitionFetchRequest {
  fetchOffset: number;
  logStartOffset: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** A follower's own high watermark (Fetch v18, KIP-1166); Infinity when not sent. */
  replicaHighWatermark?: number;
}

/** What the response says about one partition, as far as the session cares. */
export interface PartitionFetchResult {
  errorCode: number;
  highWatermark: number;
  logStartOffset: number;
  recordsBytes: number;
  preferredReadReplica: number;
  divergingEpoch: boolean;
}

export function partitionKey(part: TopicIdPartition, usesTopicIds: boolean): string {
  return topicPartitionKey({ topic: usesTopicIds ? part.topicId : (part.topic ?? ''), partition: part.partition });
}

class CachedPartition {
  highWatermark = -1;
  localLogStartOffset = -1;

  constructor(
    public part: TopicIdPartition,
    public request: PartitionFetchRequest,
  ) {}

  /** Whether the partition must appear in an incremental response; updates the cached view if asked. */
  maybeUpdateResponseData(result: PartitionFetchResult, update: boolean): boolean {
    let mustRespond = result.recordsBytes > 0 || result.preferredReadReplica >= 0 || result.divergingEpoch;
    if (this.highWatermark !== result.highWatermark) {
      mustRespond = true;
      if (update) this.highWatermark = result.highWatermark;
    }
    if (this.localLogStartOffset !== result.logStartOffset) {
      mustRespond = true;
      if (update) this.localLogStartOffset = result.logStartOffset;
    }
    if (result.errorCode !== 0) {
      // Forget the high watermark so the partition is sent again once the error clears.
      if (update) this.highWatermark = -1;
      mustRespond = true;
    }
    return mustRespond;
  }
}

export class FetchSession {
  /** Insertion order is the order partitions are fetched and answered in. */
  readonly partitions = new Map<string, CachedPartition>();
  lastUsedMs: number;
  /** Size when last touched; -1 while not in the cache. */
  cachedSize = -1;
  evictableByAll = false;
  evictableByPrivileged = false;

  constructor(
    readonly id: number,
    readonly privileged: boolean,
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
    public epoch: number,
  ) {
    this.lastUsedMs = creationMs;
  }

  get size(): number {
    return this.partitions.size;
  }

  /** Applies an incremental request: adds or updates listed partitions, drops forgotten ones. */
  update(fetchData: ReadonlyMap<string, { part: TopicIdPartition; request: PartitionFetchRequest }>, toForget: readonly string[]): void {
    for (const [key, { part, request }] of fetchData) {
      const cached = this.partitions.get(key);
      if (cached === undefined) this.partitions.set(key, new CachedPartition(part, request));
      else cached.request = request;
    }
    for (const key of toForget) this.partitions.delete(key);
  }
}

export interface FetchSessionCacheOptions {
  /** max.incremental.fetch.session.cache.slots. */
  sessionsMax: number;
  evictionMs: number;
  random: Random;
}

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();
  private partitionCount = 0;
  evictions = 0;

  constructor(private readonly options: FetchSessionCacheOptions) {}

  get size(): number {
    return this.sessions.size;
  }

  get totalPartitions(): number {
    return this.partitionCount;
  }

  get(sessionId: number): FetchSession | undefined {
    return this.sessions.get(sessionId);
  }

  /** Creates a session if there is room (possibly by evicting one); returns its id or INVALID_SESSION_ID. */
  maybeCreateSession(nowMs: number, privileged: boolean, usesTopicIds: boolean, fill: (session: FetchSession) => void): number {
    if (this.sessions.size >= this.options.sessionsMax && !this.tryEvict(privileged, this.sizeHint(fill), nowMs)) {
      return INVALID_SESSION_ID;
    }
    const session = new FetchSession(this.newSessionId(), privileged, usesTopicIds, nowMs, nextEpoch(INITIAL_EPOCH));
    fill(session);
    this.sessions.set(session.id, session);
    this.touch(session, nowMs);
    return session.id;
  }

  private sizeHint(fill: (session: FetchSession) => void): number {
    const probe = new FetchSession(INVALID_SESSION_ID, false, false, 0, 0);
    fill(probe);
    return probe.size;
  }

  private newSessionId(): number {
    for (;;) {
      const id = 1 + this.options.random.nextInt(INT32_MAX - 1);
      if (!this.sessions.has(id)) return id;
    }
  }

  remove(sessionId: number): FetchSession | undefined {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return undefined;
    this.sessions.delete(sessionId);
    this.partitionCount -= Math.max(0, session.cachedSize);
    session.cachedSize = -1;
    return session;
  }

  /** Records a use of `session`: its last-used time, size, and whether others may evict it. */
  touch(session: FetchSession, nowMs: number): void {
    session.lastUsedMs = nowMs;
    if (session.cachedSize !== -1) this.partitionCount -= session.cachedSize;
    session.cachedSize = session.size;
    this.partitionCount += session.cachedSize;
    const old = nowMs - session.creationMs > this.options.evictionMs;
    session.evictableByPrivileged = !session.privileged || old;
    session.evictableByAll = old;
  }

  private tryEvict(privileged: boolean, size: number, nowMs: number): boolean {
    let stalest: FetchSession | null = null;
    for (const session of this.sessions.values()) {
      if (stalest === null || session.lastUsedMs < stalest.lastUsedMs || (session.lastUsedMs === stalest.lastUsedMs && session.id < stalest.id)) stalest = session;
    }
    if (stalest === null) return false;
    if (nowMs - stalest.lastUsedMs > this.options.evictionMs) return this.evict(stalest);
    let candidate: FetchSession | null = null;
    for (const session of this.sessions.values()) {
      const evictable = privileged ? session.evictableByPrivileged : session.evictableByAll;
      if (evictable && (candidate === null || compareEvictable(session, candidate) < 0)) candidate = session;
    }
    if (candidate === null) return false;
    const incoming = { privileged, cachedSize: size, id: 0 };
    if (compareEvictable(incoming, candidate) < 0) return false;
    return this.evict(candidate);
  }

  private evict(session: FetchSession): boolean {
    this.remove(session.id);
    this.evictions++;
    return true;
  }
}

/** Kafka's EvictableKey order: unprivileged first, then fewer partitions, then lower id. */
function compareEvictable(a: { privileged: boolean; cachedSize: number; id: number }, b: { privileged: boolean; cachedSize: number; id: number }): number {
  if (a.privileged !== b.privileged) return a.privileged ? 1 : -1;
  if (a.cachedSize !== b.cachedSize) return a.cachedSize - b.cachedSize;
  return a.id - b.id;
}

export interface FetchRequestPartition {
  key: string;
  part: TopicIdPartition;
  request: PartitionFetchRequest;
}

/** The answer for one partition, paired with what the session needs to know about it. */
export interface FetchResponsePartition<D> {
  key: string;
  part: TopicIdPartition;
  result: PartitionFetchResult;
  data: D;
}

/**
 * How one fetch request relates to the session cache (Kafka's FetchContext):
 * which partitions to read, and how to turn the per-partition results into
 * the response's error, session id and partition list.
 */
export interface FetchContext {
  readonly kind: 'sessionError' | 'sessionless' | 'full' | 'incremental';
  /** The partitions to read, in response order. */
  partitions(): FetchRequestPartition[];
  respond<D>(results: readonly FetchResponsePartition<D>[]): { errorCode: number; sessionId: number; partitions: FetchResponsePartition<D>[] };
  /**
   * The answer to a fetch throttled by a client quota (Kafka's
   * getThrottledResponse): no partitions, and the session left as it was;
   * a full fetch creates no session.
   */
  throttled(): { errorCode: number; sessionId: number };
}

export class FetchManager {
  constructor(
    readonly cache: FetchSessionCache,
    private readonly nowMs: () => number,
  ) {}

  /**
   * Resolves the session a request refers to. `fetchData` is the request's
   * partitions keyed by partitionKey(part, version >= 13); `toForget` the
   * forgotten partitions' keys.
   */
  newContext(request: {
    version: number;
    sessionId: number;
    epoch: number;
    isFollower: boolean;
    fetchData: ReadonlyMap<string, { part: TopicIdPartition; request: PartitionFetchRequest }>;
    toForget: readonly string[];
    /** Resolves topic ids that had no name when the session cached them. */
    topicNames: (topicId: string) => string | null;
  }): FetchContext {
    const usesTopicIds = request.version >= 13;
    if (request.epoch === INITIAL_EPOCH || request.epoch === FINAL_EPOCH) {
      if (request.sessionId !== INVALID_SESSION_ID) this.cache.remove(request.sessionId);
      if (request.epoch === FINAL_EPOCH) return sessionlessContext(request.fetchData);
      return this.fullContext(request.fetchData, usesTopicIds, request.isFollower);
    }
    const session = this.cache.get(request.sessionId);
    if (session === undefined) return sessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    if (session.epoch !== request.epoch) return sessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    if (session.usesTopicIds !== usesTopicIds) return sessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
    session.update(request.fetchData, request.toForget);
    if (session.size === 0) {
      this.cache.remove(session.id);
      return sessionlessContext(request.fetchData);
    }
    this.cache.touch(session, this.nowMs());
    session.epoch = nextEpoch(session.epoch);
    return incrementalContext(session, request.topicNames);
  }

  private fullContext(fetchData: ReadonlyMap<string, { part: TopicIdPartition; request: PartitionFetchRequest }>, usesTopicIds: boolean, isFollower: boolean): FetchContext {
    return {
      kind: 'full',
      partitions: () => [...fetchData].map(([key, { part, request }]) => ({ key, part, request })),
      respond: (results) => {
        const sessionId = this.cache.maybeCreateSession(this.nowMs(), isFollower, usesTopicIds, (session) => {
          for (const { key, part, result } of results) {
            const cached = new CachedPartition(part, fetchData.get(key)?.request ?? emptyRequest());
            cached.highWatermark = result.highWatermark;
            cached.localLogStartOffset = result.logStartOffset;
            session.partitions.set(key, cached);
          }
        });
        return { errorCode: ErrorCode.NONE, sessionId, partitions: [...results] };
      },
      throttled: () => ({ errorCode: ErrorCode.NONE, sessionId: INVALID_SESSION_ID }),
    };
  }
}

function emptyRequest(): PartitionFetchRequest {
  return { fetchOffset: -1, logStartOffset: -1, maxBytes: 0, currentLeaderEpoch: -1, lastFetchedEpoch: -1 };
}

function sessionErrorContext(errorCode: number): FetchContext {
  return {
    kind: 'sessionError',
    partitions: () => [],
    respond: () => ({ errorCode, sessionId: INVALID_SESSION_ID, partitions: [] }),
    throttled: () => ({ errorCode, sessionId: INVALID_SESSION_ID }),
  };
}

function sessionlessContext(fetchData: ReadonlyMap<string, { part: TopicIdPartition; request: PartitionFetchRequest }>): FetchContext {
  return {
    kind: 'sessionless',
    partitions: () => [...fetchData].map(([key, { part, request }]) => ({ key, part, request })),
    respond: (results) => ({ errorCode: ErrorCode.NONE, sessionId: INVALID_SESSION_ID, partitions: [...results] }),
    throttled: () => ({ errorCode: ErrorCode.NONE, sessionId: INVALID_SESSION_ID }),
  };
}

function incrementalContext(session: FetchSession, topicNames: (topicId: string) => string | null): FetchContext {
  const expectedEpoch = session.epoch;
  return {
    kind: 'incremental',
    partitions: () =>
      [...session.partitions].map(([key, cached]) => {
        if (session.usesTopicIds && cached.part.topic === null) cached.part = { ...cached.part, topic: topicNames(cached.part.topicId) };
        return { key, part: cached.part, request: cached.request };
      }),
    respond: (results) => {
      // A concurrent request with the same epoch got here first: this one is a duplicate.
      if (session.epoch !== expectedEpoch) return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: session.id, partitions: [] };
      const selected = results.filter(({ key, result }) => {
        const cached = session.partitions.get(key);
        if (cached === undefined) return true;
        const mustRespond = cached.maybeUpdateResponseData(result, true);
        if (mustRespond && result.recordsBytes > 0) {
          // Partitions that returned data go to the back, so the others get a turn at the byte budget next time.
          session.partitions.delete(key);
          session.partitions.set(key, cached);
        }
        return mustRespond;
      });
      return { errorCode: ErrorCode.NONE, sessionId: session.id, partitions: selected };
    },
    throttled: () => ({ errorCode: session.epoch === expectedEpoch ? ErrorCode.NONE : ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: session.id }),
  };
}

