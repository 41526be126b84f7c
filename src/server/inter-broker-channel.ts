/**
 * Requests from this broker to another one on its inter-broker listener
 * (what Kafka's NodeToNodeChannelManager does for the transaction markers
 * and AddPartitionsToTxn): one connection per destination broker, opened
 * on first use from the endpoint the metadata image names, kept while it
 * stays open, and replaced after it fails. A request fails with
 * NoEndpointError while the image names no endpoint for the broker, and
 * with the connection's error (closed, refused, past request.timeout.ms)
 * otherwise; the failed connection is dropped so the next request opens a
 * new one.
 */
import type { Env } from '../io/env.js';
import type { MetadataImage } from '../metadata/image.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { BrokerConnection } from '../client/connection.js';
import { interBrokerEndpoint } from './listeners.js';

/** What the channel needs of a connection (a BrokerConnection; tests give their own). */
export interface ChannelConnection {
  readonly closed: boolean;
  send<A extends ApiDef>(api: A, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>>;
  destroy(): void;
}

export interface InterBrokerChannelOptions {
  nodeId: number;
  env: Env;
  image: () => MetadataImage;
  /** inter.broker.listener.name: the listener of the other brokers to use (their first one when unset). */
  listenerName: string | undefined;
  /** request.timeout.ms of each request. */
  requestTimeoutMs: number;
  /** What the connections name themselves (client.id), after `broker-<id>-`. */
  purpose: string;
  connect?: (to: { host: string; port: number; clientId: string }) => Promise<ChannelConnection>;
}

export class NoEndpointError extends Error {
  constructor(readonly brokerId: number) {
    super(`the metadata names no inter-broker endpoint for broker ${brokerId}`);
  }
}

export class InterBrokerChannel {
  private readonly connections = new Map<number, Promise<ChannelConnection>>();
  private closed = false;

  constructor(private readonly options: InterBrokerChannelOptions) {}

  async send<A extends ApiDef>(brokerId: number, api: A, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
    const connection = await this.connectionTo(brokerId);
    try {
      return await connection.send(api, body);
    } catch (error) {
      connection.destroy(); // the next request finds it closed and opens another
      throw error;
    }
  }

  /** Ends every connection; requests afterwards fail. */
  close(): void {
    this.closed = true;
    for (const connection of this.connections.values()) void connection.then((c) => c.destroy(), () => undefined);
    this.connections.clear();
  }

  private async connectionTo(brokerId: number): Promise<ChannelConnection> {
    const kept = this.connections.get(brokerId);
    if (kept !== undefined) {
      const connection = await kept.catch(() => null);
      if (connection !== null && !connection.closed) return connection;
      if (this.connections.get(brokerId) === kept) this.connections.delete(brokerId);
    }
    if (this.closed) throw new Error(`the ${this.options.purpose} channel is closed`);
    const endpoint = interBrokerEndpoint(this.options.image(), brokerId, this.options.listenerName);
    if (endpoint === null) throw new NoEndpointError(brokerId);
    const clientId = `broker-${this.options.nodeId}-${this.options.purpose}`;
    const connect =
      this.options.connect ??
      ((to: { host: string; port: number; clientId: string }) => BrokerConnection.connect({ ...to, env: this.options.env, requestTimeoutMs: this.options.requestTimeoutMs }));
    const opened = connect({ host: endpoint.host, port: endpoint.port, clientId });
    this.connections.set(brokerId, opened);
    opened.catch(() => {
      if (this.connections.get(brokerId) === opened) this.connections.delete(brokerId);
    });
    return opened;
  }
}
