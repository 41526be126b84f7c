/**
 * The share coordinator over TCP against a real node (KIP-932):
 *
 * - FindCoordinator v6 key type 2 (`groupId:topicId:partition`) creates
 *   `__share_group_state` with Kafka's partition count and configs and
 *   names this node; a malformed key, or key type 2 below v6, is
 *   INVALID_REQUEST.
 * - InitializeShareGroupState, WriteShareGroupState v0 and v1,
 *   ReadShareGroupState, ReadShareGroupStateSummary v0 and v1 and
 *   DeleteShareGroupState answer with the state written, Kafka's errors
 *   (INVALID_REQUEST for an uninitialized read, FENCED_LEADER_EPOCH,
 *   FENCED_STATE_EPOCH, UNKNOWN_TOPIC_OR_PARTITION) and an empty answer
 *   for an empty group id.
 * - The node's SharePersister reads what the RPCs wrote and writes what
 *   they read, creating the state topic itself on a fresh node.
 * - The state survives a restart: a new node on the same directory loads
 *   it from `__share_group_state`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { InitializeShareGroupState } from '../../src/protocol/schemas/83-initialize-share-group-state.js';
import { ReadShareGroupState } from '../../src/protocol/schemas/84-read-share-group-state.js';
import { WriteShareGroupState } from '../../src/protocol/schemas/85-write-share-group-state.js';
import { DeleteShareGroupState } from '../../src/protocol/schemas/86-delete-share-group-state.js';
import { ReadShareGroupStateSummary } from '../../src/protocol/schemas/87-read-share-group-state-summary.js';
import { SHARE_GROUP_STATE_TOPIC } from '../../src/share/coordinator/coordinator.js';
import { WireClient, call } from './wire-client.js';

const TOPIC = 'orders';
const GROUP = 'share-g';

async function startWithTopic(dir: string): Promise<{ running: RunningBroker; topicId: string }> {
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1, 'share.coordinator.state.topic.num.partitions': 5 }, logger: silentLogger });
  if (!running.broker.metadata.image.topicsByName.has(TOPIC)) {
    const [created] = await running.broker.controller.createTopics([{ name: TOPIC, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], { validateOnly: false });
    assert.equal(created!.errorCode, ErrorCode.NONE);
  }
  return { running, topicId: running.broker.metadata.image.topicsByName.get(TOPIC)!.id };
}

const batch = (firstOffset: number, lastOffset: number, deliveryState: number, deliveryCount: number) => ({ firstOffset, lastOffset, deliveryState, deliveryCount });

/** ReadShareGroupState until the state partition has loaded (one round trip at a time). */
async function readLoaded(client: WireClient, topicId: string, partition: number, leaderEpoch: number) {
  for (;;) {
    const response = await call(client, ReadShareGroupState, 0, { groupId: GROUP, topics: [{ topicId, partitions: [{ partition, leaderEpoch }] }] });
    const result = response.results[0]!.partitions[0]!;
    if (result.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && result.errorCode !== ErrorCode.NOT_COORDINATOR) return result;
  }
}

