/**
 * Fetch from follower (KIP-392) on a real cluster: three combined Spool
 * nodes started in this process by startCluster, in racks rack-0, rack-1
 * and rack-2 (broker.rack, registered, and served in Metadata and
 * DescribeCluster), with replica.selector.class = Kafka's
 * RackAwareReplicaSelector. kcat
 * (librdkafka, a real client over real sockets) consumes an RF=3 topic
 * with client.rack set to a follower's rack: it reads every record, and
 * that follower is the broker that served them (its counter of record
 * bytes returned to consumers as follower grows; the other follower's
 * does not). Waits are on observed state with generous bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { startCluster } from '../../src/node/cluster.js';
import { RACK_AWARE_REPLICA_SELECTOR } from '../../src/replication/replica-selector.js';
import { until } from '../interop/cluster/until.js';
import { hosted, partitionOf } from './cluster-topic.js';

const TOPIC = 'rack-aware';
const RECORDS = 200;
const WAIT = { waitMs: 60_000, pollMs: 25 };

/** Runs kcat without blocking the event loop (the cluster runs in this process), bounded by `timeoutMs`. */
function kcat(args: readonly string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`kcat ${args.join(' ')} ended with ${code ?? signal}: ${stderr}`));
    });
  });
}

test('kcat with client.rack reads every record from the follower in its rack', async () => {
  const cluster = await startCluster({
    combined: 3,
    config: { 'replica.selector.class': RACK_AWARE_REPLICA_SELECTOR },
    nodeConfig: (nodeId) => ({ 'broker.rack': `rack-${nodeId}` }),
  });
  try {
    const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
    try {
      const described = await admin.describeCluster();
      assert.deepEqual(described.brokers.map((broker) => [broker.nodeId, broker.rack]).sort(), [[0, 'rack-0'], [1, 'rack-1'], [2, 'rack-2']], 'each broker.rack as registered');
      await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3 }]);
    } finally {
      await admin.close();
    }
    await until('the ISR holds all three', async () => (partitionOf(cluster, TOPIC)?.isr.length === 3 ? true : null), WAIT);
    const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, acks: -1 });
    try {
      for (let i = 0; i < RECORDS; i++) await producer.send({ topic: TOPIC, partition: 0, value: `v${i}` });
    } finally {
      await producer.close();
    }
    const leader = partitionOf(cluster, TOPIC)!.leader;
    const [follower, other] = [0, 1, 2].filter((id) => id !== leader) as [number, number];
    await until('every replica has the high watermark', async () => ([0, 1, 2].every((id) => hosted(cluster, id, TOPIC)?.highWatermark === RECORDS) ? true : null), WAIT);
    const servedBefore = cluster.node(follower).node.replicaManager.consumerBytesServedAsFollower;

    const output = await kcat(['-b', cluster.bootstrapServers, '-C', '-t', TOPIC, '-p', '0', '-o', 'beginning', '-c', String(RECORDS), '-f', '%o %s\n', '-X', `client.rack=rack-${follower}`]);
    const lines = output.trim().split('\n');
    assert.deepEqual(lines, Array.from({ length: RECORDS }, (_, i) => `${i} v${i}`));

    const served = cluster.node(follower).node.replicaManager.consumerBytesServedAsFollower - servedBefore;
    assert.ok(served > 0, `follower ${follower} (rack-${follower}) served the records (${served} bytes)`);
    assert.equal(cluster.node(other).node.replicaManager.consumerBytesServedAsFollower, 0, `follower ${other} served no consumer`);
  } finally {
    await cluster.stop();
  }
});
