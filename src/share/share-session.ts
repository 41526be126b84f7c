/**
 * Share sessions (KIP-932's share-fetch sessions, Kafka's ShareSessionCache):
 * which share partitions a member of a share group fetches from this
 * broker, so that a ShareFetch after the first names only what changed.
 *
 * A session is keyed by (group id, member id) and carries an epoch:
 * - epoch 0 opens a session (replacing the member's earlier one) with the
 *   request's partitions; it may not carry acknowledgements
 *   (INVALID_REQUEST); a full cache answers SHARE_SESSION_LIMIT_REACHED;
 * - epoch -1 is the member's last request: its acknowledgements are
 *   applied, then the session is released (SHARE_SESSION_NOT_FOUND when
 *   there is none);
 * - any other epoch must be the session's current one
 *   (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND without a
 *   session); the request adds and forgets partitions, and the epoch moves
 *   on (after Integer.MAX_VALUE it wraps to 1, as Kafka's nextEpoch).
 *
 * A session belongs to the connection that opened it: when that connection
 * closes, the session goes and the member's acquired records are released
 * (Kafka's ShareGroupListener.onMemberLeave).
 *
 * Bounded: at most `group.share.max.share.sessions` sessions.
 */
import { ErrorCode } from '../protocol/errors.js';

export interface ShareSessionPartition {
  topicId: string;
  partition: number;
}

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  epoch: number;
  connectionId: string;
  /** The session's partitions by `topicId:partition`, in the order they were added. */
  readonly partitions: Map<string, ShareSessionPartition>;
  /** Partitions added since the last response: reported once even with nothing to say. */
  readonly unreported: Set<string>;
}

/** What a ShareFetch reads under: a new or continued session, or the member's final request. */
export type ShareFetchContext =
  | { kind: 'new'; session: ShareSession }
  | { kind: 'subsequent'; session: ShareSession }
  | { kind: 'final' };

export type ContextOutcome = { ok: true; context: ShareFetchContext } | { ok: false; errorCode: number };

export function sharePartitionKeyOf(part: ShareSessionPartition): string {
  return `${part.topicId}:${part.partition}`;
}

/** Kafka's ShareRequestMetadata.nextEpoch: after the largest int32 comes 1 (0 and -1 are reserved). */
export function nextShareSessionEpoch(epoch: number): number {
  return epoch >= 0x7fffffff ? 1 : epoch + 1;
}

export const FINAL_SHARE_SESSION_EPOCH = -1;
export const INITIAL_SHARE_SESSION_EPOCH = 0;

export class ShareSessionCache {
  private readonly sessions = new Map<string, ShareSession>();
  private readonly byConnection = new Map<string, Set<string>>();

  constructor(private readonly sessionsMax: number) {
    if (!(sessionsMax >= 1)) throw new Error(`group.share.max.share.sessions must be at least 1, not ${sessionsMax}`);
  }

  get size(): number {
    return this.sessions.size;
  }

  get(groupId: string, memberId: string): ShareSession | undefined {
    return this.sessions.get(sessionKey(groupId, memberId));
  }

  /**
   * The context of a ShareFetch (Kafka's SharePartitionManager.newContext):
   * opens, continues or ends the member's session as its epoch says.
   */
  newContext(request: {
    groupId: string;
    memberId: string;
    epoch: number;
    partitions: readonly ShareSessionPartition[];
    forgotten: readonly ShareSessionPartition[];
    hasAcknowledgements: boolean;
    connectionId: string;
  }): ContextOutcome {
    const key = sessionKey(request.groupId, request.memberId);
    const existing = this.sessions.get(key);
    if (request.epoch === FINAL_SHARE_SESSION_EPOCH) {
      return existing === undefined ? { ok: false, errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND } : { ok: true, context: { kind: 'final' } };
    }
    if (request.epoch === INITIAL_SHARE_SESSION_EPOCH) {
      if (request.hasAcknowledgements) return { ok: false, errorCode: ErrorCode.INVALID_REQUEST };
      if (existing !== undefined) this.remove(existing);
      if (this.sessions.size >= this.sessionsMax) return { ok: false, errorCode: ErrorCode.SHARE_SESSION_LIMIT_REACHED };
      const session = this.create(request, key);
      return { ok: true, context: { kind: 'new', session } };
    }
    if (existing === undefined) return { ok: false, errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND };
    if (existing.epoch !== request.epoch) return { ok: false, errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH };
    for (const part of request.partitions) addPartition(existing, part);
    for (const part of request.forgotten) {
      existing.partitions.delete(sharePartitionKeyOf(part));
      existing.unreported.delete(sharePartitionKeyOf(part));
    }
    existing.epoch = nextShareSessionEpoch(existing.epoch);
    return { ok: true, context: { kind: 'subsequent', session: existing } };
  }

