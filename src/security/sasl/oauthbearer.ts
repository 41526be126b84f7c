/**
 * SASL/OAUTHBEARER (RFC 7628) as Kafka's OAuthBearerSaslServer serves it,
 * with Kafka's default token validation for development, the unsecured JWS
 * of OAuthBearerUnsecuredValidatorCallbackHandler:
 *
 *   client first message  n,[a=<authzid>],\x01auth=Bearer <token>\x01[key=value\x01]*\x01
 *   valid token           empty server message; the principal is the token's
 *                         principal claim; extensions are all accepted
 *   invalid token         the challenge {"status":"invalid_token"} (or
 *                         "insufficient_scope" with "scope"); the client
 *                         answers \x01 and the exchange fails with that text
 *
 * The token: a JWS whose header has `"alg":"none"` and no signature; claims
 * `exp` (required), `iat` (optional), the principal claim (a string), and
 * the scope claim (a space-delimited string or a list of strings). Options
 * of the listener's OAuthBearerLoginModule JAAS entry:
 * unsecuredValidatorPrincipalClaimName (default sub),
 * unsecuredValidatorScopeClaimName (default scope),
 * unsecuredValidatorRequiredScope (space-delimited),
 * unsecuredValidatorAllowableClockSkewMs (default 0). The secured
 * validation with a JWKS is in oauth-jwks.ts.
 */
import { ConfigError } from '../../common/config.js';
import type { Clock } from '../../io/clock.js';
import type { SaslServer, SaslStep } from './mechanism.js';

export const OAUTHBEARER = 'OAUTHBEARER';

const SEPARATOR = '\u0001';
/** RFC 7628's saslname: US-ASCII but ',' and '=', which are written =2C and =3D. */
const SASLNAME = '(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+';
const KVPAIRS = `(?:[A-Za-z]+=[\\x21-\\x7E \\t\\r\\n]+${SEPARATOR})*`;
const CLIENT_FIRST_MESSAGE = new RegExp(`^n,(?:a=(?<authzid>${SASLNAME}))?,${SEPARATOR}(?<kvpairs>${KVPAIRS})${SEPARATOR}$`);
const AUTH = /^(?<scheme>\w+) +(?<token>[-_~+/.a-zA-Z0-9]+=*)$/;

export interface UnsecuredValidatorOptions {
  principalClaimName: string;
  scopeClaimName: string;
  requiredScope: readonly string[];
  allowableClockSkewMs: number;
}

/** The validator's options from the JAAS entry, with Kafka's defaults and its refusal of a bad clock skew. */
export function unsecuredValidatorOptions(options: ReadonlyMap<string, string>): UnsecuredValidatorOptions {
  const option = (name: string): string => (options.get(`unsecuredValidator${name}`) ?? '').trim();
  const skewText = option('AllowableClockSkewMs');
  const skew = skewText === '' ? 0 : Number(skewText);
  if (!/^[+-]?\d+$/.test(skewText || '0') || !Number.isSafeInteger(skew)) throw new ConfigError(`For input string: "${skewText}"`);
  if (skew < 0) throw new ConfigError(`Allowable clock skew millis must not be negative: ${skewText}`);
  const required = option('RequiredScope');
  return {
    principalClaimName: option('PrincipalClaimName') || 'sub',
    scopeClaimName: option('ScopeClaimName') || 'scope',
    requiredScope: required === '' ? [] : parseScope(required),
    allowableClockSkewMs: skew,
  };
}

const parseScope = (text: string): string[] => text.split(' ').filter((item) => item !== '');

/** Why a token is refused; `scope` set for a missing required scope (Kafka's failureScope). */
export class IllegalToken extends Error {
  constructor(
    message: string,
    readonly scope: string | null = null,
  ) {
    super(message);
  }
}

/** What a valid token says: its principal name and when it expires (wall-clock ms, Kafka's token lifetimeMs). */
export interface ValidToken {
  principal: string;
  lifetimeMs: number;
}

/** Checks a token at a time, or throws IllegalToken. */
export type TokenValidator = (token: string, nowMs: number) => ValidToken;

export const unsecuredValidator =
  (options: UnsecuredValidatorOptions): TokenValidator =>
  (token, nowMs) =>
    validateUnsecuredJws(token, options, nowMs);

export class OAuthBearerSaslServer implements SaslServer {
  readonly mechanism = OAUTHBEARER;
  private errorMessage: string | null = null;

  constructor(
    private readonly validate: TokenValidator,
    private readonly clock: Clock,
  ) {}

