/**
 * A Spool cluster of one controller-only node and three broker-only nodes
 * (each its own SpoolNode on loopback TCP, following `__cluster_metadata`
 * as a Raft observer and registering over Kafka's RPCs). Proves that
 * topic creation, configs and consumer groups work through any broker:
 * - CreateTopics sent to each broker is forwarded to the controller
 *   (Envelope) and the topic's RF=1 partitions are spread over the three
 *   brokers, as every broker's Metadata says;
 * - a config altered through one broker (IncrementalAlterConfigs) is read
 *   back through every other (DescribeConfigs);
 * - FindCoordinator names the same coordinator on every broker, and a
 *   consumer group bootstrapped from each broker in turn consumes every
 *   record produced through another broker, its committed offsets resuming
 *   where the previous member stopped.
 */
import { until as waitUntil } from './until.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig } from '../../../src/common/config.js';
import { silentLogger } from '../../../src/common/logger.js';
import { realEnv } from '../../../src/io/env.js';
import { SpoolNode } from '../../../src/node/node.js';
import { BrokerConnection } from '../../../src/client/connection.js';
import { Consumer } from '../../../src/client/consumer.js';
import { Producer } from '../../../src/client/producer.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { Metadata } from '../../../src/protocol/schemas/03-metadata.js';
import { FindCoordinator } from '../../../src/protocol/schemas/10-find-coordinator.js';
import { CreateTopics } from '../../../src/protocol/schemas/19-create-topics.js';
import { DescribeConfigs } from '../../../src/protocol/schemas/32-describe-configs.js';
import { IncrementalAlterConfigs } from '../../../src/protocol/schemas/44-incremental-alter-configs.js';
import { freePort } from '../kafka/kafka.js';

const CLUSTER_ID = 'MkU3OEVBNTcwNTJENDM2Qg';
const CONTROLLER_ID = 3000;
const BROKER_IDS = [1, 2, 3];
const TOPIC_RESOURCE = 2;
/** How long a condition watched on real sockets and timers may take. */
const WAIT_MS = 60_000;
const POLL_MS = 100;

const until = <T>(what: string, probe: () => Promise<T | null>): Promise<T> => waitUntil(what, probe, { waitMs: WAIT_MS, pollMs: POLL_MS });

function nodeConfig(overrides: Record<string, string | number>, dir: string, controllerPort: number): BrokerConfig {
  return BrokerConfig.fromObject({
    'cluster.id': CLUSTER_ID,
    'controller.quorum.voters': `${CONTROLLER_ID}@127.0.0.1:${controllerPort}`,
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': dir,
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 6,
    'group.initial.rebalance.delay.ms': 0,
    ...overrides,
  });
}

async function withConnection<T>(port: number, operation: (connection: BrokerConnection) => Promise<T>): Promise<T> {
  const connection = await BrokerConnection.connect({ host: '127.0.0.1', port, env: realEnv, requestTimeoutMs: 10_000 });
  try {
    return await operation(connection);
  } finally {
    await connection.close();
  }
}

