/**
 * One SASL exchange on the server side, as javax.security.sasl.SaslServer
 * shapes it: each client token yields a challenge, the final server message
 * with the authorization id, or a failure. A failure's message goes to the
 * client only when `reveal` is set (Kafka's SaslAuthenticationException);
 * otherwise the client reads Kafka's generic "invalid credentials" text.
 * A credential that expires (an OAUTHBEARER token) completes with its
 * expiration, wall-clock ms since the epoch (Kafka's negotiated property
 * CREDENTIAL.LIFETIME.MS), which bounds the session (KIP-368).
 */
export type SaslStep =
  | { kind: 'challenge'; token: Buffer }
  | { kind: 'complete'; token: Buffer; authorizationId: string; credentialExpirationMs?: number }
  | { kind: 'failed'; message: string; reveal: boolean };

export interface SaslServer {
  readonly mechanism: string;
  evaluate(token: Buffer): SaslStep | Promise<SaslStep>;
}
