/**
 * Proves the controller's partition state machine for KIP-966 (eligible
 * leader replicas) and leader recovery, through the controller's own
 * operations and replay: an ISR shrinking below min.insync.replicas moves
 * members into the ELR, an ELR member is elected cleanly when the ISR is
 * empty (where without ELR the partition stays leaderless), an unclean
 * shutdown takes a broker out of the ELR while a clean one keeps it, an ISR
 * back at min.insync.replicas clears the ELR, and an unclean election's
 * RECOVERING state ends when the leader reports RECOVERED. ElectLeaders
 * (PREFERRED, UNCLEAN) answers with Kafka's per-partition codes, and
 * auto.leader.rebalance.enable moves leadership back on the mock clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fencingRecords, registerBroker } from '../../src/controller/cluster-control.js';
import { alterPartition, createTopics } from '../../src/controller/replication-control.js';
import { buildPartitionChange, Election } from '../../src/controller/partition-change.js';
import { ELR_FEATURE } from '../../src/metadata/features.js';
import type { MetadataImage, PartitionRegistration } from '../../src/metadata/image.js';
import { decodeMetadataRecord, encodeMetadataRecord, metadataRecord } from '../../src/metadata/records.js';
import { imageToRecords } from '../../src/metadata/image-writer.js';
import { applyRecords, emptyImage } from '../../src/metadata/delta.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ElectionType, electLeaders, type ElectLeadersRequest } from '../../src/controller/elections.js';
import { QuorumController } from '../../src/controller/quorum-controller.js';
import { ManualClock } from '../../src/io/clock.js';
import type { MetadataRecord } from '../../src/metadata/records.js';
import { CLUSTER_ID, NO_SESSIONS, bootstrapped, clusterWith, commit, contextFor, registrationOf, replay, unfence, uuidOf } from './helpers.js';

function cluster(options: { elr: boolean }): MetadataImage {
  const image = clusterWith([1, 2, 3]);
  return options.elr ? replay(image, [metadataRecord('FeatureLevelRecord', { name: ELR_FEATURE, featureLevel: 1 })]) : image;
}

function withTopic(image: MetadataImage, configs: Record<string, string> = {}): MetadataImage {
  const topic = {
    name: 't',
    numPartitions: -1,
    replicationFactor: -1,
    assignments: [{ partitionIndex: 0, brokerIds: [1, 2, 3] }],
    configs: Object.entries({ 'min.insync.replicas': '2', ...configs }).map(([name, value]) => ({ name, value })),
  };
  const created = commit(image, (context) => createTopics(context, [topic], { validateOnly: false }));
  assert.equal(created.response[0]!.errorCode, ErrorCode.NONE);
  return created.image;
}

function fence(image: MetadataImage, id: number): MetadataImage {
  return commit(image, (context) => ({ records: fencingRecords(context, id), response: null })).image;
}

/** The leader takes broker `id` back into the ISR (AlterPartition). */
function rejoin(image: MetadataImage, id: number): MetadataImage {
  const p = partitionOf(image);
  const newIsrWithEpochs = [...p.isr, id].map((brokerId) => ({ brokerId, brokerEpoch: -1 }));
  const request = { brokerId: p.leader, brokerEpoch: image.brokers.get(p.leader)!.epoch, topics: [{ topicId: p.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: 0, newIsrWithEpochs }] }] };
  return commit(image, (context) => alterPartition(context, request)).image;
}

function partitionOf(image: MetadataImage): PartitionRegistration {
  return image.topicsByName.get('t')!.partitions.get(0)!;
}

/** 3 then 2 then the leader 1 are fenced: the ISR empties into the ELR. */
function allFenced(options: { elr: boolean }): MetadataImage {
  return fence(fence(fence(withTopic(cluster(options)), 3), 2), 1);
}

