/**
 * franz-go (Go) against a real Spool process: kadm create/list/describe/
 * delete, idempotent acks=all produce under every codec with keyed records,
 * headers and explicit timestamps, ConsumePartitions from the start (no
 * group), ListOffsets by timestamp (raw kmsg request).
 * Driver: test/interop/go/main.go, built by test/interop/go/ci-setup.sh.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runClientScenario } from './harness.js';
import { CODECS, missingToolSkip, runDriver } from './scenario.js';

const DRIVER = fileURLToPath(new URL('../../../../test/interop/go/bin/franz-driver', import.meta.url));

for (const cluster of [false, true]) {
test(`franz-go: admin, idempotent produce in every codec, consume by partition, offsets by timestamp${cluster ? ', three brokers' : ''}`, { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(existsSync(DRIVER), 'franz-go driver not built: run test/interop/go/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'franz-go',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec, path) => runDriver(DRIVER, [], spec, path),
    delete: (spec, path) => runDriver(DRIVER, [], spec, path),
  }, { cluster });
  assert.match(client, /^franz-go v1\./);
});
}
