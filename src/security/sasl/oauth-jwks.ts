/**
 * OAUTHBEARER's secured validation, as Kafka's OAuthBearerValidatorCallbackHandler
 * (ValidatorAccessTokenValidator over jose4j) does it, when a listener sets
 * `listener.name.<l>.oauthbearer.sasl.server.callback.handler.class` to that
 * handler. The keys come from `sasl.oauthbearer.jwks.endpoint.url`: a `file:`
 * URL is read once at start (Kafka's JwksFileVerificationKeyResolver); an
 * http(s) URL is fetched at start and refreshed (jwks-endpoint.ts, Kafka's
 * RefreshingHttpsJwks). A token is a signed JWS (RS256/384/512 or ES256/384/512, never
 * none) whose key is the JWKS key with its `kid` (or the only key when it
 * names none), with:
 *   exp and iat required; exp and nbf checked with sasl.oauthbearer.clock.skew.seconds (30)
 *   iss equal to sasl.oauthbearer.expected.issuer, which must be set unless
 *     sasl.oauthbearer.allow.unverified.issuer=true (then any or no iss)
 *   aud containing one of sasl.oauthbearer.expected.audience, which must be
 *     set unless sasl.oauthbearer.allow.unverified.audience=true (then any
 *     or no aud); Kafka 4.4's BrokerJwtValidator
 *   the principal from sasl.oauthbearer.sub.claim.name (sub), a non-blank string
 *   scopes from sasl.oauthbearer.scope.claim.name (scope), each non-blank
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ConfigError, type BrokerConfig } from '../../common/config.js';
import { createLogger, type Logger } from '../../common/logger.js';
import { realTimers, type Timers } from '../../io/clock.js';
import type { FileSystem } from '../../io/fs.js';
import { httpGetJson } from '../../io/http-get.js';
import { listenerPrefixed } from '../ssl-config.js';
import { IllegalToken, type TokenValidator } from './oauthbearer.js';
import { allowedJwksUrls, RefreshingJwks, type JwksFetch } from './jwks-endpoint.js';

export const SECURED_VALIDATOR = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';
const DEFAULT_CLOCK_SKEW_SECONDS = 30;
const ALGORITHMS: Readonly<Record<string, { hash: string; kty: string; ec?: true }>> = {
  RS256: { hash: 'sha256', kty: 'RSA' },
  RS384: { hash: 'sha384', kty: 'RSA' },
  RS512: { hash: 'sha512', kty: 'RSA' },
  ES256: { hash: 'sha256', kty: 'EC', ec: true },
  ES384: { hash: 'sha384', kty: 'EC', ec: true },
  ES512: { hash: 'sha512', kty: 'EC', ec: true },
};

/** Kafka's ValidateException: answered {"status":"invalid_token"}. */
export class InvalidAccessToken extends IllegalToken {
  override readonly name = 'InvalidAccessToken';
}

export interface VerificationKey {
  kid: string | null;
  kty: string;
  alg: string | null;
  key: KeyObject;
}


/** A setting of the listener's OAUTHBEARER mechanism: listener-and-mechanism prefixed, listener prefixed, then plain. */
function oauthSetting(config: BrokerConfig, listenerName: string, name: string): string | undefined {
  return config.explicit.get(listenerPrefixed(listenerName, `oauthbearer.${name}`)) ?? config.explicit.get(listenerPrefixed(listenerName, name)) ?? config.explicit.get(name);
}

/** The server callback handler the listener names for OAUTHBEARER, if any. */
export function oauthCallbackHandler(config: BrokerConfig, listenerName: string): string | undefined {
  return oauthSetting(config, listenerName, 'sasl.server.callback.handler.class');
}

/** What an http(s) JWKS endpoint is fetched and refreshed with; production uses the defaults. */
export interface JwksEndpointIo {
  timers?: Timers;
  fetchJson?: JwksFetch;
  /** The allowed URLs (Kafka's org.apache.kafka.sasl.oauthbearer.allowed.urls); from SPOOL_OAUTHBEARER_ALLOWED_URLS by default. */
  allowedUrls?: ReadonlySet<string>;
  log?: Logger;
  /** Called with the endpoint's key cache once it is built (tests await its refreshes). */
  onEndpoint?: (jwks: RefreshingJwks) => void;
}

const JWKS_FETCH_TIMEOUT_MS = 10_000;

