/**
 * kafkajs 2.x against a real Spool process: admin create/list/describe/
 * delete, idempotent produce (acks=all) under every codec with keyed records,
 * headers and explicit timestamps, fetch from the beginning by partition,
 * fetchTopicOffsetsByTimestamp.
 *
 * Codecs: gzip is built in; snappy and lz4 come from kafkajs-snappy and
 * kafkajs-lz4; kafkajs ships no zstd, so a codec over zstd-napi is plugged in
 * the same way. kafkajs has no consumer without a group (no assign/seek), so
 * records are read with kafkajs's own Broker.fetch (the request builder and
 * record-batch decoder its consumer uses), through its internal Cluster.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi';
import { runClientScenario } from './harness.js';
import { until } from '../cluster/until.js';
import { CODECS, type Codec, type ConsumedRecord, type DriverRun, type Header, type Spec } from './scenario.js';

const require = createRequire(import.meta.url);
const { CompressionCodecs, CompressionTypes, Kafka, logLevel } = kafkajs;
type CompressionTypes = kafkajs.CompressionTypes;
const SnappyCodec = require('kafkajs-snappy') as () => unknown;
const LZ4Codec = require('kafkajs-lz4') as new () => { codec: () => unknown };
/** kafkajs internals (no types): the cluster its consumer fetches through. */
const Cluster = require('kafkajs/src/cluster') as new (options: Record<string, unknown>) => KafkajsCluster;
const socketFactory = require('kafkajs/src/network/socketFactory') as () => unknown;
const { createLogger, LEVELS } = require('kafkajs/src/loggers') as { createLogger(options: Record<string, unknown>): unknown; LEVELS: { NOTHING: number } };

interface KafkajsMessage { offset: string; key: Buffer | null; value: Buffer | null; timestamp: string; headers: Record<string, Buffer | Buffer[] | undefined> }
interface KafkajsBroker {
  fetch(request: Record<string, unknown>): Promise<{ responses: { partitions: { partition: number; errorCode: number; messages: KafkajsMessage[] }[] }[] }>;
}
interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(options: { nodeId: string }): Promise<KafkajsBroker>;
  fetchTopicsOffset(topics: { topic: string; fromTimestamp: number; partitions: { partition: number }[] }[]): Promise<{ partitions: { partition: number; offset: string }[] }[]>;
}

/** kafkajs's 1 s connection timeout is too short on a loaded 2-core CI machine running the whole suite. */
const TIMEOUTS = { connectionTimeout: 10_000, requestTimeout: 30_000 } as const;

const KAFKAJS_CODEC: Record<Codec, CompressionTypes> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

function installCodecs(): void {
  CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec as never;
  CompressionCodecs[CompressionTypes.LZ4] = new LZ4Codec().codec as never;
  CompressionCodecs[CompressionTypes.ZSTD] = (() => ({
    async compress(encoder: { buffer: Buffer }) { return zstdCompress(encoder.buffer); },
    async decompress(buffer: Buffer) { return zstdDecompress(buffer); },
  })) as never;
}

