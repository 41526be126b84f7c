/**
 * Apache Kafka's system-test clients, as ducktape runs them:
 * org.apache.kafka.tools.VerifiableProducer and VerifiableConsumer from the
 * kafka-tools 4.4.0 jar (test/interop/kafka/lib, through kafka.sh tool).
 * Each prints one JSON event a line; they are parsed into the checker's
 * history as they arrive:
 * - producer_send_success {value, topic, partition, offset} → an ok send;
 *   producer_send_error → a send of unknown outcome (with idempotence and
 *   unbounded retries it means the delivery timeout passed);
 * - consumer record_data {value, topic, partition, offset} lines, closed by
 *   the records_consumed summary of their poll → one poll;
 *   partitions_assigned / partitions_revoked → an assignment change.
 *
 * The producers run idempotent with acks=all (values "PREFIX.N", unique per
 * producer); the consumers share one group and commit after every poll.
 *
 * Test code, not product code: child processes and node:fs directly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KAFKA_INTEROP_DIR } from '../interop/kafka/kafka.js';
import type { HistoryEvent, PollRecord } from './history-checker.js';
import { acknowledgedIn, type Workload } from './workload.js';

const PRODUCER = 'org.apache.kafka.tools.VerifiableProducer';
const CONSUMER = 'org.apache.kafka.tools.VerifiableConsumer';
/** Short-lived tool JVMs start faster with C1 only and the serial collector. */
const TOOL_OPTS = '-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC';
const EXIT_WAIT_MS = 150_000;

const PRODUCER_CONFIG = [
  'enable.idempotence=true',
  'acks=all',
  'retries=2147483647',
  'max.in.flight.requests.per.connection=5',
  'linger.ms=5',
  'request.timeout.ms=5000',
  'delivery.timeout.ms=120000',
  'retry.backoff.ms=100',
  'reconnect.backoff.max.ms=1000',
];

const CONSUMER_CONFIG = [
  'request.timeout.ms=5000',
  'retry.backoff.ms=100',
  'reconnect.backoff.max.ms=1000',
  'heartbeat.interval.ms=1000',
];

interface Tool {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr(): string;
}

function startTool(name: string, mainClass: string, args: readonly string[], onEvent: (event: Record<string, unknown>) => void): Tool {
  const child = spawn(join(KAFKA_INTEROP_DIR, 'kafka.sh'), ['tool', mainClass, ...args], {
    env: { ...process.env, KAFKA_TOOL_OPTS: TOOL_OPTS },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let partial = '';
  let stderr = '';
  child.stdout!.on('data', (data: Buffer) => {
    const lines = (partial + data.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      onEvent(JSON.parse(line) as Record<string, unknown>);
    }
  });
  child.stderr!.on('data', (data: Buffer) => { stderr = (stderr + data.toString()).slice(-8000); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, exited, stderr: () => stderr };
}

/** SIGTERM (the tools' shutdown hooks flush and close), SIGKILL if that does not end it in time. */
async function stopTool(tool: Tool): Promise<void> {
  tool.child.kill('SIGTERM');
  const timer = setTimeout(() => tool.child.kill('SIGKILL'), EXIT_WAIT_MS);
  try {
    await tool.exited;
  } finally {
    clearTimeout(timer);
  }
}

export interface VerifiableWorkloadOptions {
  bootstrapServers: string;
  topic: string;
  /** Where the clients' property files go. */
  dir: string;
  producers: number;
  consumers: number;
  /** Messages a second, per producer. */
  throughput: number;
}

export function startVerifiableWorkload(options: VerifiableWorkloadOptions): Workload & { describe(): string } {
  const history: HistoryEvent[] = [];
  const producerConfig = join(options.dir, 'producer.properties');
  const consumerConfig = join(options.dir, 'consumer.properties');
  writeFileSync(producerConfig, PRODUCER_CONFIG.join('\n') + '\n');
  writeFileSync(consumerConfig, CONSUMER_CONFIG.join('\n') + '\n');
  const server = ['--bootstrap-server', options.bootstrapServers, '--topic', options.topic];
  const producers = Array.from({ length: options.producers }, (_, index) => {
    const name = `producer-${index + 1}`;
    return startTool(name, PRODUCER, [...server, '--acks', '-1', '--throughput', String(options.throughput), '--max-messages', '-1',
      '--value-prefix', String(index + 1), '--producer.config', producerConfig], (event) => onProducerEvent(history, name, event));
  });
  const consumers = Array.from({ length: options.consumers }, (_, index) => {
    const name = `consumer-${index + 1}`;
    const pending: PollRecord[] = [];
    return startTool(name, CONSUMER, [...server, '--group-id', `${options.topic}-verifiable`, '--verbose', '--reset-policy', 'earliest',
      '--session-timeout', '10000', '--max-messages', '-1', '--consumer.config', consumerConfig], (event) => onConsumerEvent(history, name, pending, event));
  });
  return {
    history,
    acknowledged: () => acknowledgedIn(history),
    stopProducers: async () => { await Promise.all(producers.map(stopTool)); },
    stopConsumers: async () => { await Promise.all(consumers.map(stopTool)); },
    describe: () => [...producers, ...consumers].map((tool) => `---- ${tool.name} (exit ${tool.child.exitCode})\n${tool.stderr()}`).join('\n'),
  };
}

function onProducerEvent(history: HistoryEvent[], process: string, event: Record<string, unknown>): void {
  if (event.name === 'producer_send_success') {
    history.push({ type: 'send', process, value: String(event.value), outcome: 'ok', topic: String(event.topic), partition: Number(event.partition), offset: Number(event.offset) });
  } else if (event.name === 'producer_send_error') {
    history.push({ type: 'send', process, value: String(event.value), outcome: 'info', error: `${String(event.exception)}: ${String(event.message)}` });
  }
}

function onConsumerEvent(history: HistoryEvent[], process: string, pending: PollRecord[], event: Record<string, unknown>): void {
  if (event.name === 'record_data') {
    pending.push({ topic: String(event.topic), partition: Number(event.partition), offset: Number(event.offset), value: String(event.value) });
  } else if (event.name === 'records_consumed') {
    history.push({ type: 'poll', process, records: pending.splice(0) });
  } else if (event.name === 'partitions_assigned' || event.name === 'partitions_revoked') {
    history.push({ type: 'assign', process });
  }
}
