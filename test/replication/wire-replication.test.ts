/**
 * Replication over Kafka's wire against a real Spool node: node 1 (a
 * combined node: the controller and the leader) and two followers, brokers
 * 2 and 3, that register and heartbeat over the controller listener
 * (BrokerLifecycleManager on the RPC channel) and copy the leader with
 * their own replica managers, whose fetchers speak Fetch (v18, ReplicaState)
 * and ListOffsets to node 1's PLAINTEXT listener. The followers receive
 * node 1's metadata deltas (they sit in this process; a broker-only node
 * follows the metadata log itself once KRaft observers exist).
 *
 * Proves: an RF=3 topic with min.insync.replicas=2 takes acks=all writes
 * through a real client once the followers have them, byte for byte; a
 * follower that stops leaves the ISR through the node's own AlterPartition
 * to its controller (the controller writes the PartitionChangeRecord) and
 * acks=all still succeeds; with both followers gone a waiting write gets
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND once the ISR shrinks, and the next is
 * refused with NOT_ENOUGH_REPLICAS; a follower that comes back catches up
 * and rejoins.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { realEnv } from '../../src/io/env.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { KafkaError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { BrokerLifecycleManager } from '../../src/node/broker-lifecycle.js';
import { RpcControllerChannel } from '../../src/node/rpc-controller-channel.js';
import type { MetadataPublisher } from '../../src/metadata/image.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';

const TOPIC = 'over-the-wire';

async function until(what: string, predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

interface Follower {
  id: number;
  dir: string;
  lifecycle: BrokerLifecycleManager;
  channel: RpcControllerChannel;
  manager: ReplicaManager | null;
}

class WireCluster {
  readonly followers = new Map<number, Follower>();
  private readonly relays = new Map<number, ReplicaManager | null>();

  private constructor(readonly leader: RunningBroker, readonly leaderDir: string) {
    // Node 1's metadata loader takes publishers only before it starts: a relay added to its list
    // hands each delta to whichever follower replica managers run now.
    const relay: MetadataPublisher = {
      name: 'FollowerRelay',
      onMetadataUpdate: async (delta, image) => {
        for (const manager of this.relays.values()) await manager?.onMetadataUpdate(delta, image);
      },
    };
    (leader.broker.metadata as unknown as { publishers: MetadataPublisher[] }).publishers.push(relay);
  }

  static async start(): Promise<WireCluster> {
    const leaderDir = await mkdtemp(join(tmpdir(), 'spool-wire-repl-1-'));
    const leader = await startBroker({
      config: { 'log.dirs': leaderDir, 'replica.lag.time.max.ms': 1500, 'broker.session.timeout.ms': 6000, 'broker.heartbeat.interval.ms': 200 },
      logger: silentLogger,
    });
    const cluster = new WireCluster(leader, leaderDir);
    for (const id of [2, 3]) await cluster.register(id);
    return cluster;
  }

  private get image() {
    return this.leader.broker.metadata.image;
  }

  /** Broker `id` registers with node 1's controller over the wire and is unfenced. */
  private async register(id: number): Promise<void> {
    const controller = this.leader.broker.listeners.find((listener) => listener.name === 'CONTROLLER')!;
    const channel = new RpcControllerChannel({ nodeId: id, env: realEnv, candidates: [{ host: controller.advertisedHost, port: controller.advertisedPort }], requestTimeoutMs: 10_000 });
    const lifecycle = new BrokerLifecycleManager({
      channel,
      timers: realEnv.timers,
      random: realEnv.random,
      logger: silentLogger,
      heartbeatIntervalMs: 200,
      sessionTimeoutMs: 6000,
      metadataOffset: () => this.image.offset,
    });
    lifecycle.start({
      brokerId: id,
      clusterId: this.image.clusterId,
      incarnationId: Buffer.alloc(16, id).toString('base64url'),
      listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 19_090 + id, securityProtocol: 0 }],
      rack: null,
      logDirs: [Buffer.alloc(16, 40 + id).toString('base64url')],
    });
    await lifecycle.whenCaughtUp();
    lifecycle.setReadyToUnfence();
    await lifecycle.whenUnfenced();
    this.followers.set(id, { id, dir: await mkdtemp(join(tmpdir(), `spool-wire-repl-${id}-`)), lifecycle, channel, manager: null });
  }

  /** Starts follower `id`'s replica manager and hands it the current image. */
  async startFollower(id: number): Promise<void> {
    const follower = this.followers.get(id)!;
    const manager = new ReplicaManager({
      nodeId: id,
      config: BrokerConfig.fromObject({ 'log.dirs': follower.dir, 'replica.fetch.wait.max.ms': 200, 'replica.fetch.backoff.ms': 50 }),
      env: realEnv,
      log: silentLogger,
      metadata: this.leader.broker.metadata,
      brokerEpoch: () => follower.lifecycle.brokerEpoch,
      interBrokerListenerName: 'PLAINTEXT',
    });
    await manager.start();
    follower.manager = manager;
    const image = this.image;
    const topics = [...image.topicsByName.values()];
    await manager.onMetadataUpdate(
      { changedPartitions: topics.flatMap((topic) => [...topic.partitions.values()]), deletedTopics: [], changedTopicConfigs: topics, brokersChanged: true, changedFeatures: new Map(), offset: image.offset },
      image,
    );
    this.relays.set(id, manager);
  }

  async stopFollower(id: number): Promise<void> {
    const follower = this.followers.get(id)!;
    this.relays.set(id, null);
    await follower.manager?.stop();
    follower.manager = null;
  }

  partition() {
    return this.image.topicsByName.get(TOPIC)!.partitions.get(0)!;
  }

  async close(): Promise<void> {
    for (const follower of this.followers.values()) {
      this.relays.set(follower.id, null);
      await follower.manager?.stop();
      follower.lifecycle.close();
      follower.channel.close();
    }
    await this.leader.stop();
    for (const dir of [this.leaderDir, ...[...this.followers.values()].map((f) => f.dir)]) await rm(dir, { recursive: true, force: true });
  }
}

