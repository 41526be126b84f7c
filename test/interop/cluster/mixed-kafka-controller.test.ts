/**
 * A mixed cluster: a Spool broker-only node (process.roles=broker) under a
 * quorum of Apache Kafka 4.4 controllers (a controller-only Kafka process,
 * node 3000). Proves, over Kafka's own inter-node protocol, that the Spool
 * broker
 * - follows Kafka's `__cluster_metadata` as a Raft observer (Fetch) and
 *   reads every record Kafka writes (a record Spool cannot decode stops
 *   the broker, and this test with it), including the metadata transaction
 *   around Kafka's bootstrap records;
 * - registers (BrokerRegistration with Spool's features and log
 *   directories), catches up and is unfenced (BrokerHeartbeat), as Kafka's
 *   own tools see it (kafka-metadata-quorum.sh lists it as an observer);
 * - forwards admin requests to Kafka's controller in Envelopes (KIP-590)
 *   that Kafka accepts: kafka-topics.sh --create and kafka-configs.sh
 *   --alter sent to the Spool broker;
 * - leads the partitions Kafka's controller assigns it, and serves Kafka's
 *   console producer and a consumer group (the group's __consumer_offsets
 *   is created by Kafka's controller at the Spool broker's request);
 * - shuts down in a controlled way (Kafka's controller lets it go).
 *
 * The Kafka cluster is formatted at metadata.version 4.0-IV3 (Spool's
 * newest) with transaction.version 0. With Kafka 4.4's defaults (4.4-IV2,
 * ELR, share and streams versions) Kafka's controller refuses a Spool broker with
 * UNSUPPORTED_VERSION, as it refuses any broker that lacks a finalized
 * feature; the last test proves that refusal.
 */
import { until as waitUntil } from './until.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig } from '../../../src/common/config.js';
import { silentLogger } from '../../../src/common/logger.js';
import { realEnv } from '../../../src/io/env.js';
import { SpoolNode } from '../../../src/node/node.js';
import { RpcControllerChannel } from '../../../src/node/rpc-controller-channel.js';
import { BrokerRegistration } from '../../../src/protocol/schemas/62-broker-registration.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { supportedFeatureRanges } from '../../../src/metadata/features.js';
import { freePort, kafkaSkipReason, runKafkaTool, startKafkaNode, TOOL, type RunningKafka } from '../kafka/kafka.js';

process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';
const KAFKA_CONTROLLER_ID = 3000;
const SPOOL_BROKER_ID = 1;
/** Features a Spool broker supports (see the file comment). */
const SPOOL_COMPATIBLE_FORMAT = ['--release-version', '4.0-IV3', '--feature', 'transaction.version=0'];
/** How long a condition watched on real processes may take. */
const WAIT_MS = 60_000;
const POLL_MS = 200;

