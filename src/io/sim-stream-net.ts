/**
 * A simulated TCP network between named hosts: an in-process `Network`
 * (listen, connect, byte-stream connections) driven by the injected timers
 * and random generator (a ManualClock and a SeededRandom in the simulator),
 * so real Spool nodes and Spool's client run on it unchanged and every
 * delivery, reset and partition replays from the seed.
 *
 * Hosts. Each host sees the network through `host(name)`: what it listens
 * on is owned by it, what it connects from comes from it, so faults can
 * name hosts. All hosts share one loopback address space: a listener is
 * found by its port alone (any of 127.0.0.1, localhost, 0.0.0.0), and port
 * 0 gets the next free port from a counter, so port numbers replay too.
 *
 * What it models, as a socket user sees it:
 * - a write is one segment; it arrives after a delay drawn uniformly from
 *   [delayMsMin, delayMsMax] (plus a link's extra delay and its
 *   transmission time on a slow link), never before an earlier segment of
 *   the same direction: a stream keeps its order, connections do not keep
 *   theirs relative to one another;
 * - backpressure: bytes written and not yet read by the peer fill the
 *   kernel's buffers (`kernelBufferBytes`); what is over them is the
 *   connection's `pendingWriteBytes`; write() returns false at Node's high
 *   water mark beyond them and 'drain' follows once they are gone; a paused
 *   reader stops taking bytes, so a writer to it fills up;
 * - a cut direction (one-way or two-way partition) loses segments as a
 *   dead route does, and TCP's retransmissions deliver them once it heals
 *   if the connection is still open: the stream stalls, it does not break;
 *   a connect across a cut retries its SYN at Linux's backoff and fails
 *   with ETIMEDOUT after `connectTimeoutMs` (tcp_syn_retries=6: 127 s);
 * - a connect to a port nobody listens on fails with ECONNREFUSED after a
 *   round trip;
 * - end() sends a FIN after the queued bytes; the peer answers with its own
 *   (no half-open connections, Node's default) and each side closes once
 *   both FINs arrived; destroy() closes at once, the peer learns after its
 *   queued bytes, and bytes reaching a closed side reset the sender
 *   (ECONNRESET), as a kernel answers with RST;
 * - bytes that arrive before the reader has a 'data' listener wait for
 *   one, as a Node socket does not flow before it has one (a node that was
 *   paused when a connection came in attaches it only on resume);
 * - `resetConnections` breaks connections at once on both sides (a
 *   middlebox reset or a NIC failure), dropping what was in flight.
 * TLS is not simulated: a listener or connect asking for it is refused.
 * A listener's close() stops accepting at once and leaves its connections
 * open (Node's server.close also waits for them to end before calling back).
 */
import type { Clock, TimerHandle, Timers } from './clock.js';
import type { ConnectOptions, Connection, Listener, ListenOptions, Network, TlsPeer } from './net.js';
import type { Random } from './random.js';

/** The first port handed out for port 0 (the start of Linux's ephemeral range). */
const EPHEMERAL_PORT_FIRST = 32_768;
/** Node's default writableHighWaterMark: write() returns false once this much waits beyond the kernel's buffers. */
const WRITABLE_HIGH_WATER_MARK_BYTES = 16_384;
/** Linux's SYN retransmission times after the first SYN, in ms from the connect (tcp_syn_retries=6). */
const SYN_RETRY_AT_MS = [1_000, 3_000, 7_000, 15_000, 31_000, 63_000] as const;

export interface SimStreamNetworkOptions {
  clock: Clock;
  timers: Timers;
  random: Random;
  /** One-way delay of a segment, drawn uniformly from [delayMsMin, delayMsMax]. Default 1 and 5. */
  delayMsMin?: number;
  delayMsMax?: number;
  /** Bytes the kernels of both ends hold for one direction before writes back up. Default 256 KiB. */
  kernelBufferBytes?: number;
  /** How long a connect across a cut retries before ETIMEDOUT. Default 127 s (Linux). */
  connectTimeoutMs?: number;
  /** Told of each connect, refusal, close and fault, for a trace. */
  onEvent?: (event: string) => void;
}

