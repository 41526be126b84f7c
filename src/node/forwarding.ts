/**
 * Forwarding (KIP-590, Kafka's ForwardingManager): on a node without the
 * active controller, the admin requests that change metadata (CreateTopics,
 * DeleteTopics, AlterConfigs, ...) go to the active controller wrapped in
 * an Envelope with the client's principal and address, through the
 * controller channel (which finds the active controller again when the
 * answer is NOT_CONTROLLER). The client gets the controller's response as
 * if the broker had answered it.
 *
 * As Kafka's ForwardingManager: an envelope refused with UNSUPPORTED_VERSION
 * closes the client's connection (it reconnects and renegotiates); any
 * other envelope error becomes UNKNOWN_SERVER_ERROR in the request's error
 * response; no controller reachable becomes REQUEST_TIMED_OUT.
 */
import { decodeResponse, encodeRequest } from '../protocol/apis.js';
import { clientAddressBytes, FORWARDABLE_API_KEYS, serializePrincipal } from '../protocol/envelope.js';
import { ErrorCode } from '../protocol/errors.js';
import { Envelope } from '../protocol/schemas/58-envelope.js';
import { CloseConnection, type ApiHandler, type RequestContext } from '../server/handler.js';
import { ControllerUnreachableError, type ControllerChannel } from './controller-channel.js';

/** `handler`'s API served by forwarding to the active controller; its versions and error responses stay the same. */
export function forwardingHandler(handler: ApiHandler, channel: ControllerChannel): ApiHandler {
  if (!FORWARDABLE_API_KEYS.has(handler.api.key)) throw new Error(`${handler.api.name} is not forwardable`);
  const errorResponse = (request: Record<string, unknown>, errorCode: number, context: RequestContext) => {
    if (handler.errorResponse === undefined) return new CloseConnection(`forwarded ${handler.api.name} failed with error ${errorCode}`);
    return handler.errorResponse(request as never, errorCode, context);
  };
  return {
    ...handler,
    async handle(request, context) {
      const requestData = Buffer.concat(
        encodeRequest(handler.api, { apiVersion: context.apiVersion, correlationId: context.header.correlationId, clientId: context.header.clientId }, request as never),
      ).subarray(4);
      let envelope;
      try {
        envelope = await channel.send(Envelope, {
          requestData,
          requestPrincipal: serializePrincipal(context.principal),
          clientHostAddress: clientAddressBytes(context.clientAddress),
        });
      } catch (error) {
        if (!(error instanceof ControllerUnreachableError)) throw error;
        return errorResponse(request as Record<string, unknown>, ErrorCode.REQUEST_TIMED_OUT, context) as never;
      }
      if (envelope.errorCode === ErrorCode.UNSUPPORTED_VERSION) return new CloseConnection(`the controller cannot read ${handler.api.name} v${context.apiVersion}`);
      if (envelope.errorCode !== ErrorCode.NONE || envelope.responseData === null) {
        return errorResponse(request as Record<string, unknown>, ErrorCode.UNKNOWN_SERVER_ERROR, context) as never;
      }
      const response = decodeResponse(handler.api, context.apiVersion, envelope.responseData);
      if (!response.ok) return errorResponse(request as Record<string, unknown>, ErrorCode.UNKNOWN_SERVER_ERROR, context) as never;
      const throttleTimeMs = (response.body as { throttleTimeMs?: unknown }).throttleTimeMs;
      if (typeof throttleTimeMs === 'number' && throttleTimeMs > 0) context.throttle?.(throttleTimeMs);
      return response.body as never;
    },
  };
}
