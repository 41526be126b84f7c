/**
 * Throttler: keeps the cleaner's read plus write rate at or below
 * log.cleaner.io.max.bytes.per.second on average, as Kafka's Throttler does:
 * bytes are counted over check periods, and a period that ran too fast is
 * followed by a sleep long enough to bring its rate down to the limit.
 */
import type { Clock, Timers } from '../../io/clock.js';

/** Kafka's Throttler check interval. */
const CHECK_INTERVAL_MS = 300;

export class Throttler {
  private periodStartMs: number;
  private observedBytes = 0;

  constructor(
    private readonly bytesPerSecondMax: number,
    private readonly env: { clock: Clock; timers: Timers },
  ) {
    this.periodStartMs = env.clock.monotonicMs();
  }

  async maybeThrottle(bytes: number): Promise<void> {
    if (!Number.isFinite(this.bytesPerSecondMax)) return;
    this.observedBytes += bytes;
    const elapsedMs = this.env.clock.monotonicMs() - this.periodStartMs;
    if (elapsedMs < CHECK_INTERVAL_MS) return;
    const sleepMs = (this.observedBytes * 1000) / this.bytesPerSecondMax - elapsedMs;
    if (sleepMs > 0) await new Promise<void>((resolve) => this.env.timers.schedule(Math.round(sleepMs), resolve));
    this.periodStartMs = this.env.clock.monotonicMs();
    this.observedBytes = 0;
  }
}
