/**
 * Proves the replication metrics on two brokers (and a controller) and a topic with
 * RF=2: after batches of known size are produced with acks=all and the
 * follower has caught up, the follower's ReplicationBytesIn and the
 * leader's ReplicationBytesOut grew by exactly those bytes, the follower's
 * BytesIn and the leader's BytesOut did not (Kafka leaves replication out
 * of both), and the follower's FetcherLagMetrics ConsumerLag is 0.
 * Waits are on observed state.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { BrokerConnection } from '../../src/client/connection.js';
import { realEnv } from '../../src/io/env.js';
import { startCluster } from '../../src/node/cluster.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { errorName } from '../../src/protocol/errors.js';
import { until } from '../interop/cluster/until.js';
import { hosted, partitionOf, QUICK_FAILOVER_CONFIG } from '../replication/cluster-topic.js';
import { scrape, sumOf, valueOf } from './metrics-scrape.js';

const TOPIC = 'replicated-metered';
const RECORDS_PER_BATCH = 4;
/** Batches produced while both replicas are up. */
const BATCHES_IN_SYNC = 6;
const WAIT = { waitMs: 120_000, pollMs: 25 };

function batch(index: number): Buffer {
  return buildBatch({ records: Array.from({ length: RECORDS_PER_BATCH }, (_, record) => ({ key: `k${index}-${record}`, value: `value ${record} of batch ${index}`, timestamp: 1_700_000_000_000 + record })) });
}

test('replication bytes and fetcher lag on two brokers with RF=2', { timeout: 180_000 }, async () => {
  const cluster = await startCluster({
    // A controller of its own: stopping a broker must not cost the quorum its majority.
    controllers: 1,
    brokers: 2,
    config: {
      ...QUICK_FAILOVER_CONFIG,
      'metrics.listener': 'http://127.0.0.1:0',
      // One batch per follower fetch, and a throttle window long enough that one batch keeps the leader's quota exceeded for the whole test.
      'replica.fetch.max.bytes': 64,
      'replication.quota.window.size.seconds': 60,
    },
  });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  let connection: BrokerConnection | null = null;
  try {
    await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 2, configs: { 'min.insync.replicas': '1', 'leader.replication.throttled.replicas': '*' } }]);
    await until('the ISR holds both', async () => (partitionOf(cluster, TOPIC)?.isr.length === 2 ? true : null), WAIT);
    const leaderId = partitionOf(cluster, TOPIC)!.leader;
    const followerId = partitionOf(cluster, TOPIC)!.replicas.find((id) => id !== leaderId)!;
    await until('the leader leads it', async () => (hosted(cluster, leaderId, TOPIC)?.isLeader === true ? true : null), WAIT);
    const leader = cluster.node(leaderId);
    const follower = cluster.node(followerId);
    const [host, port] = leader.bootstrapServer!.split(':') as [string, string];
    connection = await BrokerConnection.connect({ host, port: Number(port), env: realEnv, requestTimeoutMs: 10_000 });
    const produce = async (index: number, acks: number) => {
      const records = batch(index);
      const response = await connection!.send(Produce, { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] }, { versionMax: 12 });
      assert.equal(errorName(response.responses[0]!.partitionResponses[0]!.errorCode), 'NONE');
      return records.length;
    };

    const leaderBefore = await scrape(leader.node);
    const followerBefore = await scrape(follower.node);
    let bytes = 0;
    for (let index = 0; index < BATCHES_IN_SYNC; index++) bytes += await produce(index, -1);
    const inSyncEnd = BATCHES_IN_SYNC * RECORDS_PER_BATCH;
    const lagLabels = { clientid: `ReplicaFetcherThread-0-${leaderId}`, topic: TOPIC, partition: '0' };
    // acks=all answered, so the follower has every batch; its lag reads 0 once it had the answer that moved its high watermark.
    const followerAfter = await until('the follower has the high watermark and reports lag 0', async () => {
      if (hosted(cluster, followerId, TOPIC)?.log.highWatermark !== inSyncEnd) return null;
      const samples = await scrape(follower.node);
      return valueOf(samples, 'kafka_server_fetcherlagmetrics_consumerlag', lagLabels) === 0 ? samples : null;
    }, WAIT);
    const leaderAfter = await scrape(leader.node);
    const delta = (after: typeof leaderAfter, before: typeof leaderAfter, name: string, labels: Record<string, string> = {}) => (valueOf(after, name, labels) ?? 0) - (valueOf(before, name, labels) ?? 0);
    assert.equal(delta(followerAfter, followerBefore, 'kafka_server_brokertopicmetrics_replicationbytesin_total'), bytes);
    assert.equal(delta(leaderAfter, leaderBefore, 'kafka_server_brokertopicmetrics_replicationbytesout_total'), bytes);
    assert.equal(delta(leaderAfter, leaderBefore, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: TOPIC }), bytes);
    assert.equal(delta(followerAfter, followerBefore, 'kafka_server_brokertopicmetrics_bytesin_total'), 0, 'a follower\'s appends are not bytes in');
    assert.equal(delta(leaderAfter, leaderBefore, 'kafka_server_brokertopicmetrics_bytesout_total'), 0, 'fetches by a follower are not bytes out');
    assert.equal(delta(followerAfter, followerBefore, 'kafka_server_brokertopicmetrics_replicationbytesout_total'), 0);
    assert.equal(sumOf(leaderAfter, 'kafka_server_fetcherlagmetrics_consumerlag'), 0, 'the leader follows nothing of this topic');
    assert.equal(valueOf(leaderAfter, 'kafka_server_fetcherlagmetrics_consumerlag', { ...lagLabels, clientid: `ReplicaFetcherThread-0-${followerId}` }), undefined);

  } finally {
    connection?.destroy();
    await admin.close();
    await cluster.stop();
  }
});
