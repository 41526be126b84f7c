/**
 * A group member for the group interop tests, written with kafkajs 2.x (classic
 * protocol only; its one built-in assigner is round robin). Run as its own
 * process: `node dist/test/interop/groups/kafkajs-member.js '<config json>'`
 * (config as in group-scenario.ts's MemberConfig).
 *
 * Auto-commit is off: eachBatch prints one line per record, then commits
 * exactly those records (commitOffsets, next offset). The assignment comes
 * from the GROUP_JOIN event (kafkajs rebalances eagerly: each join hands out
 * the full set). One JSON object per line: started, assignment, record,
 * committed, commitFailed, closed. SIGTERM disconnects (leaving the group)
 * and exits 0.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import kafkajs, { type KafkaConfig } from 'kafkajs';
import { emitLine as emit } from './emit-line.js';
import type { MemberConfig } from './members.js';

const { Kafka, logLevel } = kafkajs;
const require = createRequire(import.meta.url);
const { version } = require('kafkajs/package.json') as { version: string };

/** kafkajs's TLS and SASL options for a secured listener (SCRAM-SHA-512, or mTLS with the certificate's files). */
function securityOptions(config: MemberConfig): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const security = config.security;
  if (security === undefined) return {};
  const ca = [readFileSync(security.caPath, 'utf8')];
  if (security.protocol === 'SSL') return { ssl: { ca, cert: readFileSync(security.certPath!, 'utf8'), key: readFileSync(security.keyPath!, 'utf8') } };
  return { ssl: { ca }, sasl: { mechanism: 'scram-sha-512', username: security.username!, password: security.password! } };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[process.argv.length - 1]!) as MemberConfig;
  if (config.protocol !== 'classic') throw new Error('kafkajs has only the classic group protocol');
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: [config.bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 10_000,
    requestTimeout: 30_000,
    ...securityOptions(config),
  });
  const consumer = kafka.consumer({
    groupId: config.group,
    sessionTimeout: config.sessionTimeoutMs,
    heartbeatInterval: config.heartbeatIntervalMs,
    // kafkajs heartbeats between fetches: an idle fetch must return well inside the session timeout.
    maxWaitTimeInMs: 250,
  });
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    const partitions = [...(event.payload.memberAssignment[config.topic] ?? [])].sort((a, b) => a - b);
    emit('assignment', { partitions });
  });
  let stopping: Promise<void> | undefined;
  process.on('SIGTERM', () => {
    stopping ??= consumer.disconnect().then(() => {
      emit('closed');
      process.exit(0);
    });
  });
  emit('started', { client: `kafkajs ${version}` });
  if (config.produce !== undefined) {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: config.topic, acks: -1, messages: config.produce.map((value) => ({ value })) });
    await producer.disconnect();
    emit('produced', { count: config.produce.length });
  }
  await consumer.connect();
  await consumer.subscribe({ topics: [config.topic], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      if (batch.messages.length === 0) return;
      for (const message of batch.messages) emit('record', { partition: batch.partition, offset: Number(message.offset), value: message.value?.toString() });
      const next = Number(batch.messages[batch.messages.length - 1]!.offset) + 1;
      const offsets = [[batch.partition, next]];
      try {
        await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: String(next) }]);
        emit('committed', { offsets });
      } catch (error) {
        emit('commitFailed', { message: String(error), offsets });
      }
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`kafkajs-member: ${String(error)}\n`);
  process.exit(1);
});
