/**
 * Routes decoded requests to the handler registered for their API key.
 *
 * Each listener serves one role's APIs, as Kafka's do: the listeners named
 * in controller.listener.names only the APIs whose schema lists the
 * controller, every other listener only the broker's. ApiVersions on a
 * listener advertises exactly the handlers that listener serves; a request
 * for any other key is treated as an unknown key there.
 *
 * What Kafka does with requests it cannot serve, Spool does too:
 * - ApiVersions at a version it does not know: an ApiVersions v0 response
 *   carrying UNSUPPORTED_VERSION and the supported ranges (KIP-511), so the
 *   client can retry at a version both sides know;
 * - any other unknown API key, unsupported version or malformed body: the
 *   connection is closed (Kafka cannot even parse a header it could answer);
 * - a handler that throws: UNKNOWN_SERVER_ERROR in the handler's error
 *   response when it has one, otherwise the connection is closed. Either way
 *   the broker goes on serving everyone else.
 *
 * request_percentage (src/server/client-request-quota.ts): on broker
 * listeners each request's handler time before its first wait is charged to
 * its client; one over its quota has the throttle time in its response (the
 * larger of it and the handler's own) and its connection muted for it.
 */
import { API_VERSIONS_KEY, apiByKey, versionRange, type DecodedRequest } from '../protocol/apis.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ApiDef } from '../protocol/schema.js';
import { CloseConnection, type ApiHandler, type HandlerResult, type ListenerRole, type RequestContext } from './handler.js';
import type { Logger } from '../common/logger.js';
import { exemptFromRequestQuota } from './client-request-quota.js';
import type { ClientRequestQuotaManager } from './client-quota-manager.js';

export type Outcome =
  | { kind: 'close'; reason: string }
  | { kind: 'none' }
  | { kind: 'respond'; api: ApiDef; version: number; correlationId: number; body: Record<string, unknown> };

export interface ConnectionInfo {
  connectionId: string;
  listenerName: string;
  clientAddress: string;
  /** The connection's authenticated principal (`User:ANONYMOUS` when it did not authenticate). */
  principal: string;
  requestBytes: number;
  /** Mutes the connection for this long after the response (client quotas). */
  throttle?(throttleTimeMs: number): void;
}

export interface AdvertisedVersion {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

export interface RequestHandlerTableOptions {
  /** controller.listener.names: the listeners that serve the controller's APIs. */
  controllerListenerNames?: readonly string[];
  /** process.roles: a handler is served only on the listeners of roles this node has (default both). */
  roles?: ReadonlySet<ListenerRole>;
  /** request_percentage on the broker's listeners; absent: not enforced. */
  requestQuota?: RequestQuota | undefined;
}

/** request_percentage's manager and the clock that times handlers. */
export interface RequestQuota {
  manager: ClientRequestQuotaManager;
  nowMs: () => number;
}

export class RequestHandlerTable {
  private readonly byRole: Record<ListenerRole, Map<number, ApiHandler>> = { broker: new Map(), controller: new Map() };
  private readonly controllerListenerNames: ReadonlySet<string>;
  private readonly requestQuota: RequestQuota | undefined;

  constructor(
    handlers: readonly ApiHandler[],
    private readonly log: Logger,
    options: RequestHandlerTableOptions = {},
  ) {
    this.controllerListenerNames = new Set(options.controllerListenerNames ?? []);
    this.requestQuota = options.requestQuota;
    const roles = options.roles ?? new Set<ListenerRole>(['broker', 'controller']);
    for (const handler of handlers) {
      for (const role of (handler.listeners ?? handler.api.listeners).filter((r) => roles.has(r))) {
        if (!handler.api.listeners.includes(role)) throw new Error(`${handler.api.name} is not an API of the ${role} listener`);
        const byKey = this.byRole[role];
        if (byKey.has(handler.api.key)) throw new Error(`two ${role} handlers for API key ${handler.api.key}`);
        byKey.set(handler.api.key, handler);
      }
    }
  }

  /** The role a listener serves. */
  roleOf(listenerName: string): ListenerRole {
    return this.controllerListenerNames.has(listenerName) ? 'controller' : 'broker';
  }

  /** The handler a role serves for an API key (the in-process controller channel dispatches through it). */
  handlerFor(role: ListenerRole, apiKey: number): ApiHandler | undefined {
    return this.byRole[role].get(apiKey);
  }

  /** The ranges ApiVersions advertises on a listener: exactly the handlers it serves. */
  advertisedVersions(listenerName: string): AdvertisedVersion[] {
    return [...this.byRole[this.roleOf(listenerName)].values()]
      .sort((a, b) => a.api.key - b.api.key)
      .map((handler) => {
        const range = handler.advertised ?? servedVersions(handler);
        return { apiKey: handler.api.key, minVersion: range.min, maxVersion: range.max };
      });
  }

