/**
 * Proves UpdateFeatures' control logic as Kafka 4.4's FeatureControlManager:
 * an upgrade writes one FeatureLevelRecord per feature (validateOnly none),
 * a downgrade needs a downgrade type, a metadata.version downgrade across a
 * level that changed the metadata format is refused, every broker's and
 * voter's supported range is checked (an unregistered voter refuses), the
 * ELR dependency on metadata.version holds, kraft.version only stays where
 * it is, and the first failure fails the whole request with Kafka's text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { UpgradeType, updateFeatures, type FeatureUpdate, type QuorumFeatureState } from '../../src/controller/feature-control.js';
import { registerBroker, registerController } from '../../src/controller/cluster-control.js';
import { metadataRecord } from '../../src/metadata/records.js';
import { CLUSTER_ID, NO_SESSIONS, commit, registrationOf, replay, uuidOf } from './helpers.js';
import { emptyImage } from '../../src/metadata/delta.js';
import type { MetadataImage } from '../../src/metadata/image.js';

const SOLO: QuorumFeatureState = { kraftVersion: 0, voterIds: [1] };

function at(metadataVersion: number): MetadataImage {
  return replay(emptyImage(CLUSTER_ID), [metadataRecord('FeatureLevelRecord', { name: 'metadata.version', featureLevel: metadataVersion })]);
}

function update(image: MetadataImage, updates: FeatureUpdate[], quorum = SOLO, validateOnly = false) {
  return commit(image, (context) => updateFeatures(context, quorum, updates, { validateOnly }));
}

const upgrade = (feature: string, level: number): FeatureUpdate => ({ feature, maxVersionLevel: level, upgradeType: UpgradeType.UPGRADE });

test('an upgrade writes a FeatureLevelRecord per feature; validateOnly answers the same and writes nothing', () => {
  const checked = update(at(25), [upgrade('group.version', 1)], SOLO, true);
  assert.deepEqual(checked.response, { errorCode: ErrorCode.NONE, errorMessage: null });
  assert.equal(checked.records.length, 0);
  const done = update(at(22), [upgrade('group.version', 1), upgrade('metadata.version', 25)]);
  assert.deepEqual(done.response, { errorCode: ErrorCode.NONE, errorMessage: null });
  assert.deepEqual(done.records.map((r) => r.data), [{ name: 'group.version', featureLevel: 1 }, { name: 'metadata.version', featureLevel: 25 }]);
  assert.equal(done.image.features.get('group.version'), 1);
  assert.equal(done.image.features.get('metadata.version'), 25);
});

test('a lower level needs a downgrade type, a higher one an upgrade; a safe downgrade to 0 removes the feature', () => {
  const image = update(at(25), [upgrade('group.version', 1)]).image;
  assert.equal(
    update(image, [upgrade('group.version', 0)]).response.errorMessage,
    "Invalid update version 0 for feature group.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
  );
  assert.equal(
    update(at(25), [{ feature: 'group.version', maxVersionLevel: 1, upgradeType: UpgradeType.SAFE_DOWNGRADE }]).response.errorMessage,
    "Invalid update version 1 for feature group.version. Can't downgrade to a newer version.",
  );
  assert.equal(
    update(at(25), [{ feature: 'group.version', maxVersionLevel: 1, upgradeType: 4 }]).response.errorMessage,
    'Invalid update version 1 for feature group.version. The controller does not support the given upgrade type.',
  );
  const removed = update(image, [{ feature: 'group.version', maxVersionLevel: 0, upgradeType: UpgradeType.SAFE_DOWNGRADE }]);
  assert.equal(removed.response.errorCode, ErrorCode.NONE);
  assert.equal(removed.image.features.has('group.version'), false);
});

test('metadata.version downgrades only across levels that kept the metadata format, safe or unsafe', () => {
  const safe = update(at(25), [{ feature: 'metadata.version', maxVersionLevel: 23, upgradeType: UpgradeType.SAFE_DOWNGRADE }]);
  assert.equal(safe.response.errorCode, ErrorCode.NONE);
  assert.equal(safe.image.features.get('metadata.version'), 23);
  assert.deepEqual(update(at(25), [{ feature: 'metadata.version', maxVersionLevel: 22, upgradeType: UpgradeType.SAFE_DOWNGRADE }]).response, {
    errorCode: ErrorCode.INVALID_UPDATE_VERSION,
    errorMessage: 'Unsupported metadata.version downgrade from 25 to 22. Refusing to perform the requested downgrade because it might delete metadata information.',
  });
  assert.equal(
    update(at(25), [{ feature: 'metadata.version', maxVersionLevel: 22, upgradeType: UpgradeType.UNSAFE_DOWNGRADE }]).response.errorMessage,
    'Unsupported metadata.version downgrade from 25 to 22. Unsafe metadata downgrade is not supported in this version.',
  );
  assert.equal(
    update(at(25), [upgrade('metadata.version', 26)]).response.errorMessage,
    'Invalid update version 26 for feature metadata.version. Local controller 1 only supports versions 7-25',
  );
});

test('every broker and every voter must support the level; a voter that never registered refuses any change', () => {
  const narrow = registrationOf(4, { features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 25 }] });
  const withBroker = commit(at(25), (c) => registerBroker(c, narrow, NO_SESSIONS)).image;
  assert.deepEqual(update(withBroker, [upgrade('group.version', 1)]).response, {
    errorCode: ErrorCode.INVALID_UPDATE_VERSION,
    errorMessage: 'Invalid update version 1 for feature group.version. Broker 4 does not support this feature.',
  });
  const trio = { kraftVersion: 0, voterIds: [1, 2, 3] };
  assert.equal(
    update(at(25), [upgrade('group.version', 1)], trio).response.errorMessage,
    'Invalid update version 1 for feature group.version. controller 2 has not registered, and may not support this feature',
  );
  let image = at(25);
  for (const [id, max] of [[2, 1], [3, 0]] as const) {
    const features = [{ name: 'group.version', minSupportedVersion: 0, maxSupportedVersion: max }];
    image = commit(image, (c) => registerController(c, { controllerId: id, incarnationId: uuidOf(id), listeners: [], features })).image;
  }
  assert.equal(
    update(image, [upgrade('group.version', 1)], trio).response.errorMessage,
    'Invalid update version 1 for feature group.version. Controller 3 does not support this feature.',
  );
  assert.equal(
    update(at(25), [upgrade('no.such.feature', 1)]).response.errorMessage,
    'Invalid update version 1 for feature no.such.feature. Local controller 1 does not support this feature.',
  );
});

test('eligible.leader.replicas.version 1 depends on metadata.version 4.0-IV1, in the levels the request leaves', () => {
  assert.deepEqual(update(at(22), [upgrade('eligible.leader.replicas.version', 1)]).response, {
    errorCode: ErrorCode.INVALID_UPDATE_VERSION,
    errorMessage: 'Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23',
  });
  const together = update(at(22), [upgrade('metadata.version', 23), upgrade('eligible.leader.replicas.version', 1)]);
  assert.equal(together.response.errorCode, ErrorCode.NONE);
  assert.equal(together.image.features.get('eligible.leader.replicas.version'), 1);
});

test('kraft.version: its current level writes a NoOpRecord; an upgrade is refused and a downgrade is never allowed', () => {
  const same = update(at(25), [upgrade('kraft.version', 1)], { kraftVersion: 1, voterIds: [1] });
  assert.deepEqual(same.records.map((r) => r.type), ['NoOpRecord']);
  const raised = update(at(25), [upgrade('kraft.version', 1)]);
  assert.equal(raised.response.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
  assert.equal(raised.records.length, 0);
  assert.equal(
    update(at(25), [{ feature: 'kraft.version', maxVersionLevel: 0, upgradeType: UpgradeType.SAFE_DOWNGRADE }], { kraftVersion: 1, voterIds: [1] }).response.errorMessage,
    "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature.",
  );
});

test('the first failing feature fails the whole request: nothing is written', () => {
  const outcome = update(at(25), [upgrade('group.version', 1), upgrade('share.version', 2)]);
  assert.equal(outcome.response.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
  assert.equal(outcome.records.length, 0);
  assert.equal(outcome.image.features.has('group.version'), false);
});
