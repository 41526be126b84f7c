/**
 * Proves the controller's partition reassignment as Kafka's KRaft
 * controller runs it: a move writes replicas = target + removing with
 * adding/removing set and leaves the ISR alone; the leader's AlterPartition
 * that brings the adding replicas into the ISR completes it (removing
 * replicas leave replicas and ISR, a removed leader gives way with
 * NEW_LEADER_ELECTED); a shrink whose survivors are in the ISR completes at
 * once and bumps the leader epoch; cancel reverts (and refuses an unclean
 * revert); ListPartitionReassignments lists what is in progress; Kafka's
 * errors for unknown topics and partitions, bad targets, RF changes that
 * are not allowed and cancels with nothing to cancel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { alterPartition, createTopics } from '../../src/controller/replication-control.js';
import { alterPartitionReassignments, listPartitionReassignments, type AlterPartitionReassignmentsRequest } from '../../src/controller/partition-reassignment.js';
import { maybeCompleteReassignment, reassignmentReplicas, revertReassignment } from '../../src/controller/reassignment-replicas.js';
import type { MetadataImage, PartitionRegistration } from '../../src/metadata/image.js';
import { clusterWith, commit } from './helpers.js';

function withTopic(replicas: number[], brokers = [1, 2, 3, 4]): MetadataImage {
  const image = clusterWith(brokers);
  return commit(image, (context) =>
    createTopics(context, [{ name: 't', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs: [] }], { validateOnly: false }),
  ).image;
}

function partitionOf(image: MetadataImage): PartitionRegistration {
  return image.topicsByName.get('t')!.partitions.get(0)!;
}

function reassign(image: MetadataImage, replicas: number[] | null, options: { allowReplicationFactorChange?: boolean; config?: Record<string, string> } = {}) {
  const request: AlterPartitionReassignmentsRequest = {
    allowReplicationFactorChange: options.allowReplicationFactorChange ?? true,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas }] }],
  };
  const outcome = commit(image, (context) => alterPartitionReassignments(context, request), options.config ?? {});
  return { ...outcome, answer: outcome.response.topics[0]!.partitions[0]! };
}

/** The leader proposes `isr` (as its AlterPartition would). */
function leaderProposes(image: MetadataImage, isr: number[]) {
  const partition = partitionOf(image);
  const topicId = image.topicsByName.get('t')!.id;
  const outcome = commit(image, (context) =>
    alterPartition(context, {
      brokerId: partition.leader,
      brokerEpoch: image.brokers.get(partition.leader)!.epoch,
      topics: [{
        topicId,
        partitions: [{
          partitionIndex: 0,
          leaderEpoch: partition.leaderEpoch,
          newIsrWithEpochs: isr.map((brokerId) => ({ brokerId, brokerEpoch: image.brokers.get(brokerId)!.epoch })),
          leaderRecoveryState: 0,
          partitionEpoch: partition.partitionEpoch,
        }],
      }],
    }),
  );
  return { ...outcome, answer: outcome.response.topics[0]!.partitions[0]! };
}

test('replica sets of a reassignment, its completion and its revert follow Kafka', () => {
  assert.deepEqual(reassignmentReplicas([1, 2, 3], [3, 4, 5]), { removing: [1, 2], adding: [4, 5], replicas: [3, 4, 5, 1, 2] });
  assert.deepEqual(reassignmentReplicas([1, 2], [2, 1]), { removing: [], adding: [], replicas: [2, 1] });
  const moving = { removing: [1], adding: [4], replicas: [2, 4, 1] };
  assert.equal(maybeCompleteReassignment(moving, [1, 2]), null, 'the adding replica is not in the ISR yet');
  assert.deepEqual(maybeCompleteReassignment(moving, [1, 2, 4]), { replicas: [2, 4], isr: [2, 4] });
  assert.equal(maybeCompleteReassignment({ removing: [1], adding: [], replicas: [2, 1] }, [1]), null, 'no survivor in the ISR');
  const base = withTopic([1, 2]);
  const reverted = revertReassignment({ ...partitionOf(base), replicas: [3, 4, 1, 2], isr: [1, 3], addingReplicas: [3, 4], removingReplicas: [1, 2] });
  assert.deepEqual(reverted, { replicas: [1, 2], isr: [1], unclean: false });
  const onlyNew = revertReassignment({ ...partitionOf(base), replicas: [3, 1], isr: [3], addingReplicas: [3], removingReplicas: [1] });
  assert.deepEqual(onlyNew, { replicas: [1], isr: [1], unclean: true });
});

