/**
 * The interop matrix's clients over the two secured listeners of one real
 * Spool process: SASL_SSL with SCRAM-SHA-512 (the user's credentials written
 * by `spool storage format --add-scram`) and SSL with
 * ssl.client.auth=required (a client certificate from the test's CA). For each
 * client and listener: the client produces three records (acks=all) to a
 * one-partition topic, consumes them in a consumer group from the earliest
 * offset and commits them (the classic protocol, and KIP-848's consumer
 * protocol where the client has it); the test checks the values and offsets
 * came back in order, and reads the group's type and committed offset back
 * over PLAINTEXT (Spool's own Admin). A wrong SCRAM password and a client
 * without a certificate are refused.
 *
 * The clients: kafkajs, @confluentinc/kafka-javascript (librdkafka), franz-go
 * and the Java client (kafka-clients 4.4.0) as group member processes
 * (test/interop/groups/, with the config's `security` and `produce`),
 * confluent-kafka-python (Debian's librdkafka 2.0 and PyPI's) and
 * kafka-python (python/group_consumer.py), kcat (-P, then -G with
 * librdkafka's auto-commit), and @platformatic/kafka in this process. Kafka's
 * Java tools are proven over such listeners by sasl.test.ts and ssl.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import kafkajs from 'kafkajs';
import { Consumer, Producer, stringDeserializers, stringSerializers, type SASLOptions } from '@platformatic/kafka';
import type { ConnectionOptions } from 'node:tls';
import { Admin } from '../../../src/client/admin.js';
import { makeTestPki } from '../../security/certificates.js';
import { freePort, SPOOL_BIN, startSpool } from '../clients/spool-process.js';
import { startKafkaNode } from '../kafka/kafka.js';
import { confluentClient, franzClient, javaClient, kafkaJavascriptClient, kafkajsClient, kafkaPythonClient } from '../groups/group-clients.js';
import type { GroupClient } from '../groups/group-scenario.js';
import { hasCommand } from '../clients/harness.js';
import { missingToolSkip } from '../clients/scenario.js';
import { Member, until, type MemberSecurity } from '../groups/members.js';

/** Kafka 4.4 instead of Spool, to compare. */
const ON_KAFKA = process.env.SPOOL_SECMATRIX_BROKER === 'kafka';
const USER = 'alice';
const PASSWORD = 'alice-secret';
const VALUES = ['one', 'two', 'three'];
/** One member's whole run (start, produce, join, consume, commit) on a loaded 2-core machine. */
const MEMBER_DEADLINE_MS = 60_000;

const pki = makeTestPki();
const dataRoot = mkdtempSync(join(tmpdir(), 'spool-client-matrix-'));
/** The broker under test, and its PLAINTEXT listener (topic creation and the group checks). */
let broker: { plaintext: string; output(): string; stop(): Promise<unknown> } | undefined;
const listeners: { name: string; bootstrap: string; security: MemberSecurity }[] = [];
const SCRAM_USER = `SCRAM-SHA-512=[name=${USER},password=${PASSWORD}]`;

