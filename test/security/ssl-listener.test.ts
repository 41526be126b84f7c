/**
 * SSL listeners: a broker started with `listeners=SSL://...` serves Kafka
 * requests over TLS with its keystore (PEM file, inline PEM with an
 * encrypted key through a listener.name override, PKCS12, and a JKS-typed
 * PKCS12 file as the JVM reads it), refuses a true JKS file with a hint,
 * asks for client certificates as ssl.client.auth says (none, requested,
 * required) and refuses untrusted ones, honours ssl.enabled.protocols, and
 * closes a plaintext client on its TLS port while serving others.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { TlsConnectOptions } from '../../src/io/net.js';
import { WireClient, callOrClosed } from '../server/wire-client.js';
import { KEY_PASSWORD, STORE_PASSWORD, makeTestPki } from './certificates.js';

const pki = makeTestPki();
after(() => pki.remove());

async function withSslBroker(settings: Record<string, string>, body: (broker: RunningBroker) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'spool-ssl-'));
  const broker = await startBroker({
    config: { 'log.dirs': dir, listeners: 'SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0', 'listener.security.protocol.map': 'SSL:SSL,CONTROLLER:PLAINTEXT', 'security.inter.broker.protocol': 'SSL', ...settings },
    logger: silentLogger,
  });
  try {
    await body(broker);
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const trustingClient: TlsConnectOptions = { ca: [pki.caPem], servername: 'localhost' };

/** True when ApiVersions is answered over TLS with these client settings; false when the handshake or the connection fails. */
async function served(bootstrap: string, tls: TlsConnectOptions): Promise<boolean> {
  let client: WireClient;
  try {
    client = await WireClient.connect(bootstrap, { tls });
  } catch {
    return false;
  }
  try {
    const response = await callOrClosed(client, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' });
    if (response !== null) assert.equal(response.errorCode, ErrorCode.NONE);
    return response !== null;
  } finally {
    client.close();
  }
}

test('a PEM keystore file serves TLS, and a plaintext client on the TLS port is closed while others are served', async () => {
  await withSslBroker({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': pki.serverPemPath }, async (broker) => {
    assert.equal(await served(broker.bootstrapServers, trustingClient), true);
    const plaintext = await WireClient.connect(broker.bootstrapServers);
    assert.equal(await callOrClosed(plaintext, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' }), null, 'plaintext client closed');
    assert.equal(await served(broker.bootstrapServers, { servername: 'localhost' }), false, 'a client that does not trust the CA gives up');
    assert.equal(await served(broker.bootstrapServers, trustingClient), true, 'still serving');
  });
});

test('inline PEM with an encrypted key, set through listener.name.ssl overrides', async () => {
  const settings = {
    'listener.name.ssl.ssl.keystore.type': 'PEM',
    'listener.name.ssl.ssl.keystore.key': pki.serverEncryptedKey.replace(/\n/g, ' '),
    'listener.name.ssl.ssl.keystore.certificate.chain': pki.serverChain,
    'listener.name.ssl.ssl.key.password': KEY_PASSWORD,
    'ssl.keystore.location': '/nonexistent/keystore.p12',
  };
  await withSslBroker(settings, async (broker) => assert.equal(await served(broker.bootstrapServers, trustingClient), true));
});

test('PKCS12 keystore and truststore with ssl.client.auth=required: only a trusted client certificate gets in', async () => {
  const settings = {
    'ssl.keystore.type': 'PKCS12',
    'ssl.keystore.location': pki.serverP12Path,
    'ssl.keystore.password': STORE_PASSWORD,
    'ssl.truststore.type': 'PKCS12',
    'ssl.truststore.location': pki.truststoreP12Path,
    'ssl.truststore.password': STORE_PASSWORD,
    'ssl.client.auth': 'required',
  };
  await withSslBroker(settings, async (broker) => {
    assert.equal(await served(broker.bootstrapServers, { ...trustingClient, ...pki.client }), true);
    assert.equal(await served(broker.bootstrapServers, trustingClient), false, 'no certificate');
    assert.equal(await served(broker.bootstrapServers, { ...trustingClient, ...pki.untrustedClient }), false, 'untrusted certificate');
  });
});

test('ssl.client.auth=requested: no certificate is fine, an untrusted one is refused (as the JVM refuses it)', async () => {
  const settings = { 'ssl.keystore.location': pki.serverP12Path, 'ssl.keystore.password': STORE_PASSWORD, 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': pki.caPemPath, 'ssl.client.auth': 'requested' };
  // ssl.keystore.type stays at Kafka's default JKS: the file is PKCS12, which the JVM reads under that type too.
  await withSslBroker(settings, async (broker) => {
    assert.equal(await served(broker.bootstrapServers, trustingClient), true);
    assert.equal(await served(broker.bootstrapServers, { ...trustingClient, ...pki.client }), true);
    assert.equal(await served(broker.bootstrapServers, { ...trustingClient, ...pki.untrustedClient }), false);
  });
});

test('ssl.enabled.protocols=TLSv1.3 refuses a TLS 1.2 client', async () => {
  await withSslBroker({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': pki.serverPemPath, 'ssl.enabled.protocols': 'TLSv1.3' }, async (broker) => {
    assert.equal(await served(broker.bootstrapServers, { ...trustingClient, maxVersion: 'TLSv1.2' }), false);
    assert.equal(await served(broker.bootstrapServers, trustingClient), true);
  });
});

test('a JKS keystore, a missing keystore and a bad client auth stop the start with a message, before anything binds', async () => {
  const jks = join(pki.dir, 'keystore.jks');
  writeFileSync(jks, Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]));
  const cases: [Record<string, string>, RegExp][] = [
    [{ 'ssl.keystore.location': jks, 'ssl.keystore.password': STORE_PASSWORD }, /names a JKS file.*keytool -importkeystore/],
    [{}, /A TLS listener needs a keystore/],
    [{ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': pki.serverPemPath, 'ssl.client.auth': 'always' }, /ssl.client.auth: String must be one of/],
  ];
  for (const [settings, message] of cases) {
    await assert.rejects(withSslBroker(settings, async () => assert.fail('started')), { name: 'ConfigError', message });
  }
});
