/**
 * The console on a three-node cluster (startCluster, combined nodes, each
 * with its own console), where each node answers with its own view:
 * - the quorum leader's overview lists the three voters with their log end
 *   offsets (as DescribeQuorum); another node names the same leader;
 * - the partition leader's page shows every replica's position from the
 *   followers' fetches, all in the ISR once caught up; a follower's page
 *   shows its own positions as a follower and no replica states;
 * - a lagging follower (stopped, then more records written): the leader's
 *   page shows its log end offset behind the leader's and out of the ISR,
 *   the topic list counts the partition under-replicated, and the overview
 *   shows the broker fenced — what an operator (or `spool doctor`) reads.
 * Waits poll the console until it shows the state, with generous bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { startCluster, type RunningCluster } from '../../src/node/cluster.js';
import { until } from '../interop/cluster/until.js';
import { QUICK_FAILOVER_CONFIG } from '../replication/cluster-topic.js';
import { getJson } from './console-fixture.js';

const TOPIC = 'replicated';
const WAIT = { waitMs: 60_000, pollMs: 50 };

function consoleUrl(cluster: RunningCluster, nodeId: number): string {
  const address = cluster.node(nodeId).node.consoleListener;
  assert.ok(address !== null, `node ${nodeId} serves its console`);
  return `http://127.0.0.1:${address.port}`;
}

async function produce(cluster: RunningCluster, count: number, from: number): Promise<void> {
  const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, acks: -1, lingerMs: 0 });
  try {
    for (let i = 0; i < count; i++) await producer.send({ topic: TOPIC, partition: 0, value: `record-${from + i}` });
  } finally {
    await producer.close();
  }
}

test('each node of a cluster shows its own view; a lagging follower is visible on the leader', { timeout: 180_000 }, async () => {
  const cluster = await startCluster({ combined: 3, config: { ...QUICK_FAILOVER_CONFIG, 'console.listener': 'http://127.0.0.1:0' } });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3 }]);
    await produce(cluster, 10, 0);
    const [described] = await admin.describeTopics([TOPIC]);
    const leader = described!.partitions[0]!.leader;
    const follower = [0, 1, 2].find((id) => id !== leader)!;

    const caughtUp = await until('the leader shows every follower caught up', async () => {
      const { body } = await getJson(consoleUrl(cluster, leader), `topics/${TOPIC}/partitions/0`);
      const states = body.replicaStates as { brokerId: number; logEndOffset: number; inIsr: boolean }[];
      return states.length === 3 && states.every((r) => r.inIsr && r.logEndOffset === body.local.logEndOffset) ? body : null;
    }, WAIT);
    assert.deepEqual(caughtUp.replicaStates.map((r: any) => r.brokerId).sort(), [...described!.partitions[0]!.replicas].sort());
    assert.equal(caughtUp.local.role, 'leader');
    const [latest] = await admin.listOffsets([{ topic: TOPIC, partition: 0, spec: 'latest' }]);
    assert.equal(caughtUp.local.highWatermark, latest!.offset);

    const onFollower = (await getJson(consoleUrl(cluster, follower), `topics/${TOPIC}/partitions/0`)).body;
    assert.deepEqual([onFollower.local.role, onFollower.replicaStates, onFollower.leader], ['follower', null, leader]);

    const quorumLeader = cluster.activeController()!.nodeId;
    const quorum = (await getJson(consoleUrl(cluster, quorumLeader), 'overview')).body.quorum;
    assert.equal(quorum.leaderId, quorumLeader);
    assert.deepEqual(quorum.voters.map((v: any) => v.id).sort(), [0, 1, 2]);
    assert.ok(quorum.voters.every((v: any) => v.logEndOffset > 0), 'the leader knows every voter\'s log end');
    const other = [0, 1, 2].find((id) => id !== quorumLeader)!;
    assert.equal((await getJson(consoleUrl(cluster, other), 'overview')).body.quorum.leaderId, quorumLeader);

    // A lagging follower: stopped, then the leader takes more records.
    const leaderConsole = consoleUrl(cluster, leader);
    await cluster.node(follower).stop();
    await produce(cluster, 5, 10);
    const lagging = await until('the leader shows the stopped follower behind and out of the ISR', async () => {
      const { body } = await getJson(leaderConsole, `topics/${TOPIC}/partitions/0`);
      const state = body.replicaStates.find((r: any) => r.brokerId === follower);
      return !state.inIsr && !body.isr.includes(follower) && body.local.logEndOffset === 15 ? { body, state } : null;
    }, WAIT);
    assert.equal(lagging.state.logEndOffset, 10, 'its log end offset stays where it stopped');
    const row = (await getJson(leaderConsole, 'topics')).body.find((t: any) => t.name === TOPIC);
    assert.equal(row.underReplicated, 1);
    await until('the overview shows the stopped broker fenced', async () => {
      const { body } = await getJson(leaderConsole, 'overview');
      return body.brokers.find((b: any) => b.id === follower)?.fenced === true ? true : null;
    }, WAIT);
  } finally {
    await admin.close();
    await cluster.stop();
  }
});
