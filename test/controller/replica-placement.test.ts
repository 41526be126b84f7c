/**
 * Proves replica placement is Kafka's StripedReplicaPlacer: replicas of a
 * partition spread over racks before a rack gets a second one, leaders
 * rotate over every unfenced broker before any leads twice, a fenced
 * broker never comes first (it only fills a replication factor), and the
 * refusals carry Kafka's messages.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/random.js';
import { InvalidReplicationFactorError, placeReplicas } from '../../src/controller/replica-placement.js';
import { metadataRecord } from '../../src/metadata/records.js';
import { clusterWith, replay } from './helpers.js';

const RACKS = new Map([
  [1, 'a'],
  [2, 'a'],
  [3, 'b'],
  [4, 'b'],
  [5, 'c'],
  [6, 'c'],
]);

test('with racks, every partition\'s replicas are on distinct racks and each broker leads once per round', () => {
  const image = clusterWith([1, 2, 3, 4, 5, 6], RACKS);
  for (let seed = 1; seed <= 20; seed++) {
    const placements = placeReplicas(image, { count: 12, replicationFactor: 3, random: new SeededRandom(seed) });
    for (const replicas of placements) assert.equal(new Set(replicas.map((id) => RACKS.get(id))).size, 3, `seed ${seed}: ${replicas} over three racks`);
    for (const round of [placements.slice(0, 6), placements.slice(6)]) {
      assert.deepEqual(round.map((replicas) => replicas[0]).sort(), [1, 2, 3, 4, 5, 6], `seed ${seed}: leaders of one round`);
    }
  }
});

test('replication factor 2 over three racks never puts both replicas in one rack', () => {
  const image = clusterWith([1, 2, 3, 4, 5, 6], RACKS);
  const placements = placeReplicas(image, { count: 30, replicationFactor: 2, random: new SeededRandom(9) });
  for (const [first, second] of placements) assert.notEqual(RACKS.get(first!), RACKS.get(second!));
});

test('without racks the replicas are distinct brokers', () => {
  const image = clusterWith([1, 2, 3]);
  for (const replicas of placeReplicas(image, { count: 10, replicationFactor: 3, random: new SeededRandom(4) })) assert.equal(new Set(replicas).size, 3);
});

test('a fenced broker never leads a new partition; it only fills the replication factor', () => {
  const image = replay(clusterWith([1, 2]), [metadataRecord('BrokerRegistrationChangeRecord', { brokerId: 2, brokerEpoch: clusterWith([1, 2]).brokers.get(2)!.epoch, fenced: 1 })]);
  assert.equal(image.brokers.get(2)!.fenced, true);
  for (const replicas of placeReplicas(image, { count: 5, replicationFactor: 2, random: new SeededRandom(2) })) assert.deepEqual(replicas, [1, 2]);
  for (const replicas of placeReplicas(image, { count: 5, replicationFactor: 1, random: new SeededRandom(2) })) assert.deepEqual(replicas, [1]);
});

test('refusals carry Kafka\'s messages', () => {
  const image = clusterWith([1, 2]);
  const refusal = (replicationFactor: number, on = image) => {
    try {
      placeReplicas(on, { count: 1, replicationFactor, random: new SeededRandom(1) });
      return null;
    } catch (error) {
      assert.ok(error instanceof InvalidReplicationFactorError);
      return error.message;
    }
  };
  assert.equal(refusal(3), 'The target replication factor of 3 cannot be reached because only 2 broker(s) are registered.');
  assert.equal(refusal(0), 'Invalid replication factor 0: the replication factor must be positive.');
  const epoch = (id: number) => image.brokers.get(id)!.epoch;
  const fenced = replay(image, [1, 2].map((id) => metadataRecord('BrokerRegistrationChangeRecord', { brokerId: id, brokerEpoch: epoch(id), fenced: 1 })));
  assert.equal(refusal(1, fenced), 'All brokers are currently fenced.');
});
