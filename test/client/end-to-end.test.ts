/**
 * End to end against a running broker (startBroker; see broker-fixture.ts):
 * the producer writes keyed records with headers under every compression
 * type with idempotence on, and the consumer reads them back from the
 * beginning with the same keys, values, headers and timestamps, each on
 * the partition Kafka's murmur2 partitioner picks, in per-key order, with
 * contiguous offsets per partition. Also: keyless records spread by the
 * sticky partitioner, acks=0/1, admin topic lifecycle and configs,
 * ListOffsets by spec and by timestamp, DeleteRecords, and seeking.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerRecord } from '../../src/client/consumer.js';
import { partitionForKey } from '../../src/client/partitioner.js';
import { Producer, type RecordMetadata } from '../../src/client/producer.js';
import type { CompressionName } from '../../src/protocol/records/compression.js';
import { startTestBroker, uniqueTopic, type TestBroker } from './broker-fixture.js';

let broker: TestBroker;
let admin: Admin;

before(async () => {
  broker = await startTestBroker();
  admin = new Admin({ bootstrapServers: broker.bootstrapServers });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

/** Polls until `count` records arrived (or a generous number of empty polls passed). */
async function consumeAll(consumer: Consumer, count: number): Promise<ConsumerRecord[]> {
  const records: ConsumerRecord[] = [];
  for (let emptyPolls = 0; records.length < count && emptyPolls < 20;) {
    const batch = await consumer.poll(1000);
    if (batch.length === 0) emptyPolls++;
    records.push(...batch);
  }
  return records;
}

const COMPRESSIONS: readonly CompressionName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const RECORDS = 120;
const KEYS = 12;

for (const compression of COMPRESSIONS) {
  test(`keyed records with headers round-trip under ${compression} compression, idempotent, in per-key order`, async () => {
    const topic = uniqueTopic(`e2e-${compression}`);
    await admin.createTopics([{ name: topic, numPartitions: 3, replicationFactor: 1 }]);
    const producer = new Producer({ bootstrapServers: broker.bootstrapServers, compression, lingerMs: 5 });
    assert.equal(producer.settings.idempotence, true);
    const sent: Promise<RecordMetadata>[] = [];
    for (let i = 0; i < RECORDS; i++) {
      sent.push(producer.send({ topic, key: `key-${i % KEYS}`, value: `value-${i}`, headers: [{ key: 'index', value: String(i) }, { key: 'codec', value: compression }] }));
    }
    const metadata = await Promise.all(sent);
    await producer.close();

    for (let i = 0; i < RECORDS; i++) assert.equal(metadata[i]!.partition, partitionForKey(Buffer.from(`key-${i % KEYS}`), 3), `record ${i}`);
    for (let partition = 0; partition < 3; partition++) {
      const offsets = metadata.filter((m) => m.partition === partition).map((m) => m.offset);
      assert.deepEqual(offsets, offsets.map((_, index) => index), `offsets of partition ${partition} are 0..n-1 in send order`);
    }

    const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, autoOffsetReset: 'earliest' });
    consumer.assign([0, 1, 2].map((partition) => ({ topic, partition })));
    const records = await consumeAll(consumer, RECORDS);
    await consumer.close();
    assert.equal(records.length, RECORDS);
    for (const record of records) {
      const index = Number(record.headers.find((h) => h.key === 'index')!.value!.toString());
      assert.equal(record.key!.toString(), `key-${index % KEYS}`);
      assert.equal(record.value!.toString(), `value-${index}`);
      assert.equal(record.headers.find((h) => h.key === 'codec')!.value!.toString(), compression);
      assert.equal(record.partition, metadata[index]!.partition);
      assert.equal(record.offset, metadata[index]!.offset);
      assert.equal(record.timestamp, metadata[index]!.timestamp);
    }
    for (let key = 0; key < KEYS; key++) {
      const indexes = records.filter((r) => r.key!.toString() === `key-${key}`).map((r) => Number(r.value!.toString().slice(6)));
      assert.deepEqual(indexes, [...indexes].sort((a, b) => a - b), `key-${key} keeps its order`);
    }
    await admin.deleteTopics([topic]);
  });
}

