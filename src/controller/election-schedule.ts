/**
 * When the active controller runs a periodic election pass (Kafka's
 * QuorumController ImbalanceSchedule): the preferred-leader balancing of
 * auto.leader.rebalance.enable (maybeScheduleNextBalancePartitionLeaders,
 * while some partition is not led by its preferred replica, every
 * leader.imbalance.check.interval.seconds) and the unclean elections of
 * leaderless partitions (maybeScheduleNextElectUncleanLeaders, while some
 * partition has no leader, every unclean.leader.election.interval.ms). A
 * pass is scheduled the interval after the previous one finished, or 10 ms
 * after one that stopped at MAX_ELECTIONS_PER_IMBALANCE. Never more than
 * one pass of a kind is scheduled at a time.
 *
 *   DEFERRED ──imbalanced──▶ SCHEDULED (interval) ──pass done──▶ DEFERRED
 *   IMMEDIATELY ──imbalanced──▶ SCHEDULED (10 ms) ──pass at limit──▶ IMMEDIATELY
 */
import type { TimerHandle, Timers } from '../io/clock.js';

/** Kafka's delay for a pass rescheduled at once (so other deferred events get a turn). */
const IMMEDIATE_DELAY_MS = 10;

const ImbalanceSchedule = { DEFERRED: 'DEFERRED', SCHEDULED: 'SCHEDULED', IMMEDIATELY: 'IMMEDIATELY' } as const;
type ImbalanceSchedule = (typeof ImbalanceSchedule)[keyof typeof ImbalanceSchedule];

export class ElectionSchedule {
  private state: ImbalanceSchedule = ImbalanceSchedule.DEFERRED;
  private timer: TimerHandle | null = null;

  /**
   * `checkIntervalMs` null: never scheduled (auto.leader.rebalance.enable
   * false). `runPass` resolves with whether the pass stopped at
   * its limit.
   */
  constructor(
    private readonly timers: Timers,
    private readonly options: { checkIntervalMs: number | null; imbalanced: () => boolean; runPass: () => Promise<boolean> },
  ) {}

  /** After every commit on the active controller, and after each pass: schedules a pass if one is due and none is scheduled. */
  maybeSchedule(): void {
    const intervalMs = this.options.checkIntervalMs;
    if (this.state === ImbalanceSchedule.SCHEDULED || intervalMs === null || !this.options.imbalanced()) return;
    const delayMs = this.state === ImbalanceSchedule.DEFERRED ? intervalMs : IMMEDIATE_DELAY_MS;
    this.state = ImbalanceSchedule.SCHEDULED;
    this.timer = this.timers.schedule(delayMs, () => {
      this.timer = null;
      const finished = (more: boolean): void => {
        if (this.state !== ImbalanceSchedule.SCHEDULED) return;
        this.state = more ? ImbalanceSchedule.IMMEDIATELY : ImbalanceSchedule.DEFERRED;
        this.maybeSchedule();
      };
      // A pass that fails (the controller lost its leadership) waits a whole interval, as one that found nothing.
      this.options.runPass().then(finished, () => finished(false));
    });
  }

  /** The controller stopped being active: nothing stays scheduled (Kafka's cancelMaybeBalancePartitionLeaders). */
  cancel(): void {
    this.timer?.cancel();
    this.timer = null;
    this.state = ImbalanceSchedule.DEFERRED;
  }
}