  async handle(decoded: DecodedRequest, connection: ConnectionInfo): Promise<Outcome> {
    if (!decoded.ok) {
      const header = decoded.header;
      if (header !== null && header.requestApiKey === API_VERSIONS_KEY && decoded.reason === 'unsupported-version') {
        return this.unsupportedApiVersions(header.correlationId, connection.listenerName);
      }
      return { kind: 'close', reason: `${decoded.reason}: ${decoded.error.message} (api key ${header?.requestApiKey ?? '?'}, version ${header?.requestApiVersion ?? '?'})` };
    }
    const header = decoded.header;
    const role = this.roleOf(connection.listenerName);
    const handler = this.byRole[role].get(header.requestApiKey);
    const served = handler === undefined ? null : servedVersions(handler);
    if (handler === undefined || served === null || header.requestApiVersion < served.min || header.requestApiVersion > served.max) {
      if (header.requestApiKey === API_VERSIONS_KEY) return this.unsupportedApiVersions(header.correlationId, connection.listenerName);
      return { kind: 'close', reason: `no ${role} handler for ${decoded.api.name} v${header.requestApiVersion}` };
    }
    const context = this.contextFor(decoded, connection);
    const respond = (body: Record<string, unknown>): Outcome => ({
      kind: 'respond',
      api: handler.api,
      version: header.requestApiVersion,
      correlationId: header.correlationId,
      body,
    });
    try {
      const quota = role === 'broker' && this.requestQuota?.manager.quotasEnabled === true && !exemptFromRequestQuota(header.requestApiKey, decoded.body) ? this.requestQuota : undefined;
      const body = quota === undefined ? await handler.handle(decoded.body as never, context) : await serveCounted(handler, decoded.body, context, quota);
      if (body instanceof CloseConnection) return { kind: 'close', reason: body.reason };
      return body === null ? { kind: 'none' } : respond(body as Record<string, unknown>);
    } catch (error) {
      this.log.error(`${handler.api.name} v${header.requestApiVersion} from ${connection.clientAddress} failed: ${(error as Error).stack ?? error}`);
      if (handler.errorResponse === undefined) return { kind: 'close', reason: 'handler failed' };
      return respond(handler.errorResponse(decoded.body as never, ErrorCode.UNKNOWN_SERVER_ERROR, context) as Record<string, unknown>);
    }
  }

  /**
   * The request's own error response carrying `errorCode` (what Kafka sends
   * for a request it refuses before serving, such as one that arrives during
   * SASL authentication), or a close when the handler has none.
   */
  errorOutcome(decoded: DecodedRequest, errorCode: number, connection: ConnectionInfo): Outcome {
    if (!decoded.ok) return { kind: 'close', reason: 'undecodable request' };
    const handler = this.byRole[this.roleOf(connection.listenerName)].get(decoded.header.requestApiKey);
    if (handler?.errorResponse === undefined) return { kind: 'close', reason: `no error response for ${decoded.api.name}` };
    const context = this.contextFor(decoded, connection);
    const body = handler.errorResponse(decoded.body as never, errorCode, context) as Record<string, unknown>;
    return { kind: 'respond', api: handler.api, version: decoded.header.requestApiVersion, correlationId: decoded.header.correlationId, body };
  }

  private contextFor(decoded: Extract<DecodedRequest, { ok: true }>, connection: ConnectionInfo): RequestContext {
    const header = decoded.header;
    return {
      header,
      apiVersion: header.requestApiVersion,
      clientId: header.clientId ?? '',
      connectionId: connection.connectionId,
      clientAddress: connection.clientAddress,
      listenerName: connection.listenerName,
      principal: connection.principal,
      requestBytes: connection.requestBytes,
      throttle: connection.throttle,
    };
  }

  private unsupportedApiVersions(correlationId: number, listenerName: string): Outcome {
    return {
      kind: 'respond',
      api: apiByKey(API_VERSIONS_KEY)!,
      version: 0,
      correlationId,
      body: { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: this.advertisedVersions(listenerName) },
    };
  }
}

/**
 * The handler's response, its request charged to request_percentage:
 * the time the handler ran before its first wait, when the response is
 * ready, or when the handler asks for its throttle time (Fetch), then
 * the time so far if the handler has not yet waited.
 */
async function serveCounted(handler: ApiHandler, request: Record<string, unknown>, context: RequestContext, quota: RequestQuota): Promise<HandlerResult<ApiDef>> {
  const startMs = quota.nowMs();
  let requestTimeMs: number | null = null;
  let chargedThrottleMs: number | null = null;
  context.requestThrottleTimeMs = () =>
    (chargedThrottleMs ??= quota.manager.recordRequestTimeAndGetThrottleTimeMs(context.principal, context.clientId, requestTimeMs ?? quota.nowMs() - startMs));
  const pending = handler.handle(request as never, context);
  requestTimeMs = quota.nowMs() - startMs;
  const response = await pending;
  if (response === null || response instanceof CloseConnection || chargedThrottleMs !== null) return response;
  return throttledByRequestQuota(quota.manager, context, requestTimeMs, response as Record<string, unknown>);
}

/** Kafka's sendResponseMaybeThrottle: the request's time recorded; over the quota, the larger throttle time in the response and a mute. */
function throttledByRequestQuota(manager: ClientRequestQuotaManager, context: RequestContext, requestTimeMs: number, body: Record<string, unknown>): Record<string, unknown> {
  const throttleTimeMs = manager.recordRequestTimeAndGetThrottleTimeMs(context.principal, context.clientId, requestTimeMs);
  if (throttleTimeMs === 0) return body;
  context.throttle?.(throttleTimeMs);
  const own = typeof body.throttleTimeMs === 'number' ? body.throttleTimeMs : 0;
  return throttleTimeMs > own ? { ...body, throttleTimeMs } : body;
}

function servedVersions(handler: ApiHandler): { min: number; max: number } {
  return handler.versions ?? versionRange(handler.api);
}
