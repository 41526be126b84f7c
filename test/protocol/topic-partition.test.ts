/**
 * The one topic-partition key (src/protocol/topic-partition.ts): Kafka's
 * TopicPartition.toString, `topic-partition`, read back exactly even when the
 * topic name or topic id itself contains '-' (issue 9: four key formats).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTopicPartitionKey, topicPartitionKey } from '../../src/protocol/topic-partition.js';

test('topicPartitionKey prints topic-partition and reads back for names and ids with dashes', () => {
  assert.equal(topicPartitionKey({ topic: 'orders', partition: 3 }), 'orders-3');
  for (const tp of [
    { topic: 'a', partition: 0 },
    { topic: 'my-topic-7', partition: 12 },
    { topic: '__consumer_offsets', partition: 49 },
    { topic: 'AAECAwQFBg-ICQoLDA0ODw', partition: 2 },
  ]) {
    assert.deepEqual(parseTopicPartitionKey(topicPartitionKey(tp)), tp);
  }
  assert.notEqual(topicPartitionKey({ topic: 'a-1', partition: 2 }), topicPartitionKey({ topic: 'a', partition: 12 }));
});
