/**
 * The coordinator runtime: COORDINATOR_LOAD_IN_PROGRESS while a partition
 * loads (heartbeats answered blindly, as Kafka does), NOT_COORDINATOR for
 * partitions this node does not lead and for JoinGroup calls parked when
 * leadership is lost, append failures mapped to Kafka's group errors with
 * the state left untouched, a write that outlives offsets.commit.timeout.ms
 * answered with COORDINATOR_NOT_AVAILABLE, and each operation's records
 * written as one batch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeSubscription } from '../../src/protocol/consumer-protocol.js';
import type { OffsetCommitInput } from '../../src/group/offset-operations.js';
import { harness, MemoryLog, settle } from './helpers.js';

const commit = (groupId = 'g'): OffsetCommitInput => ({
  groupId,
  generationIdOrMemberEpoch: -1,
  memberId: '',
  groupInstanceId: null,
  retentionTimeMs: -1,
  topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: null }, { partitionIndex: 1, committedOffset: 6, committedLeaderEpoch: -1, committedMetadata: null }] }],
});

test('requests get COORDINATOR_LOAD_IN_PROGRESS while the partition loads; heartbeats are answered NONE', async () => {
  const h = await harness();
  const partition = h.coordinator.partitionFor('g');
  let open!: () => void;
  h.log.readGate = new Promise((resolve) => (open = resolve));
  h.coordinator.runtime.becomeLeader(partition, 1);
  const result = await h.coordinator.commitOffsets(commit(), 8);
  assert.equal(result[0]!.partitions[0]!.errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(await h.coordinator.heartbeat({ groupId: 'g', memberId: 'm', generationId: 1, groupInstanceId: null }), ErrorCode.NONE);
  assert.equal(h.coordinator.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: null, requireStable: false }).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(h.coordinator.listGroups([], []).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  open();
  h.log.readGate = null;
  await h.drain();
  assert.equal((await h.coordinator.commitOffsets(commit(), 8))[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
});

test('a partition this node does not lead answers NOT_COORDINATOR; losing leadership answers parked joins', async () => {
  const h = await harness();
  const partition = h.coordinator.partitionFor('g');
  const ctx = { clientId: 'c', clientHost: '/h', apiVersion: 9 };
  const request = { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: encodeSubscription({ topics: ['e'] }) }], reason: null };
  const first = await h.coordinator.joinGroup(ctx, request);
  const parked = h.coordinator.joinGroup(ctx, { ...request, memberId: first.memberId });
  await h.drain();
  h.coordinator.runtime.resign(partition);
  assert.equal((await parked).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal((await h.coordinator.commitOffsets(commit(), 8))[0]!.partitions[0]!.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(h.coordinator.describeGroups(['g'], 5)[0]!.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(h.coordinator.listGroups([], []).errorCode, ErrorCode.NONE, 'ListGroups skips partitions led elsewhere');
});

test('append failures map to Kafka group errors and leave the state untouched', async () => {
  const h = await harness();
  for (const [appendError, expected] of [
    [ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR],
    [ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR],
    [ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.UNKNOWN_SERVER_ERROR],
  ] as const) {
    h.log.failAppendsWith = appendError;
    const result = await h.coordinator.commitOffsets(commit(), 8);
    assert.deepEqual(result[0]!.partitions.map((p) => p.errorCode), [expected, expected]);
  }
  h.log.failAppendsWith = null;
  assert.deepEqual(h.coordinator.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: null, requireStable: false }).topics, []);
});

test('a write slower than offsets.commit.timeout.ms is answered COORDINATOR_NOT_AVAILABLE', async () => {
  const log = new MemoryLog();
  const h = await harness({ log, config: { offsetCommitTimeoutMs: 5000 } });
  const append = log.append.bind(log);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  log.append = async (partition, batch) => {
    await gate;
    return append(partition, batch);
  };
  const pending = h.coordinator.commitOffsets(commit(), 8);
  await settle();
  h.clock.advance(4999);
  await settle();
  h.clock.advance(1);
  const result = await pending;
  assert.equal(result[0]!.partitions[0]!.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  release();
  await h.drain();
  assert.equal(
    h.coordinator.fetchOffsets({ groupId: 'g', memberId: null, memberEpoch: -1, topics: null, requireStable: false }).topics[0]!.partitions.length,
    2,
    'the write itself completed later and is not undone',
  );
});

test("an operation's records are written as one batch", async () => {
  const h = await harness();
  await h.coordinator.commitOffsets(commit(), 8);
  const partition = h.coordinator.partitionFor('g');
  assert.equal(h.log.batches.get(partition)!.length, 1);
  assert.equal(h.log.records(partition).length, 2);
});
