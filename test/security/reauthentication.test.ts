/**
 * SASL re-authentication (KIP-368) over real sockets, with the socket
 * server's time on a ManualClock:
 *
 * - SaslAuthenticate v1+ answers Kafka's session lifetime: the mechanism's
 *   connections.max.reauth.ms (listener- and mechanism-prefixed overrides
 *   first), bounded by an OAUTHBEARER token's remaining lifetime, which
 *   bounds it alone when the setting is 0; PLAIN with the setting at 0
 *   answers 0 and such a session never ends.
 * - A client that re-authenticates (SaslHandshake + SaslAuthenticate on its
 *   authenticated connection) before its session ends keeps being served
 *   across several periods, requests it pipelined ahead of the handshake
 *   included; one that does not is closed at its first request after the
 *   end (not at the end itself), and a SaslHandshake after the end still
 *   re-authenticates, as Kafka's processor checks it first.
 * - Kafka's refusals: another principal is SASL_AUTHENTICATION_FAILED with
 *   Kafka's "Cannot change principals" message and a close; another
 *   mechanism gets its handshake answered and the next frame closes the
 *   connection unanswered; a second re-authentication within a second, or
 *   one on a session without end, is a plain SaslHandshake after
 *   authentication (ILLEGAL_SASL_STATE).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, realEnv } from '../../src/io/env.js';
import { SeededRandom } from '../../src/io/random.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { SaslHandshake } from '../../src/protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../src/protocol/schemas/36-sasl-authenticate.js';
import { encodeRequest } from '../../src/protocol/apis.js';
import { RequestHandlerTable } from '../../src/server/request-handler.js';
import { SocketServer } from '../../src/server/socket-server.js';
import { UNLIMITED_CONNECTIONS } from '../../src/server/connection-quotas.js';
import { defineHandler, type ApiHandler } from '../../src/server/handler.js';
import { saslHandshakeHandler } from '../../src/server/apis/17-sasl-handshake.js';
import { saslAuthenticateHandler } from '../../src/server/apis/36-sasl-authenticate.js';
import { saslListenerSettings } from '../../src/security/sasl/config.js';
import { WireClient, call, callOrClosed } from '../server/wire-client.js';

const START_MS = 1_700_000_000_000;
const LISTENER = 'SASL_PLAINTEXT';
const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";';
const OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;';

/** Metadata answered with an empty cluster: the "any other request" of these tests. */
const metadataHandler = defineHandler({ api: Metadata, handle: () => ({ brokers: [], clusterId: 'reauth', controllerId: 1, topics: [] }) }) as unknown as ApiHandler;

async function withSaslServer<T>(config: Record<string, string | number>, run: (clock: ManualClock, bootstrap: string, server: SocketServer) => Promise<T>): Promise<T> {
  const clock = new ManualClock(START_MS);
  const brokerConfig = BrokerConfig.fromObject({
    'sasl.enabled.mechanisms': 'PLAIN,OAUTHBEARER',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': OAUTH_JAAS,
    'connection.failed.authentication.delay.ms': 0,
    ...config,
  });
  const sasl = await saslListenerSettings(brokerConfig, { name: LISTENER }, { scramCredentials: () => undefined, random: new SeededRandom(1), clock }, realEnv.fs);
  const table = new RequestHandlerTable([metadataHandler, saslHandshakeHandler() as unknown as ApiHandler, saslAuthenticateHandler() as unknown as ApiHandler], silentLogger);
  // Idle connections are never closed here: the clock moves by whole sessions.
  const limits = { requestBytesMax: 1 << 20, queuedRequestsMax: 100, queuedBytesMax: 1 << 20, idleMs: -1, pendingResponseBytesMax: 1 << 20, requestPoolBytes: -1, connectionQuotas: UNLIMITED_CONNECTIONS };
  const server = new SocketServer({ ...realEnv, clock, timers: clock }, table, limits, silentLogger);
  const listener = await server.listen(LISTENER, '127.0.0.1', 0, { sasl });
  try {
    return await run(clock, `127.0.0.1:${listener.port}`, server);
  } finally {
    await server.shutdown();
  }
}

