/**
 * A group member for the group interop tests, written with
 * @confluentinc/kafka-javascript's librdkafka-style KafkaConsumer (the addon
 * built by test/interop/kafka-javascript/ci-setup.sh). Run as its own process:
 * `node dist/test/interop/groups/kafka-javascript-member.js '<config json>'`
 * (config as in members.ts's MemberConfig).
 *
 * Classic protocol (session.timeout.ms, heartbeat.interval.ms,
 * partition.assignment.strategy) or group.protocol=consumer (KIP-848,
 * group.remote.assignor). librdkafka applies every rebalance itself (no
 * rebalance callback). Auto-commit is off: after each consume call the member
 * prints its assignment when it changed, one line per record of a partition it
 * holds, and then commits exactly those records (next offset per partition)
 * with commitSync. SIGTERM
 * disconnects (closes the consumer, leaving the group) and exits 0.
 */
import { call, kafka, kafkaJavascriptName, type Config, type Message } from '../kafka-javascript/rdkafka.js';
import { emitLine as emit } from './emit-line.js';
import type { MemberConfig, MemberSecurity } from './members.js';

const CONSUME_BATCH = 500;
/** How long one consume call waits for records: the member re-checks SIGTERM in between. */
const CONSUME_WAIT_MS = 200;

/** librdkafka's settings for a secured listener: SCRAM-SHA-512 over TLS, or mTLS with the certificate's files. */
function securityConfig(security: MemberSecurity | undefined): Config {
  if (security === undefined) return {};
  if (security.protocol === 'SSL') {
    return { 'security.protocol': 'ssl', 'ssl.ca.location': security.caPath, 'ssl.certificate.location': security.certPath!, 'ssl.key.location': security.keyPath! };
  }
  return { 'security.protocol': 'sasl_ssl', 'ssl.ca.location': security.caPath, 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.username': security.username!, 'sasl.password': security.password! };
}

/** Produces `values` (no key, acks=all) and waits for every delivery report. */
async function produce(config: MemberConfig, values: readonly string[]): Promise<void> {
  const producer = new kafka.Producer({ 'bootstrap.servers': config.bootstrap, 'client.id': config.clientId, acks: -1, dr_cb: true, ...securityConfig(config.security) });
  let reported = 0;
  const failures: string[] = [];
  const delivered = new Promise<void>((resolve) => {
    producer.on('delivery-report', (error) => {
      if (error !== null && error !== undefined) failures.push(String(error));
      if (++reported === values.length) resolve();
    });
  });
  await call((done) => producer.connect({ timeout: 30_000 }, done));
  producer.setPollInterval(10);
  for (const value of values) producer.produce(config.topic, null, Buffer.from(value), Buffer.alloc(0), undefined, undefined, []);
  await call((done) => producer.flush(30_000, (error) => done(error, undefined)));
  await delivered;
  await call((done) => producer.disconnect(done));
  if (failures.length > 0) throw new Error(`delivery failed: ${failures.join('; ')}`);
}

function consumerConfig(config: MemberConfig): Config {
  const common: Config = {
    ...securityConfig(config.security),
    'bootstrap.servers': config.bootstrap,
    'group.id': config.group,
    'client.id': config.clientId,
    'enable.auto.commit': false,
    'group.protocol': config.protocol,
  };
  if (config.protocol === 'consumer') return config.assignor === null ? common : { ...common, 'group.remote.assignor': config.assignor };
  return {
    ...common,
    'session.timeout.ms': config.sessionTimeoutMs,
    'heartbeat.interval.ms': config.heartbeatIntervalMs,
    ...(config.assignor === null ? {} : { 'partition.assignment.strategy': config.assignor }),
  };
}

/** Next offset per partition for the records just printed. */
function nextOffsets(messages: readonly Message[]): [number, number][] {
  const next = new Map<number, number>();
  for (const message of messages) next.set(message.partition, Math.max(next.get(message.partition) ?? 0, message.offset + 1));
  return [...next].sort((a, b) => a[0] - b[0]);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[process.argv.length - 1]!) as MemberConfig;
  let stopping = false;
  process.on('SIGTERM', () => { stopping = true; });
  const consumer = new kafka.KafkaConsumer(consumerConfig(config), { 'auto.offset.reset': 'earliest' });
  consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
  emit('started', { client: kafkaJavascriptName() });
  if (config.produce !== undefined) {
    await produce(config, config.produce);
    emit('produced', { count: config.produce.length });
  }
  await call((done) => consumer.connect({}, done));
  consumer.subscribe([config.topic]);
  let shown: string | undefined;
  while (!stopping) {
    const fetched = await call<Message[]>((done) => consumer.consume(CONSUME_BATCH, done)).catch((error: unknown) => {
      emit('clientError', { message: String(error) });
      return [];
    });
    // The assignment first: records of a partition assigned during this call follow its line.
    const assigned = consumer.assignments().map((tp) => tp.partition).sort((a, b) => a - b);
    if (JSON.stringify(assigned) !== shown) {
      shown = JSON.stringify(assigned);
      emit('assignment', { partitions: assigned });
    }
    // The addon gathers a batch on a worker thread while librdkafka rebalances on its own: a record
    // fetched before its partition was revoked may arrive after. Not processed nor committed, it goes
    // to the partition's next owner, as in an application that handles only what it holds.
    const held = fetched.filter((message) => assigned.includes(message.partition));
    for (const message of held) emit('record', { partition: message.partition, offset: message.offset, value: message.value?.toString() });
    if (held.length === 0) continue;
    const offsets = nextOffsets(held);
    try {
      consumer.commitSync(offsets.map(([partition, offset]) => ({ topic: config.topic, partition, offset })));
      emit('committed', { offsets });
    } catch (error) {
      emit('commitFailed', { message: String(error), offsets });
    }
  }
  await call((done) => consumer.disconnect(done));
  emit('closed');
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`kafka-javascript-member: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
