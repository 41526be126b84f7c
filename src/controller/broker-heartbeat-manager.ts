/**
 * The active controller's view of broker sessions (Kafka's
 * BrokerHeartbeatManager). Sessions live in memory only: they are not in
 * the metadata log, and a controller that becomes active starts every
 * registered broker's session afresh.
 *
 * A broker is in one of four states, derived from its session and its
 * registration: FENCED, UNFENCED, CONTROLLED_SHUTDOWN (unfenced, asked to
 * shut down, leaders still moving or not yet seen by every active broker)
 * and SHUTDOWN_NOW. The state a heartbeat moves a broker to follows Kafka's
 * rules exactly (calculateNextBrokerState).
 *
 * An unfenced broker whose last heartbeat is older than
 * broker.session.timeout.ms is stale; the controller fences it.
 */
import type { Clock } from '../io/clock.js';

export const BrokerControlState = {
  FENCED: 'FENCED',
  UNFENCED: 'UNFENCED',
  CONTROLLED_SHUTDOWN: 'CONTROLLED_SHUTDOWN',
  SHUTDOWN_NOW: 'SHUTDOWN_NOW',
} as const;
export type BrokerControlState = (typeof BrokerControlState)[keyof typeof BrokerControlState];

/** What fencing, controlled shutdown and the answer to a heartbeat read off a state. */
export const stateFlags = {
  fenced: (state: BrokerControlState): boolean => state === 'FENCED' || state === 'SHUTDOWN_NOW',
  inControlledShutdown: (state: BrokerControlState): boolean => state === 'CONTROLLED_SHUTDOWN',
  shouldShutDown: (state: BrokerControlState): boolean => state === 'SHUTDOWN_NOW',
};

export interface HeartbeatRequest {
  wantFence: boolean;
  wantShutDown: boolean;
  currentMetadataOffset: number;
}

interface BrokerSession {
  id: number;
  lastContactMs: number;
  /** The highest metadata offset the broker reported. */
  metadataOffset: number;
  /** End offset of the batch that put the broker in controlled shutdown; -1 when not shutting down. */
  controlledShutdownOffset: number;
  fenced: boolean;
}

export class BrokerHeartbeatManager {
  private readonly sessions = new Map<number, BrokerSession>();

  constructor(
    private readonly clock: Clock,
    /** broker.session.timeout.ms */
    private readonly sessionTimeoutMs: number,
  ) {}

  /** A registration (new or replayed) with its fencing; a session that changes fencing keeps its metadata offset. */
  register(brokerId: number, fenced: boolean): void {
    const existing = this.sessions.get(brokerId);
    const metadataOffset = existing !== undefined && existing.fenced !== fenced ? existing.metadataOffset : -1;
    if (existing === undefined) this.sessions.set(brokerId, { id: brokerId, lastContactMs: 0, metadataOffset: -1, controlledShutdownOffset: -1, fenced });
    this.touch(brokerId, fenced, metadataOffset);
  }

  has(brokerId: number): boolean {
    return this.sessions.has(brokerId);
  }

  isFenced(brokerId: number): boolean {
    return this.session(brokerId).fenced;
  }

  brokerIds(): number[] {
    return [...this.sessions.keys()];
  }

  remove(brokerId: number): void {
    this.sessions.delete(brokerId);
  }

  /** A heartbeat (or registration) seen now; a fenced broker leaves controlled shutdown. */
  touch(brokerId: number, fenced: boolean, metadataOffset: number): void {
    const session = this.session(brokerId);
    session.lastContactMs = this.clock.monotonicMs();
    session.metadataOffset = metadataOffset;
    session.fenced = fenced;
    if (fenced) session.controlledShutdownOffset = -1;
  }

  /** The session expired: the broker is fenced now (its records follow). */
  fence(brokerId: number): void {
    const session = this.sessions.get(brokerId);
    if (session !== undefined) {
      session.fenced = true;
      session.controlledShutdownOffset = -1;
    }
  }