test('an ISR shrinking below min.insync.replicas keeps its members as eligible leaders, and may become empty', () => {
  let image = fence(withTopic(cluster({ elr: true })), 3);
  assert.deepEqual({ isr: partitionOf(image).isr, elr: partitionOf(image).elr }, { isr: [1, 2], elr: [] });
  image = fence(image, 2);
  assert.deepEqual({ isr: partitionOf(image).isr, elr: partitionOf(image).elr, leader: partitionOf(image).leader }, { isr: [1], elr: [2], leader: 1 });
  image = fence(image, 1);
  const leaderless = partitionOf(image);
  assert.deepEqual(leaderless.isr, []);
  assert.deepEqual([...leaderless.elr].sort(), [1, 2]);
  assert.equal(leaderless.leader, -1);
  assert.deepEqual(leaderless.lastKnownElr, [1], 'the last leader is remembered');
});

test('an ELR member coming back leads cleanly; without ELR the same partition stays leaderless', () => {
  const withElr = unfence(allFenced({ elr: true }), 2).image;
  const elected = partitionOf(withElr);
  assert.equal(elected.leader, 2);
  assert.deepEqual(elected.isr, [2]);
  assert.deepEqual(elected.elr, [1]);
  assert.deepEqual(elected.lastKnownElr, []);
  assert.equal(elected.leaderRecoveryState ?? 0, 0, 'a clean election does not recover');

  const withoutElr = unfence(allFenced({ elr: false }), 2).image;
  assert.equal(partitionOf(withoutElr).leader, -1);
  assert.deepEqual(partitionOf(withoutElr).isr, [1], 'the last ISR member waits to lead again');
});

test('a broker restarting after an unclean shutdown leaves the ELR; after a clean one it stays', () => {
  const image = allFenced({ elr: true });
  const epochOf2 = image.brokers.get(2)!.epoch;
  const restart = (previousBrokerEpoch: number) =>
    commit(image, (context) => registerBroker(context, registrationOf(2, { incarnationId: uuidOf(52), previousBrokerEpoch }), NO_SESSIONS)).image;
  assert.deepEqual(partitionOf(restart(-1)).elr, [1]);
  assert.deepEqual([...partitionOf(restart(epochOf2)).elr].sort(), [1, 2]);
  // After the unclean restart, 2 is not eligible: unfencing it elects nobody.
  assert.equal(partitionOf(unfence(restart(-1), 2).image).leader, -1);
});

test('an ISR expanding back to min.insync.replicas clears the ELR', () => {
  let image = fence(fence(withTopic(cluster({ elr: true })), 3), 2);
  image = unfence(image, 2).image;
  const before = partitionOf(image);
  assert.deepEqual(before.elr, [2]);
  const leaderEpoch = image.brokers.get(1)!.epoch;
  const expanded = commit(image, (context) =>
    alterPartition(context, {
      brokerId: 1,
      brokerEpoch: leaderEpoch,
      topics: [{ topicId: before.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: before.leaderEpoch, partitionEpoch: before.partitionEpoch, leaderRecoveryState: 0, newIsrWithEpochs: [{ brokerId: 1, brokerEpoch: -1 }, { brokerId: 2, brokerEpoch: -1 }] }] }],
    }),
  );
  assert.equal(expanded.response.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(partitionOf(expanded.image).isr, [1, 2]);
  assert.deepEqual(partitionOf(expanded.image).elr, []);
});

test('an unclean election leaves the leader RECOVERING until it reports RECOVERED; RECOVERING cannot come back', () => {
  let image = withTopic(cluster({ elr: false }), { 'unclean.leader.election.enable': 'true' });
  image = fence(fence(image, 3), 2);
  image = fence(image, 1);
  image = unfence(image, 3).image;
  const recovering = partitionOf(image);
  assert.equal(recovering.leader, 3);
  assert.deepEqual(recovering.isr, [3]);
  assert.equal(recovering.leaderRecoveryState, 1);
  const request = (state: number, at: PartitionRegistration) => ({
    brokerId: 3,
    brokerEpoch: image.brokers.get(3)!.epoch,
    topics: [{ topicId: at.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: at.leaderEpoch, partitionEpoch: at.partitionEpoch, leaderRecoveryState: state, newIsrWithEpochs: [{ brokerId: 3, brokerEpoch: -1 }] }] }],
  });
  const recovered = commit(image, (context) => alterPartition(context, request(0, recovering)));
  assert.equal(recovered.response.topics[0]!.partitions[0]!.leaderRecoveryState, 0);
  assert.equal(partitionOf(recovered.image).leaderRecoveryState ?? 0, 0);
  const back = commit(recovered.image, (context) => alterPartition(context, request(1, partitionOf(recovered.image))));
  assert.equal(back.response.topics[0]!.partitions[0]!.errorCode, ErrorCode.INVALID_REQUEST);
});

