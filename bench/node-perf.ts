/**
 * The Node.js load generator of `npm run bench`: Spool's own client
 * (src/client) in a process of its own, so the harness can drive Apache Kafka
 * and Spool with the same Node-to-broker path it drives them with Kafka's
 * ProducerPerformance / ConsumerPerformance. Prints one JSON line on stdout.
 *
 *   node dist/bench/node-perf.js produce --bootstrap H:P --topic T --record-size 1024
 *        --warmup-s 3 --duration-s 15 --acks 1 [--idempotence] --batch-size 65536
 *        --linger-ms 5 [--round-robin]
 *     Sends as fast as buffer.memory allows for warm-up + duration seconds and
 *     counts the acknowledgements that arrive during the measured window.
 *   node dist/bench/node-perf.js consume --bootstrap H:P --topic T --records N --timeout-s S
 *     Reads every partition from the beginning (manual assignment, no group)
 *     until N records arrived.
 *   node dist/bench/node-perf.js e2e-produce --bootstrap H:P --topic T --rate R --record-size 1024
 *        --warmup-s W --duration-s D [producer options as for produce]
 *   node dist/bench/node-perf.js e2e-consume --bootstrap H:P --topic T --records N --timeout-s S
 *     Fixed-rate end-to-end latency: record i is due at start + i / R and
 *     carries that time (process.hrtime, CLOCK_MONOTONIC, so comparable
 *     across processes of one machine) and a flag saying whether it is past
 *     the warm-up; a late sender catches up without moving the schedule, so a
 *     stall shows up as latency (no coordinated omission). The consumer prints
 *     "ready" once positioned, then the latency percentiles.
 *
 * Benchmark code, not product code: it uses timers and the clock directly.
 */
import { parseArgs } from 'node:util';
import { Admin, Consumer, Producer, type ProducerOptions } from '../src/client/index.js';

const ARGS = parseArgs({
  allowPositionals: true,
  options: {
    bootstrap: { type: 'string' },
    topic: { type: 'string' },
    'record-size': { type: 'string', default: '1024' },
    'warmup-s': { type: 'string', default: '3' },
    'duration-s': { type: 'string', default: '15' },
    acks: { type: 'string', default: '1' },
    idempotence: { type: 'boolean', default: false },
    'batch-size': { type: 'string', default: '65536' },
    'linger-ms': { type: 'string', default: '5' },
    'round-robin': { type: 'boolean', default: false },
    records: { type: 'string' },
    'timeout-s': { type: 'string', default: '120' },
    rate: { type: 'string' },
  },
});

const OPTIONS = ARGS.values;
const BOOTSTRAP = required('bootstrap');
const TOPIC = required('topic');
/** Value bytes in flight at once (buffer.memory of the Java producer). */
const BUFFER_MEMORY_BYTES = 32 * 1024 * 1024;
/** The first bytes of an end-to-end record: due time (int64 ns) and a measured flag. */
const E2E_HEADER_BYTES = 9;

