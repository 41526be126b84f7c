/**
 * A host's wall clock set off from true time, as NTP leaves real machines:
 * `nowMs()` (record timestamps, LogAppendTime, retention, anything stored
 * and read back on another host) is true time plus a fixed offset plus a
 * drift that grows with elapsed time, while `monotonicMs()` (timeouts,
 * sessions, latency) stays the shared true clock, as a process's monotonic
 * clock does not step with NTP. A drift above -1e6 ppm keeps `nowMs()` from
 * going backwards between steps; `step()` is the other thing NTP does, a
 * jump of the wall clock forward or back (ntpd steps past 128 ms of
 * offset), which the simulator injects as a fault mid-run.
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
  /** The sum of the steps so far (negative: stepped back overall). */
  private steppedMs = 0;

  constructor(
    private readonly base: Clock,
    readonly skew: ClockSkew,
  ) {
    if (!(skew.driftPpm > -1_000_000)) throw new RangeError(`drift ${skew.driftPpm} ppm would stop or reverse the clock`);
    this.originMs = base.monotonicMs();
  }

  nowMs(): number {
    const elapsedMs = this.base.monotonicMs() - this.originMs;
    return Math.floor(this.base.nowMs() + this.skew.offsetMs + this.steppedMs + (elapsedMs * this.skew.driftPpm) / 1_000_000);
  }

  /** An NTP step: the wall clock jumps by `deltaMs` (back when negative) at once; monotonic time does not move. */
  step(deltaMs: number): void {
    if (!Number.isSafeInteger(deltaMs)) throw new RangeError(`a clock step of ${deltaMs} ms`);
    this.steppedMs += deltaMs;
  }

  /** How far the steps so far have moved the wall clock. */
  get stepsMs(): number {
    return this.steppedMs;
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

/** A step of at least NTP's 128 ms step threshold and at most `maxMs`, forward or back with equal odds. */
export function drawStep(random: Random, maxMs: number): number {
  const NTP_STEP_THRESHOLD_MS = 128;
  if (!(maxMs >= NTP_STEP_THRESHOLD_MS)) throw new RangeError(`a clock step of at most ${maxMs} ms is below NTP's step threshold`);
  const magnitudeMs = NTP_STEP_THRESHOLD_MS + random.nextInt(maxMs - NTP_STEP_THRESHOLD_MS + 1);
  return random.nextInt(2) === 0 ? magnitudeMs : -magnitudeMs;
}
