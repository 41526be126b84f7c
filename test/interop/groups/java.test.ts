/**
 * The Apache Kafka Java consumer (kafka-clients 4.4.0) as group members
 * against a real Spool process: the group scenario (group-scenario.ts) with
 * group.protocol=classic (its default assignors: range, eager; and
 * cooperative-sticky, incremental) and with group.protocol=consumer (KIP-848,
 * the broker's default assignor), on one broker at once.
 */
import { test } from 'node:test';
import { javaClient } from './group-clients.js';
import { runGroupScenarios } from './group-scenario.js';

test('Java consumer 4.4.0: classic group (range, cooperative-sticky) and KIP-848 consumer group', { concurrency: true }, async (t) => {
  await runGroupScenarios(t, [javaClient('classic', null), javaClient('classic', 'cooperative-sticky'), javaClient('consumer', null)]);
});
