/**
 * Proves AlterConfigs and IncrementalAlterConfigs as controller operations:
 * the records they write, the state after replay, whole-set validation with
 * Kafka's messages, APPEND/SUBTRACT on list configs from Kafka's default,
 * broker dynamic configs (refusing non-dynamic ones), and validateOnly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AlterConfigOp, alterConfigs, incrementalAlterConfigs } from '../../src/controller/configuration-control.js';
import { createTopics } from '../../src/controller/replication-control.js';
import { ConfigResourceType } from '../../src/metadata/delta.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { clusterWith, commit } from './helpers.js';

const TOPIC = ConfigResourceType.TOPIC;
const BROKER = ConfigResourceType.BROKER;

function withTopic(configs: { name: string; value: string }[] = []): MetadataImage {
  return commit(clusterWith([1]), (c) =>
    createTopics(c, [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs }], { validateOnly: false }),
  ).image;
}

const set = (name: string, value: string | null) => ({ name, value, configOperation: AlterConfigOp.SET });

test('IncrementalAlterConfigs SET and DELETE write ConfigRecords; replay changes the overrides', () => {
  const image = withTopic([{ name: 'retention.ms', value: '1000' }]);
  const changed = commit(image, (c) =>
    incrementalAlterConfigs(
      c,
      [{ resourceType: TOPIC, resourceName: 't', configs: [set('segment.ms', '60000'), { name: 'retention.ms', value: null, configOperation: AlterConfigOp.DELETE }] }],
      { validateOnly: false },
    ),
  );
  assert.equal(changed.response[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(
    changed.records.map((r) => (r.type === 'ConfigRecord' ? [r.data.name, r.data.value] : null)).sort(),
    [['retention.ms', null], ['segment.ms', '60000']],
  );
  assert.deepEqual(changed.image.topicsByName.get('t')!.configs, new Map([['segment.ms', '60000']]));
});

test('APPEND and SUBTRACT work on lists, starting from the default, and are refused on other types', () => {
  const image = withTopic();
  const appended = commit(image, (c) =>
    incrementalAlterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [{ name: 'cleanup.policy', value: 'compact', configOperation: AlterConfigOp.APPEND }] }], {
      validateOnly: false,
    }),
  );
  assert.equal(appended.image.topicsByName.get('t')!.configs.get('cleanup.policy'), 'delete,compact');
  const subtracted = commit(appended.image, (c) =>
    incrementalAlterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [{ name: 'cleanup.policy', value: 'delete', configOperation: AlterConfigOp.SUBTRACT }] }], {
      validateOnly: false,
    }),
  );
  assert.equal(subtracted.image.topicsByName.get('t')!.configs.get('cleanup.policy'), 'compact');
  const refused = commit(image, (c) =>
    incrementalAlterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [{ name: 'retention.ms', value: '5', configOperation: AlterConfigOp.APPEND }] }], {
      validateOnly: false,
    }),
  );
  assert.equal(refused.response[0]!.errorCode, ErrorCode.INVALID_CONFIG);
  assert.equal(refused.response[0]!.errorMessage, "Can't APPEND to key retention.ms because its type is not LIST.");
});

test('invalid values, unknown names and unknown topics are refused with nothing written', () => {
  const image = withTopic();
  const { response, records } = commit(image, (c) =>
    incrementalAlterConfigs(
      c,
      [
        { resourceType: TOPIC, resourceName: 't', configs: [set('min.cleanable.dirty.ratio', '1.5')] },
        { resourceType: TOPIC, resourceName: 't2', configs: [set('retention.ms', '1')] },
        { resourceType: TOPIC, resourceName: 't', configs: [set('message.downconversion.enable', 'true')] },
      ],
      { validateOnly: false },
    ),
  );
  assert.equal(records.length, 0);
  assert.equal(response[0]!.errorMessage, 'Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1');
  assert.equal(response[1]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(response[1]!.errorMessage, "The topic 't2' does not exist.");
  assert.equal(response[2]!.errorMessage, 'Duplicate resource.');
  const conflict = commit(image, (c) =>
    incrementalAlterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [set('min.compaction.lag.ms', '10'), set('max.compaction.lag.ms', '5')] }], {
      validateOnly: false,
    }),
  );
  assert.equal(conflict.response[0]!.errorMessage, 'conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)');
});

test('legacy AlterConfigs replaces the whole set of overrides', () => {
  const image = withTopic([{ name: 'retention.ms', value: '1000' }, { name: 'segment.ms', value: '5000' }]);
  const replaced = commit(image, (c) => alterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [{ name: 'segment.ms', value: '7000' }] }], { validateOnly: false }));
  assert.deepEqual(replaced.image.topicsByName.get('t')!.configs, new Map([['segment.ms', '7000']]));
  const validated = commit(image, (c) => alterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [] }], { validateOnly: true }));
  assert.equal(validated.response[0]!.errorCode, ErrorCode.NONE);
  assert.equal(validated.records.length, 0);
});

test('broker configs: dynamic ones per broker and cluster-wide, non-dynamic ones refused', () => {
  const image = clusterWith([1]);
  const changed = commit(image, (c) =>
    incrementalAlterConfigs(
      c,
      [
        { resourceType: BROKER, resourceName: '', configs: [set('log.retention.ms', '5000')] },
        { resourceType: BROKER, resourceName: '1', configs: [set('message.max.bytes', '2000000')] },
      ],
      { validateOnly: false },
    ),
  );
  assert.deepEqual(changed.response.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.NONE]);
  assert.equal(changed.image.brokerConfigs.get('')!.get('log.retention.ms'), '5000');
  assert.equal(changed.image.brokerConfigs.get('1')!.get('message.max.bytes'), '2000000');
  const refused = commit(image, (c) =>
    incrementalAlterConfigs(
      c,
      [
        { resourceType: BROKER, resourceName: '', configs: [set('num.partitions', '3')] },
        { resourceType: BROKER, resourceName: 'x', configs: [set('message.max.bytes', '1')] },
        { resourceType: BROKER, resourceName: '1', configs: [set('message.max.bytes', 'many')] },
      ],
      { validateOnly: false },
    ),
  );
  assert.equal(refused.response[0]!.errorCode, ErrorCode.INVALID_CONFIG);
  assert.equal(refused.response[0]!.errorMessage, 'Cannot update these configs dynamically: Set(num.partitions)');
  assert.equal(refused.response[1]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(refused.response[2]!.errorMessage, 'Invalid value many for configuration message.max.bytes: Not a number of type INT');
});

test("the log cleaner's settings are dynamic, as Kafka's LogCleaner.ReconfigurableConfigs; log.cleaner.enable is not", () => {
  const image = clusterWith([1]);
  const cleanerSettings = ['log.cleaner.threads', 'log.cleaner.dedupe.buffer.size', 'log.cleaner.io.buffer.load.factor', 'log.cleaner.io.buffer.size', 'log.cleaner.io.max.bytes.per.second', 'log.cleaner.backoff.ms'];
  const values = ['2', '67108864', '0.8', '262144', '1048576.0', '1000'];
  const changed = commit(image, (c) =>
    incrementalAlterConfigs(c, [{ resourceType: BROKER, resourceName: '1', configs: cleanerSettings.map((name, index) => set(name, values[index]!)) }], { validateOnly: false }),
  );
  assert.equal(changed.response[0]!.errorCode, ErrorCode.NONE, changed.response[0]!.errorMessage ?? '');
  assert.deepEqual(cleanerSettings.map((name) => changed.image.brokerConfigs.get('1')!.get(name)), values);
  const refused = commit(image, (c) => incrementalAlterConfigs(c, [{ resourceType: BROKER, resourceName: '', configs: [set('log.cleaner.enable', 'false')] }], { validateOnly: false }));
  assert.equal(refused.response[0]!.errorMessage, 'Cannot update these configs dynamically: Set(log.cleaner.enable)');
});

test('a config key named twice in one resource is INVALID_REQUEST', () => {
  const { response, records } = commit(withTopic(), (c) =>
    incrementalAlterConfigs(c, [{ resourceType: TOPIC, resourceName: 't', configs: [set('retention.ms', '1'), set('retention.ms', '2')] }], { validateOnly: false }),
  );
  assert.equal(records.length, 0);
  assert.equal(response[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(response[0]!.errorMessage, 'Error due to duplicate config keys');
});
