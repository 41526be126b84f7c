/**
 * confluent-kafka-python against a real Spool process, twice: on Debian's
 * python3-confluent-kafka (librdkafka 2.0.2) and on confluent-kafka from PyPI
 * (the venv of test/interop/groups/ci-setup.sh; its wheel bundles a current
 * librdkafka, 2.16 at the pin). Each: AdminClient create/list/describe/delete,
 * idempotent produce under every codec with headers and explicit timestamps,
 * consume by assignment from the beginning, offsets_for_times.
 * Driver: test/interop/python/confluent_driver.py.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runClientScenario } from './harness.js';
import { DEBIAN_PYTHON, PYPI_PYTHON, pythonHas, runPythonDriver } from './python.js';
import { CODECS, missingToolSkip } from './scenario.js';

const SCENARIO = 'admin, idempotent produce in every codec, consume by assignment, offsets by timestamp';

async function confluentScenario(client: string, python: string, cluster: boolean): Promise<string> {
  return runClientScenario({
    client,
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec, path) => runPythonDriver('confluent_driver.py', spec, path, { python }),
    delete: (spec, path) => runPythonDriver('confluent_driver.py', spec, path, { python }),
  }, { cluster });
}

/** Not yet understood, so not run (docs/SKIPPED.md): librdkafka 2.0's driver hung past the test's timeout in one three-broker CI run. */
const DEBIAN_THREE_BROKERS_SKIP = 'librdkafka 2.0 (Debian) hung once in CI against three brokers; skipped until understood';

for (const cluster of [false, true]) {
const shape = cluster ? ', three brokers' : '';

test(`confluent-kafka-python (Debian, librdkafka 2.0): ${SCENARIO}${shape}`, { timeout: 120_000, skip: cluster ? DEBIAN_THREE_BROKERS_SKIP : false }, async (t) => {
  const skip = missingToolSkip(pythonHas(['confluent_kafka']), 'python3-confluent-kafka not installed: run test/interop/python/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const client = await confluentScenario('confluent-kafka-python', DEBIAN_PYTHON, cluster);
  assert.match(client, /^confluent-kafka-python .*librdkafka 2\.0\./);
});

test(`confluent-kafka-python (PyPI, current librdkafka): ${SCENARIO}${shape}`, { timeout: 120_000 }, async (t) => {
  const skip = missingToolSkip(pythonHas(['confluent_kafka'], PYPI_PYTHON), `${PYPI_PYTHON} cannot import confluent_kafka: run test/interop/groups/ci-setup.sh`);
  if (skip !== undefined) return t.skip(skip);
  const client = await confluentScenario('confluent-kafka-python-pypi', PYPI_PYTHON, cluster);
  t.diagnostic(client);
  assert.match(client, /^confluent-kafka-python 2\.\d+\.\d+, librdkafka 2\.(1[5-9]|[2-9]\d)\./);
});
}