/** Spool, or Kafka 4.4 with SPOOL_SECMATRIX_BROKER=kafka: the same properties, the user's SCRAM credentials formatted in. */
before(async () => {
  const [port, saslPort, sslPort, controllerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const properties = [
    'process.roles=broker,controller', 'node.id=1', `controller.quorum.voters=1@127.0.0.1:${controllerPort}`, 'controller.listener.names=CONTROLLER',
    `listeners=PLAINTEXT://127.0.0.1:${port},SASL_SSL://127.0.0.1:${saslPort},SSL://127.0.0.1:${sslPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,CONTROLLER:PLAINTEXT',
    'sasl.enabled.mechanisms=SCRAM-SHA-512',
    'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${pki.serverPemPath}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${pki.caPemPath}`,
    // The unprefixed ssl.client.auth binds the SSL listener only: SASL_SSL authenticates with SCRAM.
    'ssl.client.auth=required',
    'offsets.topic.replication.factor=1', 'transaction.state.log.replication.factor=1', 'group.initial.rebalance.delay.ms=0',
  ];
  if (ON_KAFKA) {
    const kafka = await startKafkaNode({ properties, port, formatArgs: ['--add-scram', SCRAM_USER], dir: dataRoot });
    broker = { plaintext: `127.0.0.1:${port}`, output: () => '', stop: () => kafka.stop({ keepDir: true }) };
  } else {
    const config = join(dataRoot, 'server.properties');
    writeFileSync(config, [...properties, `log.dirs=${join(dataRoot, 'data')}`].join('\n'));
    await promisify(execFile)(process.execPath, [SPOOL_BIN, 'storage', 'format', '-t', 'MkU3OEVBNTcwNTJENDM2Qk', '-c', config, '--add-scram', SCRAM_USER]);
    const spool = await startSpool({ dir: join(dataRoot, 'data'), port, controllerPort, overrides: properties });
    broker = { plaintext: spool.bootstrap, output: () => spool.output(), stop: () => spool.stop() };
  }
  listeners.push(
    { name: 'SASL_SSL+SCRAM-SHA-512', bootstrap: `127.0.0.1:${saslPort}`, security: { protocol: 'SASL_SSL', caPath: pki.caPemPath, username: USER, password: PASSWORD } },
    { name: 'mTLS', bootstrap: `127.0.0.1:${sslPort}`, security: { protocol: 'SSL', caPath: pki.caPemPath, certPath: join(pki.dir, 'alice.crt'), keyPath: join(pki.dir, 'alice.key') } },
  );
});

after(async () => {
  await broker?.stop();
  rmSync(dataRoot, { recursive: true, force: true });
  pki.remove();
});

const plaintextAdmin = () => new kafkajs.Kafka({ brokers: [broker!.plaintext], logLevel: kafkajs.logLevel.NOTHING }).admin();

async function createTopic(topic: string): Promise<void> {
  const admin = plaintextAdmin();
  await admin.connect();
  try {
    assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true }), true);
  } finally {
    await admin.disconnect();
  }
}

/** The group as the broker has it, read over PLAINTEXT: its type and its committed offset of the topic's partition 0. */
async function brokerGroup(group: string, topic: string): Promise<{ type: string | null | undefined; committed: number | undefined }> {
  const admin = new Admin({ bootstrapServers: broker!.plaintext });
  try {
    const listed = await admin.listGroups();
    const offsets = await admin.listConsumerGroupOffsets(group);
    return { type: listed.find((listing) => listing.groupId === group)?.type, committed: offsets.find((o) => o.topic === topic && o.partition === 0)?.offset };
  } finally {
    await admin.close();
  }
}

const topicName = (client: string, listener: string) => `secured-${client}-${listener}`.replace(/[^a-zA-Z0-9-]/g, '-');

/** One member process: produces VALUES, joins `group`, consumes and commits them, then is stopped. */
async function runMember(client: GroupClient, listener: (typeof listeners)[number]): Promise<void> {
  const topic = topicName(client.name, listener.name);
  const group = `${topic}-group`;
  await createTopic(topic);
  const member = new Member(client.name, client.command({
    bootstrap: listener.bootstrap, group, topic, clientId: `${client.name}-secured`,
    protocol: client.protocol, assignor: client.assignor, sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500,
    security: listener.security, produce: VALUES,
  }));
  try {
    await until(`${client.name} over ${listener.name}: ${VALUES.length} records consumed and committed`,
      () => member.deliveries.length >= VALUES.length && member.allCommitted(), [member], MEMBER_DEADLINE_MS);
  } catch (error) {
    await member.stop();
    throw new Error(`${(error as Error).message}\n${member.describe()}\nbroker:\n${broker!.output().slice(-3000)}`);
  }
  assert.equal(await member.stop(), 0, member.describe());
  assert.match(member.client ?? '', client.clientPattern);
  assert.equal(member.produced, VALUES.length);
  assert.deepEqual(member.deliveries.map((delivery) => [delivery.partition, delivery.offset, delivery.value]), VALUES.map((value, offset) => [0, offset, value]));
  assert.deepEqual(await brokerGroup(group, topic), { type: client.protocol, committed: VALUES.length });
}

