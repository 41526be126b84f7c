/**
 * Proves the RPC controller channel finds the active controller and
 * follows it: the broker lifecycle of a second broker runs over Kafka's
 * wire against a real Spool node, with an unreachable candidate and a
 * stale controller (a fake that names itself active and answers
 * NOT_CONTROLLER) listed first. The channel moves past both, the broker
 * registers, is unfenced, and shuts down in a controlled way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../src/io/env.js';
import { realNetwork } from '../../src/io/net.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { BrokerRegistration } from '../../src/protocol/schemas/62-broker-registration.js';
import { BrokerHeartbeat } from '../../src/protocol/schemas/63-broker-heartbeat.js';
import { DescribeCluster } from '../../src/protocol/schemas/60-describe-cluster.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { startBroker } from '../../src/node/embedded.js';
import { BrokerLifecycleManager } from '../../src/node/broker-lifecycle.js';
import { RpcControllerChannel, controllerCandidates } from '../../src/node/rpc-controller-channel.js';
import { silentLogger } from '../../src/common/logger.js';
import { BrokerConfig } from '../../src/common/config.js';
import { FakeBroker, apiVersionsBody, reply } from '../client/fake-broker.js';

/** A controller that believes it is active but is not: it names itself and refuses with NOT_CONTROLLER. */
async function staleController(): Promise<{ fake: FakeBroker; host: string; port: number }> {
  const fake = new FakeBroker();
  const { host, port } = await fake.start();
  fake.answer = (request) => {
    switch (request.header.requestApiKey) {
      case ApiVersions.key:
        return reply(request, apiVersionsBody({ 18: [0, 4], 60: [0, 2], 62: [0, 4], 63: [0, 2] }));
      case DescribeCluster.key:
        return reply(request, { errorCode: 0, endpointType: 2, clusterId: 'stale', controllerId: 99, brokers: [{ brokerId: 99, host, port, rack: null }] });
      case BrokerRegistration.key:
        return reply(request, { errorCode: ErrorCode.NOT_CONTROLLER, brokerEpoch: -1 });
      case BrokerHeartbeat.key:
        return reply(request, { errorCode: ErrorCode.NOT_CONTROLLER, isFenced: true });
      default:
        return null;
    }
  };
  return { fake, host, port };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const listener = await realNetwork.listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, (connection) => connection.destroy());
  const { port } = listener;
  await listener.close();
  return port;
}

test('controller candidates come from controller.quorum.voters, else controller.quorum.bootstrap.servers', () => {
  assert.deepEqual(controllerCandidates(BrokerConfig.fromObject({ 'controller.quorum.voters': '1@a:9093,2@[::1]:9094' })), [
    { host: 'a', port: 9093 },
    { host: '::1', port: 9094 },
  ]);
  assert.deepEqual(controllerCandidates(BrokerConfig.fromObject({ 'controller.quorum.bootstrap.servers': 'c:19093' })), [{ host: 'c', port: 19093 }]);
});

test('a broker registers, is unfenced and shuts down over the RPC channel, past an unreachable and a stale controller', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-rpc-channel-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const stale = await staleController();
  const controllerListener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const channel = new RpcControllerChannel({
    nodeId: 2,
    env: realEnv,
    candidates: [
      { host: '127.0.0.1', port: await closedPort() },
      { host: stale.host, port: stale.port },
      { host: controllerListener.advertisedHost, port: controllerListener.advertisedPort },
    ],
    requestTimeoutMs: 10_000,
  });
  const lifecycle = new BrokerLifecycleManager({
    channel,
    timers: realEnv.timers,
    random: realEnv.random,
    logger: silentLogger,
    heartbeatIntervalMs: 2000,
    sessionTimeoutMs: 9000,
    metadataOffset: () => running.broker.metadata.image.offset,
  });
  try {
    lifecycle.start({
      brokerId: 2,
      clusterId: running.broker.metadata.image.clusterId,
      incarnationId: Buffer.alloc(16, 2).toString('base64url'),
      listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 19_092, securityProtocol: 0 }],
      rack: 'r2',
      logDirs: [Buffer.alloc(16, 42).toString('base64url')],
    });
    await lifecycle.whenCaughtUp();
    lifecycle.setReadyToUnfence();
    await lifecycle.whenUnfenced();
    const registered = running.broker.metadata.image.brokers.get(2)!;
    assert.deepEqual([registered.fenced, registered.rack, registered.epoch], [false, 'r2', lifecycle.brokerEpoch]);
    assert.ok(stale.fake.received.some((r) => r.header.requestApiKey === BrokerRegistration.key), 'the stale controller was asked first and refused');
    await lifecycle.beginControlledShutdown();
    assert.equal(running.broker.metadata.image.brokers.get(2)!.fenced, true);
  } finally {
    lifecycle.close();
    channel.close();
    await stale.fake.stop();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
