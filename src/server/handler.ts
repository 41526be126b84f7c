/**
 * What one API handler is: the API it serves, the versions it serves (which
 * ApiVersions advertises, so the two cannot drift), and a function from a
 * decoded request to a response. Kafka errors travel inside the response;
 * a thrown exception is a bug, answered with UNKNOWN_SERVER_ERROR where the
 * handler can express it and by closing the connection otherwise.
 */
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../protocol/schema.js';
import type { RequestHeader } from '../protocol/header.js';

export interface RequestContext {
  header: RequestHeader;
  apiVersion: number;
  clientId: string;
  connectionId: string;
  clientAddress: string;
  listenerName: string;
  /** Authenticated principal, `User:ANONYMOUS` on a PLAINTEXT listener. */
  principal: string;
  /** Bytes of the request frame, for quotas and metrics. */
  requestBytes: number;
  /**
   * Mutes the connection for `throttleTimeMs` once this response is sent: a
   * client over its quota (Kafka's ThrottledChannel). Absent where nothing
   * can be muted (requests not from a socket).
   */
  throttle?: ((throttleTimeMs: number) => void) | undefined;
  /**
   * Charges this request's time to its client's request_percentage now and
   * returns the throttle time (0 within the quota), for a handler whose
   * answer depends on it (Fetch answers empty when throttled, as Kafka's).
   * The table then charges nothing more. Absent where the request is not
   * counted.
   */
  requestThrottleTimeMs?: (() => number) | undefined;
}

/** Returned instead of a response to close the connection (Kafka does so when an acks=0 produce fails). */
export class CloseConnection {
  constructor(readonly reason: string) {}
}

export type HandlerResult<A extends ApiDef> = Partial<ResponseOf<A>> | null | CloseConnection;

/** Kafka's two request-serving roles: a listener in controller.listener.names is the controller's, every other the broker's. */
export type ListenerRole = 'broker' | 'controller';

export interface ApiHandler<A extends ApiDef = ApiDef> {
  readonly api: A;
  /**
   * The roles whose listeners this handler serves; defaults to the API's
   * (Kafka's ApiMessageType listeners). Narrower when the handler is one
   * role's implementation of an API both roles serve differently.
   */
  readonly listeners?: readonly ListenerRole[];
  /** Versions served; defaults to every version the schema declares. */
  readonly versions?: { min: number; max: number };
  /** Versions advertised when they differ from those served (Kafka 4 advertises Produce v0-v2 but refuses them). */
  readonly advertised?: { min: number; max: number };
  /** Returns the response, or null when none is sent (Produce with acks=0). */
  handle(request: RequestOf<A>, context: RequestContext): Promise<HandlerResult<A>> | HandlerResult<A>;
  /** The response that carries `errorCode` for every part of `request` (used when handling failed). */
  errorResponse?(request: RequestOf<A>, errorCode: number, context: RequestContext): Partial<ResponseOf<A>>;
}

export function defineHandler<A extends ApiDef>(handler: ApiHandler<A>): ApiHandler<A> {
  return handler;
}
