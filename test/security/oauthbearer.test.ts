/**
 * SASL/OAUTHBEARER's server (src/security/sasl/oauthbearer.ts) against
 * Kafka's OAuthBearerSaslServer and unsecured validator: the RFC 7628 client
 * first message, the unsecured JWS checks (alg none, no signature, exp
 * required, iat, clock skew, principal and scope claims), the
 * {"status":...} challenge followed by failure, and the authorization id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConfig } from '../../src/common/config.js';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { saslListenerSettings } from '../../src/security/sasl/config.js';
import type { SaslServer, SaslStep } from '../../src/security/sasl/mechanism.js';
import { OAuthBearerSaslServer, unsecuredValidatorOptions } from '../../src/security/sasl/oauthbearer.js';

const NOW_MS = 1_700_000_000_000;
const NOW_S = NOW_MS / 1000;
const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jws = (claims: object, header: object = { alg: 'none' }, signature = '') => `${part(header)}.${part(claims)}.${signature}`;
const firstMessage = (token: string, authzid = '') => Buffer.from(`n,${authzid === '' ? '' : `a=${authzid}`},\u0001auth=Bearer ${token}\u0001\u0001`);

function server(options: Record<string, string> = {}) {
  return new OAuthBearerSaslServer(unsecuredValidatorOptions(new Map(Object.entries(options))), new ManualClock(NOW_MS));
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

test('a listener enables OAUTHBEARER with its OAuthBearerLoginModule entry; a server callback handler (JWKS validation) stops the start', () => {
  const jaas = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";';
  const settings = {
    'sasl.enabled.mechanisms': 'OAUTHBEARER',
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': jaas,
  };
  const sources = { scramCredentials: () => undefined, random: new SeededRandom(1), clock: new ManualClock(NOW_MS) };
  const listener = saslListenerSettings(BrokerConfig.fromObject(settings), { name: 'SASL_PLAINTEXT' }, sources);
  assert.deepEqual(listener.enabledMechanisms, ['OAUTHBEARER']);
  assert.equal(outcome(listener.newServer('OAUTHBEARER'), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60, scope: 'kafka' }))), 'principal alice');
  assert.equal(outcome(listener.newServer('OAUTHBEARER'), firstMessage(jws({ sub: 'alice', exp: NOW_S + 60 }))), '{"status":"insufficient_scope", "scope":"[kafka]"}');
  const handler = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';
  assert.throws(
    () => saslListenerSettings(BrokerConfig.fromObject({ ...settings, 'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': handler }), { name: 'SASL_PLAINTEXT' }, sources),
    /JWKS validation is not served/,
  );
  assert.throws(
    () => saslListenerSettings(BrokerConfig.fromObject({ ...settings, 'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required;' }), { name: 'SASL_PLAINTEXT' }, sources),
    /OAUTHBEARER needs org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule/,
  );
});
