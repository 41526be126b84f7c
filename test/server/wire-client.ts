/**
 * A bare Kafka wire client for tests: sends frames built with Spool's
 * encoder over real TCP and hands back response frames in arrival order.
 */
import assert from 'node:assert/strict';
import { realNetwork, type Connection, type TlsConnectOptions } from '../../src/io/net.js';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../src/protocol/schema.js';

export class WireClient {
  private buffered = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private readonly waiters: ((frame: Buffer | null) => void)[] = [];
  closed = false;

  private constructor(private readonly connection: Connection) {
    connection.onData((data) => {
      this.buffered = Buffer.concat([this.buffered, data]);
      while (this.buffered.length >= 4 && this.buffered.length >= 4 + this.buffered.readInt32BE(0)) {
        const size = this.buffered.readInt32BE(0);
        this.deliver(this.buffered.subarray(4, 4 + size));
        this.buffered = this.buffered.subarray(4 + size);
      }
    });
    connection.onClose(() => {
      this.closed = true;
      for (const waiter of this.waiters.splice(0)) waiter(null);
    });
  }

  /** `reading: false` leaves responses unread (in the kernel and the broker) until startReading(); `tls` speaks TLS. */
  static async connect(hostPort: string, options: { reading?: boolean; tls?: TlsConnectOptions } = {}): Promise<WireClient> {
    const [host, port] = hostPort.split(':');
    const tls = options.tls === undefined ? {} : { tls: options.tls };
    const client = new WireClient(await realNetwork.connect({ host: host!, port: Number(port), ...tls }));
    if (options.reading === false) client.connection.pause();
    return client;
  }

  startReading(): void {
    this.connection.resume();
  }

  private deliver(frame: Buffer): void {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) waiter(Buffer.from(frame));
    else this.frames.push(Buffer.from(frame));
  }

  send(chunks: readonly Uint8Array[]): void {
    this.connection.write(chunks);
  }

  /** The next response frame (without its size), or null once the broker has closed the connection. */
  next(): Promise<Buffer | null> {
    const frame = this.frames.shift();
    if (frame !== undefined) return Promise.resolve(frame);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.connection.destroy();
  }
}

let correlationId = 0;

/** Sends one request and returns its decoded response, or null when the broker closed the connection instead. */
export async function callOrClosed<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A> | null> {
  const id = ++correlationId;
  client.send(encodeRequest(api, { apiVersion: version, correlationId: id, clientId: 'spool-test' }, body));
  const frame = await client.next();
  if (frame === null) return null;
  const decoded = decodeResponse(api, version, frame);
  assert.ok(decoded.ok, `${api.name} v${version}: response did not decode`);
  assert.equal(decoded.correlationId, id);
  return decoded.body;
}

/** Sends one request and returns its decoded response; fails if the broker closed the connection instead. */
export async function call<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
  const response = await callOrClosed(client, api, version, body);
  assert.ok(response !== null, `${api.name} v${version}: connection closed`);
  return response;
}

/** A Produce body for partition 0 of `topic`. */
export const produceBody = (topic: string, records: Buffer, acks = -1) => ({
  transactionalId: null,
  acks,
  timeoutMs: 5000,
  topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
});

/** A Fetch body (v12 and below) for partition 0 of `topic`, answered at once. */
export const fetchBody = (topic: string, fetchOffset: number, overrides: Record<string, unknown> = {}) => ({
  replicaId: -1,
  maxWaitMs: 0,
  minBytes: 1,
  maxBytes: 1 << 20,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [{ topic, partitions: [{ partition: 0, fetchOffset, logStartOffset: -1, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] }],
  forgottenTopicsData: [],
  rackId: '',
  ...overrides,
});
