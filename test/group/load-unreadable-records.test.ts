/**
 * Records in `__consumer_offsets` that the coordinator cannot fully read are
 * handled as Kafka 4.4's coordinator loader handles them (checked against a
 * real Kafka 4.4: records produced into `__consumer_offsets` with client id
 * `__admin_client`, then a broker restart):
 *  - a record of an unknown type is skipped and the load goes on: later
 *    records count;
 *  - bytes after the last field of a known key or value are ignored (Kafka's
 *    generated readers stop at the last field they know);
 *  - a value version outside its type's range, or a value too short for its
 *    fields, fails the partition's load: its groups answer NOT_COORDINATOR
 *    (Kafka's FAILED state), the other partitions serve normally, and the
 *    partition loads again at its next leader epoch.
 * Regression: Spool failed the load on trailing bytes, and answered a failed
 * load with COORDINATOR_NOT_AVAILABLE where Kafka answers NOT_COORDINATOR.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { encodeGroupRecord, groupRecord, offsetCommitKey } from '../../src/group/records.js';
import type { GroupCoordinator } from '../../src/group/coordinator.js';
import { harness, type Harness } from './helpers.js';

const UNKNOWN_RECORD_TYPE = 999;
const UNKNOWN_VALUE_VERSION = 99;

/** A group id for each role, each in its own `__consumer_offsets` partition. */
function groupsInDistinctPartitions(coordinator: GroupCoordinator, roles: readonly string[]): Map<string, { groupId: string; partition: number }> {
  const used = new Set<number>();
  const out = new Map<string, { groupId: string; partition: number }>();
  for (const role of roles) {
    for (let i = 0; ; i++) {
      const groupId = `${role}-${i}`;
      const partition = coordinator.partitionFor(groupId);
      if (used.has(partition)) continue;
      used.add(partition);
      out.set(role, { groupId, partition });
      break;
    }
  }
  return out;
}

function commit(coordinator: GroupCoordinator, groupId: string, offset: number) {
  return coordinator.commitOffsets({
    groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
    topics: [{ name: 'events', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
  }, 9);
}

function fetched(coordinator: GroupCoordinator, groupId: string): { errorCode: number; offset: number | undefined } {
  const result = coordinator.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null, requireStable: false });
  return { errorCode: result.errorCode, offset: result.topics[0]?.partitions[0]?.committedOffset };
}

/** An offset commit of `offset` for the group, as the coordinator writes it. */
function offsetCommit(groupId: string, offset: number): { key: Buffer; value: Buffer } {
  const { key, value } = encodeGroupRecord(groupRecord('OffsetCommit', offsetCommitKey(groupId, 'events', 0), {
    offset, leaderEpoch: -1, metadata: '', commitTimestamp: 0, expireTimestamp: -1,
  }));
  return { key, value: value! };
}

async function write(h: Harness, partition: number, records: { key: Buffer; value: Buffer }[]): Promise<void> {
  const appended = await h.log.append(partition, buildBatch({ records: records.map((r) => ({ ...r, timestamp: 0 })) }));
  assert.equal(appended.errorCode, ErrorCode.NONE);
}

test('unreadable __consumer_offsets records: unknown types skipped, trailing bytes ignored, unknown value versions fail that partition alone', async () => {
  const h = await harness();
  const groups = groupsInDistinctPartitions(h.coordinator, ['skip', 'trailing', 'version', 'truncated']);
  const group = (role: string) => groups.get(role)!;
  for (const { groupId } of groups.values()) assert.equal((await commit(h.coordinator, groupId, 5))[0]!.partitions[0]!.errorCode, ErrorCode.NONE);

  const unknownType = Buffer.alloc(2);
  unknownType.writeInt16BE(UNKNOWN_RECORD_TYPE);
  await write(h, group('skip').partition, [{ key: Buffer.concat([unknownType, Buffer.from('x')]), value: Buffer.from([0, 0, 1]) }, offsetCommit(group('skip').groupId, 7)]);
  const padded = offsetCommit(group('trailing').groupId, 7);
  await write(h, group('trailing').partition, [{ key: Buffer.concat([padded.key, Buffer.from([0xde, 0xad])]), value: Buffer.concat([padded.value, Buffer.from([0xbe, 0xef])]) }]);
  const newer = offsetCommit(group('version').groupId, 7);
  newer.value.writeInt16BE(UNKNOWN_VALUE_VERSION, 0);
  await write(h, group('version').partition, [newer]);
  const full = offsetCommit(group('truncated').groupId, 7);
  await write(h, group('truncated').partition, [{ key: full.key, value: full.value.subarray(0, 6) }]);

  const reloaded = await h.reload();
  assert.deepEqual(fetched(reloaded, group('skip').groupId), { errorCode: ErrorCode.NONE, offset: 7 }, 'the unknown type was skipped, the load went on');
  assert.deepEqual(fetched(reloaded, group('trailing').groupId), { errorCode: ErrorCode.NONE, offset: 7 }, 'trailing bytes are ignored');
  for (const role of ['version', 'truncated']) {
    const { groupId, partition } = group(role);
    assert.deepEqual(fetched(reloaded, groupId), { errorCode: ErrorCode.NOT_COORDINATOR, offset: undefined }, `${role}: the load failed`);
    assert.equal((await commit(reloaded, groupId, 9))[0]!.partitions[0]!.errorCode, ErrorCode.NOT_COORDINATOR);
    reloaded.runtime.becomeLeader(partition, 0);
    await reloaded.runtime.drain();
    assert.equal(fetched(reloaded, groupId).errorCode, ErrorCode.NOT_COORDINATOR, `${role}: the same leader epoch does not load again`);
  }

  // Once the unreadable batch is gone (an operator deleted it), the next leader epoch loads the partition.
  const { groupId, partition } = group('version');
  h.log.batches.set(partition, h.log.batches.get(partition)!.slice(0, -1));
  reloaded.runtime.becomeLeader(partition, 1);
  await reloaded.runtime.drain();
  assert.deepEqual(fetched(reloaded, groupId), { errorCode: ErrorCode.NONE, offset: 5 });
});
