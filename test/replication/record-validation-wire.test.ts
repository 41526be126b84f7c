/**
 * Proves, over TCP with Produce v11, that a broker answers each CRC-valid
 * but broken batch of corrupt-batches.ts (every codec) with Kafka's error
 * code and recordErrors, and that a valid batch is fetched back unchanged.
 *
 * The same test runs against a real Apache Kafka 4.4 broker with
 * SPOOL_E2E_BOOTSTRAP=host:port (test/interop/kafka/kafka.sh start); the
 * cases where Kafka 4.4 stores a batch no consumer can read (kafkaDiffers)
 * then expect Kafka's answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { WireClient, call } from '../server/wire-client.js';
import { startTestBroker, uniqueTopic } from '../client/broker-fixture.js';
import { CORRUPT_CASES } from './corrupt-batches.js';

const AGAINST_KAFKA = (process.env.SPOOL_E2E_BOOTSTRAP ?? '') !== '';
async function createTopic(client: WireClient, name: string, compacted: boolean): Promise<void> {
  const configs = compacted ? [{ name: 'cleanup.policy', value: 'compact' }] : [];
  const response = await call(client, CreateTopics, 7, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs }],
    timeoutMs: 30_000,
    validateOnly: false,
  });
  assert.equal(response.topics[0]!.errorCode, ErrorCode.NONE, `create ${name}`);
}

async function produce(client: WireClient, topic: string, records: Buffer) {
  for (let attempt = 0; ; attempt++) {
    const response = await call(client, Produce, 11, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 10_000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
    });
    const partition = response.responses[0]!.partitionResponses[0]!;
    // A just-created topic may not have its leader yet on a real broker.
    if (partition.errorCode !== ErrorCode.NOT_LEADER_OR_FOLLOWER && partition.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return partition;
    if (attempt > 50) return partition;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A message with the topic as TOPIC and every number as N, so runs and brokers compare. */
function normalized(text: string | null, topic: string): string | null {
  return text === null ? null : text.replaceAll(topic, 'TOPIC').replace(/(?<![A-Za-z])-?\d+/g, 'N');
}

test('broken records inside CRC-valid batches get Kafka\'s error code and recordErrors, for every codec', async (t) => {
  const broker = await startTestBroker();
  t.after(() => broker.stop());
  const client = await WireClient.connect(broker.bootstrapServers);
  t.after(() => client.close());
  const topics = { plain: uniqueTopic('validate'), compacted: uniqueTopic('validate-compact') };
  await createTopic(client, topics.plain, false);
  await createTopic(client, topics.compacted, true);
  const mismatches: string[] = [];
  for (const corrupt of CORRUPT_CASES) {
    for (const codec of corrupt.codecs) {
      const batch = corrupt.build(codec, Date.now());
      const answer = await produce(client, corrupt.compacted === true ? topics.compacted : topics.plain, batch);
      const differs = AGAINST_KAFKA && corrupt.kafkaDiffers?.codecs.includes(codec) === true;
      const expected = differs ? corrupt.kafkaDiffers!.errorCode : corrupt.errorCode;
      const indexes = answer.recordErrors.map((error) => error.batchIndex);
      const label = `${corrupt.name} (${codec})`;
      if (answer.errorCode !== expected) mismatches.push(`${label}: error ${answer.errorCode}, expected ${expected} [${answer.errorMessage}]`);
      else if (JSON.stringify(indexes) !== JSON.stringify(corrupt.recordErrors ?? [])) mismatches.push(`${label}: recordErrors ${JSON.stringify(indexes)}`);
      else if (corrupt.messages !== undefined) {
        const topic = corrupt.compacted === true ? topics.compacted : topics.plain;
        const messages = [answer.errorMessage, ...answer.recordErrors.map((error) => error.batchIndexErrorMessage)].map((text) => normalized(text, topic));
        if (JSON.stringify(messages) !== JSON.stringify(corrupt.messages)) mismatches.push(`${label}: messages ${JSON.stringify(messages)}`);
      }
    }
  }
  assert.deepEqual(mismatches, []);
});
