/**
 * OAuthBearerValidatorCallbackHandler with an http JWKS endpoint (Kafka's
 * RefreshingHttpsJwks): a local node:http server serves the JWKS; the
 * refresh timers run on a ManualClock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { saslListenerSettings } from '../../src/security/sasl/config.js';
import type { SaslServer, SaslStep } from '../../src/security/sasl/mechanism.js';
import { SECURED_VALIDATOR, securedValidator } from '../../src/security/sasl/oauth-jwks.js';
import { ALLOWED_URLS_VARIABLE, MISSING_KEY_ID_IN_FLIGHT_MS, type RefreshingJwks } from '../../src/security/sasl/jwks-endpoint.js';
import { OAuthBearerSaslServer } from '../../src/security/sasl/oauthbearer.js';

const NOW_MS = 1_700_000_000_000;
const NOW_S = NOW_MS / 1000;
const REFRESH_MS = 600_000;
const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const firstMessage = (token: string) => Buffer.from(`n,,\u0001auth=Bearer ${token}\u0001\u0001`);
const claims = { sub: 'alice', iat: NOW_S - 5, exp: NOW_S + 3600 };

function signed(kid: string, key: KeyObject): string {
  const input = `${part({ alg: 'RS256', kid })}.${part(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/** Evaluates a token: the principal, or the challenge an invalid one gets. */
function outcome(sasl: SaslServer, message: Buffer): string {
  const step = sasl.evaluate(message) as SaslStep;
  if (step.kind === 'complete') return `principal ${step.authorizationId}`;
  if (step.kind === 'failed') return `failed ${step.message}`;
  return step.token.toString();
}

/** A JWKS endpoint whose answer the test changes; counts the GETs. */
class JwksServer {
  status = 200;
  keys: unknown[] = [];
  requests = 0;
  private constructor(readonly server: Server) {}

