/**
 * @confluentinc/kafka-javascript (librdkafka 2.15) group members against a
 * real Spool process (Kafka 4.4 with SPOOL_GROUPS_BROKER=kafka): the group
 * scenario (group-scenario.ts) on one broker at once for the classic protocol
 * with partition.assignment.strategy=range and for group.protocol=consumer
 * (KIP-848). Member: kafka-javascript-member.ts.
 */
import { test } from 'node:test';
import { kafkaJavascriptClient } from './group-clients.js';
import { runGroupScenarios } from './group-scenario.js';

test('@confluentinc/kafka-javascript: classic range and KIP-848', { concurrency: true }, async (t) => {
  await runGroupScenarios(t, [kafkaJavascriptClient('classic', 'range'), kafkaJavascriptClient('consumer', null)]);
});
