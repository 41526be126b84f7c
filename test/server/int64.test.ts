/**
 * Kafka's longs end to end (issue 9, int64), over TCP against startBroker():
 *
 * - Long.MAX_VALUE, -1 and longs beyond 2^53 are accepted as broker configs
 *   from server.properties, --override and startBroker, and as topic and
 *   broker configs by CreateTopics, AlterConfigs and IncrementalAlterConfigs;
 *   DescribeConfigs returns the text that was set. Before, Long.MAX_VALUE
 *   stopped `spool start` ("out of range") and a long beyond 2^53 came back
 *   rounded.
 * - A request int64 beyond 2^53 (a Fetch offset or ListOffsets timestamp of
 *   2^60) is answered with Kafka's error code; before, the decoder refused it
 *   and the connection was closed.
 * - Batches with nanosecond timestamps: refused with INVALID_TIMESTAMP under
 *   CreateTime with the default message.timestamp.after.max.ms, accepted with
 *   Long.MAX_VALUE, as Kafka's LogValidator decides; before, every such batch
 *   was refused as INVALID_RECORD. Accepted ones are stored byte for byte,
 *   found by ListOffsets by timestamp and kept across a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStartProperties } from '../../src/cli/start.js';
import type { CliIo } from '../../src/cli/io.js';
import { realEnv } from '../../src/io/env.js';
import { ConfigResourceType } from '../../src/metadata/delta.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { BATCH_FIELD, writeCrc } from '../../src/protocol/records/batch.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { ListOffsets } from '../../src/protocol/schemas/02-list-offsets.js';
import { DeleteRecords } from '../../src/protocol/schemas/21-delete-records.js';
import { DescribeConfigs } from '../../src/protocol/schemas/32-describe-configs.js';
import { AlterConfigs } from '../../src/protocol/schemas/33-alter-configs.js';
import { IncrementalAlterConfigs } from '../../src/protocol/schemas/44-incremental-alter-configs.js';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { WireClient, call, fetchBody, produceBody } from './wire-client.js';

const LONG_MAX = '9223372036854775807';
const BEYOND_2_53 = '9007199254740993';
async function describe(client: WireClient, resourceType: number, resourceName: string, keys: string[]): Promise<Record<string, string | null>> {
  const response = await call(client, DescribeConfigs, 4, {
    resources: [{ resourceType, resourceName, configurationKeys: keys }],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const result = response.results[0]!;
  assert.equal(result.errorCode, ErrorCode.NONE, result.errorMessage ?? '');
  return Object.fromEntries(result.configs.map((c) => [c.name, c.value]));
}

async function withBroker(t: { after: (fn: () => Promise<void>) => void }, config: Record<string, string | number>): Promise<{ running: RunningBroker; client: WireClient; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-int64-'));
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1, ...config }, logger: silentLogger });
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => {
    client.close();
    await running.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { running, client, dir };
}

async function createTopic(running: RunningBroker, name: string, configs: Record<string, string> = {}): Promise<void> {
  const [created] = await running.broker.controller.createTopics(
    [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([key, value]) => ({ name: key, value })) }],
    { validateOnly: false },
  );
  assert.equal(created!.errorCode, ErrorCode.NONE, created!.errorMessage ?? '');
}

const BROKER_LONGS = {
  'log.retention.ms': LONG_MAX,
  'log.flush.interval.ms': LONG_MAX,
  'log.flush.interval.messages': LONG_MAX,
  'log.retention.check.interval.ms': LONG_MAX,
  'log.segment.delete.delay.ms': LONG_MAX,
  'log.retention.bytes': '-1',
  'connections.max.idle.ms': '-1',
  'log.roll.ms': BEYOND_2_53,
};

test('Long.MAX_VALUE, -1 and longs beyond 2^53 start a broker from server.properties and --override, and are described as set', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-int64-props-'));
  const file = join(dir, 'server.properties');
  const lines = Object.entries(BROKER_LONGS).filter(([name]) => name !== 'log.roll.ms').map(([name, value]) => `${name}=${value}`);
  await writeFile(file, `${lines.join('\n')}\nlog.dirs=${join(dir, 'data')}\n`);
  const io = { env: realEnv } as unknown as CliIo;
  const properties = await loadStartProperties(io, file, [`log.roll.ms=${BEYOND_2_53}`, `log.message.timestamp.after.max.ms=${LONG_MAX}`]);
  const { client } = await withBroker(t, Object.fromEntries(properties));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const described = await describe(client, ConfigResourceType.BROKER, '1', [...Object.keys(BROKER_LONGS), 'log.message.timestamp.after.max.ms', 'log.message.timestamp.before.max.ms']);
  assert.deepEqual(described, {
    ...BROKER_LONGS,
    'log.message.timestamp.after.max.ms': LONG_MAX,
    'log.message.timestamp.before.max.ms': LONG_MAX,
  });
});

test('startBroker takes 2**63 for Long.MAX_VALUE; topics inherit it and describe it exactly', async (t) => {
  const { running, client } = await withBroker(t, { 'log.retention.ms': 2 ** 63, 'log.segment.delete.delay.ms': LONG_MAX });
  await createTopic(running, 'inherits');
  const described = await describe(client, ConfigResourceType.TOPIC, 'inherits', ['retention.ms', 'file.delete.delay.ms', 'flush.ms', 'flush.messages']);
  assert.deepEqual(described, { 'retention.ms': LONG_MAX, 'file.delete.delay.ms': LONG_MAX, 'flush.ms': LONG_MAX, 'flush.messages': LONG_MAX });
});

test('CreateTopics, AlterConfigs and IncrementalAlterConfigs accept Long.MAX_VALUE, -1 and longs beyond 2^53; DescribeConfigs returns them', async (t) => {
  const { running, client } = await withBroker(t, {});
  await createTopic(running, 'forever', { 'retention.ms': LONG_MAX, 'max.compaction.lag.ms': LONG_MAX, 'segment.ms': BEYOND_2_53 });
  assert.deepEqual(await describe(client, ConfigResourceType.TOPIC, 'forever', ['retention.ms', 'max.compaction.lag.ms', 'segment.ms']), {
    'retention.ms': LONG_MAX,
    'max.compaction.lag.ms': LONG_MAX,
    'segment.ms': BEYOND_2_53,
  });

  const legacy = await call(client, AlterConfigs, 2, {
    resources: [{ resourceType: ConfigResourceType.TOPIC, resourceName: 'forever', configs: [
      { name: 'retention.ms', value: '-1' },
      { name: 'file.delete.delay.ms', value: LONG_MAX },
      { name: 'message.timestamp.after.max.ms', value: BEYOND_2_53 },
    ] }],
    validateOnly: false,
  });
  assert.equal(legacy.responses[0]!.errorCode, ErrorCode.NONE, legacy.responses[0]!.errorMessage ?? '');
  assert.deepEqual(await describe(client, ConfigResourceType.TOPIC, 'forever', ['retention.ms', 'file.delete.delay.ms', 'message.timestamp.after.max.ms']), {
    'retention.ms': '-1',
    'file.delete.delay.ms': LONG_MAX,
    'message.timestamp.after.max.ms': BEYOND_2_53,
  });

  const incremental = await call(client, IncrementalAlterConfigs, 1, {
    resources: [
      { resourceType: ConfigResourceType.TOPIC, resourceName: 'forever', configs: [{ name: 'flush.ms', configOperation: 0, value: LONG_MAX }] },
      { resourceType: ConfigResourceType.BROKER, resourceName: '', configs: [{ name: 'log.retention.ms', configOperation: 0, value: LONG_MAX }] },
    ],
    validateOnly: false,
  });
  for (const response of incremental.responses) assert.equal(response.errorCode, ErrorCode.NONE, response.errorMessage ?? '');
  assert.equal((await describe(client, ConfigResourceType.TOPIC, 'forever', ['flush.ms']))['flush.ms'], LONG_MAX);
  assert.equal((await describe(client, ConfigResourceType.BROKER, '', ['log.retention.ms']))['log.retention.ms'], LONG_MAX);

  const tooBig = await call(client, IncrementalAlterConfigs, 1, {
    resources: [{ resourceType: ConfigResourceType.TOPIC, resourceName: 'forever', configs: [{ name: 'retention.ms', configOperation: 0, value: '9223372036854775808' }] }],
    validateOnly: false,
  });
  assert.equal(tooBig.responses[0]!.errorCode, ErrorCode.INVALID_CONFIG, 'one past Long.MAX_VALUE is refused, as Java refuses it');
});

const listOffsetsBody = (topic: string, timestamp: number) => ({
  replicaId: -1,
  isolationLevel: 0,
  topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp }] }],
});

test('a Fetch, ListOffsets or DeleteRecords int64 of 2^60 is answered with Kafka\'s answer, not a closed connection', async (t) => {
  const { running, client } = await withBroker(t, {});
  await createTopic(running, 'events');
  const fetched = await call(client, Fetch, 12, fetchBody('events', 2 ** 60 + 2 ** 8));
  assert.equal(fetched.responses[0]!.partitions[0]!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  const listed = await call(client, ListOffsets, 7, listOffsetsBody('events', 2 ** 60));
  assert.equal(listed.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.equal(listed.topics[0]!.partitions[0]!.offset, -1, 'no record that late');
  const deleted = await call(client, DeleteRecords, 2, { topics: [{ name: 'events', partitions: [{ partitionIndex: 0, offset: 2 ** 60 }] }], timeoutMs: 5000 });
  assert.equal(deleted.topics[0]!.partitions[0]!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
});

/** A one-record batch whose timestamps are exactly `nanos` (not representable as a double). */
function nanosecondBatch(nanos: bigint): Buffer {
  const batch = buildBatch({ records: [{ value: 'nanos', timestamp: 0 }] });
  batch.writeBigInt64BE(nanos, BATCH_FIELD.baseTimestamp);
  batch.writeBigInt64BE(nanos, BATCH_FIELD.maxTimestamp);
  writeCrc(batch, 0);
  return batch;
}

