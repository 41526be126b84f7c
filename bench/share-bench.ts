/**
 * Share-consumer throughput (KIP-932) next to Apache Kafka 4.4, with the
 * Java client's KafkaShareConsumer on both.
 *
 *   npx tsc -p . && node dist/bench/share-bench.js [--records N] [--brokers spool,kafka]
 *
 * For each broker (bench/lib/brokers.ts: the same single-node settings as
 * `npm run bench`): one topic with one partition, N records (default
 * 200,000) of 100 bytes produced by Spool's client (acks=1, 64 KiB
 * batches); then, for 1 and for 4 consumers, a new share group set to
 * share.auto.offset.reset=earliest reads all N records with
 * ShareDriver perf (test/interop/java-client: implicit acknowledgement,
 * the client's defaults, the consumers as threads of one JVM). The figure
 * is records per second from the first record delivered to the last.
 * Prints the figures; asserts nothing.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Admin, Producer } from '../src/client/index.js';
import { argument } from './lib/micro.js';
import { startKafkaBroker, startSpoolBroker, stopAllBrokers, type BrokerKind } from './lib/brokers.js';

const run = promisify(execFile);
const DRIVER_DIR = fileURLToPath(new URL('../../test/interop/java-client/', import.meta.url));
const TOPIC = 'bench-share';
const VALUE_BYTES = 100;
const CONSUMER_COUNTS = [1, 4] as const;

function driver(args: readonly string[]): Promise<{ stdout: string }> {
  return run('java', ['-Xmx1g', '-cp', `${DRIVER_DIR}lib/*:${DRIVER_DIR}classes`, 'ShareDriver', ...args], { maxBuffer: 1 << 24, timeout: 600_000 });
}

async function produce(bootstrap: string, records: number): Promise<void> {
  const producer = new Producer({ bootstrapServers: bootstrap, clientId: 'share-bench', acks: 1, lingerMs: 5, batchSize: 64 * 1024 });
  const value = Buffer.alloc(VALUE_BYTES, 7);
  try {
    for (let sent = 0; sent < records; sent += 10_000) {
      const pending: Promise<unknown>[] = [];
      for (let index = sent; index < Math.min(records, sent + 10_000); index++) pending.push(producer.send({ topic: TOPIC, partition: 0, value }));
      await Promise.all(pending);
    }
  } finally {
    await producer.close();
  }
}

async function measure(kind: BrokerKind, records: number): Promise<Record<number, number>> {
  const dir = join(tmpdir(), `spool-share-bench-${kind}`);
  const broker = kind === 'kafka' ? await startKafkaBroker({ dir }) : await startSpoolBroker({ dir });
  const figures: Record<number, number> = {};
  try {
    const admin = new Admin({ bootstrapServers: broker.bootstrap, clientId: 'share-bench-admin' });
    await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1 }]);
    await admin.close();
    await produce(broker.bootstrap, records);
    for (const consumers of CONSUMER_COUNTS) {
      const group = `bench-share-${consumers}`;
      await driver(['earliest', broker.bootstrap, group]);
      const { stdout } = await driver(['perf', broker.bootstrap, group, TOPIC, String(consumers), String(records)]);
      const elapsedMs = Number(/elapsed_ms (\d+)/.exec(stdout)?.[1]);
      figures[consumers] = Math.round(records / (elapsedMs / 1000));
      console.log(`${kind}: ${consumers} share consumer(s), ${records} records in ${elapsedMs} ms: ${figures[consumers]} records/s`);
    }
  } finally {
    await broker.stop();
  }
  return figures;
}

const records = Number(argument('records', '200000'));
const brokers = argument('brokers', 'spool,kafka').split(',') as BrokerKind[];
try {
  const results = new Map<BrokerKind, Record<number, number>>();
  for (const kind of brokers) results.set(kind, await measure(kind, records));
  console.log('\n| consumers on one partition | Kafka (records/s) | Spool (records/s) | Spool/Kafka |\n| -: | -: | -: | -: |');
  for (const consumers of CONSUMER_COUNTS) {
    const kafka = results.get('kafka')?.[consumers];
    const spool = results.get('spool')?.[consumers];
    const ratio = kafka !== undefined && spool !== undefined ? (spool / kafka).toFixed(2) : '-';
    console.log(`| ${consumers} | ${kafka ?? '-'} | ${spool ?? '-'} | ${ratio} |`);
  }
} finally {
  await stopAllBrokers();
}
