/**
 * Seeded fuzz of the leader append path with mutated produce batches
 * (flipped bytes anywhere in header or records, truncations, trailing
 * garbage, every codec). Invariants: appendRecords never throws, every
 * answer is NONE or a Kafka error a client can act on (never
 * UNKNOWN_SERVER_ERROR), and the log afterwards holds exactly the accepted
 * batches: each one read back passes its CRC, offsets are contiguous, and the
 * high watermark equals the records accepted. Prints the seed on failure.
 *
 * The second test mutates the records inside the codec (bytes flipped,
 * inserted or removed in the inflated records, then recompressed) and
 * recomputes the CRC, so only record validation stands between the batch
 * and the log. Invariants: each batch is refused with a record error, or
 * stored and read back with the same records section it was sent with, and
 * every stored batch decodes record by record into exactly its count.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../src/io/env.js';
import { SeededRandom } from '../../src/io/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch, decodeRecords } from '../../src/protocol/records/records.js';
import { compress, decompress } from '../../src/protocol/records/compression.js';
import { BATCH_FIELD, BATCH_HEADER_BYTES, BATCH_OVERHEAD_BYTES, iterateBatches, readBatchHeader, validateBatch, writeCrc } from '../../src/protocol/records/batch.js';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import type { MetadataImage, PartitionRegistration, TopicImage } from '../../src/metadata/image.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';

const SEED = Number(process.env.SPOOL_FUZZ_SEED ?? 20261129);
const ROUNDS = 300;
const ACCEPTABLE = new Set<number>([
  ErrorCode.NONE, ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD, ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.INVALID_TIMESTAMP, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
  ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_TXN_STATE,
]);

function mutate(random: SeededRandom, batch: Buffer): Buffer {
  const out = Buffer.from(batch);
  switch (random.nextInt(4)) {
    case 0: // flip a few bytes anywhere
      for (let i = 0, n = 1 + random.nextInt(4); i < n; i++) out[random.nextInt(out.length)] = random.nextInt(256);
      return out;
    case 1: // flip header bytes only (after the CRC-free prefix), then the CRC is wrong or, rarely, recomputed by chance
      out[21 + random.nextInt(40)] = random.nextInt(256);
      return out;
    case 2:
      return out.subarray(0, random.nextInt(out.length));
    default:
      return Buffer.concat([out, random.bytes(1 + random.nextInt(20))]);
  }
}

async function startFuzzManager(t: TestContext): Promise<ReplicaManager> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-fuzz-'));
  const registration: PartitionRegistration = {
    topicId: 'AAAAAAAAAAAAAAAAAAAAAg', topicName: 'fuzz', partition: 0, replicas: [1], isr: [1], elr: [], lastKnownElr: [],
    removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0,
  };
  const topic: TopicImage = { name: 'fuzz', id: registration.topicId, partitions: new Map([[0, registration]]), configs: new Map() };
  const image: MetadataImage = {
    offset: 1, clusterId: 'fuzz', topicsByName: new Map([['fuzz', topic]]), topicsById: new Map([[topic.id, topic]]), brokers: new Map(),
    features: new Map(), brokerConfigs: new Map(), groupConfigs: new Map(), controllers: new Map(), nextProducerId: 0, scramCredentials: new Map(), acls: new Map(), clientQuotas: new Map(),
  };
  const manager = new ReplicaManager({ nodeId: 1, config: BrokerConfig.fromObject({ 'log.dirs': dir }), env: realEnv, log: silentLogger, metadata: { image } });
  await manager.start();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await manager.onMetadataUpdate({ changedPartitions: [registration], deletedTopics: [], changedTopicConfigs: [], brokersChanged: false, changedFeatures: new Map(), offset: 1 }, image);
  return manager;
}

test(`mutated produce batches never crash the append path and never corrupt the log (seed ${SEED})`, async (t) => {
  const manager = await startFuzzManager(t);
  const random = new SeededRandom(SEED);
  let acceptedRecords = 0;
  let sequence = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const count = 1 + random.nextInt(5);
    const idempotent = random.nextInt(2) === 0;
    const valid = buildBatch({
      compression: random.nextInt(5),
      records: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: random.bytes(random.nextInt(200)), timestamp: Date.now() })),
      ...(idempotent ? { producerId: 1, producerEpoch: 0, baseSequence: sequence } : {}),
    });
    const records = random.nextInt(3) === 0 ? valid : mutate(random, valid);
    const results = await manager.appendRecords({ timeoutMs: 100, requiredAcks: 1, internalTopicsAllowed: false, entries: [{ topicPartition: { topic: 'fuzz', partition: 0 }, records }] });
    const result = results.get('fuzz-0')!;
    assert.ok(ACCEPTABLE.has(result.errorCode), `seed ${SEED} round ${round}: unexpected error ${result.errorCode}`);
    if (result.errorCode === ErrorCode.NONE && result.baseOffset === acceptedRecords) {
      const header = records.readInt32BE(57);
      acceptedRecords += header;
      if (idempotent) sequence += count;
    }
  }
  const [data] = await manager.fetchMessages(
    { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 64 << 20, isolation: 'highWatermark', fetchOnlyFromLeader: true },
    [{ topicPartition: { topic: 'fuzz', partition: 0 }, fetchOffset: 0, logStartOffset: -1, maxBytes: 64 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }],
  );
  assert.equal(data!.highWatermark, acceptedRecords, `seed ${SEED}: high watermark`);
  let expectedOffset = 0;
  for (const { position, header } of iterateBatches(data!.records)) {
    assert.equal(validateBatch(data!.records, position, { origin: 'log' }), null, `seed ${SEED}: stored batch at ${header.baseOffset} is valid`);
    assert.equal(header.baseOffset, expectedOffset, `seed ${SEED}: contiguous offsets`);
    expectedOffset = header.lastOffset + 1;
  }
  assert.equal(expectedOffset, acceptedRecords);
});

const RECORD_ERRORS = new Set<number>([ErrorCode.INVALID_RECORD, ErrorCode.INVALID_TIMESTAMP, ErrorCode.MESSAGE_TOO_LARGE]);

/** The inflated records with a few bytes flipped, inserted or removed. */
function mutateRecords(random: SeededRandom, records: Buffer): Buffer {
  let out = Buffer.from(records);
  for (let i = 0, n = 1 + random.nextInt(3); i < n; i++) {
    const at = random.nextInt(out.length + 1);
    switch (random.nextInt(3)) {
      case 0:
        if (at < out.length) out[at] = random.nextInt(256);
        break;
      case 1:
        out = Buffer.concat([out.subarray(0, at), random.bytes(1 + random.nextInt(3)), out.subarray(at)]);
        break;
      default:
        out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1 + random.nextInt(3))]);
    }
  }
  return out;
}

