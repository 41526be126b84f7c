/**
 * The network front: listeners, framing and per-connection request order.
 *
 * Framing: an int32 size then that many bytes. A size above
 * `socket.request.max.bytes` (or negative) closes the connection, as Kafka
 * does. Requests on one connection are handled one at a time in arrival
 * order (Kafka mutes a channel while its request is in flight), so responses
 * leave in order and appends from one producer connection stay ordered.
 * Frames that arrive meanwhile are queued, up to `queued.max.requests` frames
 * and `PIPELINED_REQUEST_BYTES_MAX` bytes; beyond that the socket is paused,
 * so a flooding client is slowed down by TCP rather than held in memory.
 * Connections pass Kafka's connection quotas (connection-quotas.ts) first.
 * Across connections, the requests read and not yet answered hold
 * `queued.max.request.bytes` (request-memory-pool.ts): while that pool is
 * exhausted, no connection starts reading another request.
 *
 * Responses: Kafka mutes a connection until its response is sent, so a
 * client that never reads holds at most one response in the broker. Spool
 * pipelines instead, and bounds what a connection's unsent responses may hold:
 * while more than `pendingResponseBytesMax` bytes wait for the socket, the
 * next queued request is not handled and nothing more is read; both resume
 * once the socket has taken them. A connection's unsent bytes therefore stay
 * below that limit plus one response, however many requests it pipelines.
 * A connection idle for `connections.max.idle.ms` is closed; as in Kafka,
 * a response the client is still taking counts as activity.
 *
 * Client quotas: a handler that throttles its client (Produce, Fetch over
 * their byte rates) has its response sent at once, with throttle_time_ms,
 * and the connection muted for that long, as Kafka does for every version
 * since KIP-219: nothing more is read and no queued request is served
 * until the throttle time has passed.
 *
 * SASL sessions (KIP-368): a SaslHandshake on an authenticated connection
 * whose session has an end starts a re-authentication, served by a fresh
 * authenticator; other requests keep being served in order around it. A
 * request read after the session ended, but that SaslHandshake, closes the
 * connection unanswered, as Kafka's processor does.
 */
import type { Connection, Env, Listener, TimerHandle } from '../io/env.js';
import type { TlsListenOptions } from '../io/net.js';
import { ANONYMOUS_PRINCIPAL, type ListenerSecurity } from '../security/listener-security.js';
import { SaslAuthenticator, type AuthenticationOutcome } from '../security/sasl/authenticator.js';
import { SaslHandshake } from '../protocol/schemas/17-sasl-handshake.js';
import { ConnectionGate, type AdmittedConnection, type ConnectionQuotaConfig } from './connection-quotas.js';
import { decodeRequest, encodeResponse, type DecodedRequest } from '../protocol/apis.js';
import { FrameAssembler } from '../protocol/framing.js';
import { RequestMemoryPool } from './request-memory-pool.js';
import type { RequestHandlerTable } from './request-handler.js';
import type { Logger } from '../common/logger.js';

/**
 * Unsent response bytes past which a connection is neither read nor served
 * until the socket takes them. Kafka needs no such setting (it mutes a
 * connection until its single response is sent); pipelining, Spool bounds a
 * non-reading client's cost to this plus one response.
 */
export const PENDING_RESPONSE_BYTES_MAX = 1024 * 1024;

/**
 * Request bytes a connection may have read ahead of the request in hand
 * before it is no longer read. Kafka reads none ahead (the connection is
 * muted); a little pipelining keeps small requests flowing, and a bound well
 * below `socket.request.max.bytes` keeps one connection from parking 100 MiB.
 */
export const PIPELINED_REQUEST_BYTES_MAX = 1024 * 1024;

/** Told about each request served, for the request metrics (src/insight/request-metrics.ts). */
export interface RequestObserver {
  /**
   * A decoded request was served. `request` is its decoded body, `body` the response before encoding
   * (null when none is sent, as for acks=0, or the connection is closed);
   * `totalTimeMs` runs from when its frame was read off the socket to when
   * the response was handed to it (Kafka's TotalTimeMs).
   */
  requestCompleted(served: { apiKey: number; version: number; request: unknown; body: Record<string, unknown> | null; totalTimeMs: number }): void;
}

