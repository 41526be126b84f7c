/**
 * What the consumer and its group membership (classic, group-classic.ts, or
 * KIP-848, group-consumer-protocol.ts) share: the settings, the rebalance
 * listener, the small host interface through which a membership changes the
 * consumer's assignment, and helpers on partition sets.
 *
 * Division of work, as in Kafka's consumer: heartbeats run on timers
 * (env.timers) on their own; everything that changes the assignment or calls
 * the user's listener (joining, reconciling, revoking) runs from poll(), so
 * a consumer that stops polling stops taking part in rebalances and is
 * removed after the rebalance timeout (max.poll.interval.ms).
 */
import type { Env, TimerHandle } from '../io/env.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Cluster } from './cluster.js';
import type { CommitIdentity } from './group-coordinator.js';
import type { PartitionAssignor } from './group-assignors.js';

/** The user's rebalance callbacks (Kafka's ConsumerRebalanceListener); each may be async. */
export interface RebalanceListener {
  onPartitionsAssigned?(partitions: TopicPartition[]): void | Promise<void>;
  onPartitionsRevoked?(partitions: TopicPartition[]): void | Promise<void>;
  /** Partitions taken away without a chance to commit (fenced, expired). Defaults to onPartitionsRevoked. */
  onPartitionsLost?(partitions: TopicPartition[]): void | Promise<void>;
}

export interface GroupSettings {
  groupId: string;
  groupInstanceId: string | null;
  /** session.timeout.ms (classic). */
  sessionTimeoutMs: number;
  /** heartbeat.interval.ms (classic; the consumer protocol takes the interval the coordinator sends). */
  heartbeatIntervalMs: number;
  /** max.poll.interval.ms: the rebalance timeout. */
  rebalanceTimeoutMs: number;
  /** partition.assignment.strategy (classic), preferred first. */
  assignors: readonly PartitionAssignor[];
  /** group.remote.assignor (consumer protocol); null lets the coordinator pick. */
  remoteAssignor: string | null;
}

export const GROUP_DEFAULTS = {
  sessionTimeoutMs: 45_000,
  heartbeatIntervalMs: 3_000,
  rebalanceTimeoutMs: 300_000,
  autoCommitIntervalMs: 5_000,
} as const;

/** A subscription: topic names, or a pattern matched against the cluster's topics. */
export type Subscription = { topics: readonly string[] } | { pattern: RegExp };

/** What a membership may ask of its consumer. */
export interface MembershipHost {
  readonly cluster: Cluster;
  readonly listener: RebalanceListener;
  subscription(): Subscription;
  /** The subscribed topics that exist now (a pattern resolved against metadata, internal topics excluded). */
  subscribedTopics(options?: { refresh?: boolean }): Promise<string[]>;
  owned(): TopicPartition[];
  /** Adds partitions; each starts at its committed offset, else per auto.offset.reset. */
  addPartitions(partitions: readonly TopicPartition[]): void;
  removePartitions(partitions: readonly TopicPartition[]): void;
  /** With auto-commit on, commits the positions of `partitions` (errors are logged, not thrown). */
  commitBeforeRevocation(partitions: readonly TopicPartition[], who: CommitIdentity): Promise<void>;
  /** When poll() was last called (monotonic ms): a member silent past the rebalance timeout leaves. */
  lastPollMs(): number;
  log(message: string): void;
}

export interface Membership {
  /** Drives the protocol from poll(): joins, reconciles; resolves once nothing is pending or at `deadlineMs`. */
  poll(deadlineMs: number): Promise<void>;
  /** The generation (classic) or member epoch (consumer protocol) that commits carry. */
  identity(): CommitIdentity;
  /** True while the member holds a valid generation or epoch. */
  readonly active: boolean;
  readonly memberId: string;
  readonly generationId: number;
  /** Wakes when the assignment may have changed (a poll() with nothing to fetch sleeps on it). */
  readonly changed: Signal;
  /** Revokes (after committing, with auto-commit) and leaves the group. */
  leave(reason: string): Promise<void>;
  /** Stops timers and closes the coordinator connection. */
  close(): Promise<void>;
}

/** A wake-up that poll() can wait on with a deadline. */
export class Signal {
  private waiters: (() => void)[] = [];

  constructor(private readonly env: Env) {}

  notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves on the next notify() or at `deadlineMs` (monotonic), whichever comes first. */
  wait(deadlineMs: number): Promise<void> {
    const delayMs = deadlineMs - this.env.clock.monotonicMs();
    if (delayMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      const wake = (): void => {
        timer?.cancel();
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      };
      this.waiters.push(wake);
      timer = this.env.timers.schedule(delayMs, wake);
    });
  }
}

/** Waits for `work` but no later than `deadlineMs` (the work goes on). */
export async function untilDeadline(env: Env, work: Promise<unknown>, deadlineMs: number): Promise<void> {
  const delayMs = deadlineMs - env.clock.monotonicMs();
  if (delayMs <= 0) {
    await Promise.race([work, Promise.resolve()]);
    return;
  }
  let timer: TimerHandle | null = null;
  const expired = new Promise<void>((resolve) => { timer = env.timers.schedule(delayMs, resolve); });
  try {
    await Promise.race([work, expired]);
  } finally {
    (timer as TimerHandle | null)?.cancel();
  }
}


/** Partitions of `a` not in `b`, in `a`'s order. */
export function minus(a: readonly TopicPartition[], b: readonly TopicPartition[]): TopicPartition[] {
  const other = new Set(b.map(topicPartitionKey));
  return a.filter((tp) => !other.has(topicPartitionKey(tp)));
}

/** Sorted by topic, then partition (the order Kafka's listener arguments come in). */
export function sortPartitions(tps: readonly TopicPartition[]): TopicPartition[] {
  return [...tps].sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition));
}

/** Calls a listener method, falling back from onPartitionsLost to onPartitionsRevoked as Kafka's default does. */
export async function invokeListener(listener: RebalanceListener, kind: 'assigned' | 'revoked' | 'lost', partitions: readonly TopicPartition[], host: MembershipHost): Promise<void> {
  const sorted = sortPartitions(partitions);
  try {
    if (kind === 'assigned') await listener.onPartitionsAssigned?.(sorted);
    else if (kind === 'revoked') await listener.onPartitionsRevoked?.(sorted);
    else if (listener.onPartitionsLost !== undefined) await listener.onPartitionsLost(sorted);
    else await listener.onPartitionsRevoked?.(sorted);
  } catch (error) {
    // Kafka logs a listener's exception and carries on with the rebalance.
    host.log(`User provided listener failed on partitions ${kind}: ${(error as Error).message}`);
  }
}