async function run(spec: Spec): Promise<DriverRun> {
  const kafka = new Kafka({ clientId: 'spool-interop', brokers: [spec.bootstrap], logLevel: logLevel.NOTHING, ...TIMEOUTS });
  const admin = kafka.admin();
  await admin.connect();
  try {
    assert.equal(await admin.createTopics({ topics: [{ topic: spec.topic, numPartitions: spec.partitions }], waitForLeaders: true }), true);
    const produceStartMs = Date.now();
    const producer = kafka.producer({ idempotent: spec.idempotent, maxInFlightRequests: 1 });
    await producer.connect();
    for (const batch of spec.batches) {
      await producer.send({
        topic: spec.topic,
        acks: -1,
        compression: KAFKAJS_CODEC[batch.codec],
        messages: batch.records.map((record) => ({
          key: record.key,
          value: record.value,
          headers: Object.fromEntries(record.headers),
          timestamp: String(record.timestamp),
        })),
      });
    }
    await producer.disconnect();
    const produceEndMs = Date.now();
    const { consumed, offsetsForTimes } = await readBack(spec);
    return { client: 'kafkajs ' + (require('kafkajs/package.json') as { version: string }).version, consumed, offsetsForTimes, produceStartMs, produceEndMs };
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads every partition from offset 0 until the spec's record count is
 * reached, then lists offsets by timestamp with the ListOffsets call kafkajs
 * makes (admin.fetchTopicOffsetsByTimestamp answers the end offset where
 * Kafka answers -1, so the raw answer is taken from its cluster).
 */
async function readBack(spec: Spec): Promise<Pick<DriverRun, 'consumed' | 'offsetsForTimes'>> {
  const cluster = new Cluster({ logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined }), brokers: [spec.bootstrap], socketFactory: socketFactory(), clientId: 'spool-interop-fetch', ...TIMEOUTS, retry: { retries: 3 } });
  await cluster.connect();
  try {
    await cluster.addTargetTopic(spec.topic);
    const consumed: ConsumedRecord[] = [];
    const nextOffset = new Map<number, number>();
    for (let partition = 0; partition < spec.partitions; partition++) nextOffset.set(partition, 0);
    // Each leader is asked for its own partitions, as kafkajs's consumer does (on a cluster they lead on different brokers).
    const byLeader = Object.entries(cluster.findLeaderForPartitions(spec.topic, [...nextOffset.keys()]));
    const leaders = await Promise.all(byLeader.map(async ([nodeId, partitions]) => ({ broker: await cluster.findBroker({ nodeId }), partitions })));
    for (let round = 0; round < 50 && consumed.length < spec.expectedCount; round++) {
      const responses = await Promise.all(leaders.map(({ broker, partitions }) => broker.fetch({
        isolationLevel: 0,
        maxWaitTime: 200,
        topics: [{ topic: spec.topic, partitions: partitions.map((partition) => ({ partition, fetchOffset: String(nextOffset.get(partition)), maxBytes: 1 << 20 })) }],
      })));
      for (const partition of responses.flatMap((response) => response.responses.flatMap((topic) => topic.partitions))) {
        assert.equal(partition.errorCode, 0, `fetch error in partition ${partition.partition}`);
        for (const message of partition.messages) {
          const offset = Number(message.offset);
          if (offset < nextOffset.get(partition.partition)!) continue;
          consumed.push(toConsumed(partition.partition, message));
          nextOffset.set(partition.partition, offset + 1);
        }
      }
    }
    const offsetsForTimes: DriverRun['offsetsForTimes'] = [];
    const partitions = [...nextOffset.keys()].map((partition) => ({ partition }));
    for (const timestamp of spec.timestampQueries) {
      const [topic] = await cluster.fetchTopicsOffset([{ topic: spec.topic, fromTimestamp: timestamp, partitions }]);
      for (const answer of topic!.partitions) offsetsForTimes.push({ timestamp, partition: answer.partition, offset: Number(answer.offset) });
    }
    return { consumed, offsetsForTimes };
  } finally {
    await cluster.disconnect();
  }
}

function toConsumed(partition: number, message: KafkajsMessage): ConsumedRecord {
  const headers: Header[] = [];
  for (const [name, value] of Object.entries(message.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) headers.push([name, one?.toString() ?? '']);
  }
  return {
    partition,
    offset: Number(message.offset),
    key: message.key?.toString() ?? null,
    value: message.value?.toString() ?? null,
    headers,
    timestamp: Number(message.timestamp),
  };
}

async function deleteTopic(spec: Spec): Promise<{ topicsBefore: string[]; describedPartitions: number; topicsAfter: string[] }> {
  const kafka = new Kafka({ clientId: 'spool-interop', brokers: [spec.bootstrap], logLevel: logLevel.NOTHING, ...TIMEOUTS });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topicsBefore = await admin.listTopics();
    const metadata = await admin.fetchTopicMetadata({ topics: [spec.topic] });
    await admin.deleteTopics({ topics: [spec.topic] });
    // DeleteTopics is answered once the controller committed the deletion; another broker of a cluster drops the
    // topic from its Metadata answers when its copy of the metadata log reaches that commit, a moment later (Kafka
    // too), and kafkajs's listTopics asks any broker.
    const topicsAfter = await until(`${spec.topic} gone from listTopics`, async () => {
      const topics = await admin.listTopics();
      return topics.includes(spec.topic) ? null : topics;
    }, { waitMs: 10_000, pollMs: 100 });
    return { topicsBefore, describedPartitions: metadata.topics[0]!.partitions.length, topicsAfter };
  } finally {
    await admin.disconnect();
  }
}

for (const cluster of [false, true]) {
test(`kafkajs: admin, idempotent produce in every codec, fetch by partition, offsets by timestamp${cluster ? ', three brokers' : ''}`, { timeout: 120_000 }, async () => {
  installCodecs();
  const client = await runClientScenario({
    client: 'kafkajs',
    capabilities: { codecs: CODECS, idempotent: true, perRecordHeaders: true, explicitTimestamps: true },
    run: (spec) => run(spec),
    delete: (spec) => deleteTopic(spec),
  }, { cluster });
  assert.match(client, /^kafkajs 2\./);
});
}

