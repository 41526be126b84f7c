/**
 * Fetch from follower (KIP-392) on three replica managers in one process
 * (replication-harness.ts), brokers in racks a, b and c, with Kafka's
 * RackAwareReplicaSelector:
 * - the leader answers a consumer in another replica's rack with that
 *   replica as preferredReadReplica, at once and without records; a
 *   consumer in the leader's rack, in no replica's rack, or without client
 *   metadata is served by the leader, and so is everyone without
 *   replica.selector.class;
 * - only in-sync replicas that hold the fetch offset are offered;
 * - a follower serves consumers up to its own high watermark: between it
 *   and its log end it returns nothing, past its log end
 *   OFFSET_OUT_OF_RANGE, and a consumer that may only read from leaders
 *   gets NOT_LEADER_OR_FOLLOWER; a consumer fetch waiting on the follower
 *   completes when the follower's high watermark moves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { iterateBatches } from '../../src/protocol/records/batch.js';
import type { FetchPartitionData, ReplicaManager } from '../../src/replication/replica-manager.js';
import { RACK_AWARE_REPLICA_SELECTOR } from '../../src/replication/replica-selector.js';
import { ReplicationHarness, produceTo, tp, until } from './replication-harness.js';

const RACKS = { 1: 'a', 2: 'b', 3: 'c' };
const SELECTOR = { 'replica.selector.class': RACK_AWARE_REPLICA_SELECTOR };

/** A consumer's fetch as the Fetch handler builds it for v11+ (rack null: no client metadata). */
function consumerFetch(manager: ReplicaManager, fetchOffset: number, options: { rack?: string | null; maxWaitMs?: number; fetchOnlyFromLeader?: boolean } = {}): Promise<FetchPartitionData> {
  const rack = options.rack ?? null;
  const params = {
    replicaId: -1,
    maxWaitMs: options.maxWaitMs ?? 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolation: 'highWatermark' as const,
    fetchOnlyFromLeader: options.fetchOnlyFromLeader ?? false,
    clientMetadata: rack === null ? null : { rackId: rack, listenerName: 'PLAINTEXT' },
  };
  const info = { topicPartition: tp, fetchOffset, logStartOffset: -1, maxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 };
  return manager.fetchMessages(params, [info]).then((results) => results[0]!);
}

/** The offsets of the records returned. */
function offsetsOf(records: Buffer): number[] {
  const offsets: number[] = [];
  for (const { header } of iterateBatches(records)) for (let delta = 0; delta <= header.lastOffsetDelta; delta++) offsets.push(header.baseOffset + delta);
  return offsets;
}

function partitionOn(harness: ReplicationHarness, id: number) {
  return harness.managers.get(id)!.hostedPartitions()[0]!;
}

