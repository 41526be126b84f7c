/**
 * kafkajs 2.x group members (kafkajs-member.ts, one process each) against a
 * real Spool process: the group scenario (group-scenario.ts) with kafkajs's
 * classic protocol and its round-robin assigner.
 */
import { test } from 'node:test';
import { kafkajsClient } from './group-clients.js';
import { runGroupScenarios } from './group-scenario.js';

test('kafkajs: classic group (round robin): idle exactly once, kill -9 failover, resume from commits, two groups', { concurrency: true }, async (t) => {
  await runGroupScenarios(t, [kafkajsClient()]);
});
