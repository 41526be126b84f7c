/**
 * Seeded fuzz of the leader append path with mutated produce batches
 * (flipped bytes anywhere in header or records, truncations, trailing
 * garbage, every codec). Invariants: appendRecords never throws, every
 * answer is NONE or a Kafka error a client can act on (never
 * UNKNOWN_SERVER_ERROR), and the log afterwards holds exactly the accepted
 * batches: each one read back passes its CRC, offsets are contiguous, and the
 * high watermark equals the records accepted. Prints the seed on failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realEnv } from '../../src/io/env.js';
import { SeededRandom } from '../../src/io/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { iterateBatches, validateBatch } from '../../src/protocol/records/batch.js';
import { BrokerConfig } from '../../src/server/config.js';
import { silentLogger } from '../../src/server/logger.js';
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

test(`mutated produce batches never crash the append path and never corrupt the log (seed ${SEED})`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-fuzz-'));
  const registration: PartitionRegistration = {
    topicId: 'AAAAAAAAAAAAAAAAAAAAAg', topicName: 'fuzz', partition: 0, replicas: [1], isr: [1], elr: [], lastKnownElr: [],
    removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0,
  };
  const topic: TopicImage = { name: 'fuzz', id: registration.topicId, partitions: new Map([[0, registration]]), configs: new Map() };
  const image: MetadataImage = {
    offset: 1, clusterId: 'fuzz', topicsByName: new Map([['fuzz', topic]]), topicsById: new Map([[topic.id, topic]]), brokers: new Map(),
    features: new Map(), brokerConfigs: new Map(), controllers: new Map(), nextProducerId: 0,
  };
  const manager = new ReplicaManager({ nodeId: 1, config: BrokerConfig.fromObject({ 'log.dirs': dir }), env: realEnv, log: silentLogger, metadata: { image } });
  await manager.start();
  t.after(async () => { await manager.stop(); await rm(dir, { recursive: true, force: true }); });
  await manager.onMetadataUpdate({ changedPartitions: [registration], deletedTopics: [], changedTopicConfigs: [], brokersChanged: false, changedFeatures: new Map(), offset: 1 }, image);

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
