/**
 * Fetch from follower (KIP-392) on a real cluster: three combined Spool
 * nodes started in this process by startCluster, in racks rack-0, rack-1
 * and rack-2 (broker.rack, registered, and served in Metadata and
 * DescribeCluster), with replica.selector.class = Kafka's
 * RackAwareReplicaSelector. Two real clients over real sockets consume an
 * RF=3 topic, each with client.rack set to one follower's rack: kcat
 * (librdkafka) and Kafka 4.4's kafka-console-consumer (the Java
 * KafkaConsumer). Each reads every record, and the follower in its rack is
 * the broker that served them (its counter of record bytes returned to
 * consumers as follower grows; the other follower's does not). Waits are
 * on observed state with generous bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { startCluster } from '../../src/node/cluster.js';
import { RACK_AWARE_REPLICA_SELECTOR } from '../../src/replication/replica-selector.js';
import { until } from '../interop/cluster/until.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../interop/kafka/kafka.js';
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

// Short-lived tool JVMs start faster with C1 only and the serial collector.
process.env.KAFKA_TOOL_OPTS ??= '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

test('kcat and the Java consumer with client.rack read every record from the follower in their rack', async (t) => {
  const cluster = await startCluster({
    combined: 3,
    config: { 'replica.selector.class': RACK_AWARE_REPLICA_SELECTOR },
    nodeConfig: (nodeId) => ({ 'broker.rack': `rack-${nodeId}` }),
  });
  try {
    const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
    try {
      await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3 }]);
      await until('the ISR holds all three', async () => (partitionOf(cluster, TOPIC)?.isr.length === 3 ? true : null), WAIT);
      // The broker asked may apply the last registration a moment after the others.
      const described = await until('DescribeCluster lists the three brokers', async () => {
        const answer = await admin.describeCluster();
        return answer.brokers.length === 3 ? answer : null;
      }, WAIT);
      assert.deepEqual(described.brokers.map((broker) => [broker.nodeId, broker.rack]).sort(), [[0, 'rack-0'], [1, 'rack-1'], [2, 'rack-2']], 'each broker.rack as registered');
    } finally {
      await admin.close();
    }
    const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, acks: -1 });
    try {
      for (let i = 0; i < RECORDS; i++) await producer.send({ topic: TOPIC, partition: 0, value: `v${i}` });
    } finally {
      await producer.close();
    }
    const leader = partitionOf(cluster, TOPIC)!.leader;
    const [follower, other] = [0, 1, 2].filter((id) => id !== leader) as [number, number];
    const servedBy = (id: number) => cluster.node(id).node.replicaManager.consumerBytesServedAsFollower;
    await until('every replica has the high watermark', async () => ([0, 1, 2].every((id) => hosted(cluster, id, TOPIC)?.highWatermark === RECORDS) ? true : null), WAIT);
    const expected = Array.from({ length: RECORDS }, (_, i) => `${i} v${i}`);

    const output = await kcat(['-b', cluster.bootstrapServers, '-C', '-t', TOPIC, '-p', '0', '-o', 'beginning', '-c', String(RECORDS), '-f', '%o %s\n', '-X', `client.rack=rack-${follower}`]);
    assert.deepEqual(output.trim().split('\n'), expected);
    assert.ok(servedBy(follower) > 0, `follower ${follower} (rack-${follower}) served kcat's records`);
    assert.equal(servedBy(other), 0, `follower ${other} served no consumer`);

    const skip = kafkaSkipReason();
    if (skip !== undefined) {
      t.diagnostic(`Java consumer part skipped: ${skip}`);
      return;
    }
    const servedBefore = servedBy(follower);
    const java = await runKafkaTool(TOOL.consoleConsumer, [
      '--bootstrap-server', cluster.bootstrapServers, '--topic', TOPIC, '--partition', '0', '--offset', 'earliest',
      '--max-messages', String(RECORDS), '--timeout-ms', '60000', '--formatter-property', 'print.offset=true',
      '--command-property', `client.rack=rack-${other}`,
    ]);
    assert.equal(java.code, 0, java.stderr);
    assert.deepEqual(java.stdout.trim().split('\n').map((line) => line.replace(/^Offset:(\d+)\t/, '$1 ')), expected);
    assert.ok(servedBy(other) > 0, `follower ${other} (rack-${other}) served the Java consumer's records`);
    assert.equal(servedBy(follower), servedBefore, `follower ${follower} served the Java consumer nothing`);
  } finally {
    await cluster.stop();
  }
});
