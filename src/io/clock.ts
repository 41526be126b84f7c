/**
 * Time and timers, behind an interface so a simulator can drive them.
 * Nothing outside src/io reads the wall clock or schedules a timer directly.
 *
 * A delay is finite and at least 0 in both implementations (asserted): a
 * caller with nothing to wait for (Kafka's Long.MAX_VALUE, "never") does not
 * schedule. Delays may exceed Node's own timeout limit; see TIMEOUT_MS_MAX.
 */
import assert from 'node:assert/strict';

export interface Clock {
  /** Wall-clock milliseconds since the Unix epoch (record timestamps, retention). */
  nowMs(): number;
  /** Monotonic milliseconds with sub-millisecond precision (timeouts, latency). */
  monotonicMs(): number;
}

export interface TimerHandle {
  cancel(): void;
}

export interface Timers {
  /** Runs `callback` once after `delayMs`. The timer does not keep the process alive. */
  schedule(delayMs: number, callback: () => void): TimerHandle;
  /** Runs `callback` on the next turn of the event loop, after pending I/O. */
  defer(callback: () => void): void;
}

export const realClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/**
 * The longest delay Node's setTimeout honours (a signed 32-bit millisecond
 * count); a longer one fires after 1 ms. Configs such as flush.ms,
 * file.delete.delay.ms and log.retention.check.interval.ms are longs, so the
 * real timers wait in steps of at most this long.
 */
const TIMEOUT_MS_MAX = 2 ** 31 - 1;

function assertDelay(delayMs: number): void {
  assert.ok(Number.isFinite(delayMs), `timer delay ${delayMs} is not finite`);
  assert.ok(delayMs >= 0, `timer delay ${delayMs} is negative`);
}

export const realTimers: Timers = {
  schedule(delayMs, callback) {
    assertDelay(delayMs);
    let handle: ReturnType<typeof setTimeout>;
    const wait = (remainingMs: number): void => {
      const stepMs = Math.min(remainingMs, TIMEOUT_MS_MAX);
      handle = setTimeout(() => (stepMs === remainingMs ? callback() : wait(remainingMs - stepMs)), stepMs);
      handle.unref();
    };
    wait(delayMs);
    return { cancel: () => clearTimeout(handle) };
  },
  defer(callback) {
    setImmediate(callback);
  },
};

/**
 * A clock and timer queue that only move when told to: tests and the
 * simulator advance time explicitly, so a timeout fires at an exact step.
 */
export class ManualClock implements Clock, Timers {
  private nowValueMs: number;
  private sequence = 0;
  private readonly pending = new Map<number, { dueMs: number; callback: () => void }>();

  constructor(startMs = 1_700_000_000_000) {
    this.nowValueMs = startMs;
  }

  nowMs(): number {
    return this.nowValueMs;
  }

  monotonicMs(): number {
    return this.nowValueMs;
  }

  schedule(delayMs: number, callback: () => void): TimerHandle {
    assertDelay(delayMs);
    const id = ++this.sequence;
    this.pending.set(id, { dueMs: this.nowValueMs + delayMs, callback });
    return { cancel: () => this.pending.delete(id) };
  }

  defer(callback: () => void): void {
    this.schedule(0, callback);
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in due order. */
  advance(ms: number): void {
    const targetMs = this.nowValueMs + ms;
    for (;;) {
      let nextId = -1;
      let nextDueMs = Infinity;
      for (const [id, timer] of this.pending) {
        if (timer.dueMs <= targetMs && timer.dueMs < nextDueMs) {
          nextDueMs = timer.dueMs;
          nextId = id;
        }
      }
      if (nextId < 0) break;
      const timer = this.pending.get(nextId)!;
      this.pending.delete(nextId);
      this.nowValueMs = timer.dueMs;
      timer.callback();
    }
    this.nowValueMs = targetMs;
  }

  /** When the next timer falls due, or null when none is pending. */
  nextDueMs(): number | null {
    let nextDueMs: number | null = null;
    for (const timer of this.pending.values()) if (nextDueMs === null || timer.dueMs < nextDueMs) nextDueMs = timer.dueMs;
    return nextDueMs;
  }

  get pendingCount(): number {
    return this.pending.size;
  }
}
