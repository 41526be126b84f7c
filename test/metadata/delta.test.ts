/**
 * Proves image building by replay: deltas name exactly what changed
 * (partitions, deleted topics, config changes, brokers, features), images
 * stay immutable, replay refuses records that cannot apply, and an image
 * written as snapshot records (image-writer) rebuilds the same image.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigResourceType, ImageBuilder, MetadataReplayError, emptyImage, imageFromSnapshot, replayBatch } from '../../src/metadata/delta.js';
import { imageToRecords } from '../../src/metadata/image-writer.js';
import { metadataRecord } from '../../src/metadata/records.js';
import { allocateProducerIds } from '../../src/controller/cluster-control.js';
import { incrementalAlterConfigs } from '../../src/controller/configuration-control.js';
import { createTopics } from '../../src/controller/replication-control.js';
import { CLUSTER_ID, clusterWith, commit, uuidOf } from '../controller/helpers.js';

const T1 = uuidOf(1);
const T2 = uuidOf(2);

test('a delta lists changed partitions, deleted topics and config changes; the base image is untouched', () => {
  const base = replayBatch(emptyImage(CLUSTER_ID), {
    baseOffset: 0,
    lastOffset: 3,
    records: [
      metadataRecord('TopicRecord', { name: 'a', topicId: T1 }),
      metadataRecord('PartitionRecord', { partitionId: 0, topicId: T1, replicas: [1], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }),
      metadataRecord('TopicRecord', { name: 'b', topicId: T2 }),
      metadataRecord('PartitionRecord', { partitionId: 0, topicId: T2, replicas: [1], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }),
    ],
  }).image;
  const { image, delta } = replayBatch(base, {
    baseOffset: 4,
    lastOffset: 6,
    records: [
      metadataRecord('PartitionChangeRecord', { partitionId: 0, topicId: T1, leader: -1 }),
      metadataRecord('RemoveTopicRecord', { topicId: T2 }),
      metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.TOPIC, resourceName: 'a', name: 'retention.ms', value: '7' }),
    ],
  });
  assert.equal(image.offset, 6);
  assert.deepEqual(delta.changedPartitions.map((p) => [p.topicName, p.partition, p.leader, p.leaderEpoch, p.partitionEpoch]), [['a', 0, -1, 1, 1]]);
  assert.deepEqual(delta.deletedTopics.map((t) => t.name), ['b']);
  assert.deepEqual(delta.changedTopicConfigs.map((t) => [t.name, t.configs.get('retention.ms')]), [['a', '7']]);
  assert.equal(delta.brokersChanged, false);
  assert.equal(base.topicsByName.get('a')!.partitions.get(0)!.leader, 1);
  assert.equal(base.topicsByName.get('a')!.configs.size, 0);
  assert.equal(base.topicsById.has(T2), true);
  assert.equal(image.topicsById.has(T2), false);
});

test('a topic created and deleted within one delta leaves no trace', () => {
  const { image, delta } = replayBatch(emptyImage(CLUSTER_ID), {
    baseOffset: 0,
    lastOffset: 2,
    records: [
      metadataRecord('TopicRecord', { name: 'gone', topicId: T1 }),
      metadataRecord('PartitionRecord', { partitionId: 0, topicId: T1, replicas: [1], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }),
      metadataRecord('RemoveTopicRecord', { topicId: T1 }),
    ],
  });
  assert.equal(image.topicsByName.size, 0);
  assert.equal(delta.changedPartitions.length, 0);
  assert.equal(delta.deletedTopics.length, 0);
});

test('records that cannot apply are refused', () => {
  const builder = new ImageBuilder(emptyImage(CLUSTER_ID));
  assert.throws(() => builder.replay(metadataRecord('PartitionRecord', { partitionId: 0, topicId: T1 }), 0), MetadataReplayError);
  assert.throws(() => builder.replay(metadataRecord('UnfenceBrokerRecord', { id: 5, epoch: 1 }), 1), MetadataReplayError);
  builder.replay(metadataRecord('NoOpRecord', {}), 2);
  assert.throws(() => builder.replay(metadataRecord('NoOpRecord', {}), 2), /replayed after offset 2/);
});

test('features are finalized and removed at level 0', () => {
  let image = replayBatch(emptyImage(CLUSTER_ID), { baseOffset: 0, lastOffset: 1, records: [metadataRecord('FeatureLevelRecord', { name: 'metadata.version', featureLevel: 25 }), metadataRecord('FeatureLevelRecord', { name: 'group.version', featureLevel: 1 })] }).image;
  const replayed = replayBatch(image, { baseOffset: 2, lastOffset: 2, records: [metadataRecord('FeatureLevelRecord', { name: 'group.version', featureLevel: 0 })] });
  image = replayed.image;
  assert.deepEqual([...image.features], [['metadata.version', 25]]);
  assert.deepEqual([...replayed.delta.changedFeatures], [['group.version', 0]]);
});

test('an image written as snapshot records replays to the same image', () => {
  let image = clusterWith([1, 2]);
  image = commit(image, (c) =>
    createTopics(
      c,
      [
        { name: 'x', numPartitions: 3, replicationFactor: 2, assignments: [], configs: [{ name: 'cleanup.policy', value: 'compact' }] },
        { name: 'y', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
      ],
      { validateOnly: false },
    ),
  ).image;
  image = commit(image, (c) => incrementalAlterConfigs(c, [{ resourceType: ConfigResourceType.BROKER, resourceName: '', configs: [{ name: 'log.retention.ms', value: '9', configOperation: 0 }] }], { validateOnly: false })).image;
  image = commit(image, (c) => allocateProducerIds(c, 1, image.brokers.get(1)!.epoch)).image;
  const rebuilt = imageFromSnapshot(CLUSTER_ID, { endOffset: image.offset + 1, records: imageToRecords(image) });
  assert.deepEqual(rebuilt, image);
});
