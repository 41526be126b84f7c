/**
 * The controller channel over Kafka's wire (Kafka's
 * NodeToControllerChannelManager with its ControllerNodeProvider), for a
 * node that does not run the active controller itself.
 *
 * A node that follows the metadata log knows the Raft leader, and so the
 * active controller among the static voters: it connects there directly,
 * as Kafka's RaftControllerNodeProvider does. Otherwise candidates are the
 * controllers of controller.quorum.voters
 * (`id@host:port`) or, with KIP-853's dynamic quorum,
 * controller.quorum.bootstrap.servers (`host:port`). The active controller
 * is found by asking a candidate (DescribeCluster for controller endpoints,
 * KIP-919: the answer names the active controller and its endpoint); a
 * candidate that cannot be reached or names no active controller passes
 * the question to the next one. Requests then go to the active controller
 * over one Spool client connection (src/client/connection.ts). An answer of
 * NOT_CONTROLLER, or a lost connection, means the controller moved: the
 * channel forgets it, discovers the active one again and resends, pausing
 * between tries, until request.timeout.ms has passed (a quorum electing a
 * new leader answers no one meanwhile); then the last NOT_CONTROLLER answer
 * goes back to the caller (who retries later), or ControllerUnreachableError
 * when no controller answered at all.
 *
 * Following the Raft leader, the channel also leaves a controller the
 * quorum moved away from while a request waits on it: a controller cut off
 * by a network partition answers nothing, and a heartbeat waiting for it
 * until request.timeout.ms would outlast the broker's session at the new
 * active controller, which would then fence every broker (found by the
 * partition fault of test/fault/ducktape-oracle.test.ts).
 */
import type { Env } from '../io/env.js';
import { BrokerConnection } from '../client/connection.js';
import { KafkaError } from '../client/errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { DescribeCluster } from '../protocol/schemas/60-describe-cluster.js';
import { ControllerUnreachableError, type ControllerChannel } from './controller-channel.js';

/** The pause before a request that found no active controller tries again (Kafka's reconnect.backoff.ms default). */
const RETRY_BACKOFF_MS = 50;
/** How often a request waiting on a controller checks that the Raft leader is still that controller. */
const LEADER_CHECK_MS = 100;
/** DescribeCluster's endpointType for controllers (KIP-919). */
const CONTROLLER_ENDPOINTS = 2;

export interface ControllerAddress {
  host: string;
  port: number;
}

export interface RpcControllerChannelOptions {
  nodeId: number;
  env: Env;
  /** Where to look for the active controller, in order. */
  candidates: readonly ControllerAddress[];
  /** request.timeout.ms of the connection to the controller. */
  requestTimeoutMs: number;
  /**
   * Where the active controller is, as this node's own Raft client knows it
   * (the leader among the static voters, Kafka's RaftControllerNodeProvider),
   * or null while it knows no leader. When given, it replaces asking the
   * candidates.
   */
  activeController?: () => ControllerAddress | null;
}

/** The controllers named by controller.quorum.voters (`id@host:port`) or controller.quorum.bootstrap.servers (`host:port`). */
export function controllerCandidates(config: { list(name: string): string[] }): ControllerAddress[] {
  const voters = config.list('controller.quorum.voters').map((entry) => entry.slice(entry.indexOf('@') + 1));
  const entries = voters.length > 0 ? voters : config.list('controller.quorum.bootstrap.servers');
  return entries.map((entry) => {
    const colon = entry.lastIndexOf(':');
    return { host: entry.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(entry.slice(colon + 1)) };
  });
}

/** True when the controller answered NOT_CONTROLLER (at the top, or for every entry of a per-resource answer). */
function isNotController(response: Record<string, unknown>): boolean {
  if (response.errorCode === ErrorCode.NOT_CONTROLLER) return true;
  for (const value of Object.values(response)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    if (value.every((entry: { errorCode?: unknown }) => entry?.errorCode === ErrorCode.NOT_CONTROLLER)) return true;
  }
  return false;
}

export class RpcControllerChannel implements ControllerChannel {
  private active: BrokerConnection | null = null;
  /** Where `active` is connected, when it was chosen as the Raft leader. */
  private activeLeader: ControllerAddress | null = null;
  private nextCandidate = 0;
  private closed = false;
  /** The discovery of the active controller under way, which concurrent requests wait for. */
  private discovering: Promise<BrokerConnection | null> | null = null;

  constructor(private readonly options: RpcControllerChannelOptions) {
    if (options.candidates.length === 0) throw new Error('a node without a controller role needs controller.quorum.voters or controller.quorum.bootstrap.servers');
  }

