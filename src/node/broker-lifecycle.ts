/**
 * A broker's side of its lifecycle with the active controller (Kafka's
 * BrokerLifecycleManager): register, heartbeat, get unfenced, shut down in
 * a controlled way.
 *
 *   STARTING     registered, heartbeating with wantFence until the
 *                controller says the broker has caught up with the
 *                metadata log up to its registration (whenCaughtUp);
 *   RECOVERY     the broker loads its logs and publishes metadata, then
 *                calls setReadyToUnfence; heartbeats ask to be unfenced;
 *   RUNNING      unfenced (whenUnfenced), a heartbeat every
 *                broker.heartbeat.interval.ms;
 *   PENDING_CONTROLLED_SHUTDOWN  heartbeats with wantShutDown until the
 *                controller answers shouldShutDown (its leaderships have
 *                moved and every other broker has seen it);
 *   SHUTTING_DOWN  nothing more is sent.
 *
 * One request is in flight at a time, through the controller channel. A
 * failed request (an error code such as NOT_CONTROLLER or
 * DUPLICATE_BROKER_REGISTRATION, or no controller reachable) is retried
 * after Kafka's exponential backoff: 100 ms doubling up to half of
 * broker.session.timeout.ms. Any other failure of the channel (the node's
 * own controller failed) is fatal, as Kafka's fault handler makes it: the
 * lifecycle stops and whoever waits on it learns so.
 * Progress is sent at once (after registering, once ready to unfence, the
 * heartbeat after the first controlled-shutdown answer) rather than after
 * Kafka's 10 ms and 50 ms pauses, so a node on a simulated clock starts
 * and stops without clock ticks; a broker still catching up asks again
 * every 10 ms, as Kafka's does.
 */
import type { TimerHandle, Timers } from '../io/clock.js';
import type { Random } from '../io/random.js';
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { BrokerHeartbeat } from '../protocol/schemas/63-broker-heartbeat.js';
import { BrokerRegistration } from '../protocol/schemas/62-broker-registration.js';
import type { ResponseOf } from '../protocol/schema.js';
import type { Logger } from '../common/logger.js';
import type { BrokerEndpoint } from '../metadata/image.js';
import { supportedFeatureRanges } from '../metadata/features.js';
import { ControllerUnreachableError, type ControllerChannel } from './controller-channel.js';

export interface BrokerRegistrationData {
  brokerId: number;
  clusterId: string;
  incarnationId: string;
  listeners: readonly BrokerEndpoint[];
  rack: string | null;
  logDirs: readonly string[];
  /** The epoch the last clean shutdown recorded in every log directory, -1 after an unclean one (KIP-966). */
  previousBrokerEpoch?: number;
}

export const BrokerState = {
  NOT_RUNNING: 'NOT_RUNNING',
  STARTING: 'STARTING',
  RECOVERY: 'RECOVERY',
  RUNNING: 'RUNNING',
  PENDING_CONTROLLED_SHUTDOWN: 'PENDING_CONTROLLED_SHUTDOWN',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
} as const;
export type BrokerState = (typeof BrokerState)[keyof typeof BrokerState];

export interface BrokerLifecycleOptions {
  channel: ControllerChannel;
  timers: Timers;
  random: Random;
  logger: Logger;
  /** broker.heartbeat.interval.ms */
  heartbeatIntervalMs: number;
  /** broker.session.timeout.ms (the retry backoff stays under half of it) */
  sessionTimeoutMs: number;
  /** The offset of the last metadata record this broker has applied. */
  metadataOffset: () => number;
}

/** Kafka's broker waits five minutes for the controller to approve its controlled shutdown, then shuts down anyway. */
export const CONTROLLED_SHUTDOWN_APPROVAL_TIMEOUT_MS = 5 * 60_000;

/** How soon a broker that has not caught up with the metadata log heartbeats again (Kafka's STARTING pace). */
const CATCH_UP_HEARTBEAT_INTERVAL_MS = 10;