const plainToken = (user: string) => Buffer.from(`\u0000${user}\u0000${user}-secret`);
const metadata = (client: WireClient) => callOrClosed(client, Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });

/** Kafka's unsecured JWS (alg none) for `sub`, expiring `lifetimeMs` after START_MS; the OAUTHBEARER client-first message carrying it. */
function oauthToken(sub: string, lifetimeMs: number): Buffer {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const jws = `${part({ alg: 'none' })}.${part({ sub, iat: START_MS / 1000, exp: (START_MS + lifetimeMs) / 1000 })}.`;
  return Buffer.from(`n,,\u0001auth=Bearer ${jws}\u0001\u0001`);
}

/** SaslHandshake v1 + SaslAuthenticate v2 with `token`; returns the SaslAuthenticate response. */
async function authenticate(client: WireClient, mechanism: string, token: Buffer) {
  assert.equal((await call(client, SaslHandshake, 1, { mechanism })).errorCode, ErrorCode.NONE);
  return call(client, SaslAuthenticate, 2, { authBytes: token });
}

async function connected(bootstrap: string, mechanism: string, token: Buffer): Promise<{ client: WireClient; sessionLifetimeMs: bigint | number }> {
  const client = await WireClient.connect(bootstrap);
  const response = await authenticate(client, mechanism, token);
  assert.equal(response.errorCode, ErrorCode.NONE);
  return { client, sessionLifetimeMs: response.sessionLifetimeMs };
}

/** Lets the server see the connection's close. */
async function closedOnServer(server: SocketServer, count: number): Promise<void> {
  for (let turn = 0; turn < 50 && server.connectionCount !== count; turn++) await nextTurn();
  assert.equal(server.connectionCount, count);
}

test('session lifetimes: connections.max.reauth.ms (mechanism override first), an OAUTHBEARER token\'s lifetime, and 0 for a PLAIN session without end', async () => {
  const lifetimes = async (config: Record<string, string | number>) =>
    withSaslServer(config, async (_clock, bootstrap) => {
      const plain = await connected(bootstrap, 'PLAIN', plainToken('alice'));
      const shortToken = await connected(bootstrap, 'OAUTHBEARER', oauthToken('alice', 30_000));
      plain.client.close();
      shortToken.client.close();
      return [Number(plain.sessionLifetimeMs), Number(shortToken.sessionLifetimeMs)];
    });
  assert.deepEqual(await lifetimes({}), [0, 30_000], 'no setting: PLAIN has no end, the token bounds OAUTHBEARER');
  assert.deepEqual(await lifetimes({ 'connections.max.reauth.ms': 10_000 }), [10_000, 10_000]);
  assert.deepEqual(await lifetimes({ 'connections.max.reauth.ms': 60_000 }), [60_000, 30_000], 'the token ends before the setting');
  const overridden = { 'connections.max.reauth.ms': 60_000, 'listener.name.sasl_plaintext.connections.max.reauth.ms': 20_000, 'listener.name.sasl_plaintext.plain.connections.max.reauth.ms': 5_000 };
  assert.deepEqual(await lifetimes(overridden), [5_000, 20_000], 'the mechanism\'s override, then the listener\'s');
});