function required(name: 'bootstrap' | 'topic' | 'records' | 'rate'): string {
  const value = OPTIONS[name];
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

function num(name: 'record-size' | 'warmup-s' | 'duration-s' | 'batch-size' | 'linger-ms' | 'timeout-s' | 'records' | 'rate'): number {
  const value = Number(OPTIONS[name]);
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number`);
  return value;
}

function producerOptions(): ProducerOptions {
  const acks = OPTIONS.acks === 'all' || OPTIONS.acks === '-1' ? 'all' : Number(OPTIONS.acks) as 0 | 1;
  let next = 0;
  return {
    bootstrapServers: BOOTSTRAP,
    clientId: 'spool-bench-node',
    acks,
    idempotence: OPTIONS.idempotence,
    batchSize: num('batch-size'),
    lingerMs: num('linger-ms'),
    bufferMemory: BUFFER_MEMORY_BYTES,
    ...(OPTIONS['round-robin'] ? { partitioner: ({ partitionCount }) => next++ % partitionCount } : {}),
  };
}

/** Random upper-case letters, as ProducerPerformance fills its payload. */
function payload(sizeBytes: number): Buffer {
  const out = Buffer.alloc(sizeBytes);
  for (let i = 0; i < sizeBytes; i++) out[i] = 65 + Math.floor(Math.random() * 26);
  return out;
}

function nowNs(): bigint {
  return process.hrtime.bigint();
}

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Throughput: keeps buffer.memory full of unacknowledged records and counts
 * the acks of the measured window, which opens at the end of the warm-up or
 * at the first ack, whichever is later (a producer that needs seconds for its
 * first ack, e.g. waiting for a producer id, is reported as firstAckS).
 */
async function produce(): Promise<object> {
  const recordSize = num('record-size');
  const value = payload(recordSize);
  const producer = new Producer(producerOptions());
  const windowRecords = Math.max(1, Math.floor(BUFFER_MEMORY_BYTES / (recordSize + 70)));
  const durationMs = num('duration-s') * 1000;
  const startMs = performance.now();
  const giveUpMs = startMs + num('warmup-s') * 1000 + durationMs * 2;
  let measureFromMs = startMs + num('warmup-s') * 1000;
  let endMs = measureFromMs + durationMs;
  let firstAckMs: number | null = null;
  let inFlight = 0;
  let sent = 0;
  let acked = 0;
  let errors = 0;
  let firstError: string | null = null;
  let wake: (() => void) | null = null;
  const settle = (): void => {
    inFlight--;
    if (wake !== null && inFlight < windowRecords) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const onAck = (): void => {
    const t = performance.now();
    if (firstAckMs === null) {
      firstAckMs = t;
      if (t > measureFromMs) {
        measureFromMs = t;
        endMs = t + durationMs;
      }
    }
    if (t >= measureFromMs && t < endMs) acked++;
    settle();
  };
  while (performance.now() < (firstAckMs === null ? giveUpMs : endMs)) {
    if (inFlight >= windowRecords) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        // Wake up now and then to notice the end of the window without an ack.
        setTimeout(resolve, 100);
      });
      continue;
    }
    inFlight++;
    sent++;
    producer.send({ topic: TOPIC, value }).then(onAck, (error: unknown) => {
      errors++;
      firstError ??= String(error);
      settle();
    });
    // Let acknowledgements and the sender run now and then.
    if ((sent & 1023) === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const measuredS = durationMs / 1000;
  // Records still buffered are abandoned: waiting for them would only delay the next scenario.
  await Promise.race([producer.close().catch(() => undefined), sleepMs(2000)]);
  return {
    records: acked,
    recordsPerS: acked / measuredS,
    mibPerS: (acked * recordSize) / measuredS / 1048576,
    measuredS,
    firstAckS: firstAckMs === null ? null : (firstAckMs - startMs) / 1000,
    errors,
    firstError,
  };
}

async function partitionsOf(topic: string): Promise<number[]> {
  const admin = new Admin({ bootstrapServers: BOOTSTRAP, clientId: 'spool-bench-node-admin' });
  try {
    const [description] = await admin.describeTopics([topic]);
    return (description?.partitions ?? []).map((p) => p.partition);
  } finally {
    await admin.close();
  }
}

async function positionedConsumer(): Promise<Consumer> {
  const consumer = new Consumer({ bootstrapServers: BOOTSTRAP, clientId: 'spool-bench-node-consumer', autoOffsetReset: 'earliest', maxPollRecords: 10_000 });
  const partitions = await partitionsOf(TOPIC);
  consumer.assign(partitions.map((partition) => ({ topic: TOPIC, partition })));
  consumer.seekToBeginning();
  for (const partition of partitions) await consumer.position({ topic: TOPIC, partition });
  return consumer;
}

/** Consume throughput: N records from the beginning. */
async function consume(): Promise<object> {
  const target = num('records');
  const consumer = await positionedConsumer();
  const deadlineMs = performance.now() + num('timeout-s') * 1000;
  const startMs = performance.now();
  let records = 0;
  let bytes = 0;
  let lastRecordMs = startMs;
  while (records < target && performance.now() < deadlineMs) {
    const batch = await consumer.poll(1000);
    for (const record of batch) {
      records++;
      bytes += (record.value?.length ?? 0) + (record.key?.length ?? 0);
    }
    if (batch.length > 0) lastRecordMs = performance.now();
  }
  await consumer.close();
  const seconds = (lastRecordMs - startMs) / 1000;
  return { records, bytes, seconds, recordsPerS: records / seconds, mibPerS: bytes / seconds / 1048576, complete: records >= target };
}

/** Fixed-rate sender for end-to-end latency. */
async function e2eProduce(): Promise<object> {
  const rate = num('rate');
  const recordSize = Math.max(E2E_HEADER_BYTES, num('record-size'));
  const warmupRecords = Math.floor(num('warmup-s') * rate);
  const total = warmupRecords + Math.floor(num('duration-s') * rate);
  const intervalNs = BigInt(Math.round(1e9 / rate));
  const pad = payload(recordSize);
  const producer = new Producer(producerOptions());
  await producer.cluster.refreshMetadata([TOPIC]);
  const startNs = nowNs() + 100_000_000n;
  let errors = 0;
  let maxLagNs = 0n;
  for (let i = 0; i < total;) {
    const now = nowNs();
    const dueNs = startNs + BigInt(i) * intervalNs;
    if (now < dueNs) {
      await sleepMs(Math.max(0, Number(dueNs - now) / 1e6 - 0.5));
      continue;
    }
    // Send every record that is due by now, each stamped with its own due time.
    while (i < total && startNs + BigInt(i) * intervalNs <= now) {
      const due = startNs + BigInt(i) * intervalNs;
      if (now - due > maxLagNs) maxLagNs = now - due;
      const value = Buffer.from(pad);
      value.writeBigInt64BE(due, 0);
      value[8] = i >= warmupRecords ? 1 : 0;
      producer.send({ topic: TOPIC, value }).catch(() => { errors++; });
      i++;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await producer.close().catch(() => undefined);
  return { sentRecords: total, errors, senderMaxLagMs: Number(maxLagNs) / 1e6 };
}

/** Receives the fixed-rate records and prints latency percentiles of the measured ones. */
async function e2eConsume(): Promise<object> {
  const total = num('records');
  const consumer = await positionedConsumer();
  process.stdout.write('ready\n');
  const deadlineMs = performance.now() + num('timeout-s') * 1000;
  const latenciesNs: number[] = [];
  let received = 0;
  while (received < total && performance.now() < deadlineMs) {
    const batch = await consumer.poll(100);
    const now = nowNs();
    for (const record of batch) {
      if (record.value === null || record.value.length < E2E_HEADER_BYTES) continue;
      received++;
      if (record.value[8] === 1) latenciesNs.push(Number(now - record.value.readBigInt64BE(0)));
    }
  }
  await consumer.close();
  const sorted = Float64Array.from(latenciesNs).sort();
  const at = (q: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! / 1e6);
  return {
    receivedRecords: received,
    measuredRecords: sorted.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    maxMs: at(1),
  };
}

async function main(): Promise<void> {
  const mode = ARGS.positionals[0];
  const run = mode === 'produce' ? produce : mode === 'consume' ? consume : mode === 'e2e-produce' ? e2eProduce : mode === 'e2e-consume' ? e2eConsume : null;
  if (run === null) throw new Error(`unknown mode ${String(mode)} (produce | consume | e2e-produce | e2e-consume)`);
  process.stdout.write(JSON.stringify(await run()) + '\n');
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`node-perf: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
