/**
 * @confluentinc/kafka-javascript driver for the client interop scenario
 * (scenario.ts), run as its own process so the native addon stays out of the
 * test runner: `node dist/test/interop/kafka-javascript/driver.js SPEC.json`.
 * The addon and its bundled librdkafka are built by ci-setup.sh here.
 *
 * Uses the package's librdkafka-style API (librdkafka's config names; its
 * KafkaJS-style API has no consumer without a group). Phase "run":
 * AdminClient.createTopic; per codec one idempotent Producer (acks=all,
 * murmur2_random: Java's partitioner for keyed records) produces keyed records
 * with headers and explicit timestamps and flushes, every delivery report
 * checked; a KafkaConsumer assigns every partition from the beginning (no
 * subscribe, no commit) and consumes; offsetsForTimes answers the spec's
 * queries. Phase "delete": listTopics, describeTopics (librdkafka's
 * DescribeTopics), deleteTopic, listTopics. Prints one JSON object.
 */
import { readFileSync } from 'node:fs';
import type { ConsumedRecord, DriverDelete, DriverRun, Header, Spec, SpecBatch } from '../clients/scenario.js';
import { call, kafka, kafkaJavascriptName, type Message, type TopicPartitionOffset } from './rdkafka.js';

const TIMEOUT_MS = 30_000;
const CONSUME_BATCH = 500;
/** librdkafka's RD_KAFKA_OFFSET_BEGINNING. */
const OFFSET_BEGINNING = -2;

async function produceBatch(spec: Spec, batch: SpecBatch): Promise<void> {
  const producer = new kafka.Producer({
    'bootstrap.servers': spec.bootstrap,
    'enable.idempotence': spec.idempotent,
    'acks': 'all',
    'compression.codec': batch.codec,
    'partitioner': 'murmur2_random',
    'linger.ms': 5,
    'dr_cb': true,
  });
  const failures: string[] = [];
  let delivered = 0;
  // Delivery reports reach JS through the addon's own dispatcher, possibly after flush's callback.
  const allDelivered = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${batch.codec}: ${delivered} of ${batch.records.length} delivery reports`)), TIMEOUT_MS);
    producer.on('delivery-report', (error) => {
      if (error !== null && error !== undefined) failures.push(String(error.message));
      if (++delivered < batch.records.length) return;
      clearTimeout(timer);
      resolve();
    });
  });
  await call((done) => producer.connect({ timeout: TIMEOUT_MS }, done));
  producer.setPollInterval(10);
  for (const record of batch.records) {
    const headers = record.headers.map(([name, value]) => ({ [name]: Buffer.from(value) }));
    producer.produce(spec.topic, null, Buffer.from(record.value), Buffer.from(record.key), record.timestamp ?? undefined, undefined, headers);
  }
  await call((done) => producer.flush(TIMEOUT_MS, (error) => done(error, undefined)));
  await allDelivered;
  await call((done) => producer.disconnect(done));
  if (failures.length > 0) throw new Error(`${batch.codec}: delivery failed: ${JSON.stringify(failures)}`);
}

function text(data: Buffer | string | null | undefined): string | null {
  return data === null || data === undefined ? null : data.toString();
}

async function consume(spec: Spec): Promise<{ consumed: ConsumedRecord[]; answers: DriverRun['offsetsForTimes'] }> {
  const consumer = new kafka.KafkaConsumer({ 'bootstrap.servers': spec.bootstrap, 'group.id': 'interop-unused', 'enable.auto.commit': false }, {});
  await call((done) => consumer.connect({ timeout: TIMEOUT_MS }, done));
  const partitions = Array.from({ length: spec.partitions }, (_, partition) => partition);
  consumer.assign(partitions.map((partition) => ({ topic: spec.topic, partition, offset: OFFSET_BEGINNING })));
  const consumed: ConsumedRecord[] = [];
  for (const deadline = Date.now() + TIMEOUT_MS; consumed.length < spec.expectedCount && Date.now() < deadline;) {
    const messages = await call<Message[]>((done) => consumer.consume(CONSUME_BATCH, done));
    for (const message of messages) {
      consumed.push({
        partition: message.partition,
        offset: message.offset,
        key: text(message.key),
        value: text(message.value),
        headers: (message.headers ?? []).flatMap((header) => Object.entries(header).map(([name, value]): Header => [name, text(value) ?? ''])),
        timestamp: message.timestamp ?? -1,
      });
    }
  }
  const answers: DriverRun['offsetsForTimes'] = [];
  for (const timestamp of spec.timestampQueries) {
    const query = partitions.map((partition) => ({ topic: spec.topic, partition, offset: timestamp }));
    const found = await call<TopicPartitionOffset[]>((done) => consumer.offsetsForTimes(query, TIMEOUT_MS, done));
    answers.push(...found.map((answer) => ({ timestamp, partition: answer.partition, offset: answer.offset })));
  }
  await call((done) => consumer.disconnect(done));
  return { consumed, answers };
}

async function run(spec: Spec): Promise<DriverRun> {
  const admin = kafka.AdminClient.create({ 'bootstrap.servers': spec.bootstrap });
  await call((done) => admin.createTopic({ topic: spec.topic, num_partitions: spec.partitions, replication_factor: 1 }, TIMEOUT_MS, (error) => done(error, undefined)));
  admin.disconnect();
  const produceStartMs = Date.now();
  for (const batch of spec.batches) await produceBatch(spec, batch);
  const produceEndMs = Date.now();
  const { consumed, answers } = await consume(spec);
  return { client: kafkaJavascriptName(), consumed, offsetsForTimes: answers, produceStartMs, produceEndMs };
}

const LIST_ATTEMPTS_MAX = 100;

async function remove(spec: Spec): Promise<DriverDelete> {
  const admin = kafka.AdminClient.create({ 'bootstrap.servers': spec.bootstrap });
  const list = (): Promise<string[]> => call<string[]>((done) => admin.listTopics({ timeout: TIMEOUT_MS }, done)).then((topics) => topics.sort());
  const topicsBefore = await list();
  const [described] = await call<{ partitions: unknown[] }[]>((done) => admin.describeTopics([spec.topic], { timeout: TIMEOUT_MS }, done));
  await call((done) => admin.deleteTopic(spec.topic, TIMEOUT_MS, (error) => done(error, undefined)));
  // The controller answers once the delete is committed and brokers apply it asynchronously, as Kafka's do: on a
  // cluster the broker asked next may list the topic a moment longer.
  let topicsAfter = await list();
  for (let attempt = 1; topicsAfter.includes(spec.topic) && attempt < LIST_ATTEMPTS_MAX; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    topicsAfter = await list();
  }
  admin.disconnect();
  return { topicsBefore, describedPartitions: described?.partitions.length ?? -1, topicsAfter };
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[process.argv.length - 1]!, 'utf8')) as Spec;
  const report = spec.phase === 'run' ? await run(spec) : await remove(spec);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`kafka-javascript-driver: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
