/**
 * Proves GET /metrics against a known workload on a real node: batches of
 * known size produced over the wire to a two-partition topic, fetched back
 * once, and group offsets committed short of the end. The scrape must give
 * exactly what was sent: Produce requests and their NONE error counts,
 * bytes and messages in per topic and for all topics, bytes out, log end
 * and start offsets, log size and segments per partition, committed
 * offsets and lag per partition, and a failed produce counted as Kafka
 * counts one (NOT_ENOUGH_REPLICAS). Also: the listener is off unless
 * configured, a malformed metrics.listener stops the start with a
 * ConfigError, other paths are 404, and on three brokers a stopped
 * follower shows as an under-replicated partition on the leader.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { BrokerConnection } from '../../src/client/connection.js';
import { Consumer } from '../../src/client/consumer.js';
import { ConfigError } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { realEnv } from '../../src/io/env.js';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { startCluster } from '../../src/node/cluster.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { errorName } from '../../src/protocol/errors.js';
import { scrape, sumOf, valueOf, type Sample } from './metrics-scrape.js';

const TOPIC = 'metered';
const FAILING_TOPIC = 'needs-two-replicas';
const GROUP = 'metered-group';
/** Records per batch, and batches per partition of TOPIC. */
const RECORDS_PER_BATCH = 5;
const BATCHES = [4, 3] as const;
/** Produce v12 and older name topics (v13 carries topic ids). */
const PRODUCE_BY_NAME = { versionMax: 12 };
/** Between two scrapes while a test waits for the cluster to get somewhere (a pace, not a deadline). */
const POLL_INTERVAL_MS = 50;
/** Where the group's committed offsets stop, per partition (lag = log end offset - this). */
const COMMITTED = [7, 15] as const;

let dir: string;
let broker: RunningBroker;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'spool-metrics-'));
  broker = await startBroker({ config: { 'log.dirs': dir, 'metrics.listener': 'http://127.0.0.1:0' }, logger: silentLogger });
});

