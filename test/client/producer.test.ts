/**
 * Proves the idempotent producer's retries keep order, against a fake broker
 * on real TCP that enforces sequence numbers the way Kafka does: the first
 * Produce is refused with NOT_LEADER_OR_FOLLOWER, so the batches already in
 * flight behind it get OUT_OF_ORDER_SEQUENCE_NUMBER; the producer resends
 * every batch with its original sequence and bytes, in sequence order, and
 * each record ends up in the log once, in send order. Also proves a
 * non-retriable error fails only the records of its batch, and that a batch
 * becoming ready between two readings of the clock is still sent, and that
 * sends waiting for a topic's first leader keep their call order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Producer } from '../../src/client/producer.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { readBatchHeader } from '../../src/protocol/records/batch.js';
import { decodeRecords } from '../../src/protocol/records/records.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { realEnv, type Env } from '../../src/io/env.js';
import { FakeBroker, apiVersionsBody, reply, type ReceivedRequest } from './fake-broker.js';

interface PartitionData { index: number; records: Buffer }

/** A one-partition, sequence-checking fake leader for topic "t". */
class SequencedLeader {
  readonly log: string[] = [];
  readonly attempts: { baseSequence: number; crc: number }[] = [];
  expectedSequence = 0;
  refuseNext: number | null = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  rejectValue: string | null = null;

  constructor(private readonly address: () => { host: string; port: number }) {}

  answer = (request: ReceivedRequest): Buffer[] | null => {
    switch (request.header.requestApiKey) {
      case 18:
        return reply(request, apiVersionsBody({ 18: [0, 3], 3: [0, 12], 0: [3, 12], 22: [0, 4] }));
      case 3:
        return reply(request, {
          brokers: [{ nodeId: 1, ...this.address(), rack: null }],
          controllerId: 1,
          topics: [{ errorCode: 0, name: 't', topicId: ZERO_UUID, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1] }] }],
        });
      case 22:
        return reply(request, { errorCode: 0, producerId: 4000, producerEpoch: 0 });
      case 0:
        return reply(request, { responses: [{ name: 't', partitionResponses: [this.produce(((request.body.topicData as { partitionData: PartitionData[] }[])[0]!.partitionData[0]!))] }] });
      default:
        return null;
    }
  };

  private produce(data: PartitionData): Record<string, unknown> {
    const header = readBatchHeader(data.records);
    this.attempts.push({ baseSequence: header.baseSequence, crc: header.crc });
    const values = decodeRecords(data.records).records!.map((r) => r.value!.toString());
    if (this.refuseNext !== null) {
      const errorCode = this.refuseNext;
      this.refuseNext = null;
      return { index: 0, errorCode, baseOffset: -1 };
    }
    if (this.rejectValue !== null && values.includes(this.rejectValue)) return { index: 0, errorCode: ErrorCode.INVALID_RECORD, baseOffset: -1, errorMessage: 'refused by the test' };
    if (header.baseSequence !== this.expectedSequence) return { index: 0, errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, baseOffset: -1 };
    const baseOffset = this.log.length;
    this.log.push(...values);
    this.expectedSequence += header.recordCount;
    return { index: 0, errorCode: 0, baseOffset };
  }
}

async function setup() {
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  const leader = new SequencedLeader(() => address);
  broker.answer = leader.answer;
  address = await broker.start();
  // batch.size 1: every record is a batch of its own, so several are in flight at once.
  const producer = new Producer({ bootstrapServers: `${address.host}:${address.port}`, batchSize: 1, lingerMs: 0, retryBackoffMs: 1, retryBackoffMaxMs: 2 });
  return { broker, leader, producer };
}

test('after a refused first batch, every batch is retried with its own sequence and bytes, and the log keeps send order', async () => {
  const { broker, leader, producer } = await setup();
  const values = Array.from({ length: 8 }, (_, i) => `v${i}`);
  const metadata = await Promise.all(values.map((value) => producer.send({ topic: 't', value })));
  await producer.close();
  await broker.stop();
  assert.deepEqual(leader.log, values);
  assert.deepEqual(metadata.map((m) => m.offset), values.map((_, i) => i));
  assert.ok(leader.attempts.length > values.length, 'some batches were retried');
  const crcBySequence = new Map<number, number>();
  for (const attempt of leader.attempts) {
    const seen = crcBySequence.get(attempt.baseSequence);
    if (seen !== undefined) assert.equal(attempt.crc, seen, `sequence ${attempt.baseSequence} resent with the same bytes`);
    crcBySequence.set(attempt.baseSequence, attempt.crc);
  }
  assert.deepEqual([...crcBySequence.keys()].sort((a, b) => a - b), values.map((_, i) => i));
});