export interface SocketServerLimits {
  requestBytesMax: number;
  queuedRequestsMax: number;
  queuedBytesMax: number;
  idleMs: number;
  /** While this many response bytes wait for the socket, neither read nor handle the connection's next request. */
  pendingResponseBytesMax: number;
  /** queued.max.request.bytes: bytes of read, unanswered requests across all connections; -1 or 0 for no bound. */
  requestPoolBytes: number;
  /** max.connections, max.connections.per.ip and their kin. */
  connectionQuotas: ConnectionQuotaConfig;
}

export class SocketServer {
  /** Listeners still open. */
  private readonly listeners: { name: string; listener: Listener }[] = [];
  /** Listeners shut down on their own (a combined node stops its broker listeners before its controller ones). */
  private readonly stoppedListeners = new Set<string>();
  private readonly connections = new Set<ConnectionHandler>();
  private nextConnectionId = 0;
  private stopping = false;
  private readonly gate: ConnectionGate;
  private readonly requestPool: RequestMemoryPool;
  private readonly securityByListener = new Map<string, ListenerSecurity>();
  private readonly connectionCloseListeners: ((connectionId: string) => void)[] = [];
  /** Set by the metrics when enabled; null costs nothing per request. */
  requestObserver: RequestObserver | null = null;

  constructor(
    private readonly env: Env,
    private readonly handlers: RequestHandlerTable,
    private readonly limits: SocketServerLimits,
    private readonly log: Logger,
  ) {
    this.gate = new ConnectionGate(limits.connectionQuotas, log, (name, connection) => this.open(name, connection), () => this.connections);
    this.requestPool = new RequestMemoryPool(limits.requestPoolBytes);
    this.requestPool.onChange((exhausted) => {
      for (const connection of this.connections) {
        if (exhausted) connection.pauseForMemory();
        else connection.maybeResume();
      }
    });
  }

  async listen(name: string, host: string, port: number, security: ListenerSecurity = {}): Promise<Listener> {
    const onAcceptError = (error: Error) => this.log.error(`listener ${name} could not accept a connection: ${error.message}`);
    this.gate.addListener(name);
    this.securityByListener.set(name, security);
    const tls = security.tls === undefined ? {} : { tls: security.tls };
    const listener = await this.env.net.listen({ host, port, onAcceptError, ...tls }, (connection) => {
      if (this.isStopping(name)) connection.destroy();
      else this.gate.offer(name, connection);
    });
    this.listeners.push({ name, listener });
    return listener;
  }

  /** The TLS options a listener serves now (undefined for a listener without TLS). */
  listenerTls(name: string): TlsListenOptions | undefined {
    return this.securityByListener.get(name)?.tls;
  }

  /**
   * Serves `tls` on a TLS listener from its next connection on (Kafka's
   * dynamic keystore update); open connections keep their session.
   */
  setListenerTls(name: string, tls: TlsListenOptions): void {
    const security = this.securityByListener.get(name);
    const listener = this.listeners.find((l) => l.name === name)?.listener;
    if (security?.tls === undefined || listener?.setTlsContext === undefined) throw new Error(`listener ${name} serves no TLS`);
    listener.setTlsContext(tls);
    this.securityByListener.set(name, { ...security, tls });
  }

  private isStopping(name: string): boolean {
    return this.stopping || this.stoppedListeners.has(name);
  }

  private open(name: string, connection: Connection): void {
    if (this.isStopping(name)) {
      connection.destroy();
      return;
    }
    const security = this.securityByListener.get(name) ?? {};
    const authentication = security.transportPrincipal?.(connection) ?? { principal: ANONYMOUS_PRINCIPAL };
    if ('refused' in authentication) {
      this.log.info(`refused a connection on listener ${name} from ${connection.remoteAddress}: ${authentication.refused}`);
      connection.destroy();
      return;
    }
    const id = `${name}-${this.nextConnectionId++}`;
    const handler = new ConnectionHandler({ id, listenerName: name, principal: authentication.principal, security }, connection, this);
    this.connections.add(handler);
    handler.pauseForMemory();
    connection.onClose(() => {
      this.connections.delete(handler);
      for (const listener of this.connectionCloseListeners) listener(id);
    });
  }

