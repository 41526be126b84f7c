/**
 * SASL re-authentication (KIP-368) with real clients, on a real Spool
 * process and on Apache Kafka 4.4 with the same settings (a SASL_PLAINTEXT
 * listener with PLAIN, connections.max.reauth.ms=2000):
 *
 * - Kafka's Java client (the 4.4 producer and consumer perf tools) produces
 *   and consumes every record for about four reauth periods while it
 *   re-authenticates: its own metrics count successful
 *   re-authentications and no failed one, and it closes no connection.
 * - Spool's test wire client, which authenticates once and never again,
 *   is answered session_lifetime_ms=2000 and is closed at its first request
 *   after the session ended (it waits for the producer to finish, which
 *   takes longer than a session, not for a timer).
 * - On Spool, its debug log shows the re-authentications and no connection
 *   closed for an expired session but the wire client's.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kafkaLibReady, runKafkaTool, spawnKafkaTool, startKafka, TOOL } from '../kafka/kafka.js';
import { missingToolSkip } from '../clients/scenario.js';
import { freePort } from '../clients/spool-process.js';
import { makeTestPki } from '../../security/certificates.js';
import { kafkaTool as tool, startSecuredSpool } from './secured-spool.js';
import { WireClient, call, callOrClosed } from '../../server/wire-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { Metadata } from '../../../src/protocol/schemas/03-metadata.js';
import { SaslHandshake } from '../../../src/protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../../src/protocol/schemas/36-sasl-authenticate.js';

const pki = makeTestPki();
after(() => pki.remove());

const REAUTH_MS = 2000;
/** Records at RECORDS_PER_S: the run lasts about four sessions. */
const RECORDS = 80;
const RECORDS_PER_S = 10;
const TOPIC = 'reauth';

const BROKER_SASL = [
  'sasl.enabled.mechanisms=PLAIN',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
  `connections.max.reauth.ms=${REAUTH_MS}`,
];

function clientConfig(): string {
  const path = join(pki.dir, 'reauth-client.properties');
  writeFileSync(path, [
    'security.protocol=SASL_PLAINTEXT',
    'sasl.mechanism=PLAIN',
    'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";',
    '',
  ].join('\n'));
  return path;
}

/** A client metric's value from a perf tool's --print-metrics table (`producer-metrics:successful-reauthentication-total:{client-id=...} : 3.000`). */
function metric(output: string, group: string, name: string): number {
  const match = new RegExp(`^${group}:${name}:\\{client-id=[^}]*\\}\\s*:\\s*([0-9.]+)`, 'm').exec(output);
  assert.ok(match !== null, `${group}:${name} in\n${output}`);
  return Number(match[1]);
}

/** A wire client authenticated once with PLAIN, answered Kafka's session lifetime. */
async function authenticatedOnce(bootstrap: string): Promise<WireClient> {
  const client = await WireClient.connect(bootstrap);
  assert.equal((await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.NONE);
  const authenticated = await call(client, SaslAuthenticate, 2, { authBytes: Buffer.from('\u0000alice\u0000alice-secret') });
  assert.deepEqual([authenticated.errorCode, Number(authenticated.sessionLifetimeMs)], [ErrorCode.NONE, REAUTH_MS]);
  return client;
}

/** The scenario both brokers run, against their SASL_PLAINTEXT listener. */
async function reauthenticatingClients(bootstrap: string): Promise<string> {
  const config = clientConfig();
  const server = ['--bootstrap-server', bootstrap, '--command-config', config];
  await tool(TOOL.topics, [...server, '--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1']);
  const once_ = await authenticatedOnce(bootstrap);

  const consumer = spawnKafkaTool(TOOL.consumerPerf, [...server, '--topic', TOPIC, '--group', 'reauth-group', '--num-records', String(RECORDS), '--timeout', '60000', '--print-metrics']);
  let consumerOutput = '';
  consumer.stdout.on('data', (data: Buffer) => { consumerOutput += data.toString(); });
  consumer.stderr.on('data', (data: Buffer) => { consumerOutput += data.toString(); });
  const consumerExit = once(consumer, 'exit');
  const produced = await runKafkaTool(TOOL.producerPerf, [
    ...server, '--topic', TOPIC, '--num-records', String(RECORDS), '--throughput', String(RECORDS_PER_S), '--record-size', '16', '--print-metrics',
  ], { timeoutMs: 90_000 });
  assert.equal(produced.code, 0, produced.stderr);
  assert.match(produced.stdout, new RegExp(`^${RECORDS} records sent`, 'm'));
  const producerMetrics = ['successful-reauthentication-total', 'failed-reauthentication-total', 'successful-authentication-total', 'connection-close-total'].map((name) => `${name}=${metric(produced.stdout, 'producer-metrics', name)}`).join(' ');
  assert.ok(metric(produced.stdout, 'producer-metrics', 'successful-reauthentication-total') >= 1, `the producer re-authenticated: ${producerMetrics}`);
  assert.equal(metric(produced.stdout, 'producer-metrics', 'failed-reauthentication-total'), 0);
  assert.equal(metric(produced.stdout, 'producer-metrics', 'record-error-total'), 0);
  assert.equal(metric(produced.stdout, 'producer-metrics', 'connection-close-total'), 0, 'no connection was closed under the producer');

  const [code] = await consumerExit;
  assert.equal(code, 0, consumerOutput);
  assert.match(consumerOutput, new RegExp(`, ${RECORDS},`), `all ${RECORDS} records consumed`);
  assert.ok(metric(consumerOutput, 'consumer-metrics', 'successful-reauthentication-total') >= 1, 'the consumer re-authenticated');
  assert.equal(metric(consumerOutput, 'consumer-metrics', 'failed-reauthentication-total'), 0);

  // The producer ran longer than a session: the client that never re-authenticated is closed at its next request.
  assert.equal(await callOrClosed(once_, Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }), null);
  const reauthentications = (output: string, group: string) => metric(output, group, 'successful-reauthentication-total');
  return `re-authentications: producer ${reauthentications(produced.stdout, 'producer-metrics')}, consumer ${reauthentications(consumerOutput, 'consumer-metrics')}`;
}

test('Spool: the Java client re-authenticates and keeps producing and consuming; a client that does not is closed after its session', { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars missing: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const level = process.env.SPOOL_LOG_LEVEL;
  process.env.SPOOL_LOG_LEVEL = 'debug';
  const { spool, bootstrap } = await startSecuredSpool('SASL_PLAINTEXT', BROKER_SASL).finally(() => {
    if (level === undefined) delete process.env.SPOOL_LOG_LEVEL;
    else process.env.SPOOL_LOG_LEVEL = level;
  });
  try {
    t.diagnostic(await reauthenticatingClients(bootstrap));
    const log = spool.output();
    assert.ok((log.match(/re-authenticated as User:alice/g) ?? []).length >= 4, log);
    assert.equal((log.match(/its SASL session expired/g) ?? []).length, 1, 'only the wire client was closed for its session');
  } finally {
    await spool.stop();
  }
});

/** A port p with p + 1 free too (Kafka's controller listens on p + 1). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port + 1, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
}

test('Kafka 4.4 with the same settings: the same clients behave the same', { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars missing: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const port = await freePortPair();
  const saslPort = await freePort();
  const kafka = await startKafka({
    port,
    extraConfig: [
      `listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort},CONTROLLER://127.0.0.1:${port + 1}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
      ...BROKER_SASL,
    ],
  });
  try {
    t.diagnostic(await reauthenticatingClients(`127.0.0.1:${saslPort}`));
  } finally {
    await kafka.stop();
  }
});
