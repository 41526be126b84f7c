/**
 * The SharePersister across brokers (KIP-932), on an embedded cluster of
 * one controller and two brokers with `__share_group_state` replicated on
 * both:
 *
 * - a broker that does not lead a share partition's state partition sends
 *   its calls to the broker that does (83-87 over the inter-broker
 *   listener); the state lands in that broker's share coordinator only;
 * - the coordinator's broker killed (kill -9 style), the other broker
 *   becomes the state partition's leader, loads the state from its replica
 *   of the log, and the persister's retries (NOT_COORDINATOR and the like,
 *   with backoff) reach it there: the state read back is the one written;
 * - the killed broker restarted, calls from it go to the new coordinator;
 * - a single node killed and restarted loads the state (snapshots and
 *   updates) back from its own log: the read after equals the read before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type EmbeddedNode } from '../../../src/node/cluster.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { SHARE_GROUP_STATE_TOPIC } from '../../../src/share/coordinator/coordinator.js';
import type { SharePartitionKey } from '../../../src/share/persister.js';

const QUICK_SESSIONS = { 'broker.session.timeout.ms': 1000, 'broker.heartbeat.interval.ms': 200 } as const;
const batch = (firstOffset: number, lastOffset: number, deliveryState: number, deliveryCount: number) => ({ firstOffset, lastOffset, deliveryState, deliveryCount });

function stateLeader(node: EmbeddedNode, key: SharePartitionKey): number {
  const partition = node.node.shareCoordinator.partitionFor(key);
  return node.node.metadata.image.topicsByName.get(SHARE_GROUP_STATE_TOPIC)?.partitions.get(partition)?.leader ?? -1;
}

test('calls go to the broker leading the state partition, and find the state on the next leader after a kill', async () => {
  const cluster = await startCluster({
    controllers: 1,
    brokers: 2,
    config: { ...QUICK_SESSIONS, 'share.coordinator.state.topic.num.partitions': 4, 'share.coordinator.state.topic.min.isr': 1 },
  });
  try {
    const brokers = cluster.nodes.filter((node) => node.roles.includes('broker'));
    const controller = cluster.nodes.find((node) => node.roles.includes('controller'))!;
    const [created] = await controller.node.controller.createTopics([{ name: 'orders', numPartitions: 1, replicationFactor: 2, assignments: [], configs: [] }], { validateOnly: false });
    assert.equal(created!.errorCode, ErrorCode.NONE);
    const topicId = controller.node.metadata.image.topicsByName.get('orders')!.id;
    const key = { groupId: 'g', topicId, partition: 0 };

    assert.equal((await brokers[0]!.node.sharePersister.initializeState(key, { stateEpoch: 0, startOffset: 0 })).errorCode, ErrorCode.NONE);
    const leader = brokers.find((node) => node.nodeId === stateLeader(brokers[0]!, key))!;
    const other = brokers.find((node) => node !== leader)!;
    assert.equal(stateLeader(other, key), leader.nodeId);

    const written = await other.node.sharePersister.writeState(key, { stateEpoch: 0, leaderEpoch: 1, startOffset: 0, deliveryCompleteCount: 2, stateBatches: [batch(0, 1, 2, 1), batch(2, 9, 0, 1)] });
    assert.equal(written.errorCode, ErrorCode.NONE);
    const partition = leader.node.shareCoordinator.partitionFor(key);
    assert.equal(leader.node.shareCoordinator.runtime.shard(partition)?.state(key)?.stateBatches.length, 2, 'the write reached the leader');
    assert.equal(other.node.shareCoordinator.runtime.status(partition), 'none', 'and only the leader');

    await leader.kill();
    const read = await other.node.sharePersister.readState(key, { leaderEpoch: 2 });
    assert.deepEqual([read.errorCode, read.startOffset, read.stateBatches], [ErrorCode.NONE, 0, [batch(0, 1, 2, 1), batch(2, 9, 0, 1)]]);
    assert.equal(stateLeader(other, key), other.nodeId);

    await leader.restart();
    const fromRestarted = await leader.node.sharePersister.writeState(key, { stateEpoch: 0, leaderEpoch: 2, startOffset: 2, deliveryCompleteCount: 0, stateBatches: [] });
    assert.equal(fromRestarted.errorCode, ErrorCode.NONE);
    assert.equal((await other.node.sharePersister.readSummary(key, { leaderEpoch: 2 })).startOffset, 2);
  } finally {
    await cluster.stop();
  }
});

test('one node killed (kill -9 style) and restarted: the state is loaded again from __share_group_state', async () => {
  const cluster = await startCluster({ config: { ...QUICK_SESSIONS, 'share.coordinator.state.topic.num.partitions': 3, 'share.coordinator.snapshot.update.records.per.snapshot': 2 } });
  const node = cluster.node(0);
  try {
    const [created] = await node.node.controller.createTopics([{ name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
    assert.equal(created!.errorCode, ErrorCode.NONE);
    const topicId = node.node.metadata.image.topicsByName.get('orders')!.id;
    const key = { groupId: 'g', topicId, partition: 1 };
    assert.equal((await node.node.sharePersister.initializeState(key, { stateEpoch: 0, startOffset: 0 })).errorCode, ErrorCode.NONE);
    // Five writes: updates and, every two of them, a snapshot, so the load replays both kinds.
    for (let i = 0; i < 5; i++) {
      const written = await node.node.sharePersister.writeState(key, { stateEpoch: 0, leaderEpoch: 1, startOffset: i * 2, deliveryCompleteCount: i, stateBatches: [batch(i * 4, i * 4 + 3, i % 2 === 0 ? 2 : 4, 1)] });
      assert.equal(written.errorCode, ErrorCode.NONE);
    }
    const before = await node.node.sharePersister.readState(key, { leaderEpoch: 1 });
    assert.equal(before.errorCode, ErrorCode.NONE);

    await node.kill();
    await node.restart();
    const after = await node.node.sharePersister.readState(key, { leaderEpoch: 1 });
    assert.deepEqual(after, before);
    assert.equal((await node.node.sharePersister.readSummary(key, { leaderEpoch: 1 })).deliveryCompleteCount, 4);
  } finally {
    await cluster.stop();
  }
});
