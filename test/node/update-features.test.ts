/**
 * Proves UpdateFeatures over the wire on a cluster of one controller and
 * one broker: the request sent to the broker is forwarded to the
 * controller, validateOnly changes nothing, an upgrade becomes a finalized
 * feature in the broker's ApiVersions (what Kafka's describeFeatures and
 * kafka-features.sh describe read), v1 lists each feature with NONE and v2
 * none, a safe downgrade to 0 removes it, and a refused update answers
 * Kafka's top-level INVALID_UPDATE_VERSION message. `spool features
 * upgrade|downgrade|disable` print FeatureCommand's lines for the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/node/cluster.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { UpdateFeatures } from '../../src/protocol/schemas/57-update-features.js';
import { WireClient, call } from '../server/wire-client.js';
import { until } from '../interop/cluster/until.js';
import { spool } from '../cli/cli-io.js';

const finalizedLevel = async (client: WireClient, feature: string) => {
  const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
  return versions.finalizedFeatures.find((f) => f.name === feature)?.maxVersionLevel ?? 0;
};
const featureAt = (client: WireClient, feature: string, level: number) =>
  until(`${feature} finalized at ${level}`, async () => ((await finalizedLevel(client, feature)) === level ? true : null), { waitMs: 10_000, pollMs: 20 });

test('UpdateFeatures sent to a broker upgrades and downgrades group.version as ApiVersions then reports it', async (t) => {
  const cluster = await startCluster({ controllers: 1, brokers: 1 });
  const client = await WireClient.connect(cluster.bootstrapServers);
  t.after(async () => { client.close(); await cluster.stop(); });

  const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
  assert.deepEqual(versions.apiKeys.find((k) => k.apiKey === UpdateFeatures.key), { apiKey: 57, minVersion: 0, maxVersion: 2 });
  assert.equal(await finalizedLevel(client, 'group.version'), 0);

  const group = (level: number, upgradeType: number) => [{ feature: 'group.version', maxVersionLevel: level, allowDowngrade: false, upgradeType }];
  const checked = await call(client, UpdateFeatures, 2, { timeoutMs: 30_000, featureUpdates: group(1, 1), validateOnly: true });
  assert.equal(checked.errorCode, ErrorCode.NONE);
  assert.equal(await finalizedLevel(client, 'group.version'), 0);

  const upgraded = await call(client, UpdateFeatures, 1, { timeoutMs: 30_000, featureUpdates: group(1, 1), validateOnly: false });
  assert.deepEqual(upgraded.results, [{ feature: 'group.version', errorCode: ErrorCode.NONE, errorMessage: null }]);
  await featureAt(client, 'group.version', 1);

  const refused = await call(client, UpdateFeatures, 2, { timeoutMs: 30_000, featureUpdates: group(0, 1), validateOnly: false });
  assert.equal(refused.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
  assert.equal(
    refused.errorMessage,
    "The update failed for all features since the following feature had an error: Invalid update version 0 for feature group.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
  );

  const downgraded = await call(client, UpdateFeatures, 2, { timeoutMs: 30_000, featureUpdates: group(0, 2), validateOnly: false });
  assert.deepEqual([downgraded.errorCode, downgraded.results], [ErrorCode.NONE, []]);
  await featureAt(client, 'group.version', 0);
});

test('spool features upgrade, downgrade --dry-run and disable print kafka-features.sh lines', async (t) => {
  const cluster = await startCluster({ controllers: 1, brokers: 1 });
  const client = await WireClient.connect(cluster.bootstrapServers);
  t.after(async () => { client.close(); await cluster.stop(); });
  const features = (...args: string[]) => spool(['features', '--bootstrap-server', cluster.bootstrapServers, ...args]);

  const dry = await features('upgrade', '--feature', 'group.version=1', '--dry-run');
  assert.deepEqual([dry.code, dry.out], [0, 'group.version can be upgraded to 1.\n']);
  const upgraded = await features('upgrade', '--feature', 'group.version=1');
  assert.deepEqual([upgraded.code, upgraded.out], [0, 'group.version was upgraded to 1.\n']);
  await featureAt(client, 'group.version', 1);

  const refused = await features('upgrade', '--feature', 'share.version=2', '--feature', 'group.version=1');
  assert.equal(refused.code, 1);
  const why = 'The update failed for all features since the following feature had an error: Invalid update version 2 for feature share.version. Local controller 3000 only supports versions 0-1';
  assert.equal(refused.out, `Could not upgrade group.version to 1. ${why}\nCould not upgrade share.version to 2. ${why}\n`);
  assert.match(refused.err, /2 out of 2 operation\(s\) failed\./);

  const disabled = await features('disable', '--feature', 'group.version');
  assert.deepEqual([disabled.code, disabled.out], [0, 'group.version was disabled.\n']);
  await featureAt(client, 'group.version', 0);
});