test('moving an RF=1 partition: the first record adds the target, the AlterPartition that brings it into the ISR completes the move', () => {
  let image = withTopic([1]);
  const started = reassign(image, [2]);
  assert.deepEqual([started.answer.errorCode, started.answer.errorMessage], [ErrorCode.NONE, null]);
  assert.equal(started.records.length, 1);
  image = started.image;
  let partition = partitionOf(image);
  assert.deepEqual(
    [partition.replicas, partition.addingReplicas, partition.removingReplicas, partition.isr, partition.leader, partition.leaderEpoch],
    [[2, 1], [2], [1], [1], 1, 0],
    'replicas = target + removing; the ISR and leader stay until the new replica catches up',
  );
  assert.equal(partition.directories?.length, 2, 'the new replica gets its broker\'s directory');
  assert.deepEqual(listPartitionReassignments(image, null), [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [2, 1], addingReplicas: [2], removingReplicas: [1] }] }]);

  const completed = leaderProposes(image, [1, 2]);
  assert.equal(completed.answer.errorCode, ErrorCode.NEW_LEADER_ELECTED, 'the leader was removed: it must learn the new leader from metadata');
  assert.equal(completed.records.length, 1, 'the completion is written although the answer is an error');
  image = completed.image;
  partition = partitionOf(image);
  assert.deepEqual(
    [partition.replicas, partition.addingReplicas, partition.removingReplicas, partition.isr, partition.leader, partition.leaderEpoch],
    [[2], [], [], [2], 2, 1],
  );
  assert.deepEqual(listPartitionReassignments(image, null), []);
});

test('growing RF 1 -> 3 completes once both new replicas are in the ISR; the leader stays and learns the final ISR', () => {
  let image = reassign(withTopic([1]), [1, 2, 3]).image;
  assert.deepEqual([partitionOf(image).replicas, partitionOf(image).addingReplicas, partitionOf(image).removingReplicas], [[1, 2, 3], [2, 3], []]);
  const half = leaderProposes(image, [1, 2]);
  assert.deepEqual([half.answer.errorCode, half.answer.isr], [ErrorCode.NONE, [1, 2]]);
  image = half.image;
  assert.deepEqual(partitionOf(image).addingReplicas, [2, 3], 'still waiting for broker 3');
  const full = leaderProposes(image, [1, 2, 3]);
  assert.deepEqual([full.answer.errorCode, full.answer.leaderId, full.answer.isr, full.answer.leaderEpoch], [ErrorCode.NONE, 1, [1, 2, 3], 0]);
  image = full.image;
  const partition = partitionOf(image);
  assert.deepEqual([partition.replicas, partition.isr, partition.addingReplicas, partition.leaderEpoch], [[1, 2, 3], [1, 2, 3], [], 0], 'nothing removed: no leader epoch bump');
  assert.equal(full.answer.partitionEpoch, partition.partitionEpoch);
});

test('shrinking RF 3 -> 2 completes in one record that bumps the leader epoch, and moves leadership off a removed leader', () => {
  const image = withTopic([1, 2, 3]);
  const shrink = reassign(image, [2, 3]);
  assert.equal(shrink.answer.errorCode, ErrorCode.NONE);
  const partition = partitionOf(shrink.image);
  assert.deepEqual(
    [partition.replicas, partition.isr, partition.addingReplicas, partition.removingReplicas, partition.leader, partition.leaderEpoch],
    [[2, 3], [2, 3], [], [], 2, 1],
  );
  const keepLeader = partitionOf(reassign(image, [1, 2]).image);
  assert.deepEqual([keepLeader.replicas, keepLeader.isr, keepLeader.leader, keepLeader.leaderEpoch], [[1, 2], [1, 2], 1, 1], 'the removed follower learns by the epoch bump');
  const reorder = reassign(image, [3, 2, 1]);
  assert.deepEqual([partitionOf(reorder.image).replicas, partitionOf(reorder.image).leaderEpoch], [[3, 2, 1], 0], 'a reorder is done at once, without an election');
  assert.equal(reassign(image, [1, 2, 3]).records.length, 0, 'the same replicas write nothing');
});

