/**
 * Client quotas over TCP against a real node (KIP-546):
 *
 * - ApiVersions advertises AlterClientQuotas (49) at 0-1, as Kafka 4.4.
 * - AlterClientQuotas v0 and v1 set and remove quotas; DescribeClientQuotas
 *   reads them back with Kafka's filter semantics (exact name, default
 *   entity, any name, strict); validateOnly changes nothing; an invalid
 *   value is INVALID_REQUEST with Kafka's message for that entity only.
 * - The quotas are in the metadata log: a node restarted on the same
 *   directory describes them as before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { AlterClientQuotas } from '../../src/protocol/schemas/49-alter-client-quotas.js';
import { DescribeClientQuotas } from '../../src/protocol/schemas/48-describe-client-quotas.js';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { WireClient, call } from './wire-client.js';

const EXACT = 0;
const DEFAULT = 1;
const ANY = 2;

type Entity = { entityType: string; entityName: string | null }[];

const alter = (client: WireClient, version: number, entries: { entity: Entity; ops: { key: string; value: number; remove: boolean }[] }[], validateOnly = false) =>
  call(client, AlterClientQuotas, version, { entries, validateOnly });

async function describe(client: WireClient, components: { entityType: string; matchType: number; match: string | null }[], strict = false) {
  const response = await call(client, DescribeClientQuotas, 1, { components, strict });
  assert.equal(response.errorCode, ErrorCode.NONE, response.errorMessage ?? '');
  return (response.entries ?? [])
    .map((entry) => `${entry.entity.map((e) => `${e.entityType}=${e.entityName}`).join(',')}: ${entry.values.map((v) => `${v.key}=${v.value}`).join(',')}`)
    .sort();
}

async function startNode(dir: string) {
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  return { running, client: await WireClient.connect(running.bootstrapServers) };
}

test('AlterClientQuotas sets quotas that DescribeClientQuotas reads back, and they survive a restart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-client-quotas-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let { running, client } = await startNode(dir);

  const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
  const key49 = versions.apiKeys.find((key) => key.apiKey === 49);
  assert.deepEqual([key49?.minVersion, key49?.maxVersion], [0, 1]);

  const set = await alter(client, 1, [
    { entity: [{ entityType: 'client-id', entityName: 'c1' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] },
    { entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'consumer_byte_rate', value: 2048, remove: false }] },
    { entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: 'c1' }], ops: [{ key: 'request_percentage', value: 50, remove: false }] },
    { entity: [{ entityType: 'user', entityName: 'bob' }], ops: [{ key: 'producer_byte_rate', value: 1.5, remove: false }] },
  ]);
  assert.deepEqual(set.entries.map((e) => [e.errorCode, e.errorMessage]), [[0, null], [0, null], [0, null], [ErrorCode.INVALID_REQUEST, 'producer_byte_rate cannot be a fractional value.']]);

  const validated = await alter(client, 0, [{ entity: [{ entityType: 'client-id', entityName: 'c2' }], ops: [{ key: 'producer_byte_rate', value: 10, remove: false }] }], true);
  assert.equal(validated.entries[0]!.errorCode, ErrorCode.NONE);

  assert.deepEqual(await describe(client, []), ['client-id=c1,user=alice: request_percentage=50', 'client-id=c1: producer_byte_rate=1024', 'user=null: consumer_byte_rate=2048']);
  assert.deepEqual(await describe(client, [{ entityType: 'client-id', matchType: EXACT, match: 'c1' }], true), ['client-id=c1: producer_byte_rate=1024']);
  assert.deepEqual(await describe(client, [{ entityType: 'user', matchType: DEFAULT, match: null }]), ['user=null: consumer_byte_rate=2048']);
  assert.deepEqual(await describe(client, [{ entityType: 'user', matchType: ANY, match: null }]), ['client-id=c1,user=alice: request_percentage=50', 'user=null: consumer_byte_rate=2048']);

  client.close();
  await running.stop();
  ({ running, client } = await startNode(dir));
  t.after(async () => {
    client.close();
    await running.stop();
  });
  await running.broker.metadata.whenReady();
  assert.deepEqual(await describe(client, [{ entityType: 'client-id', matchType: ANY, match: null }], true), ['client-id=c1: producer_byte_rate=1024']);

  const removed = await alter(client, 1, [{ entity: [{ entityType: 'client-id', entityName: 'c1' }], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }]);
  assert.equal(removed.entries[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(await describe(client, [{ entityType: 'client-id', matchType: ANY, match: null }], true), []);
});
