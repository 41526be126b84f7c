/**
 * Proves the embedded cluster API: startCluster() starts a formatted node on
 * loopback ports and a temporary directory; a node killed as with kill -9
 * (no clean shutdown, its ports free at once) and restarted on the same
 * ports and directory still has every acknowledged record, and so does one
 * stopped cleanly; a node killed while it starts rejects its start and
 * starts again; stop() deletes the directories. Bad shapes are refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { realEnv } from '../../src/io/env.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';

async function produce(bootstrapServers: string, topic: string, values: readonly string[], partition?: number): Promise<void> {
  const producer = new Producer({ bootstrapServers, acks: -1 });
  try {
    for (const value of values) await producer.send({ topic, value, ...(partition === undefined ? {} : { partition }) });
  } finally {
    await producer.close();
  }
}

async function latestOffset(bootstrapServers: string, topic: string, partition = 0): Promise<number> {
  const admin = new Admin({ bootstrapServers });
  try {
    const [listed] = await admin.listOffsets([{ topic, partition, spec: 'latest' }]);
    return listed!.offset;
  } finally {
    await admin.close();
  }
}

/**
 * After a kill the restarted controller gives the dead incarnation's registration a fresh session, and refuses the new
 * incarnation (DUPLICATE_BROKER_REGISTRATION) until that session expires, as Kafka does: a short session keeps the
 * restart quick.
 */
const QUICK_SESSIONS = { 'broker.session.timeout.ms': 1000, 'broker.heartbeat.interval.ms': 200 } as const;

test('one combined node: records survive a kill and restart, and a clean stop and restart', async () => {
  const cluster = await startCluster({ config: { 'log.flush.interval.messages': 1, ...QUICK_SESSIONS } });
  const node = cluster.node(0);
  try {
    assert.deepEqual(node.roles, ['broker', 'controller']);
    assert.equal(cluster.bootstrapServers, node.bootstrapServer);
    assert.equal(node.node.metadata.image.clusterId, cluster.clusterId);
    await produce(cluster.bootstrapServers, 'orders', ['a', 'b', 'c']);

    await node.kill();
    assert.equal(node.running, false);
    await node.restart();
    assert.equal(node.running, true);
    assert.equal(await latestOffset(cluster.bootstrapServers, 'orders'), 3);

    await produce(cluster.bootstrapServers, 'orders', ['d']);
    await node.restart();
    assert.equal(await latestOffset(cluster.bootstrapServers, 'orders'), 4);
  } finally {
    await cluster.stop();
  }
  assert.equal(existsSync(node.node.config.logDirs[0]!), false);
});

test('durable: false: no node ever fsyncs, and what it wrote survives a kill and restart (the page cache outlives the process)', async () => {
  let syncs = 0;
  const counted = { ...realEnv.fs };
  counted.syncDir = (path) => (syncs++, realEnv.fs.syncDir(path));
  counted.writeFileAtomic = (path, data) => (syncs++, realEnv.fs.writeFileAtomic(path, data));
  counted.open = async (path, mode) => {
    const file = await realEnv.fs.open(path, mode);
    return { ...file, path: file.path, read: (b, p) => file.read(b, p), write: (c, p) => file.write(c, p), truncate: (n) => file.truncate(n), size: () => file.size(), close: () => file.close(), sync: () => (syncs++, file.sync()) };
  };
  const cluster = await startCluster({ durable: false, env: { ...realEnv, fs: counted }, config: { 'log.flush.interval.messages': 1, ...QUICK_SESSIONS } });
  try {
    await produce(cluster.bootstrapServers, 'orders', ['a', 'b']);
    await cluster.node(0).kill();
    await cluster.node(0).restart();
    assert.equal(await latestOffset(cluster.bootstrapServers, 'orders'), 2);
  } finally {
    await cluster.stop();
  }
  assert.equal(syncs, 0);
});

test('a cluster needs a controller and a broker', async () => {
  await assert.rejects(startCluster({ brokers: 2 }), /a cluster needs a controller/);
  await assert.rejects(startCluster({ controllers: 1 }), /a cluster needs a broker/);
});

test('a node killed while it starts: its start rejects, and it starts again on the same ports', async () => {
  const cluster = await startCluster({ config: QUICK_SESSIONS });
  const node = cluster.node(0);
  try {
    await node.kill();
    const starting = node.start();
    await node.kill();
    await assert.rejects(starting, /node 0 was killed while it started/);
    assert.equal(node.running, false);
    await node.start();
    assert.equal(node.running, true);
    await produce(cluster.bootstrapServers, 'fresh', ['x']);
    assert.equal(await latestOffset(cluster.bootstrapServers, 'fresh'), 1);
  } finally {
    await cluster.stop();
  }
});

