/**
 * Real clients authenticating with SASL against a real Spool process:
 * - PLAIN (users from the listener's JAAS entry): Apache Kafka 4.4's Java
 *   tools over SASL_SSL (create, produce, consume; a wrong password fails
 *   with Kafka's message) and kcat (librdkafka) over SASL_PLAINTEXT;
 * - SCRAM: credentials added with Kafka 4.4's kafka-configs
 *   (`--add-config 'SCRAM-SHA-512=[...]' --entity-type users`, which sends
 *   AlterUserScramCredentials) and described back; then the Java tools over
 *   SASL_SSL with SCRAM-SHA-512 and kcat with SCRAM-SHA-256;
 * - SCRAM credentials written by `spool storage format --add-scram` (KIP-900)
 *   into the bootstrap snapshot: kcat authenticates with them on the node's
 *   first start, with no AlterUserScramCredentials;
 * - OAUTHBEARER with Kafka's unsecured JWS validation: kcat's unsecured JWT
 *   (`enable.sasl.oauthbearer.unsecure.jwt`) and the Java tools'
 *   OAuthBearerLoginModule (unsecuredLoginStringClaim_sub) authenticate; a
 *   token without the listener's required scope is refused; with
 *   OAuthBearerValidatorCallbackHandler and a file: JWKS, the Java tools
 *   authenticate with an RS256 token (OAuthBearerLoginCallbackHandler reading
 *   it from a file: token endpoint) and one of the wrong issuer is refused.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { kafkaLibReady, runKafkaTool, TOOL } from '../kafka/kafka.js';
import { hasCommand } from '../clients/harness.js';
import { missingToolSkip } from '../clients/scenario.js';
import { makeTestPki } from '../../security/certificates.js';
import { kafkaTool as tool, startSecuredSpool } from './secured-spool.js';
import { freePort, SPOOL_BIN, startSpool } from '../clients/spool-process.js';

const pki = makeTestPki();
after(() => pki.remove());

const jaas = (users: string) => `org.apache.kafka.common.security.plain.PlainLoginModule required ${users};`;
const plainListener = (listener: string) => [`sasl.enabled.mechanisms=PLAIN`, `listener.name.${listener}.plain.sasl.jaas.config=${jaas('user_alice="alice-secret"')}`];

test('Kafka 4.4 Java tools over SASL_SSL with PLAIN: create, produce, consume; a wrong password is refused', { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars not resolved: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { spool, bootstrap } = await startSecuredSpool('SASL_SSL', [...plainListener('sasl_ssl'), 'ssl.keystore.type=PEM', `ssl.keystore.location=${pki.serverPemPath}`]);
  try {
    const clientConfig = (password: string) => {
      const path = join(pki.dir, `sasl-${password}.properties`);
      writeFileSync(path, [
        'security.protocol=SASL_SSL',
        'sasl.mechanism=PLAIN',
        `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`,
        'ssl.truststore.type=PEM',
        `ssl.truststore.location=${pki.caPemPath}`,
        '',
      ].join('\n'));
      return path;
    };
    const server = ['--bootstrap-server', bootstrap, '--command-config', clientConfig('alice-secret')];
    await tool(TOOL.topics, [...server, '--create', '--topic', 'sasl-java', '--partitions', '1', '--replication-factor', '1']);
    await tool(TOOL.consoleProducer, [...server, '--topic', 'sasl-java'], 'one\ntwo\n');
    const consumed = await tool(TOOL.consoleConsumer, [...server, '--topic', 'sasl-java', '--from-beginning', '--max-messages', '2', '--timeout-ms', '30000']);
    assert.deepEqual(consumed.trim().split('\n'), ['one', 'two']);
    const refused = await runKafkaTool(TOOL.topics, ['--bootstrap-server', bootstrap, '--command-config', clientConfig('wrong'), '--list'], { timeoutMs: 60_000 });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Authentication failed: Invalid username or password/);
  } finally {
    await spool.stop();
  }
});

test('kcat (librdkafka) over SASL_PLAINTEXT with PLAIN: produce and consume', { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { spool, bootstrap } = await startSecuredSpool('SASL_PLAINTEXT', plainListener('sasl_plaintext'));
  try {
    const saslArgs = ['-b', bootstrap, '-X', 'security.protocol=sasl_plaintext', '-X', 'sasl.mechanism=PLAIN', '-X', 'sasl.username=alice', '-X', 'sasl.password=alice-secret'];
    const kcat = promisify(execFile);
    const producer = kcat('kcat', [...saslArgs, '-P', '-t', 'sasl-kcat', '-p', '0'], { timeout: 60_000 });
    producer.child.stdin!.end('alpha\nbeta\n');
    await producer;
    const { stdout } = await kcat('kcat', [...saslArgs, '-C', '-t', 'sasl-kcat', '-p', '0', '-o', 'beginning', '-e', '-q'], { timeout: 60_000 });
    assert.deepEqual(stdout.trim().split('\n'), ['alpha', 'beta']);
  } finally {
    await spool.stop();
  }
});

const SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
const scramListener = (listener: string) => [
  'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512',
  `listener.name.${listener}.scram-sha-256.sasl.jaas.config=${SCRAM_JAAS}`,
  `listener.name.${listener}.scram-sha-512.sasl.jaas.config=${SCRAM_JAAS}`,
];

test('SCRAM: kafka-configs adds credentials, then the Java tools (SCRAM-SHA-512 over SASL_SSL) and kcat (SCRAM-SHA-256) authenticate with them', { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady() && hasCommand('kcat'), 'Kafka 4.4 jars or kcat missing: run test/interop/kafka/ci-setup.sh and test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { spool, bootstrap } = await startSecuredSpool('SASL_SSL', [...scramListener('sasl_ssl'), 'ssl.keystore.type=PEM', `ssl.keystore.location=${pki.serverPemPath}`]);
  try {
    const configs = ['--bootstrap-server', spool.bootstrap, '--entity-type', 'users', '--entity-name', 'alice'];
    // One mechanism per request: Kafka's controller refuses two changes to one user in one request (DUPLICATE_RESOURCE).
    await tool(TOOL.configs, [...configs, '--alter', '--add-config', 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]']);
    await tool(TOOL.configs, [...configs, '--alter', '--add-config', 'SCRAM-SHA-512=[password=alice-secret]']);
    const described = await tool(TOOL.configs, [...configs, '--describe']);
    assert.match(described, /SCRAM-SHA-256=iterations=8192/);
    assert.match(described, /SCRAM-SHA-512=iterations=4096/);

    const clientConfig = join(pki.dir, 'scram.properties');
    writeFileSync(clientConfig, [
      'security.protocol=SASL_SSL',
      'sasl.mechanism=SCRAM-SHA-512',
      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${pki.caPemPath}`,
      '',
    ].join('\n'));
    const server = ['--bootstrap-server', bootstrap, '--command-config', clientConfig];
    await tool(TOOL.consoleProducer, [...server, '--topic', 'scram-java'], 'one\ntwo\n');
    const consumed = await tool(TOOL.consoleConsumer, [...server, '--topic', 'scram-java', '--from-beginning', '--max-messages', '2', '--timeout-ms', '30000']);
    assert.deepEqual(consumed.trim().split('\n'), ['one', 'two']);

    const kcatArgs = ['-b', bootstrap, '-X', 'security.protocol=sasl_ssl', '-X', `ssl.ca.location=${pki.caPemPath}`, '-X', 'sasl.mechanism=SCRAM-SHA-256', '-X', 'sasl.username=alice', '-X', 'sasl.password=alice-secret'];
    const { stdout } = await promisify(execFile)('kcat', [...kcatArgs, '-C', '-t', 'scram-java', '-p', '0', '-o', 'beginning', '-e', '-q'], { timeout: 60_000 });
    assert.deepEqual(stdout.trim().split('\n'), ['one', 'two']);
    await assert.rejects(promisify(execFile)('kcat', [...kcatArgs.slice(0, -1), 'sasl.password=wrong', '-L'], { timeout: 60_000 }));

    await tool(TOOL.configs, [...configs, '--alter', '--delete-config', 'SCRAM-SHA-512']);
    assert.doesNotMatch(await tool(TOOL.configs, [...configs, '--describe']), /SCRAM-SHA-512/);
  } finally {
    await spool.stop();
  }
});

test('spool storage format --add-scram: kcat authenticates with the formatted credentials (SCRAM-SHA-256 and -512) on first start', { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const dir = mkdtempSync(join(tmpdir(), 'spool-add-scram-'));
  const [port, saslPort, controllerPort] = [await freePort(), await freePort(), await freePort()];
  const listeners = `listeners=PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort},CONTROLLER://127.0.0.1:${controllerPort}`;
  const voters = `controller.quorum.voters=1@127.0.0.1:${controllerPort}`;
  const properties = join(dir, 'server.properties');
  writeFileSync(properties, ['process.roles=broker,controller', 'node.id=1', voters, listeners, 'controller.listener.names=CONTROLLER', `log.dirs=${join(dir, 'data')}`].join('\n'));
  const formatted = await promisify(execFile)(process.execPath, [
    SPOOL_BIN, 'storage', 'format', '-t', 'MkU3OEVBNTcwNTJENDM2Qk', '-c', properties,
    '--add-scram', 'SCRAM-SHA-256=[name=alice,password=alice-secret]',
    '-S', 'SCRAM-SHA-512=[name=bob,iterations=8192,password="bob-secret"]',
  ]);
  assert.match(formatted.stdout, /UserScramCredentialRecord\(name='alice', mechanism=1,.*UserScramCredentialRecord\(name='bob', mechanism=2,.*iterations=8192\)/);
  const spool = await startSpool({
    dir: join(dir, 'data'), port, controllerPort,
    overrides: [listeners, voters, 'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT', ...scramListener('sasl_plaintext')],
  });
  try {
    const kcat = promisify(execFile);
    const sasl = (mechanism: string, user: string, password: string) => ['-b', `127.0.0.1:${saslPort}`, '-X', 'security.protocol=sasl_plaintext', '-X', `sasl.mechanism=${mechanism}`, '-X', `sasl.username=${user}`, '-X', `sasl.password=${password}`];
    const producer = kcat('kcat', [...sasl('SCRAM-SHA-256', 'alice', 'alice-secret'), '-P', '-t', 'formatted-scram', '-p', '0'], { timeout: 60_000 });
    producer.child.stdin!.end('one\ntwo\n');
    await producer;
    const { stdout } = await kcat('kcat', [...sasl('SCRAM-SHA-512', 'bob', 'bob-secret'), '-C', '-t', 'formatted-scram', '-p', '0', '-o', 'beginning', '-e', '-q'], { timeout: 60_000 });
    assert.deepEqual(stdout.trim().split('\n'), ['one', 'two']);
    const refused = await kcat('kcat', [...sasl('SCRAM-SHA-512', 'bob', 'wrong'), '-L', '-m', '10'], { timeout: 60_000 }).then(() => null, (error: Error) => error);
    assert.ok(refused !== null, 'a wrong password is refused');
  } finally {
    await spool.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('kcat (librdkafka) over SASL_PLAINTEXT with OAUTHBEARER unsecured JWS: produce and consume; a token without the required scope is refused', { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const jaas = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka" unsecuredValidatorAllowableClockSkewMs="1000";';
  const { spool, bootstrap } = await startSecuredSpool('SASL_PLAINTEXT', ['sasl.enabled.mechanisms=OAUTHBEARER', `listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=${jaas}`]);
  try {
    const oauth = (config: string) => ['-b', bootstrap, '-X', 'security.protocol=sasl_plaintext', '-X', 'sasl.mechanism=OAUTHBEARER', '-X', 'enable.sasl.oauthbearer.unsecure.jwt=true', '-X', `sasl.oauthbearer.config=${config}`];
    const kcat = promisify(execFile);
    const producer = kcat('kcat', [...oauth('principal=alice scope=kafka'), '-P', '-t', 'oauth-kcat', '-p', '0'], { timeout: 60_000 });
    producer.child.stdin!.end('alpha\nbeta\n');
    await producer;
    const { stdout } = await kcat('kcat', [...oauth('principal=bob scope=other,kafka'), '-C', '-t', 'oauth-kcat', '-p', '0', '-o', 'beginning', '-e', '-q'], { timeout: 60_000 });
    assert.deepEqual(stdout.trim().split('\n'), ['alpha', 'beta']);
    const refused = await kcat('kcat', [...oauth('principal=carol scope=other'), '-L', '-m', '10'], { timeout: 60_000 }).then(() => null, (error: Error & { stderr?: string }) => error);
    assert.ok(refused !== null, 'a token without the required scope is refused');
    assert.match(refused.stderr ?? '', /insufficient_scope|Authentication failed|SASL authentication error/i, refused.stderr);
  } finally {
    await spool.stop();
  }
});

test('Kafka 4.4 Java tools over SASL_SSL with OAUTHBEARER (OAuthBearerLoginModule, unsecured): produce and consume; a token without the required scope is refused', { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars missing: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const serverJaas = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";';
  const { spool, bootstrap } = await startSecuredSpool('SASL_SSL', [
    'sasl.enabled.mechanisms=OAUTHBEARER', `listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=${serverJaas}`,
    'ssl.keystore.type=PEM', `ssl.keystore.location=${pki.serverPemPath}`,
  ]);
  try {
    const clientConfig = (name: string, claims: string) => {
      const file = join(pki.dir, `${name}.properties`);
      writeFileSync(file, [
        'security.protocol=SASL_SSL',
        'sasl.mechanism=OAUTHBEARER',
        `sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ${claims};`,
        'ssl.truststore.type=PEM',
        `ssl.truststore.location=${pki.caPemPath}`,
        '',
      ].join('\n'));
      return ['--bootstrap-server', bootstrap, '--command-config', file];
    };
    const alice = clientConfig('oauth-alice', 'unsecuredLoginStringClaim_sub="alice" unsecuredLoginStringClaim_scope="kafka"');
    await tool(TOOL.consoleProducer, [...alice, '--topic', 'oauth-java'], 'one\ntwo\n');
    const consumed = await tool(TOOL.consoleConsumer, [...alice, '--topic', 'oauth-java', '--from-beginning', '--max-messages', '2', '--timeout-ms', '30000']);
    assert.deepEqual(consumed.trim().split('\n'), ['one', 'two']);
    const noScope = clientConfig('oauth-noscope', 'unsecuredLoginStringClaim_sub="mallory"');
    const refused = await runKafkaTool(TOOL.topics, [...noScope, '--list']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /insufficient_scope/, refused.stderr);
  } finally {
    await spool.stop();
  }
});

for (const source of ['file', 'https'] as const) {
test(`Kafka 4.4 Java tools with a signed token against OAuthBearerValidatorCallbackHandler and a JWKS from ${source === 'file' ? 'a file: URL' : 'an https endpoint (trusted through NODE_EXTRA_CA_CERTS)'}; a token of another issuer is refused`, { timeout: 240_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars missing: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = join(pki.dir, 'jwks.json');
  const jwksText = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] });
  writeFileSync(jwks, jwksText);
  // The https endpoint serves the JWKS with the test PKI's server certificate; Spool's process trusts its CA through NODE_EXTRA_CA_CERTS.
  const endpoint = source === 'https' ? createHttpsServer({ key: readFileSync(pki.serverPemPath), cert: readFileSync(pki.serverPemPath) }, (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(jwksText)) : null;
  if (endpoint !== null) await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const jwksUrl = endpoint === null ? `file://${jwks}` : `https://127.0.0.1:${(endpoint.address() as AddressInfo).port}/jwks`;
  const savedEnv = { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS, SPOOL_OAUTHBEARER_ALLOWED_URLS: process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS };
  // As Kafka 4.4 (org.apache.kafka.sasl.oauthbearer.allowed.urls), Spool reads only a JWKS URL SPOOL_OAUTHBEARER_ALLOWED_URLS lists.
  process.env.SPOOL_OAUTHBEARER_ALLOWED_URLS = jwksUrl;
  if (endpoint !== null) process.env.NODE_EXTRA_CA_CERTS = pki.caPemPath;
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const token = (issuer: string) => {
    const nowS = Math.floor(Date.now() / 1000);
    const input = `${part({ alg: 'RS256', kid: 'k1', typ: 'JWT' })}.${part({ sub: 'alice', iss: issuer, aud: 'kafka', iat: nowS, exp: nowS + 3600, scope: 'kafka' })}`;
    return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
  };
  const started = startSecuredSpool('SASL_PLAINTEXT', [
    'sasl.enabled.mechanisms=OAUTHBEARER',
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
    'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
    `listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=${jwksUrl}`,
    'sasl.oauthbearer.expected.issuer=https://issuer.example',
    'sasl.oauthbearer.expected.audience=kafka',
  ]);
  const restoreEnv = () => {
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  let spool: Awaited<typeof started>['spool'];
  let bootstrap: string;
  try {
    ({ spool, bootstrap } = await started);
  } catch (error) {
    endpoint?.close();
    throw error;
  } finally {
    restoreEnv();
  }
  const toolOptions = process.env.KAFKA_TOOL_OPTS;
  try {
    const clientConfig = (name: string, issuer: string) => {
      const tokenFile = join(pki.dir, `${name}.jwt`);
      writeFileSync(tokenFile, token(issuer));
      const file = join(pki.dir, `${name}.properties`);
      writeFileSync(file, [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=OAUTHBEARER',
        'sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
        'sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
        `sasl.oauthbearer.token.endpoint.url=file://${tokenFile}`,
        '',
      ].join('\n'));
      return { server: ['--bootstrap-server', bootstrap, '--command-config', file], url: `file://${tokenFile}` };
    };
    const alice = clientConfig('jwks-alice', 'https://issuer.example');
    const stranger = clientConfig('jwks-stranger', 'https://elsewhere.example');
    // Kafka's clients read token endpoint URLs only from the allowed list (org.apache.kafka.sasl.oauthbearer.allowed.urls).
    process.env.KAFKA_TOOL_OPTS = `${toolOptions ?? ''} -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=${alice.url},${stranger.url}`;
    await tool(TOOL.consoleProducer, [...alice.server, '--topic', 'oauth-jwks'], 'one\ntwo\n');
    const consumed = await tool(TOOL.consoleConsumer, [...alice.server, '--topic', 'oauth-jwks', '--from-beginning', '--max-messages', '2', '--timeout-ms', '30000']);
    assert.deepEqual(consumed.trim().split('\n'), ['one', 'two']);
    const refused = await runKafkaTool(TOOL.topics, [...stranger.server, '--list']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /invalid_token/, refused.stderr);
  } finally {
    if (toolOptions === undefined) delete process.env.KAFKA_TOOL_OPTS;
    else process.env.KAFKA_TOOL_OPTS = toolOptions;
    await spool.stop();
    endpoint?.closeAllConnections();
    endpoint?.close();
  }
});
}