/** A slow or laggy link, in one direction. */
export interface LinkFault {
  /** Added to every segment's delay. */
  extraDelayMs?: number;
  /** Bandwidth: a segment of n bytes takes n / bytesPerMs ms more (and queues behind earlier ones). */
  bytesPerMs?: number;
}

function networkError(code: string, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/** The due time of a segment lost on a cut direction, to be sent again once it heals. */
const LOST = -1;

interface Segment {
  /** null is the FIN. */
  data: Buffer | null;
  /** When it arrives, or LOST. */
  dueMs: number;
}

interface SimListener {
  owner: string;
  port: number;
  onConnection: (connection: Connection) => void;
}

export class SimStreamNetwork {
  readonly clock: Clock;
  readonly timers: Timers;
  private readonly random: Random;
  private readonly delayMsMin: number;
  private readonly delayMsMax: number;
  readonly kernelBufferBytes: number;
  private readonly connectTimeoutMs: number;
  private readonly onEvent: (event: string) => void;
  private readonly listeners = new Map<number, SimListener>();
  private readonly connections = new Set<SimConnection>();
  /** Ends whose next segment waits for a cut direction to heal. */
  private readonly stalled = new Set<SimConnection>();
  /** Cut directions, as `from>to`. */
  private readonly cut = new Set<string>();
  private readonly linkFaults = new Map<string, LinkFault>();
  private nextPort = EPHEMERAL_PORT_FIRST;
  private nextConnectionId = 1;

  constructor(options: SimStreamNetworkOptions) {
    this.clock = options.clock;
    this.timers = options.timers;
    this.random = options.random;
    this.delayMsMin = options.delayMsMin ?? 1;
    this.delayMsMax = options.delayMsMax ?? 5;
    this.kernelBufferBytes = options.kernelBufferBytes ?? 256 * 1024;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 127_000;
    this.onEvent = options.onEvent ?? (() => undefined);
    if (!(this.delayMsMin >= 0 && this.delayMsMax >= this.delayMsMin)) throw new RangeError(`bad delay range [${this.delayMsMin}, ${this.delayMsMax}]`);
  }

  /** The network as host `name` sees it. */
  host(name: string): Network {
    return {
      listen: (options, onConnection) => this.listen(name, options, onConnection),
      connect: (options) => this.connect(name, options),
    };
  }

  /** Cuts every link between the groups, both ways; links inside a group stay. */
  partition(groups: readonly (readonly string[])[]): void {
    for (const [i, group] of groups.entries()) {
      for (const other of groups.slice(i + 1)) {
        for (const a of group) for (const b of other) this.cutOneWay(a, b), this.cutOneWay(b, a);
      }
    }
  }

  /** Loses everything `from` sends to `to` (what `to` sends still arrives). */
  cutOneWay(from: string, to: string): void {
    if (from === to) return;
    this.cut.add(`${from}>${to}`);
    this.onEvent(`net: cut ${from} -> ${to}`);
  }

  isCut(from: string, to: string): boolean {
    return this.cut.has(`${from}>${to}`);
  }

  /** Restores every cut link; stalled streams deliver what they hold. */
  heal(): void {
    if (this.cut.size === 0) return;
    this.cut.clear();
    this.onEvent('net: healed');
    const stalled = [...this.stalled];
    this.stalled.clear();
    for (const connection of stalled) connection.pump();
  }

  /** Slows the direction `from` -> `to` (replacing any earlier fault on it). */
  slowLink(from: string, to: string, fault: LinkFault): void {
    this.linkFaults.set(`${from}>${to}`, fault);
    this.onEvent(`net: slow ${from} -> ${to} ${JSON.stringify(fault)}`);
  }

  clearLinkFaults(): void {
    this.linkFaults.clear();
  }

  /** Resets every open connection with `host` at one end (and `peer` at the other, when given). Returns how many. */
  resetConnections(host: string, peer?: string): number {
    const chosen = [...this.connections].filter((end) => end.localHost === host && (peer === undefined || end.peerHost === peer));
    for (const end of chosen) end.reset();
    this.onEvent(`net: reset ${chosen.length} connections of ${host}${peer === undefined ? '' : ` with ${peer}`}`);
    return chosen.length;
  }

  /** Open connection ends (each connection has two). */
  get openConnectionEnds(): number {
    return this.connections.size;
  }

  /** @internal */
  forget(connection: SimConnection): void {
    this.connections.delete(connection);
  }

  /** @internal An end whose direction is cut: pumped again on heal. */
  stall(connection: SimConnection): void {
    this.stalled.add(connection);
  }

  /** @internal When a segment leaving `from` for `to` arrives (it keeps order behind `notBeforeMs`). */
  arrivalMs(from: string, to: string, bytes: number, notBeforeMs: number): number {
    const fault = this.linkFaults.get(`${from}>${to}`);
    const transmissionMs = fault?.bytesPerMs === undefined ? 0 : bytes / fault.bytesPerMs;
    const base = Math.max(this.nowMs() + this.drawDelayMs() + (fault?.extraDelayMs ?? 0), notBeforeMs);
    return Math.ceil(base + transmissionMs);
  }

  /** @internal */
  nowMs(): number {
    return this.clock.monotonicMs();
  }

  /** @internal Runs `callback` at `dueMs` (at once when that has passed). */
  at(dueMs: number, callback: () => void): TimerHandle {
    return this.timers.schedule(Math.max(0, dueMs - this.nowMs()), callback);
  }

  private drawDelayMs(): number {
    const spanMs = this.delayMsMax - this.delayMsMin;
    return this.delayMsMin + (spanMs === 0 ? 0 : this.random.nextInt(spanMs + 1));
  }

  private async listen(owner: string, options: ListenOptions, onConnection: (connection: Connection) => void): Promise<Listener> {
    if (options.tls !== undefined) throw new Error('the simulated network does not speak TLS');
    let port = options.port;
    if (port === 0) {
      while (this.listeners.has(this.nextPort)) this.nextPort++;
      port = this.nextPort++;
    } else if (this.listeners.has(port)) {
      throw networkError('EADDRINUSE', `address already in use ${options.host}:${port}`);
    }
    const listener: SimListener = { owner, port, onConnection };
    this.listeners.set(port, listener);
    return {
      host: options.host,
      port,
      close: async () => {
        if (this.listeners.get(port) === listener) this.listeners.delete(port);
      },
    };
  }

  private connect(from: string, options: ConnectOptions): Promise<Connection> {
    if (options.tls !== undefined) return Promise.reject(new Error('the simulated network does not speak TLS'));
    const startedMs = this.nowMs();
    return new Promise((resolve, reject) => {
      let retries = 0;
      const attempt = (): void => {
        const listener = this.listeners.get(options.port);
        const to = listener?.owner ?? null;
        const lost = to !== null && (this.isCut(from, to) || this.isCut(to, from));
        if (!lost) {
          this.handshake(from, options, listener ?? null).then(resolve, reject);
          return;
        }
        const retryAtMs = SYN_RETRY_AT_MS[retries++];
        if (retryAtMs === undefined || retryAtMs >= this.connectTimeoutMs) {
          this.at(startedMs + this.connectTimeoutMs, () => {
            this.onEvent(`net: ${from} -> ${to}:${options.port} connect timed out`);
            reject(networkError('ETIMEDOUT', `connect ETIMEDOUT ${options.host}:${options.port}`));
          });
          return;
        }
        this.at(startedMs + retryAtMs, attempt);
      };
      // The SYN's own trip: whether a listener is there is decided when it arrives.
      this.at(this.nowMs() + this.drawDelayMs(), attempt);
    });
  }

  /** The SYN has arrived: accept (or refuse) and answer after one more trip. */
  private handshake(from: string, options: ConnectOptions, listener: SimListener | null): Promise<Connection> {
    const answerMs = this.nowMs() + this.drawDelayMs();
    const current = listener === null ? undefined : this.listeners.get(listener.port);
    if (current === undefined || current !== listener) {
      return new Promise((_resolve, reject) =>
        this.at(answerMs, () => {
          this.onEvent(`net: ${from} -> :${options.port} refused`);
          reject(networkError('ECONNREFUSED', `connect ECONNREFUSED ${options.host}:${options.port}`));
        }),
      );
    }
    const id = this.nextConnectionId++;
    const clientPort = this.nextPort++;
    const client = new SimConnection(this, { id, localHost: from, peerHost: listener.owner, remotePort: listener.port });
    const server = new SimConnection(this, { id, localHost: listener.owner, peerHost: from, remotePort: clientPort });
    client.peer = server;
    server.peer = client;
    this.connections.add(client).add(server);
    this.onEvent(`net: #${id} ${from} -> ${listener.owner}:${listener.port} connected`);
    listener.onConnection(server);
    return new Promise((resolve) => this.at(answerMs, () => resolve(client)));
  }
}

/** One end of a simulated TCP connection. */
class SimConnection implements Connection {
  readonly tlsPeer: TlsPeer | null = null;
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort: number;
  readonly id: number;
  readonly localHost: string;
  readonly peerHost: string;
  peer!: SimConnection;
  private readonly dataListeners: ((data: Buffer) => void)[] = [];
  private readonly drainListeners: (() => void)[] = [];
  private readonly closeListeners: ((error?: Error) => void)[] = [];
  /** Segments on their way to the peer, in order. */
  private readonly outbound: Segment[] = [];
  private outboundTimer: TimerHandle | null = null;
  /** What arrived while paused. */
  private readonly inbox: Buffer[] = [];
  /** Bytes written and not yet taken by the peer's reader. */
  private unreadBytes = 0;
  private needDrain = false;
  private paused = false;
  private finQueued = false;
  private finDelivered = false;
  private finReceived = false;
  private closed = false;

  constructor(
    private readonly network: SimStreamNetwork,
    identity: { id: number; localHost: string; peerHost: string; remotePort: number },
  ) {
    this.id = identity.id;
    this.localHost = identity.localHost;
    this.peerHost = identity.peerHost;
    this.remotePort = identity.remotePort;
  }

  get pendingWriteBytes(): number {
    return Math.max(0, this.unreadBytes - this.network.kernelBufferBytes);
  }

  write(chunks: readonly Uint8Array[]): boolean {
    if (this.closed || this.finQueued) return false;
    const data = Buffer.concat(chunks);
    if (data.length === 0) return true;
    this.unreadBytes += data.length;
    this.enqueue(data);
    const writable = this.pendingWriteBytes < WRITABLE_HIGH_WATER_MARK_BYTES;
    if (!writable) this.needDrain = true;
    return writable;
  }

  onData(listener: (data: Buffer) => void): void {
    this.dataListeners.push(listener);
    // As a Node socket starts flowing once it has a 'data' listener: what arrived before is emitted on a later turn.
    if (this.dataListeners.length === 1 && this.inbox.length > 0) this.network.timers.defer(() => this.flushInbox());
  }

  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  onClose(listener: (error?: Error) => void): void {
    this.closeListeners.push(listener);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    // As Node's resume: what was held is emitted on a later turn.
    this.network.timers.defer(() => this.flushInbox());
  }

  end(): void {
    if (this.closed || this.finQueued) return;
    this.finQueued = true;
    this.enqueue(null);
  }

  destroy(): void {
    if (this.closed) return;
    if (!this.finQueued) {
      this.finQueued = true;
      this.enqueue(null);
    }
    this.close(undefined);
  }

  /** Breaks both ends at once; what was in flight is lost. */
  reset(): void {
    const error = networkError('ECONNRESET', 'read ECONNRESET');
    this.abort(error);
    this.peer.abort(error);
  }

  /** Moves the head segment on when it is due and its direction is not cut (else it waits for a heal). */
  pump(): void {
    if (this.outboundTimer !== null) return;
    const head = this.outbound[0];
    if (head === undefined) return;
    if (this.network.isCut(this.localHost, this.peerHost)) {
      for (const segment of this.outbound) segment.dueMs = LOST;
      this.network.stall(this);
      return;
    }
    if (head.dueMs === LOST) this.resend();
    this.outboundTimer = this.network.at(head.dueMs, () => {
      this.outboundTimer = null;
      if (this.network.isCut(this.localHost, this.peerHost)) {
        // Lost on the way: TCP retransmits once the route is back, a fresh trip from then.
        for (const segment of this.outbound) segment.dueMs = LOST;
        this.network.stall(this);
        return;
      }
      const segment = this.outbound.shift()!;
      this.peer.arrive(segment);
      this.pump();
    });
  }

  private enqueue(data: Buffer | null): void {
    const last = this.outbound[this.outbound.length - 1];
    const dueMs = last?.dueMs === LOST ? LOST : this.network.arrivalMs(this.localHost, this.peerHost, data?.length ?? 0, last?.dueMs ?? 0);
    this.outbound.push({ data, dueMs });
    this.pump();
  }

  /** New arrival times, from now, for the segments lost on a cut that has healed. */
  private resend(): void {
    let previousMs = 0;
    for (const segment of this.outbound) {
      segment.dueMs = this.network.arrivalMs(this.localHost, this.peerHost, segment.data?.length ?? 0, previousMs);
      previousMs = segment.dueMs;
    }
  }

  /** A segment from the peer reaches this end. */
  private arrive(segment: Segment): void {
    if (this.closed) {
      // Bytes for a closed socket: the kernel answers with RST.
      if (segment.data !== null) {
        this.peer.abort(networkError('ECONNRESET', 'read ECONNRESET'));
      } else {
        this.peer.finDelivered = true;
        this.peer.maybeClose();
      }
      return;
    }
    if (segment.data === null) {
      this.peer.finDelivered = true;
      this.finReceived = true;
      this.peer.maybeClose();
      if (!this.finQueued) this.end();
      this.maybeClose();
      return;
    }
    this.inbox.push(segment.data);
    if (!this.paused) this.flushInbox();
  }

  /** Hands what arrived to the reader; with no 'data' listener yet the bytes wait (a Node socket does not flow before it has one). */
  private flushInbox(): void {
    while (!this.paused && !this.closed && this.dataListeners.length > 0 && this.inbox.length > 0) {
      const data = this.inbox.shift()!;
      this.peer.taken(data.length);
      for (const listener of this.dataListeners) listener(data);
    }
  }

  /** The peer's reader took `bytes` of what this end wrote. */
  private taken(bytes: number): void {
    this.unreadBytes -= bytes;
    if (this.needDrain && this.pendingWriteBytes === 0 && !this.closed) {
      this.needDrain = false;
      this.network.timers.defer(() => {
        if (!this.closed) for (const listener of this.drainListeners) listener();
      });
    }
  }

  private maybeClose(): void {
    if (this.finReceived && this.finDelivered && this.inbox.length === 0) this.close(undefined);
  }

  private abort(error: Error): void {
    this.outboundTimer?.cancel();
    this.outboundTimer = null;
    this.outbound.length = 0;
    this.close(error);
  }

  private close(error: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.inbox.length = 0;
    this.network.forget(this);
    this.network.timers.defer(() => {
      for (const listener of this.closeListeners) listener(error);
    });
  }
}
