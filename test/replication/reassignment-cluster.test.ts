/**
 * Partition reassignment on a real cluster (startCluster: one controller
 * and three brokers in this process, real sockets, the brokers forwarding
 * AlterPartitionReassignments to the controller), driven by
 * `spool reassign-partitions` with Kafka's JSON:
 * - an RF=1 partition with data moves from broker 0 to broker 1: broker 1
 *   creates the log and fetches every record, the controller completes the
 *   move when broker 1 joins the ISR, broker 0 stops and deletes its log,
 *   and a consumer reads every record from the new leader;
 * - the same partition grows from RF 1 to 3 (both new replicas catch up and
 *   join the ISR, same records on each) and shrinks from 3 to 2 (the
 *   removed replica deletes its log).
 * Waits are on conditions observed through the nodes, never fixed sleeps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';
import { until } from '../interop/cluster/until.js';
import { spool } from '../cli/cli-io.js';

const TOPIC = 'moving';
const RECORDS = 300;
const WAIT = { waitMs: 60_000, pollMs: 25 };
const CONFIG = { 'broker.heartbeat.interval.ms': 200, 'replica.fetch.backoff.ms': 100, 'replica.lag.time.max.ms': 5000 } as const;

function partitionOf(cluster: RunningCluster) {
  const images = cluster.nodes.filter((node) => node.running).map((node) => node.node.metadata.image).sort((a, b) => b.offset - a.offset);
  return images[0]?.topicsByName.get(TOPIC)?.partitions.get(0);
}

function hosted(cluster: RunningCluster, brokerId: number) {
  return cluster.node(brokerId).node.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === TOPIC) ?? null;
}

function logDirOf(cluster: RunningCluster, brokerId: number): string {
  return join(cluster.node(brokerId).node.config.logDirs[0]!, `${TOPIC}-0`);
}

/** Runs `spool reassign-partitions --execute` for `replicas`, then --verify until it reports the partition completed. */
async function reassign(cluster: RunningCluster, dir: string, replicas: number[]): Promise<string> {
  const file = join(dir, `to-${replicas.join('-')}.json`);
  writeFileSync(file, JSON.stringify({ version: 1, partitions: [{ topic: TOPIC, partition: 0, replicas, log_dirs: replicas.map(() => 'any') }] }));
  const base = ['reassign-partitions', '--bootstrap-server', cluster.bootstrapServers, '--reassignment-json-file', file];
  const executed = await spool([...base, '--execute']);
  assert.equal(executed.code, 0, executed.err);
  assert.match(executed.out, new RegExp(`Successfully started partition reassignment for ${TOPIC}-0\\n$`));
  return until('the reassignment completes', async () => {
    const verified = await spool([...base, '--verify']);
    return verified.out.includes(`Reassignment of partition ${TOPIC}-0 is completed.`) ? verified.out : null;
  }, WAIT);
}

async function consumeAll(cluster: RunningCluster): Promise<string[]> {
  const consumer = new Consumer({ bootstrapServers: cluster.bootstrapServers, autoOffsetReset: 'earliest', enableAutoCommit: false });
  try {
    consumer.assign([{ topic: TOPIC, partition: 0 }]);
    const values: string[] = [];
    for (let polls = 0; polls < 200 && values.length < RECORDS; polls++) values.push(...(await consumer.poll(500)).map((record) => record.value!.toString()));
    return values;
  } finally {
    await consumer.close();
  }
}

test('move an RF=1 partition to another broker, grow it to RF=3 and shrink it to RF=2, with its data', async () => {
  const cluster = await startCluster({ controllers: 1, brokers: 3, config: CONFIG });
  const dir = mkdtempSync(join(tmpdir(), 'spool-reassign-'));
  try {
    const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
    try {
      await admin.createTopics([{ name: TOPIC, replicaAssignment: { 0: [0] } }]);
    } finally {
      await admin.close();
    }
    await until('broker 0 leads', async () => (hosted(cluster, 0)?.isLeader === true ? true : null), WAIT);
    const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, acks: -1 });
    const sent = Array.from({ length: RECORDS }, (_, i) => `record-${i}`);
    try {
      for (const value of sent) await producer.send({ topic: TOPIC, partition: 0, value });
    } finally {
      await producer.close();
    }
    assert.equal(hosted(cluster, 0)!.log.logEndOffset, RECORDS);

    // Move 0 -> 1.
    const moved = await reassign(cluster, dir, [1]);
    assert.match(moved, /^Status of partition reassignment:\nReassignment of partition moving-0 is completed\.\n\nClearing broker-level throttles on brokers 0,1,2\nClearing topic-level throttles on topic moving\n$/);
    let partition = partitionOf(cluster)!;
    assert.deepEqual([partition.replicas, partition.isr, partition.leader, partition.addingReplicas, partition.removingReplicas], [[1], [1], 1, [], []]);
    await until('broker 0 stops hosting the partition and deletes its log', async () => (hosted(cluster, 0) === null && !existsSync(logDirOf(cluster, 0)) ? true : null), WAIT);
    assert.equal(hosted(cluster, 1)!.log.logEndOffset, RECORDS, 'broker 1 fetched every record');
    assert.deepEqual(await consumeAll(cluster), sent, 'a consumer reads every record, in order, from the new leader');

    // Grow 1 -> 3.
    await reassign(cluster, dir, [1, 0, 2]);
    partition = partitionOf(cluster)!;
    assert.deepEqual([partition.replicas, [...partition.isr].sort(), partition.leader], [[1, 0, 2], [0, 1, 2], 1]);
    for (const id of [0, 2]) {
      await until(`broker ${id} has every record`, async () => (hosted(cluster, id)?.log.logEndOffset === RECORDS ? true : null), WAIT);
    }

    // Shrink 3 -> 2.
    await reassign(cluster, dir, [1, 2]);
    partition = partitionOf(cluster)!;
    assert.deepEqual([partition.replicas, [...partition.isr].sort(), partition.leader], [[1, 2], [1, 2], 1]);
    await until('broker 0 deletes its log again', async () => (hosted(cluster, 0) === null && !existsSync(logDirOf(cluster, 0)) ? true : null), WAIT);
    assert.deepEqual(await consumeAll(cluster), sent, 'still every record after the shrink');
    const listed = await spool(['reassign-partitions', '--bootstrap-server', cluster.bootstrapServers, '--list']);
    assert.equal(listed.out, 'No partition reassignments found.\n');
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