test('keyless records go to valid partitions and every record is acknowledged once', async () => {
  const topic = uniqueTopic('e2e-sticky');
  await admin.createTopics([{ name: topic, numPartitions: 4, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: broker.bootstrapServers, batchSize: 200 });
  const metadata = await Promise.all(Array.from({ length: 60 }, (_, i) => producer.send({ topic, value: `v${i}` })));
  await producer.close();
  const seen = new Set(metadata.map((m) => `${m.partition}:${m.offset}`));
  assert.equal(seen.size, 60);
  for (const m of metadata) assert.ok(m.partition >= 0 && m.partition < 4);
  const ends = await admin.listOffsets([0, 1, 2, 3].map((partition) => ({ topic, partition, spec: 'latest' as const })));
  assert.equal(ends.reduce((sum, e) => sum + e.offset, 0), 60);
  await admin.deleteTopics([topic]);
});

test('records placed by the user\'s partitioner do not count towards the sticky partitioner\'s batch', async () => {
  // Kafka's built-in partitioner counts only the records it places. Before, every keyless record counted, so large
  // records placed by the user's partitioner made the sticky partition switch after a few small records.
  const topic = uniqueTopic('e2e-sticky-custom');
  await admin.createTopics([{ name: topic, numPartitions: 16, replicationFactor: 1 }]);
  const placedValue = 'placed-' + 'x'.repeat(300);
  const producer = new Producer({
    bootstrapServers: broker.bootstrapServers,
    batchSize: 200,
    partitioner: ({ value }) => (value?.toString().startsWith('placed') ? 0 : null),
  });
  await producer.send({ topic, value: placedValue });
  const sent: Promise<RecordMetadata>[] = [];
  for (let round = 0; round < 3; round++) {
    sent.push(producer.send({ topic, value: `s${round}` }));
    for (let i = 0; i < 5; i++) sent.push(producer.send({ topic, value: placedValue }));
  }
  const metadata = await Promise.all(sent);
  await producer.close();
  const sticky = metadata.filter((_, index) => index % 6 === 0);
  const placed = metadata.filter((_, index) => index % 6 !== 0);
  for (const m of placed) assert.equal(m.partition, 0);
  // Three small records are well under batch.size (200 bytes): the sticky partitioner keeps one partition for them.
  assert.equal(new Set(sticky.map((m) => m.partition)).size, 1);
  await admin.deleteTopics([topic]);
});

test('acks=1 returns offsets and acks=0 returns -1, both records readable', async () => {
  const topic = uniqueTopic('e2e-acks');
  await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
  const one = new Producer({ bootstrapServers: broker.bootstrapServers, acks: 1 });
  assert.equal(one.settings.idempotence, false);
  assert.equal((await one.send({ topic, value: 'a' })).offset, 0);
  await one.close();
  const zero = new Producer({ bootstrapServers: broker.bootstrapServers, acks: 0 });
  assert.equal((await zero.send({ topic, value: 'b' })).offset, -1);
  await zero.close();
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, autoOffsetReset: 'earliest' });
  consumer.assign([{ topic, partition: 0 }]);
  const records = await consumeAll(consumer, 2);
  await consumer.close();
  assert.deepEqual(records.map((r) => r.value!.toString()), ['a', 'b']);
  await admin.deleteTopics([topic]);
});

