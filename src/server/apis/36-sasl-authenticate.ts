/**
 * SaslAuthenticate (key 36), versions 0-2, once a connection is past
 * authentication (or never needed it). During authentication the SASL
 * authenticator (src/security/sasl) answers it; here, as in Kafka's
 * KafkaApis, it is ILLEGAL_SASL_STATE with Kafka's message.
 */
import { SaslAuthenticate } from '../../protocol/schemas/36-sasl-authenticate.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';

export function saslAuthenticateHandler() {
  return defineHandler({
    api: SaslAuthenticate,
    handle: () => ({
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: 'SaslAuthenticate request received after successful authentication',
      authBytes: Buffer.alloc(0),
      sessionLifetimeMs: 0,
    }),
    errorResponse: (_request, errorCode) => ({ errorCode, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0 }),
  });
}