  evaluate(token: Buffer): SaslStep {
    if (token.length === 1 && token[0] === 0x01 && this.errorMessage !== null) return { kind: 'failed', message: this.errorMessage, reveal: true };
    this.errorMessage = null;
    const message = CLIENT_FIRST_MESSAGE.exec(token.toString('utf8'));
    if (message === null) return { kind: 'failed', message: 'Invalid OAUTHBEARER client first message', reveal: false };
    const pairs = new Map<string, string>();
    for (const pair of message.groups!.kvpairs!.split(SEPARATOR).filter((p) => p !== '')) {
      const equals = pair.indexOf('=');
      pairs.set(pair.slice(0, equals), pair.slice(equals + 1));
    }
    const auth = pairs.get('auth');
    if (auth === undefined) return { kind: 'failed', message: "Invalid OAUTHBEARER client first message: 'auth' not specified", reveal: false };
    const authMatch = AUTH.exec(auth);
    if (authMatch === null) return { kind: 'failed', message: "Invalid OAUTHBEARER client first message: invalid 'auth' format", reveal: false };
    if (authMatch.groups!.scheme!.toLowerCase() !== 'bearer') return { kind: 'failed', message: `Invalid scheme in OAUTHBEARER client first message: ${authMatch.groups!.scheme}`, reveal: false };
    let valid: ValidToken;
    try {
      valid = this.validate(authMatch.groups!.token!, this.clock.nowMs());
    } catch (error) {
      if (!(error instanceof IllegalToken)) throw error;
      this.errorMessage = jsonErrorResponse(error.scope === null ? 'invalid_token' : 'insufficient_scope', error.scope);
      return { kind: 'challenge', token: Buffer.from(this.errorMessage, 'utf8') };
    }
    const principal = valid.principal;
    const authorizationId = (message.groups!.authzid ?? '').replaceAll('=2C', ',').replaceAll('=3D', '=');
    if (authorizationId !== '' && authorizationId !== principal) {
      return {
        kind: 'failed',
        message: `Authentication failed: Client requested an authorization id (${authorizationId}) that is different from the token's principal name (${principal})`,
        reveal: true,
      };
    }
    return { kind: 'complete', token: Buffer.alloc(0), authorizationId: principal, credentialExpirationMs: valid.lifetimeMs };
  }
}

function jsonErrorResponse(status: string, scope: string | null): string {
  return scope === null ? `{"status":"${status}"}` : `{"status":"${status}", "scope":"${scope}"}`;
}

function decodePart(part: string): Record<string, unknown> {
  if (!/^[-_A-Za-z0-9+/]*=*$/.test(part)) throw new IllegalToken('malformed Base64 URL encoded value');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new IllegalToken('malformed JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new IllegalToken('malformed JSON');
  return value as Record<string, unknown>;
}

/** Validates an unsecured JWS as Kafka's unsecured validator does. */
export function validateUnsecuredJws(compact: string, options: UnsecuredValidatorOptions, nowMs: number): ValidToken {
  if (compact.includes('..')) throw new IllegalToken("Malformed compact serialization contains '..'");
  const parts = compact.split('.');
  if (compact.endsWith('.')) parts.pop();
  if (parts.length === 2) parts.push('');
  if (parts.length !== 3) throw new IllegalToken(`Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values`);
  const [headerPart, claimsPart, signature] = parts as [string, string, string];
  const header = decodePart(headerPart);
  const claims = decodePart(claimsPart);
  if (header.alg !== 'none') throw new IllegalToken("Unsecured JWS must have 'none' for an algorithm");
  if (signature !== '') throw new IllegalToken('Unsecured JWS must not contain a digital signature');
  const time = (name: string): number | null => {
    const value = claims[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'number') throw new IllegalToken(`The claim named '${name}' was not a number`);
    return value;
  };
  const expiration = time('exp');
  if (expiration === null) throw new IllegalToken('No expiration time in JWT');
  const principal = claims[options.principalClaimName];
  if (principal !== undefined && typeof principal !== 'string') throw new IllegalToken(`The claim named '${options.principalClaimName}' was not of the expected type`);
  if (principal === undefined || principal.trim() === '') throw new IllegalToken(`No principal name in JWT claim: ${options.principalClaimName}`);
  const issuedAt = time('iat');
  const skew = options.allowableClockSkewMs;
  if (issuedAt !== null && nowMs + skew < issuedAt * 1000) {
    throw new IllegalToken(`The Issued At value (${issuedAt} seconds) was after the indicated time (${nowMs} ms) plus allowable clock skew (${skew} ms)`);
  }
  if (nowMs - skew >= expiration * 1000) {
    throw new IllegalToken(`The indicated time (${nowMs} ms) minus allowable clock skew (${skew} ms) was on or after the Expiration Time value (${expiration} seconds)`);
  }
  if (issuedAt !== null && expiration <= issuedAt) throw new IllegalToken(`The Expiration Time time (${expiration} seconds) was not after the Issued At time (${issuedAt} seconds)`);
  const scopeClaim = claims[options.scopeClaimName];
  const scope = typeof scopeClaim === 'string' ? parseScope(scopeClaim) : Array.isArray(scopeClaim) ? scopeClaim.filter((s): s is string => typeof s === 'string') : [];
  for (const required of options.requiredScope) {
    if (!scope.includes(required)) {
      throw new IllegalToken(`The provided scope (${scope.join(' ')}) was missing a required scope (${required})`, `[${options.requiredScope.join(', ')}]`);
    }
  }
  // Kafka rounds the claim's seconds to milliseconds (OAuthBearerUnsecuredJws.convertClaimTimeInSecondsToMs).
  return { principal, lifetimeMs: Math.round(expiration * 1000) };
}
