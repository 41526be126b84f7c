/**
 * One client connection to one broker.
 *
 * On connect it negotiates versions with ApiVersions (KIP-511): it sends the
 * newest ApiVersions it knows with the client software name and version; a
 * broker that does not know that version answers at v0 with
 * UNSUPPORTED_VERSION and its own ApiVersions range, and the client retries
 * at the highest version both know. Every later request uses, per API, the
 * highest version both sides serve.
 *
 * Requests are pipelined: each gets a correlation id and joins the in-flight
 * queue; a broker answers in order, so each response frame belongs to the
 * head of the queue (a different correlation id is a protocol breach that
 * closes the connection). In-flight requests are bounded
 * (`max.in.flight.requests.per.connection`); more wait their turn. A request
 * unanswered after `request.timeout.ms` closes the connection, as the Java
 * client does: with in-order responses nothing after it could be matched.
 */
import type { Connection, Env, TimerHandle } from '../io/env.js';
import { decodeResponse, encodeRequest, versionRange } from '../protocol/apis.js';
import { ErrorCode } from '../protocol/errors.js';
import { FrameAssembler } from '../protocol/framing.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { parseVersions } from '../protocol/schema.js';
import { ApiVersions } from '../protocol/schemas/18-api-versions.js';
import { KafkaError, NetworkError, TimeoutError } from './errors.js';

/** The software name and version Spool's client sends in ApiVersions v3+. */
export const CLIENT_SOFTWARE_NAME = 'spool';
export const CLIENT_SOFTWARE_VERSION = '0.1.0';

/** The ApiVersions version tried first (the Java 4.x client's choice). */
const API_VERSIONS_FIRST = 4;

export interface ConnectionOptions {
  host: string;
  port: number;
  env: Env;
  clientId?: string;
  /** request.timeout.ms: how long a request may wait for its response. */
  requestTimeoutMs?: number;
  /** max.in.flight.requests.per.connection. */
  inFlightRequestsMax?: number;
  /** Largest response frame accepted (guards against a corrupt size prefix). */
  responseBytesMax?: number;
}

export const CONNECTION_DEFAULTS = {
  requestTimeoutMs: 30_000,
  inFlightRequestsMax: 5,
  responseBytesMax: 1024 * 1024 * 1024,
} as const;

export interface VersionSpan {
  min: number;
  max: number;
}

interface Pending {
  correlationId: number;
  frame: Buffer[];
  expectResponse: boolean;
  decode(frame: Buffer): unknown;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: TimerHandle | null;
}

export interface SendOptions {
  /** Highest version the caller can use (e.g. below a version that needs topic IDs). */
  versionMax?: number;
  /** An exact version; overrides negotiation. */
  version?: number;
  /** False for Produce with acks=0: no response comes, the promise resolves with null once written. */
  expectResponse?: boolean;
}

export class BrokerConnection {
  readonly host: string;
  readonly port: number;
  private readonly env: Env;
  private readonly clientId: string;
  private readonly requestTimeoutMs: number;
  private readonly inFlightRequestsMax: number;
  private socket: Connection | null = null;
  private readonly inFlight: Pending[] = [];
  private readonly waiting: Pending[] = [];
  private nextCorrelationId = 0;
  private readonly frames: FrameAssembler;
  private closedError: Error | null = null;
  private readonly closeListeners: ((error: Error) => void)[] = [];
  /** Broker's version span per API key, after negotiation. */
  private brokerVersions = new Map<number, VersionSpan>();
  private brokerFeatures = new Map<string, number>();

  constructor(options: ConnectionOptions) {
    this.host = options.host;
    this.port = options.port;
    this.env = options.env;
    this.clientId = options.clientId ?? 'spool';
    this.requestTimeoutMs = options.requestTimeoutMs ?? CONNECTION_DEFAULTS.requestTimeoutMs;
    this.inFlightRequestsMax = options.inFlightRequestsMax ?? CONNECTION_DEFAULTS.inFlightRequestsMax;
    // A response holds at least its correlation id.
    this.frames = new FrameAssembler({ frameBytesMin: 4, frameBytesMax: options.responseBytesMax ?? CONNECTION_DEFAULTS.responseBytesMax });
  }

