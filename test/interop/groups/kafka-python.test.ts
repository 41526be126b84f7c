/**
 * kafka-python (Debian's python3-kafka) group members against a real Spool
 * process: the group scenario (group-scenario.ts) with the range assignor.
 */
import { test } from 'node:test';
import { kafkaPythonClient } from './group-clients.js';
import { runGroupScenarios } from './group-scenario.js';

test('kafka-python: classic group (range): idle exactly once, kill -9 failover, resume from commits, two groups', { concurrency: true }, async (t) => {
  await runGroupScenarios(t, [kafkaPythonClient('range')]);
});
