/**
 * Elections on a real cluster (startCluster: one controller and three
 * brokers in this process, real sockets, KRaft, broker lifecycle, follower
 * fetchers), formatted with eligible.leader.replicas.version=1, a topic with
 * RF=3, min.insync.replicas=2 and unclean.leader.election.enable false:
 * - ELR keeps a clean leader where the plain ISR would have needed an
 *   unclean election: two followers stop cleanly (the second one leaves the
 *   ISR for the ELR), then the leader is killed; the ISR is empty, and the
 *   first follower to come back is elected from the ELR, with every
 *   acknowledged record (without ELR the partition would stay leaderless
 *   until the killed leader returned: test/controller/elections.test.ts);
 *   `spool topics --describe` shows the Elr and LastKnownElr columns as
 *   kafka-topics.sh does;
 * - a preferred election moves leadership back to the first replica, run by
 *   Kafka 4.4's kafka-leader-election.sh (skipped without the Kafka jars)
 *   and by `spool leader-election`, which print the same;
 * - an UNCLEAN election (spool leader-election) elects a live replica out of
 *   sync, which starts RECOVERING and reports RECOVERED (KIP-704).
 * Waits are for events seen in the nodes' metadata, never fixed sleeps.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Producer } from '../../src/client/producer.js';
import { Admin } from '../../src/client/admin.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';
import { committedValuesOn } from './committed-values.js';
import { QUICK_FAILOVER_CONFIG } from './cluster-topic.js';
import type { SpoolNode } from '../../src/node/node.js';
import { until } from '../interop/cluster/until.js';
import { kafkaSkipReason, runKafkaTool, TOOL } from '../interop/kafka/kafka.js';
import { spool } from '../cli/cli-io.js';

const TOPIC = 'elr';
const UNCLEAN_TOPIC = 'unclean';
const RECORDS = 10;
const WAIT = { waitMs: 60_000, pollMs: 25 };
const CONFIG = QUICK_FAILOVER_CONFIG;

let cluster: RunningCluster;

before(async () => {
  cluster = await startCluster({ controllers: 1, brokers: 3, config: CONFIG, features: new Map([['eligible.leader.replicas.version', 1]]) });
});

after(async () => {
  for (const node of cluster?.nodes ?? []) if (!node.roles.includes('controller')) await node.kill();
  await cluster?.stop();
});

/** The partition as the most advanced running image shows it. */
function partitionOf() {
  const images = cluster.nodes.filter((node) => node.running).map((node) => node.node.metadata.image).sort((a, b) => b.offset - a.offset);
  return images[0]?.topicsByName.get(TOPIC)?.partitions.get(0);
}

function when(what: string, predicate: (p: NonNullable<ReturnType<typeof partitionOf>>) => boolean): Promise<true> {
  return until(what, async () => {
    const partition = partitionOf();
    return partition !== undefined && predicate(partition) ? true : null;
  }, WAIT);
}

function leads(node: SpoolNode): boolean {
  return node.replicaManager.hostedPartitions().some((p) => p.topicPartition.topic === TOPIC && p.isLeader);
}

function valuesOn(node: SpoolNode): Promise<string[]> {
  return committedValuesOn(node, TOPIC);
}

test('ELR keeps a clean leader where the plain ISR would have needed an unclean election', async () => {
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, acks: -1 });
  const acked: string[] = [];
  try {
    await admin.createTopics([{ name: TOPIC, replicaAssignment: { 0: [0, 1, 2] }, configs: { 'min.insync.replicas': '2' } }]);
    await when('the ISR holds all three', (p) => p.isr.length === 3);
    await until('broker 0 leads', async () => (leads(cluster.node(0).node) ? true : null), WAIT);
    for (let i = 0; i < RECORDS; i++) {
      await producer.send({ topic: TOPIC, partition: 0, value: `v${i}` });
      acked.push(`v${i}`);
    }
  } finally {
    await producer.close();
    await admin.close();
  }
  await cluster.node(2).stop();
  await when('2 left the ISR, which is still at min.insync.replicas', (p) => p.isr.join() === '0,1' && p.elr.length === 0);
  await cluster.node(1).stop();
  await when('1 left the ISR for the ELR', (p) => p.isr.join() === '0' && p.elr.join() === '1');
  const describe = ['--bootstrap-server', cluster.node(0).bootstrapServer!, '--describe', '--topic', TOPIC];
  const ours = await spool(['topics', ...describe]);
  assert.match(ours.out, /\tLeader: 0\tReplicas: 0,1,2\tIsr: 0\t.*Elr: 1\tLastKnownElr: \n/, ours.err);
  if (kafkaSkipReason() === undefined) {
    const kafka = await runKafkaTool(TOOL.topics, describe);
    assert.equal(ours.out, kafka.stdout, 'spool topics --describe prints what kafka-topics.sh prints');
  }
  await cluster.node(0).kill();
  const leaderless = await when('the leader is fenced: an empty ISR', (p) => p.leader === -1 && p.isr.length === 0);
  assert.equal(leaderless, true);
  assert.deepEqual(partitionOf()!.elr, [0, 1]);
  assert.deepEqual(partitionOf()!.lastKnownElr, [0]);

  await cluster.node(1).start();
  await when('1 is elected from the ELR', (p) => p.leader === 1);
  const elected = partitionOf()!;
  assert.deepEqual(elected.isr, [1], 'the ELR member is the ISR alone');
  assert.equal(elected.leaderRecoveryState ?? 0, 0, 'a clean election: no leader recovery');
  await until('1 serves every acknowledged record', async () => ((await valuesOn(cluster.node(1).node)).length === RECORDS ? true : null), WAIT);
  assert.deepEqual(await valuesOn(cluster.node(1).node), acked);

  await cluster.node(0).start();
  await cluster.node(2).start();
  await when('all three back in the ISR, the ELR cleared', (p) => p.isr.length === 3 && p.elr.length === 0 && p.lastKnownElr.length === 0);
});

