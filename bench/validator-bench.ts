/**
 * Throughput of the leader's produce validation (record-validator.ts
 * validateLeaderBatch) on realistic batches: 1000 records of 100-byte values
 * with 8-byte keys and one header, per codec. Every record is read (and,
 * compressed, inflated) on each call; the batch keeps its codec, as with
 * compression.type=producer. Prints batches, records and MB of batch bytes
 * (compressed size for codecs) per second of CPU time (process.cpuUsage, so
 * other load on a shared machine counts less), best of several rounds. Not
 * a test: asserts nothing.
 *
 * Run: npx tsc -p . && node dist/bench/validator-bench.js [--seconds N]
 */
import { performance } from 'node:perf_hooks';
import { buildBatch, type RecordInput } from '../src/protocol/records/records.js';
import { validateLeaderBatch, type LeaderValidationConfig } from '../src/replication/record-validator.js';
import { argSeconds, textLikeValue } from './lib/micro.js';

const RECORDS_PER_BATCH = 1000;
const RECORD_VALUE_BYTES = 100;
const NOW_MS = 1_700_000_000_000;
const CODECS = [['none', 0], ['gzip', 1], ['snappy', 2], ['lz4', 3], ['zstd', 4]] as const;

const config: LeaderValidationConfig = {
  maxMessageBytes: 1_048_588,
  compacted: false,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: Infinity,
  messageTimestampAfterMaxMs: 3_600_000,
  compressionType: 'producer',
};

function records(): RecordInput[] {
  return Array.from({ length: RECORDS_PER_BATCH }, (_, index) => ({
    key: `key-${String(index).padStart(4, '0')}`,
    value: textLikeValue(index + 1, RECORD_VALUE_BYTES),
    headers: [{ key: 'trace', value: `t${index}` }],
    timestamp: NOW_MS + index,
  }));
}

const ROUNDS = 5;

/** Best batches per CPU-second over ROUNDS rounds of `seconds` / ROUNDS each. */
function measure(batch: Buffer, seconds: number): { batchesPerSecond: number } {
  const options = { config, nowMs: NOW_MS, leaderEpoch: 1 };
  for (let warm = 0; warm < 200; warm++) validateLeaderBatch(batch, options);
  let best = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let calls = 0;
    const cpuStart = process.cpuUsage();
    const deadline = performance.now() + (seconds * 1000) / ROUNDS;
    while (performance.now() < deadline) {
      for (let index = 0; index < 20; index++) {
        const result = validateLeaderBatch(batch, options);
        if (!('validated' in result)) throw new Error(`batch refused: ${result.error.message}`);
      }
      calls += 20;
    }
    const cpu = process.cpuUsage(cpuStart);
    best = Math.max(best, (calls * 1e6) / (cpu.user + cpu.system));
  }
  return { batchesPerSecond: best };
}

const seconds = argSeconds();
const input = records();
console.log(`validateLeaderBatch, ${RECORDS_PER_BATCH} records x ${RECORD_VALUE_BYTES} B per batch, ${seconds} s per codec, per CPU-second`);
for (const [name, compression] of CODECS) {
  const batch = buildBatch({ records: input, compression, producerId: 7, producerEpoch: 0, baseSequence: 0 });
  const { batchesPerSecond } = measure(batch, seconds);
  const recordsPerSecond = batchesPerSecond * RECORDS_PER_BATCH;
  const megabytesPerSecond = (batchesPerSecond * batch.length) / 1e6;
  console.log(
    `${name.padEnd(7)} batch ${String(batch.length).padStart(7)} B  ${batchesPerSecond.toFixed(0).padStart(7)} batches/s  ` +
      `${(recordsPerSecond / 1e6).toFixed(2).padStart(6)} M records/s  ${megabytesPerSecond.toFixed(0).padStart(6)} MB/s`,
  );
}