/** A LONG setting of the listener's OAUTHBEARER mechanism. */
function longSetting(config: BrokerConfig, listenerName: string, name: string, fallback: number): number {
  const text = (oauthSetting(config, listenerName, name) ?? String(fallback)).trim();
  const value = Number(text);
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(value)) throw new ConfigError(`Invalid value ${text} for configuration ${name}: Not a number of type LONG`);
  return value;
}

/** A BOOLEAN setting (default false), as Kafka's ConfigDef parses one. */
function booleanSetting(config: BrokerConfig, listenerName: string, name: string): boolean {
  const text = (oauthSetting(config, listenerName, name) ?? 'false').trim().toLowerCase();
  if (text !== 'true' && text !== 'false') throw new ConfigError(`Invalid value ${text} for configuration ${name}: Expected value to be either true or false`);
  return text === 'true';
}

/** Builds the secured validator of a listener; throws ConfigError for missing or unreadable settings. */
export async function securedValidator(config: BrokerConfig, listenerName: string, fs: FileSystem, io: JwksEndpointIo = {}): Promise<TokenValidator> {
  const url = oauthSetting(config, listenerName, 'sasl.oauthbearer.jwks.endpoint.url')?.trim();
  if (url === undefined || url === '') throw new ConfigError(`${SECURED_VALIDATOR} on listener ${listenerName} needs sasl.oauthbearer.jwks.endpoint.url`);
  const skewText = oauthSetting(config, listenerName, 'sasl.oauthbearer.clock.skew.seconds') ?? String(DEFAULT_CLOCK_SKEW_SECONDS);
  if (!/^\d+$/.test(skewText.trim())) throw new ConfigError(`Invalid value ${skewText} for configuration sasl.oauthbearer.clock.skew.seconds: Not a number of type INT`);
  const audiences = (oauthSetting(config, listenerName, 'sasl.oauthbearer.expected.audience') ?? '').split(',').map((a) => a.trim()).filter((a) => a !== '');
  const issuerText = oauthSetting(config, listenerName, 'sasl.oauthbearer.expected.issuer')?.trim();
  const expectedIssuer = issuerText === undefined || issuerText === '' ? null : issuerText;
  const log = io.log ?? createLogger({ name: `oauthbearer-jwks ${listenerName}` });
  if (audiences.length === 0) {
    if (!booleanSetting(config, listenerName, 'sasl.oauthbearer.allow.unverified.audience')) {
      throw new ConfigError('The OAuth validator for the broker requires "sasl.oauthbearer.expected.audience" to be configured so that the token\'s audience ("aud") claim can be verified, but it was not set. Set "sasl.oauthbearer.expected.audience" to the audience(s) that identify this cluster, or set "sasl.oauthbearer.allow.unverified.audience" to true to accept tokens regardless of their audience.');
    }
    log.warn('The OAuth broker validator is configured with a JWKS endpoint but without "sasl.oauthbearer.expected.audience", and "sasl.oauthbearer.allow.unverified.audience" is set to true, so it will accept a JWT regardless of its "aud" (audience) claim.');
  }
  if (expectedIssuer === null) {
    if (!booleanSetting(config, listenerName, 'sasl.oauthbearer.allow.unverified.issuer')) {
      throw new ConfigError('The OAuth validator for the broker requires "sasl.oauthbearer.expected.issuer" to be configured so that the token\'s issuer ("iss") claim can be verified, but it was not set. Set "sasl.oauthbearer.expected.issuer" to the issuer URL of the OAuth/OIDC provider that signs the tokens, or set "sasl.oauthbearer.allow.unverified.issuer" to true to accept tokens regardless of their issuer.');
    }
    log.warn('The OAuth broker validator is configured with a JWKS endpoint but without "sasl.oauthbearer.expected.issuer", and "sasl.oauthbearer.allow.unverified.issuer" is set to true, so it will accept a JWT bearing any (or no) "iss" (issuer) claim.');
  }
  const claims = {
    clockSkewMs: Number(skewText.trim()) * 1000,
    expectedIssuer,
    expectedAudiences: audiences,
    subClaimName: oauthSetting(config, listenerName, 'sasl.oauthbearer.sub.claim.name') ?? 'sub',
    scopeClaimName: oauthSetting(config, listenerName, 'sasl.oauthbearer.scope.claim.name') ?? 'scope',
  };
  // Kafka 4.4 reads no JWKS URL, file: or http(s), that org.apache.kafka.sasl.oauthbearer.allowed.urls does not list (default: none).
  if (!(io.allowedUrls ?? allowedJwksUrls(process.env)).has(url)) {
    throw new ConfigError(`Invalid value ${url} for configuration sasl.oauthbearer.jwks.endpoint.url: The URL cannot be accessed due to restrictions. Update the environment variable SPOOL_OAUTHBEARER_ALLOWED_URLS (Kafka's system property 'org.apache.kafka.sasl.oauthbearer.allowed.urls') to allow the URL to be accessed.`);
  }
  if (url.startsWith('http:') || url.startsWith('https:')) {
    const refreshMs = longSetting(config, listenerName, 'sasl.oauthbearer.jwks.endpoint.refresh.ms', 3_600_000);
    // Kafka's messages: ConfigurationUtils.validateLong (min 0), then RefreshingHttpsJwks and Retry.
    if (refreshMs < 0) throw new ConfigError('The OAuth configuration option sasl.oauthbearer.jwks.endpoint.refresh.ms value must be at least 0');
    if (refreshMs === 0) throw new ConfigError('JWKS validation key refresh configuration value retryWaitMs value must be positive (sasl.oauthbearer.jwks.endpoint.refresh.ms)');
    const retryBackoffMs = longSetting(config, listenerName, 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms', 100);
    const retryBackoffMaxMs = longSetting(config, listenerName, 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms', 10_000);
    if (retryBackoffMs < 0) throw new ConfigError(`retryBackoffMs value (${retryBackoffMs}) must be non-negative (sasl.oauthbearer.jwks.endpoint.retry.backoff.ms)`);
    if (retryBackoffMaxMs < 0) throw new ConfigError(`retryBackoffMaxMs value (${retryBackoffMaxMs}) must be non-negative (sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms)`);
    if (retryBackoffMaxMs < retryBackoffMs) throw new ConfigError(`retryBackoffMaxMs value (${retryBackoffMaxMs}) is less than retryBackoffMs value (${retryBackoffMs}) (sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms, .retry.backoff.ms)`);
    const fetchJson = io.fetchJson ?? ((target: string) => httpGetJson(target, { timeoutMs: JWKS_FETCH_TIMEOUT_MS }));
    const jwks = new RefreshingJwks({
      url,
      refreshMs,
      retryBackoffMs,
      retryBackoffMaxMs,
      timers: io.timers ?? realTimers,
      fetchKeys: async () => parseJwksValue(await fetchJson(url)),
      log,
    });
    io.onEndpoint?.(jwks);
    try {
      await jwks.init();
    } catch (error) {
      throw new ConfigError(`Could not refresh JWKS from sasl.oauthbearer.jwks.endpoint.url ${url}: ${(error as Error).message}`);
    }
    return jwtValidator({ ...claims, keys: () => jwks.keys, onUnknownKid: (kid, nowMs) => jwks.maybeExpediteRefresh(kid, nowMs), location: url });
  }
  if (!url.startsWith('file:')) throw new ConfigError(`sasl.oauthbearer.jwks.endpoint.url ${url}: Spool reads a JWKS from file:, http: and https: URLs only`);
  let keys: VerificationKey[];
  try {
    keys = parseJwks((await fs.readFile(fileURLToPath(url))).toString('utf8'));
  } catch (error) {
    throw new ConfigError(`Cannot read the JWKS of sasl.oauthbearer.jwks.endpoint.url ${url}: ${(error as Error).message}`);
  }
  return jwtValidator({ ...claims, keys: () => keys });
}

function parseJwks(text: string): VerificationKey[] {
  return parseJwksValue(JSON.parse(text));
}

function parseJwksValue(value: unknown): VerificationKey[] {
  const jwks = (value ?? {}) as { keys?: unknown };
  if (!Array.isArray(jwks.keys)) throw new Error('a JWKS is an object with a "keys" array');
  // As jose4j's JsonWebKeySet, a key that cannot be read (another kty, a secret key, bad parameters) is skipped, not fatal.
  return jwks.keys.flatMap((jwk: Record<string, unknown>) => {
    try {
      return [{
        kid: typeof jwk?.kid === 'string' ? jwk.kid : null,
        kty: String(jwk.kty),
        alg: typeof jwk.alg === 'string' ? jwk.alg : null,
        key: createPublicKey({ key: jwk as never, format: 'jwk' }),
      }];
    } catch {
      return [];
    }
  });
}

const base64url = (part: string): Buffer => {
  if (!/^[-_A-Za-z0-9]*$/.test(part)) throw new InvalidAccessToken('malformed Base64 URL encoded value');
  return Buffer.from(part, 'base64url');
};

function json(part: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(base64url(part).toString('utf8'));
  } catch (error) {
    if (error instanceof InvalidAccessToken) throw error;
    throw new InvalidAccessToken('malformed JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidAccessToken('malformed JSON');
  return value as Record<string, unknown>;
}

export function jwtValidator(options: {
  /** The current keys: read per token, so a refresh swaps them all at once. */
  keys: () => readonly VerificationKey[];
  /** Called when a token names a kid no key has (the endpoint's expedited refresh). */
  onUnknownKid?: (kid: string, nowMs: number) => void;
  location?: string;
  clockSkewMs: number;
  expectedIssuer: string | null;
  expectedAudiences: readonly string[];
  subClaimName: string;
  scopeClaimName: string;
}): TokenValidator {
  return (token, nowMs) => {
      const parts = token.split('.');
      if (parts.length !== 3) throw new InvalidAccessToken(`Malformed JWT provided; expected three sections (header, payload, and signature), but ${parts.length} sections provided`);
      const [headerPart, claimsPart, signaturePart] = parts as [string, string, string];
      const header = json(headerPart);
      const claims = json(claimsPart);
      const algorithm = typeof header.alg === 'string' ? ALGORITHMS[header.alg] : undefined;
      if (algorithm === undefined) throw new InvalidAccessToken(`'${String(header.alg)}' is not a permitted algorithm`);
      const kid = typeof header.kid === 'string' ? header.kid : null;
      const candidates = options.keys().filter((k) => k.kty === algorithm.kty && (k.alg === null || k.alg === header.alg) && (kid === null || k.kid === kid));
      if (candidates.length !== 1) {
        if (candidates.length === 0 && kid !== null) options.onUnknownKid?.(kid, nowMs);
        const from = options.location === undefined ? '' : ` obtained from ${options.location}`;
        throw new InvalidAccessToken(`Unable to find a suitable verification key for JWS w/ header ${JSON.stringify(header)}${from}`);
      }
      const signed = Buffer.from(`${headerPart}.${claimsPart}`, 'ascii');
      const signature = base64url(signaturePart);
      const key = candidates[0]!.key;
      const valid = verify(algorithm.hash, signed, algorithm.ec === true ? { key, dsaEncoding: 'ieee-p1363' } : key, signature);
      if (!valid) throw new InvalidAccessToken('JWS signature is invalid');
      const seconds = (name: string, required: boolean): number | null => {
        const value = claims[name];
        if (value === undefined) {
          if (required) throw new InvalidAccessToken(`No ${name} claim present`);
          return null;
        }
        if (typeof value !== 'number') throw new InvalidAccessToken(`The value of the '${name}' claim is not the expected type`);
        return value;
      };
      const expiration = seconds('exp', true)!;
      seconds('iat', true);
      const notBefore = seconds('nbf', false);
      if (nowMs - options.clockSkewMs >= expiration * 1000) throw new InvalidAccessToken(`The JWT is no longer valid - the evaluation time is on or after the Expiration Time (exp=${expiration})`);
      if (notBefore !== null && nowMs + options.clockSkewMs < notBefore * 1000) throw new InvalidAccessToken(`The JWT is not yet valid as the evaluation time is before the nbf (nbf=${notBefore})`);
      if (options.expectedIssuer !== null && claims.iss !== options.expectedIssuer) throw new InvalidAccessToken(`Issuer (iss) claim value (${String(claims.iss)}) doesn't match expected value of ${options.expectedIssuer}`);
      const audience = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      // No expected audience: sasl.oauthbearer.allow.unverified.audience=true, jose4j's audience check skipped.
      if (options.expectedAudiences.length > 0 && !audience.some((a) => typeof a === 'string' && options.expectedAudiences.includes(a))) {
        throw new InvalidAccessToken(`Audience (aud) claim ${JSON.stringify(claims.aud ?? null)} doesn't contain an acceptable identifier`);
      }
      const subject = claims[options.subClaimName];
      if (typeof subject !== 'string' || subject.trim() === '') throw new InvalidAccessToken(`${options.subClaimName} value must be non-null and non-empty`);
      const scope = claims[options.scopeClaimName];
      const scopes = typeof scope === 'string' ? [scope] : Array.isArray(scope) ? scope : [];
      if (scopes.some((s) => typeof s !== 'string' || s.trim() === '')) throw new InvalidAccessToken(`${options.scopeClaimName} value must be non-null and non-empty`);
      // jose4j reads exp as whole seconds (NumericDate), Kafka's token lifetime is that in milliseconds.
      return { principal: subject.trim(), lifetimeMs: Math.trunc(expiration) * 1000 };
  };
}
