/**
 * Proves dynamic group configs (Kafka's GroupConfig) as controller
 * operations and image state: IncrementalAlterConfigs and AlterConfigs on a
 * GROUP resource write ConfigRecords that replay into image.groupConfigs
 * (a group need not exist); deleting the last config drops the group from
 * the map; Kafka's INVALID_CONFIG messages for unknown names, bad types,
 * ConfigDef bounds, the broker's min/max bounds (as configured), a session
 * timeout not above the heartbeat interval (checked against the set the
 * group would have), a bad share.auto.offset.reset, and null values; and a
 * snapshot of the image carries the group configs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AlterConfigOp, alterConfigs, incrementalAlterConfigs, type IncrementalAlterableConfig } from '../../src/controller/configuration-control.js';
import { ConfigResourceType, imageFromSnapshot } from '../../src/metadata/delta.js';
import { imageToRecords } from '../../src/metadata/image-writer.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { CLUSTER_ID, clusterWith, commit } from './helpers.js';

const GROUP = ConfigResourceType.GROUP;
const set = (name: string, value: string): IncrementalAlterableConfig => ({ name, value, configOperation: AlterConfigOp.SET });
const remove = (name: string): IncrementalAlterableConfig => ({ name, value: null, configOperation: AlterConfigOp.DELETE });

function alterGroup(image: MetadataImage, group: string, configs: IncrementalAlterableConfig[], broker: Record<string, string | number | boolean> = {}) {
  return commit(image, (c) => incrementalAlterConfigs(c, [{ resourceType: GROUP, resourceName: group, configs }], { validateOnly: false }), broker);
}

test('SET on a group that does not exist yet writes GROUP ConfigRecords; replay keeps them by group id', () => {
  const changed = alterGroup(clusterWith([1]), 'g', [set('share.auto.offset.reset', 'earliest'), set('share.record.lock.duration.ms', '20000')]);
  assert.equal(changed.response[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(
    changed.records.map((r) => (r.type === 'ConfigRecord' ? [r.data.resourceType, r.data.resourceName, r.data.name, r.data.value] : null)).sort(),
    [
      [GROUP, 'g', 'share.auto.offset.reset', 'earliest'],
      [GROUP, 'g', 'share.record.lock.duration.ms', '20000'],
    ],
  );
  assert.deepEqual(changed.image.groupConfigs.get('g'), new Map([['share.auto.offset.reset', 'earliest'], ['share.record.lock.duration.ms', '20000']]));
});

test('DELETE of the last config removes the group from the image; only changed entries are rewritten', () => {
  const first = alterGroup(clusterWith([1]), 'g', [set('share.auto.offset.reset', 'earliest'), set('share.isolation.level', 'read_committed')]).image;
  const partly = alterGroup(first, 'g', [remove('share.auto.offset.reset'), set('share.isolation.level', 'read_committed')]);
  assert.deepEqual(partly.records.map((r) => (r.type === 'ConfigRecord' ? [r.data.name, r.data.value] : null)), [['share.auto.offset.reset', null]]);
  assert.deepEqual(partly.image.groupConfigs.get('g'), new Map([['share.isolation.level', 'read_committed']]));
  const emptied = alterGroup(partly.image, 'g', [remove('share.isolation.level')]);
  assert.equal(emptied.image.groupConfigs.has('g'), false);
});

test('legacy AlterConfigs replaces the whole set of a group', () => {
  const first = alterGroup(clusterWith([1]), 'g', [set('share.auto.offset.reset', 'earliest')]).image;
  const replaced = commit(first, (c) =>
    alterConfigs(c, [{ resourceType: GROUP, resourceName: 'g', configs: [{ name: 'share.delivery.count.limit', value: '3' }] }], { validateOnly: false }),
  );
  assert.equal(replaced.response[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(replaced.image.groupConfigs.get('g'), new Map([['share.delivery.count.limit', '3']]));
});

test('invalid group configs are INVALID_CONFIG with Kafka messages, and nothing is written', () => {
  const image = clusterWith([1]);
  const cases: [IncrementalAlterableConfig[], string][] = [
    [[set('no.such.config', '1')], 'Unknown group config name: no.such.config'],
    [[set('share.delivery.count.limit', 'x')], 'Invalid value x for configuration share.delivery.count.limit: Not a number of type INT'],
    [[set('share.record.lock.duration.ms', '999')], 'Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000'],
    [[set('share.record.lock.duration.ms', '70000')], 'share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive.'],
    [[set('consumer.session.timeout.ms', '30000')], 'consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.'],
    [[set('share.delivery.count.limit', '11')], 'share.delivery.count.limit must be in the range 2 to 10 inclusive.'],
    [[set('streams.num.standby.replicas', '3')], 'streams.num.standby.replicas must be less than or equal to 2'],
    [[set('streams.task.offset.interval.ms', '1000')], 'streams.task.offset.interval.ms must be greater than or equal to 15000'],
    [[set('share.isolation.level', 'READ_COMMITTED')], 'Invalid value READ_COMMITTED for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted'],
    [
      [set('share.auto.offset.reset', 'none')],
      "Invalid value none for configuration share.auto.offset.reset: Invalid value `none` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
    ],
    [[set('streams.assignor.name', 'greedy')], "streams.assignor.name 'greedy' is not a registered task assignor. Registered assignors are: [sticky]."],
    [[set('streams.rack.aware.assignment.tags', 'zone,zone')], 'streams.rack.aware.assignment.tags must not contain duplicate tag keys.'],
    [[set('errors.deadletterqueue.topic.name', '__dlq')], "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"],
  ];
  for (const [configs, message] of cases) {
    const outcome = alterGroup(image, 'g', configs);
    assert.deepEqual([outcome.response[0]!.errorCode, outcome.response[0]!.errorMessage], [ErrorCode.INVALID_CONFIG, message], message);
    assert.equal(outcome.records.length, 0);
  }
});

test('the broker bounds are the configured ones, and session versus heartbeat is checked on the resulting set', () => {
  const wide = { 'group.share.min.session.timeout.ms': 10000, 'group.share.min.heartbeat.interval.ms': 1000 };
  const accepted = alterGroup(clusterWith([1]), 'g', [set('share.session.timeout.ms', '12000')], wide);
  assert.equal(accepted.response[0]!.errorCode, ErrorCode.NONE);
  // The heartbeat alone is in range, but not below the session timeout the group already has.
  const refused = alterGroup(accepted.image, 'g', [set('share.heartbeat.interval.ms', '12000')], { ...wide, 'group.share.max.heartbeat.interval.ms': 15000 });
  assert.deepEqual(
    [refused.response[0]!.errorCode, refused.response[0]!.errorMessage],
    [ErrorCode.INVALID_CONFIG, 'share.session.timeout.ms must be greater than share.heartbeat.interval.ms'],
  );
});

test('AlterConfigs with a null value and an empty group name are refused as Kafka does', () => {
  const image = clusterWith([1]);
  const nulls = commit(image, (c) => alterConfigs(c, [{ resourceType: GROUP, resourceName: 'g', configs: [{ name: 'share.isolation.level', value: null }] }], { validateOnly: false }));
  assert.deepEqual([nulls.response[0]!.errorCode, nulls.response[0]!.errorMessage], [ErrorCode.INVALID_CONFIG, 'Null value not supported for group configs: share.isolation.level']);
  const unnamed = alterGroup(image, '', [set('share.auto.offset.reset', 'earliest')]);
  assert.equal(unnamed.response[0]!.errorCode, ErrorCode.INVALID_REQUEST);
});

test('APPEND works on the list config streams.rack.aware.assignment.tags; validateOnly writes nothing', () => {
  const appended = alterGroup(clusterWith([1]), 'g', [{ name: 'streams.rack.aware.assignment.tags', value: 'zone', configOperation: AlterConfigOp.APPEND }]);
  assert.equal(appended.image.groupConfigs.get('g')?.get('streams.rack.aware.assignment.tags'), 'zone');
  const dryRun = commit(appended.image, (c) =>
    incrementalAlterConfigs(c, [{ resourceType: GROUP, resourceName: 'g', configs: [set('share.auto.offset.reset', 'earliest')] }], { validateOnly: true }),
  );
  assert.equal(dryRun.response[0]!.errorCode, ErrorCode.NONE);
  assert.equal(dryRun.records.length, 0);
});

test('a snapshot of the image carries the group configs', () => {
  const image = alterGroup(clusterWith([1]), 'g', [set('share.auto.offset.reset', 'by_duration:PT1H')]).image;
  const restored = imageFromSnapshot(CLUSTER_ID, { endOffset: image.offset + 1, records: imageToRecords(image) });
  assert.deepEqual(restored.groupConfigs, image.groupConfigs);
});