test('the leader sends a consumer to the in-sync replica in its rack; the follower serves it up to its high watermark', async (t) => {
  const harness = await ReplicationHarness.start({ brokers: [1, 2, 3], replicas: [1, 2, 3], racks: RACKS, brokerConfig: SELECTOR });
  t.after(() => harness.close());
  const leader = harness.managers.get(1)!;
  for (let i = 0; i < 3; i++) assert.equal((await produceTo(leader, `v${i}`, -1)).errorCode, ErrorCode.NONE);
  await until('the followers learn the high watermark', () => [2, 3].every((id) => partitionOn(harness, id).highWatermark === 3));

  // A long max.wait.ms: the answer naming a preferred replica does not wait for data.
  const redirected = await consumerFetch(leader, 0, { rack: 'b', maxWaitMs: 600_000 });
  assert.equal(redirected.errorCode, ErrorCode.NONE);
  assert.equal(redirected.preferredReadReplica, 2);
  assert.equal(redirected.records.length, 0, 'the leader skips the read');
  assert.equal(redirected.highWatermark, 3);
  assert.equal((await consumerFetch(leader, 0, { rack: 'c' })).preferredReadReplica, 3);

  for (const rack of ['a', 'z', null]) {
    const served = await consumerFetch(leader, 0, { rack });
    assert.equal(served.preferredReadReplica, -1, `rack ${rack} stays on the leader`);
    assert.deepEqual(offsetsOf(served.records), [0, 1, 2]);
  }

  const follower = harness.managers.get(2)!;
  const before = follower.consumerBytesServedAsFollower;
  const fromFollower = await consumerFetch(follower, 0, { rack: 'b' });
  assert.equal(fromFollower.errorCode, ErrorCode.NONE);
  assert.equal(fromFollower.preferredReadReplica, -1, 'a follower serves the fetch itself');
  assert.deepEqual(offsetsOf(fromFollower.records), [0, 1, 2]);
  assert.equal(fromFollower.highWatermark, 3);
  assert.equal(follower.consumerBytesServedAsFollower, before + fromFollower.records.length);
  // Fetch v10 and older consumers read from leaders only.
  assert.equal((await consumerFetch(follower, 0, { fetchOnlyFromLeader: true })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

test('replicas out of step are not offered; a follower reads nothing above its high watermark, and OFFSET_OUT_OF_RANGE past its log end', async (t) => {
  // replica.lag.time.max.ms long enough that the cut-off broker 3 stays in the ISR, holding the high watermark at 2.
  const harness = await ReplicationHarness.start({ brokers: [1, 2, 3], replicas: [1, 2, 3], racks: RACKS, brokerConfig: { ...SELECTOR, 'replica.lag.time.max.ms': 600_000 } });
  t.after(() => harness.close());
  const leader = harness.managers.get(1)!;
  for (let i = 0; i < 2; i++) assert.equal((await produceTo(leader, `v${i}`, -1)).errorCode, ErrorCode.NONE);
  harness.cut.add(3);
  for (let i = 2; i < 5; i++) assert.equal((await produceTo(leader, `v${i}`, 1)).errorCode, ErrorCode.NONE);
  await until('follower 2 copies the log end', () => partitionOn(harness, 2).log.logEndOffset === 5);
  await until('follower 2 learns the high watermark', () => partitionOn(harness, 2).highWatermark === 2);
  assert.equal(partitionOn(harness, 1).highWatermark, 2, 'broker 3, still in the ISR, holds the high watermark back');

  assert.equal((await consumerFetch(leader, 1, { rack: 'c' })).preferredReadReplica, 3, 'broker 3 holds offset 1');
  const notHeld = await consumerFetch(leader, 3, { rack: 'c' });
  assert.equal(notHeld.preferredReadReplica, -1, 'broker 3 does not hold offset 3: the leader serves it');
  assert.equal(notHeld.errorCode, ErrorCode.NONE);

  const follower = harness.managers.get(2)!;
  const belowHighWatermark = await consumerFetch(follower, 0);
  assert.deepEqual(offsetsOf(belowHighWatermark.records), [0, 1], 'only what is below the follower\'s high watermark');
  const aboveHighWatermark = await consumerFetch(follower, 3);
  assert.equal(aboveHighWatermark.errorCode, ErrorCode.NONE);
  assert.equal(aboveHighWatermark.records.length, 0);
  assert.equal(aboveHighWatermark.highWatermark, 2);
  assert.equal((await consumerFetch(follower, 6)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE, 'past the follower\'s log end');

  // A consumer waiting on the follower is answered once the follower's high watermark moves.
  const waiting = consumerFetch(follower, 2, { maxWaitMs: 600_000 });
  harness.cut.delete(3);
  const answered = await waiting;
  assert.equal(answered.errorCode, ErrorCode.NONE);
  assert.deepEqual(offsetsOf(answered.records), [2, 3, 4]);
  assert.equal(answered.highWatermark, 5);
});

test('without replica.selector.class every consumer reads from the leader', async (t) => {
  const harness = await ReplicationHarness.start({ brokers: [1, 2, 3], replicas: [1, 2, 3], racks: RACKS });
  t.after(() => harness.close());
  const leader = harness.managers.get(1)!;
  assert.equal((await produceTo(leader, 'v', -1)).errorCode, ErrorCode.NONE);
  assert.equal(leader.selectsReplicas, false);
  const served = await consumerFetch(leader, 0, { rack: 'b' });
  assert.equal(served.preferredReadReplica, -1);
  assert.deepEqual(offsetsOf(served.records), [0]);
});
