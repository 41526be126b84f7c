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
import { test } from 'node:test';
import { CONFLUENT_SHARE, FRANZ_SHARE, clientSkipReason } from './share-driver.js';
import { lockTimeoutRedelivery, splitOnePartition } from './share-scenarios.js';

for (const client of [FRANZ_SHARE, CONFLUENT_SHARE]) {
  for (const target of ['spool', 'kafka'] as const) {
    test(`${client.name} on ${target}: three share consumers split one partition, each record accepted once; the poison record is archived at the delivery limit`, { timeout: 240_000 }, async (t) => {
      const skip = clientSkipReason(client, target);
      if (skip !== undefined) return t.skip(skip);
      await splitOnePartition(client, target);
    });

    test(`${client.name} on ${target}: records a consumer holds without acknowledging go to another consumer once their lock times out`, { timeout: 240_000 }, async (t) => {
      const skip = clientSkipReason(client, target);
      if (skip !== undefined) return t.skip(skip);
      await lockTimeoutRedelivery(client, target);
    });
  }
}
