/**
 * KIP-1251 (assignment epochs for consumer groups, in Kafka since 4.3): a
 * consumer-protocol member's OffsetCommit may carry an older member epoch
 * than the coordinator's, as long as every partition it commits is still
 * assigned to it (or pending revocation) since an epoch no newer than the one
 * it sent. Kafka 4.4 answers NONE for such a partition and STALE_MEMBER_EPOCH
 * per partition otherwise; an epoch newer than the member's is refused whole.
 *
 * Found by the group interop tests (test/interop/groups/): while members join
 * and leave a KIP-848 group with records flowing, the Java consumer 4.4.0's
 * commitSync throws CommitFailedException ("OffsetCommit failed with stale
 * member epoch") on Spool and never on Kafka 4.4, because a heartbeat bumped
 * the member's epoch (it kept its partitions) while its commit with the
 * previous epoch was in flight. Spool required the exact epoch (the pre-4.3
 * rule); it now tracks assignment epochs (ConsumerGroupCurrentMember
 * AssignmentValue's tagged AssignmentEpochs, kept by reconciliation, checked
 * per partition on commit).
 *
 * Over the wire against startBroker(), or SPOOL_E2E_BOOTSTRAP (passes against
 * Kafka 4.4).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { ResponseOf } from '../../src/protocol/schema.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { OffsetCommit } from '../../src/protocol/schemas/08-offset-commit.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ConsumerGroupHeartbeat } from '../../src/protocol/schemas/68-consumer-group-heartbeat.js';
import { Admin } from '../../src/client/admin.js';
import { call, WireClient } from '../server/wire-client.js';
import { startTestBroker, uniqueTopic } from '../client/broker-fixture.js';

test('KIP-1251: a commit with the previous member epoch is accepted for partitions the member kept', async () => {
  const broker = await startTestBroker({ 'group.initial.rebalance.delay.ms': 0 });
  const admin = new Admin({ bootstrapServers: broker.bootstrapServers });
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    const topic = uniqueTopic('kip1251');
    const group = uniqueTopic('kip1251-group');
    await admin.createTopics([{ name: topic, numPartitions: 4, replicationFactor: 1 }]);
    await call(client, FindCoordinator, 4, { keyType: 0, coordinatorKeys: [group] });
    const beat = (memberId: string, memberEpoch: number, owned: { topicId: string; partitions: number[] }[] | null) =>
      call(client, ConsumerGroupHeartbeat, 1, {
        groupId: group, memberId, memberEpoch, rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: memberEpoch === 0 ? [topic] : null, topicPartitions: owned,
      });
    /** Heartbeats (every 100 ms, as a client would, owning `owned`) until `done` holds for the response. */
    const beatUntil = async (
      last: ResponseOf<typeof ConsumerGroupHeartbeat>,
      owned: { topicId: string; partitions: number[] }[],
      done: (response: ResponseOf<typeof ConsumerGroupHeartbeat>) => boolean,
    ) => {
      let response = last;
      for (let beats = 0; !done(response); beats++) {
        assert.ok(beats < 50, `still waiting after ${beats} heartbeats: ${JSON.stringify(response)}`);
        if (beats > 0) await delay(100);
        response = await beat('member-a', response.memberEpoch, owned);
        assert.equal(response.errorCode, ErrorCode.NONE);
      }
      return response;
    };
    const commit = (memberEpoch: number, partitions: number[]) =>
      call(client, OffsetCommit, 9, {
        groupId: group, generationIdOrMemberEpoch: memberEpoch, memberId: 'member-a',
        topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: 1, committedMetadata: '' })) }],
      });
    const errors = (response: ResponseOf<typeof OffsetCommit>) =>
      response.topics.flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.errorCode]));

    // A joins alone and, heartbeating as a client does, gets every partition.
    let a = await beat('member-a', 0, []);
    const partitionsOf = (response: ResponseOf<typeof ConsumerGroupHeartbeat>) => response.assignment?.topicPartitions[0]?.partitions;
    a = await beatUntil(a, [], (r) => partitionsOf(r)?.length === 4);
    const first = a.memberEpoch;
    const topicId = a.assignment!.topicPartitions[0]!.topicId;
    // B joins (a new group epoch): A is asked to give up half...
    assert.equal((await beat('member-b', 0, [])).errorCode, ErrorCode.NONE);
    a = await beatUntil(a, [{ topicId, partitions: [0, 1, 2, 3] }], (r) => partitionsOf(r)?.length === 2);
    assert.equal(a.memberEpoch, first, 'A keeps its epoch until it has let go of what it gives up');
    const kept = partitionsOf(a)!;
    const revoked = [0, 1, 2, 3].filter((p) => !kept.includes(p));
    // ...and, having let go, moves to the new epoch keeping the rest.
    a = await beatUntil(a, [{ topicId, partitions: kept }], (r) => r.memberEpoch > first);
    const current = a.memberEpoch;

    // The current epoch: fine. The previous epoch: fine for what A kept since then, stale for what it gave up.
    assert.deepEqual(errors(await commit(current, kept)), kept.map((p) => [p, ErrorCode.NONE]));
    assert.deepEqual(errors(await commit(first, kept)), kept.map((p) => [p, ErrorCode.NONE]));
    assert.deepEqual(errors(await commit(first, revoked)), revoked.map((p) => [p, ErrorCode.STALE_MEMBER_EPOCH]));
    // An epoch newer than the member's: refused.
    assert.deepEqual(errors(await commit(current + 1, kept)), kept.map((p) => [p, ErrorCode.STALE_MEMBER_EPOCH]));
  } finally {
    client.close();
    await admin.close();
    await broker.stop();
  }
});
