/**
 * The broker's channel to the active controller (Kafka's
 * NodeToControllerChannelManager): BrokerRegistration, BrokerHeartbeat,
 * AllocateProducerIds, the CreateTopics of auto topic creation, and (once
 * forwarding exists) the admin requests a broker forwards.
 *
 * A request goes in as Kafka's message at a version the caller picks and the
 * controller's answer comes back as Kafka's message, its errors
 * (NOT_CONTROLLER, STALE_BROKER_EPOCH, ...) inside it, as over the wire.
 * `send` rejects only when no answer could be had at all
 * (ControllerUnreachableError), so callers treat "no controller" and "the
 * controller said no" differently, as Kafka's callers do.
 *
 * Two implementations: InProcessControllerChannel below, for a node that is
 * its own controller (a combined node), and the RPC channel over the
 * controller listeners of controller.quorum.voters / bootstrap servers.
 */
import { IN_PROCESS_PRINCIPAL } from '../security/authorizer/standard-authorizer.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, versionRange } from '../protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import { CloseConnection, type ApiHandler, type RequestContext } from '../server/handler.js';

export interface ControllerChannel {
  /** Sends `request` at `version` (default: the newest the schema declares) and resolves with the controller's response. */
  send<A extends ApiDef>(api: A, request: Partial<RequestOf<A>>, options?: { version?: number }): Promise<ResponseOf<A>>;
}

/** No response could be had from a controller (none known, unreachable, or it closed the connection). */
export class ControllerUnreachableError extends Error {
  override readonly name = 'ControllerUnreachableError';
}

/** The controller-side handler serving an API key, or undefined when this node's controller does not serve it. */
export type ControllerHandlerLookup = (apiKey: number) => ApiHandler | undefined;

export interface InProcessControllerChannelOptions {
  nodeId: number;
  /** The controller listener the requests are accounted to (the first of controller.listener.names). */
  listenerName: string;
}

/**
 * The channel of a node that runs the controller itself: each request is
 * encoded and decoded by the same codecs as over the wire, so the
 * controller's handler sees exactly what a remote broker would send, and
 * the response comes back with every default filled in.
 */
export class InProcessControllerChannel implements ControllerChannel {
  private correlationId = 0;

  constructor(
    private readonly lookup: ControllerHandlerLookup,
    private readonly options: InProcessControllerChannelOptions,
  ) {}

  async send<A extends ApiDef>(api: A, request: Partial<RequestOf<A>>, options: { version?: number } = {}): Promise<ResponseOf<A>> {
    const handler = this.lookup(api.key);
    if (handler === undefined) throw new ControllerUnreachableError(`the controller of node ${this.options.nodeId} does not serve ${api.name}`);
    const version = options.version ?? versionRange(api).max;
    const correlationId = this.correlationId++;
    const clientId = `spool-node-${this.options.nodeId}-to-controller`;
    const decoded = decodeRequest(Buffer.concat(encodeRequest(api, { apiVersion: version, correlationId, clientId }, request)).subarray(4));
    if (!decoded.ok) throw new Error(`${api.name} v${version} does not round-trip: ${decoded.reason}`);
    const context: RequestContext = {
      header: decoded.header,
      apiVersion: version,
      clientId,
      connectionId: `in-process-${this.options.nodeId}`,
      clientAddress: 'in-process',
      listenerName: this.options.listenerName,
      principal: IN_PROCESS_PRINCIPAL,
      requestBytes: 0,
    };
    const body = await handler.handle(decoded.body as never, context);
    if (body === null || body instanceof CloseConnection) throw new ControllerUnreachableError(`${api.name}: the controller sent no response`);
    const frame = Buffer.concat(encodeResponse(api, version, correlationId, body as Partial<ResponseOf<A>>)).subarray(4);
    const response = decodeResponse(api, version, frame);
    if (!response.ok) throw new Error(`${api.name} v${version} response does not round-trip: ${response.error.message}`);
    return response.body;
  }
}