/** `batch` with its records replaced by `records` (compressed with its codec), length and CRC fixed. */
function withRecords(batch: Buffer, records: Buffer): Buffer {
  const header = readBatchHeader(batch);
  const payload = compress(header.compression, records);
  const out = Buffer.concat([batch.subarray(0, BATCH_HEADER_BYTES), payload]);
  out.writeInt32BE(out.length - BATCH_OVERHEAD_BYTES, BATCH_FIELD.batchLength);
  writeCrc(out, 0);
  return out;
}

test(`CRC-valid batches with mutated records are refused or stored and read back whole (seed ${SEED})`, async (t) => {
  const manager = await startFuzzManager(t);
  const random = new SeededRandom(SEED);
  const sent: Buffer[] = [];
  const refusals = new Map<number, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const count = 1 + random.nextInt(5);
    const valid = buildBatch({
      compression: random.nextInt(5),
      records: Array.from({ length: count }, (_, i) => ({
        key: random.nextInt(4) === 0 ? null : `k${i}`,
        value: random.bytes(random.nextInt(40)),
        headers: random.nextInt(2) === 0 ? [] : [{ key: 'h', value: random.nextInt(2) === 0 ? null : random.bytes(3) }],
        timestamp: Date.now(),
      })),
    });
    const header = readBatchHeader(valid);
    const inflated = decompress(header.compression, valid.subarray(BATCH_HEADER_BYTES)) as Buffer;
    const batch = withRecords(valid, mutateRecords(random, inflated));
    const results = await manager.appendRecords({ timeoutMs: 100, requiredAcks: 1, internalTopicsAllowed: false, entries: [{ topicPartition: { topic: 'fuzz', partition: 0 }, records: Buffer.from(batch) }] });
    const { errorCode } = results.get('fuzz-0')!;
    if (errorCode === ErrorCode.NONE) sent.push(batch);
    else {
      assert.ok(RECORD_ERRORS.has(errorCode), `seed ${SEED} round ${round}: error ${errorCode}`);
      refusals.set(errorCode, (refusals.get(errorCode) ?? 0) + 1);
    }
  }
  assert.ok((refusals.get(ErrorCode.INVALID_RECORD) ?? 0) > ROUNDS / 2, `seed ${SEED}: most mutations break the records (${JSON.stringify([...refusals])})`);
  const [data] = await manager.fetchMessages(
    { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 64 << 20, isolation: 'highWatermark', fetchOnlyFromLeader: true },
    [{ topicPartition: { topic: 'fuzz', partition: 0 }, fetchOffset: 0, logStartOffset: -1, maxBytes: 64 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }],
  );
  const stored = [...iterateBatches(data!.records)];
  assert.equal(stored.length, sent.length, `seed ${SEED}: every accepted batch is in the log`);
  stored.forEach(({ position, header }, index) => {
    const bytes = data!.records.subarray(position, position + header.sizeBytes);
    assert.ok(bytes.subarray(BATCH_HEADER_BYTES).equals(sent[index]!.subarray(BATCH_HEADER_BYTES)), `seed ${SEED}: batch ${index} records read back as sent`);
    const decoded = decodeRecords(bytes);
    assert.equal(decoded.error, null, `seed ${SEED}: batch ${index} decodes: ${decoded.error?.message}`);
    assert.equal(decoded.records!.length, header.recordCount, `seed ${SEED}: batch ${index} holds its count`);
  });
});
