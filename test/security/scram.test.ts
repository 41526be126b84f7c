/**
 * SCRAM credentials and SCRAM authentication as Kafka serves them:
 * AlterUserScramCredentials writes credentials to the metadata log (stored
 * and server keys from the client's salted password) with Kafka's
 * validation (DUPLICATE_RESOURCE, RESOURCE_NOT_FOUND, UNACCEPTABLE_CREDENTIAL,
 * UNSUPPORTED_SASL_MECHANISM); DescribeUserScramCredentials reports
 * mechanisms and iterations; a credential survives a restart; a SASL_PLAINTEXT
 * listener with SCRAM-SHA-256 and SCRAM-SHA-512 authenticates with it (the
 * server proves it knows the credential), and refuses a wrong password, an
 * unknown user and a replayed client-final message with Kafka's generic
 * message; the server's keys match RFC 7677's test vector.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac, randomBytes } from 'node:crypto';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { SaslHandshake } from '../../src/protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../src/protocol/schemas/36-sasl-authenticate.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { AlterUserScramCredentials } from '../../src/protocol/schemas/51-alter-user-scram-credentials.js';
import { DescribeUserScramCredentials } from '../../src/protocol/schemas/50-describe-user-scram-credentials.js';
import { saltedPassword, scramKeys, scramMechanismNamed } from '../../src/security/scram.js';
import { WireClient, call, callOrClosed } from '../server/wire-client.js';
import { ScramClient } from './scram-client.js';

const SHA256 = scramMechanismNamed('SCRAM-SHA-256')!;
const SHA512 = scramMechanismNamed('SCRAM-SHA-512')!;
const SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';

async function withScramBroker(body: (broker: RunningBroker, dir: string) => Promise<void>, dir = mkdtempSync(join(tmpdir(), 'spool-scram-'))): Promise<void> {
  const broker = await startBroker({
    config: {
      'log.dirs': dir,
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
      'listener.security.protocol.map': 'SASL_PLAINTEXT:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512',
      'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config': SCRAM_JAAS,
      'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config': SCRAM_JAAS,
      'connection.failed.authentication.delay.ms': 0,
    },
    logger: silentLogger,
  });
  try {
    await body(broker, dir);
  } finally {
    await broker.stop();
  }
}

const plaintextOf = (broker: RunningBroker) => {
  const listener = broker.broker.listeners.find((l) => l.name === 'PLAINTEXT')!;
  return `${listener.advertisedHost}:${listener.advertisedPort}`;
};

function upsertion(name: string, mechanism = SHA256, password = `${name}-secret`, iterations = 4096) {
  const salt = randomBytes(16);
  return { name, mechanism: mechanism.type, iterations, salt, saltedPassword: saltedPassword(mechanism, password, salt, iterations) };
}

const alter = (client: WireClient, body: { deletions?: { name: string; mechanism: number }[]; upsertions?: ReturnType<typeof upsertion>[] }) =>
  call(client, AlterUserScramCredentials, 0, { deletions: body.deletions ?? [], upsertions: body.upsertions ?? [] });

/** Runs a SCRAM exchange; returns the error of the step that failed, or the server-final verification. */
async function scramLogin(bootstrap: string, mechanism: string, user: string, password: string) {
  const client = await WireClient.connect(bootstrap);
  await call(client, SaslHandshake, 1, { mechanism });
  const scram = new ScramClient(mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512', user, password);
  const first = await call(client, SaslAuthenticate, 2, { authBytes: scram.clientFirst() });
  if (first.errorCode !== ErrorCode.NONE) return { client, error: [first.errorCode, first.errorMessage] as const };
  const final = await call(client, SaslAuthenticate, 2, { authBytes: scram.clientFinal(first.authBytes) });
  if (final.errorCode !== ErrorCode.NONE) return { client, error: [final.errorCode, final.errorMessage] as const };
  return { client, serverVerified: scram.verifiesServer(final.authBytes), serverFirst: first.authBytes, scram };
}

test('the stored and server keys of RFC 7677\'s example (user, pencil, 4096 iterations)', () => {
  const salted = saltedPassword(SHA256, 'pencil', Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'), 4096);
  const keys = scramKeys(SHA256, salted);
  // RFC 7677's server signature for its exchange follows from ServerKey; recompute it from the published messages.
  const authMessage =
    'n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
  assert.equal(createHmac('sha256', keys.serverKey).update(authMessage).digest('base64'), '6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
});

test('AlterUserScramCredentials and DescribeUserScramCredentials, with Kafka\'s validation, and credentials kept across a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-scram-'));
  try {
    await withScramBroker(async (broker) => {
      const admin = await WireClient.connect(plaintextOf(broker));
      const created = await alter(admin, { upsertions: [upsertion('alice'), upsertion('bob', SHA512, 'bob-secret', 8192)] });
      assert.deepEqual(created.results.map((r) => [r.user, r.errorCode]), [['alice', 0], ['bob', 0]]);
      const refused = await alter(admin, {
        deletions: [{ name: 'nobody', mechanism: 1 }, { name: 'carol', mechanism: 1 }],
        upsertions: [upsertion('carol'), upsertion('dave', SHA256, 'x', 1000), upsertion('erin', SHA256, 'x', 20000), { ...upsertion('frank'), mechanism: 9 }, upsertion('')],
      });
      const byUser = new Map(refused.results.map((r) => [r.user, [r.errorCode, r.errorMessage]]));
      assert.deepEqual(byUser.get('nobody'), [ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist']);
      assert.deepEqual(byUser.get('carol'), [ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist']);
      assert.deepEqual(byUser.get('dave'), [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations']);
      assert.deepEqual(byUser.get('erin'), [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations']);
      assert.deepEqual(byUser.get('frank'), [ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism']);
      assert.deepEqual(byUser.get(''), [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty']);
      const twice = await alter(admin, { upsertions: [upsertion('gina'), upsertion('gina', SHA512)] });
      assert.deepEqual(twice.results, [{ user: 'gina', errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' }]);
      const described = await call(admin, DescribeUserScramCredentials, 0, { users: null });
      assert.deepEqual(described.results.map((r) => [r.user, r.errorCode, r.credentialInfos.map((c) => [c.mechanism, c.iterations])]), [['alice', 0, [[1, 4096]]], ['bob', 0, [[2, 8192]]]]);
      const named = await call(admin, DescribeUserScramCredentials, 0, { users: [{ name: 'alice' }, { name: 'zed' }, { name: 'bob' }, { name: 'bob' }] });
      assert.deepEqual(named.results.map((r) => [r.user, r.errorCode, r.errorMessage]), [
        ['alice', 0, null],
        ['bob', ErrorCode.DUPLICATE_RESOURCE, 'Cannot describe SCRAM credentials for the same user twice in a single request: bob'],
        ['zed', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to describe a user credential that does not exist: zed'],
      ]);
      assert.deepEqual((await alter(admin, { deletions: [{ name: 'bob', mechanism: 2 }] })).results, [{ user: 'bob', errorCode: 0, errorMessage: null }]);
      admin.close();
    }, dir);
    await withScramBroker(async (broker) => {
      const admin = await WireClient.connect(plaintextOf(broker));
      const described = await call(admin, DescribeUserScramCredentials, 0, { users: [] });
      assert.deepEqual(described.results.map((r) => r.user), ['alice'], 'alice kept, bob deleted, after a restart');
      admin.close();
    }, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SCRAM-SHA-256 and SCRAM-SHA-512 authenticate with stored credentials; wrong password, unknown user and a replayed final message are refused', async () => {
  await withScramBroker(async (broker) => {
    const admin = await WireClient.connect(plaintextOf(broker));
    await alter(admin, { upsertions: [upsertion('alice', SHA256), upsertion('bob', SHA512)] });
    admin.close();
    const bootstrap = broker.bootstrapServers;
    for (const [mechanism, user] of [['SCRAM-SHA-256', 'alice'], ['SCRAM-SHA-512', 'bob']] as const) {
      const login = await scramLogin(bootstrap, mechanism, user, `${user}-secret`);
      assert.equal(login.serverVerified, true, `${mechanism}: the server proved it knows the credential`);
      assert.equal((await callOrClosed(login.client, Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }))?.brokers.length, 1);
      login.client.close();
    }
    const generic = (mechanism: string) => [ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`];
    const wrong = await scramLogin(bootstrap, 'SCRAM-SHA-256', 'alice', 'nope');
    assert.deepEqual(wrong.error, generic('SCRAM-SHA-256'));
    assert.equal(await wrong.client.next(), null);
    assert.deepEqual((await scramLogin(bootstrap, 'SCRAM-SHA-256', 'mallory', 'x')).error, generic('SCRAM-SHA-256'));
    assert.deepEqual((await scramLogin(bootstrap, 'SCRAM-SHA-512', 'alice', 'alice-secret')).error, generic('SCRAM-SHA-512'), 'alice has no SHA-512 credential');

    // A client-final message captured from one exchange does not authenticate another (its nonce is stale).
    const recorded = await scramLogin(bootstrap, 'SCRAM-SHA-256', 'alice', 'alice-secret');
    recorded.client.close();
    const replay = await WireClient.connect(bootstrap);
    await call(replay, SaslHandshake, 1, { mechanism: 'SCRAM-SHA-256' });
    const first = await call(replay, SaslAuthenticate, 2, { authBytes: recorded.scram!.clientFirst() });
    assert.equal(first.errorCode, ErrorCode.NONE);
    assert.notDeepEqual(first.authBytes, recorded.serverFirst, 'a fresh server nonce');
    const replayed = await call(replay, SaslAuthenticate, 2, { authBytes: recorded.scram!.clientFinal(recorded.serverFirst!) });
    assert.deepEqual([replayed.errorCode, replayed.errorMessage], generic('SCRAM-SHA-256'));
  });
});

test('a client-final nonce that repeats the client nonce before the server-first nonce is accepted (librdkafka before 2.6.1 sends one; Kafka 4.4 refuses it, docs/SKIPPED.md)', async () => {
  // Spool's deliberate leniency, pinned: with an exact comparison, kcat (librdkafka 2.0.2) could never authenticate.
  await withScramBroker(async (broker) => {
    const admin = await WireClient.connect(plaintextOf(broker));
    await alter(admin, { upsertions: [upsertion('alice', SHA256)] });
    admin.close();
    const client = await WireClient.connect(broker.bootstrapServers);
    await call(client, SaslHandshake, 1, { mechanism: 'SCRAM-SHA-256' });
    const scram = new ScramClient('sha256', 'alice', 'alice-secret', 'librdkafka-nonce');
    const first = await call(client, SaslAuthenticate, 1, { authBytes: scram.clientFirst() });
    const serverNonce = /r=([^,]+)/.exec(first.authBytes.toString())![1]!;
    const final = await call(client, SaslAuthenticate, 1, { authBytes: scram.clientFinal(first.authBytes, { nonce: `librdkafka-nonce${serverNonce}` }) });
    assert.equal(final.errorCode, ErrorCode.NONE);
    assert.equal(scram.verifiesServer(final.authBytes), true);
    client.close();
  });
});