/** @platformatic/kafka in this process: a Producer, then a group Consumer's stream from the earliest offset, committing each message. */
async function runPlatformatic(listener: (typeof listeners)[number]): Promise<void> {
  const topic = topicName('platformatic-kafka', listener.name);
  const group = `${topic}-group`;
  await createTopic(topic);
  const { security } = listener;
  const tls: ConnectionOptions = security.protocol === 'SSL'
    ? { ca: readFileSync(security.caPath), cert: readFileSync(security.certPath!), key: readFileSync(security.keyPath!) }
    : { ca: readFileSync(security.caPath) };
  const sasl: { sasl?: SASLOptions } = security.protocol === 'SASL_SSL' ? { sasl: { mechanism: 'SCRAM-SHA-512', username: security.username!, password: security.password! } } : {};
  const base = { clientId: 'platformatic-secured', bootstrapBrokers: [listener.bootstrap], retries: 3, connectTimeout: 10_000, timeout: 30_000, tls, ...sasl };
  const producer = new Producer({ ...base, serializers: stringSerializers, acks: -1 });
  try {
    await producer.send({ messages: VALUES.map((value) => ({ topic, value })) });
  } finally {
    await producer.close();
  }
  const consumer = new Consumer({ ...base, groupId: group, deserializers: stringDeserializers, sessionTimeout: 6_000, heartbeatInterval: 500 });
  const consumed: [number, number, string][] = [];
  try {
    const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 200 });
    for await (const message of stream) {
      consumed.push([message.partition, Number(message.offset), message.value]);
      await message.commit();
      if (consumed.length === VALUES.length) break;
    }
    await stream.close();
  } finally {
    await consumer.close(true);
  }
  assert.deepEqual(consumed, VALUES.map((value, offset) => [0, offset, value]));
  assert.deepEqual(await brokerGroup(group, topic), { type: 'classic', committed: VALUES.length });
}