  /**
   * Calls `listener` with a connection's id (RequestContext.connectionId)
   * once it closed, for state tied to a connection (share sessions, as
   * Kafka's ConnectionDisconnectListener).
   */
  onConnectionClosed(listener: (connectionId: string) => void): void {
    this.connectionCloseListeners.push(listener);
  }

  /** Stops accepting, lets in-flight requests finish, then closes every connection. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.gate.closeWaiting();
    await this.closeListeners(() => true);
  }

  /** The same for the named listeners only; the others go on serving. */
  async shutdownListeners(names: readonly string[]): Promise<void> {
    for (const name of names) this.stoppedListeners.add(name);
    await this.closeListeners((name) => names.includes(name));
  }

  private async closeListeners(selected: (name: string) => boolean): Promise<void> {
    // A listener's close resolves only once its connections are gone, so drain those first.
    const chosen = this.listeners.filter((l) => selected(l.name));
    for (const one of chosen) this.listeners.splice(this.listeners.indexOf(one), 1);
    const listenersClosed = Promise.all(chosen.map(({ listener }) => listener.close()));
    await Promise.all([...this.connections].filter((connection) => selected(connection.listenerName)).map((connection) => connection.drainAndClose()));
    await listenersClosed;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Requests read and waiting for their connection's turn, across connections (Kafka's RequestQueueSize). */
  get queuedRequestCount(): number {
    let count = 0;
    for (const connection of this.connections) count += connection.queuedRequestCount;
    return count;
  }

  /** Response bytes written but not yet taken by the kernel, across connections (libuv's write queue where known). */
  get unsentResponseBytes(): number {
    let bytes = 0;
    for (const connection of this.connections) bytes += connection.unsentResponseBytes;
    return bytes;
  }

  /** @internal */ get context() {
    return { env: this.env, handlers: this.handlers, limits: this.limits, log: this.log, requestPool: this.requestPool };
  }
}

/** Whether a frame's request header names SaslHandshake (its first int16, the API key). */
const isSaslHandshake = (frame: Buffer): boolean => frame.length >= 2 && frame.readInt16BE(0) === SaslHandshake.key;

class ConnectionHandler implements AdmittedConnection {
  private readonly frames: FrameAssembler;
  private readonly queue: Buffer[] = [];
  /** When each queued frame was read (monotonic ms), kept beside `queue`. */
  private readonly readTimesMs: number[] = [];
  private queuedBytes = 0;
  private processing: Promise<void> | null = null;
  private paused = false;
  private closed = false;
  /** Set when a write found the socket full: a 'drain' follows once it has taken everything. */
  private awaitingDrain = false;
  private drainWaiter: (() => void) | null = null;
  private idleTimer: TimerHandle | null = null;
  /** Throttle time a handler asked for with the request in hand (client quotas); served once its response is sent. */
  private throttleTimeMs = 0;
  private throttled = false;
  /** Ends the mute early: the connection closed or the broker is stopping. */
  private endThrottle: (() => void) | null = null;
  lastActiveMs = 0;
  /** Unsent response bytes at the last idle check (connections.max.idle.ms counts writes as activity). */
  private pendingAtIdleCheck = { pending: 0, queued: 0 };

  readonly id: string;
  readonly listenerName: string;
  /** The authenticated principal (`User:ANONYMOUS` until authentication says otherwise). */
  private principal: string;
  /** On a SASL listener: what the connection must do before anything else is served, then its session (replaced at each re-authentication). */
  private authenticator: SaslAuthenticator | null;
  /** Read by the frame assembler at every frame: sasl.server.max.receive.size until authenticated, then socket.request.max.bytes. */
  private readonly frameLimits: { frameBytesMin: number; frameBytesMax: number };
  private readonly failedAuthenticationDelayMs: number;
  /** sasl.server.max.receive.size: the frame limit while (re-)authenticating. */
  private readonly saslReceiveBytesMax: number;