test('topic creation, configs and consumer groups work through any broker of a three-broker Spool cluster', { timeout: 300_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'spool-three-brokers-'));
  const controllerPort = await freePort();
  const controller = new SpoolNode(
    nodeConfig({ 'process.roles': 'controller', 'node.id': CONTROLLER_ID, listeners: `CONTROLLER://127.0.0.1:${controllerPort}` }, join(root, 'controller'), controllerPort),
    realEnv,
    silentLogger,
  );
  const brokers = BROKER_IDS.map(
    (id) => new SpoolNode(nodeConfig({ 'process.roles': 'broker', 'node.id': id, listeners: 'PLAINTEXT://127.0.0.1:0' }, join(root, `broker-${id}`), controllerPort), realEnv, silentLogger),
  );
  try {
    await controller.start();
    await Promise.all(brokers.map((broker) => broker.start()));
    await until('three unfenced brokers', async () => (BROKER_IDS.every((id) => controller.metadata.image.brokers.get(id)?.fenced === false) ? true : null));
    const ports = brokers.map((broker) => broker.clientListener.advertisedPort);

    // Topics created through each broker, seen with their leaders spread by every other broker.
    for (const [index, port] of ports.entries()) {
      const topic = `through-broker-${BROKER_IDS[index]}`;
      const created = await withConnection(port, (c) => c.send(CreateTopics, { topics: [{ name: topic, numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000 }));
      assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE, `CreateTopics through broker ${BROKER_IDS[index]}`);
      for (const other of ports) {
        const leaders = await until(`${topic} in the metadata of the broker on ${other}`, async () => {
          const metadata = await withConnection(other, (c) => c.send(Metadata, { topics: [{ name: topic }], allowAutoTopicCreation: false }));
          const partitions = metadata.topics[0]?.partitions ?? [];
          return partitions.length === 3 && partitions.every((p) => p.leaderId >= 0) ? partitions.map((p) => p.leaderId).sort() : null;
        });
        assert.deepEqual(leaders, BROKER_IDS);
      }
    }

    // A config altered through one broker is read through the others.
    for (const [index, port] of ports.entries()) {
      const topic = `through-broker-${BROKER_IDS[index]}`;
      const value = String(3_600_000 * (index + 1));
      const altered = await withConnection(port, (c) =>
        c.send(IncrementalAlterConfigs, { resources: [{ resourceType: TOPIC_RESOURCE, resourceName: topic, configs: [{ name: 'retention.ms', configOperation: 0, value }] }], validateOnly: false }),
      );
      assert.equal(altered.responses[0]!.errorCode, ErrorCode.NONE);
      for (const other of ports) {
        await until(`retention.ms=${value} on ${topic} through the broker on ${other}`, async () => {
          const described = await withConnection(other, (c) => c.send(DescribeConfigs, { resources: [{ resourceType: TOPIC_RESOURCE, resourceName: topic, configurationKeys: ['retention.ms'] }], includeSynonyms: false }));
          return described.results[0]?.configs.find((entry) => entry.name === 'retention.ms')?.value === value ? true : null;
        });
      }
    }

    // One consumer group, its members bootstrapped from each broker in turn.
    const topic = 'through-broker-1';
    const group = 'group-through-any-broker';
    let produced = 0;
    let consumed = 0;
    for (const [index, port] of ports.entries()) {
      const producer = new Producer({ bootstrapServers: `127.0.0.1:${ports[(index + 1) % ports.length]}`, lingerMs: 5 });
      await Promise.all(Array.from({ length: 9 }, (_, i) => producer.send({ topic, key: `k${produced + i}`, value: `v${produced + i}` })));
      await producer.close();
      produced += 9;
      const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${port}`, groupId: group, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 500 });
      consumer.subscribe([topic]);
      const values: string[] = [];
      await until(`9 records through the broker on ${port}`, async () => {
        for (const record of await consumer.poll(200)) values.push(record.value!.toString());
        return values.length >= 9 ? true : null;
      });
      await consumer.commitSync();
      await consumer.close();
      assert.deepEqual(values.sort(), Array.from({ length: 9 }, (_, i) => `v${consumed + i}`).sort());
      consumed += 9;
    }
    const coordinators = await Promise.all(ports.map((port) => withConnection(port, (c) => c.send(FindCoordinator, { key: group, keyType: 0, coordinatorKeys: [group] }))));
    const named = coordinators.map((answer) => answer.coordinators[0]?.nodeId ?? answer.nodeId);
    assert.ok(BROKER_IDS.includes(named[0]!), `coordinator ${named[0]}`);
    assert.deepEqual(named, [named[0], named[0], named[0]]);
  } finally {
    for (const broker of brokers) await broker.stop();
    await controller.stop();
    rmSync(root, { recursive: true, force: true });
  }
});