test('FindCoordinator key type 2 creates __share_group_state and names the coordinator; bad keys are INVALID_REQUEST', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-share-find-'));
  const { running, topicId } = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  try {
    const found = await call(client, FindCoordinator, 6, { keyType: 2, coordinatorKeys: [`${GROUP}:${topicId}:0`, 'no-colons', `${GROUP}:not-a-topic-id:0`, `${GROUP}:${topicId}:x`, `:${topicId}:0`] });
    assert.deepEqual(found.coordinators.map((c) => c.errorCode), [ErrorCode.NONE, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    assert.equal(found.coordinators[0]!.nodeId, 1);
    const state = running.broker.metadata.image.topicsByName.get(SHARE_GROUP_STATE_TOPIC)!;
    assert.equal(state.partitions.size, 5);
    const configs = running.broker.metadata.topicConfig(SHARE_GROUP_STATE_TOPIC);
    assert.deepEqual(configs.cleanupPolicy, ['delete']);
    assert.equal(state.configs.get('retention.ms'), '-1');
    assert.equal(state.configs.get('min.insync.replicas'), '1', 'the single-node default, as Kafka quickstart server.properties');
    const old = await call(client, FindCoordinator, 5, { keyType: 2, coordinatorKeys: [`${GROUP}:${topicId}:0`] });
    assert.equal(old.coordinators[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  } finally {
    client.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('83-87 over the wire: initialize, write v0 and v1, read, summary, fencing, delete; the persister and the RPCs see one state', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-share-apis-'));
  const { running, topicId } = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  const topics = (partitions: object[]) => [{ topicId, partitions }];
  try {
    await call(client, FindCoordinator, 6, { keyType: 2, coordinatorKeys: [`${GROUP}:${topicId}:0`] });
    const uninitialized = await readLoaded(client, topicId, 0, 0);
    assert.deepEqual([uninitialized.errorCode, uninitialized.errorMessage], [ErrorCode.INVALID_REQUEST, 'Read operation on uninitialized share partition not allowed.']);

    const init = await call(client, InitializeShareGroupState, 0, { groupId: GROUP, topics: topics([{ partition: 0, stateEpoch: 1, startOffset: 100 }, { partition: 7, stateEpoch: 1, startOffset: 0 }]) });
    assert.deepEqual(init.results[0]!.partitions.map((p) => [p.partition, p.errorCode]), [[0, ErrorCode.NONE], [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);

    const v0 = await call(client, WriteShareGroupState, 0, { groupId: GROUP, topics: topics([{ partition: 0, stateEpoch: 1, leaderEpoch: 2, startOffset: 100, stateBatches: [batch(100, 109, 0, 1)] }]) });
    assert.equal(v0.results[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    const v1 = await call(client, WriteShareGroupState, 1, { groupId: GROUP, topics: topics([{ partition: 0, stateEpoch: 1, leaderEpoch: 2, startOffset: 103, deliveryCompleteCount: 3, stateBatches: [batch(103, 104, 2, 1)] }]) });
    assert.equal(v1.results[0]!.partitions[0]!.errorCode, ErrorCode.NONE);

    const read = await readLoaded(client, topicId, 0, 2);
    assert.deepEqual([read.errorCode, read.stateEpoch, read.startOffset, read.stateBatches], [ErrorCode.NONE, 1, 103, [batch(103, 104, 2, 1), batch(105, 109, 0, 1)]]);

    const summary = await call(client, ReadShareGroupStateSummary, 1, { groupId: GROUP, topics: topics([{ partition: 0, leaderEpoch: 2 }, { partition: 1, leaderEpoch: 0 }]) });
    assert.deepEqual(summary.results[0]!.partitions.map(({ errorCode, stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount }) => [errorCode, stateEpoch, leaderEpoch, startOffset, deliveryCompleteCount]), [
      [ErrorCode.NONE, 1, 2, 103, 3],
      [ErrorCode.NONE, 0, 0, -1, -1],
    ]);
    const summaryV0 = await call(client, ReadShareGroupStateSummary, 0, { groupId: GROUP, topics: topics([{ partition: 0, leaderEpoch: 2 }]) });
    assert.equal(summaryV0.results[0]!.partitions[0]!.startOffset, 103);

    const stale = await call(client, WriteShareGroupState, 1, { groupId: GROUP, topics: topics([{ partition: 0, stateEpoch: 1, leaderEpoch: 1, startOffset: 103, stateBatches: [] }, { partition: 0, stateEpoch: 0, leaderEpoch: 2, startOffset: 103, stateBatches: [] }]) });
    assert.deepEqual(stale.results[0]!.partitions.map((p) => p.errorCode), [ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.FENCED_STATE_EPOCH]);

    // The node's persister: the same state, and its write visible to the RPCs.
    const persister = running.broker.sharePersister;
    const key = { groupId: GROUP, topicId, partition: 0 };
    assert.deepEqual((await persister.readState(key, { leaderEpoch: 2 })).stateBatches, [batch(103, 104, 2, 1), batch(105, 109, 0, 1)]);
    assert.equal((await persister.writeState(key, { stateEpoch: 1, leaderEpoch: 3, startOffset: 105, deliveryCompleteCount: 0, stateBatches: [] })).errorCode, ErrorCode.NONE);
    assert.equal((await readLoaded(client, topicId, 0, 3)).startOffset, 105);

    const empty = await call(client, ReadShareGroupState, 0, { groupId: '', topics: topics([{ partition: 0, leaderEpoch: 0 }]) });
    assert.deepEqual(empty.results, []);

    const deleted = await call(client, DeleteShareGroupState, 0, { groupId: GROUP, topics: topics([{ partition: 0 }]) });
    assert.equal(deleted.results[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    assert.equal((await readLoaded(client, topicId, 0, 3)).errorCode, ErrorCode.INVALID_REQUEST);
  } finally {
    client.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('the persister creates the state topic on a fresh node, and the state survives a restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-share-restart-'));
  const key = { groupId: GROUP, topicId: '', partition: 1 };
  try {
    const first = await startWithTopic(dir);
    key.topicId = first.topicId;
    const persister = first.running.broker.sharePersister;
    assert.equal(first.running.broker.metadata.image.topicsByName.has(SHARE_GROUP_STATE_TOPIC), false);
    assert.equal((await persister.initializeState(key, { stateEpoch: 0, startOffset: 40 })).errorCode, ErrorCode.NONE);
    assert.equal((await persister.writeState(key, { stateEpoch: 0, leaderEpoch: 4, startOffset: 40, deliveryCompleteCount: 1, stateBatches: [batch(40, 49, 4, 2)] })).errorCode, ErrorCode.NONE);
    await first.running.stop();

    const second = await startWithTopic(dir);
    try {
      const client = await WireClient.connect(second.running.bootstrapServers);
      try {
        const read = await readLoaded(client, key.topicId, 1, 4);
        assert.deepEqual([read.errorCode, read.startOffset, read.stateBatches], [ErrorCode.NONE, 40, [batch(40, 49, 4, 2)]]);
        const fenced = await second.running.broker.sharePersister.writeState(key, { stateEpoch: 0, leaderEpoch: 3, startOffset: 40, deliveryCompleteCount: 1, stateBatches: [] });
        assert.equal(fenced.errorCode, ErrorCode.FENCED_LEADER_EPOCH, 'the leader epoch is part of the loaded state');
      } finally {
        client.close();
      }
    } finally {
      await second.running.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