  constructor(
    identity: { id: string; listenerName: string; principal: string; security: ListenerSecurity },
    readonly connection: Connection,
    private readonly server: SocketServer,
  ) {
    this.id = identity.id;
    this.listenerName = identity.listenerName;
    this.principal = identity.principal;
    const sasl = identity.security.sasl;
    this.authenticator = sasl === undefined ? null : new SaslAuthenticator(sasl, { clock: server.context.env.clock });
    this.failedAuthenticationDelayMs = sasl?.failedAuthenticationDelayMs ?? 0;
    this.saslReceiveBytesMax = sasl?.receiveBytesMax ?? server.context.limits.requestBytesMax;
    this.frameLimits = { frameBytesMin: 0, frameBytesMax: this.saslReceiveBytesMax };
    this.frames = new FrameAssembler(this.frameLimits);
    connection.onData((data) => this.onData(data));
    connection.onClose(() => {
      this.closed = true;
      this.idleTimer?.cancel();
      this.dropQueue();
      this.wakeDrainWaiter();
      this.endThrottle?.();
    });
    connection.onDrain(() => {
      this.awaitingDrain = false;
      this.wakeDrainWaiter();
      this.maybeResume();
    });
    this.touch();
  }

  private touch(): void {
    const { env, limits } = this.server.context;
    this.lastActiveMs = env.clock.monotonicMs();
    this.idleTimer?.cancel();
    // connections.max.idle.ms below 0 (or Long.MAX_VALUE) keeps idle connections open, as Kafka's Selector does.
    if (limits.idleMs < 0 || !Number.isFinite(limits.idleMs)) return;
    this.idleTimer = env.timers.schedule(limits.idleMs, () => {
      if (this.processing === null && !this.writeProgressed()) this.close('idle');
      else this.touch();
    });
  }

  /**
   * Whether the socket took response bytes since the last idle check: as in
   * Kafka's Selector, a write counts as activity, so a client reading a large
   * response slowly is not closed as idle, while one that stops reading is.
   */
  private writeProgressed(): boolean {
    const pending = this.connection.pendingWriteBytes;
    const queued = this.unsentResponseBytes;
    const progressed = pending > 0 && (pending !== this.pendingAtIdleCheck.pending || queued !== this.pendingAtIdleCheck.queued);
    this.pendingAtIdleCheck = { pending, queued };
    return progressed;
  }

  get unsentResponseBytes(): number {
    return this.connection.writeQueueBytes ?? this.connection.pendingWriteBytes;
  }

  close(reason: string): void {
    if (this.closed) return;
    this.server.context.log.debug(`closing connection ${this.id} from ${this.connection.remoteAddress}: ${reason}`);
    this.closed = true;
    this.idleTimer?.cancel();
    this.connection.destroy();
  }

  private onData(data: Buffer): void {
    if (this.closed) return;
    this.touch();
    const { limits } = this.server.context;
    const result = this.frames.push(data);
    if ('invalidSize' in result) {
      this.close(`frame of ${result.invalidSize} bytes exceeds socket.request.max.bytes (${limits.requestBytesMax})`);
      return;
    }
    const readMs = result.frames.length > 0 ? this.server.context.env.clock.monotonicMs() : 0;
    for (const frame of result.frames) {
      this.queue.push(frame);
      this.readTimesMs.push(readMs);
      this.queuedBytes += frame.length;
      this.server.context.requestPool.take(frame.length);
    }
    if (this.queue.length >= limits.queuedRequestsMax || this.queuedBytes >= limits.queuedBytesMax) this.pause();
    this.pauseForMemory();
    this.pump();
  }

  /** Stops reading while the request pool is exhausted (see waitsForMemory). */
  pauseForMemory(): void {
    if (this.waitsForMemory()) this.pause();
  }

