/**
 * The controller's broker-lifecycle RPCs over Kafka's wire, against a
 * running Spool node (a combined node: its own broker heartbeats to the
 * same controller): a second broker registers on the CONTROLLER listener
 * with BrokerRegistration, is unfenced by BrokerHeartbeat once caught up,
 * leads partitions, is fenced after broker.session.timeout.ms without a
 * heartbeat (the RF=2 partition's leadership moves to the ISR, the RF=1
 * one goes leaderless), comes back unfenced and leads again, shuts down in
 * a controlled way, and is unregistered. Kafka's error codes on the way:
 * DUPLICATE_BROKER_REGISTRATION, INCONSISTENT_CLUSTER_ID,
 * STALE_BROKER_EPOCH, BROKER_ID_NOT_REGISTERED; AllocateProducerIds blocks
 * never overlap across brokers.
 *
 * The node runs with a short session (broker.session.timeout.ms 1500,
 * heartbeats every 100 ms) so the fencing happens within the test; the
 * wait is for the fencing event (polled through Metadata), not a sleep.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { DescribeCluster } from '../../src/protocol/schemas/60-describe-cluster.js';
import { BrokerRegistration } from '../../src/protocol/schemas/62-broker-registration.js';
import { BrokerHeartbeat } from '../../src/protocol/schemas/63-broker-heartbeat.js';
import { UnregisterBroker } from '../../src/protocol/schemas/64-unregister-broker.js';
import { AllocateProducerIds } from '../../src/protocol/schemas/67-allocate-producer-ids.js';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { supportedFeatureRanges } from '../../src/metadata/features.js';
import { WireClient, call } from './wire-client.js';

const SESSION_TIMEOUT_MS = 1500;
/** How often the test looks at the metadata while waiting for the controller's timer. */
const POLL_MS = 50;
const uuid = (byte: number) => Buffer.alloc(16, byte).toString('base64url');
/** Far beyond any offset the test writes: the broker claims to have caught up. */
const CAUGHT_UP = 1_000_000;

function registration(clusterId: string, overrides: Record<string, unknown> = {}) {
  return {
    brokerId: 2,
    clusterId,
    incarnationId: uuid(2),
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 19_092, securityProtocol: 0 }],
    features: supportedFeatureRanges(),
    rack: null,
    logDirs: [uuid(42)],
    previousBrokerEpoch: -1,
    ...overrides,
  };
}

async function leaderOf(client: WireClient, topic: string): Promise<{ leaderId: number; isrNodes: number[] }> {
  const metadata = await call(client, Metadata, 12, { topics: [{ topicId: uuid(0), name: topic }], allowAutoTopicCreation: false });
  const partition = metadata.topics[0]!.partitions[0]!;
  return { leaderId: partition.leaderId, isrNodes: [...partition.isrNodes] };
}

async function waitForLeader(client: WireClient, topic: string, leaderId: number): Promise<{ leaderId: number; isrNodes: number[] }> {
  const deadline = Date.now() + SESSION_TIMEOUT_MS * 10;
  for (;;) {
    const current = await leaderOf(client, topic);
    if (current.leaderId === leaderId || Date.now() > deadline) return current;
    await delay(POLL_MS);
  }
}