  async send<A extends ApiDef>(api: A, request: Partial<RequestOf<A>>, options: { version?: number } = {}): Promise<ResponseOf<A>> {
    let last: ResponseOf<A> | null = null;
    const { clock } = this.options.env;
    const deadlineMs = clock.monotonicMs() + this.options.requestTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0 && !(await this.mayRetry(deadlineMs))) break;
      const connection = await this.activeController();
      if (connection === null) continue;
      let response: ResponseOf<A>;
      const watch = this.leaveWhenLeaderMoves(connection);
      try {
        response = await connection.send(api, request, options.version === undefined ? {} : { version: options.version });
      } catch (error) {
        if (!(error instanceof KafkaError)) throw error;
        this.forget(connection);
        continue;
      } finally {
        watch.cancel();
      }
      if (!isNotController(response as Record<string, unknown>)) return response;
      last = response;
      this.forget(connection);
    }
    if (last !== null) return last;
    throw new ControllerUnreachableError(`node ${this.options.nodeId}: no controller answered ${api.name}`);
  }

  /**
   * Whether to try again: a request waits for an active controller up to
   * request.timeout.ms, as Kafka's channel queues it while the quorum elects
   * one, pausing RETRY_BACKOFF_MS between tries.
   */
  private async mayRetry(deadlineMs: number): Promise<boolean> {
    if (this.closed) return false;
    if (this.options.env.clock.monotonicMs() >= deadlineMs) return false;
    await new Promise<void>((resolve) => this.options.env.timers.schedule(RETRY_BACKOFF_MS, resolve));
    return !this.closed;
  }

  close(): void {
    this.closed = true;
    this.active?.destroy();
    this.active = null;
  }

  /**
   * The connection to the active controller, discovered when not known;
   * null when no candidate could name one. Concurrent callers share one
   * discovery: each opening its own, all but the last kept were never
   * closed, and held the stopped node's process open.
   */
  private activeController(): Promise<BrokerConnection | null> {
    if (this.closed) return Promise.reject(new ControllerUnreachableError(`node ${this.options.nodeId}: the controller channel is closed`));
    if (this.active !== null && !this.active.closed && !this.leaderMovedFrom(this.active)) return Promise.resolve(this.active);
    if (this.discovering === null) {
      this.discovering = this.discoverActiveController().finally(() => {
        this.discovering = null;
      });
    }
    return this.discovering;
  }

  private async discoverActiveController(): Promise<BrokerConnection | null> {
    if (this.active !== null) this.forget(this.active);
    if (this.options.activeController !== undefined) return this.connectToRaftLeader(this.options.activeController());
    for (let tried = 0; tried < this.options.candidates.length; tried++) {
      const candidate = this.options.candidates[this.nextCandidate]!;
      this.nextCandidate = (this.nextCandidate + 1) % this.options.candidates.length;
      const found = await this.askForActive(candidate);
      if (found !== null) {
        this.active = this.keptUnlessClosed(found);
        return found;
      }
    }
    return null;
  }

  private async connectToRaftLeader(leader: ControllerAddress | null): Promise<BrokerConnection | null> {
    if (leader === null) return null;
    try {
      this.active = await this.connect(leader);
      this.activeLeader = leader;
      return this.active;
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      return null;
    }
  }

  /** Connects to the active controller `candidate` names (itself, or another), or null. */
  private async askForActive(candidate: ControllerAddress): Promise<BrokerConnection | null> {
    let asked: BrokerConnection | null = null;
    try {
      asked = await this.connect(candidate);
      const cluster = await asked.send(DescribeCluster, { endpointType: CONTROLLER_ENDPOINTS, includeClusterAuthorizedOperations: false });
      const leader = cluster.errorCode === ErrorCode.NONE ? cluster.brokers.find((b) => b.brokerId === cluster.controllerId) : undefined;
      if (leader === undefined) return this.discard(asked);
      if (leader.host === candidate.host && leader.port === candidate.port) return asked;
      this.discard(asked);
      return await this.connect({ host: leader.host, port: leader.port });
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      return asked === null ? null : this.discard(asked);
    }
  }

  /**
   * A connection opened while the channel closed is closed at once: kept, it
   * would hold the stopping node's process open for ever (found by the
   * clean bounce of test/fault/ducktape-oracle.test.ts, a heartbeat
   * reconnecting to a new Raft leader during the node's shutdown).
   */
  private async connect(address: ControllerAddress): Promise<BrokerConnection> {
    const connection = await BrokerConnection.connect({
      host: address.host,
      port: address.port,
      env: this.options.env,
      clientId: `spool-node-${this.options.nodeId}-to-controller`,
      requestTimeoutMs: this.options.requestTimeoutMs,
    });
    if (!this.closed) return connection;
    connection.destroy();
    throw new ControllerUnreachableError(`node ${this.options.nodeId}: the controller channel is closed`);
  }

  /**
   * A connection found while close() ran (the channel was asking a
   * candidate, a DescribeCluster in flight) is closed, not kept: kept, it
   * held the stopped node's process open (found by the three-broker
   * transactional bounce, test/interop/clients/txn-bounce.test.ts).
   */
  private keptUnlessClosed(connection: BrokerConnection): BrokerConnection {
    if (!this.closed) return connection;
    connection.destroy();
    throw new ControllerUnreachableError(`node ${this.options.nodeId}: the controller channel is closed`);
  }

  private discard(connection: BrokerConnection): null {
    connection.destroy();
    return null;
  }

  private forget(connection: BrokerConnection): void {
    connection.destroy();
    if (this.active !== connection) return;
    this.active = null;
    this.activeLeader = null;
  }

  /** True when `connection` went to the Raft leader and the node's Raft client now knows another leader. */
  private leaderMovedFrom(connection: BrokerConnection): boolean {
    if (connection !== this.active || this.activeLeader === null || this.options.activeController === undefined) return false;
    const leader = this.options.activeController();
    return leader !== null && (leader.host !== this.activeLeader.host || leader.port !== this.activeLeader.port);
  }

  /** Checks every LEADER_CHECK_MS while a request waits on `connection`; fails it over (destroys the connection) when the leader moved. */
  private leaveWhenLeaderMoves(connection: BrokerConnection): { cancel(): void } {
    if (this.options.activeController === undefined) return { cancel: () => undefined };
    const { timers } = this.options.env;
    const check = (): void => {
      if (this.leaderMovedFrom(connection)) this.forget(connection);
      else if (!connection.closed) timer = timers.schedule(LEADER_CHECK_MS, check);
    };
    let timer = timers.schedule(LEADER_CHECK_MS, check);
    return { cancel: () => timer.cancel() };
  }
}