  /**
   * A ShareAcknowledge's session check (Kafka's acknowledgeSessionUpdate):
   * epoch 0 is refused, -1 needs a session, any other must match and moves
   * the epoch on. Returns ErrorCode.NONE when the request may proceed.
   */
  acknowledgeSessionUpdate(groupId: string, memberId: string, epoch: number): number {
    if (epoch === INITIAL_SHARE_SESSION_EPOCH) return ErrorCode.INVALID_SHARE_SESSION_EPOCH;
    const session = this.sessions.get(sessionKey(groupId, memberId));
    if (session === undefined) return ErrorCode.SHARE_SESSION_NOT_FOUND;
    if (epoch === FINAL_SHARE_SESSION_EPOCH) return ErrorCode.NONE;
    if (session.epoch !== epoch) return ErrorCode.INVALID_SHARE_SESSION_EPOCH;
    session.epoch = nextShareSessionEpoch(session.epoch);
    return ErrorCode.NONE;
  }

  /** True while some member of the group has a session here. */
  hasGroup(groupId: string): boolean {
    for (const session of this.sessions.values()) if (session.groupId === groupId) return true;
    return false;
  }

  /** Drops the member's session (its final request was answered). */
  removeSession(groupId: string, memberId: string): ShareSession | undefined {
    const session = this.sessions.get(sessionKey(groupId, memberId));
    if (session !== undefined) this.remove(session);
    return session;
  }

  /** The connection closed: its sessions go; returns them so the caller releases their members' records. */
  connectionClosed(connectionId: string): ShareSession[] {
    const keys = this.byConnection.get(connectionId);
    if (keys === undefined) return [];
    this.byConnection.delete(connectionId);
    const closed: ShareSession[] = [];
    for (const key of keys) {
      const session = this.sessions.get(key);
      // A member that reopened its session on another connection keeps it.
      if (session === undefined || session.connectionId !== connectionId) continue;
      this.sessions.delete(key);
      closed.push(session);
    }
    return closed;
  }

  /** Every session (share groups disabled, broker stopping). */
  clear(): ShareSession[] {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    this.byConnection.clear();
    return all;
  }

  private create(request: { groupId: string; memberId: string; partitions: readonly ShareSessionPartition[]; connectionId: string }, key: string): ShareSession {
    const session: ShareSession = {
      groupId: request.groupId,
      memberId: request.memberId,
      // The response to the opening request leaves the session at epoch 1, the client's next.
      epoch: nextShareSessionEpoch(INITIAL_SHARE_SESSION_EPOCH),
      connectionId: request.connectionId,
      partitions: new Map(),
      unreported: new Set(),
    };
    for (const part of request.partitions) session.partitions.set(sharePartitionKeyOf(part), { topicId: part.topicId, partition: part.partition });
    this.sessions.set(key, session);
    let keys = this.byConnection.get(request.connectionId);
    if (keys === undefined) this.byConnection.set(request.connectionId, (keys = new Set()));
    keys.add(key);
    return session;
  }

  private remove(session: ShareSession): void {
    const key = sessionKey(session.groupId, session.memberId);
    this.sessions.delete(key);
    this.byConnection.get(session.connectionId)?.delete(key);
  }
}

function addPartition(session: ShareSession, part: ShareSessionPartition): void {
  const key = sharePartitionKeyOf(part);
  if (session.partitions.has(key)) return;
  session.partitions.set(key, { topicId: part.topicId, partition: part.partition });
  session.unreported.add(key);
}

function sessionKey(groupId: string, memberId: string): string {
  return JSON.stringify([groupId, memberId]);
}