test('a non-retriable error fails the records of its batch only', async () => {
  const { broker, leader, producer } = await setup();
  leader.refuseNext = null;
  leader.rejectValue = 'bad';
  const good = producer.send({ topic: 't', value: 'good' });
  await good;
  const bad = producer.send({ topic: 't', value: 'bad' });
  await assert.rejects(bad, /INVALID_RECORD: refused by the test/);
  await producer.close();
  await broker.stop();
  assert.deepEqual(leader.log, ['good']);
});

test('delivery.timeout.ms expires a batch waiting for a leader, and again for a batch created after a scan found none', async () => {
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  broker.answer = (request) => {
    switch (request.header.requestApiKey) {
      case 18:
        return reply(request, apiVersionsBody({ 18: [0, 3], 3: [0, 12], 0: [3, 12], 22: [0, 4] }));
      case 3:
        return reply(request, {
          brokers: [{ nodeId: 1, ...address, rack: null }],
          controllerId: 1,
          topics: [{ errorCode: 0, name: 't', topicId: ZERO_UUID, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: -1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1] }] }],
        });
      case 22:
        return reply(request, { errorCode: 0, producerId: 4000, producerEpoch: 0 });
      default:
        return null;
    }
  };
  address = await broker.start();
  const producer = new Producer({ bootstrapServers: `${address.host}:${address.port}`, lingerMs: 0, deliveryTimeoutMs: 50, retryBackoffMs: 5, retryBackoffMaxMs: 5 });
  await assert.rejects(producer.send({ topic: 't', partition: 0, value: 'first' }), /Expiring 1 record\(s\) for t-0: .* \(delivery.timeout.ms 50\)/);
  await assert.rejects(producer.send({ topic: 't', partition: 0, value: 'second' }), /Expiring 1 record\(s\) for t-0/);
  await producer.close();
  await broker.stop();
  assert.ok(broker.received.every((request) => request.header.requestApiKey !== 0), 'nothing was produced without a leader');
});

test('a batch that lingers past linger.ms between two readings of the clock is sent (the wake-up is not lost)', { timeout: 20_000 }, async () => {
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  const leader = new SequencedLeader(() => address);
  leader.refuseNext = null;
  broker.answer = leader.answer;
  address = await broker.start();
  const values: string[] = [];
  // Time moves a step with every reading of the clock: for some step, a batch of linger.ms 1 is not ready at the
  // producer's reading that decides what to send and is due at a later one.
  for (let step = 0.05; step <= 1; step += 0.05) {
    let monotonicMs = 0;
    const env: Env = { ...realEnv, clock: { nowMs: () => realEnv.clock.nowMs(), monotonicMs: () => (monotonicMs += step) } };
    const producer = new Producer({ bootstrapServers: `${address.host}:${address.port}`, lingerMs: 1, env });
    leader.expectedSequence = 0; // each producer starts its sequences again
    for (let i = 0; i < 3; i++) {
      const value = `${step.toFixed(2)}-${i}`;
      values.push(value);
      await producer.send({ topic: 't', value });
    }
    await producer.close();
  }
  await broker.stop();
  assert.deepEqual(leader.log, values);
});

test('records sent while the topic has no leader yet reach the log in call order (each send waits for the one before)', async () => {
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  const leader = new SequencedLeader(() => address);
  leader.refuseNext = null;
  // The first Metadata answers know no partition of "t" (as while a topic is being created); the later ones do.
  let metadataAnswers = 0;
  broker.answer = (request) => {
    if (request.header.requestApiKey === 3 && metadataAnswers++ < 3) {
      return reply(request, { brokers: [{ nodeId: 1, ...address, rack: null }], controllerId: 1, topics: [{ errorCode: ErrorCode.LEADER_NOT_AVAILABLE, name: 't', topicId: ZERO_UUID, partitions: [] }] });
    }
    return leader.answer(request);
  };
  address = await broker.start();
  const producer = new Producer({ bootstrapServers: `${address.host}:${address.port}`, lingerMs: 0, retryBackoffMs: 1, retryBackoffMaxMs: 20 });
  const values = Array.from({ length: 40 }, (_, i) => `v${i}`);
  const metadata = await Promise.all(values.map((value) => producer.send({ topic: 't', value })));
  await producer.close();
  await broker.stop();
  assert.ok(metadataAnswers > 3, 'the sends waited out the answers without a leader');
  assert.deepEqual(leader.log, values);
  assert.deepEqual(metadata.map((m) => m.offset), values.map((_, i) => i));
});

