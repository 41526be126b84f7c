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
 * The session (KIP-368): on completion its lifetime is the smallest of
 * the mechanism's connections.max.reauth.ms (when above 0) and the time to
 * the credential's expiration (an OAUTHBEARER token's exp), at least 0;
 * with neither, the session never expires and the lifetime answered is 0.
 * SaslAuthenticate v1+ tells the client. A session that expires must be
 * renewed by re-authentication (`reauthentication()`): a new authenticator
 * that takes the SaslHandshake of an authenticated connection and refuses a
 * change of mechanism (the handshake is answered, the next frame closes the
 * connection unanswered) or of principal (SASL_AUTHENTICATION_FAILED).
 *
 * Failures are answered `connection.failed.authentication.delay.ms` late,
 * by the connection (this class only decides).
 */
import { decodeRequest, encodeResponse, type DecodedRequest } from '../../protocol/apis.js';
import { ErrorCode } from '../../protocol/errors.js';
import { SaslHandshake } from '../../protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../protocol/schemas/36-sasl-authenticate.js';
import { API_VERSIONS_KEY } from '../../protocol/apis.js';
import type { SaslServer, SaslStep } from './mechanism.js';
import type { SaslListenerSettings } from './config.js';
import type { Clock } from '../../io/clock.js';

/**
 * Kafka's KafkaChannel begins at most one re-authentication a second; a
 * SaslHandshake sooner after the last one is served as any request is (and
 * answered ILLEGAL_SASL_STATE).
 */
export const REAUTHENTICATION_INTERVAL_MS_MIN = 1000;

export type AuthenticationOutcome =
  /** The frame is a request the request handlers answer (ApiVersions during the handshake). */
  | { kind: 'serve'; decoded: DecodedRequest }
  | { kind: 'reply'; chunks: Buffer[] }
  | { kind: 'authenticated'; chunks: Buffer[]; principal: string }
  /** Answer `chunks` (if any) after the failure delay, then close. */
  | { kind: 'fail'; chunks: Buffer[] | null; reason: string }
  /** Answer the request with its own error response carrying `errorCode`, then close. */
  | { kind: 'fail-request'; decoded: DecodedRequest; errorCode: number; reason: string };

type State = 'handshake-or-versions' | 'handshake' | 'reauth-handshake' | 'reauth-bad-mechanism' | 'authenticate' | 'complete' | 'failed';

/** What a re-authentication must keep: the previous session's mechanism and principal, and when it began (monotonic ms). */
interface PreviousSession {
  mechanism: string;
  principal: string;
  startMs: number;
}

export class SaslAuthenticator {
  private state: State;
  private server: SaslServer | null = null;
  /** False after SaslHandshake v0: tokens travel as bare frames. */
  private kafkaFraming = true;
  private readonly clock: Clock;
  private readonly previous: PreviousSession | null;
  private mechanism: string | null = null;
  private principal: string | null = null;
  /** When the session ends (monotonic ms), or null for a session without end (Kafka's serverSessionExpirationTimeNanos). */
  private sessionExpirationMs: number | null = null;
  /** Kafka's badMechanismErrorMessage: why the frame after a re-authentication's handshake closes the connection. */
  private badMechanismMessage = '';

  constructor(
    private readonly settings: SaslListenerSettings,
    options: { clock: Clock; previous?: PreviousSession },
  ) {
    this.clock = options.clock;
    this.previous = options.previous ?? null;
    this.state = this.previous === null ? 'handshake-or-versions' : 'reauth-handshake';
  }

  get complete(): boolean {
    return this.state === 'complete';
  }

  get reauthenticating(): boolean {
    return this.previous !== null;
  }

  /** Whether the session was over at `nowMs` (monotonic): the connection is closed at its next request but a re-authentication. */
  sessionExpired(nowMs: number): boolean {
    return this.sessionExpirationMs !== null && nowMs > this.sessionExpirationMs;
  }

  /**
   * A fresh authenticator for the SaslHandshake an authenticated connection
   * sent at `nowMs`, or null when Kafka would not re-authenticate: the
   * session has no end, or the last re-authentication began less than
   * REAUTHENTICATION_INTERVAL_MS_MIN ago.
   */
  reauthentication(nowMs: number): SaslAuthenticator | null {
    if (this.state !== 'complete' || this.sessionExpirationMs === null) return null;
    if (this.previous !== null && nowMs - this.previous.startMs < REAUTHENTICATION_INTERVAL_MS_MIN) return null;
    const previous = { mechanism: this.mechanism!, principal: this.principal!, startMs: nowMs };
    return new SaslAuthenticator(this.settings, { clock: this.clock, previous });
  }

  private get authenticationText(): string {
    return this.previous === null ? 'authentication' : 're-authentication';
  }

  async receive(frame: Buffer): Promise<AuthenticationOutcome> {
    const outcome = await this.step(frame);
    if (outcome.kind === 'fail' || outcome.kind === 'fail-request') this.state = 'failed';
    if (outcome.kind === 'authenticated') this.state = 'complete';
    return outcome;
  }

