/**
 * One connection's SASL authentication, the states of Kafka's
 * SaslServerAuthenticator. Until it completes, nothing but ApiVersions,
 * SaslHandshake and SaslAuthenticate is served:
 *
 * - handshake-or-versions: ApiVersions (once; answered by the request
 *   handlers) or SaslHandshake; any other request closes the connection.
 * - handshake: SaslHandshake only. An enabled mechanism moves on to
 *   authenticate; another is answered UNSUPPORTED_SASL_MECHANISM (with the
 *   enabled list) and the connection closes.
 * - authenticate: after SaslHandshake v1 each token comes in a
 *   SaslAuthenticate request (KIP-152); any other request is answered with
 *   its error response carrying ILLEGAL_SASL_STATE and the connection closes.
 *   After SaslHandshake v0 tokens come as bare size-prefixed frames and are
 *   answered so (the framing Kafka still accepts from old clients).
 *   A failed exchange is answered SASL_AUTHENTICATION_FAILED and closes.
 *
 * Failures are answered `connection.failed.authentication.delay.ms` late,
 * by the connection (this class only decides).
 */
import { decodeRequest, encodeResponse, type DecodedRequest } from '../../protocol/apis.js';
import { ErrorCode } from '../../protocol/errors.js';
import { SaslHandshake } from '../../protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../protocol/schemas/36-sasl-authenticate.js';
import { API_VERSIONS_KEY } from '../../protocol/apis.js';
import type { SaslServer } from './mechanism.js';
import type { SaslListenerSettings } from './config.js';

export type AuthenticationOutcome =
  /** The frame is a request the request handlers answer (ApiVersions during the handshake). */
  | { kind: 'serve'; decoded: DecodedRequest }
  | { kind: 'reply'; chunks: Buffer[] }
  | { kind: 'authenticated'; chunks: Buffer[]; principal: string }
  /** Answer `chunks` (if any) after the failure delay, then close. */
  | { kind: 'fail'; chunks: Buffer[] | null; reason: string }
  /** Answer the request with its own error response carrying `errorCode`, then close. */
  | { kind: 'fail-request'; decoded: DecodedRequest; errorCode: number; reason: string };

type State = 'handshake-or-versions' | 'handshake' | 'authenticate' | 'complete' | 'failed';

const AUTHENTICATE_FAILED_MESSAGE = (mechanism: string) => `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`;

export class SaslAuthenticator {
  private state: State = 'handshake-or-versions';
  private server: SaslServer | null = null;
  /** False after SaslHandshake v0: tokens travel as bare frames. */
  private kafkaFraming = true;

  constructor(private readonly settings: SaslListenerSettings) {}

  get complete(): boolean {
    return this.state === 'complete';
  }

  async receive(frame: Buffer): Promise<AuthenticationOutcome> {
    const outcome = await this.step(frame);
    if (outcome.kind === 'fail' || outcome.kind === 'fail-request') this.state = 'failed';
    if (outcome.kind === 'authenticated') this.state = 'complete';
    return outcome;
  }

  private step(frame: Buffer): Promise<AuthenticationOutcome> | AuthenticationOutcome {
    if (this.state === 'handshake-or-versions' || this.state === 'handshake') return this.handshake(frame);
    if (this.state === 'authenticate') return this.kafkaFraming ? this.authenticateRequest(frame) : this.rawToken(frame);
    return { kind: 'fail', chunks: null, reason: `SASL frame received in state ${this.state}` };
  }

  private handshake(frame: Buffer): AuthenticationOutcome {
    const decoded = decodeRequest(frame);
    if (!decoded.ok) return { kind: 'fail', chunks: null, reason: `not a valid Kafka request during the SASL handshake (${decoded.reason})` };
    const apiKey = decoded.header.requestApiKey;
    if (apiKey === API_VERSIONS_KEY && this.state === 'handshake-or-versions') {
      this.state = 'handshake';
      return { kind: 'serve', decoded };
    }
    if (apiKey !== SaslHandshake.key) return { kind: 'fail', chunks: null, reason: `Unexpected Kafka request of type ${decoded.api.name} during SASL handshake` };
    const version = decoded.header.requestApiVersion;
    const mechanism = (decoded.body as { mechanism: string }).mechanism;
    const enabled = this.settings.enabledMechanisms;
    const answer = (errorCode: number) => encodeResponse(SaslHandshake, version, decoded.header.correlationId, { errorCode, mechanisms: enabled });
    if (!enabled.includes(mechanism)) return { kind: 'fail', chunks: answer(ErrorCode.UNSUPPORTED_SASL_MECHANISM), reason: `Unsupported SASL mechanism ${mechanism}` };
    this.kafkaFraming = version >= 1;
    this.server = this.settings.newServer(mechanism);
    this.state = 'authenticate';
    return { kind: 'reply', chunks: answer(ErrorCode.NONE) };
  }

  private async authenticateRequest(frame: Buffer): Promise<AuthenticationOutcome> {
    const decoded = decodeRequest(frame);
    if (!decoded.ok) return { kind: 'fail', chunks: null, reason: `not a valid Kafka request during SASL authentication (${decoded.reason})` };
    if (decoded.header.requestApiKey !== SaslAuthenticate.key) {
      return { kind: 'fail-request', decoded, errorCode: ErrorCode.ILLEGAL_SASL_STATE, reason: `Unexpected Kafka request of type ${decoded.api.name} during SASL authentication` };
    }
    const version = decoded.header.requestApiVersion;
    const answer = (body: Record<string, unknown>) => encodeResponse(SaslAuthenticate, version, decoded.header.correlationId, { sessionLifetimeMs: 0, authBytes: Buffer.alloc(0), errorMessage: null, ...body });
    const server = this.server!;
    const step = await server.evaluate((decoded.body as { authBytes: Buffer }).authBytes);
    if (step.kind === 'failed') {
      const message = step.reveal ? step.message : AUTHENTICATE_FAILED_MESSAGE(server.mechanism);
      return { kind: 'fail', chunks: answer({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message }), reason: step.message };
    }
    const chunks = answer({ errorCode: ErrorCode.NONE, authBytes: step.token });
    if (step.kind === 'challenge') return { kind: 'reply', chunks };
    return { kind: 'authenticated', chunks, principal: `User:${step.authorizationId}` };
  }

  private async rawToken(frame: Buffer): Promise<AuthenticationOutcome> {
    const step = await this.server!.evaluate(frame);
    // Without Kafka framing there is no way to tell the client why: the connection just closes, as Kafka's does.
    if (step.kind === 'failed') return { kind: 'fail', chunks: null, reason: step.message };
    const size = Buffer.alloc(4);
    size.writeInt32BE(step.token.length);
    const chunks = [size, step.token];
    if (step.kind === 'challenge') return { kind: 'reply', chunks };
    return { kind: 'authenticated', chunks, principal: `User:${step.authorizationId}` };
  }
}
