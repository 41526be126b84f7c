/**
 * Real clients over TLS against a real Spool process whose SSL listener
 * requires a client certificate (mTLS, PEM keystore and truststore): Apache
 * Kafka 4.4's Java tools (kafka-topics, console producer and consumer, with
 * security.protocol=SSL and PEM stores) and kcat (librdkafka) produce and
 * consume; a client without a certificate is refused. Certificates are made
 * by the test (test/security/certificates.ts).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { kafkaLibReady, runKafkaTool, TOOL } from '../kafka/kafka.js';
import { kafkaTool as tool, startSecuredSpool } from './secured-spool.js';
import { hasCommand } from '../clients/harness.js';
import { missingToolSkip } from '../clients/scenario.js';
import { makeTestPki } from '../../security/certificates.js';

const pki = makeTestPki();
after(() => pki.remove());
const clientKeyPath = join(pki.dir, 'alice.key');
const clientCertPath = join(pki.dir, 'alice.crt');

const startSslSpool = () =>
  startSecuredSpool('SSL', [
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${pki.serverPemPath}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${pki.caPemPath}`,
    'ssl.client.auth=required',
  ]);

test('Kafka 4.4 Java tools over mTLS: create, produce, consume; no certificate, no service', { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars not resolved: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { spool, bootstrap: sslBootstrap } = await startSslSpool();
  try {
    const sslConfig = join(pki.dir, 'client-ssl.properties');
    const pemLines = (text: string) => text.trim().replace(/\n/g, ' \\\n  ');
    writeFileSync(sslConfig, [
      'security.protocol=SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${pki.caPemPath}`,
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT',
      'ssl.keystore.type=PEM',
      `ssl.keystore.key=${pemLines(pki.client.key)}`,
      `ssl.keystore.certificate.chain=${pemLines(pki.client.cert)}`,
      '',
    ].join('\n'));
    const server = ['--bootstrap-server', sslBootstrap, '--command-config', sslConfig];
    await tool(TOOL.topics, [...server, '--create', '--topic', 'tls-java', '--partitions', '1', '--replication-factor', '1']);
    await tool(TOOL.consoleProducer, [...server, '--topic', 'tls-java'], 'one\ntwo\nthree\n');
    const consumed = await tool(TOOL.consoleConsumer, [...server, '--topic', 'tls-java', '--from-beginning', '--max-messages', '3', '--timeout-ms', '30000']);
    assert.deepEqual(consumed.trim().split('\n'), ['one', 'two', 'three']);

    const noCertificate = join(pki.dir, 'client-no-cert.properties');
    writeFileSync(noCertificate, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${pki.caPemPath}\n`);
    const refused = await runKafkaTool(TOOL.topics, ['--bootstrap-server', sslBootstrap, '--command-config', noCertificate, '--list'], { timeoutMs: 60_000 });
    assert.notEqual(refused.code, 0, 'kafka-topics without a client certificate must fail');
  } finally {
    await spool.stop();
  }
});

test('kcat (librdkafka) over mTLS: produce and consume', { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { spool, bootstrap: sslBootstrap } = await startSslSpool();
  try {
    const tlsArgs = ['-b', sslBootstrap, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${pki.caPemPath}`, '-X', `ssl.certificate.location=${clientCertPath}`, '-X', `ssl.key.location=${clientKeyPath}`];
    const kcat = promisify(execFile);
    const producer = kcat('kcat', [...tlsArgs, '-P', '-t', 'tls-kcat', '-p', '0'], { timeout: 60_000 });
    producer.child.stdin!.end('alpha\nbeta\n');
    await producer;
    const { stdout } = await kcat('kcat', [...tlsArgs, '-C', '-t', 'tls-kcat', '-p', '0', '-o', 'beginning', '-e', '-q'], { timeout: 60_000 });
    assert.deepEqual(stdout.trim().split('\n'), ['alpha', 'beta']);
  } finally {
    await spool.stop();
  }
});
