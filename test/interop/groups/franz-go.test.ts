/**
 * franz-go (kgo.ConsumerGroup) group members against a real Spool process:
 * the group scenario (group-scenario.ts) with the classic protocol (the range
 * balancer, eager; its default, cooperative-sticky) and with KIP-848
 * (kgo.ServerSideBalancer: server assignor "uniform"), on one broker at once.
 */
import { test } from 'node:test';
import { franzClient } from './group-clients.js';
import { runGroupScenarios } from './group-scenario.js';

test('franz-go: classic group (range, cooperative-sticky) and KIP-848 consumer group', { concurrency: true }, async (t) => {
  await runGroupScenarios(t, [franzClient('classic', 'range'), franzClient('classic', 'cooperative-sticky'), franzClient('consumer', null)]);
});
