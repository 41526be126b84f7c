/**
 * `__cluster_metadata` is the Raft log's topic, never a client topic. Kafka
 * 4.4 refuses to create it (CreateTopics: INVALID_REQUEST, "Creation of
 * internal topic __cluster_metadata is prohibited.", validateOnly too),
 * never auto-creates it (Metadata: UNKNOWN_TOPIC_OR_PARTITION, every time),
 * and, since no such topic exists, answers Produce, Fetch, ListOffsets and
 * DeleteTopics for it with UNKNOWN_TOPIC_OR_PARTITION.
 *
 * Bug pinned: Spool created the topic (a consumer's Metadata request was
 * enough), opened a partition log over the metadata log's own directory, and
 * a DeleteTopics of it followed by a restart lost every topic.
 *
 * The first test runs against startBroker(), or SPOOL_E2E_BOOTSTRAP (it
 * passes against Kafka 4.4); the restart test needs a Spool it can restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { ListOffsets } from '../../src/protocol/schemas/02-list-offsets.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { DeleteTopics } from '../../src/protocol/schemas/20-delete-topics.js';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { startTestBroker } from '../client/broker-fixture.js';
import { WireClient, call } from './wire-client.js';

const METADATA_TOPIC = '__cluster_metadata';
const PROHIBITED = 'Creation of internal topic __cluster_metadata is prohibited.';

const createIt = (client: WireClient, version: number, validateOnly = false) =>
  call(client, CreateTopics, version, { topics: [{ name: METADATA_TOPIC, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000, validateOnly });

const autoCreateIt = (client: WireClient, version: number) =>
  call(client, Metadata, version, { topics: [{ name: METADATA_TOPIC }], allowAutoTopicCreation: true });

test('__cluster_metadata cannot be created, auto-created, produced to, fetched, listed or deleted, as in Kafka 4.4', async () => {
  const broker = await startTestBroker({ 'auto.create.topics.enable': true });
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    for (const [version, validateOnly] of [[7, false], [7, true], [2, false]] as const) {
      const [result] = (await createIt(client, version, validateOnly)).topics;
      assert.deepEqual([result!.name, result!.errorCode, result!.errorMessage], [METADATA_TOPIC, ErrorCode.INVALID_REQUEST, PROHIBITED], `CreateTopics v${version}`);
    }
    for (const version of [4, 12, 13, 12]) {
      const [topic] = (await autoCreateIt(client, version)).topics;
      assert.deepEqual([topic!.name, topic!.errorCode, topic!.isInternal, topic!.partitions], [METADATA_TOPIC, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, false, []], `Metadata v${version}`);
    }
    const all = await call(client, Metadata, 12, { topics: null });
    assert.ok(!all.topics.some((t) => t.name === METADATA_TOPIC));

    const records = buildBatch({ records: [{ value: 'x' }] });
    const produced = await call(client, Produce, 9, { acks: 1, timeoutMs: 30_000, topicData: [{ name: METADATA_TOPIC, partitionData: [{ index: 0, records }] }] });
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const fetched = await call(client, Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20,
      topics: [{ topic: METADATA_TOPIC, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }],
    });
    assert.equal(fetched.responses[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const listed = await call(client, ListOffsets, 7, { replicaId: -1, topics: [{ name: METADATA_TOPIC, partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
    assert.equal(listed.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);

    const byName = await call(client, DeleteTopics, 6, { topics: [{ name: METADATA_TOPIC, topicId: ZERO_UUID }], timeoutMs: 30_000 });
    assert.deepEqual([byName.responses[0]!.errorCode, byName.responses[0]!.errorMessage], [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.']);
    const byNameV5 = await call(client, DeleteTopics, 5, { topicNames: [METADATA_TOPIC], timeoutMs: 30_000 });
    assert.equal(byNameV5.responses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  } finally {
    client.close();
    await broker.stop();
  }
});

test('after trying to create, auto-create and delete __cluster_metadata, a restart still has every topic and record', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metadata-topic-'));
  const start = () => startBroker({ config: { 'log.dirs': dir, 'auto.create.topics.enable': true }, logger: silentLogger });
  try {
    const first = await start();
    const client = await WireClient.connect(first.bootstrapServers);
    await call(client, CreateTopics, 7, { topics: [{ name: 'orders', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000 });
    const produced = await call(client, Produce, 9, { acks: -1, timeoutMs: 30_000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: buildBatch({ records: [{ value: 'kept' }] }) }] }] });
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    await createIt(client, 7);
    await autoCreateIt(client, 12);
    await call(client, DeleteTopics, 6, { topics: [{ name: METADATA_TOPIC, topicId: ZERO_UUID }], timeoutMs: 30_000 });
    client.close();
    await first.stop();

    const second = await start();
    const again = await WireClient.connect(second.bootstrapServers);
    try {
      const metadata = await call(again, Metadata, 12, { topics: null });
      assert.deepEqual(metadata.topics.map((t) => [t.name, t.errorCode]), [['orders', ErrorCode.NONE]]);
      const listed = await call(again, ListOffsets, 7, { replicaId: -1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
      assert.equal(listed.topics[0]!.partitions[0]!.offset, 1);
    } finally {
      again.close();
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
