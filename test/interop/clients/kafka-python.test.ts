/**
 * kafka-python (Debian's python3-kafka, 2.0.x) against a real Spool process:
 * KafkaAdminClient create/list/describe/delete, produce (acks=all; this
 * version has no idempotent producer) under every codec with headers and
 * explicit timestamps, consume by assignment from the beginning,
 * offsets_for_times. Driver: test/interop/python/kafka_python_driver.py.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runClientScenario } from './harness.js';
import { pythonHas, runPythonDriver } from './python.js';
import { CODECS, missingToolSkip } from './scenario.js';

for (const cluster of [false, true]) {
test(`kafka-python: admin, produce in every codec, consume by assignment, offsets by timestamp${cluster ? ', three brokers' : ''}`, { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(pythonHas(['kafka', 'snappy', 'lz4', 'zstandard']), 'python3-kafka (with python3-snappy, -lz4, -zstandard) not installed: run test/interop/python/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'kafka-python',
    capabilities: { codecs: CODECS, idempotent: false, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec, path) => runPythonDriver('kafka_python_driver.py', spec, path),
    delete: (spec, path) => runPythonDriver('kafka_python_driver.py', spec, path),
  }, { cluster });
  assert.match(client, /^kafka-python /);
});
}