after(async () => {
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// ---- the workload

function batchFor(partition: number, index: number): Buffer {
  const records = Array.from({ length: RECORDS_PER_BATCH }, (_, record) => ({ key: `p${partition}-b${index}-r${record}`, value: `value ${record} of batch ${index}`.repeat(partition + 1), timestamp: 1_700_000_000_000 + record }));
  return buildBatch({ records });
}

test('a scrape after a known workload shows exactly the requests, bytes, offsets and lag it made', async () => {
  const node = broker.broker;
  const admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  const [host, port] = broker.bootstrapServers.split(':') as [string, string];
  const connection = await BrokerConnection.connect({ host, port: Number(port), env: realEnv, requestTimeoutMs: 10_000 });
  try {
    await admin.createTopics([
      { name: TOPIC, numPartitions: 2, replicationFactor: 1 },
      { name: FAILING_TOPIC, numPartitions: 1, replicationFactor: 1, configs: { 'min.insync.replicas': '2' } },
    ]);
    const before = await scrape(node);
    const produceRequestsBefore = sumOf(before, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' });
    const bytesInAllBefore = valueOf(before, 'kafka_server_brokertopicmetrics_bytesin_total') ?? 0;

    // One request per batch: partition 0 gets BATCHES[0] batches, partition 1 BATCHES[1].
    const batchBytes = [0, 0];
    let produceRequests = 0;
    for (const [partition, count] of BATCHES.entries()) {
      for (let index = 0; index < count; index++) {
        const records = batchFor(partition, index);
        batchBytes[partition]! += records.length;
        const response = await connection.send(Produce, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] }, PRODUCE_BY_NAME);
        produceRequests++;
        assert.equal(errorName(response.responses[0]!.partitionResponses[0]!.errorCode), 'NONE');
      }
    }
    const refused = await connection.send(Produce, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: FAILING_TOPIC, partitionData: [{ index: 0, records: batchFor(0, 0) }] }] }, PRODUCE_BY_NAME);
    produceRequests++;
    assert.equal(errorName(refused.responses[0]!.partitionResponses[0]!.errorCode), 'NOT_ENOUGH_REPLICAS');

    // One consumer fetch of both partitions from offset 0 takes every batch once.
    const fetched = await connection.send(Fetch, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
      topics: [{ topic: TOPIC, partitions: [0, 1].map((partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 })) }],
    }, { versionMax: 12 });
    assert.deepEqual(fetched.responses[0]!.partitions.map((p) => p.records?.length), batchBytes);

    const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, groupId: GROUP, enableAutoCommit: false });
    try {
      await consumer.commitSync(COMMITTED.map((offset, partition) => ({ topic: TOPIC, partition, offset })));
    } finally {
      await consumer.close();
    }

    const samples = await scrape(node);
    const topic = { topic: TOPIC };
    const records = BATCHES.map((count) => count * RECORDS_PER_BATCH);
    const totalBytes = batchBytes[0]! + batchBytes[1]!;

    // RequestMetrics: our Produce requests (Spool's client sends no others here), each answered with one NONE.
    assert.equal(sumOf(samples, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' }) - produceRequestsBefore, produceRequests);
    assert.equal(valueOf(samples, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NOT_ENOUGH_REPLICAS' }), 1);
    assert.equal(valueOf(samples, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' }), produceRequests - 1);
    assert.equal(valueOf(samples, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Produce' }), produceRequests);
    assert.ok(sumOf(samples, 'kafka_network_requestmetrics_requests_total', { request: 'FetchConsumer' }) >= 1);
    assert.equal(sumOf(samples, 'kafka_network_requestmetrics_requests_total', { request: 'FetchFollower' }), 0);
    assert.ok((valueOf(samples, 'kafka_network_requestmetrics_totaltimems', { request: 'Produce', quantile: '0.99' }) ?? 0) > 0);

    // BrokerTopicMetrics: bytes in are the batch bytes sent; the refused batch is not among them.
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total', topic), totalBytes);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_messagesin_total', topic), records[0]! + records[1]!);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_bytesout_total', topic), totalBytes);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_totalproducerequests_total', topic), produceRequests - 1);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_failedproducerequests_total', topic), 0);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_failedproducerequests_total', { topic: FAILING_TOPIC }), 1);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: FAILING_TOPIC }), 0);
    // All topics: ours plus the group's offset commit to __consumer_offsets.
    const offsetsBytesIn = valueOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: '__consumer_offsets' }) ?? 0;
    assert.ok(offsetsBytesIn > 0);
    assert.equal(valueOf(samples, 'kafka_server_brokertopicmetrics_bytesin_total')! - bytesInAllBefore, totalBytes + offsetsBytesIn);

    // kafka.log Log, per partition.
    for (const partition of [0, 1]) {
      const labels = { topic: TOPIC, partition: String(partition) };
      assert.equal(valueOf(samples, 'kafka_log_log_logendoffset', labels), records[partition]);
      assert.equal(valueOf(samples, 'kafka_log_log_logstartoffset', labels), 0);
      assert.equal(valueOf(samples, 'kafka_log_log_size', labels), batchBytes[partition]);
      assert.equal(valueOf(samples, 'kafka_log_log_numlogsegments', labels), 1);
      assert.equal(valueOf(samples, 'spool_partition_highwatermark', labels), records[partition]);
      assert.equal(valueOf(samples, 'spool_partition_replica_logendoffset', { ...labels, replica: String(node.nodeId) }), records[partition]);
      assert.equal(valueOf(samples, 'kafka_cluster_partition_underreplicated', labels), 0);
      assert.equal(valueOf(samples, 'kafka_cluster_partition_insyncreplicascount', labels), 1);
    }
    assert.equal(valueOf(samples, 'kafka_cluster_partition_underminisr', { topic: FAILING_TOPIC, partition: '0' }), 1);

    // ReplicaManager: every partition is led here; the failing topic's is under min ISR.
    const hosted = 2 + 1 + node.config.int('offsets.topic.num.partitions');
    assert.equal(valueOf(samples, 'kafka_server_replicamanager_partitioncount'), hosted);
    assert.equal(valueOf(samples, 'kafka_server_replicamanager_leadercount'), hosted);
    assert.equal(valueOf(samples, 'kafka_server_replicamanager_underreplicatedpartitions'), 0);
    assert.equal(valueOf(samples, 'kafka_server_replicamanager_underminisrpartitioncount'), 1);
    assert.equal(valueOf(samples, 'kafka_server_replicamanager_offlinereplicacount'), 0);
    assert.equal(valueOf(samples, 'kafka_controller_kafkacontroller_activecontrollercount'), 1);
    assert.equal(valueOf(samples, 'kafka_controller_kafkacontroller_offlinepartitionscount'), 0);
    assert.equal(valueOf(samples, 'kafka_controller_kafkacontroller_globalpartitioncount'), hosted);

    // Groups: the committed offsets and the lag behind the high watermark.
    for (const [partition, committed] of COMMITTED.entries()) {
      const labels = { consumergroup: GROUP, topic: TOPIC, partition: String(partition) };
      assert.equal(valueOf(samples, 'kafka_consumergroup_current_offset', labels), committed);
      assert.equal(valueOf(samples, 'kafka_consumergroup_lag', labels), records[partition]! - committed);
    }
    assert.equal(valueOf(samples, 'kafka_consumergroup_lag_sum', { consumergroup: GROUP, topic: TOPIC }), records[0]! - COMMITTED[0] + records[1]! - COMMITTED[1]);
    assert.equal(valueOf(samples, 'kafka_coordinator_group_groupmetadatamanager_numoffsets'), COMMITTED.length);

    // Node's own.
    assert.ok((valueOf(samples, 'nodejs_heap_size_used_bytes') ?? 0) > 0);
    const idle = valueOf(samples, 'kafka_network_socketserver_networkprocessoravgidle_percent');
    assert.ok(idle !== undefined && idle >= 0 && idle <= 1);
    assert.ok(samples.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds'));
  } finally {
    connection.destroy();
    await admin.close();
  }
});