test('a preferred election moves leadership back to the first replica (kafka-leader-election.sh and spool leader-election)', async () => {
  assert.equal(partitionOf()!.leader, 1, 'the ELR test left 1 leading');
  const args = ['--bootstrap-server', cluster.bootstrapServers, '--election-type', 'PREFERRED', '--topic', TOPIC, '--partition', '0'];
  const skip = kafkaSkipReason();
  const moved = `Successfully completed leader election (PREFERRED) for partitions ${TOPIC}-0\n`;
  const notNeeded = `Valid replica already elected for partitions ${TOPIC}-0\n`;
  if (skip === undefined) {
    const kafka = await runKafkaTool(TOOL.leaderElection, args);
    assert.equal(kafka.stdout, moved, kafka.stderr);
    assert.equal(kafka.code, 0);
    await when('0 leads again', (p) => p.leader === 0);
    const again = await runKafkaTool(TOOL.leaderElection, args);
    assert.deepEqual({ out: again.stdout, code: again.code }, { out: notNeeded, code: 0 });
    // The same state, the same answer from Spool's tool.
    const ours = await spool(['leader-election', ...args]);
    assert.deepEqual({ out: ours.out, code: ours.code }, { out: notNeeded, code: 0 });
    // Leadership away from 0 again, for Spool's tool to move back.
    await cluster.node(0).restart();
    await when('0 back in the ISR, not leading', (p) => p.isr.length === 3 && p.leader !== 0);
  }
  const ours = await spool(['leader-election', '--bootstrap-server', cluster.bootstrapServers, '--election-type', 'preferred', '--all-topic-partitions']);
  assert.deepEqual({ out: ours.out, code: ours.code }, { out: moved, code: 0 }, ours.err);
  await when('0 leads again', (p) => p.leader === 0);
  const refused = await spool(['leader-election', '--bootstrap-server', cluster.bootstrapServers, '--election-type', 'UNCLEAN', '--topic', TOPIC]);
  assert.deepEqual({ err: refused.err.trim(), code: refused.code }, { err: 'Missing required option(s): partition', code: 1 });
});

test('an UNCLEAN election by spool leader-election elects an out-of-sync replica, which recovers (RECOVERING, then RECOVERED)', async () => {
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    await admin.createTopics([{ name: UNCLEAN_TOPIC, replicaAssignment: { 0: [1, 2] }, configs: { 'min.insync.replicas': '1' } }]);
  } finally {
    await admin.close();
  }
  const unclean = () => cluster.node(0).node.metadata.image.topicsByName.get(UNCLEAN_TOPIC)?.partitions.get(0);
  const whenUnclean = (what: string, predicate: (p: NonNullable<ReturnType<typeof unclean>>) => boolean) =>
    until(what, async () => {
      const partition = unclean();
      return partition !== undefined && predicate(partition) ? true : null;
    }, WAIT);
  await whenUnclean('both replicas in sync', (p) => p.isr.length === 2);
  await cluster.node(2).stop();
  await whenUnclean('2 left the ISR', (p) => p.isr.join() === '1');
  await cluster.node(1).kill();
  await whenUnclean('no leader, 1 the only eligible one', (p) => p.leader === -1 && p.elr.join() === '1');
  await cluster.node(2).start();
  await until('2 is back', async () => (cluster.node(0).node.metadata.image.brokers.get(2)?.fenced === false ? true : null), WAIT);
  assert.equal(unclean()!.leader, -1, 'unclean.leader.election.enable is false: 2 is not elected by itself');
  const args = ['--bootstrap-server', cluster.node(0).bootstrapServer!, '--election-type', 'UNCLEAN', '--topic', UNCLEAN_TOPIC, '--partition', '0'];
  const ours = await spool(['leader-election', ...args]);
  assert.deepEqual({ out: ours.out, code: ours.code }, { out: `Successfully completed leader election (UNCLEAN) for partitions ${UNCLEAN_TOPIC}-0\n`, code: 0 }, ours.err);
  await whenUnclean('2 leads, alone in the ISR', (p) => p.leader === 2 && p.isr.join() === '2');
  await whenUnclean('its leader reported RECOVERED', (p) => (p.leaderRecoveryState ?? 0) === 0);
  const again = await spool(['leader-election', ...args]);
  assert.deepEqual({ out: again.out, code: again.code }, { out: `Valid replica already elected for partitions ${UNCLEAN_TOPIC}-0\n`, code: 0 });
});