test('a client that re-authenticates before each session ends is served across several periods; pipelined requests are answered in order', async () => {
  await withSaslServer({ 'connections.max.reauth.ms': 10_000 }, async (clock, bootstrap, server) => {
    const { client } = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    for (let period = 0; period < 4; period++) {
      clock.advance(9_000);
      assert.ok((await metadata(client)) !== null, `period ${period}: served before the session's end`);
      // A Metadata request pipelined ahead of the handshake is answered first, then the re-authentication.
      client.send(encodeRequest(Metadata, { apiVersion: 12, correlationId: 900 + period, clientId: 'c' }, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
      const pipelined = client.next();
      const handshake = call(client, SaslHandshake, 1, { mechanism: 'PLAIN' });
      assert.equal((await pipelined)?.readInt32BE(0), 900 + period, 'the pipelined Metadata is answered first');
      assert.equal((await handshake).errorCode, ErrorCode.NONE);
      const reauthenticated = await call(client, SaslAuthenticate, 2, { authBytes: plainToken('alice') });
      assert.deepEqual([reauthenticated.errorCode, Number(reauthenticated.sessionLifetimeMs)], [ErrorCode.NONE, 10_000]);
    }
    clock.advance(10_000);
    assert.ok((await metadata(client)) !== null, 'served at the very end of the session (Kafka closes only after it)');
    assert.equal(server.connectionCount, 1);
    client.close();
  });
});

test('a client that does not re-authenticate is closed at its first request after the session ends; a handshake after the end still re-authenticates', async () => {
  await withSaslServer({ 'connections.max.reauth.ms': 10_000 }, async (clock, bootstrap, server) => {
    const idle = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    const late = await connected(bootstrap, 'OAUTHBEARER', oauthToken('alice', 60_000));
    clock.advance(10_001);
    await closedOnServer(server, 2);
    assert.equal(await metadata(idle.client), null, 'closed unanswered');
    await closedOnServer(server, 1);

    assert.equal((await authenticate(late.client, 'OAUTHBEARER', oauthToken('alice', 60_000))).errorCode, ErrorCode.NONE);
    assert.ok((await metadata(late.client)) !== null, 'served again after re-authenticating');
    late.client.close();
  });
});

test('an OAUTHBEARER session without connections.max.reauth.ms ends with its token', async () => {
  await withSaslServer({}, async (clock, bootstrap) => {
    const { client, sessionLifetimeMs } = await connected(bootstrap, 'OAUTHBEARER', oauthToken('alice', 30_000));
    assert.equal(Number(sessionLifetimeMs), 30_000);
    clock.advance(30_000);
    assert.ok((await metadata(client)) !== null);
    clock.advance(1);
    assert.equal(await metadata(client), null);
  });
});

test('re-authentication refuses another principal and another mechanism, as Kafka does', async () => {
  await withSaslServer({ 'connections.max.reauth.ms': 10_000 }, async (_clock, bootstrap) => {
    const { client } = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    const changed = await authenticate(client, 'PLAIN', plainToken('admin'));
    assert.deepEqual([changed.errorCode, changed.errorMessage], [ErrorCode.SASL_AUTHENTICATION_FAILED, 'Cannot change principals during re-authentication from User.alice: User.admin']);
    assert.equal(await client.next(), null, 'closed after the refusal');

    const other = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    assert.deepEqual(await call(other.client, SaslHandshake, 1, { mechanism: 'OAUTHBEARER' }), { errorCode: ErrorCode.NONE, mechanisms: ['PLAIN', 'OAUTHBEARER'] });
    assert.equal(await callOrClosed(other.client, SaslAuthenticate, 2, { authBytes: oauthToken('alice', 60_000) }), null, 'the next frame closes the connection unanswered');

    const wrong = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    const failed = await authenticate(wrong.client, 'PLAIN', Buffer.from('\u0000alice\u0000nope'));
    assert.deepEqual([failed.errorCode, failed.errorMessage], [ErrorCode.SASL_AUTHENTICATION_FAILED, 'Authentication failed: Invalid username or password']);
    assert.equal(await wrong.client.next(), null);
  });
});

test('a second re-authentication within a second, or a SaslHandshake on a session without end, is ILLEGAL_SASL_STATE and the connection stays', async () => {
  await withSaslServer({ 'connections.max.reauth.ms': 10_000 }, async (clock, bootstrap) => {
    const { client } = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    assert.equal((await authenticate(client, 'PLAIN', plainToken('alice'))).errorCode, ErrorCode.NONE, 'the first re-authentication may follow authentication at once');
    clock.advance(999);
    assert.deepEqual(await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' }), { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    clock.advance(1);
    assert.equal((await authenticate(client, 'PLAIN', plainToken('alice'))).errorCode, ErrorCode.NONE, 'a second later it is served');
    client.close();
  });
  await withSaslServer({}, async (clock, bootstrap) => {
    const { client } = await connected(bootstrap, 'PLAIN', plainToken('alice'));
    assert.deepEqual(await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' }), { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    clock.advance(365 * 24 * 3600 * 1000);
    assert.ok((await metadata(client)) !== null, 'a session without end is served a year later');
    client.close();
  });
});
