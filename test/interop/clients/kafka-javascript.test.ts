/**
 * @confluentinc/kafka-javascript (npm, Node; librdkafka 2.15 built from the
 * package's sources by test/interop/kafka-javascript/ci-setup.sh) against a
 * real Spool process: AdminClient create/list/describe/delete, idempotent
 * produce under every codec with headers and explicit timestamps, consume by
 * assignment from the beginning, offsetsForTimes.
 * Driver: test/interop/kafka-javascript/driver.ts, as its own process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KAFKA_JAVASCRIPT_DRIVER, kafkaJavascriptMissing } from '../kafka-javascript/addon.js';
import { runClientScenario } from './harness.js';
import { CODECS, runDriver } from './scenario.js';

/** Not yet understood, so not run (docs/SKIPPED.md): the driver died from a signal in one of about ten three-broker runs. */
const THREE_BROKERS_SKIP = 'the three-broker driver died from a signal once in CI (librdkafka in the addon); skipped until understood';

for (const cluster of [false, true]) {
test(`@confluentinc/kafka-javascript (librdkafka 2.15): admin, idempotent produce in every codec, consume by assignment, offsets by timestamp${cluster ? ', three brokers' : ''}`, { timeout: 120_000, skip: cluster ? THREE_BROKERS_SKIP : false }, async (t) => {
  const skip = kafkaJavascriptMissing();
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'kafka-javascript',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec, path) => runDriver(process.execPath, [KAFKA_JAVASCRIPT_DRIVER], spec, path),
    delete: (spec, path) => runDriver(process.execPath, [KAFKA_JAVASCRIPT_DRIVER], spec, path),
  }, { cluster });
  t.diagnostic(client);
  assert.match(client, /^@confluentinc\/kafka-javascript 1\.(1\d|[2-9]\d)\.\d+, librdkafka 2\.(1[5-9]|[2-9]\d)\./);
});
}
