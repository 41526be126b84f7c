/**
 * A tiny in-test broker on real TCP (src/io net) for client unit tests: it
 * frames requests, decodes them with Spool's codec and lets each test decide
 * when and how to answer. It is not a Kafka broker; it only speaks enough
 * for the behaviour under test.
 */
import { realNetwork, type Connection, type Listener } from '../../src/io/net.js';
import { decodeRequest, encodeResponse, apiByKey } from '../../src/protocol/apis.js';
import type { RequestHeader } from '../../src/protocol/header.js';

export interface ReceivedRequest {
  header: RequestHeader;
  body: Record<string, unknown>;
  connection: Connection;
}

export type Answer = (request: ReceivedRequest) => Buffer[] | null;

export class FakeBroker {
  readonly received: ReceivedRequest[] = [];
  private listener: Listener | null = null;
  private readonly waiters: (() => void)[] = [];
  /** Called per request; returns the frame to send now, or null to hold the request. */
  answer: Answer = () => null;

  async start(): Promise<{ host: string; port: number }> {
    this.listener = await realNetwork.listen({ host: '127.0.0.1', port: 0, onAcceptError: (error) => { throw error; } }, (connection) => this.serve(connection));
    return { host: this.listener.host, port: this.listener.port };
  }

  private readonly connections: Connection[] = [];

  private serve(connection: Connection): void {
    this.connections.push(connection);
    let buffered = Buffer.alloc(0);
    connection.onData((data) => {
      buffered = Buffer.concat([buffered, data]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const size = buffered.readInt32BE(0);
        const frame = buffered.subarray(4, 4 + size);
        buffered = buffered.subarray(4 + size);
        const decoded = decodeRequest(frame);
        if (!decoded.ok) throw new Error(`fake broker cannot decode a request: ${decoded.error.message}`);
        const request = { header: decoded.header, body: decoded.body, connection };
        this.received.push(request);
        const reply = this.answer(request);
        if (reply !== null) connection.write(reply);
        for (const wake of this.waiters.splice(0)) wake();
      }
    });
  }

  /** Resolves once `count` requests have arrived in total. */
  async untilReceived(count: number): Promise<void> {
    while (this.received.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async stop(): Promise<void> {
    for (const connection of this.connections) connection.destroy();
    await this.listener?.close();
  }
}

/** A response frame for `request` with `body`, at the request's version. */
export function reply(request: ReceivedRequest, body: Record<string, unknown>, options: { version?: number; correlationId?: number } = {}): Buffer[] {
  const api = apiByKey(request.header.requestApiKey)!;
  return encodeResponse(api, options.version ?? request.header.requestApiVersion, options.correlationId ?? request.header.correlationId, body);
}

/** An ApiVersions body advertising `spans` (API key -> [min, max]). */
export function apiVersionsBody(spans: Record<number, [number, number]>, errorCode = 0): Record<string, unknown> {
  return {
    errorCode,
    apiKeys: Object.entries(spans).map(([key, [min, max]]) => ({ apiKey: Number(key), minVersion: min, maxVersion: max })),
  };
}
