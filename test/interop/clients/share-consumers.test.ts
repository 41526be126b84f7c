/**
 * Share groups (KIP-932) with franz-go's share consumer (kgo.ShareGroup,
 * franz-go v1.22.3, test/interop/go/share/main.go) and librdkafka's
 * (confluent-kafka-python 2.16.1 / librdkafka 2.16.0 ShareConsumer from PyPI,
 * test/interop/python/share_driver.py), each against Spool and against
 * Apache Kafka 4.4 with the same assertions: the two scenarios of
 * share-scenarios.ts that the Java client runs too
 * (java-share-consumer.test.ts).
 *
 * Both clients expose the delivery count (Record.DeliveryCount,
 * Message.delivery_count) and per-partition acknowledgement results
 * (ShareAckCallback, commit_sync's dict), so nothing of the Java test's two
 * scenarios is dropped. The Java driver produces and sets the group's
 * share.auto.offset.reset to earliest (Admin.incrementalAlterConfigs on the
 * GROUP resource) for every client.
 */
import { describe, test } from 'node:test';
import { CONFLUENT_SHARE, FRANZ_SHARE, clientSkipReason } from './share-driver.js';
import { lockTimeoutRedelivery, splitOnePartition } from './share-scenarios.js';

const SCENARIOS = [
  { name: 'three share consumers split one partition, each record accepted once; the poison record is archived at the delivery limit', run: splitOnePartition },
  { name: 'records a consumer holds without acknowledging go to another consumer once their lock times out', run: lockTimeoutRedelivery },
] as const;

// Each scenario runs on Spool and on Kafka at once (each on a broker of its own): most of a run is waiting on the
// clients' polls and the acquisition locks, so the pair takes about as long as its slower half.
for (const client of [FRANZ_SHARE, CONFLUENT_SHARE]) {
  for (const scenario of SCENARIOS) {
    describe(`${client.name}: ${scenario.name}`, { concurrency: true }, () => {
      for (const target of ['spool', 'kafka'] as const) {
        test(`on ${target}`, { timeout: 240_000 }, async (t) => {
          const skip = clientSkipReason(client, target);
          if (skip !== undefined) return t.skip(skip);
          await scenario.run(client, target);
        });
      }
    });
  }
}
