/**
 * SASL on SASL_PLAINTEXT and SASL_SSL listeners, as Kafka's
 * SaslServerAuthenticator serves it, with PLAIN users from the listener's
 * JAAS entry: ApiVersions, SaslHandshake v1 and SaslAuthenticate
 * authenticate a connection; SaslHandshake v0 with bare token frames too;
 * nothing else is served first (closed, or ILLEGAL_SASL_STATE during the
 * exchange); a wrong password gets SASL_AUTHENTICATION_FAILED with Kafka's
 * message and a closed connection; an unknown mechanism
 * UNSUPPORTED_SASL_MECHANISM; a frame over sasl.server.max.receive.size
 * before authentication closes; after authentication SASL requests get
 * ILLEGAL_SASL_STATE; and the broker keeps serving others throughout.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { encodeRequest } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { SaslHandshake } from '../../src/protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../src/protocol/schemas/36-sasl-authenticate.js';
import type { TlsConnectOptions } from '../../src/io/net.js';
import { WireClient, call, callOrClosed } from '../server/wire-client.js';
import { makeTestPki } from './certificates.js';

const pki = makeTestPki();
after(() => pki.remove());

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';

async function withSaslBroker(protocol: 'SASL_PLAINTEXT' | 'SASL_SSL', body: (broker: RunningBroker) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'spool-sasl-'));
  const listener = protocol.toLowerCase();
  const broker = await startBroker({
    config: {
      'log.dirs': dir,
      listeners: `${protocol}://127.0.0.1:0,CONTROLLER://127.0.0.1:0`,
      'listener.security.protocol.map': `${protocol}:${protocol},CONTROLLER:PLAINTEXT`,
      'security.inter.broker.protocol': protocol,
      'sasl.enabled.mechanisms': 'PLAIN',
      [`listener.name.${listener}.plain.sasl.jaas.config`]: PLAIN_JAAS,
      'connection.failed.authentication.delay.ms': 0,
      'sasl.server.max.receive.size': 4096,
      ...(protocol === 'SASL_SSL' ? { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': pki.serverPemPath } : {}),
    },
    logger: silentLogger,
  });
  try {
    await body(broker);
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const plainToken = (user: string, password: string, authorizationId = '') => Buffer.from(`${authorizationId}\u0000${user}\u0000${password}`);
const metadata = (client: WireClient) => callOrClosed(client, Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
const apiVersions = (client: WireClient) => call(client, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' });

async function authenticated(bootstrap: string, options: { tls?: TlsConnectOptions } = {}): Promise<WireClient> {
  const client = await WireClient.connect(bootstrap, options);
  const versions = await apiVersions(client);
  assert.ok(versions.apiKeys.some((key) => key.apiKey === SaslAuthenticate.key && key.maxVersion === 2));
  const handshake = await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' });
  assert.deepEqual(handshake, { errorCode: ErrorCode.NONE, mechanisms: ['PLAIN'] });
  const authenticate = await call(client, SaslAuthenticate, 2, { authBytes: plainToken('alice', 'alice-secret') });
  assert.equal(authenticate.errorCode, ErrorCode.NONE);
  assert.equal(authenticate.sessionLifetimeMs, 0);
  return client;
}

test('PLAIN over SaslHandshake v1 and SaslAuthenticate, then requests are served; SASL again is ILLEGAL_SASL_STATE', async () => {
  await withSaslBroker('SASL_PLAINTEXT', async (broker) => {
    const client = await authenticated(broker.bootstrapServers);
    assert.equal((await metadata(client))?.brokers.length, 1);
    assert.deepEqual(await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' }), { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    const again = await call(client, SaslAuthenticate, 1, { authBytes: plainToken('alice', 'alice-secret') });
    assert.equal(again.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    assert.equal(again.errorMessage, 'SaslAuthenticate request received after successful authentication');
    client.close();
  });
});

test('wrong passwords, unknown users and a foreign authorization id get SASL_AUTHENTICATION_FAILED and a closed connection', async () => {
  await withSaslBroker('SASL_PLAINTEXT', async (broker) => {
    const cases: [Buffer, string][] = [
      [plainToken('alice', 'wrong'), 'Authentication failed: Invalid username or password'],
      [plainToken('nobody', 'alice-secret'), 'Authentication failed: Invalid username or password'],
      [plainToken('alice', 'alice-secret', 'admin'), 'Authentication failed: Client requested an authorization id that is different from username'],
      [plainToken('alice', ''), 'Authentication failed: password not specified'],
      [Buffer.from('alice'), 'Invalid SASL/PLAIN response: expected 3 tokens, got 1'],
    ];
    for (const [token, message] of cases) {
      const client = await WireClient.connect(broker.bootstrapServers);
      await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' });
      const failed = await call(client, SaslAuthenticate, 0, { authBytes: token });
      assert.deepEqual([failed.errorCode, failed.errorMessage], [ErrorCode.SASL_AUTHENTICATION_FAILED, message]);
      assert.equal(await client.next(), null, 'closed after the failure');
    }
    (await authenticated(broker.bootstrapServers)).close();
  });
});

test('before authentication: other requests close the connection; during it they get ILLEGAL_SASL_STATE; unknown mechanisms UNSUPPORTED_SASL_MECHANISM', async () => {
  await withSaslBroker('SASL_PLAINTEXT', async (broker) => {
    const early = await WireClient.connect(broker.bootstrapServers);
    assert.equal(await metadata(early), null, 'Metadata before the handshake: closed');

    const during = await WireClient.connect(broker.bootstrapServers);
    await call(during, SaslHandshake, 1, { mechanism: 'PLAIN' });
    const refused = await callOrClosed(during, Metadata, 12, { topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: 'payments' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual(refused?.topics.map((topic) => [topic.name, topic.errorCode]), [['payments', ErrorCode.ILLEGAL_SASL_STATE]]);
    assert.equal(await during.next(), null, 'closed after ILLEGAL_SASL_STATE');

    const twice = await WireClient.connect(broker.bootstrapServers);
    await apiVersions(twice);
    assert.equal(await callOrClosed(twice, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' }), null, 'a second ApiVersions before the handshake closes');

    const unknown = await WireClient.connect(broker.bootstrapServers);
    assert.deepEqual(await call(unknown, SaslHandshake, 1, { mechanism: 'SCRAM-SHA-512' }), { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN'] });
    assert.equal(await unknown.next(), null);

    const oversized = await WireClient.connect(broker.bootstrapServers);
    oversized.send(encodeRequest(SaslHandshake, { apiVersion: 1, correlationId: 1, clientId: 'x'.repeat(5000) }, { mechanism: 'PLAIN' }));
    assert.equal(await oversized.next(), null, 'a frame over sasl.server.max.receive.size closes');
    (await authenticated(broker.bootstrapServers)).close();
  });
});

test('SaslHandshake v0: the PLAIN token travels as a bare frame and is answered by an empty one', async () => {
  await withSaslBroker('SASL_PLAINTEXT', async (broker) => {
    const client = await WireClient.connect(broker.bootstrapServers);
    assert.equal((await call(client, SaslHandshake, 0, { mechanism: 'PLAIN' })).errorCode, ErrorCode.NONE);
    const token = plainToken('admin', 'admin-secret');
    const size = Buffer.alloc(4);
    size.writeInt32BE(token.length);
    client.send([size, token]);
    assert.deepEqual(await client.next(), Buffer.alloc(0));
    assert.equal((await metadata(client))?.brokers.length, 1);
    client.close();

    const wrong = await WireClient.connect(broker.bootstrapServers);
    await call(wrong, SaslHandshake, 0, { mechanism: 'PLAIN' });
    const bad = plainToken('admin', 'nope');
    size.writeInt32BE(bad.length);
    wrong.send([size, bad]);
    assert.equal(await wrong.next(), null, 'a failed bare exchange just closes');
  });
});

test('SASL_SSL: PLAIN inside TLS', async () => {
  await withSaslBroker('SASL_SSL', async (broker) => {
    const client = await authenticated(broker.bootstrapServers, { tls: { ca: [pki.caPem], servername: 'localhost' } });
    assert.equal((await metadata(client))?.brokers.length, 1);
    client.close();
  });
});