/** kafkajs's admin on a secured listener, without retries (a refusal is final). */
async function connectAdmin(bootstrap: string, options: Pick<kafkajs.KafkaConfig, 'ssl' | 'sasl'>): Promise<void> {
  const admin = new kafkajs.Kafka({ brokers: [bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 0 }, ...options }).admin();
  try {
    await admin.connect();
    await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}

test('the secured listeners refuse a wrong SCRAM password and a client without a certificate', async () => {
  const [sasl, mtls] = listeners;
  const ca = [readFileSync(pki.caPemPath, 'utf8')];
  await assert.rejects(connectAdmin(sasl!.bootstrap, { ssl: { ca }, sasl: { mechanism: 'scram-sha-512', username: USER, password: 'wrong' } }), /SASL SCRAM SHA512 authentication failed/);
  // The handshake fails either way; the alerts differ: OpenSSL's TLS 1.3 certificate_required (116) from Spool, the
  // JVM's bad_certificate (42) from Kafka (docs/SKIPPED.md).
  await assert.rejects(connectAdmin(mtls!.bootstrap, { ssl: { ca } }), ON_KAFKA ? /bad certificate/ : /certificate required/);
  // The same admin with the certificate is served: the refusal above is the missing certificate's.
  await connectAdmin(mtls!.bootstrap, { ssl: { ca, cert: readFileSync(join(pki.dir, 'alice.crt'), 'utf8'), key: readFileSync(join(pki.dir, 'alice.key'), 'utf8') } });
});

/** The clients on Debian's librdkafka 2.0.2. */
const LIBRDKAFKA_2_0 = new Set(['kcat', 'confluent-classic-default']);

/**
 * librdkafka before 2.6.1 repeats the client nonce in its SCRAM client-final message (librdkafka#4895). Kafka 4.4's
 * ScramSaslServer requires the nonce to equal the server-first one and refuses it ("invalid credentials"); Spool
 * accepts a nonce that ends with it (docs/SKIPPED.md), so on Spool these clients authenticate.
 */
function scramSkip(client: string, listener: (typeof listeners)[number]): string | undefined {
  if (!ON_KAFKA || listener.security.protocol !== 'SASL_SSL' || !LIBRDKAFKA_2_0.has(client)) return undefined;
  return 'Kafka 4.4 refuses the SCRAM client-final message of librdkafka < 2.6.1 (the client nonce sent twice)';
}

/** kcat's librdkafka settings for a listener. */
function kcatSecurity(security: MemberSecurity): string[] {
  const settings = security.protocol === 'SSL'
    ? ['security.protocol=ssl', `ssl.ca.location=${security.caPath}`, `ssl.certificate.location=${security.certPath!}`, `ssl.key.location=${security.keyPath!}`]
    : ['security.protocol=sasl_ssl', `ssl.ca.location=${security.caPath}`, 'sasl.mechanism=SCRAM-SHA-512', `sasl.username=${security.username!}`, `sasl.password=${security.password!}`];
  return settings.flatMap((setting) => ['-X', setting]);
}

/** kcat: produces with -P, then consumes in a group (-G, librdkafka's auto-commit, committed when kcat closes the consumer at -c). */
async function runKcat(listener: (typeof listeners)[number]): Promise<void> {
  const topic = topicName('kcat', listener.name);
  const group = `${topic}-group`;
  await createTopic(topic);
  const kcat = promisify(execFile);
  const common = ['-b', listener.bootstrap, ...kcatSecurity(listener.security)];
  const producer = kcat('kcat', [...common, '-P', '-t', topic, '-X', 'acks=all'], { timeout: 60_000 });
  producer.child.stdin!.end(VALUES.map((value) => `${value}\n`).join(''));
  await producer;
  const { stdout } = await kcat('kcat', [...common, '-X', 'auto.offset.reset=earliest', '-G', group, '-c', String(VALUES.length), '-q', '-f', '%p %o %s\n', topic], { timeout: 60_000 });
  assert.deepEqual(stdout.trim().split('\n'), VALUES.map((value, offset) => `0 ${offset} ${value}`));
  assert.deepEqual(await brokerGroup(group, topic), { type: 'classic', committed: VALUES.length });
}

/** The classic protocol for each; KIP-848's consumer protocol too where the client has it. */
const MEMBER_CLIENTS: GroupClient[] = [
  kafkajsClient(),
  kafkaJavascriptClient('classic', null),
  kafkaJavascriptClient('consumer', null),
  confluentClient('classic', null, false),
  confluentClient('classic', null, true),
  confluentClient('consumer', null, true),
  kafkaPythonClient(null),
  franzClient('classic', null),
  franzClient('consumer', null),
  javaClient('classic', null),
  javaClient('consumer', null),
];

test('@platformatic/kafka over SASL_SSL (SCRAM-SHA-512) and mTLS: produce, consume in a group, commit', { timeout: 120_000 }, async (t) => {
  for (const listener of listeners) await t.test(listener.name, () => runPlatformatic(listener));
});

test('kcat (librdkafka 2.0) over SASL_SSL (SCRAM-SHA-512) and mTLS: produce, consume in a group, commit', { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat'), 'kcat not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  for (const listener of listeners) await t.test(listener.name, (sub) => (scramSkip('kcat', listener) === undefined ? runKcat(listener) : sub.skip(scramSkip('kcat', listener))));
});

for (const client of MEMBER_CLIENTS) {
  test(`${client.name} over SASL_SSL (SCRAM-SHA-512) and mTLS: produce, consume in a group, commit`, { timeout: 150_000 }, async (t) => {
    const skip = client.missing();
    if (skip !== undefined) return t.skip(skip);
    for (const listener of listeners) await t.test(listener.name, (sub) => (scramSkip(client.name, listener) === undefined ? runMember(client, listener) : sub.skip(scramSkip(client.name, listener))));
  });
}