test('a long-polling fetch of two partitions is one delayed operation and two PurgatorySize watch entries', async () => {
  const admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  const [host, port] = broker.bootstrapServers.split(':') as [string, string];
  const connection = await BrokerConnection.connect({ host, port: Number(port), env: realEnv, requestTimeoutMs: 30_000 });
  try {
    await admin.createTopics([{ name: 'long-polled', numPartitions: 2, replicationFactor: 1 }]);
    // Empty partitions, minBytes 1: the fetch waits in the Fetch purgatory, watched under both partitions, until a record arrives.
    const fetching = connection.send(Fetch, {
      replicaId: -1, maxWaitMs: 20_000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
      topics: [{ topic: 'long-polled', partitions: [0, 1].map((partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1 << 20 })) }],
    }, { versionMax: 12 });
    const fetchLabels = { delayedoperation: 'Fetch' };
    let samples = await scrape(broker.broker);
    while (valueOf(samples, 'kafka_server_delayedoperationpurgatory_numdelayedoperations', fetchLabels) !== 1) {
      await delay(POLL_INTERVAL_MS);
      samples = await scrape(broker.broker);
    }
    assert.equal(valueOf(samples, 'kafka_server_delayedoperationpurgatory_purgatorysize', fetchLabels), 2);
    assert.equal(valueOf(samples, 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedoperation: 'Produce' }), 0);
    const produced = await connection.send(Produce, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'long-polled', partitionData: [{ index: 1, records: batchFor(0, 0) }] }] }, PRODUCE_BY_NAME);
    assert.equal(errorName(produced.responses[0]!.partitionResponses[0]!.errorCode), 'NONE');
    await fetching;
    const after = await scrape(broker.broker);
    assert.equal(valueOf(after, 'kafka_server_delayedoperationpurgatory_purgatorysize', fetchLabels), 0);
    assert.equal(valueOf(after, 'kafka_server_delayedoperationpurgatory_numdelayedoperations', fetchLabels), 0);
  } finally {
    connection.destroy();
    await admin.close();
  }
});

