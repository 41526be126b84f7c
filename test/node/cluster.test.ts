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
import { startCluster } from '../../src/node/cluster.js';

async function produce(bootstrapServers: string, topic: string, values: readonly string[]): Promise<void> {
  const producer = new Producer({ bootstrapServers, acks: -1 });
  try {
    for (const value of values) await producer.send({ topic, value });
  } finally {
    await producer.close();
  }
}

async function latestOffset(bootstrapServers: string, topic: string): Promise<number> {
  const admin = new Admin({ bootstrapServers });
  try {
    const [listed] = await admin.listOffsets([{ topic, partition: 0, spec: 'latest' }]);
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