  private step(frame: Buffer): Promise<AuthenticationOutcome> | AuthenticationOutcome {
    if (this.state === 'handshake-or-versions' || this.state === 'handshake' || this.state === 'reauth-handshake') return this.handshake(frame);
    if (this.state === 'reauth-bad-mechanism') return { kind: 'fail', chunks: null, reason: this.badMechanismMessage };
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
    if (!enabled.includes(mechanism)) {
      // Kafka's processor closes a connection whose re-authentication handshake fails, without the answer it built.
      const chunks = this.previous === null ? answer(ErrorCode.UNSUPPORTED_SASL_MECHANISM) : null;
      return { kind: 'fail', chunks, reason: `Unsupported SASL mechanism ${mechanism}` };
    }
    this.kafkaFraming = version >= 1;
    if (this.previous !== null && mechanism !== this.previous.mechanism) {
      this.badMechanismMessage = `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${this.previous.mechanism}'`;
      this.state = 'reauth-bad-mechanism';
      return { kind: 'reply', chunks: answer(ErrorCode.NONE) };
    }
    this.mechanism = mechanism;
    this.server = this.settings.newServer(mechanism);
    this.state = 'authenticate';
    return { kind: 'reply', chunks: answer(ErrorCode.NONE) };
  }

  /**
   * The completed exchange's principal, or why a re-authentication refuses
   * it; on success the session's expiration is set and its lifetime returned.
   */
  private completeSession(step: Extract<SaslStep, { kind: 'complete' }>): { principal: string; sessionLifetimeMs: number } | { refused: string } {
    const principal = `User:${step.authorizationId}`;
    if (this.previous !== null && principal !== this.previous.principal) {
      const dotted = (p: string) => p.replace(':', '.');
      return { refused: `Cannot change principals during re-authentication from ${dotted(this.previous.principal)}: ${dotted(principal)}` };
    }
    this.principal = principal;
    const maxReauthMs = this.settings.connectionsMaxReauthMs(this.mechanism!);
    const credentialMs = step.credentialExpirationMs === undefined ? null : step.credentialExpirationMs - this.clock.nowMs();
    const bounds = [...(maxReauthMs > 0 ? [maxReauthMs] : []), ...(credentialMs === null ? [] : [credentialMs])];
    if (bounds.length === 0) return { principal, sessionLifetimeMs: 0 };
    const sessionLifetimeMs = Math.max(0, Math.min(...bounds));
    this.sessionExpirationMs = this.clock.monotonicMs() + sessionLifetimeMs;
    return { principal, sessionLifetimeMs };
  }

  private async authenticateRequest(frame: Buffer): Promise<AuthenticationOutcome> {
    const decoded = decodeRequest(frame);
    if (!decoded.ok) return { kind: 'fail', chunks: null, reason: `not a valid Kafka request during SASL authentication (${decoded.reason})` };
    if (decoded.header.requestApiKey !== SaslAuthenticate.key) {
      return { kind: 'fail-request', decoded, errorCode: ErrorCode.ILLEGAL_SASL_STATE, reason: `Unexpected Kafka request of type ${decoded.api.name} during SASL authentication` };
    }
    const version = decoded.header.requestApiVersion;
    const answer = (body: Record<string, unknown>) => encodeResponse(SaslAuthenticate, version, decoded.header.correlationId, { sessionLifetimeMs: 0, authBytes: Buffer.alloc(0), errorMessage: null, ...body });
    const failed = (message: string, reason = message): AuthenticationOutcome => ({ kind: 'fail', chunks: answer({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message }), reason });
    const server = this.server!;
    const step = await server.evaluate((decoded.body as { authBytes: Buffer }).authBytes);
    if (step.kind === 'failed') {
      const message = step.reveal ? step.message : `Authentication failed during ${this.authenticationText} due to invalid credentials with SASL mechanism ${server.mechanism}`;
      return failed(message, step.message);
    }
    if (step.kind === 'challenge') return { kind: 'reply', chunks: answer({ errorCode: ErrorCode.NONE, authBytes: step.token }) };
    const session = this.completeSession(step);
    if ('refused' in session) return failed(session.refused);
    const chunks = answer({ errorCode: ErrorCode.NONE, authBytes: step.token, sessionLifetimeMs: session.sessionLifetimeMs });
    return { kind: 'authenticated', chunks, principal: session.principal };
  }

  private async rawToken(frame: Buffer): Promise<AuthenticationOutcome> {
    const step = await this.server!.evaluate(frame);
    // Without Kafka framing there is no way to tell the client why: the connection just closes, as Kafka's does.
    if (step.kind === 'failed') return { kind: 'fail', chunks: null, reason: step.message };
    const size = Buffer.alloc(4);
    size.writeInt32BE(step.token.length);
    const chunks = [size, step.token];
    if (step.kind === 'challenge') return { kind: 'reply', chunks };
    // The session is bounded all the same; a client of this framing cannot learn it, and is closed once it ends.
    const session = this.completeSession(step);
    if ('refused' in session) return { kind: 'fail', chunks: null, reason: session.refused };
    return { kind: 'authenticated', chunks, principal: session.principal };
  }
}
