/**
 * SASL/OAUTHBEARER's server (src/security/sasl/oauthbearer.ts) against
 * Kafka's OAuthBearerSaslServer and unsecured validator: the RFC 7628 client
 * first message, the unsecured JWS checks (alg none, no signature, exp
 * required, iat, clock skew, principal and scope claims), the
 * {"status":...} challenge followed by failure, and the authorization id.
 */
import { test } from 'node:test';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { SECURED_VALIDATOR } from '../../src/security/sasl/oauth-jwks.js';
import assert from 'node:assert/strict';
import { BrokerConfig } from '../../src/common/config.js';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { saslListenerSettings } from '../../src/security/sasl/config.js';
import type { SaslServer, SaslStep } from '../../src/security/sasl/mechanism.js';
import { OAuthBearerSaslServer, unsecuredValidator, unsecuredValidatorOptions } from '../../src/security/sasl/oauthbearer.js';

const NOW_MS = 1_700_000_000_000;
const NOW_S = NOW_MS / 1000;
const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jws = (claims: object, header: object = { alg: 'none' }, signature = '') => `${part(header)}.${part(claims)}.${signature}`;
const firstMessage = (token: string, authzid = '') => Buffer.from(`n,${authzid === '' ? '' : `a=${authzid}`},\u0001auth=Bearer ${token}\u0001\u0001`);

function server(options: Record<string, string> = {}) {
  return new OAuthBearerSaslServer(unsecuredValidator(unsecuredValidatorOptions(new Map(Object.entries(options)))), new ManualClock(NOW_MS));
}

/** Evaluates a token; an invalid one must get a challenge, then fail with that challenge's text once the client sends \x01. */
function outcome(sasl: SaslServer, message: Buffer): string {
  const step = sasl.evaluate(message) as SaslStep;
  if (step.kind === 'complete') return `principal ${step.authorizationId}`;
  if (step.kind === 'failed') return `failed ${step.message}`;
  const challenge = step.token.toString();
  const after = sasl.evaluate(Buffer.from([1]));
  assert.deepEqual(after, { kind: 'failed', message: challenge, reveal: true }, 'the exchange fails with the error text after the client acknowledges it');
  return challenge;
}

test('a valid unsecured JWS authenticates its sub claim; extensions and a matching authorization id are accepted', () => {
  assert.equal(outcome(server(), firstMessage(jws({ sub: 'alice', iat: NOW_S - 10, exp: NOW_S + 60 }))), 'principal alice');
  assert.equal(outcome(server(), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60 }), 'alice')), 'principal alice');
  const withExtension = Buffer.from(`n,,\u0001traceId=abc\u0001auth=Bearer ${jws({ sub: 'alice', exp: NOW_S + 60 })}\u0001\u0001`);
  assert.equal(outcome(server(), withExtension), 'principal alice');
  assert.equal(outcome(server({ unsecuredValidatorPrincipalClaimName: 'user' }), firstMessage(jws({ user: 'bob', sub: 'x', exp: NOW_S + 60 }))), 'principal bob');
});

test('invalid tokens get {"status":"invalid_token"} and then fail', () => {
  const invalid = '{"status":"invalid_token"}';
  const refused: object[] = [
    { sub: 'alice', exp: NOW_S }, // expired (now is on or after exp)
    { sub: 'alice', exp: NOW_S - 100 },
    { sub: 'alice', iat: NOW_S + 5, exp: NOW_S + 60 }, // issued in the future
    { sub: 'alice' }, // no exp
    { exp: NOW_S + 60 }, // no principal
    { sub: '  ', exp: NOW_S + 60 },
    { sub: 42, exp: NOW_S + 60 },
    { sub: 'alice', exp: 'tomorrow' },
  ];
  for (const claims of refused) assert.equal(outcome(server(), firstMessage(jws(claims))), invalid, JSON.stringify(claims));
  assert.equal(outcome(server(), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60 }, { alg: 'HS256' }))), invalid, 'alg must be none');
  assert.equal(outcome(server(), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60 }, { alg: 'none' }, 'c2ln'))), invalid, 'no signature');
  assert.equal(outcome(server(), firstMessage('bm90.anNvbg.')), invalid, 'claims that are not JSON');
});

test('the allowable clock skew widens exp and iat by its milliseconds', () => {
  const skewed = { unsecuredValidatorAllowableClockSkewMs: '2000' };
  assert.equal(outcome(server(skewed), firstMessage(jws({ sub: 'alice', exp: NOW_S - 1 }))), 'principal alice');
  assert.equal(outcome(server(skewed), firstMessage(jws({ sub: 'alice', iat: NOW_S + 1, exp: NOW_S + 60 }))), 'principal alice');
  assert.equal(outcome(server(skewed), firstMessage(jws({ sub: 'alice', exp: NOW_S - 2 }))), '{"status":"invalid_token"}');
  assert.throws(() => unsecuredValidatorOptions(new Map([['unsecuredValidatorAllowableClockSkewMs', '-1']])), /must not be negative/);
});