  /** The request pool is exhausted and this connection is between requests (a half-read request is read to its end). */
  private waitsForMemory(): boolean {
    return this.server.context.requestPool.exhausted && !this.frames.holdingPartialFrame;
  }

  /** Frames read but never to be served (the connection is closing) give their bytes back to the pool. */
  private dropQueue(): void {
    this.server.context.requestPool.give(this.queuedBytes);
    this.queue.length = 0;
    this.readTimesMs.length = 0;
    this.queuedBytes = 0;
  }

  get queuedRequestCount(): number {
    return this.queue.length;
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.connection.pause();
  }

  maybeResume(): void {
    const { limits } = this.server.context;
    if (!this.paused || this.closed || this.throttled) return;
    if (this.queue.length >= limits.queuedRequestsMax || this.queuedBytes >= limits.queuedBytesMax) return;
    if (this.waitsForMemory()) return;
    if (this.responsesBacklogged()) return;
    this.paused = false;
    this.connection.resume();
  }

  private pump(): void {
    if (this.processing !== null) return;
    this.processing = this.processQueue()
      .catch((error: unknown) => this.fail('serving a request failed', error))
      .finally(() => {
        this.processing = null;
      });
  }

  /**
   * A bug met while serving this connection (a response that cannot be
   * encoded, say) costs the connection, never the broker: an async rejection
   * left unhandled would end the process.
   */
  private fail(what: string, error: unknown): void {
    this.server.context.log.error(`${what} on connection ${this.id} from ${this.connection.remoteAddress}: ${(error as Error).stack ?? String(error)}`);
    this.close(what);
  }