/**
 * Resolves once every running broker's metadata image has `topic` (brokers apply the controller's records
 * asynchronously, as Kafka's do: a topic just created may be unknown to another broker for a moment).
 */
async function metadataEverywhere(cluster: RunningCluster, topic: string): Promise<void> {
  const brokers = () => cluster.nodes.filter((node) => node.running && node.roles.includes('broker'));
  while (!brokers().every((node) => node.node.metadata.image.topicsByName.has(topic))) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Creates `topic` with one partition per broker (RF=1) and returns each partition's leader. */
async function createSpread(cluster: RunningCluster, topic: string, bootstrapServers = cluster.bootstrapServers): Promise<number[]> {
  const admin = new Admin({ bootstrapServers });
  try {
    const brokers = cluster.nodes.filter((node) => node.roles.includes('broker')).length;
    await admin.createTopics([{ name: topic, numPartitions: brokers, replicationFactor: 1 }]);
    await metadataEverywhere(cluster, topic);
    const [described] = await admin.describeTopics([topic]);
    return described!.partitions.sort((a, b) => a.partition - b.partition).map((p) => p.leader);
  } finally {
    await admin.close();
  }
}

/** Every partition of `topic` gets `perPartition` records, then each partition's end offset is read back. */
async function produceEverywhere(cluster: RunningCluster, topic: string, partitions: number, perPartition: number): Promise<number[]> {
  const values = Array.from({ length: perPartition }, (_, i) => `v${i}`);
  for (let partition = 0; partition < partitions; partition++) await produce(cluster.bootstrapServers, topic, values, partition);
  const ends: number[] = [];
  for (let partition = 0; partition < partitions; partition++) ends.push(await latestOffset(cluster.bootstrapServers, topic, partition));
  return ends;
}

test('three combined nodes: one quorum, RF=1 partitions led by every broker; the active controller killed, another takes over, the killed node restarts with its data', async () => {
  const cluster = await startCluster({ combined: 3, config: QUICK_SESSIONS });
  try {
    assert.deepEqual(cluster.nodes.map((node) => node.nodeId), [0, 1, 2]);
    assert.equal(cluster.bootstrapServers.split(',').length, 3);
    const first = cluster.activeController();
    assert.ok(first !== null, 'a controller is active once the cluster is ready');
    assert.deepEqual([...(await createSpread(cluster, 'spread'))].sort(), [0, 1, 2]);
    assert.deepEqual(await produceEverywhere(cluster, 'spread', 3, 4), [4, 4, 4]);

    await first.kill();
    const others = cluster.nodes.filter((node) => node !== first);
    // Topic creation through a surviving broker needs the new active controller.
    const survivors = others.map((node) => node.bootstrapServer).join(',');
    assert.equal((await createSpread(cluster, 'after-failover', survivors)).length, 3);
    const second = cluster.activeController();
    assert.ok(second !== null && second !== first, 'another controller is active');

    await first.restart();
    assert.equal(first.running, true);
    assert.deepEqual(await produceEverywhere(cluster, 'spread', 3, 1), [5, 5, 5]);
  } finally {
    await cluster.stop();
  }
});

test('three controllers and three brokers: brokers follow the log as observers; topics, produce and fetch offsets through any broker; a broker stopped and restarted keeps its partitions', async () => {
  const cluster = await startCluster({ controllers: 3, brokers: 3, config: QUICK_SESSIONS });
  try {
    assert.deepEqual(cluster.nodes.map((node) => [node.nodeId, node.roles.join(',')]), [
      [0, 'broker'], [1, 'broker'], [2, 'broker'], [3000, 'controller'], [3001, 'controller'], [3002, 'controller'],
    ]);
    assert.ok((cluster.activeController()?.nodeId ?? -1) >= 3000);
    for (const broker of [0, 1, 2]) {
      const one = cluster.node(broker).bootstrapServer!;
      assert.deepEqual([...(await createSpread(cluster, `via-${broker}`, one))].sort(), [0, 1, 2]);
    }
    assert.deepEqual(await produceEverywhere(cluster, 'via-1', 3, 2), [2, 2, 2]);

    await cluster.node(1).stop();
    await cluster.node(1).start();
    assert.deepEqual(await produceEverywhere(cluster, 'via-1', 3, 1), [3, 3, 3]);
  } finally {
    await cluster.stop();
  }
});
