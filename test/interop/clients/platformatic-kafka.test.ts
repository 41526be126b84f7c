/**
 * @platformatic/kafka 1.x against a real Spool process: Admin create/list/
 * metadata/delete, idempotent produce (acks=all) with keyed records, headers
 * and explicit timestamps under every codec it has on this Node version,
 * Consumer.fetch by partition from offset 0 (its group-less Fetch v17 call,
 * by topic id), Consumer.listOffsets by timestamp.
 *
 * Its zstd needs node:zlib's zstd (Node >= 22.15); on older Node the codec is
 * reported unavailable and left out. Its default partitioner is murmur2
 * without Java's sign mask; compatibilityPartitioner is the Java one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  Admin, Consumer, Producer, compatibilityPartitioner, compressionsAlgorithms, stringSerializers,
  type RecordsBatch,
} from '@platformatic/kafka';
import { runClientScenario } from './harness.js';
import { CODECS, type ConsumedRecord, type DriverRun, type Spec } from './scenario.js';

/** The package's version (its exports map hides package.json from import). */
const VERSION = (JSON.parse(readFileSync(new URL('../../../../node_modules/@platformatic/kafka/package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** Generous timeouts: the suite runs on a loaded 2-core CI machine. */
const BASE = { clientId: 'spool-interop', retries: 3, connectTimeout: 10_000, timeout: 30_000 } as const;

async function run(spec: Spec): Promise<DriverRun> {
  const admin = new Admin({ ...BASE, bootstrapBrokers: [spec.bootstrap] });
  try {
    const created = await admin.createTopics({ topics: [spec.topic], partitions: spec.partitions, replicas: 1 });
    assert.equal(created[0]?.name, spec.topic);
  } finally {
    await admin.close();
  }
  const produceStartMs = Date.now();
  const producer = new Producer({
    ...BASE, bootstrapBrokers: [spec.bootstrap], serializers: stringSerializers,
    idempotent: spec.idempotent, acks: -1, partitioner: compatibilityPartitioner,
  });
  try {
    for (const batch of spec.batches) {
      await producer.send({
        compression: batch.codec,
        messages: batch.records.map((record) => ({
          topic: spec.topic,
          key: record.key,
          value: record.value,
          headers: new Map(record.headers),
          timestamp: BigInt(record.timestamp!),
        })),
      });
    }
  } finally {
    await producer.close();
  }
  const produceEndMs = Date.now();
  return { client: `@platformatic/kafka ${VERSION}`, ...(await readBack(spec)), produceStartMs, produceEndMs };
}

async function readBack(spec: Spec): Promise<Pick<DriverRun, 'consumed' | 'offsetsForTimes'>> {
  const consumer = new Consumer({ ...BASE, bootstrapBrokers: [spec.bootstrap], groupId: 'interop-unused' });
  try {
    const metadata = await consumer.metadata({ topics: [spec.topic] });
    const topicId = metadata.topics.get(spec.topic)!.id;
    // Each partition is fetched from its own leader, as the client's consumer does (on a cluster they differ).
    const leaders = new Map<number, number[]>();
    metadata.topics.get(spec.topic)!.partitions.forEach((p, partition) => leaders.set(p.leader, [...(leaders.get(p.leader) ?? []), partition]));
    const nextOffset = new Map<number, bigint>();
    for (let partition = 0; partition < spec.partitions; partition++) nextOffset.set(partition, 0n);
    const consumed: ConsumedRecord[] = [];
    for (let round = 0; round < 50 && consumed.length < spec.expectedCount; round++) {
      const responses = await Promise.all([...leaders].map(([node, partitions]) => consumer.fetch({
        node,
        maxWaitTime: 200,
        topics: [{
          topicId,
          partitions: partitions.map((partition) => ({ partition, fetchOffset: nextOffset.get(partition)!, currentLeaderEpoch: -1, lastFetchedEpoch: -1, partitionMaxBytes: 1 << 20 })),
        }],
      })));
      for (const partition of responses.flatMap((response) => response.responses.flatMap((topic) => topic.partitions))) {
        assert.equal(partition.errorCode, 0, `fetch error in partition ${partition.partitionIndex}`);
        for (const batch of partition.records ?? []) {
          for (const record of toConsumed(partition.partitionIndex, batch)) {
            if (BigInt(record.offset) < nextOffset.get(record.partition)!) continue;
            consumed.push(record);
            nextOffset.set(record.partition, BigInt(record.offset) + 1n);
          }
        }
      }
    }
    const offsetsForTimes: DriverRun['offsetsForTimes'] = [];
    for (const timestamp of spec.timestampQueries) {
      const offsets = await consumer.listOffsets({ topics: [spec.topic], timestamp: BigInt(timestamp) });
      offsets.get(spec.topic)!.forEach((offset, partition) => offsetsForTimes.push({ timestamp, partition, offset: Number(offset) }));
    }
    return { consumed, offsetsForTimes };
  } finally {
    await consumer.close();
  }
}

function toConsumed(partition: number, batch: RecordsBatch): ConsumedRecord[] {
  return batch.records.map((record) => ({
    partition,
    offset: Number(batch.firstOffset) + record.offsetDelta,
    key: record.key?.toString() ?? null,
    value: record.value?.toString() ?? null,
    headers: record.headers.map(([name, value]) => [name?.toString() ?? '', value?.toString() ?? '']),
    timestamp: Number(batch.firstTimestamp + record.timestampDelta),
    timestampType: (batch.attributes & 0x08) === 0 ? 'CreateTime' : 'LogAppendTime',
  }));
}

/**
 * The topics listed once `deleted` is gone from the answer. The controller answers the delete once committed and
 * brokers apply it asynchronously, as Kafka's do: on a cluster, the broker asked next may list it a moment longer.
 */
async function listedAfterDelete(admin: Admin, deleted: string): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const topics = await admin.listTopics();
    if (!topics.includes(deleted) || attempt === LIST_ATTEMPTS_MAX) return topics;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const LIST_ATTEMPTS_MAX = 100;

async function deleteTopic(spec: Spec): Promise<{ topicsBefore: string[]; describedPartitions: number; topicsAfter: string[] }> {
  const admin = new Admin({ ...BASE, bootstrapBrokers: [spec.bootstrap] });
  try {
    const topicsBefore = await admin.listTopics();
    const metadata = await admin.metadata({ topics: [spec.topic] });
    await admin.deleteTopics({ topics: [spec.topic] });
    return { topicsBefore, describedPartitions: metadata.topics.get(spec.topic)!.partitionsCount, topicsAfter: await listedAfterDelete(admin, spec.topic) };
  } finally {
    await admin.close();
  }
}

for (const cluster of [false, true]) {
test(`@platformatic/kafka: admin, idempotent produce in every available codec, fetch by partition, offsets by timestamp${cluster ? ', three brokers' : ''}`, { timeout: 120_000 }, async () => {
  const codecs = CODECS.filter((codec) => compressionsAlgorithms[codec].available);
  assert.ok(codecs.length >= 4, `codecs available: ${codecs.join(',')}`);
  const client = await runClientScenario({
    client: 'platformatic-kafka',
    capabilities: { codecs, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec) => run(spec),
    delete: (spec) => deleteTopic(spec),
  }, { cluster });
  assert.match(client, /^@platformatic\/kafka 1\./);
});
}
