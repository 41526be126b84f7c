/**
 * Proves process.roles and the KRaft settings are checked as Kafka's
 * KafkaConfig checks them, with its messages (each one was taken from Kafka
 * 4.4's kafka-storage.sh format on the same properties), and that a
 * controller-only node serves only the controller's APIs and runs no broker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig, ConfigError } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { parseQuorumBootstrapServers, parseQuorumVoters } from '../../src/common/quorum-config.js';
import { validateKRaftConfig } from '../../src/node/kraft-config.js';
import { SpoolNode } from '../../src/node/node.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { apiByKey } from '../../src/protocol/apis.js';
import { WireClient, call } from '../server/wire-client.js';

const validate = (settings: Record<string, string>) => validateKRaftConfig(BrokerConfig.fromObject(settings));

function refused(settings: Record<string, string>, message: string): void {
  assert.throws(() => validate(settings), (error: Error) => error instanceof ConfigError && error.message === message);
}

test('each role\'s KRaft settings are refused with Kafka\'s message', () => {
  refused(
    { 'process.roles': 'broker', 'node.id': '1', 'controller.quorum.voters': '1@127.0.0.1:9093,2@127.0.0.1:9094', listeners: 'PLAINTEXT://127.0.0.1:9092' },
    "requirement failed: If process.roles contains just the 'broker' role, the node id 1 must not be included in the set of voters controller.quorum.voters=Set(1, 2)",
  );
  refused(
    { 'process.roles': 'controller', 'node.id': '1', 'controller.quorum.voters': '2@127.0.0.1:9094', listeners: 'CONTROLLER://127.0.0.1:9093' },
    "requirement failed: If process.roles contains the 'controller' role, the node id 1 must be included in the set of voters controller.quorum.voters=Set(2)",
  );
  refused(
    { 'process.roles': 'broker', 'node.id': '3', listeners: 'PLAINTEXT://127.0.0.1:9092' },
    'If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.',
  );
  refused(
    { 'process.roles': 'broker', 'node.id': '3', 'controller.quorum.voters': '1@127.0.0.1:9093', listeners: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093' },
    "requirement failed: controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role",
  );
  refused(
    { 'process.roles': 'broker', 'node.id': '3', 'controller.quorum.voters': '1@127.0.0.1:9093', listeners: 'PLAINTEXT://0.0.0.0:9092' },
    'requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.',
  );
  refused(
    { 'process.roles': 'controller', 'node.id': '1', 'controller.quorum.voters': '1@127.0.0.1:9093', listeners: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093' },
    'requirement failed: The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller',
  );
  refused(
    { 'process.roles': 'broker,controller', 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:9092' },
    "requirement failed: controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role",
  );
  refused(
    { 'process.roles': 'broker,controller', 'node.id': '1', listeners: 'CONTROLLER://127.0.0.1:9093' },
    'requirement failed: There must be at least one broker advertised listener. Perhaps all listeners appear in controller.listener.names?',
  );
  refused({ 'process.roles': 'zookeeper' }, "Unknown process role 'zookeeper' (only 'broker' and 'controller' are allowed roles)");
});

test('a combined node needs no quorum settings (a standalone quorum of itself); roles and voters come back parsed', () => {
  const standalone = validate({ 'process.roles': 'broker,controller' });
  assert.deepEqual([...standalone.roles].sort(), ['broker', 'controller']);
  assert.deepEqual(standalone.voters, []);
  const broker = validate({ 'process.roles': 'broker', 'node.id': '4', 'controller.quorum.bootstrap.servers': 'c1:9093,[::1]:9094', listeners: 'PLAINTEXT://127.0.0.1:9092' });
  assert.deepEqual([...broker.roles], ['broker']);
  assert.deepEqual(broker.bootstrapServers, [{ host: 'c1', port: 9093 }, { host: '::1', port: 9094 }]);
});

test('controller.quorum.voters and controller.quorum.bootstrap.servers are parsed with Kafka\'s rules and messages', () => {
  assert.deepEqual(parseQuorumVoters(['1@localhost:9093', '2@[::1]:9094']), [{ id: 1, host: 'localhost', port: 9093 }, { id: 2, host: '::1', port: 9094 }]);
  const form = 'Each entry should be in the form `{id}@{host}:{port}`.';
  assert.throws(() => parseQuorumVoters(['localhost:9093']), { message: `Invalid configuration value for controller.quorum.voters. ${form}` });
  assert.throws(() => parseQuorumVoters(['x@localhost:9093']), { message: 'Failed to parse voter ID as an integer from x' });
  assert.throws(() => parseQuorumVoters(['1@localhost']), { message: `Failed to parse host name from entry 1@localhost for the configuration controller.quorum.voters. ${form}` });
  assert.throws(() => parseQuorumVoters(['1@0.0.0.0:9093']), { message: 'Host string (0.0.0.0) is not routeable' });
  assert.throws(() => parseQuorumBootstrapServers(['localhost']), {
    message: 'Failed to parse host name from localhost for the configuration controller.quorum.bootstrap.servers. Each entry should be in the form "{host}:{port}"',
  });
});

test('a controller-only node serves only controller APIs and runs no broker', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-controller-'));
  const config = BrokerConfig.fromObject({ 'process.roles': 'controller', 'node.id': 1, 'controller.quorum.voters': '1@127.0.0.1:9093', listeners: 'CONTROLLER://127.0.0.1:0', 'log.dirs': dir });
  const node = new SpoolNode(config, undefined, silentLogger);
  try {
    await node.start();
    assert.equal(node.brokerServer, null);
    assert.throws(() => node.replicaManager, /node 1 has no broker role/);
    assert.equal(node.metadata.image.brokers.size, 0);
    assert.equal(node.metadata.image.controllers.get(1)?.listeners[0]?.port, node.listeners[0]!.port);
    const client = await WireClient.connect(`127.0.0.1:${node.listeners[0]!.port}`);
    const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' });
    client.close();
    for (const key of versions.apiKeys) assert.ok(apiByKey(key.apiKey)!.listeners.includes('controller'), `${apiByKey(key.apiKey)!.name} on a controller-only node`);
    assert.ok(versions.apiKeys.some((key) => key.apiKey === 62), 'BrokerRegistration served');
  } finally {
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('the inter-broker listener is inter.broker.listener.name, else the one named by security.inter.broker.protocol', () => {
  const ssl = { 'process.roles': 'broker,controller', listeners: 'SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093', 'listener.security.protocol.map': 'SSL:SSL,CONTROLLER:PLAINTEXT' };
  refused(ssl, 'requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are SSL');
  assert.deepEqual([...validate({ ...ssl, 'security.inter.broker.protocol': 'SSL' }).roles].sort(), ['broker', 'controller']);
  refused({ ...ssl, 'security.inter.broker.protocol': 'SSL', 'inter.broker.listener.name': 'SSL' }, 'Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.');
});