  /** True while the unsent responses exceed the limit and the socket has promised a 'drain'. */
  private responsesBacklogged(): boolean {
    return this.awaitingDrain && this.connection.pendingWriteBytes >= this.server.context.limits.pendingResponseBytesMax;
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      this.drainWaiter = resolve;
    });
  }

  private wakeDrainWaiter(): void {
    const waiter = this.drainWaiter;
    this.drainWaiter = null;
    waiter?.();
  }

  private async processQueue(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      if (this.responsesBacklogged()) {
        await this.drained();
        continue;
      }
      const frame = this.queue.shift()!;
      const readMs = this.readTimesMs.shift();
      this.queuedBytes -= frame.length;
      try {
        await this.handleFrame(frame, readMs);
      } finally {
        this.server.context.requestPool.give(frame.length);
      }
      if (this.throttleTimeMs > 0) await this.muteForThrottle();
      this.maybeResume();
    }
  }

  private async handleFrame(frame: Buffer, readMs: number | undefined): Promise<void> {
    const authenticator = this.authenticator;
    if (authenticator === null) return this.serve(decodeRequest(frame), frame.length, readMs);
    if (!authenticator.complete) return this.authenticate(authenticator, frame, readMs);
    // Kafka judges a request by when it was read, not when its turn came.
    const receivedMs = readMs ?? this.server.context.env.clock.monotonicMs();
    const reauthentication = isSaslHandshake(frame) ? authenticator.reauthentication(receivedMs) : null;
    if (reauthentication !== null) {
      this.authenticator = reauthentication;
      this.frameLimits.frameBytesMax = this.saslReceiveBytesMax;
      return this.authenticate(reauthentication, frame, readMs);
    }
    if (authenticator.sessionExpired(receivedMs)) {
      this.close('its SASL session expired (connections.max.reauth.ms or the credential\'s lifetime) and it did not re-authenticate');
      return;
    }
    return this.serve(decodeRequest(frame), frame.length, readMs);
  }

  private async serve(decoded: DecodedRequest, requestBytes: number, readMs: number | undefined): Promise<void> {
    const outcome = await this.server.context.handlers.handle(decoded, this.connectionInfo(requestBytes));
    if (outcome.kind === 'close') this.close(outcome.reason);
    else if (outcome.kind === 'respond') this.send(encodeResponse(outcome.api, outcome.version, outcome.correlationId, outcome.body));
    const observer = this.server.requestObserver;
    if (observer !== null && decoded.ok) {
      const nowMs = this.server.context.env.clock.monotonicMs();
      const body = outcome.kind === 'respond' ? outcome.body : null;
      const { requestApiKey: apiKey, requestApiVersion: version } = decoded.header;
      observer.requestCompleted({ apiKey, version, request: decoded.body, body, totalTimeMs: nowMs - (readMs ?? nowMs) });
    }
  }

  /** Handed to every request's context (one closure per connection, not per request). */
  private readonly throttle = (throttleTimeMs: number): void => {
    this.throttleTimeMs = Math.max(this.throttleTimeMs, throttleTimeMs);
  };

  private connectionInfo(requestBytes: number) {
    return { connectionId: this.id, listenerName: this.listenerName, clientAddress: this.connection.remoteAddress, principal: this.principal, requestBytes, throttle: this.throttle };
  }

  /** Kafka's MUTED_AND_THROTTLED: the response is out; neither read nor serve until the throttle time passes. */
  private async muteForThrottle(): Promise<void> {
    const delayMs = this.throttleTimeMs;
    this.throttleTimeMs = 0;
    this.pause();
    this.throttled = true;
    await new Promise<void>((resolve) => {
      const timer = this.server.context.env.timers.schedule(delayMs, resolve);
      this.endThrottle = () => {
        timer.cancel();
        resolve();
      };
    });
    this.endThrottle = null;
    this.throttled = false;
  }

  private send(chunks: readonly Uint8Array[]): void {
    if (!this.connection.write(chunks)) this.awaitingDrain = true;
    if (this.responsesBacklogged()) this.pause();
  }

  private async authenticate(authenticator: SaslAuthenticator, frame: Buffer, readMs: number | undefined): Promise<void> {
    const outcome = await authenticator.receive(frame);
    if (outcome.kind === 'serve') return this.serve(outcome.decoded, frame.length, readMs);
    if (outcome.kind === 'fail' || outcome.kind === 'fail-request') return this.failAuthentication(outcome, frame.length);
    this.send(outcome.chunks);
    if (outcome.kind === 'authenticated') {
      if (authenticator.reauthenticating) this.server.context.log.debug(`connection ${this.id} from ${this.connection.remoteAddress} re-authenticated as ${outcome.principal}`);
      this.principal = outcome.principal;
      this.frameLimits.frameBytesMax = this.server.context.limits.requestBytesMax;
    }
  }

  /** Kafka answers a failed authentication connection.failed.authentication.delay.ms late, then closes. */
  private async failAuthentication(outcome: Extract<AuthenticationOutcome, { kind: 'fail' | 'fail-request' }>, requestBytes: number): Promise<void> {
    const { env, handlers, log } = this.server.context;
    const failed = this.authenticator?.reauthenticating === true ? 'failed re-authentication' : 'failed authentication';
    log.info(`${failed} on connection ${this.id} from ${this.connection.remoteAddress}: ${outcome.reason}`);
    this.pause();
    if (this.failedAuthenticationDelayMs > 0) await new Promise<void>((resolve) => env.timers.schedule(this.failedAuthenticationDelayMs, resolve));
    let chunks: readonly Uint8Array[] | null = outcome.kind === 'fail' ? outcome.chunks : null;
    if (outcome.kind === 'fail-request') {
      const answer = handlers.errorOutcome(outcome.decoded, outcome.errorCode, this.connectionInfo(requestBytes));
      if (answer.kind === 'respond') chunks = encodeResponse(answer.api, answer.version, answer.correlationId, answer.body);
    }
    if (this.closed) return;
    this.closed = true;
    this.idleTimer?.cancel();
    if (chunks !== null) this.connection.write(chunks);
    this.connection.end();
  }

  /** Finishes the request in hand; responses the client is not reading are dropped rather than waited for. */
  async drainAndClose(): Promise<void> {
    this.pause();
    this.dropQueue();
    this.wakeDrainWaiter();
    this.endThrottle?.();
    if (this.processing !== null) await this.processing;
    if (this.responsesBacklogged()) this.connection.destroy();
    else this.connection.end();
  }
}
