/**
 * Kafka's dynamic keystore update on a broker's SSL listener:
 *
 * - IncrementalAlterConfigs SET of `listener.name.ssl.ssl.keystore.location`
 *   (and of the inline PEM `ssl.keystore.key` / `ssl.keystore.certificate.chain`)
 *   with a renewed certificate (same subject, same SANs) is accepted: a TLS
 *   client connecting afterwards is served the new certificate, and a
 *   connection opened before keeps being served.
 * - Kafka's refusals, INVALID_REQUEST with its messages, and the listener
 *   keeps its certificate: a certificate of another subject (unless
 *   ssl.allow.dn.changes), one missing a SAN of the old (unless
 *   ssl.allow.san.changes), an unreadable keystore, a store setting without
 *   the listener prefix (AlterConfigs too), at the cluster default, or for
 *   another broker id.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { AlterConfigs } from '../../src/protocol/schemas/33-alter-configs.js';
import { IncrementalAlterConfigs } from '../../src/protocol/schemas/44-incremental-alter-configs.js';
import { WireClient, call } from '../server/wire-client.js';
import { makeTestPki } from './certificates.js';

const pki = makeTestPki();
after(() => pki.remove());

const BROKER = 4;
const LOCATION = 'listener.name.ssl.ssl.keystore.location';
const renewed = pki.issueServerKeystore({ name: 'renewed', subject: '/CN=localhost', sans: 'IP:127.0.0.1,DNS:localhost' });
const renewedAgain = pki.issueServerKeystore({ name: 'renewed-again', subject: '/CN=localhost', sans: 'IP:127.0.0.1,DNS:localhost,DNS:broker.example' });
const otherSubject = pki.issueServerKeystore({ name: 'other-subject', subject: '/CN=elsewhere', sans: 'IP:127.0.0.1,DNS:localhost' });
const fewerSans = pki.issueServerKeystore({ name: 'fewer-sans', subject: '/CN=localhost', sans: 'DNS:localhost' });

async function withSslBroker(settings: Record<string, string>, body: (broker: RunningBroker, admin: WireClient) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'spool-ssl-reload-'));
  const broker = await startBroker({
    config: {
      'node.id': BROKER,
      'log.dirs': dir,
      listeners: 'SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
      'listener.security.protocol.map': 'SSL:SSL,CONTROLLER:PLAINTEXT',
      'security.inter.broker.protocol': 'SSL',
      'controller.quorum.voters': '',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': pki.serverPemPath,
      ...settings,
    },
    logger: silentLogger,
  });
  const admin = await WireClient.connect(broker.bootstrapServers, { tls: { ca: [pki.caPem], servername: 'localhost' } });
  try {
    await body(broker, admin);
  } finally {
    admin.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The certificate a new TLS connection to the broker is served (its PEM). */
async function servedCertificate(bootstrap: string): Promise<string> {
  const [host, port] = bootstrap.split(':');
  const socket = tlsConnect({ host: host!, port: Number(port), ca: [pki.caPem], servername: 'localhost' });
  await once(socket, 'secureConnect');
  const certificate = socket.getPeerX509Certificate()!.toString();
  socket.destroy();
  return certificate;
}

const leaf = (chain: string) => new X509Certificate(chain).toString();

async function setBrokerConfigs(admin: WireClient, resourceName: string, configs: Record<string, string>) {
  const response = await call(admin, IncrementalAlterConfigs, 1, {
    resources: [{ resourceType: 4, resourceName, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) }],
    validateOnly: false,
  });
  const [result] = response.responses;
  return [result!.errorCode, result!.errorMessage];
}

const refusal = (reason: string) => `Invalid value org.apache.kafka.common.config.ConfigException: Validation of dynamic config update of SSLFactory failed: org.apache.kafka.common.config.ConfigException: ${reason} for configuration Invalid dynamic configuration`;