  /** Opens a connection and negotiates API versions. */
  static async connect(options: ConnectionOptions): Promise<BrokerConnection> {
    const connection = new BrokerConnection(options);
    await connection.open();
    return connection;
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get closed(): boolean {
    return this.closedError !== null;
  }

  get inFlightCount(): number {
    return this.inFlight.length + this.waiting.length;
  }

  /** The features the broker's ApiVersions (v3+) names finalized, with their max levels (KIP-584). */
  get finalizedFeatures(): ReadonlyMap<string, number> {
    return this.brokerFeatures;
  }

  /** The broker's advertised version spans, by API key. */
  get apiVersions(): ReadonlyMap<number, VersionSpan> {
    return this.brokerVersions;
  }

  onClose(listener: (error: Error) => void): void {
    this.closeListeners.push(listener);
  }

  private async open(): Promise<void> {
    let socket: Connection;
    try {
      socket = await this.env.net.connect({ host: this.host, port: this.port });
    } catch (error) {
      this.closedError = new NetworkError(`cannot connect to ${this.address}: ${(error as Error).message}`);
      throw this.closedError;
    }
    this.socket = socket;
    socket.onData((data) => this.onData(data));
    socket.onClose((error) => this.fail(new NetworkError(`connection to ${this.address} closed${error ? `: ${error.message}` : ''}`)));
    try {
      await this.negotiate();
    } catch (error) {
      this.destroy();
      throw error;
    }
  }

  /** ApiVersions, falling back to the broker's highest ApiVersions version if ours is unknown to it (KIP-511). */
  private async negotiate(): Promise<void> {
    let version = API_VERSIONS_FIRST;
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await this.sendApiVersions(version);
      if (response.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
        const theirs = response.apiKeys.find((entry) => entry.apiKey === ApiVersions.key);
        const fallback = Math.min(theirs?.maxVersion ?? 0, version - 1);
        if (fallback < 0 || fallback >= version) break;
        version = fallback;
        continue;
      }
      if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, `ApiVersions from ${this.address}`);
      this.brokerVersions = new Map(response.apiKeys.map((entry) => [entry.apiKey, { min: entry.minVersion, max: entry.maxVersion }]));
      this.brokerFeatures = new Map((response.finalizedFeatures ?? []).map((feature) => [feature.name, feature.maxVersionLevel]));
      return;
    }
    throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `no ApiVersions version in common with ${this.address}`);
  }

  private sendApiVersions(version: number): Promise<ResponseOf<typeof ApiVersions>> {
    const body = { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION };
    // A broker that rejects our version answers in v0 format, so a body that does not decode at our version is read as v0.
    const decode = (frame: Buffer): unknown => {
      const ours = decodeResponse(ApiVersions, version, frame);
      if (ours.ok && ours.body.errorCode !== ErrorCode.UNSUPPORTED_VERSION) return ours;
      const v0 = decodeResponse(ApiVersions, 0, frame);
      return v0.ok ? v0 : ours;
    };
    return this.enqueue(ApiVersions, version, body, { decode, expectResponse: true }) as Promise<ResponseOf<typeof ApiVersions>>;
  }

  /** The highest version of `api` both sides serve, or null. */
  versionFor(api: ApiDef, versionMax = Infinity): number | null {
    const theirs = this.brokerVersions.get(api.key);
    if (theirs === undefined) return null;
    const ours = ourVersions(api);
    const max = Math.min(ours.max, theirs.max, versionMax);
    const min = Math.max(ours.min, theirs.min);
    return max >= min ? max : null;
  }

  /** Sends a request at the negotiated version and resolves with the decoded response body. */
  send<A extends ApiDef>(api: A, body: Partial<RequestOf<A>>, options: SendOptions = {}): Promise<ResponseOf<A>> {
    const version = options.version ?? this.versionFor(api, options.versionMax);
    if (version === null) {
      return Promise.reject(new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `${this.address} serves no version of ${api.name} that Spool's client knows`));
    }
    return this.sendAt(api, version, body, options);
  }

  /** Like send(), also returning the version used (callers that read version-dependent fields). */
  async sendVersioned<A extends ApiDef>(api: A, body: Partial<RequestOf<A>>, options: SendOptions = {}): Promise<{ version: number; response: ResponseOf<A> }> {
    const version = options.version ?? this.versionFor(api, options.versionMax);
    if (version === null) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `${this.address} serves no version of ${api.name} that Spool's client knows`);
    return { version, response: await this.sendAt(api, version, body, options) };
  }

  private sendAt<A extends ApiDef>(api: A, version: number, body: Partial<RequestOf<A>>, options: SendOptions): Promise<ResponseOf<A>> {
    const decode = (frame: Buffer): unknown => decodeResponse(api, version, frame);
    return this.enqueue(api, version, body, { decode, expectResponse: options.expectResponse ?? true }) as Promise<ResponseOf<A>>;
  }

  private enqueue<A extends ApiDef>(
    api: A,
    version: number,
    body: Partial<RequestOf<A>>,
    how: { decode(frame: Buffer): unknown; expectResponse: boolean },
  ): Promise<unknown> {
    if (this.closedError !== null) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
    const frame = encodeRequest(api, { apiVersion: version, correlationId, clientId: this.clientId }, body);
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        correlationId,
        frame,
        expectResponse: how.expectResponse,
        decode: how.decode,
        resolve,
        reject,
        timer: null,
      };
      this.waiting.push(pending);
      this.pump();
    });
  }

  /** Moves waiting requests onto the wire while the in-flight bound allows. */
  private pump(): void {
    while (this.waiting.length > 0 && this.inFlight.length < this.inFlightRequestsMax && this.socket !== null && this.closedError === null) {
      const pending = this.waiting.shift()!;
      this.socket.write(pending.frame);
      if (!pending.expectResponse) {
        pending.resolve(null);
        continue;
      }
      pending.timer = this.env.timers.schedule(this.requestTimeoutMs, () => {
        this.fail(new TimeoutError(`no response from ${this.address} within ${this.requestTimeoutMs} ms (correlation id ${pending.correlationId})`));
      });
      this.inFlight.push(pending);
    }
  }

  private onData(data: Buffer): void {
    const result = this.frames.push(data);
    if ('invalidSize' in result) {
      this.fail(new NetworkError(`invalid response size ${result.invalidSize} from ${this.address}`));
      return;
    }
    for (const frame of result.frames) {
      this.onFrame(frame);
      if (this.closedError !== null) return;
    }
  }

  private onFrame(frame: Buffer): void {
    const pending = this.inFlight.shift();
    const correlationId = frame.readInt32BE(0);
    if (pending === undefined || pending.correlationId !== correlationId) {
      this.fail(new NetworkError(`response with correlation id ${correlationId} from ${this.address} does not match the oldest request (${pending?.correlationId ?? 'none'})`));
      pending?.reject(this.closedError!);
      return;
    }
    pending.timer?.cancel();
    const decoded = pending.decode(frame) as { ok: true; body: unknown } | { ok: false; error: Error };
    if (decoded.ok) pending.resolve(decoded.body);
    else pending.reject(new NetworkError(`cannot decode response from ${this.address}: ${decoded.error.message}`));
    this.pump();
  }

  /** Closes the connection and fails every outstanding request with `error`. */
  private fail(error: Error): void {
    if (this.closedError !== null) return;
    this.closedError = error;
    for (const pending of [...this.inFlight.splice(0), ...this.waiting.splice(0)]) {
      pending.timer?.cancel();
      pending.reject(error);
    }
    this.socket?.destroy();
    for (const listener of this.closeListeners) listener(error);
  }

  /**
   * Closes cleanly: no new requests, waits for the in-flight ones (each
   * still bounded by its request timeout), then ends the socket.
   */
  async close(): Promise<void> {
    if (this.closedError !== null) return;
    const outstanding = [...this.inFlight, ...this.waiting].map(
      (pending) => new Promise<void>((done) => {
        const { resolve, reject } = pending;
        pending.resolve = (value) => { resolve(value); done(); };
        pending.reject = (error) => { reject(error); done(); };
      }),
    );
    await Promise.all(outstanding);
    if (this.closedError !== null) return;
    this.closedError = new NetworkError(`connection to ${this.address} was closed by the client`);
    this.socket?.end();
    for (const listener of this.closeListeners) listener(this.closedError);
  }

  /** Closes at once, failing outstanding requests. */
  destroy(): void {
    this.fail(new NetworkError(`connection to ${this.address} was closed by the client`));
  }
}

/** The versions Spool's client will use for `api`: every declared version except unstable ones. */
export function ourVersions(api: ApiDef): VersionSpan {
  const declared = versionRange(api);
  const unstable = api.unstable === undefined ? null : parseVersions(api.unstable);
  const max = unstable !== null && unstable.min <= declared.max ? unstable.min - 1 : declared.max;
  return { min: declared.min, max };
}