async function startKafkaController(formatArgs: readonly string[]): Promise<RunningKafka> {
  const port = await freePort();
  return startKafkaNode({
    port,
    clusterId: CLUSTER_ID,
    formatArgs,
    properties: [
      'process.roles=controller',
      `node.id=${KAFKA_CONTROLLER_ID}`,
      `controller.quorum.voters=${KAFKA_CONTROLLER_ID}@127.0.0.1:${port}`,
      `listeners=CONTROLLER://127.0.0.1:${port}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    ],
  });
}

function spoolBroker(controllerPort: number, dir: string): SpoolNode {
  const config = BrokerConfig.fromObject({
    'process.roles': 'broker',
    'node.id': SPOOL_BROKER_ID,
    'cluster.id': CLUSTER_ID,
    'controller.quorum.voters': `${KAFKA_CONTROLLER_ID}@127.0.0.1:${controllerPort}`,
    'controller.listener.names': 'CONTROLLER',
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': dir,
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'group.initial.rebalance.delay.ms': 0,
  });
  return new SpoolNode(config, realEnv, silentLogger);
}

async function tool(mainClass: string, args: readonly string[], input?: string): Promise<string> {
  const result = await runKafkaTool(mainClass, args, input === undefined ? {} : { input });
  assert.equal(result.code, 0, `${mainClass} ${args.join(' ')} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const until = <T>(what: string, probe: () => Promise<T | null>): Promise<T> => waitUntil(what, probe, { waitMs: WAIT_MS, pollMs: POLL_MS });

test('a Spool broker registers with a Kafka 4.4 controller quorum, is unfenced, leads partitions and serves Kafka\'s clients', { skip: kafkaSkipReason(), timeout: 300_000 }, async () => {
  const kafka = await startKafkaController(SPOOL_COMPATIBLE_FORMAT);
  const dir = mkdtempSync(join(tmpdir(), 'spool-mixed-broker-'));
  const node = spoolBroker(kafka.port, dir);
  try {
    await node.start();
    // The controller unfences the broker in a heartbeat answer; the record saying so reaches the broker's image just after.
    await until('the Spool broker unfenced in its own image', async () => (node.metadata.image.brokers.get(SPOOL_BROKER_ID)?.fenced === false ? true : null));
    assert.equal(node.metadata.image.features.get('metadata.version'), 25);
    const bootstrap = `127.0.0.1:${node.clientListener.advertisedPort}`;
    const controller = ['--bootstrap-controller', `127.0.0.1:${kafka.port}`];

    // Kafka's controller sees the Spool broker fetching its log as an observer.
    const replication = await tool(TOOL.metadataQuorum, [...controller, 'describe', '--replication']);
    assert.match(replication, new RegExp(`^${SPOOL_BROKER_ID}\\s.*\\sObserver\\s*$`, 'm'), replication);

    // Admin requests through the Spool broker reach Kafka's controller in Envelopes.
    await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--create', '--topic', 'mixed', '--partitions', '3', '--replication-factor', '1']);
    await tool(TOOL.configs, ['--bootstrap-server', bootstrap, '--alter', '--entity-type', 'topics', '--entity-name', 'mixed', '--add-config', 'retention.ms=86400000']);
    const described = await until('the Spool broker leads every partition', async () => {
      const out = await tool(TOOL.topics, ['--bootstrap-server', bootstrap, '--describe', '--topic', 'mixed']);
      return (out.match(new RegExp(`Leader: ${SPOOL_BROKER_ID}\\s`, 'g')) ?? []).length === 3 ? out : null;
    });
    assert.match(described, /Configs: retention\.ms=86400000/);

    // Kafka's console clients produce to and consume from the Spool broker, in a consumer group.
    const lines = Array.from({ length: 30 }, (_, i) => `record-${i}`);
    await tool(TOOL.consoleProducer, ['--bootstrap-server', bootstrap, '--topic', 'mixed', '--command-property', 'acks=all'], lines.join('\n') + '\n');
    const consumed = await tool(TOOL.consoleConsumer, [
      '--bootstrap-server', bootstrap, '--topic', 'mixed', '--group', 'mixed-group', '--from-beginning',
      '--max-messages', String(lines.length), '--timeout-ms', '60000',
    ]);
    assert.deepEqual(consumed.trim().split('\n').sort(), [...lines].sort());
    const groups = await tool(TOOL.consumerGroups, ['--bootstrap-server', bootstrap, '--describe', '--group', 'mixed-group']);
    assert.match(groups, /mixed-group\s+mixed\s+0\s+\d+\s+\d+\s+0\s/);

    // A controlled shutdown that Kafka's controller grants; nothing the Spool broker sent made it log an error.
    await node.stop();
    const controllerLog = readFileSync(join(kafka.dir, 'server.log'), 'utf8');
    assert.match(controllerLog, new RegExp(`Unfenced broker ${SPOOL_BROKER_ID} has requested and been granted a controlled shutdown`));
    assert.doesNotMatch(controllerLog, /\] ERROR /);
  } finally {
    await node.stop();
    await kafka.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Kafka\'s controller refuses a Spool broker\'s registration when the cluster finalized features Spool lacks (Kafka 4.4\'s defaults)', { skip: kafkaSkipReason(), timeout: 120_000 }, async () => {
  const kafka = await startKafkaController([]);
  const channel = new RpcControllerChannel({ nodeId: SPOOL_BROKER_ID, env: realEnv, candidates: [{ host: '127.0.0.1', port: kafka.port }], requestTimeoutMs: 10_000 });
  try {
    const response = await until('an answer from the active controller', () =>
      channel
        .send(BrokerRegistration, {
          brokerId: SPOOL_BROKER_ID,
          clusterId: CLUSTER_ID,
          incarnationId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 0 }],
          features: supportedFeatureRanges(),
          rack: null,
          isMigratingZkBroker: false,
          logDirs: ['AAAAAAAAAAAAAAAAAAAAZA'],
          previousBrokerEpoch: -1,
        })
        .catch(() => null),
    );
    assert.equal(response.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  } finally {
    channel.close();
    await kafka.stop();
  }
});