test('after a failover the producer reaches every moved partition, also of topics whose cached leader left the broker list', async () => {
  // Node 1 is this fake broker; node 2 was the leader of "t" and "u" and is gone (its port closed). Once node 2 is
  // fenced, Metadata no longer lists it and names node 1 as the leader of whichever topic it is asked about.
  const gone = new FakeBroker();
  const goneAddress = await gone.start();
  await gone.stop();
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  let failedOver = false;
  const produced: string[] = [];
  broker.answer = (request) => {
    switch (request.header.requestApiKey) {
      case 18:
        return reply(request, apiVersionsBody({ 18: [0, 3], 3: [0, 12], 0: [3, 12], 22: [0, 4] }));
      case 3: {
        const leaderId = failedOver ? 1 : 2;
        return reply(request, {
          brokers: [{ nodeId: 1, ...address, rack: null }, ...(failedOver ? [] : [{ nodeId: 2, ...goneAddress, rack: null }])],
          controllerId: 1,
          topics: (request.body.topics as { name: string }[]).map(({ name }) => ({
            errorCode: 0, name, topicId: ZERO_UUID, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId, leaderEpoch: failedOver ? 1 : 0, replicaNodes: [1, 2], isrNodes: [leaderId] }],
          })),
        });
      }
      case 22:
        return reply(request, { errorCode: 0, producerId: 4000, producerEpoch: 0 });
      case 0: {
        const topics = request.body.topicData as { name: string }[];
        produced.push(...topics.map((t) => t.name));
        return reply(request, { responses: topics.map(({ name }) => ({ name, partitionResponses: [{ index: 0, errorCode: 0, baseOffset: 0 }] })) });
      }
      default:
        return null;
    }
  };
  address = await broker.start();
  const producer = new Producer({ bootstrapServers: `${address.host}:${address.port}`, lingerMs: 0, retryBackoffMs: 1, retryBackoffMaxMs: 2 });
  try {
    await producer.cluster.refreshMetadata(['t', 'u']);
    assert.equal(producer.cluster.leaderFor('u', 0), 2);
    failedOver = true;
    const sent = await Promise.all([producer.send({ topic: 't', value: 'a' }), producer.send({ topic: 'u', value: 'b' })]);
    assert.deepEqual(sent.map((m) => m.topic), ['t', 'u']);
    assert.deepEqual([...new Set(produced)].sort(), ['t', 'u']);
  } finally {
    await producer.close();
    await broker.stop();
  }
});

test('a partition whose leader is not among the brokers of the last Metadata response has no known leader', async () => {
  const broker = new FakeBroker();
  let address = { host: '127.0.0.1', port: 0 };
  let brokers = [1, 2];
  broker.answer = (request) => {
    if (request.header.requestApiKey === 18) return reply(request, apiVersionsBody({ 18: [0, 3], 3: [0, 12] }));
    if (request.header.requestApiKey !== 3) return null;
    return reply(request, {
      brokers: brokers.map((nodeId) => ({ nodeId, ...address, rack: null })),
      controllerId: 1,
      topics: (request.body.topics as { name: string }[]).map(({ name }) => ({
        errorCode: 0, name, topicId: ZERO_UUID, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 2, leaderEpoch: 0, replicaNodes: [1, 2], isrNodes: [2] }],
      })),
    });
  };
  address = await broker.start();
  const producer = new Producer({ bootstrapServers: `${address.host}:${address.port}` });
  try {
    await producer.cluster.refreshMetadata(['t']);
    assert.equal(producer.cluster.leaderFor('t', 0), 2);
    brokers = [1];
    await producer.cluster.refreshMetadata([]);
    assert.equal(producer.cluster.leaderFor('t', 0), -1, 'node 2 left the broker list: the cached leader is no longer usable');
  } finally {
    await producer.close();
    await broker.stop();
  }
});