test('a second broker registers, heartbeats, leads, is fenced after the session timeout, returns, shuts down and is unregistered over Kafka\'s RPCs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-lifecycle-rpc-'));
  const running = await startBroker({
    config: { 'log.dirs': dir, 'node.id': 1, 'broker.session.timeout.ms': SESSION_TIMEOUT_MS, 'broker.heartbeat.interval.ms': 100 },
    logger: silentLogger,
  });
  const controllerListener = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  const controller = await WireClient.connect(`${controllerListener.advertisedHost}:${controllerListener.advertisedPort}`);
  const client = await WireClient.connect(running.bootstrapServers);
  try {
    const clusterId = (await call(client, DescribeCluster, 0, {})).clusterId;
    assert.equal((await call(controller, BrokerRegistration, 4, registration('AAAAAAAAAAAAAAAAAAAAAA'))).errorCode, ErrorCode.INCONSISTENT_CLUSTER_ID);
    const registered = await call(controller, BrokerRegistration, 4, registration(clusterId));
    assert.equal(registered.errorCode, ErrorCode.NONE);
    const epoch = Number(registered.brokerEpoch);
    const heartbeat = (overrides: Record<string, unknown> = {}) =>
      call(controller, BrokerHeartbeat, 1, { brokerId: 2, brokerEpoch: epoch, currentMetadataOffset: CAUGHT_UP, wantFence: false, wantShutDown: false, ...overrides });
    const stale = await heartbeat({ brokerEpoch: epoch + 1000 });
    assert.deepEqual([stale.errorCode, stale.isFenced], [ErrorCode.STALE_BROKER_EPOCH, true]);
    const unfenced = await heartbeat();
    assert.deepEqual([unfenced.errorCode, unfenced.isCaughtUp, unfenced.isFenced, unfenced.shouldShutDown], [ErrorCode.NONE, true, false, false]);
    assert.equal((await call(controller, BrokerRegistration, 4, registration(clusterId, { incarnationId: uuid(3) }))).errorCode, ErrorCode.DUPLICATE_BROKER_REGISTRATION);

    const created = await call(client, CreateTopics, 7, {
      topics: [
        { name: 'led-by-two', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [2, 1] }], configs: [] },
        { name: 'only-on-two', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [2] }], configs: [] },
      ],
      timeoutMs: 10_000,
    });
    assert.deepEqual(created.topics.map((t) => t.errorCode), [ErrorCode.NONE, ErrorCode.NONE]);
    assert.deepEqual(await leaderOf(client, 'led-by-two'), { leaderId: 2, isrNodes: [2, 1] });

    // No heartbeat from broker 2: the controller fences it after the session timeout.
    assert.deepEqual(await waitForLeader(client, 'led-by-two', 1), { leaderId: 1, isrNodes: [1] });
    assert.deepEqual(await leaderOf(client, 'only-on-two'), { leaderId: -1, isrNodes: [2] });

    // Back: unfenced, and elected where it is the last of the ISR.
    assert.equal((await heartbeat()).isFenced, false);
    assert.deepEqual(await leaderOf(client, 'only-on-two'), { leaderId: 2, isrNodes: [2] });

    const producerIds = await call(controller, AllocateProducerIds, 0, { brokerId: 2, brokerEpoch: epoch });
    assert.equal(producerIds.errorCode, ErrorCode.NONE);
    const own = await running.broker.brokerServer!.allocateProducerIdBlock(1);
    assert.ok(Number(producerIds.producerIdStart) + producerIds.producerIdLen <= own.firstProducerId || own.firstProducerId + own.size <= Number(producerIds.producerIdStart), 'blocks do not overlap');
    assert.equal((await call(controller, AllocateProducerIds, 0, { brokerId: 2, brokerEpoch: epoch + 1 })).errorCode, ErrorCode.STALE_BROKER_EPOCH);

    // Controlled shutdown: leaderships move, then the controller lets the broker go.
    const first = await heartbeat({ wantShutDown: true });
    assert.deepEqual([first.isFenced, first.shouldShutDown], [false, false]);
    assert.deepEqual(await leaderOf(client, 'only-on-two'), { leaderId: -1, isrNodes: [2] });
    let answer = await heartbeat({ wantShutDown: true });
    const deadline = Date.now() + SESSION_TIMEOUT_MS;
    while (!answer.shouldShutDown && Date.now() < deadline) {
      await delay(POLL_MS);
      answer = await heartbeat({ wantShutDown: true });
    }
    assert.deepEqual([answer.shouldShutDown, answer.isFenced], [true, true]);

    const unregistered = await call(controller, UnregisterBroker, 0, { brokerId: 2 });
    assert.equal(unregistered.errorCode, ErrorCode.NONE);
    assert.equal((await call(client, UnregisterBroker, 0, { brokerId: 2 })).errorCode, ErrorCode.BROKER_ID_NOT_REGISTERED);
    assert.equal(running.broker.metadata.image.brokers.has(2), false);
  } finally {
    controller.close();
    client.close();
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