test('a renewed keystore is served to new connections; open connections stay', async () => {
  await withSslBroker({}, async (broker, admin) => {
    assert.equal(await servedCertificate(broker.bootstrapServers), leaf(pki.serverChain));
    assert.deepEqual(await setBrokerConfigs(admin, String(BROKER), { [LOCATION]: renewed.path }), [ErrorCode.NONE, null]);
    assert.equal(await servedCertificate(broker.bootstrapServers), leaf(renewed.chain), 'a new connection sees the new certificate');
    assert.equal((await call(admin, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' })).errorCode, ErrorCode.NONE, 'the connection opened before is served');

    // The PEM forms, inline; a certificate with more SANs than the old keeps all of them.
    const inline = { 'listener.name.ssl.ssl.keystore.key': renewedAgain.key, 'listener.name.ssl.ssl.keystore.certificate.chain': renewedAgain.chain };
    assert.deepEqual(await setBrokerConfigs(admin, String(BROKER), inline), [ErrorCode.NONE, null]);
    assert.equal(await servedCertificate(broker.bootstrapServers), leaf(renewedAgain.chain));
  });
});

test('Kafka\'s refusals: another subject, a missing SAN, an unreadable keystore, no listener prefix, the cluster default, another broker', async () => {
  await withSslBroker({}, async (broker, admin) => {
    const [dnCode, dnMessage] = await setBrokerConfigs(admin, String(BROKER), { [LOCATION]: otherSubject.path });
    assert.equal(dnCode, ErrorCode.INVALID_REQUEST);
    assert.equal(dnMessage, refusal('Keystore DistinguishedName does not match:  existing={alias=kafka, DN=CN=localhost}, new={alias=kafka, DN=CN=elsewhere}'));
    const [sanCode, sanMessage] = await setBrokerConfigs(admin, String(BROKER), { [LOCATION]: fewerSans.path });
    assert.equal(sanCode, ErrorCode.INVALID_REQUEST);
    assert.match(String(sanMessage), /^Invalid value .*Keystore SubjectAltNames do not match: {2}existing=\{alias=kafka, SAN=\[\[7, 127\.0\.0\.1\], \[2, localhost\]\]\}, new=\{alias=kafka, SAN=\[\[2, localhost\]\]\}/);
    const [missingCode, missingMessage] = await setBrokerConfigs(admin, String(BROKER), { [LOCATION]: join(pki.dir, 'no-such-keystore.pem') });
    assert.equal(missingCode, ErrorCode.INVALID_REQUEST);
    assert.match(String(missingMessage), /Validation of dynamic config update of SSLFactory failed: .*no-such-keystore\.pem/);
    assert.equal(await servedCertificate(broker.bootstrapServers), leaf(pki.serverChain), 'the listener keeps its certificate');

    assert.deepEqual(await setBrokerConfigs(admin, String(BROKER), { 'ssl.keystore.location': renewed.path }), [
      ErrorCode.INVALID_REQUEST,
      'These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.location]',
    ]);
    assert.deepEqual(await setBrokerConfigs(admin, '', { [LOCATION]: renewed.path }), [
      ErrorCode.INVALID_REQUEST,
      `Cannot update these configs at default cluster level, broker id must be specified: [${LOCATION}]`,
    ]);
    assert.deepEqual(await setBrokerConfigs(admin, '7', { [LOCATION]: renewed.path }), [ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${BROKER}, but received 7`]);
    const legacy = await call(admin, AlterConfigs, 1, { resources: [{ resourceType: 4, resourceName: String(BROKER), configs: [{ name: LOCATION, value: otherSubject.path }] }], validateOnly: false });
    assert.equal(legacy.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST, 'AlterConfigs is checked the same');
  });
});

test('ssl.allow.dn.changes and ssl.allow.san.changes let a keystore change its subject and SANs', async () => {
  await withSslBroker({ 'listener.name.ssl.ssl.allow.dn.changes': 'true', 'listener.name.ssl.ssl.allow.san.changes': 'true' }, async (broker, admin) => {
    assert.deepEqual(await setBrokerConfigs(admin, String(BROKER), { [LOCATION]: otherSubject.path }), [ErrorCode.NONE, null]);
    assert.deepEqual(await setBrokerConfigs(admin, String(BROKER), { [LOCATION]: fewerSans.path }), [ErrorCode.NONE, null]);
    assert.equal(await servedCertificate(broker.bootstrapServers), leaf(fewerSans.chain));
  });
});
