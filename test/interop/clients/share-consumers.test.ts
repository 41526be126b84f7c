/**
 * Share groups (KIP-932) with franz-go's share consumer (kgo.ShareGroup,
 * franz-go v1.22.3, test/interop/go/share/main.go) and librdkafka's
 * (confluent-kafka-python 2.16.1 / librdkafka 2.16.0 ShareConsumer from PyPI,
 * test/interop/python/share_driver.py), each against Spool and against
 * Apache Kafka 4.4 with the same assertions, the two scenarios of
 * java-share-consumer.test.ts:
 *
 * - Three consumers share one partition (the records are produced once the
 *   coordinator reports all three assigned it): every record is delivered and
 *   accepted exactly once, by more than one consumer; the poison record,
 *   released by whoever gets it, comes back with the delivery counts
 *   1, 2, 3, 4, 5 until the delivery limit (group.share.delivery.count.limit,
 *   5) archives it, while the other records keep flowing; a record produced
 *   after it was archived is delivered, and the poison record is not again.
 *   No acknowledgement is answered with an error.
 * - A consumer that holds records without acknowledging them loses them
 *   when their acquisition lock runs out (group.share.record.lock.duration.ms,
 *   lowered to 3 s here): another consumer is given them with delivery
 *   count 2, and every record reaches that consumer once.
 *
 * Both clients expose the delivery count (Record.DeliveryCount,
 * Message.delivery_count) and per-partition acknowledgement results
 * (ShareAckCallback, commit_sync's dict), so nothing of the Java test's two
 * scenarios is dropped. The Java driver produces and sets the group's
 * share.auto.offset.reset to earliest (Admin.incrementalAlterConfigs on the
 * GROUP resource) for every client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFLUENT_SHARE, Driver, FRANZ_SHARE, clientSkipReason, deliveries, prepareTopic, runToEnd, startTarget, untilAssigned } from './share-driver.js';

const RECORD_COUNT = 100;
const POISON = '13';
const HELD_RECORD_COUNT = 20;

for (const client of [FRANZ_SHARE, CONFLUENT_SHARE]) {
  for (const target of ['spool', 'kafka'] as const) {
    test(`${client.name} on ${target}: three share consumers split one partition, each record accepted once; the poison record is archived at the delivery limit`, { timeout: 240_000 }, async (t) => {
      const skip = clientSkipReason(client, target);
      if (skip !== undefined) return t.skip(skip);
      const broker = await startTarget(target);
      const consumers: Driver[] = [];
      try {
        const topic = 'share-split';
        const group = 'share-split-group';
        await prepareTopic(broker, topic, group);
        for (const name of ['c1', 'c2', 'c3']) consumers.push(new Driver(['consume', broker.bootstrap, group, topic, name, POISON], { client }));
        await Promise.all(consumers.map((consumer) => consumer.until('subscription', () => consumer.lines.some((line) => line.startsWith('subscribed')))));
        await untilAssigned(broker, { group, topic, count: consumers.length });
        await runToEnd(['produce', broker.bootstrap, topic, '0', String(RECORD_COUNT)]);
        const everyRecordSeen = () => {
          const seen = deliveries(consumers);
          const values = new Set(seen.map((delivery) => delivery.value));
          const poison = seen.filter((delivery) => delivery.value === POISON);
          return values.size === RECORD_COUNT && poison.some((delivery) => delivery.deliveryCount === 5);
        };
        await consumers[0]!.until('every record and the poison record at its limit', everyRecordSeen);
        // After the poison record was archived, a later record still flows and the poison record does not come back.
        await runToEnd(['produce', broker.bootstrap, topic, String(RECORD_COUNT), '1']);
        await consumers[0]!.until('the record after the poison one', () => deliveries(consumers).some((delivery) => delivery.value === String(RECORD_COUNT)));
        await Promise.all(consumers.map((consumer) => consumer.stop()));

        const seen = deliveries(consumers);
        for (let value = 0; value <= RECORD_COUNT; value++) {
          const ofValue = seen.filter((delivery) => delivery.value === String(value));
          if (String(value) === POISON) {
            assert.deepEqual(ofValue.map((delivery) => delivery.deliveryCount).sort(), [1, 2, 3, 4, 5], `poison deliveries: ${JSON.stringify(ofValue)}`);
          } else {
            assert.equal(ofValue.length, 1, `value ${value} delivered ${ofValue.length} times: ${JSON.stringify(ofValue)}`);
            assert.equal(ofValue[0]!.deliveryCount, 1);
          }
        }
        const receivers = new Set(seen.map((delivery) => delivery.consumer));
        assert.ok(receivers.size >= 2, `only ${[...receivers].join(', ')} received records`);
        for (const consumer of consumers) assert.deepEqual(consumer.lines.filter((line) => line.startsWith('commit ')), [], 'acknowledgement errors');
        const accepted = consumers.flatMap((consumer) => consumer.lines.filter((line) => line.startsWith('acked ')).flatMap((line) => line.split(' ').slice(2)));
        assert.equal(accepted.length, RECORD_COUNT, 'every record but the poison one accepted once');
        assert.equal(new Set(accepted).size, RECORD_COUNT);
        assert.ok(!accepted.includes(POISON));
      } catch (error) {
        throw new Error(`${String(error)}\n${consumers.map((consumer) => consumer.stderr.slice(-2000)).join('\n')}\n${broker.output().slice(-4000)}`);
      } finally {
        await Promise.all(consumers.map((consumer) => consumer.kill()));
        await broker.stop();
      }
    });

    test(`${client.name} on ${target}: records a consumer holds without acknowledging go to another consumer once their lock times out`, { timeout: 240_000 }, async (t) => {
      const skip = clientSkipReason(client, target);
      if (skip !== undefined) return t.skip(skip);
      const broker = await startTarget(target);
      const drivers: Driver[] = [];
      try {
        const topic = 'share-hold';
        const group = 'share-hold-group';
        await prepareTopic(broker, topic, group);
        const holder = new Driver(['hold', broker.bootstrap, group, topic, 'holder'], { client });
        drivers.push(holder);
        await holder.until('subscription', () => holder.lines.some((line) => line.startsWith('subscribed')));
        await runToEnd(['produce', broker.bootstrap, topic, '0', String(HELD_RECORD_COUNT)]);
        await holder.until('held records', () => deliveries([holder], 'held').length > 0);
        const held = deliveries([holder], 'held');
        const consumer = new Driver(['consume', broker.bootstrap, group, topic, 'taker', '-'], { client });
        drivers.push(consumer);
        await consumer.until(`all ${HELD_RECORD_COUNT} records`, () => new Set(deliveries([consumer]).map((delivery) => delivery.value)).size === HELD_RECORD_COUNT);
        await consumer.stop();
        const taken = deliveries([consumer]);
        for (const record of held) {
          assert.equal(record.deliveryCount, 1, `held value ${record.value}`);
          const redelivered = taken.find((delivery) => delivery.value === record.value);
          assert.ok(redelivered !== undefined, `held value ${record.value} never reached the other consumer`);
          assert.equal(redelivered.deliveryCount, 2, `held value ${record.value}`);
        }
        // The holder's client may have acquired more than it handed to the application (it fetches ahead), and those
        // come back the same way; no record is delivered to the taker more than once.
        for (const delivery of taken) assert.ok(delivery.deliveryCount === 1 || delivery.deliveryCount === 2, `value ${delivery.value}: ${delivery.deliveryCount}`);
        assert.equal(taken.length, HELD_RECORD_COUNT, `the taker got ${JSON.stringify(taken)}`);
        assert.deepEqual(consumer.lines.filter((line) => line.startsWith('commit ')), [], 'acknowledgement errors');
      } catch (error) {
        throw new Error(`${String(error)}\n${drivers.map((driver) => driver.stderr.slice(-2000)).join('\n')}\n${broker.output().slice(-4000)}`);
      } finally {
        await Promise.all(drivers.map((driver) => driver.kill()));
        await broker.stop();
      }
    });
  }
}
