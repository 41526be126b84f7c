/**
 * Proves a node's metadata path (SharedServer, ControllerServer, the broker's
 * registration over the in-process controller channel, the MetadataLoader)
 * on a simulated disk with fake publishers: the
 * first image is published once this broker has registered and caught
 * up, and its unfencing follows as the next delta (Kafka's order); each operation's delta reaches every publisher, in order,
 * before the operation returns; a restart rebuilds the same image (leader
 * epochs moving on as Kafka's do); snapshots are taken by size and loaded;
 * producer-id blocks never repeat; cluster ids are kept in meta.properties.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { realNetwork } from '../../src/io/net.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { SpoolNode } from '../../src/node/node.js';
import type { MetadataDelta, MetadataImage, MetadataPublisher } from '../../src/metadata/image.js';
import { readMetaProperties } from '../../src/metadata/meta-properties.js';
import { listSnapshots } from '../../src/raft/snapshot.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const LOG_DIR = '/kafka-logs';

function node(fs: SimFileSystem, config: Record<string, string | number | boolean> = {}): SpoolNode {
  const clock = new ManualClock(1_700_000_000_000);
  const settings = {
    'log.dirs': LOG_DIR,
    listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
    'advertised.listeners': 'PLAINTEXT://broker.example:19092',
    ...config,
  };
  return new SpoolNode(BrokerConfig.fromObject(settings), { fs, clock, timers: clock, random: new SeededRandom(5), net: realNetwork }, silentLogger);
}

class RecordingPublisher implements MetadataPublisher {
  readonly updates: { delta: MetadataDelta; image: MetadataImage }[] = [];
  constructor(
    readonly name: string,
    private readonly trace: string[] = [],
  ) {}
  async onMetadataUpdate(delta: MetadataDelta, image: MetadataImage): Promise<void> {
    this.trace.push(`${this.name}:start`);
    await Promise.resolve();
    this.updates.push({ delta, image });
    this.trace.push(`${this.name}:end`);
  }
}

async function started(fs: SimFileSystem, config: Record<string, string | number | boolean> = {}) {
  const manager = node(fs, config);
  const publisher = new RecordingPublisher('p');
  manager.metadata.addPublisher(publisher);
  await manager.start();
  return { manager, publisher };
}

const topic = (name: string, numPartitions: number, configs: { name: string; value: string }[] = []) => ({ name, numPartitions, replicationFactor: 1, assignments: [], configs });

test('the first image is published once the registered broker has caught up, with the advertised endpoints; unfencing follows as a delta', async () => {
  const fs = new SimFileSystem(new SeededRandom(1));
  const { manager, publisher } = await started(fs);
  assert.equal(publisher.updates.length, 2);
  const { image: first, delta } = publisher.updates[0]!;
  assert.equal(delta.brokersChanged, true);
  assert.equal(first.brokers.get(1)!.fenced, true, 'Kafka publishes before it asks to be unfenced');
  const { image, delta: unfencing } = publisher.updates[1]!;
  assert.equal(unfencing.brokersChanged, true);
  assert.equal(image.features.get('metadata.version'), 25);
  const broker = image.brokers.get(1)!;
  assert.equal(broker.fenced, false);
  assert.deepEqual(broker.listeners, [{ name: 'PLAINTEXT', host: 'broker.example', port: 19092, securityProtocol: 0 }]);
  const controllerPort = manager.listeners.find((l) => l.name === 'CONTROLLER')!.port;
  assert.deepEqual(image.controllers.get(1)!.listeners, [{ name: 'CONTROLLER', host: '127.0.0.1', port: controllerPort, securityProtocol: 0 }]);
  assert.equal(manager.brokerServer!.brokerEpoch, broker.epoch);
  assert.equal(manager.metadata.image, image);
  await manager.stop();
});

test('an operation returns after every publisher, in order, has seen its delta', async () => {
  const fs = new SimFileSystem(new SeededRandom(2));
  const trace: string[] = [];
  const manager = node(fs);
  const first = new RecordingPublisher('first', trace);
  const second = new RecordingPublisher('second', trace);
  manager.metadata.addPublisher(first);
  manager.metadata.addPublisher(second);
  await manager.start();
  trace.length = 0;
  const results = await manager.controller.createTopics([topic('orders', 2)], { validateOnly: false });
  assert.equal(results[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(trace, ['first:start', 'first:end', 'second:start', 'second:end']);
  const delta = second.updates.at(-1)!.delta;
  assert.deepEqual(delta.changedPartitions.map((p) => [p.topicName, p.partition, p.leader]), [['orders', 0, 1], ['orders', 1, 1]]);
  assert.equal(manager.metadata.image.topicsByName.get('orders')!.id, results[0]!.topicId);
  await manager.stop();
});

test('a restart rebuilds the same topics and configs; leaders come back in a later epoch', async () => {
  const fs = new SimFileSystem(new SeededRandom(3));
  const first = await started(fs);
  await first.manager.controller.createTopics([topic('a', 2, [{ name: 'cleanup.policy', value: 'compact' }])], { validateOnly: false });
  await first.manager.controller.incrementalAlterConfigs([{ resourceType: 2, resourceName: 'a', configs: [{ name: 'retention.ms', value: '60000', configOperation: 0 }] }], { validateOnly: false });
  const before = first.manager.metadata.image;
  await first.manager.stop();
  const second = await started(fs);
  const after = second.manager.metadata.image;
  assert.equal(after.clusterId, before.clusterId);
  const a = after.topicsByName.get('a')!;
  assert.equal(a.id, before.topicsByName.get('a')!.id);
  assert.deepEqual(a.configs, new Map([['cleanup.policy', 'compact'], ['retention.ms', '60000']]));
  for (const partition of a.partitions.values()) {
    assert.equal(partition.leader, 1);
    assert.equal(partition.leaderEpoch, 2);
  }
  assert.equal(second.manager.metadata.topicConfig('a').retentionMs, 60000);
  assert.deepEqual(second.manager.metadata.topicConfig('a').cleanupPolicy, ['compact']);
  await second.manager.stop();
});

test('snapshots are taken once enough bytes were applied, and a restart starts from the latest', async () => {
  const fs = new SimFileSystem(new SeededRandom(4));
  const config = { 'metadata.log.max.record.bytes.between.snapshots': 2000 };
  const first = await started(fs, config);
  for (let i = 0; i < 10; i++) await first.manager.controller.createTopics([topic(`t${i}`, 3)], { validateOnly: false });
  await first.manager.metadata.awaitSnapshots();
  const snapshots = await listSnapshots(fs, `${LOG_DIR}/__cluster_metadata-0`);
  assert.ok(snapshots.length > 0);
  const image = first.manager.metadata.image;
  await first.manager.stop();
  const second = await started(fs, config);
  assert.deepEqual([...second.manager.metadata.image.topicsByName.keys()].sort(), [...image.topicsByName.keys()].sort());
  assert.equal(second.manager.metadata.image.topicsByName.get('t9')!.partitions.size, 3);
  await second.manager.stop();
});

test('producer-id blocks never repeat, across restarts too', async () => {
  const fs = new SimFileSystem(new SeededRandom(5));
  const first = await started(fs);
  assert.deepEqual(await first.manager.brokerServer!.allocateProducerIdBlock(1), { firstProducerId: 0, size: 1000 });
  assert.deepEqual(await first.manager.brokerServer!.allocateProducerIdBlock(1), { firstProducerId: 1000, size: 1000 });
  await first.manager.stop();
  const second = await started(fs);
  assert.deepEqual(await second.manager.brokerServer!.allocateProducerIdBlock(1), { firstProducerId: 2000, size: 1000 });
  await second.manager.stop();
});

test('the cluster id comes from cluster.id, is kept in meta.properties, and a different one is refused', async () => {
  const fs = new SimFileSystem(new SeededRandom(6));
  const clusterId = 'MkU3OEVBNTcwNTJENDM2Qk';
  const first = await started(fs, { 'cluster.id': clusterId });
  assert.equal(first.manager.metadata.image.clusterId, clusterId);
  await first.manager.stop();
  const meta = await readMetaProperties(fs, LOG_DIR);
  assert.equal(meta?.clusterId, clusterId);
  assert.equal(meta?.nodeId, 1);
  const again = await started(fs);
  assert.equal(again.manager.metadata.image.clusterId, clusterId);
  await again.manager.stop();
  const refused = node(fs, { 'cluster.id': 'AAAAAAAAAAAAAAAAAAAAAQ' });
  await assert.rejects(refused.start(), /doesn't match the stored cluster id/);
  await refused.stop();
});

test('auto-created topics take num.partitions; validateOnly creates nothing', async () => {
  const fs = new SimFileSystem(new SeededRandom(7));
  const { manager } = await started(fs, { 'num.partitions': 3 });
  const [auto] = await manager.brokerServer!.autoCreateTopics(['auto']);
  assert.equal(auto!.numPartitions, 3);
  assert.equal(manager.metadata.image.topicsByName.get('auto')!.partitions.size, 3);
  const [dry] = await manager.controller.createTopics([topic('dry', 1)], { validateOnly: true });
  assert.equal(dry!.errorCode, ErrorCode.NONE);
  assert.equal(manager.metadata.image.topicsByName.has('dry'), false);
  await manager.stop();
});

test('the coordinators\' internal topics are auto-created with their own settings', async () => {
  const fs = new SimFileSystem(new SeededRandom(8));
  const { manager } = await started(fs, { 'offsets.topic.num.partitions': 5, 'offsets.topic.replication.factor': 1, 'transaction.state.log.replication.factor': 1 });
  const [offsets, transactions] = await manager.brokerServer!.autoCreateTopics(['__consumer_offsets', '__transaction_state']);
  assert.equal(offsets!.numPartitions, 5);
  assert.equal(transactions!.numPartitions, 50);
  assert.deepEqual(manager.metadata.topicConfig('__consumer_offsets').cleanupPolicy, ['compact']);
  assert.equal(manager.metadata.topicConfig('__consumer_offsets').segmentBytes, 104_857_600);
  assert.equal(manager.metadata.topicConfig('__transaction_state').compressionType, 'uncompressed');
  assert.equal(manager.metadata.topicConfig('__transaction_state').minInsyncReplicas, 2);
  await manager.stop();
});
