/**
 * Property: on random logs (random batch sizes, record counts, timestamps
 * that go backwards, codecs, index intervals and segment sizes), every
 * offset lookup, timestamp lookup and max-timestamp lookup agrees with a
 * brute-force scan of what was appended, before and after a reopen (clean,
 * and unclean with rebuilt indexes). Seeded; the seed is in the test name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SeededRandom } from '../../src/io/random.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { MAX_TIMESTAMP, type Log } from '../../src/storage/log.js';
import { BASE_TIMESTAMP_MS, headersOf, openLog, simEnv } from './helpers.js';

const SEED = 20261129;
const LOGS = 40;
const LOOKUPS_PER_LOG = 60;

interface AppendedRecord {
  offset: number;
  timestamp: number;
}

interface AppendedBatchInfo {
  baseOffset: number;
  lastOffset: number;
}

async function randomLog(random: SeededRandom) {
  const env = simEnv(random.nextInt(1 << 30));
  const config = {
    indexIntervalBytes: 1 + random.nextInt(3000),
    segmentBytes: 3000 + random.nextInt(8000),
    segmentIndexBytes: 8 * (2 + random.nextInt(40)),
  };
  const log = await openLog(env, config);
  const records: AppendedRecord[] = [];
  const batches: AppendedBatchInfo[] = [];
  let clockMs = BASE_TIMESTAMP_MS;
  const batchCount = 5 + random.nextInt(120);
  for (let b = 0; b < batchCount; b++) {
    const count = 1 + random.nextInt(8);
    const timestamps = Array.from({ length: count }, () => (clockMs += random.nextInt(40) - 12));
    const compression = random.nextInt(4) === 0 ? 1 : 0;
    const batch = buildBatch({
      records: timestamps.map((timestamp, i) => ({ key: null, value: random.bytes(random.nextInt(300)), timestamp: timestamp + i })),
      compression,
    });
    const info = await log.append(batch, { leaderEpoch: 0, assignOffsets: true });
    batches.push({ baseOffset: info.firstOffset, lastOffset: info.lastOffset });
    timestamps.forEach((timestamp, i) => records.push({ offset: info.firstOffset + i, timestamp: timestamp + i }));
  }
  return { env, log, records, batches, config };
}

function expectedBatchFor(batches: readonly AppendedBatchInfo[], offset: number): AppendedBatchInfo | undefined {
  return batches.find((batch) => batch.lastOffset >= offset);
}

function expectedByTimestamp(records: readonly AppendedRecord[], target: number): AppendedRecord | undefined {
  return records.find((record) => record.timestamp >= target);
}

async function checkLookups(log: Log, random: SeededRandom, records: AppendedRecord[], batches: AppendedBatchInfo[], label: string) {
  const lastOffset = records.at(-1)!.offset;
  for (let i = 0; i < LOOKUPS_PER_LOG; i++) {
    const offset = random.nextInt(lastOffset + 1);
    const read = await log.read(offset, { maxBytes: 1 + random.nextInt(2000), minOneMessage: true });
    assert.equal(headersOf(read.records)[0]?.baseOffset, expectedBatchFor(batches, offset)!.baseOffset, `${label}: read at ${offset}`);
    const first = records[0]!.timestamp;
    const target = first - 50 + random.nextInt(records.at(-1)!.timestamp - first + 200);
    const found = await log.fetchOffsetByTimestamp(target);
    const expected = expectedByTimestamp(records, target);
    assert.deepEqual(
      found === null ? null : { offset: found.offset, timestamp: found.timestamp },
      expected === undefined ? null : { offset: expected.offset, timestamp: expected.timestamp },
      `${label}: timestamp ${target}`,
    );
  }
  const maxTimestamp = Math.max(...records.map((r) => r.timestamp));
  const max = await log.fetchOffsetByTimestamp(MAX_TIMESTAMP);
  const expectedMax = records.find((r) => r.timestamp === maxTimestamp)!;
  assert.deepEqual({ offset: max!.offset, timestamp: max!.timestamp }, expectedMax, `${label}: max timestamp`);
}

describe('offset and timestamp lookups agree with a brute-force scan', () => {
  it(`random logs, seed ${SEED}`, async () => {
    const random = new SeededRandom(SEED);
    for (let n = 0; n < LOGS; n++) {
      const { env, log, records, batches, config } = await randomLog(random);
      const label = `seed ${SEED} log ${n} ${JSON.stringify(config)}`;
      await checkLookups(log, random, records, batches, `${label} live`);
      await log.close();
      await checkLookups(await openLog(env, config, { hadCleanShutdown: true }), random, records, batches, `${label} clean reopen`);
      await checkLookups(await openLog(env, config, { recoveryPoint: 0 }), random, records, batches, `${label} recovered`);
    }
  });
});