test('required scope: a token lacking one gets insufficient_scope with the required scope', () => {
  const required = { unsecuredValidatorRequiredScope: 'read write' };
  assert.equal(outcome(server(required), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60, scope: 'write read admin' }))), 'principal alice');
  assert.equal(outcome(server(required), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60, scope: ['read', 'write'] }))), 'principal alice');
  assert.equal(outcome(server(required), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60, scope: 'read' }))), '{"status":"insufficient_scope", "scope":"[read, write]"}');
  const renamed = { ...required, unsecuredValidatorScopeClaimName: 'scp' };
  assert.equal(outcome(server(renamed), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60, scp: 'read write' }))), 'principal alice');
});

test('malformed client first messages and a different authorization id fail', () => {
  const token = jws({ sub: 'alice', exp: NOW_S + 60 });
  const failures = [
    Buffer.from(`y,,\u0001auth=Bearer ${token}\u0001\u0001`),
    Buffer.from(`n,,\u0001auth=Bearer ${token}\u0001`),
    Buffer.from(`n,,\u0001other=x\u0001\u0001`),
    Buffer.from(`n,,\u0001auth=Basic ${token}\u0001\u0001`),
    Buffer.from(`n,,\u0001auth=Bearer\u0001\u0001`),
    Buffer.from([1]), // \x01 with no error to acknowledge
  ];
  for (const message of failures) assert.equal(server().evaluate(message).kind, 'failed', JSON.stringify(message.toString()));
  assert.equal(
    outcome(server(), firstMessage(token, 'bob')),
    "failed Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)",
  );
});

