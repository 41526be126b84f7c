/**
 * Proves the controller's AlterPartition as Kafka's ReplicationControlManager
 * answers it: an ISR shrink and an expansion from the leader are written as
 * PartitionChangeRecords that bump the partition epoch (not the leader
 * epoch); a stale partition epoch is INVALID_UPDATE_VERSION, an old leader
 * epoch FENCED_LEADER_EPOCH, a newer one NOT_CONTROLLER; a sender that is
 * not the leader, an ISR without the leader or with a non-replica is
 * INVALID_REQUEST; a fenced member or a member with another broker epoch is
 * INELIGIBLE_REPLICA; a stale sender epoch is STALE_BROKER_EPOCH.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { alterPartition, createTopics, type AlterPartitionRequest } from '../../src/controller/replication-control.js';
import { metadataRecord } from '../../src/metadata/records.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { clusterWith, commit, replay } from './helpers.js';

function withTopic(): MetadataImage {
  const image = clusterWith([1, 2, 3]);
  const created = commit(image, (context) =>
    createTopics(context, [{ name: 't', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2, 3] }], configs: [] }], { validateOnly: false }),
  );
  return created.image;
}

function request(image: MetadataImage, isr: number[], overrides: { brokerId?: number; brokerEpoch?: number; leaderEpoch?: number; partitionEpoch?: number; epochs?: Map<number, number> } = {}): AlterPartitionRequest {
  const topic = image.topicsByName.get('t')!;
  const partition = topic.partitions.get(0)!;
  const brokerId = overrides.brokerId ?? partition.leader;
  return {
    brokerId,
    brokerEpoch: overrides.brokerEpoch ?? image.brokers.get(brokerId)!.epoch,
    topics: [{
      topicId: topic.id,
      partitions: [{
        partitionIndex: 0,
        leaderEpoch: overrides.leaderEpoch ?? partition.leaderEpoch,
        newIsrWithEpochs: isr.map((id) => ({ brokerId: id, brokerEpoch: overrides.epochs?.get(id) ?? image.brokers.get(id)?.epoch ?? -1 })),
        leaderRecoveryState: 0,
        partitionEpoch: overrides.partitionEpoch ?? partition.partitionEpoch,
      }],
    }],
  };
}

test('a shrink then an expansion are written; each bumps the partition epoch, not the leader epoch', () => {
  let image = withTopic();
  const before = image.topicsByName.get('t')!.partitions.get(0)!;
  assert.deepEqual([before.leader, before.isr, before.leaderEpoch, before.partitionEpoch], [1, [1, 2, 3], 0, 0]);
  const shrink = commit(image, (context) => alterPartition(context, request(image, [1, 2])));
  assert.equal(shrink.records.length, 1);
  const answer = shrink.response.topics[0]!.partitions[0]!;
  assert.deepEqual([answer.errorCode, answer.leaderId, answer.isr, answer.leaderEpoch, answer.partitionEpoch], [ErrorCode.NONE, 1, [1, 2], 0, 1]);
  image = shrink.image;
  const shrunk = image.topicsByName.get('t')!.partitions.get(0)!;
  assert.deepEqual([shrunk.isr, shrunk.leaderEpoch, shrunk.partitionEpoch], [[1, 2], 0, 1]);
  const expand = commit(image, (context) => alterPartition(context, request(image, [1, 2, 3])));
  assert.deepEqual(expand.response.topics[0]!.partitions[0]!.isr, [1, 2, 3]);
  assert.equal(expand.image.topicsByName.get('t')!.partitions.get(0)!.partitionEpoch, 2);
});

test('stale and future epochs, wrong senders and bad ISRs get Kafka error codes', () => {
  const image = withTopic();
  const code = (req: AlterPartitionRequest) => {
    const outcome = commit(image, (context) => alterPartition(context, req));
    assert.equal(outcome.records.length, 0, 'a refused change writes nothing');
    return outcome.response.errorCode !== ErrorCode.NONE ? outcome.response.errorCode : outcome.response.topics[0]!.partitions[0]!.errorCode;
  };
  assert.equal(code(request(image, [1, 2], { partitionEpoch: -1 })), ErrorCode.INVALID_UPDATE_VERSION);
  assert.equal(code(request(image, [1, 2], { leaderEpoch: -1 })), ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(code(request(image, [1, 2], { leaderEpoch: 5 })), ErrorCode.NOT_CONTROLLER);
  assert.equal(code(request(image, [1, 2], { partitionEpoch: 5 })), ErrorCode.NOT_CONTROLLER);
  assert.equal(code(request(image, [2, 3], { brokerId: 2 })), ErrorCode.INVALID_REQUEST, 'only the leader may alter the ISR');
  assert.equal(code(request(image, [2, 3])), ErrorCode.INVALID_REQUEST, 'the ISR must hold the leader');
  assert.equal(code(request(image, [1, 1])), ErrorCode.INVALID_REQUEST, 'no repeated members');
  assert.equal(code(request(image, [1, 7])), ErrorCode.INVALID_REQUEST, 'members must be replicas');
  assert.equal(code(request(image, [1, 2], { brokerEpoch: 999 })), ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(code(request(image, [1, 2, 3], { epochs: new Map([[3, 999]]) })), ErrorCode.INELIGIBLE_REPLICA);
  const unknownTopic = request(image, [1, 2]);
  const refused = commit(image, (context) => alterPartition(context, { ...unknownTopic, topics: [{ ...unknownTopic.topics[0]!, topicId: 'AAAAAAAAAAAAAAAAAAAABQ' }] }));
  assert.equal(refused.response.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
});

test('a fenced broker cannot join the ISR', () => {
  const base = withTopic();
  const shrunk = commit(base, (context) => alterPartition(context, request(base, [1, 2]))).image;
  const fenced = replay(shrunk, [metadataRecord('BrokerRegistrationChangeRecord', { brokerId: 3, brokerEpoch: shrunk.brokers.get(3)!.epoch, fenced: 1 })]);
  const outcome = commit(fenced, (context) => alterPartition(context, request(fenced, [1, 2, 3])));
  assert.equal(outcome.response.topics[0]!.partitions[0]!.errorCode, ErrorCode.INELIGIBLE_REPLICA);
});