test('admin: create, describe, list, configs, partitions, offsets by timestamp, delete records, delete topic', async () => {
  const topic = uniqueTopic('e2e-admin');
  const created = await admin.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1, configs: { 'retention.ms': '3600000' } }]);
  assert.equal(created[0]!.name, topic);
  assert.ok((await admin.listTopics()).includes(topic));
  const [description] = await admin.describeTopics([topic]);
  assert.equal(description!.partitions.length, 2);
  for (const p of description!.partitions) {
    assert.ok(p.leader >= 0);
    assert.deepEqual(p.replicas, [p.leader]);
    assert.deepEqual(p.isr, [p.leader]);
  }
  await assert.rejects(admin.createTopics([{ name: topic, numPartitions: 1 }]), /TOPIC_ALREADY_EXISTS/);

  const configs = await admin.describeConfigs([{ type: 'topic', name: topic }]);
  assert.equal(configs[0]!.configs.find((c) => c.name === 'retention.ms')!.value, '3600000');
  await admin.alterConfigs([{ type: 'topic', name: topic, ops: [{ name: 'retention.ms', op: 'set', value: '7200000' }] }]);
  const altered = await admin.describeConfigs([{ type: 'topic', name: topic }]);
  assert.equal(altered[0]!.configs.find((c) => c.name === 'retention.ms')!.value, '7200000');
  await assert.rejects(admin.alterConfigs([{ type: 'topic', name: topic, ops: [{ name: 'retention.ms', op: 'set', value: 'soon' }] }]), /INVALID_CONFIG/);

  const producer = new Producer({ bootstrapServers: broker.bootstrapServers });
  const base = 1_700_000_000_000;
  for (let i = 0; i < 5; i++) await producer.send({ topic, partition: 0, value: `r${i}`, timestamp: base + i * 1000 });
  await producer.close();
  const [earliest, latest, atTime, maxTimestamp] = await admin.listOffsets([
    { topic, partition: 0, spec: 'earliest' },
    { topic, partition: 0, spec: 'latest' },
    { topic, partition: 0, spec: base + 2500 },
    { topic, partition: 0, spec: 'max-timestamp' },
  ]);
  assert.equal(earliest!.offset, 0);
  assert.equal(latest!.offset, 5);
  assert.equal(atTime!.offset, 3);
  assert.equal(atTime!.timestamp, base + 3000);
  assert.equal(maxTimestamp!.offset, 4);

  const [deleted] = await admin.deleteRecords([{ topic, partition: 0, offset: 2 }]);
  assert.equal(deleted!.lowWatermark, 2);
  assert.equal((await admin.listOffsets([{ topic, partition: 0, spec: 'earliest' }]))[0]!.offset, 2);

  await admin.createPartitions({ [topic]: 4 });
  assert.equal((await admin.describeTopics([topic]))[0]!.partitions.length, 4);

  const cluster = await admin.describeCluster();
  assert.ok(cluster.brokers.length >= 1);

  await admin.deleteTopics([topic]);
  assert.ok(!(await admin.listTopics()).includes(topic));
});

test('consumer: seek, seekToEnd, position, and reset after an out-of-range offset', async () => {
  const topic = uniqueTopic('e2e-seek');
  await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: broker.bootstrapServers });
  await Promise.all(Array.from({ length: 10 }, (_, i) => producer.send({ topic, value: `m${i}` })));
  await producer.close();
  const tp = { topic, partition: 0 };
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, autoOffsetReset: 'earliest', maxPollRecords: 3 });
  consumer.assign([tp]);
  consumer.seek(tp, 6);
  const fromSix = await consumeAll(consumer, 4);
  assert.deepEqual(fromSix.map((r) => r.offset), [6, 7, 8, 9]);
  assert.equal(await consumer.position(tp), 10);
  consumer.seekToBeginning([tp]);
  assert.equal(await consumer.position(tp), 0);
  const firstPoll = await consumer.poll(5000);
  assert.ok(firstPoll.length <= 3, 'max.poll.records');
  consumer.seekToEnd([tp]);
  assert.equal(await consumer.position(tp), 10);
  consumer.seek(tp, 1000);
  const reset = await consumer.poll(5000);
  assert.equal(reset[0]?.offset, 0, 'auto.offset.reset=earliest after OFFSET_OUT_OF_RANGE');
  await consumer.close();
  await admin.deleteTopics([topic]);
});
