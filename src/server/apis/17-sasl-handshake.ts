/**
 * SaslHandshake (key 17), versions 0-1, once a connection is past
 * authentication (or never needed it: PLAINTEXT and SSL listeners). During
 * authentication the SASL authenticator (src/security/sasl) answers it;
 * here, as in Kafka's KafkaApis, it is ILLEGAL_SASL_STATE. A SaslHandshake
 * that starts a re-authentication (KIP-368: the session has an end and none
 * began in the last second) never reaches this handler: the socket server
 * gives it to a fresh authenticator.
 */
import { SaslHandshake } from '../../protocol/schemas/17-sasl-handshake.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';

export function saslHandshakeHandler() {
  return defineHandler({
    api: SaslHandshake,
    handle: () => ({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] }),
    errorResponse: (_request, errorCode) => ({ errorCode, mechanisms: [] }),
  });
}
