/**
 * Throughput of the produce hot path on batch bytes (DESIGN.md §3.3): for a
 * 1 MiB produce payload of 1 KiB records in 16 KiB uncompressed batches,
 * validate each batch (size, magic, CRC-32C, header rules) and assign
 * offsets in place (setBaseOffset, setPartitionLeaderEpoch). Target: at
 * least 2 GB/s. Also reports, for reference, record decoding and each
 * codec's compress / decompress speed on the same records.
 *
 * Run: npx tsc -p . && node dist/bench/codec-bench.js [--seconds N]
 */
import { performance } from 'node:perf_hooks';
import {
  iterateBatches,
  setBaseOffset,
  setPartitionLeaderEpoch,
  validateBatch,
} from '../src/protocol/records/batch.js';
import { compress, compressionName, decompress } from '../src/protocol/records/compression.js';
import { buildBatch, decodeRecords, encodeRecords, type RecordInput } from '../src/protocol/records/records.js';
import { argSeconds, textLikeValue } from './lib/micro.js';

const PAYLOAD_BYTES = 1 << 20;
const RECORD_VALUE_BYTES = 1024;
const BATCH_BYTES_TARGET = 16 * 1024;
const TARGET_BYTES_PER_SECOND = 2e9;

function recordValue(seed: number): Buffer {
  return textLikeValue(seed, RECORD_VALUE_BYTES);
}

/** Concatenated batches of about 16 KiB each, adding up to about 1 MiB: one produce request's records. */
function producePayload(): Buffer {
  const batches: Buffer[] = [];
  let totalBytes = 0;
  let seed = 1;
  while (totalBytes < PAYLOAD_BYTES) {
    const records: RecordInput[] = [];
    while ((records.length + 1) * (RECORD_VALUE_BYTES + 16) + 61 <= BATCH_BYTES_TARGET) {
      records.push({ key: `key-${seed}`, value: recordValue(seed), timestamp: 1_700_000_000_000 + seed });
      seed++;
    }
    const batch = buildBatch({ records, producerId: 1000, producerEpoch: 0, baseSequence: seed - records.length });
    batches.push(batch);
    totalBytes += batch.length;
  }
  return Buffer.concat(batches);
}

interface Measurement {
  bytesPerSecond: number;
  iterations: number;
}

/** Runs `work` (which handles `bytes` bytes) repeatedly for about `seconds`, after a warm-up. */
function measure(bytes: number, seconds: number, work: () => void): Measurement {
  const warmUpEnd = performance.now() + 200;
  while (performance.now() < warmUpEnd) work();
  let iterations = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  let now = start;
  while (now < end) {
    for (let repeat = 0; repeat < 8; repeat++) work();
    iterations += 8;
    now = performance.now();
  }
  return { bytesPerSecond: (bytes * iterations) / ((now - start) / 1000), iterations };
}

function megabytes(bytesPerSecond: number): string {
  return `${(bytesPerSecond / 1e6).toFixed(0).padStart(7)} MB/s`;
}

function validateAndAssign(payload: Buffer, positions: readonly number[], nextOffset: number): void {
  let offset = nextOffset;
  for (const position of positions) {
    const error = validateBatch(payload, position);
    if (error !== null) throw new Error(`bench payload invalid: ${error.message}`);
    setBaseOffset(payload, position, offset);
    setPartitionLeaderEpoch(payload, position, 7);
    offset += payload.readInt32BE(position + 57);
  }
}

function main(): void {
  const seconds = argSeconds();
  const payload = producePayload();
  const positions = [...iterateBatches(payload)].map((entry) => entry.position);
  console.log(
    `payload: ${payload.length} bytes, ${positions.length} batches of ~${Math.round(payload.length / positions.length)} bytes, ` +
      `${RECORD_VALUE_BYTES}-byte values; node ${process.version}`,
  );

  let logEndOffset = 0;
  const hot = measure(payload.length, seconds, () => {
    validateAndAssign(payload, positions, logEndOffset);
    logEndOffset += 1000;
  });
  const verdict = hot.bytesPerSecond >= TARGET_BYTES_PER_SECOND ? 'meets' : 'BELOW';
  console.log(
    `validate + assign offsets: ${megabytes(hot.bytesPerSecond)} (${verdict} the ${TARGET_BYTES_PER_SECOND / 1e9} GB/s target)`,
  );

  const firstBatch = payload.subarray(positions[0]!, positions[1]!);
  const decode = measure(firstBatch.length, seconds / 2, () => {
    if (decodeRecords(firstBatch).error !== null) throw new Error('decode failed');
  });
  console.log(`decodeRecords (uncompressed): ${megabytes(decode.bytesPerSecond)}`);

  const records = decodeRecords(firstBatch).records!;
  const raw = encodeRecords(
    records.map((record) => ({ key: record.key, value: record.value, timestamp: record.timestamp })),
    { baseTimestamp: records[0]!.timestamp, offsetDeltas: records.map((_, index) => index) },
  );
  for (const compression of [1, 2, 3, 4]) {
    const packed = compress(compression, raw);
    const packSpeed = measure(raw.length, seconds / 4, () => compress(compression, raw));
    const unpackSpeed = measure(raw.length, seconds / 4, () => {
      if (!Buffer.isBuffer(decompress(compression, packed))) throw new Error('decompress failed');
    });
    console.log(
      `${compressionName(compression)!.padEnd(6)} ratio ${(raw.length / packed.length).toFixed(2)}  ` +
        `compress ${megabytes(packSpeed.bytesPerSecond)}  decompress ${megabytes(unpackSpeed.bytesPerSecond)}`,
    );
  }
}

main();