test('flushes are timed in LogFlushRateAndTimeMs when a topic flushes every message', async () => {
  const node = broker.broker;
  const admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  const [host, port] = broker.bootstrapServers.split(':') as [string, string];
  const connection = await BrokerConnection.connect({ host, port: Number(port), env: realEnv, requestTimeoutMs: 10_000 });
  try {
    await admin.createTopics([{ name: 'flushed', numPartitions: 1, replicationFactor: 1, configs: { 'flush.messages': '1' } }]);
    const flushesBefore = valueOf(await scrape(node), 'kafka_log_logflushstats_logflushrateandtimems_count') ?? 0;
    const appends = 3;
    for (let index = 0; index < appends; index++) {
      const response = await connection.send(Produce, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'flushed', partitionData: [{ index: 0, records: batchFor(0, index) }] }] }, PRODUCE_BY_NAME);
      assert.equal(errorName(response.responses[0]!.partitionResponses[0]!.errorCode), 'NONE');
    }
    const samples = await scrape(node);
    assert.ok(valueOf(samples, 'kafka_log_logflushstats_logflushrateandtimems_count')! - flushesBefore >= appends);
  } finally {
    connection.destroy();
    await admin.close();
  }
});

test('only /metrics is served, to GET', async () => {
  const listener = broker.broker.metricsListener!;
  assert.equal((await fetch(`http://127.0.0.1:${listener.port}/`)).status, 404);
  assert.equal((await fetch(`http://127.0.0.1:${listener.port}/metrics`, { method: 'POST', body: 'x' })).status, 405);
});

test('the metrics listener is off unless metrics.listener is set', async () => {
  const offDir = mkdtempSync(join(tmpdir(), 'spool-metrics-off-'));
  const plain = await startBroker({ config: { 'log.dirs': offDir }, logger: silentLogger });
  try {
    assert.equal(plain.broker.metricsListener, null);
  } finally {
    await plain.stop();
    rmSync(offDir, { recursive: true, force: true });
  }
});

test('a malformed metrics.listener stops the start with a ConfigError', async () => {
  const badDir = mkdtempSync(join(tmpdir(), 'spool-metrics-bad-'));
  try {
    for (const value of ['localhost:9404', 'https://127.0.0.1:9404', 'http://127.0.0.1:70000']) {
      await assert.rejects(startBroker({ config: { 'log.dirs': badDir, 'metrics.listener': value }, logger: silentLogger }), (error: unknown) => error instanceof ConfigError && error.message.includes('metrics.listener'), value);
    }
  } finally {
    rmSync(badDir, { recursive: true, force: true });
  }
});

test('on three brokers, stopping a follower makes the leader report one under-replicated partition', { timeout: 120_000 }, async () => {
  const cluster = await startCluster({
    combined: 3,
    config: { 'metrics.listener': 'http://127.0.0.1:0', 'broker.session.timeout.ms': 2000, 'broker.heartbeat.interval.ms': 200, 'auto.leader.rebalance.enable': false },
  });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    await admin.createTopics([{ name: 'replicated', numPartitions: 1, replicationFactor: 3 }]);
    const leaderOf = () => cluster.nodes.map((n) => n.node.metadata.image.topicsByName.get('replicated')?.partitions.get(0)?.leader ?? -1).find((id) => id >= 0);
    let leaderId = leaderOf();
    // Polls the leader's scrape until the fully replicated partition shows as such.
    const leaderSamples = async (until: (samples: Sample[]) => boolean): Promise<Sample[]> => {
      for (;;) {
        leaderId = leaderOf();
        if (leaderId !== undefined) {
          const samples = await scrape(cluster.node(leaderId).node);
          if (until(samples)) return samples;
        }
        await delay(POLL_INTERVAL_MS);
      }
    };
    const labels = { topic: 'replicated', partition: '0' };
    await leaderSamples((s) => valueOf(s, 'kafka_cluster_partition_insyncreplicascount', labels) === 3);
    const follower = cluster.nodes.find((n) => n.nodeId !== leaderId)!;
    await follower.stop();
    const samples = await leaderSamples((s) => valueOf(s, 'kafka_cluster_partition_insyncreplicascount', labels) === 2);
    assert.equal(valueOf(samples, 'kafka_cluster_partition_underreplicated', labels), 1);
    assert.equal(valueOf(samples, 'kafka_server_replicamanager_underreplicatedpartitions'), sumOf(samples, 'kafka_cluster_partition_underreplicated'));
    assert.ok(sumOf(samples, 'kafka_cluster_partition_underreplicated') >= 1);
  } finally {
    await admin.close();
    await cluster.stop();
  }
});
