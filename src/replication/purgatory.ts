/**
 * Delayed operations and the purgatory that holds them (Kafka's
 * DelayedOperation / DelayedOperationPurgatory): a request that cannot be
 * answered yet (acks=all waiting for the high watermark, a fetch waiting for
 * fetch.min.bytes) waits here, watched under keys (its partitions), until
 * either an event on one of its keys lets it complete or its timeout fires.
 *
 * Nothing polls: appends and high-watermark moves call checkAndComplete(key),
 * and each operation has one timer from the injected Timers. An operation
 * completes exactly once (forceComplete is idempotent); completing removes it
 * from every key it was watched under, so nothing completed stays referenced.
 *
 * Bounded: at most `operationsMax` operations wait at once; past that a new
 * operation is completed at once (a fetch answers with what it has, a produce
 * with its current status) rather than growing memory without limit.
 */
import type { TimerHandle, Timers } from '../io/clock.js';

export abstract class DelayedOperation {
  private completedFlag = false;
  private expiredFlag = false;
  private timer: TimerHandle | null = null;
  /** Keys this operation is watched under, so completion can unlink it. */
  watchKeys: readonly string[] = [];
  /** Set by the purgatory that watches the operation. */
  onDone: ((operation: DelayedOperation) => void) | null = null;

  constructor(readonly delayMs: number) {}

  get isCompleted(): boolean {
    return this.completedFlag;
  }

  /** True when the operation completed because its timeout fired. */
  get isExpired(): boolean {
    return this.expiredFlag;
  }

  /**
   * Checks whether the operation can complete now; if so, calls
   * forceComplete() and returns true.
   */
  abstract tryComplete(): boolean;

  /** Builds and delivers the result; runs exactly once. */
  protected abstract onComplete(): void;

  /** Completes the operation unless it already was; returns whether this call completed it. */
  forceComplete(): boolean {
    if (this.completedFlag) return false;
    this.completedFlag = true;
    this.timer?.cancel();
    this.timer = null;
    this.onComplete();
    this.onDone?.(this);
    return true;
  }

  /** Starts the timeout; called by the purgatory when the operation starts waiting. */
  startTimer(timers: Timers): void {
    if (this.completedFlag || this.timer !== null) return;
    this.timer = timers.schedule(this.delayMs, () => {
      this.timer = null;
      if (this.completedFlag) return;
      this.expiredFlag = true;
      this.forceComplete();
    });
  }
}

export interface PurgatoryOptions {
  /** Most operations waiting at once. */
  operationsMax: number;
}

export class DelayedOperationPurgatory<T extends DelayedOperation> {
  private readonly watchers = new Map<string, Set<T>>();
  private waiting = 0;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly timers: Timers,
    private readonly options: PurgatoryOptions,
  ) {}

  /** Operations waiting (not completed). */
  get delayedCount(): number {
    return this.waiting;
  }

  /**
   * Watch entries: each waiting operation once per key it is watched under
   * (Kafka's PurgatorySize counts the same way; Kafka's also counts
   * completed operations not purged yet, and Spool unwatches at completion).
   */
  get watchedCount(): number {
    let count = 0;
    for (const set of this.watchers.values()) count += set.size;
    return count;
  }

  /** Keys with at least one waiting operation. */
  get watchedKeyCount(): number {
    return this.watchers.size;
  }

  /**
   * Completes `operation` now if it can, else watches it under `keys` and
   * starts its timer. Returns true if it completed during this call.
   */
  tryCompleteElseWatch(operation: T, keys: readonly string[]): boolean {
    if (keys.length === 0) throw new Error(`${this.name}: a delayed operation needs at least one key`);
    if (operation.tryComplete()) return true;
    if (this.closed || this.waiting >= this.options.operationsMax) return operation.forceComplete();
    operation.watchKeys = keys;
    operation.onDone = (done) => this.unwatch(done as T);
    for (const key of keys) {
      let set = this.watchers.get(key);
      if (set === undefined) this.watchers.set(key, (set = new Set()));
      set.add(operation);
    }
    this.waiting++;
    // Something may have happened between the first check and the watch (an
    // append finishing during an await); check once more before sleeping.
    if (operation.tryComplete()) return true;
    operation.startTimer(this.timers);
    return operation.isCompleted;
  }

  /** Tries to complete every operation watched under `key`; returns how many completed. */
  checkAndComplete(key: string): number {
    const set = this.watchers.get(key);
    if (set === undefined) return 0;
    let completed = 0;
    for (const operation of [...set]) {
      if (!operation.isCompleted && operation.tryComplete()) completed++;
    }
    return completed;
  }

  /** Completes everything still waiting; later operations complete at once (broker shutdown). */
  shutdown(): void {
    this.closed = true;
    const all = new Set<T>();
    for (const set of this.watchers.values()) for (const operation of set) all.add(operation);
    for (const operation of all) operation.forceComplete();
    if (this.waiting !== 0 || this.watchers.size !== 0) throw new Error(`${this.name}: operations left after shutdown`);
  }

  private unwatch(operation: T): void {
    for (const key of operation.watchKeys) {
      const set = this.watchers.get(key);
      if (set === undefined) continue;
      set.delete(operation);
      if (set.size === 0) this.watchers.delete(key);
    }
    operation.watchKeys = [];
    operation.onDone = null;
    this.waiting--;
  }
}
