/**
 * Proves the raft-metrics gauges on GET /metrics of a real cluster (one
 * controller-only node, one broker-only node): the controller reports
 * itself leader of its epoch with the high watermark and log end offset
 * its Raft client keeps, the broker reports itself an observer of the same
 * leader and epoch, and creating a topic (a TopicRecord and a
 * PartitionRecord) moves the controller's log end offset and high
 * watermark forward by at least those two records.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { startCluster } from '../../src/node/cluster.js';
import type { SpoolNode } from '../../src/node/node.js';
import { until } from '../interop/cluster/until.js';
import { scrape, valueOf } from './metrics-scrape.js';

const WAIT = { waitMs: 60_000, pollMs: 25 };
const RAFT = 'kafka_server_raft_metrics';

interface RaftGauges {
  leader: number | undefined;
  epoch: number | undefined;
  highWatermark: number | undefined;
  logEndOffset: number | undefined;
  states: string[];
}

async function raftGauges(node: SpoolNode): Promise<RaftGauges> {
  const samples = await scrape(node);
  return {
    leader: valueOf(samples, `${RAFT}_current_leader`),
    epoch: valueOf(samples, `${RAFT}_current_epoch`),
    highWatermark: valueOf(samples, `${RAFT}_high_watermark`),
    logEndOffset: valueOf(samples, `${RAFT}_log_end_offset`),
    states: samples.filter((s) => s.name === `${RAFT}_current_state` && s.value === 1).map((s) => s.labels.state!),
  };
}

/** A scrape taken while the Raft client stood still: its gauges and the client's own values agree. */
async function settledGauges(node: SpoolNode): Promise<RaftGauges> {
  return until('a scrape that matches the Raft client', async () => {
    const raft = node.shared.raft;
    const gauges = await raftGauges(node);
    const agrees = gauges.highWatermark === (raft.highWatermark ?? -1) && gauges.logEndOffset === raft.logEndOffset && gauges.epoch === raft.leaderAndEpoch.epoch;
    return agrees && gauges.highWatermark === gauges.logEndOffset ? gauges : null;
  }, WAIT);
}

test('raft-metrics: the controller leads, the broker observes, and a created topic moves the log end offset and high watermark', async () => {
  const cluster = await startCluster({ controllers: 1, brokers: 1, config: { 'metrics.listener': 'http://127.0.0.1:0' } });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    const controller = cluster.node(3000).node;
    const broker = cluster.node(0).node;
    const before = await settledGauges(controller);
    assert.equal(before.leader, 3000);
    assert.deepEqual(before.states, ['leader']);
    assert.ok(before.epoch! >= 1);

    await admin.createTopics([{ name: 'raft-metered', numPartitions: 1, replicationFactor: 1 }]);
    const after = await settledGauges(controller);
    assert.equal(after.epoch, before.epoch, 'no new election');
    assert.ok(after.logEndOffset! >= before.logEndOffset! + 2, `the TopicRecord and PartitionRecord are in the log (${before.logEndOffset} -> ${after.logEndOffset})`);
    assert.equal(after.highWatermark, after.logEndOffset, 'a one-voter quorum commits what it appends');

    const observed = await raftGauges(broker);
    assert.deepEqual(observed.states, ['observer']);
    assert.equal(observed.leader, 3000);
    assert.equal(observed.epoch, before.epoch);
    assert.ok(observed.logEndOffset! >= 0);
  } finally {
    await admin.close();
    await cluster.stop();
  }
});
