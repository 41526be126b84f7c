/**
 * The Apache Kafka Java client (kafka-clients 4.4.0) against a real Spool
 * process: Admin create/list/describe/delete, idempotent acks=all produce
 * under every codec with keyed records, headers and explicit timestamps,
 * KafkaConsumer assign + seekToBeginning (no group), offsetsForTimes.
 * Driver: test/interop/java-client/src/ClientDriver.java.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runClientScenario } from './harness.js';
import { javaDriverArgs, javaDriverMissing } from './java-client.js';
import { CODECS, missingToolSkip, runDriver } from './scenario.js';

for (const cluster of [false, true]) {
test(`Java client 4.4.0: admin, idempotent produce in every codec, consume by assignment, offsetsForTimes${cluster ? ', three brokers' : ''}`, { timeout: 120_000 }, async (t) => {
  const missing = javaDriverMissing();
  const skip = missingToolSkip(missing === undefined, missing ?? '');
  if (skip !== undefined) return t.skip(skip);
  const client = await runClientScenario({
    client: 'java-client',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec, path) => runDriver('java', javaDriverArgs(['run']), spec, path),
    delete: (spec, path) => runDriver('java', javaDriverArgs(['delete']), spec, path),
  }, { cluster });
  assert.equal(client, 'kafka-clients 4.4.0');
});
}
