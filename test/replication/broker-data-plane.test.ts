/**
 * End to end over TCP: a broker from startBroker(), driven by Spool's own
 * protocol encoder, produces and fetches as a Kafka client sees it. Proves:
 * InitProducerId hands out ids; an idempotent batch is stored once and its
 * retry gets the original offset, also after a broker restart; the fetched
 * bytes are the produced batch; topics by id (v13) and unknown ids; a long
 * poll is woken by a produce on another connection; incremental fetch
 * sessions answer only changes; acks=0 sends nothing and closes the
 * connection on error; Produce v0-v2 is advertised but closes the
 * connection; bad batches get Kafka's error codes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { encodeRequest } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, decodeRecords } from '../../src/protocol/records/records.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { ListOffsets } from '../../src/protocol/schemas/02-list-offsets.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { InitProducerId } from '../../src/protocol/schemas/22-init-producer-id.js';
import { DescribeProducers } from '../../src/protocol/schemas/61-describe-producers.js';
import { WireClient, call, fetchBody, produceBody } from '../server/wire-client.js';

async function startWithTopic(dir: string, topic = 'events', partitions = 1): Promise<RunningBroker> {
  const running = await startBroker({ config: { 'log.dirs': dir, 'node.id': 1 }, logger: silentLogger });
  const [created] = await running.broker.controller.createTopics(
    [{ name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
    { validateOnly: false },
  );
  assert.ok(created!.errorCode === ErrorCode.NONE || created!.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS);
  return running;
}

test('idempotent produce, fetch back, retry dedup across a restart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-e2e-'));
  let running = await startWithTopic(dir);
  let client = await WireClient.connect(running.bootstrapServers);

  const init = await call(client, InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
  assert.equal(init.errorCode, ErrorCode.NONE);
  assert.ok(init.producerId >= 0);
  assert.equal(init.producerEpoch, 0);

  const batch = () =>
    buildBatch({
      records: [{ key: 'k1', value: 'v1', timestamp: Date.now(), headers: [{ key: 'h', value: 'x' }] }, { key: 'k2', value: 'v2', timestamp: Date.now() }],
      producerId: init.producerId,
      producerEpoch: 0,
      baseSequence: 0,
    });
  const first = await call(client, Produce, 9, produceBody('events', batch()));
  assert.equal(first.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  assert.equal(first.responses[0]!.partitionResponses[0]!.baseOffset, 0);
  const retry = await call(client, Produce, 9, produceBody('events', batch()));
  assert.equal(retry.responses[0]!.partitionResponses[0]!.baseOffset, 0);

  const fetched = await call(client, Fetch, 12, fetchBody('events', 0));
  const partition = fetched.responses[0]!.partitions[0]!;
  assert.equal(partition.errorCode, ErrorCode.NONE);
  assert.equal(partition.highWatermark, 2);
  const records = decodeRecords(partition.records!).records!;
  assert.deepEqual(records.map((r) => [r.offset, r.key!.toString(), r.value!.toString()]), [[0, 'k1', 'v1'], [1, 'k2', 'v2']]);
  assert.deepEqual(records[0]!.headers.map((h) => [h.key, h.value!.toString()]), [['h', 'x']]);

  const producers = await call(client, DescribeProducers, 0, { topics: [{ name: 'events', partitionIndexes: [0] }] });
  assert.deepEqual(producers.topics[0]!.partitions[0]!.activeProducers.map((p) => [p.producerId, p.lastSequence]), [[init.producerId, 1]]);

  client.close();
  await running.stop();
  running = await startWithTopic(dir);
  client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });
  const afterRestart = await call(client, Produce, 9, produceBody('events', batch()));
  assert.equal(afterRestart.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  assert.equal(afterRestart.responses[0]!.partitionResponses[0]!.baseOffset, 0, 'retried after restart: original offset');
  const latest = await call(client, ListOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
  assert.equal(latest.topics[0]!.partitions[0]!.offset, 2, 'the log holds the batch once');
});

test('topics by id (v13), unknown ids and names, and bad batches get Kafka errors', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-e2e-'));
  const running = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });
  const topicId = running.broker.metadata.image.topicsByName.get('events')!.id;

  const byId = await call(client, Produce, 13, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ topicId, partitionData: [{ index: 0, records: buildBatch({ records: [{ value: 'a', timestamp: Date.now() }] }) }] }] });
  assert.equal(byId.responses[0]!.topicId, topicId);
  assert.equal(byId.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  const unknownId = await call(client, Produce, 13, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData: [{ index: 0, records: buildBatch({ records: [{ value: 'a' }] }) }] }] });
  assert.equal(unknownId.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);

  const fetchById = await call(client, Fetch, 16, { ...fetchBody('', 0), topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] });
  assert.equal(fetchById.responses[0]!.topicId, topicId);
  assert.equal(fetchById.responses[0]!.partitions[0]!.highWatermark, 1);
  const fetchUnknownId = await call(client, Fetch, 16, { ...fetchBody('', 0), topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] });
  assert.equal(fetchUnknownId.responses[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);

  const transactional = await call(client, InitProducerId, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
  // No __transaction_state yet (no FindCoordinator), so this node coordinates no transactional id: Kafka's NOT_COORDINATOR.
  assert.deepEqual([transactional.errorCode, transactional.producerId, transactional.producerEpoch], [ErrorCode.NOT_COORDINATOR, -1, -1]);
  const emptyId = await call(client, InitProducerId, 4, { transactionalId: '', transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
  assert.equal(emptyId.errorCode, ErrorCode.INVALID_REQUEST);
  const halfSet = await call(client, InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: 5, producerEpoch: -1 });
  assert.equal(halfSet.errorCode, ErrorCode.INVALID_REQUEST);
  const txBatch = buildBatch({ records: [{ value: 't' }], producerId: 1, producerEpoch: 0, baseSequence: 0, isTransactional: true });
  const noTxId = await call(client, Produce, 9, produceBody('events', txBatch));
  assert.equal(noTxId.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);

  const unknownTopic = await call(client, Produce, 9, produceBody('missing', buildBatch({ records: [{ value: 'a' }] })));
  assert.equal(unknownTopic.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const corrupt = buildBatch({ records: [{ value: 'abc', timestamp: Date.now() }] });
  corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 0x55;
  const corruptAnswer = await call(client, Produce, 9, produceBody('events', corrupt));
  assert.equal(corruptAnswer.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.CORRUPT_MESSAGE);
  const tooLarge = await call(client, Produce, 9, produceBody('events', buildBatch({ records: [{ value: Buffer.alloc(1_100_000) }] })));
  assert.equal(tooLarge.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  const future = await call(client, Produce, 9, produceBody('events', buildBatch({ records: [{ value: 'x', timestamp: Date.now() + 7_200_000 }] })));
  const futureAnswer = future.responses[0]!.partitionResponses[0]!;
  assert.equal(futureAnswer.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.deepEqual(futureAnswer.recordErrors.map((e) => e.batchIndex), [0]);
  assert.equal(futureAnswer.errorMessage, 'One or more records have been rejected due to invalid timestamp');
});

test('a long poll is woken by a produce on another connection; sessions answer only changes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-e2e-'));
  const running = await startWithTopic(dir);
  const consumer = await WireClient.connect(running.bootstrapServers);
  const producer = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { consumer.close(); producer.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });

  const full = await call(consumer, Fetch, 12, fetchBody('events', 0, { sessionEpoch: 0 }));
  assert.notEqual(full.sessionId, 0);
  assert.equal(full.responses[0]!.partitions[0]!.highWatermark, 0);

  const incremental = await call(consumer, Fetch, 12, { ...fetchBody('events', 0), sessionId: full.sessionId, sessionEpoch: 1, topics: [] });
  assert.equal(incremental.errorCode, ErrorCode.NONE);
  assert.deepEqual(incremental.responses, [], 'nothing changed, nothing answered');

  const polling = call(consumer, Fetch, 12, { ...fetchBody('events', 0), maxWaitMs: 30_000, sessionId: full.sessionId, sessionEpoch: 2, topics: [] });
  const produced = await call(producer, Produce, 9, produceBody('events', buildBatch({ records: [{ value: 'wake', timestamp: Date.now() }] }), 1));
  assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  const woken = await polling;
  assert.equal(woken.responses[0]!.partitions[0]!.highWatermark, 1);
  assert.equal(decodeRecords(woken.responses[0]!.partitions[0]!.records!).records![0]!.value!.toString(), 'wake');

  const stale = await call(consumer, Fetch, 12, { ...fetchBody('events', 1), sessionId: full.sessionId, sessionEpoch: 2, topics: [] });
  assert.equal(stale.errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
  const missing = await call(consumer, Fetch, 12, { ...fetchBody('events', 1), sessionId: 424242, sessionEpoch: 1, topics: [] });
  assert.equal(missing.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
});

test('acks=0 answers nothing, and closes the connection when a partition fails', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-e2e-'));
  const running = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });
  client.send(encodeRequest(Produce, { apiVersion: 9, correlationId: 9001, clientId: 't' }, produceBody('events', buildBatch({ records: [{ value: 'quiet', timestamp: Date.now() }] }), 0)));
  const after = await call(client, ListOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, timestamp: -1 }] }] });
  assert.equal(after.topics[0]!.partitions[0]!.offset, 1, 'the acks=0 batch was appended; its response was never sent');
  client.send(encodeRequest(Produce, { apiVersion: 9, correlationId: 9002, clientId: 't' }, produceBody('missing', buildBatch({ records: [{ value: 'x' }] }), 0)));
  assert.equal(await client.next(), null, 'closed after the failed acks=0 produce');
});

test('Produce v0-v2 is advertised like Kafka 4 but a v2 request closes the connection', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-e2e-'));
  const running = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await running.stop(); await rm(dir, { recursive: true, force: true }); });
  const versions = await call(client, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1.0' });
  const produce = versions.apiKeys.find((key) => key.apiKey === 0)!;
  assert.deepEqual([produce.minVersion, produce.maxVersion], [0, 13]);
  const fetch = versions.apiKeys.find((key) => key.apiKey === 1)!;
  assert.deepEqual([fetch.minVersion, fetch.maxVersion], [4, 18]);
  const initProducerId = versions.apiKeys.find((key) => key.apiKey === 22)!;
  assert.equal(initProducerId.maxVersion, 5, 'v6 is unstable in Kafka');
  // A v2 header on a Produce body: the broker cannot parse it, as Kafka 4 cannot.
  const frame = encodeRequest(Produce, { apiVersion: 3, correlationId: 77, clientId: 't' }, produceBody('events', buildBatch({ records: [{ value: 'x' }] })));
  const bytes = Buffer.concat(frame);
  bytes.writeInt16BE(2, 6);
  client.send([bytes]);
  assert.equal(await client.next(), null);
});

test('stopping the broker answers a waiting long poll instead of sitting out max.wait.ms', { timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-e2e-'));
  const running = await startWithTopic(dir);
  const client = await WireClient.connect(running.bootstrapServers);
  t.after(async () => { client.close(); await rm(dir, { recursive: true, force: true }); });
  const polling = call(client, Fetch, 12, fetchBody('events', 0, { maxWaitMs: 600_000 }));
  // Wait until the fetch sits in the purgatory (a turn of the event loop at a time).
  while (running.broker.replicaManager.fetchPurgatory.delayedCount === 0) await new Promise((resolve) => setImmediate(resolve));
  await running.stop();
  const answered = await polling;
  assert.equal(answered.responses[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.equal(answered.responses[0]!.partitions[0]!.records!.length, 0);
});