test('ELR records are written at v2 and survive encoding and a snapshot', () => {
  const image = allFenced({ elr: true });
  const records = imageToRecords(image).filter((record) => record.type === 'PartitionRecord');
  assert.equal(records[0]!.version, 2);
  const decoded = decodeMetadataRecord(encodeMetadataRecord(records[0]!));
  assert.deepEqual(decoded, records[0]);
  const rebuilt = applyRecords(emptyImage(CLUSTER_ID), imageToRecords(image).map((record, offset) => ({ record, offset }))).image;
  assert.deepEqual(partitionOf(rebuilt).elr, partitionOf(image).elr);
  assert.deepEqual(partitionOf(rebuilt).lastKnownElr, [1]);
});

test('PREFERRED moves leadership to the first replica when it is in the ISR; UNCLEAN takes any live replica', () => {
  const base: PartitionRegistration = {
    topicId: uuidOf(9), topicName: 't', partition: 0, replicas: [1, 2, 3], isr: [2, 3], elr: [], lastKnownElr: [],
    removingReplicas: [], addingReplicas: [], leader: 2, leaderEpoch: 4, partitionEpoch: 6,
  };
  const options = { isAcceptableLeader: () => true, minIsr: 1, elrEnabled: true };
  assert.equal(buildPartitionChange(base, { ...options, election: Election.PREFERRED }), null, '1 is not in the ISR');
  assert.equal(buildPartitionChange({ ...base, isr: [1, 2, 3] }, { ...options, election: Election.PREFERRED })?.leader, 1);
  assert.equal(buildPartitionChange({ ...base, isr: [1, 2, 3] }, { ...options, election: Election.ONLINE }), null, 'ONLINE keeps a valid leader');
  const unclean = buildPartitionChange({ ...base, leader: -1, isr: [] }, { ...options, isAcceptableLeader: (r) => r === 3, election: Election.UNCLEAN, elrEnabled: false });
  assert.deepEqual({ leader: unclean?.leader, isr: unclean?.isr, leaderRecoveryState: unclean?.leaderRecoveryState }, { leader: 3, isr: [3], leaderRecoveryState: 1 });
});