async function bytesOf(manager: ReplicaManager): Promise<Buffer> {
  const partition = manager.hostedPartitions().find((p) => p.topicPartition.topic === TOPIC)!;
  return (await partition.log.read(0, { maxBytes: 1 << 24 })).records;
}

test('RF=3 over the wire: acks=all through a real client, ISR shrink through AlterPartition, NOT_ENOUGH_REPLICAS, rejoin', async () => {
  const cluster = await WireCluster.start();
  const bootstrapServers = cluster.leader.bootstrapServers;
  const admin = new Admin({ bootstrapServers });
  const producer = new Producer({ bootstrapServers, acks: -1, retries: 0, deliveryTimeoutMs: 60_000 });
  try {
    await admin.createTopics([{ name: TOPIC, replicaAssignment: { 0: [1, 2, 3] }, configs: { 'min.insync.replicas': '2' } }]);
    await cluster.startFollower(2);
    await cluster.startFollower(3);
    for (let i = 0; i < 10; i++) await producer.send({ topic: TOPIC, partition: 0, value: `v${i}` });
    const leaderManager = cluster.leader.broker.replicaManager;
    const leaderBytes = await bytesOf(leaderManager);
    for (const id of [2, 3]) assert.deepEqual(await bytesOf(cluster.followers.get(id)!.manager!), leaderBytes, `follower ${id} has the leader's bytes`);

    await cluster.stopFollower(3);
    await producer.send({ topic: TOPIC, partition: 0, value: 'one follower down' });
    assert.deepEqual(cluster.partition().isr, [1, 2], 'the stopped follower left the ISR through the controller');

    // A follower at the leader's log end counts as caught up (Kafka's isCaughtUp): it leaves the ISR once a write waits for it.
    await cluster.stopFollower(2);
    await assert.rejects(producer.send({ topic: TOPIC, partition: 0, value: 'waits' }), (error: unknown) => error instanceof KafkaError && error.code === ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    assert.deepEqual(cluster.partition().isr, [1]);
    await assert.rejects(producer.send({ topic: TOPIC, partition: 0, value: 'two down' }), (error: unknown) => error instanceof KafkaError && error.code === ErrorCode.NOT_ENOUGH_REPLICAS);

    await cluster.startFollower(2);
    await until('follower 2 rejoins the ISR', () => cluster.partition().isr.includes(2));
    await producer.send({ topic: TOPIC, partition: 0, value: 'back' });
    assert.deepEqual(await bytesOf(cluster.followers.get(2)!.manager!), await bytesOf(leaderManager));
  } finally {
    await producer.close().catch(() => undefined);
    await admin.close();
    await cluster.close();
  }
});
