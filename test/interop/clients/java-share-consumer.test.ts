/**
 * Share groups (KIP-932) with the Java client's KafkaShareConsumer
 * (kafka-clients 4.4.0, test/interop/java-client/src/ShareDriver.java),
 * against Spool and against Apache Kafka 4.4 with the same assertions:
 *
 * - Several consumers share one partition: every record is delivered and
 *   acknowledged exactly once, by more than one consumer; the poison record,
 *   released by whoever gets it, comes back with a growing delivery count
 *   until the delivery limit (group.share.delivery.count.limit, 5) archives
 *   it, while the other records keep flowing; a record produced after it
 *   was archived is delivered, and the poison record is not again.
 * - A consumer that holds records without acknowledging them loses them
 *   when their acquisition lock runs out (group.share.record.lock.duration.ms,
 *   lowered to 3 s here): they are delivered to another consumer with
 *   delivery count 2, and every record reaches that consumer once.
 *
 * - Spool only: kill -9 of the broker while two consumers work, and a
 *   restart on the same data: no record whose acceptance the broker
 *   confirmed (commitSync without error) is delivered again, and every
 *   record, including those produced after the restart, is delivered.
 *
 * Share groups start at the latest offset (share.auto.offset.reset); each
 * test sets the group's to earliest first, with Admin.incrementalAlterConfigs
 * on the GROUP resource, as a Kafka user does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startSpool, type SpoolProcess } from './spool-process.js';
import { Driver, LOCK_CONFIG, deliveries, prepareTopic, runToEnd, skipReason, startTarget, timeline } from './share-driver.js';

const DELIVERY_COUNT_LIMIT = 5;
const RECORD_COUNT = 100;
const POISON = '13';

for (const target of ['spool', 'kafka'] as const) {
  test(`${target}: three share consumers split one partition, each record acknowledged once; the poison record is archived at the delivery limit`, { timeout: 240_000 }, async (t) => {
    const skip = skipReason(target);
    if (skip !== undefined) return t.skip(skip);
    const broker = await startTarget(target);
    const consumers: Driver[] = [];
    try {
      const topic = 'share-split';
      const group = 'share-split-group';
      await prepareTopic(broker, topic, group);
      for (const name of ['c1', 'c2', 'c3']) consumers.push(new Driver(['consume', broker.bootstrap, group, topic, name, POISON]));
      await Promise.all(consumers.map((consumer) => consumer.until('subscription', () => consumer.lines.some((line) => line.startsWith('subscribed')))));
      await runToEnd(['produce', broker.bootstrap, topic, '0', String(RECORD_COUNT)]);
      const everyRecordSeen = () => {
        const seen = deliveries(consumers);
        const values = new Set(seen.map((delivery) => delivery.value));
        const poison = seen.filter((delivery) => delivery.value === POISON);
        return values.size === RECORD_COUNT && poison.length >= DELIVERY_COUNT_LIMIT;
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
    } catch (error) {
      throw new Error(`${String(error)}\n${broker.output().slice(-4000)}`);
    } finally {
      await Promise.all(consumers.map((consumer) => consumer.kill()));
      await broker.stop();
    }
  });

  test(`${target}: records a consumer holds without acknowledging go to another consumer once their lock times out`, { timeout: 240_000 }, async (t) => {
    const skip = skipReason(target);
    if (skip !== undefined) return t.skip(skip);
    const broker = await startTarget(target);
    const drivers: Driver[] = [];
    try {
      const topic = 'share-hold';
      const group = 'share-hold-group';
      await prepareTopic(broker, topic, group);
      const holder = new Driver(['hold', broker.bootstrap, group, topic, 'holder']);
      drivers.push(holder);
      await holder.until('subscription', () => holder.lines.some((line) => line.startsWith('subscribed')));
      await runToEnd(['produce', broker.bootstrap, topic, '0', '20']);
      await holder.until('held records', () => deliveries([holder], 'held').length > 0);
      const held = deliveries([holder], 'held');
      const consumer = new Driver(['consume', broker.bootstrap, group, topic, 'taker', '-']);
      drivers.push(consumer);
      await consumer.until('all 20 records', () => new Set(deliveries([consumer]).map((delivery) => delivery.value)).size === 20);
      await consumer.stop();
      const taken = deliveries([consumer]);
      for (const record of held) {
        const redelivered = taken.find((delivery) => delivery.value === record.value);
        assert.ok(redelivered !== undefined, `held value ${record.value} never reached the other consumer`);
        assert.equal(redelivered.deliveryCount, 2, `held value ${record.value}`);
      }
      // The holder's client may have acquired more than it handed to the application (it fetches ahead), and those
      // come back the same way; no record is delivered to the taker more than once.
      for (const delivery of taken) assert.ok(delivery.deliveryCount === 1 || delivery.deliveryCount === 2, `value ${delivery.value}: ${delivery.deliveryCount}`);
      assert.equal(taken.length, 20, `the taker got ${JSON.stringify(taken)}`);
    } catch (error) {
      throw new Error(`${String(error)}\n${broker.output().slice(-4000)}`);
    } finally {
      await Promise.all(drivers.map((driver) => driver.kill()));
      await broker.stop();
    }
  });
}

test('spool: kill -9 and restart: no record whose acceptance was confirmed is delivered again, and every record is delivered', { timeout: 300_000 }, async (t) => {
  const skip = skipReason('spool');
  if (skip !== undefined) return t.skip(skip);
  const dir = mkdtempSync(join(tmpdir(), 'spool-share-restart-'));
  const port = await freePort();
  let spool: SpoolProcess = await startSpool({ dir, port, overrides: LOCK_CONFIG });
  const bootstrap = spool.bootstrap;
  const consumers: Driver[] = [];
  const total = 400;
  try {
    const topic = 'share-restart';
    const group = 'share-restart-group';
    await prepareTopic({ bootstrap, output: () => spool.output(), stop: () => spool.stop() }, topic, group);
    for (const name of ['r1', 'r2']) consumers.push(new Driver(['consume', bootstrap, group, topic, name, '-']));
    await Promise.all(consumers.map((consumer) => consumer.until('subscription', () => consumer.lines.some((line) => line.startsWith('subscribed')))));
    await runToEnd(['produce', bootstrap, topic, '0', '300']);
    const ackedValues = () => new Set(consumers.flatMap((consumer) => consumer.lines.filter((line) => line.startsWith('acked ')).flatMap((line) => line.split(' ').slice(2))));
    await consumers[0]!.until('100 confirmed acceptances', () => ackedValues().size >= 100);
    await spool.kill9();
    spool = await startSpool({ dir, port, overrides: LOCK_CONFIG });
    await runToEnd(['produce', bootstrap, topic, '300', String(total - 300)]);
    const deliveredValues = () => new Set(deliveries(consumers).map((delivery) => delivery.value));
    await consumers[0]!.until(`all ${total} records`, () => deliveredValues().size === total);
    await Promise.all(consumers.map((consumer) => consumer.stop()));

    // In arrival order: once a value's acceptance was confirmed, no consumer is given it again.
    const confirmed = new Set<string>();
    for (const line of timeline) {
      const [kind, name, ...rest] = line.split(' ');
      if (name !== 'r1' && name !== 'r2') continue;
      if (kind === 'acked') for (const value of rest) confirmed.add(value);
      if (kind === 'rec') assert.ok(!confirmed.has(rest[2]!), `value ${rest[2]} delivered again after its acceptance was confirmed: ${line}`);
    }
    for (let value = 0; value < total; value++) assert.ok(deliveredValues().has(String(value)), `value ${value} never delivered`);
  } catch (error) {
    throw new Error(`${String(error)}\n${spool.output().slice(-4000)}`);
  } finally {
    await Promise.all(consumers.map((consumer) => consumer.kill()));
    await spool.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
