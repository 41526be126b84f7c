/**
 * Envelope (key 58), version 0, on the controller listener (KIP-590): a
 * broker forwards a client's admin request (CreateTopics, DeleteTopics,
 * AlterConfigs, ...) to the active controller, wrapped with the client's
 * principal and address. The controller serves the inner request with its
 * own handler, as if the client had sent it (its principal and address),
 * and answers with the inner response (header and body, no size prefix).
 *
 * As Kafka's EnvelopeUtils and RequestChannel:
 * - a principal that is not Kafka's serialized DefaultPrincipalData:
 *   PRINCIPAL_DESERIALIZATION_FAILURE;
 * - a client address of other than 4 or 16 bytes: INVALID_REQUEST;
 * - an inner request that cannot be read, or at a version not served:
 *   UNSUPPORTED_VERSION;
 * - an API that may not be forwarded: INVALID_REQUEST;
 * - an inner response carrying NOT_CONTROLLER anywhere: the envelope
 *   answers NOT_CONTROLLER with no data, so the broker looks for the active
 *   controller.
 * Every error comes with null responseData.
 *
 * Not done: the CLUSTER_ACTION authorization of the envelope (no
 * authorizer in Spool).
 */
import { decodeRequest, encodeResponse, versionRange } from '../../protocol/apis.js';
import { clientAddressText, deserializePrincipal, FORWARDABLE_API_KEYS } from '../../protocol/envelope.js';
import { ErrorCode } from '../../protocol/errors.js';
import { Envelope } from '../../protocol/schemas/58-envelope.js';
import { CloseConnection, defineHandler, type ApiHandler, type RequestContext } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

const failed = (errorCode: number) => ({ responseData: null, errorCode });

/** True when any errorCode in the response, at any depth, is NOT_CONTROLLER (Kafka's errorCounts check). */
function carriesNotController(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(carriesNotController);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return false;
  return Object.entries(value).some(([key, inner]) => (key === 'errorCode' ? inner === ErrorCode.NOT_CONTROLLER : carriesNotController(inner)));
}

export function envelopeHandler(node: ControllerApiContext) {
  return defineHandler({
    api: Envelope,
    async handle(request, context) {
      // The forwarding broker needs CLUSTER_ACTION on the cluster, as Kafka's ControllerApis.handleEnvelopeRequest;
      // the inner request is then authorized as the client's principal.
      if (!authorizeCluster(node, context, AclOperation.CLUSTER_ACTION)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const principal = request.requestPrincipal === null ? null : deserializePrincipal(request.requestPrincipal);
      if (principal === null) return failed(ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE);
      const clientAddress = clientAddressText(request.clientHostAddress);
      if (clientAddress === null) return failed(ErrorCode.INVALID_REQUEST);
      const inner = decodeRequest(request.requestData);
      if (!inner.ok) return failed(ErrorCode.UNSUPPORTED_VERSION);
      if (!FORWARDABLE_API_KEYS.has(inner.api.key)) return failed(ErrorCode.INVALID_REQUEST);
      const handler = node.handlers.handlerFor('controller', inner.api.key);
      const version = inner.header.requestApiVersion;
      if (handler === undefined || !serves(handler, version)) return failed(ErrorCode.UNSUPPORTED_VERSION);
      const forwarded: RequestContext = {
        ...context,
        header: inner.header,
        apiVersion: version,
        clientId: inner.header.clientId ?? '',
        clientAddress,
        principal,
        // Kafka mutes no channel for a forwarded request: the broker mutes its client's when the response comes back.
        throttle: undefined,
      };
      const body = await serveForwarded(handler, inner.body, forwarded, node);
      if (body === null) return failed(ErrorCode.UNKNOWN_SERVER_ERROR);
      if (carriesNotController(body)) return failed(ErrorCode.NOT_CONTROLLER);
      const frame = Buffer.concat(encodeResponse(inner.api, version, inner.header.correlationId, body));
      return { responseData: frame.subarray(4), errorCode: ErrorCode.NONE };
    },
    errorResponse: (_request, errorCode) => failed(errorCode),
  });
}

function serves(handler: ApiHandler, version: number): boolean {
  const range = handler.versions ?? versionRange(handler.api);
  return version >= range.min && version <= range.max;
}

/** The inner handler's response; its error response when it fails (as the request handler table does), null when it has none. */
async function serveForwarded(handler: ApiHandler, body: Record<string, unknown>, context: RequestContext, node: ControllerApiContext): Promise<Record<string, unknown> | null> {
  try {
    const response = await handler.handle(body as never, context);
    return response === null || response instanceof CloseConnection ? null : (response as Record<string, unknown>);
  } catch (error) {
    node.log.error(`forwarded ${handler.api.name} from ${context.clientAddress} failed: ${(error as Error).stack ?? String(error)}`);
    return handler.errorResponse === undefined ? null : (handler.errorResponse(body as never, ErrorCode.UNKNOWN_SERVER_ERROR, context) as Record<string, unknown>);
  }
}
