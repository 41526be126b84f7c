/**
 * The two share-group scenarios every share-consumer client runs, against
 * Spool and against Apache Kafka 4.4 with the same assertions
 * (java-share-consumer.test.ts, share-consumers.test.ts):
 *
 * - `splitOnePartition`: three consumers share one partition (the records are
 *   produced once the coordinator reports all three assigned it). Every
 *   record is delivered and accepted exactly once, by more than one consumer;
 *   the poison record, released by whoever gets it, comes back with the
 *   delivery counts 1, 2, 3, 4, 5 until the delivery limit
 *   (group.share.delivery.count.limit, 5) archives it, while the other
 *   records keep flowing; once the member that got the most records is
 *   stopped, a record produced after the poison one was archived reaches
 *   another member, and the poison record is not delivered again. No
 *   acknowledgement is answered with an error.
 * - `lockTimeoutRedelivery`: a consumer that holds records without
 *   acknowledging them loses them when their acquisition lock runs out
 *   (group.share.record.lock.duration.ms, lowered to 3 s): another consumer
 *   is given them with delivery count 2, and every record reaches that
 *   consumer once.
 */
import assert from 'node:assert/strict';
import { Driver, deliveries, prepareTopic, runToEnd, startTarget, untilAssigned, type ShareClient, type Target } from './share-driver.js';

const RECORD_COUNT = 100;
const POISON = '13';
const DELIVERY_COUNT_LIMIT = 5;
const HELD_RECORD_COUNT = 20;

export async function splitOnePartition(client: ShareClient, target: Target): Promise<void> {
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
      return values.size === RECORD_COUNT && seen.some((delivery) => delivery.value === POISON && delivery.deliveryCount === DELIVERY_COUNT_LIMIT);
    };
    await consumers[0]!.until('every record and the poison record at its limit', everyRecordSeen);
    // One consumer may acquire every record in one fetch, which is its right. Stopping the one that got the most
    // makes the sharing visible whatever the timing: the record produced next, after the poison record was
    // archived, must reach another member, and the poison record does not come back.
    const busiest = consumers.reduce((most, consumer) => (deliveries([consumer]).length > deliveries([most]).length ? consumer : most));
    await busiest.stop();
    const others = consumers.filter((consumer) => consumer !== busiest);
    await runToEnd(['produce', broker.bootstrap, topic, String(RECORD_COUNT), '1']);
    await others[0]!.until('the record after the poison one, at another member', () => deliveries(others).some((delivery) => delivery.value === String(RECORD_COUNT)));
    await Promise.all(others.map((consumer) => consumer.stop()));

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
}

export async function lockTimeoutRedelivery(client: ShareClient, target: Target): Promise<void> {
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
}