  static async start(): Promise<JwksServer> {
    const holder: { endpoint?: JwksServer } = {};
    const server = createServer((request, response) => {
      const endpoint = holder.endpoint!;
      endpoint.requests++;
      if (request.url !== '/jwks' || endpoint.status !== 200) {
        response.writeHead(request.url !== '/jwks' ? 404 : endpoint.status).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: endpoint.keys }));
    });
    holder.endpoint = new JwksServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return holder.endpoint;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/jwks`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const rsaKey = (kid: string) => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey: pair.privateKey, jwk: { ...pair.publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } };
};

function config(url: string, extra: Record<string, string> = {}): BrokerConfig {
  return BrokerConfig.fromObject({
    'sasl.enabled.mechanisms': 'OAUTHBEARER',
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
    'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR,
    'listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks.endpoint.url': url,
    'sasl.oauthbearer.jwks.endpoint.refresh.ms': String(REFRESH_MS),
    // The tokens here carry neither iss nor aud: Kafka 4.4 then needs both opt-outs.
    'sasl.oauthbearer.allow.unverified.issuer': 'true',
    'sasl.oauthbearer.allow.unverified.audience': 'true',
    ...extra,
  });
}

test('an http JWKS endpoint: fetched at start, a new kid picked up by the on-demand refresh (once per kid a minute), a rotation by the periodic refresh; a failed refresh keeps the keys', async () => {
  const endpoint = await JwksServer.start();
  try {
    const first = rsaKey('k1');
    const second = rsaKey('k2');
    const third = rsaKey('k3');
    // A key the broker cannot use is skipped, as jose4j's JsonWebKeySet does.
    endpoint.keys = [first.jwk, { kty: 'oct', kid: 'secret', k: 'c2VjcmV0' }, { kty: 'XYZ', kid: 'odd' }, null];
    const clock = new ManualClock(NOW_MS);
    const warnings: string[] = [];
    let jwks: RefreshingJwks | undefined;
    const validator = await securedValidator(config(endpoint.url, { 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '0', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '0' }), 'SASL_PLAINTEXT', new SimFileSystem(new SeededRandom(1)), {
      timers: clock,
      allowedUrls: new Set([endpoint.url]),
      log: { error() {}, warn: (m) => warnings.push(m), info() {}, debug() {} },
      onEndpoint: (built) => (jwks = built),
    });
    const evaluate = (token: string) => outcome(new OAuthBearerSaslServer(validator, clock), firstMessage(token));
    const invalid = '{"status":"invalid_token"}';
    assert.equal(endpoint.requests, 1);
    assert.equal(evaluate(signed('k1', first.privateKey)), 'principal alice');

    // The issuer adds k2: the first token naming it is refused and asks for a refresh, which picks it up.
    endpoint.keys = [first.jwk, second.jwk];
    assert.equal(evaluate(signed('k2', second.privateKey)), invalid);
    assert.equal(jwks!.refreshing, null, 'the refresh is deferred to the timers');
    clock.advance(0);
    await jwks!.refreshing;
    assert.equal(endpoint.requests, 2);
    assert.equal(evaluate(signed('k2', second.privateKey)), 'principal alice');
    assert.equal(evaluate(signed('k1', first.privateKey)), 'principal alice');

    // An unknown kid asks once per minute: a second token within the minute does not fetch again.
    assert.equal(evaluate(signed('k3', third.privateKey)), invalid);
    clock.advance(0);
    await jwks!.refreshing;
    assert.equal(endpoint.requests, 3);
    assert.equal(evaluate(signed('k3', third.privateKey)), invalid);
    clock.advance(0);
    assert.equal(jwks!.refreshing, null);
    assert.equal(endpoint.requests, 3);
    clock.advance(MISSING_KEY_ID_IN_FLIGHT_MS);
    assert.equal(evaluate(signed('k3', third.privateKey)), invalid);
    clock.advance(0);
    await jwks!.refreshing;
    assert.equal(endpoint.requests, 4);

    // The periodic refresh: k1 is retired and k3 published.
    endpoint.keys = [second.jwk, third.jwk];
    clock.advance(REFRESH_MS - MISSING_KEY_ID_IN_FLIGHT_MS);
    await jwks!.refreshing;
    assert.equal(endpoint.requests, 5);
    assert.equal(evaluate(signed('k1', first.privateKey)), invalid);
    assert.equal(evaluate(signed('k3', third.privateKey)), 'principal alice');
    clock.advance(0);
    await jwks!.refreshing;

    // A refresh answered 500 keeps the keys and logs a warning.
    endpoint.status = 500;
    const before = endpoint.requests;
    clock.advance(REFRESH_MS);
    await jwks!.refreshing;
    assert.equal(endpoint.requests, before + 1);
    assert.match(warnings.at(-1)!, /OAuth JWKS refresh of http:\/\/127\.0\.0\.1:\d+\/jwks encountered an error; not updating local JWKS cache: GET .*: HTTP 500/);
    assert.equal(evaluate(signed('k2', second.privateKey)), 'principal alice');
    assert.equal(evaluate(signed('k3', third.privateKey)), 'principal alice');
    jwks!.close();
    assert.equal(clock.pendingCount, 0);
  } finally {
    await endpoint.stop();
  }
});

test('a failed fetch is retried with the backoff within retry.backoff.max.ms', async () => {
  const endpoint = await JwksServer.start();
  try {
    const first = rsaKey('k1');
    const second = rsaKey('k2');
    endpoint.keys = [first.jwk];
    const clock = new ManualClock(NOW_MS);
    let jwks: RefreshingJwks | undefined;
    const validator = await securedValidator(config(endpoint.url, { 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '100', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '1000' }), 'SASL_PLAINTEXT', new SimFileSystem(new SeededRandom(1)), {
      timers: clock,
      allowedUrls: new Set([endpoint.url]),
      log: { error() {}, warn() {}, info() {}, debug() {} },
      onEndpoint: (built) => (jwks = built),
    });
    endpoint.status = 503;
    endpoint.keys = [second.jwk];
    clock.advance(REFRESH_MS);
    const refresh = jwks!.refreshing!;
    // Attempts at 0, +100, +200 (300), +400 (700), then the 300 ms left of the 1000 ms window (1000); it succeeds on the fifth.
    // (Request 1 was the fetch at start.)
    for (const [waitMs, requests] of [[0, 2], [100, 3], [200, 4], [400, 5]] as const) {
      clock.advance(waitMs);
      while (endpoint.requests < requests || clock.pendingCount < 2) await new Promise((resolve) => setImmediate(resolve));
    }
    endpoint.status = 200;
    clock.advance(300);
    await refresh;
    assert.equal(endpoint.requests, 6, 'the start fetch, then five attempts');
    assert.equal(outcome(new OAuthBearerSaslServer(validator, clock), firstMessage(signed('k2', second.privateKey))), 'principal alice');
    jwks!.close();
  } finally {
    await endpoint.stop();
  }
});

test('an http JWKS endpoint must be allowed, its first fetch failing stops the start, and stopping ends its refresh', async () => {
  const endpoint = await JwksServer.start();
  try {
    const fs = new SimFileSystem(new SeededRandom(1));
    const clock = new ManualClock(NOW_MS);
    const closers: (() => void)[] = [];
    const sources = { scramCredentials: () => undefined, random: new SeededRandom(1), clock, timers: clock, onClose: (close: () => void) => closers.push(close) };
    delete process.env[ALLOWED_URLS_VARIABLE];
    await assert.rejects(
      saslListenerSettings(config(endpoint.url), { name: 'SASL_PLAINTEXT' }, sources, fs),
      /The URL cannot be accessed due to restrictions\. Update the environment variable SPOOL_OAUTHBEARER_ALLOWED_URLS \(Kafka's system property 'org\.apache\.kafka\.sasl\.oauthbearer\.allowed\.urls'\)/,
    );
    assert.equal(endpoint.requests, 0);
    process.env[ALLOWED_URLS_VARIABLE] = `http://elsewhere.example/jwks, ${endpoint.url}`;
    endpoint.status = 404;
    await assert.rejects(saslListenerSettings(config(endpoint.url), { name: 'SASL_PLAINTEXT' }, sources, fs), /Could not refresh JWKS from sasl\.oauthbearer\.jwks\.endpoint\.url http:.*HTTP 404/);
    assert.equal(clock.pendingCount, 0, 'no refresh is scheduled');
    endpoint.status = 200;
    const key = rsaKey('k1');
    endpoint.keys = [key.jwk];
    const listener = await saslListenerSettings(config(endpoint.url), { name: 'SASL_PLAINTEXT' }, sources, fs);
    assert.equal(outcome(listener.newServer('OAUTHBEARER'), firstMessage(signed('k1', key.privateKey))), 'principal alice');
    assert.equal(clock.nextDueMs(), NOW_MS + REFRESH_MS, 'the periodic refresh runs on the node timers');
    for (const close of closers) close();
    assert.equal(clock.pendingCount, 0, 'the node stopping ends the periodic refresh');
    await assert.rejects(securedValidator(config(endpoint.url, { 'sasl.oauthbearer.jwks.endpoint.refresh.ms': '0' }), 'SASL_PLAINTEXT', fs, { allowedUrls: new Set([endpoint.url]) }), /retryWaitMs value must be positive/);
    const refused = async (extra: Record<string, string>, message: RegExp) => assert.rejects(securedValidator(config(endpoint.url, extra), 'SASL_PLAINTEXT', fs, { allowedUrls: new Set([endpoint.url]), log: silentLogger }), message);
    await refused({ 'sasl.oauthbearer.jwks.endpoint.refresh.ms': '-1' }, /refresh\.ms value must be at least 0/);
    await refused({ 'sasl.oauthbearer.jwks.endpoint.refresh.ms': 'soon' }, /Invalid value soon for configuration sasl\.oauthbearer\.jwks\.endpoint\.refresh\.ms: Not a number of type LONG/);
    await refused({ 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '-5' }, /retryBackoffMs value \(-5\) must be non-negative/);
    await refused({ 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '500', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '100' }, /retryBackoffMaxMs value \(100\) is less than retryBackoffMs value \(500\)/);
    assert.equal(endpoint.requests, 2, 'a refused setting fetches nothing');
  } finally {
    delete process.env[ALLOWED_URLS_VARIABLE];
    await endpoint.stop();
  }
});