test('a listener enables OAUTHBEARER with its OAuthBearerLoginModule entry; another server callback handler stops the start', async () => {
  const jaas = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";';
  const settings = {
    'sasl.enabled.mechanisms': 'OAUTHBEARER',
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': jaas,
  };
  const sources = { scramCredentials: () => undefined, random: new SeededRandom(1), clock: new ManualClock(NOW_MS) };
  const fs = new SimFileSystem(new SeededRandom(2));
  const listener = await saslListenerSettings(BrokerConfig.fromObject(settings), { name: 'SASL_PLAINTEXT' }, sources, fs);
  assert.deepEqual(listener.enabledMechanisms, ['OAUTHBEARER']);
  assert.equal(outcome(listener.newServer('OAUTHBEARER'), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60, scope: 'kafka' }))), 'principal alice');
  assert.equal(outcome(listener.newServer('OAUTHBEARER'), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60 }))), '{"status":"insufficient_scope", "scope":"[kafka]"}');
  await assert.rejects(
    saslListenerSettings(BrokerConfig.fromObject({ ...settings, 'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': 'com.example.MyHandler' }), { name: 'SASL_PLAINTEXT' }, sources, fs),
    /Spool's OAUTHBEARER serves only org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler/,
  );
  await assert.rejects(
    saslListenerSettings(BrokerConfig.fromObject({ ...settings, 'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR, 'sasl.oauthbearer.jwks.endpoint.url': 'https://127.0.0.1/jwks', 'sasl.oauthbearer.expected.issuer': 'https://issuer.example', 'sasl.oauthbearer.expected.audience': 'kafka' }), { name: 'SASL_PLAINTEXT' }, sources, fs),
    /The URL cannot be accessed due to restrictions\. Update the environment variable SPOOL_OAUTHBEARER_ALLOWED_URLS/,
  );
  await assert.rejects(
    saslListenerSettings(BrokerConfig.fromObject({ ...settings, 'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required;' }), { name: 'SASL_PLAINTEXT' }, sources, fs),
    /OAUTHBEARER needs org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule/,
  );
});

test('OAuthBearerValidatorCallbackHandler with a JWKS file: signed tokens (RS256, ES256) with the expected issuer and audience authenticate; others get invalid_token', async () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const fs = new SimFileSystem(new SeededRandom(2));
  await fs.writeFileAtomic('/jwks.json', Buffer.from(JSON.stringify({
    keys: [
      { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
      { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1' },
    ],
  })));
  const config = BrokerConfig.fromObject({
    'sasl.enabled.mechanisms': 'OAUTHBEARER',
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
    'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR,
    'listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks.endpoint.url': 'file:///jwks.json',
    'sasl.oauthbearer.expected.issuer': 'https://issuer.example',
    'sasl.oauthbearer.expected.audience': 'kafka,other',
    'sasl.oauthbearer.clock.skew.seconds': '10',
  });
  const sources = { scramCredentials: () => undefined, random: new SeededRandom(1), clock: new ManualClock(NOW_MS) };
  // As Kafka 4.4, a file: JWKS URL too must be allowed (org.apache.kafka.sasl.oauthbearer.allowed.urls, here SPOOL_OAUTHBEARER_ALLOWED_URLS).
  delete process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS;
  await assert.rejects(saslListenerSettings(config, { name: 'SASL_PLAINTEXT' }, sources, fs), /The URL cannot be accessed due to restrictions/);
  process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS = 'file:///jwks.json';
  let listener: Awaited<ReturnType<typeof saslListenerSettings>>;
  try {
    listener = await saslListenerSettings(config, { name: 'SASL_PLAINTEXT' }, sources, fs);
  } finally {
    delete process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS;
  }
  const signed = (claims: object, header: Record<string, string> = { alg: 'RS256', kid: 'rsa-1' }, key: KeyObject = rsa.privateKey) => {
    const input = `${part(header)}.${part(claims)}`;
    const signature = sign('sha256', Buffer.from(input), header.alg!.startsWith('ES') ? { key, dsaEncoding: 'ieee-p1363' } : key);
    return `${input}.${signature.toString('base64url')}`;
  };
  const good = { sub: 'alice', iss: 'https://issuer.example', aud: 'kafka', iat: NOW_S - 5, exp: NOW_S + 60, scope: 'read' };
  const evaluate = (token: string) => outcome(listener.newServer('OAUTHBEARER'), firstMessage(token));
  assert.equal(evaluate(signed(good)), 'principal alice');
  assert.equal(evaluate(signed({ ...good, aud: ['x', 'other'], exp: NOW_S - 5 })), 'principal alice', 'an audience among the expected, exp within the clock skew');
  assert.equal(evaluate(signed(good, { alg: 'ES256', kid: 'ec-1' }, ec.privateKey)), 'principal alice');
  const invalid = '{"status":"invalid_token"}';
  const refused: [string, string][] = [
    ['another key', signed(good, { alg: 'RS256', kid: 'rsa-1' }, stranger.privateKey)],
    ['an unknown kid', signed(good, { alg: 'RS256', kid: 'rsa-2' })],
    ['alg none', `${part({ alg: 'none' })}.${part(good)}.`],
    ['a tampered payload', `${signed(good).split('.')[0]}.${part({ ...good, sub: 'mallory' })}.${signed(good).split('.')[2]}`],
    ['expired beyond the skew', signed({ ...good, exp: NOW_S - 11 })],
    ['not yet valid', signed({ ...good, nbf: NOW_S + 11 })],
    ['no iat', signed({ ...good, iat: undefined })],
    ['another issuer', signed({ ...good, iss: 'https://elsewhere.example' })],
    ['another audience', signed({ ...good, aud: 'billing' })],
    ['no audience', signed({ ...good, aud: undefined })],
    ['a blank subject', signed({ ...good, sub: ' ' })],
  ];
  for (const [why, token] of refused) assert.equal(evaluate(token), invalid, why);
});

test('OAuthBearerValidatorCallbackHandler needs an expected audience and issuer unless sasl.oauthbearer.allow.unverified.* opt out, which then accept any or none', async () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const fs = new SimFileSystem(new SeededRandom(2));
  await fs.writeFileAtomic('/jwks.json', Buffer.from(JSON.stringify({ keys: [{ ...rsa.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256' }] })));
  const base = {
    'sasl.enabled.mechanisms': 'OAUTHBEARER',
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
    'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR,
    'sasl.oauthbearer.jwks.endpoint.url': 'file:///jwks.json',
  };
  const sources = { scramCredentials: () => undefined, random: new SeededRandom(1), clock: new ManualClock(NOW_MS) };
  const settings = (extra: Record<string, string>) => saslListenerSettings(BrokerConfig.fromObject({ ...base, ...extra }), { name: 'SASL_PLAINTEXT' }, sources, fs);
  process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS = 'file:///jwks.json';
  try {
    await assert.rejects(settings({ 'sasl.oauthbearer.expected.issuer': 'https://issuer.example' }), /requires "sasl.oauthbearer.expected.audience" to be configured .* or set "sasl.oauthbearer.allow.unverified.audience" to true/);
    await assert.rejects(settings({ 'sasl.oauthbearer.expected.audience': 'kafka' }), /requires "sasl.oauthbearer.expected.issuer" to be configured .* or set "sasl.oauthbearer.allow.unverified.issuer" to true/);
    await assert.rejects(settings({ 'sasl.oauthbearer.expected.audience': 'kafka', 'sasl.oauthbearer.allow.unverified.issuer': 'yes' }), /Invalid value yes for configuration sasl.oauthbearer.allow.unverified.issuer/);
    const listener = await settings({ 'sasl.oauthbearer.allow.unverified.issuer': 'true', 'sasl.oauthbearer.allow.unverified.audience': 'TRUE' });
    const signed = (claims: object) => {
      const input = `${part({ alg: 'RS256', kid: 'k1' })}.${part(claims)}`;
      return `${input}.${sign('sha256', Buffer.from(input), rsa.privateKey).toString('base64url')}`;
    };
    const evaluate = (token: string) => outcome(listener.newServer('OAUTHBEARER'), firstMessage(token));
    const good = { sub: 'alice', iat: NOW_S - 5, exp: NOW_S + 60 };
    assert.equal(evaluate(signed(good)), 'principal alice', 'no iss, no aud');
    assert.equal(evaluate(signed({ ...good, iss: 'https://anyone.example', aud: ['billing'] })), 'principal alice', 'any iss, any aud');
  } finally {
    delete process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS;
  }
});
