/**
 * confluent-kafka-python (Debian's python3-confluent-kafka over librdkafka)
 * against a real Spool process: AdminClient create/list/describe/delete,
 * idempotent produce under every codec with headers and explicit timestamps,
 * consume by assignment from the beginning, offsets_for_times.
 * Driver: test/interop/python/confluent_driver.py.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runClientScenario } from './harness.js';
import { pythonHas, runPythonDriver } from './python.js';
import { CODECS, missingToolSkip } from './scenario.js';

test('confluent-kafka-python (librdkafka): admin, idempotent produce in every codec, consume by assignment, offsets by timestamp', { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(pythonHas(['confluent_kafka']), 'python3-confluent-kafka not installed: run test/interop/python/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'confluent-kafka-python',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec, path) => runPythonDriver('confluent_driver.py', spec, path),
    delete: (spec, path) => runPythonDriver('confluent_driver.py', spec, path),
  });
  assert.match(client, /^confluent-kafka-python .*librdkafka/);
});
