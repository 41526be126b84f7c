/**
 * A host's wall clock set off from true time, as NTP leaves real machines:
 * `nowMs()` (record timestamps, LogAppendTime, retention, anything stored
 * and read back on another host) is true time plus a fixed offset plus a
 * drift that grows with elapsed time, while `monotonicMs()` (timeouts,
 * sessions, latency) stays the shared true clock, as a process's monotonic
 * clock does not step with NTP. A drift above -1e6 ppm keeps `nowMs()` from
 * going backwards, so a skewed clock is never stepped back: that is a
 * separate fault, not simulated.
 */
import type { Clock } from '../../src/io/clock.js';
import type { Random } from '../../src/io/random.js';

export interface ClockSkew {
  /** Milliseconds this host's wall clock runs ahead of true time at the start (negative: behind). */
  offsetMs: number;
  /** How fast the offset grows, in parts per million of elapsed time (negative: the clock runs slow). */
  driftPpm: number;
}

export class SkewedClock implements Clock {
  private readonly originMs: number;

  constructor(
    private readonly base: Clock,
    readonly skew: ClockSkew,
  ) {
    if (!(skew.driftPpm > -1_000_000)) throw new RangeError(`drift ${skew.driftPpm} ppm would stop or reverse the clock`);
    this.originMs = base.monotonicMs();
  }

  nowMs(): number {
    const elapsedMs = this.base.monotonicMs() - this.originMs;
    return Math.floor(this.base.nowMs() + this.skew.offsetMs + (elapsedMs * this.skew.driftPpm) / 1_000_000);
  }

  monotonicMs(): number {
    return this.base.monotonicMs();
  }
}

/** A skew drawn uniformly: an offset in [-maxOffsetMs, maxOffsetMs] and a drift in [-maxDriftPpm, maxDriftPpm]. */
export function drawSkew(random: Random, maxOffsetMs: number, maxDriftPpm: number): ClockSkew {
  const offsetMs = maxOffsetMs === 0 ? 0 : random.nextInt(2 * maxOffsetMs + 1) - maxOffsetMs;
  const driftPpm = maxDriftPpm === 0 ? 0 : random.nextInt(2 * maxDriftPpm + 1) - maxDriftPpm;
  return { offsetMs, driftPpm };
}
