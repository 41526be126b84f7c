/**
 * kcat 1.7 (librdkafka, Debian's package) against a real Spool process:
 * idempotent produce under every codec, consume by partition from the
 * beginning, offsets by timestamp (kcat -Q), metadata. Driver:
 * test/interop/kcat/driver.sh. kcat has no admin commands: the topic is
 * auto-created by the producer's metadata request (num.partitions=3) and the
 * delete step only lists and describes it. Run against one node, then
 * against three brokers with the partitions spread over them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCommand, runClientScenario } from './harness.js';
import { CODECS, missingToolSkip, runDriver } from './scenario.js';

const DRIVER = join(fileURLToPath(new URL('../../../../test/interop/kcat/driver.sh', import.meta.url)));

for (const cluster of [false, true]) {
test(`kcat (librdkafka): idempotent produce in every codec, consume by assignment, offsets by timestamp${cluster ? ', three brokers' : ''}`, { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(hasCommand('kcat') && hasCommand('jq'), 'kcat or jq not installed: run test/interop/kcat/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'kcat',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: false, explicitTimestamps: false },
    overrides: ['num.partitions=3'],
    run: (spec, path) => runDriver(DRIVER, [], spec, path),
    delete: (spec, path) => runDriver(DRIVER, [], spec, path),
  }, { cluster });
  assert.match(client, /^kcat .*librdkafka/);
});
}