test('cancel reverts to the original replicas; nothing to cancel is NO_REASSIGNMENT_IN_PROGRESS; an unclean revert needs unclean.leader.election.enable', () => {
  const image = withTopic([1]);
  const none = reassign(image, null);
  assert.deepEqual([none.answer.errorCode, none.answer.errorMessage], [ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.']);
  assert.equal(none.records.length, 0);
  const moving = reassign(image, [2, 3]).image;
  const cancelled = reassign(moving, null);
  assert.equal(cancelled.answer.errorCode, ErrorCode.NONE);
  const partition = partitionOf(cancelled.image);
  assert.deepEqual([partition.replicas, partition.isr, partition.addingReplicas, partition.removingReplicas, partition.leader], [[1], [1], [], [], 1]);
  assert.ok(partition.leaderEpoch > partitionOf(moving).leaderEpoch, 'the dropped adding replicas learn through a leader epoch bump');

  // The ISR holds only adding replicas (the originals shrank out after 3 caught up): a revert would be unclean.
  const onlyNewIsr = withFakeIsr(reassign(withTopic([1, 2]), [3, 4]).image, [3]);
  const refused = reassign(onlyNewIsr, null);
  assert.deepEqual(
    [refused.answer.errorCode, refused.answer.errorMessage],
    [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Unable to revert partition assignment for t:0 because it would require an unclean leader election.'],
  );
  const allowed = reassign(onlyNewIsr, null, { config: { 'unclean.leader.election.enable': 'true' } });
  assert.equal(allowed.answer.errorCode, ErrorCode.NONE);
  const unclean = partitionOf(allowed.image);
  assert.deepEqual([unclean.replicas, unclean.isr, unclean.leader], [[1, 2], [1], 1]);
});

/** The image with the partition's ISR (and leader) set as given, as a leader's shrinks would have left it. */
function withFakeIsr(image: MetadataImage, isr: number[]): MetadataImage {
  const topic = image.topicsByName.get('t')!;
  const partition = { ...partitionOf(image), isr, leader: isr[0]! };
  const partitions = new Map(topic.partitions).set(0, partition);
  const changed = { ...topic, partitions };
  return { ...image, topicsByName: new Map(image.topicsByName).set('t', changed), topicsById: new Map(image.topicsById).set(topic.id, changed) };
}

test('Kafka\'s errors: unknown topic and partition, bad targets, a forbidden replication factor change', () => {
  const image = withTopic([1, 2]);
  const unknownTopic = commit(image, (context) => alterPartitionReassignments(context, { allowReplicationFactorChange: true, topics: [{ name: 'nope', partitions: [{ partitionIndex: 0, replicas: [1] }] }] }));
  assert.deepEqual(unknownTopic.response.topics[0]!.partitions[0], { partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find a topic named nope.' });
  const unknownPartition = commit(image, (context) => alterPartitionReassignments(context, { allowReplicationFactorChange: true, topics: [{ name: 't', partitions: [{ partitionIndex: 9, replicas: [1] }] }] }));
  assert.deepEqual(unknownPartition.response.topics[0]!.partitions[0]!.errorMessage, 'Unable to find partition t:9.');
  const answer = (replicas: number[], allowReplicationFactorChange = true) => {
    const { answer: a, records } = reassign(image, replicas, { allowReplicationFactorChange });
    if (a.errorCode !== ErrorCode.NONE) assert.equal(records.length, 0, 'a refused partition writes nothing');
    return [a.errorCode, a.errorMessage];
  };
  assert.deepEqual(answer([]), [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.']);
  assert.deepEqual(answer([2, 2]), [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes the broker 2 more than once.']);
  assert.deepEqual(answer([1, 9]), [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 9, but no such broker is registered.']);
  assert.deepEqual(answer([1, 2, 3], false), [ErrorCode.INVALID_REPLICATION_FACTOR, 'The replication factor is changed from 2 to 3']);
  assert.deepEqual(answer([3, 4], false), [ErrorCode.NONE, null], 'a move keeping the replication factor is allowed');
  const moving = reassign(image, [3, 4, 1]).image;
  const whileMoving = reassign(moving, [1, 2], { allowReplicationFactorChange: false }).answer;
  assert.deepEqual([whileMoving.errorCode, whileMoving.errorMessage], [ErrorCode.INVALID_REPLICATION_FACTOR, 'The replication factor is changed from 3 to 2'], 'the target replication factor counts while reassigning');
});

test('ListPartitionReassignments names only reassigning partitions of the topics asked for', () => {
  const image = reassign(withTopic([1]), [2]).image;
  assert.deepEqual(listPartitionReassignments(image, [{ name: 't', partitionIndexes: [0, 5] }, { name: 'missing', partitionIndexes: [0] }]).map((t) => t.name), ['t']);
  assert.deepEqual(listPartitionReassignments(withTopic([1]), [{ name: 't', partitionIndexes: [0] }]), []);
});
