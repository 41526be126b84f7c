/**
 * Proves AlterClientQuotas on the controller behaves as Kafka 4.4's
 * ClientQuotaControlManager: valid alterations write ClientQuotaRecords that
 * replay into the image (set, change, remove, default entities as null
 * names); equal values and removals of unset keys write nothing; each
 * invalid entity or value is INVALID_REQUEST for that entity alone with
 * Kafka's message; repeated entities and repeated keys are "Ignoring
 * duplicate entity"; validateOnly writes nothing; snapshots rebuild the
 * quotas; DescribeClientQuotas' matching (exact, default, any, strict).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alterClientQuotas, type ClientQuotaAlteration } from '../../src/controller/client-quota-control.js';
import { clientQuotaEntityKey, entityOf, matchClientQuotas } from '../../src/metadata/client-quotas.js';
import { imageToRecords } from '../../src/metadata/image-writer.js';
import { emptyImage } from '../../src/metadata/delta.js';
import { decodeMetadataRecord, encodeMetadataRecord } from '../../src/metadata/records.js';
import type { MetadataImage } from '../../src/metadata/image.js';
import { bootstrapped, commit, CLUSTER_ID, replay } from './helpers.js';

const user = (name: string | null) => ({ entityType: 'user', entityName: name });
const client = (name: string | null) => ({ entityType: 'client-id', entityName: name });
const ip = (name: string | null) => ({ entityType: 'ip', entityName: name });
const set = (key: string, value: number) => ({ key, value, remove: false });
const remove = (key: string) => ({ key, value: 0, remove: true });

function alter(image: MetadataImage, alterations: ClientQuotaAlteration[], validateOnly = false) {
  return commit(image, (context) => alterClientQuotas(context, alterations, { validateOnly }));
}

function quotasOf(image: MetadataImage, ...entity: { entityType: string; entityName: string | null }[]) {
  return image.clientQuotas.get(clientQuotaEntityKey(entityOf(entity)))?.quotas;
}

test('set, change and remove quotas of named and default entities', () => {
  let { image, response, records } = alter(bootstrapped(), [
    { entity: [client('c1')], ops: [set('producer_byte_rate', 1024)] },
    { entity: [user(null)], ops: [set('consumer_byte_rate', 2048), set('request_percentage', 12.5)] },
    { entity: [user('alice'), client(null)], ops: [set('producer_byte_rate', 100)] },
  ]);
  assert.equal(records.length, 4);
  assert.deepEqual(response.map((r) => r.errorCode), [0, 0, 0]);
  assert.deepEqual(response[2]!.entity, [client(null), user('alice')], 'components in Kafka order: client-id, then user');
  assert.deepEqual([...quotasOf(image, client('c1'))!], [['producer_byte_rate', 1024]]);
  assert.deepEqual([...quotasOf(image, user(null))!], [['consumer_byte_rate', 2048], ['request_percentage', 12.5]]);
  assert.deepEqual([...quotasOf(image, client(null), user('alice'))!], [['producer_byte_rate', 100]], 'the same entity in either order');

  ({ image, records } = alter(image, [{ entity: [client('c1')], ops: [set('producer_byte_rate', 1024), remove('consumer_byte_rate')] }]));
  assert.equal(records.length, 0, 'an equal value and the removal of an unset key write nothing');

  ({ image, records } = alter(image, [
    { entity: [client('c1')], ops: [remove('producer_byte_rate')] },
    { entity: [user(null)], ops: [set('consumer_byte_rate', 4096)] },
  ]));
  assert.equal(records.length, 2);
  assert.equal(quotasOf(image, client('c1')), undefined, 'an entity without quotas leaves the image');
  assert.equal(quotasOf(image, user(null))!.get('consumer_byte_rate'), 4096);
});

test('ip entities take connection_creation_rate only', () => {
  const { image, response } = alter(bootstrapped(), [
    { entity: [ip('10.0.0.1')], ops: [set('connection_creation_rate', 10)] },
    { entity: [ip(null)], ops: [set('connection_creation_rate', 5)] },
    { entity: [ip('::1')], ops: [set('producer_byte_rate', 5)] },
  ]);
  assert.deepEqual(response.map((r) => r.errorMessage), [null, null, 'Invalid configuration key producer_byte_rate']);
  assert.equal(quotasOf(image, ip('10.0.0.1'))!.get('connection_creation_rate'), 10);
});

test('invalid entities and values are INVALID_REQUEST with Kafka messages, each for its entity alone', () => {
  const cases: [ClientQuotaAlteration, string][] = [
    [{ entity: [], ops: [set('producer_byte_rate', 1)] }, 'Invalid empty client quota entity'],
    [{ entity: [{ entityType: 'group', entityName: 'g' }], ops: [set('producer_byte_rate', 1)] }, 'Unhandled client quota entity type: group'],
    [{ entity: [user('')], ops: [set('producer_byte_rate', 1)] }, 'Empty user not supported'],
    [{ entity: [ip('1.2.3.4'), user('u')], ops: [set('connection_creation_rate', 1)] }, 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId'],
    [{ entity: [ip('not an address')], ops: [set('connection_creation_rate', 1)] }, 'not an address is not a valid IP or resolvable host.'],
    [{ entity: [user('u1')], ops: [set('bogus', 1)] }, 'Invalid configuration key bogus'],
    [{ entity: [user('u2')], ops: [set('producer_byte_rate', Number.POSITIVE_INFINITY)] }, 'Quota producer_byte_rate must be a finite number'],
    [{ entity: [user('u3')], ops: [set('consumer_byte_rate', 0)] }, 'Quota consumer_byte_rate must be greater than 0'],
    [{ entity: [user('u4')], ops: [set('producer_byte_rate', 10.5)] }, 'producer_byte_rate cannot be a fractional value.'],
    [{ entity: [user('u5')], ops: [set('producer_byte_rate', 1e19)] }, 'Proposed value for producer_byte_rate is too large for a LONG.'],
    [{ entity: [ip('10.0.0.2')], ops: [set('connection_creation_rate', 3e9)] }, 'Proposed value for connection_creation_rate is too large for an INT.'],
  ];
  const { image, response, records } = alter(bootstrapped(), [...cases.map(([alteration]) => alteration), { entity: [user('ok')], ops: [set('request_percentage', 0.5)] }]);
  assert.deepEqual(response.map((r) => r.errorMessage), [...cases.map(([, message]) => message), null]);
  assert.ok(response.slice(0, -1).every((r) => r.errorCode === 42), 'INVALID_REQUEST');
  assert.equal(records.length, 1, 'only the valid entity is written');
  assert.equal(quotasOf(image, user('ok'))!.get('request_percentage'), 0.5);
});

test('a repeated entity or key is "Ignoring duplicate entity"; a removal is not validated', () => {
  const { response } = alter(bootstrapped(), [
    { entity: [user('u'), client('c')], ops: [set('producer_byte_rate', 1)] },
    { entity: [client('c'), user('u')], ops: [set('producer_byte_rate', 2)] },
    { entity: [user('k')], ops: [set('producer_byte_rate', 1), set('producer_byte_rate', 2)] },
    { entity: [user('r')], ops: [remove('no_such_key')] },
  ]);
  assert.deepEqual(response.map((r) => r.errorMessage), [
    'Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c, user=u})',
    'Ignoring duplicate entity ClientQuotaEntity(entries={user=k})',
    null,
  ]);
});

test('validateOnly answers as a write would and writes nothing', () => {
  const { response, records } = alter(bootstrapped(), [
    { entity: [client('c1')], ops: [set('producer_byte_rate', 1024)] },
    { entity: [client('c2')], ops: [set('producer_byte_rate', -1)] },
  ], true);
  assert.equal(records.length, 0);
  assert.deepEqual(response.map((r) => r.errorCode), [0, 42]);
});

test('ClientQuotaRecord round-trips its bytes, and a snapshot rebuilds the quotas', () => {
  const { image } = alter(bootstrapped(), [
    { entity: [user(null), client('c1')], ops: [set('producer_byte_rate', 1024), set('request_percentage', 33.3)] },
    { entity: [ip(null)], ops: [set('connection_creation_rate', 7)] },
  ]);
  const snapshot = imageToRecords(image).map((record) => decodeMetadataRecord(encodeMetadataRecord(record)));
  const quotaRecords = snapshot.filter((record) => record.type === 'ClientQuotaRecord');
  assert.equal(quotaRecords.length, 3);
  assert.deepEqual(quotaRecords[0]!.data, { entity: [client('c1'), user(null)], key: 'producer_byte_rate', value: 1024, remove: false });
  const rebuilt = replay(emptyImage(CLUSTER_ID), snapshot);
  assert.deepEqual(rebuilt.clientQuotas, image.clientQuotas);
});

test('DescribeClientQuotas matching: exact, default, any name, strict', () => {
  const { image } = alter(bootstrapped(), [
    { entity: [user('alice')], ops: [set('producer_byte_rate', 1)] },
    { entity: [user('alice'), client('c1')], ops: [set('producer_byte_rate', 2)] },
    { entity: [user(null)], ops: [set('producer_byte_rate', 3)] },
    { entity: [client('c1')], ops: [set('producer_byte_rate', 4)] },
    { entity: [ip('10.1.1.1')], ops: [set('connection_creation_rate', 5)] },
  ]);
  const values = (exact: [string, string | null][], ofType: string[], strict: boolean) =>
    matchClientQuotas(image.clientQuotas, { exact: new Map(exact), ofType: new Set(ofType), strict }).map((q) => [...q.quotas.values()][0]).sort();
  assert.deepEqual(values([['user', 'alice']], [], false), [1, 2]);
  assert.deepEqual(values([['user', 'alice']], [], true), [1]);
  assert.deepEqual(values([['user', null]], [], false), [3]);
  assert.deepEqual(values([], ['user'], false), [1, 2, 3]);
  assert.deepEqual(values([], ['user'], true), [1, 3]);
  assert.deepEqual(values([['client-id', 'c1']], ['user'], true), [2]);
  assert.deepEqual(values([], [], false), [1, 2, 3, 4, 5]);
  assert.deepEqual(values([], [], true), []);
});
