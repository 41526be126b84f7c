/**
 * Share groups (KIP-932) with the Java client's KafkaShareConsumer
 * (kafka-clients 4.4.0, test/interop/java-client/src/ShareDriver.java),
 * against Spool and against Apache Kafka 4.4 with the same assertions:
 *
 * - The two scenarios of share-scenarios.ts (three consumers splitting one
 *   partition with a poison record archived at the delivery limit; records
 *   held past their acquisition lock going to another consumer), which
 *   franz-go and librdkafka run too (share-consumers.test.ts).
 * - Spool only: kill -9 of the broker while two consumers work, and a
 *   restart on the same data: no record whose acceptance the broker
 *   confirmed (commitSync without error) is delivered again, and every
 *   record, including those produced after the restart, is delivered.
 *
 * Share groups start at the latest offset (share.auto.offset.reset); each
 * test sets the group's to earliest first, with Admin.incrementalAlterConfigs
 * on the GROUP resource, as a Kafka user does.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startSpool, type SpoolProcess } from './spool-process.js';
import { Driver, JAVA_SHARE, LOCK_CONFIG, deliveries, prepareTopic, runToEnd, skipReason, timeline } from './share-driver.js';
import { lockTimeoutRedelivery, splitOnePartition } from './share-scenarios.js';

const SCENARIOS = [
  { name: 'three share consumers split one partition, each record acknowledged once; the poison record is archived at the delivery limit', run: splitOnePartition },
  { name: 'records a consumer holds without acknowledging go to another consumer once their lock times out', run: lockTimeoutRedelivery },
] as const;

// Each scenario runs on Spool and on Kafka at once (each on a broker of its own): most of a run is waiting on the
// consumers' polls and the acquisition locks, so the pair takes about as long as its slower half.
for (const scenario of SCENARIOS) {
  describe(scenario.name, { concurrency: true }, () => {
    for (const target of ['spool', 'kafka'] as const) {
      test(`on ${target}`, { timeout: 240_000 }, async (t) => {
        const skip = skipReason(target);
        if (skip !== undefined) return t.skip(skip);
        await scenario.run(JAVA_SHARE, target);
      });
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