test('ElectLeaders answers per partition with Kafka codes; for every partition it leaves out those needing no election', () => {
  // 1 is fenced and back in the ISR: 2 leads t-0, whose preferred replica is 1.
  let image = rejoin(unfence(fence(withTopic(cluster({ elr: false })), 1), 1).image, 1);
  assert.equal(partitionOf(image).leader, 2);
  const elect = (electionType: number, topicPartitions: ElectLeadersRequest['topicPartitions']) =>
    commit(image, (context) => electLeaders(context, { electionType, topicPartitions }));
  const named = elect(ElectionType.UNCLEAN, [{ topic: 't', partitions: [0, 7] }, { topic: 'nope', partitions: [0] }]);
  assert.deepEqual(named.response.replicaElectionResults.map((t) => t.partitionResult.map((p) => p.errorCode)), [
    [ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
  ]);
  assert.equal(elect(7, null).response.errorCode, ErrorCode.INVALID_REQUEST);
  const preferred = elect(ElectionType.PREFERRED, null);
  assert.deepEqual(preferred.response.replicaElectionResults, [{ topic: 't', partitionResult: [{ partitionId: 0, errorCode: ErrorCode.NONE, errorMessage: null }] }]);
  assert.equal(partitionOf(preferred.image).leader, 1);
  const again = commit(preferred.image, (context) => electLeaders(context, { electionType: ElectionType.PREFERRED, topicPartitions: null }));
  assert.deepEqual(again.response.replicaElectionResults, [{ topic: 't', partitionResult: [] }]);
  // The preferred replica fenced again: not available; 2 keeps leading.
  image = fence(preferred.image, 1);
  const unavailable = elect(ElectionType.PREFERRED, [{ topic: 't', partitions: [0] }]);
  assert.equal(unavailable.response.replicaElectionResults[0]!.partitionResult[0]!.errorCode, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
});

test('an UNCLEAN ElectLeaders elects a live out-of-sync replica, or says none is eligible', () => {
  let image = fence(fence(fence(withTopic(cluster({ elr: false })), 3), 2), 1);
  const unclean = () => commit(image, (context) => electLeaders(context, { electionType: ElectionType.UNCLEAN, topicPartitions: [{ topic: 't', partitions: [0] }] }));
  assert.equal(unclean().response.replicaElectionResults[0]!.partitionResult[0]!.errorCode, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
  image = unfence(image, 3).image;
  assert.equal(partitionOf(image).leader, -1, 'unclean.leader.election.enable is false: no automatic unclean election');
  const elected = unclean();
  assert.equal(elected.response.replicaElectionResults[0]!.partitionResult[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual({ leader: partitionOf(elected.image).leader, isr: partitionOf(elected.image).isr, recovery: partitionOf(elected.image).leaderRecoveryState }, { leader: 3, isr: [3], recovery: 1 });
});

/** An active QuorumController whose log starts with `image` (a snapshot), over a Raft that commits every append at once. */
function activeControllerOver(image: MetadataImage, config: Record<string, string | number | boolean>, clock: ManualClock) {
  const appended: MetadataRecord[][] = [];
  let offset = -1;
  const raft = {
    get logEndOffset() {
      return offset + 1;
    },
    async append(records: readonly MetadataRecord[]) {
      appended.push([...records]);
      const baseOffset = offset + 1;
      offset += records.length;
      controller.handleCommit({ baseOffset, lastOffset: offset, epoch: 1, appendTimestampMs: 0, sizeInBytes: 0, records: [...records] } as never);
      return { baseOffset, lastOffset: offset, epoch: 1 };
    },
  };
  // Sessions outlast the test: only the election passes write.
  const context = contextFor(bootstrapped(), { 'broker.session.timeout.ms': 3_600_000, ...config });
  const controller = new QuorumController({
    nodeId: 1, clusterId: CLUSTER_ID, config: context.config, configSchema: context.configSchema, random: context.random, clock, timers: clock, raft, bootstrapMetadataVersion: 25,
  });
  controller.handleLoadSnapshot({ id: { offset: image.offset + 1, epoch: 0 }, records: imageToRecords(image) } as never);
  offset = controller.image.offset;
  controller.handleLeaderChange({ leaderId: 1, epoch: 1 } as never);
  return { controller, appended };
}

test('auto.leader.rebalance.enable: the active controller elects preferred leaders every leader.imbalance.check.interval.seconds', async () => {
  const clock = new ManualClock();
  // 2 leads t-0 although 1, its preferred replica, is back in the ISR.
  const image = rejoin(unfence(fence(withTopic(cluster({ elr: false })), 1), 1).image, 1);
  const { controller, appended } = activeControllerOver(image, { 'leader.imbalance.check.interval.seconds': 30 }, clock);
  assert.equal(partitionOf(controller.image).leader, 2);
  clock.advance(29_999);
  await settle();
  assert.equal(appended.length, 0, 'nothing before the interval');
  clock.advance(1);
  await settle();
  assert.equal(partitionOf(controller.image).leader, 1);
  controller.close();
});

test('unclean.leader.election.interval.ms: a leaderless partition is elected uncleanly once its topic allows it', async () => {
  const clock = new ManualClock();
  let image = unfence(fence(fence(fence(withTopic(cluster({ elr: false })), 3), 2), 1), 3).image;
  const { controller: before, appended: none } = activeControllerOver(image, {}, clock);
  clock.advance(300_000);
  await settle();
  assert.deepEqual({ leader: partitionOf(before.image).leader, writes: none.length }, { leader: -1, writes: 0 }, 'not while the topic forbids it');
  before.close();
  image = replay(image, [metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 't', name: 'unclean.leader.election.enable', value: 'true' })]);
  const { controller } = activeControllerOver(image, {}, clock);
  clock.advance(299_999);
  await settle();
  assert.equal(partitionOf(controller.image).leader, -1);
  clock.advance(1);
  await settle();
  assert.deepEqual({ leader: partitionOf(controller.image).leader, isr: partitionOf(controller.image).isr }, { leader: 3, isr: [3] });
  controller.close();
});

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