  /** True while the broker is unfenced and heard from within the session timeout. */
  hasValidSession(brokerId: number): boolean {
    const session = this.sessions.get(brokerId);
    return session !== undefined && !session.fenced && session.lastContactMs + this.sessionTimeoutMs >= this.clock.monotonicMs();
  }

  /** Remembers the offset that must reach every active broker before a shutting-down broker may go. */
  maybeUpdateControlledShutdownOffset(brokerId: number, offset: number): void {
    const session = this.session(brokerId);
    if (session.fenced) throw new Error(`fenced broker ${brokerId} cannot enter controlled shutdown`);
    if (session.controlledShutdownOffset < 0) session.controlledShutdownOffset = offset;
  }

  /** The unfenced broker whose session expired first, or null. */
  findOneStaleBroker(): number | null {
    const oldest = this.oldestUnfenced();
    return oldest !== null && !this.hasValidSession(oldest.id) ? oldest.id : null;
  }

  /**
   * When the oldest unfenced session expires (monotonic ms), or null when no broker is unfenced: the first
   * millisecond past its timeout, since a session is still valid at exactly lastContact + timeout (a check then
   * would find nothing and schedule itself again at once; on a mock clock, forever).
   */
  nextCheckTimeMs(): number | null {
    const oldest = this.oldestUnfenced();
    return oldest === null ? null : oldest.lastContactMs + this.sessionTimeoutMs + 1;
  }

  currentState(brokerId: number): BrokerControlState {
    const session = this.session(brokerId);
    if (session.controlledShutdownOffset >= 0) return BrokerControlState.CONTROLLED_SHUTDOWN;
    return session.fenced ? BrokerControlState.FENCED : BrokerControlState.UNFENCED;
  }

  /** Kafka's calculateNextBrokerState: where a heartbeat moves the broker. */
  nextState(brokerId: number, request: HeartbeatRequest, options: { registerBrokerRecordOffset: number; hasLeaderships: () => boolean }): BrokerControlState {
    const current = this.currentState(brokerId);
    switch (current) {
      case BrokerControlState.FENCED:
        if (request.wantShutDown) return BrokerControlState.SHUTDOWN_NOW;
        if (!request.wantFence && request.currentMetadataOffset >= options.registerBrokerRecordOffset) return BrokerControlState.UNFENCED;
        return BrokerControlState.FENCED;
      case BrokerControlState.UNFENCED:
        if (request.wantFence) return request.wantShutDown ? BrokerControlState.SHUTDOWN_NOW : BrokerControlState.FENCED;
        if (request.wantShutDown) return options.hasLeaderships() ? BrokerControlState.CONTROLLED_SHUTDOWN : BrokerControlState.SHUTDOWN_NOW;
        return BrokerControlState.UNFENCED;
      case BrokerControlState.CONTROLLED_SHUTDOWN:
        if (options.hasLeaderships()) return BrokerControlState.CONTROLLED_SHUTDOWN;
        return this.session(brokerId).controlledShutdownOffset <= this.lowestActiveOffset() ? BrokerControlState.SHUTDOWN_NOW : BrokerControlState.CONTROLLED_SHUTDOWN;
      default:
        return BrokerControlState.SHUTDOWN_NOW;
    }
  }

  /** The lowest metadata offset reported by an unfenced broker not shutting down; Infinity when there is none. */
  private lowestActiveOffset(): number {
    let lowest = Infinity;
    for (const session of this.sessions.values()) {
      if (!session.fenced && session.controlledShutdownOffset < 0) lowest = Math.min(lowest, session.metadataOffset);
    }
    return lowest;
  }

  private oldestUnfenced(): BrokerSession | null {
    let oldest: BrokerSession | null = null;
    for (const session of this.sessions.values()) {
      if (!session.fenced && (oldest === null || session.lastContactMs < oldest.lastContactMs)) oldest = session;
    }
    return oldest;
  }

  private session(brokerId: number): BrokerSession {
    const session = this.sessions.get(brokerId);
    if (session === undefined) throw new Error(`broker ${brokerId} has no heartbeat session`);
    return session;
  }
}