/** Kafka's resendExponentialBackoff: 100 ms, doubling, 2% jitter. */
const RETRY_BACKOFF_INITIAL_MS = 100;
const RETRY_BACKOFF_JITTER = 0.02;

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export class BrokerLifecycleManager {
  private stateValue: BrokerState = BrokerState.NOT_RUNNING;
  private registration: BrokerRegistrationData | null = null;
  private brokerEpochValue = -1;
  private readyToUnfence = false;
  private failedAttempts = 0;
  private inFlight = false;
  private nextCommunication: TimerHandle | null = null;
  /** A request asked for while one was in flight: sent as soon as the answer comes. */
  private sendWhenAnswered = false;
  private gotControlledShutdownResponse = false;
  private readonly caughtUp = deferred();
  private readonly unfenced = deferred();
  private readonly controlledShutdown = deferred();

  constructor(private readonly options: BrokerLifecycleOptions) {}

  get state(): BrokerState {
    return this.stateValue;
  }

  /** The epoch of this incarnation's registration, -1 before it. */
  get brokerEpoch(): number {
    return this.brokerEpochValue;
  }

  /** Resolves once the controller says this broker has applied the metadata log up to its registration. */
  whenCaughtUp(): Promise<void> {
    return this.caughtUp.promise;
  }

  /** Resolves once the controller has unfenced this broker. */
  whenUnfenced(): Promise<void> {
    return this.unfenced.promise;
  }

  start(registration: BrokerRegistrationData): void {
    if (this.stateValue !== BrokerState.NOT_RUNNING) throw new Error(`broker lifecycle already ${this.stateValue}`);
    this.registration = registration;
    this.stateValue = BrokerState.STARTING;
    this.communicateNow();
  }

  /** The broker has loaded what it needs: heartbeats now ask to be unfenced. */
  setReadyToUnfence(): void {
    this.readyToUnfence = true;
    this.communicateNow();
  }

  /**
   * Asks the controller to move this broker's leaderships away and resolves
   * when it answers shouldShutDown (at once when the broker never registered).
   */
  beginControlledShutdown(): Promise<void> {
    if (this.stateValue === BrokerState.NOT_RUNNING || this.brokerEpochValue < 0) {
      this.finish();
    } else if (this.stateValue !== BrokerState.SHUTTING_DOWN && this.stateValue !== BrokerState.PENDING_CONTROLLED_SHUTDOWN) {
      this.options.logger.info(`broker ${this.registration!.brokerId}: beginning controlled shutdown`);
      this.stateValue = BrokerState.PENDING_CONTROLLED_SHUTDOWN;
      this.communicateNow();
      // A controller that never answers (the quorum is gone) must not keep the process from exiting.
      const timeout = this.options.timers.schedule(CONTROLLED_SHUTDOWN_APPROVAL_TIMEOUT_MS, () => {
        if (this.stateValue !== BrokerState.PENDING_CONTROLLED_SHUTDOWN) return;
        this.options.logger.error(`broker ${this.registration!.brokerId}: timed out waiting for the controller to approve controlled shutdown`);
        this.finish();
      });
      void this.controlledShutdown.promise.then(() => timeout.cancel());
    }
    return this.controlledShutdown.promise;
  }

  /** Stops all communication; waiting starters learn the broker is shutting down. */
  close(): void {
    this.finish();
  }

  private finish(): void {
    this.stateValue = BrokerState.SHUTTING_DOWN;
    this.nextCommunication?.cancel();
    this.nextCommunication = null;
    const stopped = new Error('the broker is shutting down');
    this.caughtUp.reject(stopped);
    this.unfenced.reject(stopped);
    this.controlledShutdown.resolve();
  }

  // ---- communication

  private communicateNow(): void {
    if (this.inFlight) {
      this.sendWhenAnswered = true;
      return;
    }
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    this.nextCommunication?.cancel();
    this.nextCommunication = null;
    if (this.stateValue === BrokerState.SHUTTING_DOWN) return;
    if (delayMs === 0) {
      void this.communicate();
      return;
    }
    this.nextCommunication = this.options.timers.schedule(delayMs, () => {
      this.nextCommunication = null;
      void this.communicate();
    });
  }

  private async communicate(): Promise<void> {
    if (this.inFlight || this.stateValue === BrokerState.SHUTTING_DOWN) return;
    this.inFlight = true;
    let nextDelayMs: number;
    try {
      nextDelayMs = this.brokerEpochValue < 0 ? await this.register() : await this.heartbeat();
    } catch (error) {
      if (!(error instanceof ControllerUnreachableError)) {
        this.options.logger.error(`broker lifecycle: the controller failed, the broker stops talking to it: ${String(error)}`);
        this.inFlight = false;
        this.finish();
        return;
      }
      this.options.logger.warn(`broker lifecycle: no controller answered: ${error.message}`);
      nextDelayMs = this.failureBackoffMs();
    }
    this.inFlight = false;
    if (this.sendWhenAnswered) {
      this.sendWhenAnswered = false;
      nextDelayMs = 0;
    }
    this.schedule(nextDelayMs);
  }

  /** Sends the registration; returns the delay before the next communication. */
  private async register(): Promise<number> {
    const registration = this.registration!;
    const response = await this.options.channel.send(BrokerRegistration, {
      ...registration,
      listeners: [...registration.listeners],
      logDirs: [...registration.logDirs],
      features: supportedFeatureRanges(),
      isMigratingZkBroker: false,
      previousBrokerEpoch: registration.previousBrokerEpoch ?? -1,
    });
    if (this.stateValue === BrokerState.SHUTTING_DOWN) return 0;
    if (response.errorCode !== ErrorCode.NONE) {
      this.options.logger.info(`broker ${registration.brokerId}: registration failed with ${errorInfo(response.errorCode).name}; retrying`);
      return this.failureBackoffMs();
    }
    this.failedAttempts = 0;
    this.brokerEpochValue = response.brokerEpoch;
    this.options.logger.info(`broker ${registration.brokerId}: registered with broker epoch ${response.brokerEpoch}`);
    return 0;
  }

  /** Sends a heartbeat and moves through the states on its answer; returns the delay before the next one. */
  private async heartbeat(): Promise<number> {
    const shuttingDown = this.stateValue === BrokerState.PENDING_CONTROLLED_SHUTDOWN;
    const response = await this.options.channel.send(BrokerHeartbeat, {
      brokerId: this.registration!.brokerId,
      brokerEpoch: this.brokerEpochValue,
      currentMetadataOffset: this.options.metadataOffset(),
      wantFence: !this.readyToUnfence && !shuttingDown,
      wantShutDown: shuttingDown,
    });
    if (response.errorCode !== ErrorCode.NONE) {
      this.options.logger.warn(`broker ${this.registration!.brokerId}: heartbeat failed with ${errorInfo(response.errorCode).name}`);
      return this.failureBackoffMs();
    }
    this.failedAttempts = 0;
    return this.onHeartbeatResponse(response);
  }

  private onHeartbeatResponse(response: ResponseOf<typeof BrokerHeartbeat>): number {
    switch (this.stateValue) {
      case BrokerState.STARTING:
        if (!response.isCaughtUp) return CATCH_UP_HEARTBEAT_INTERVAL_MS;
        this.stateValue = BrokerState.RECOVERY;
        this.caughtUp.resolve();
        return this.readyToUnfence ? 0 : this.options.heartbeatIntervalMs;
      case BrokerState.RECOVERY:
        if (response.isFenced) return this.options.heartbeatIntervalMs;
        this.stateValue = BrokerState.RUNNING;
        this.unfenced.resolve();
        return this.options.heartbeatIntervalMs;
      case BrokerState.PENDING_CONTROLLED_SHUTDOWN:
        if (!response.shouldShutDown) {
          // The first answer usually comes with the leaderships moved: ask again at once, then at the usual pace.
          const firstAnswer = !this.gotControlledShutdownResponse;
          this.gotControlledShutdownResponse = true;
          return firstAnswer ? 0 : this.options.heartbeatIntervalMs;
        }
        this.options.logger.info(`broker ${this.registration!.brokerId}: the controller has let this broker shut down`);
        this.finish();
        return 0;
      default:
        return this.options.heartbeatIntervalMs;
    }
  }

  private failureBackoffMs(): number {
    const maxMs = this.options.sessionTimeoutMs / 2;
    const baseMs = Math.min(RETRY_BACKOFF_INITIAL_MS * 2 ** this.failedAttempts, maxMs);
    this.failedAttempts++;
    const jitter = 1 + RETRY_BACKOFF_JITTER * (2 * this.options.random.nextFloat() - 1);
    return Math.round(Math.min(baseMs * jitter, maxMs));
  }
}