test('nanosecond timestamps: refused or accepted as Kafka decides, stored exactly, listed by timestamp, kept across a restart', async (t) => {
  const nanos = 1_733_000_000_123_456_789n;
  const dir = await mkdtemp(join(tmpdir(), 'spool-int64-'));
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  const client = await WireClient.connect(running.bootstrapServers);
  await createTopic(running, 'default-window');
  await createTopic(running, 'open-window', { 'message.timestamp.after.max.ms': LONG_MAX });

  const refused = await call(client, Produce, 9, produceBody('default-window', nanosecondBatch(nanos)));
  assert.equal(refused.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_TIMESTAMP);
  const accepted = await call(client, Produce, 9, produceBody('open-window', nanosecondBatch(nanos)));
  assert.equal(accepted.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);

  const check = async (at: WireClient) => {
    const fetched = await call(at, Fetch, 12, fetchBody('open-window', 0));
    const records = fetched.responses[0]!.partitions[0]!.records!;
    assert.equal(records.readBigInt64BE(BATCH_FIELD.maxTimestamp), nanos, 'the batch keeps its exact timestamp');
    const byTimestamp = await call(at, ListOffsets, 7, listOffsetsBody('open-window', Number(nanos) - 1_000_000));
    assert.equal(byTimestamp.topics[0]!.partitions[0]!.offset, 0);
    const latest = await call(at, ListOffsets, 7, listOffsetsBody('open-window', Number(nanos) + 1_000_000));
    assert.equal(latest.topics[0]!.partitions[0]!.offset, -1);
    const maxTimestamp = await call(at, ListOffsets, 7, listOffsetsBody('open-window', -3));
    assert.equal(maxTimestamp.topics[0]!.partitions[0]!.offset, 0);
    assert.equal(maxTimestamp.topics[0]!.partitions[0]!.timestamp, Number(nanos));
  };
  await check(client);
  client.close();
  await running.stop();
  const again = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  const client2 = await WireClient.connect(again.bootstrapServers);
  t.after(async () => {
    client2.close();
    await again.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await check(client2);
});
