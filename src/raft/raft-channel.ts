/**
 * The Raft transport seam (Kafka's NetworkChannel): send one request of
 * Kafka's own RPCs (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch,
 * FetchSnapshot) to a voter by node id and get its response, or a rejection
 * for a network failure or timeout (controller.quorum.request.timeout.ms).
 *
 * Two implementations:
 * - SimRaftChannel over the simulated network (src/io/sim-net.ts): requests
 *   and responses are encoded to Kafka's wire bytes at the newest version
 *   and decoded on the other side, so the simulation exercises the codecs;
 * - KafkaRaftChannel over Spool's client connection to the controller
 *   listener of each voter: from controller.quorum.voters (`id@host:port`),
 *   or with a dynamic quorum from the log's VotersRecord (updateEndpoints),
 *   and the controller.quorum.bootstrap.servers by negative ids.
 */
import type { HostAndPort, QuorumVoter } from '../common/quorum-config.js';
import type { Env } from '../io/env.js';
import type { SimNetwork } from '../io/sim-net.js';
import { BrokerConnection } from '../client/connection.js';
import { KafkaError, NetworkError } from '../client/errors.js';
import { requestCodec, responseCodec, versionRange } from '../protocol/apis.js';
import { ErrorCode } from '../protocol/errors.js';
import { Reader } from '../protocol/reader.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { Writer } from '../protocol/writer.js';

export interface RaftSendOptions {
  /** The request needs at least this version (a pre-vote needs Vote v2); a peer without it answers UNSUPPORTED_VERSION. */
  versionMin?: number;
}

/** A node's address, as a VotersRecord or a response's nodeEndpoints give it (KIP-853). */
export interface NodeEndpoint {
  nodeId: number;
  host: string;
  port: number;
}

export interface RaftChannel {
  send<A extends ApiDef>(destinationId: number, api: A, body: Partial<RequestOf<A>>, options?: RaftSendOptions): Promise<ResponseOf<A>>;
  /** The voters' endpoints as the log now says (dynamic quorum); a channel that addresses nodes by id ignores it. */
  updateEndpoints?(endpoints: readonly NodeEndpoint[]): void;
  close(): Promise<void>;
}

/**
 * controller.quorum.bootstrap.servers as channel destinations: the n-th
 * server (from 0) is node id -2 - n, as Kafka's RequestManager numbers them
 * (ids no replica has).
 */
export function bootstrapServerIds(count: number): number[] {
  return Array.from({ length: count }, (_, index) => -2 - index);
}

/** What serves Raft's RPCs on a node: a decoded request at `version` to its response. */
export type RaftRequestHandler = (api: ApiDef, version: number, body: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** One message on the simulated network: the API, version and encoded body. */
export interface SimRaftMessage {
  api: ApiDef;
  version: number;
  bytes: Buffer;
}

/** Connects a node's raft handler to the simulated network. */
export function serveOnSimNetwork(network: SimNetwork<SimRaftMessage, SimRaftMessage>, nodeId: number, handler: RaftRequestHandler): void {
  network.register(nodeId, async (_source, message) => {
    const body = decode(requestCodec(message.api, message.version), message.bytes);
    const response = await handler(message.api, message.version, body);
    return { api: message.api, version: message.version, bytes: encode(responseCodec(message.api, message.version), response) };
  });
}

export class SimRaftChannel implements RaftChannel {
  constructor(
    private readonly network: SimNetwork<SimRaftMessage, SimRaftMessage>,
    private readonly localId: number,
    private readonly options: { requestTimeoutMs: number },
  ) {}

  async send<A extends ApiDef>(destinationId: number, api: A, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
    const version = versionRange(api).max;
    const request = { api, version, bytes: encode(requestCodec(api, version), body as Record<string, unknown>) };
    const response = await this.network.send(this.localId, destinationId, request, { timeoutMs: this.options.requestTimeoutMs });
    return decode(responseCodec(api, version), response.bytes) as ResponseOf<A>;
  }

  async close(): Promise<void> {}
}

function encode(codec: ReturnType<typeof requestCodec>, body: Record<string, unknown>): Buffer {
  const writer = new Writer();
  codec.encode(writer, body);
  return writer.finish();
}

function decode(codec: ReturnType<typeof requestCodec>, bytes: Buffer): Record<string, unknown> {
  const reader = new Reader(bytes);
  const body = codec.decode(reader);
  if (reader.error !== null) throw reader.error;
  return body;
}

/** Raft's RPCs over Kafka's wire to the voters' controller listeners, one connection per voter, reopened after a failure. */
export class KafkaRaftChannel implements RaftChannel {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  private readonly endpoints = new Map<number, { host: string; port: number }>();
  private closed = false;

  constructor(
    private readonly options: { env: Env; voters: readonly QuorumVoter[]; requestTimeoutMs: number; clientId: string; bootstrapServers?: readonly HostAndPort[] },
  ) {
    for (const voter of options.voters) this.endpoints.set(voter.id, { host: voter.host, port: voter.port });
    const servers = options.bootstrapServers ?? [];
    bootstrapServerIds(servers.length).forEach((id, index) => this.endpoints.set(id, servers[index]!));
  }

  updateEndpoints(endpoints: readonly NodeEndpoint[]): void {
    for (const { nodeId, host, port } of endpoints) {
      const known = this.endpoints.get(nodeId);
      if (known !== undefined && known.host === host && known.port === port) continue;
      this.endpoints.set(nodeId, { host, port });
      // A voter that moved is reached at its new address from the next request on.
      const open = this.connections.get(nodeId);
      this.connections.delete(nodeId);
      void open?.then((connection) => connection.close(), () => undefined);
    }
  }

  async send<A extends ApiDef>(destinationId: number, api: A, body: Partial<RequestOf<A>>, options: RaftSendOptions = {}): Promise<ResponseOf<A>> {
    const connection = await this.connection(destinationId);
    const ours = versionRange(api);
    const theirs = connection.apiVersions.get(api.key);
    const version = Math.min(ours.max, theirs?.max ?? -1);
    if (theirs === undefined || version < Math.max(ours.min, theirs.min, options.versionMin ?? 0)) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `node ${destinationId} does not serve ${api.name} at the version needed`);
    }
    return connection.send(api, body, { version });
  }

  private connection(destinationId: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(new NetworkError('raft channel is closed'));
    const existing = this.connections.get(destinationId);
    if (existing !== undefined) return existing;
    const voter = this.endpoints.get(destinationId);
    if (voter === undefined) return Promise.reject(new NetworkError(`no endpoint known for node ${destinationId}`));
    const opening = BrokerConnection.connect({
      host: voter.host,
      port: voter.port,
      env: this.options.env,
      clientId: this.options.clientId,
      requestTimeoutMs: this.options.requestTimeoutMs,
    });
    this.connections.set(destinationId, opening);
    opening.then(
      (connection) => connection.onClose(() => this.forget(destinationId, opening)),
      () => this.forget(destinationId, opening),
    );
    return opening;
  }

  private forget(destinationId: number, opening: Promise<BrokerConnection>): void {
    if (this.connections.get(destinationId) === opening) this.connections.delete(destinationId);
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.connections.values()];
    this.connections.clear();
    for (const opening of open) {
      const connection = await opening.catch(() => null);
      await connection?.close();
    }
  }
}
