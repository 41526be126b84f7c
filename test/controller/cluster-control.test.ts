/**
 * Proves the cluster operations of the controller: the bootstrap
 * FeatureLevelRecord of a new cluster (once), broker registration with its
 * epoch and fencing, controller registration, and producer-id blocks of
 * 1000 that never overlap across replays.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  PRODUCER_ID_BLOCK_SIZE,
  allocateProducerIds,
  bootstrapFeatures,
  registerBroker,
  registerController,
} from '../../src/controller/cluster-control.js';
import { emptyImage } from '../../src/metadata/delta.js';
import { CLUSTER_ID, NO_SESSIONS, bootstrapped, clusterWith, commit, registrationOf, uuidOf } from './helpers.js';

test('a new cluster gets metadata.version once, transaction.version 2 from 4.0-IV2 (0 before), and share.version 1', () => {
  const first = commit(emptyImage(CLUSTER_ID), (c) => bootstrapFeatures(c, 25));
  assert.deepEqual(first.records.map((r) => r.type), ['FeatureLevelRecord', 'FeatureLevelRecord', 'FeatureLevelRecord']);
  assert.equal(first.image.features.get('share.version'), 1);
  assert.equal(first.image.features.get('metadata.version'), 25);
  assert.equal(first.image.features.get('transaction.version'), 2);
  assert.equal(commit(emptyImage(CLUSTER_ID), (c) => bootstrapFeatures(c, 21)).image.features.has('transaction.version'), false);
  const second = commit(first.image, (c) => bootstrapFeatures(c, 25));
  assert.equal(second.records.length, 0);
});

test('a broker registers fenced with its write offset as epoch, and is refused for an unsupported metadata.version', () => {
  const image = bootstrapped();
  const request = registrationOf(4, { rack: 'r1', listeners: [{ name: 'PLAINTEXT', host: 'h', port: 1234, securityProtocol: 0 }], logDirs: [uuidOf(44)] });
  const registered = commit(image, (c) => registerBroker(c, request, NO_SESSIONS));
  assert.equal(registered.response.brokerEpoch, image.offset + 1);
  const broker = registered.image.brokers.get(4)!;
  assert.equal(broker.fenced, true);
  assert.equal(broker.rack, 'r1');
  assert.deepEqual(broker.listeners, request.listeners);
  assert.deepEqual(broker.logDirs, [uuidOf(44)]);
  const old = commit(image, (c) => registerBroker(c, { ...request, features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 20 }] }, NO_SESSIONS));
  assert.equal(old.response.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.equal(old.response.errorMessage, 'Unable to register because the broker does not support finalized version 25 of metadata.version. The broker wants a version between 7 and 20, inclusive.');
  assert.equal(old.records.length, 0);
});

test('a controller registration is written only when it changes', () => {
  const request = { controllerId: 1, incarnationId: uuidOf(5), listeners: [{ name: 'CONTROLLER', host: 'h', port: 9093, securityProtocol: 0 }], features: [] };
  const first = commit(bootstrapped(), (c) => registerController(c, request));
  assert.deepEqual(first.image.controllers.get(1)!.listeners, request.listeners);
  assert.equal(commit(first.image, (c) => registerController(c, request)).records.length, 0);
});

test('producer-id blocks follow each other through replay and need the current broker epoch', () => {
  let image = clusterWith([1]);
  const epoch = image.brokers.get(1)!.epoch;
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const allocated = commit(image, (c) => allocateProducerIds(c, 1, epoch));
    assert.equal(allocated.response.errorCode, ErrorCode.NONE);
    assert.equal(allocated.response.producerIdLen, PRODUCER_ID_BLOCK_SIZE);
    starts.push(allocated.response.producerIdStart);
    image = allocated.image;
  }
  assert.deepEqual(starts, [0, 1000, 2000]);
  assert.equal(image.nextProducerId, 3000);
  const stale = commit(image, (c) => allocateProducerIds(c, 1, epoch + 100));
  assert.equal(stale.response.errorCode, ErrorCode.STALE_BROKER_EPOCH);
});
