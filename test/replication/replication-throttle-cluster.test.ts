/**
 * Replication throttles on a real cluster: three combined Spool nodes
 * (startCluster, real sockets and quorum), a topic with RF=3 whose
 * leader.replication.throttled.replicas and
 * follower.replication.throttled.replicas are `*`. A follower is stopped,
 * about 240 KB are written, the cluster-wide rates are set through
 * IncrementalAlterConfigs (as kafka-configs.sh --entity-default does),
 * leader 200 KB/s and follower 50 KB/s (so the follower's side binds
 * first), and the follower restarts: its throttle holds the fetches back
 * at times, and it still catches up and rejoins the ISR with the leader's
 * bytes. DescribeConfigs shows the rates as dynamic
 * cluster defaults. Waits are on observed state with generous bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { Producer } from '../../src/client/producer.js';
import { startCluster } from '../../src/node/cluster.js';
import { until } from '../interop/cluster/until.js';
import { hosted, partitionOf } from './cluster-topic.js';

const TOPIC = 'throttled';
const RECORDS = 60;
const LEADER_RATE_BYTES_PER_SECOND = 200_000;
const FOLLOWER_RATE_BYTES_PER_SECOND = 50_000;
const WAIT = { waitMs: 120_000, pollMs: 25 };

test('a throttled follower still catches up and rejoins the ISR', async () => {
  const cluster = await startCluster({
    combined: 3,
    config: { 'replica.fetch.max.bytes': 65_536, 'replica.lag.time.max.ms': 2000, 'broker.session.timeout.ms': 2000, 'broker.heartbeat.interval.ms': 200 },
  });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    const throttleAll = { 'leader.replication.throttled.replicas': '*', 'follower.replication.throttled.replicas': '*' };
    await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3, configs: throttleAll }]);
    await until('the ISR holds all three', async () => (partitionOf(cluster, TOPIC)?.isr.length === 3 ? true : null), WAIT);
    const leader = partitionOf(cluster, TOPIC)!.leader;
    const follower = [0, 1, 2].find((id) => id !== leader)!;
    await cluster.node(follower).stop();
    await until('the stopped follower leaves the ISR', async () => (partitionOf(cluster, TOPIC)?.isr.includes(follower) === false ? true : null), WAIT);

    const producer = new Producer({ bootstrapServers: cluster.bootstrapServers, acks: -1 });
    try {
      for (let i = 0; i < RECORDS; i++) await producer.send({ topic: TOPIC, partition: 0, value: `${i}:${'x'.repeat(4000)}` });
    } finally {
      await producer.close();
    }
    const rate = String(LEADER_RATE_BYTES_PER_SECOND);
    const ops = [
      { name: 'leader.replication.throttled.rate', op: 'set', value: rate },
      { name: 'follower.replication.throttled.rate', op: 'set', value: String(FOLLOWER_RATE_BYTES_PER_SECOND) },
    ] as const;
    await admin.alterConfigs([{ type: 'broker', name: '', ops }]);
    // The controller answers once the change is committed; the leader shows it once its metadata has caught up.
    const shown = await until('the leader shows the rate', async () => {
      const described = await admin.describeConfigs([{ type: 'broker', name: String(leader) }], { configNames: ['leader.replication.throttled.rate'] });
      return described[0]?.configs[0] ?? null;
    }, WAIT);
    assert.equal(shown.value, rate);
    assert.equal(shown.source, 'DYNAMIC_DEFAULT_BROKER_CONFIG');
    await until('the leader applies the rate', async () => (cluster.node(leader).node.replicaManager.leaderQuota.upperBound === LEADER_RATE_BYTES_PER_SECOND ? true : null), WAIT);

    await cluster.node(follower).start();
    const manager = cluster.node(follower).node.replicaManager;
    await until('the follower applies the rate', async () => (manager.followerQuota.upperBound === FOLLOWER_RATE_BYTES_PER_SECOND ? true : null), WAIT);
    await until('the throttled follower rejoins the ISR', async () => (partitionOf(cluster, TOPIC)?.isr.includes(follower) === true ? true : null), WAIT);
    assert.ok(manager.replicaFetcherManager.stats.throttledPartitionSkips > 0, 'the follower throttle held the partition back at times');
    const leaderLog = hosted(cluster, leader, TOPIC)!.log;
    await until('the follower has the leader\'s log end', async () => (hosted(cluster, follower, TOPIC)?.log.logEndOffset === leaderLog.logEndOffset ? true : null), WAIT);
    const read = async (id: number) => (await hosted(cluster, id, TOPIC)!.log.read(0, { maxBytes: 1 << 24 })).records;
    assert.deepEqual(await read(follower), await read(leader));
  } finally {
    await admin.close();
    await cluster.stop();
  }
});
