/**
 * confluent-kafka-python group members against a real Spool process, the
 * group scenario (group-scenario.ts) on one broker at once for:
 *  - Debian's python3-confluent-kafka (librdkafka 2.0), classic protocol, with
 *    partition.assignment.strategy=range (eager) and cooperative-sticky
 *    (incremental rebalances);
 *  - confluent-kafka from PyPI (pinned in ci-setup.sh, a current librdkafka)
 *    with classic range and with group.protocol=consumer (KIP-848).
 */
import { test } from 'node:test';
import { confluentClient } from './group-clients.js';
import { runGroupScenarios } from './group-scenario.js';

test('confluent-kafka-python: classic range and cooperative-sticky (librdkafka 2.0); classic range and KIP-848 (PyPI)', { concurrency: true }, async (t) => {
  await runGroupScenarios(t, [
    confluentClient('classic', 'range', false),
    confluentClient('classic', 'cooperative-sticky', false),
    confluentClient('classic', 'range', true),
    confluentClient('consumer', null, true),
  ]);
});
