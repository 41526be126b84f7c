/**
 * Kafka client property names (as --producer-property / --consumer-property
 * and the console tools take them) mapped onto Spool's client options.
 * Unknown names are refused, so a typo does not pass silently.
 */
import type { ConsumerOptions } from '../client/consumer.js';
import type { ProducerOptions, Acks } from '../client/producer.js';
import type { CompressionName } from '../protocol/records/compression.js';
import { CliError } from './io.js';

type Setter<T> = (options: T, value: string) => void;

function int(name: string, value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new CliError(`Invalid value ${value} for configuration ${name}: Not a number`);
  return Number(value.trim());
}

function bool(name: string, value: string): boolean {
  const lower = value.trim().toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw new CliError(`Invalid value ${value} for configuration ${name}: Expected value to be either true or false`);
  return lower === 'true';
}

const COMMON = {
  'client.id': (o, v) => { o.clientId = v; },
  'request.timeout.ms': (o, v) => { o.requestTimeoutMs = int('request.timeout.ms', v); },
  'retry.backoff.ms': (o, v) => { o.retryBackoffMs = int('retry.backoff.ms', v); },
  'retry.backoff.max.ms': (o, v) => { o.retryBackoffMaxMs = int('retry.backoff.max.ms', v); },
  'metadata.max.age.ms': (o, v) => { o.metadataMaxAgeMs = int('metadata.max.age.ms', v); },
  'bootstrap.servers': (o, v) => { o.bootstrapServers = v; },
} satisfies Record<string, Setter<ProducerOptions & ConsumerOptions>>;

const PRODUCER: Record<string, Setter<ProducerOptions>> = {
  ...COMMON,
  acks: (o, v) => { o.acks = parseAcks(v); },
  'batch.size': (o, v) => { o.batchSize = int('batch.size', v); },
  'linger.ms': (o, v) => { o.lingerMs = int('linger.ms', v); },
  'compression.type': (o, v) => { o.compression = parseCompression(v); },
  'enable.idempotence': (o, v) => { o.idempotence = bool('enable.idempotence', v); },
  retries: (o, v) => { o.retries = int('retries', v); },
  'delivery.timeout.ms': (o, v) => { o.deliveryTimeoutMs = int('delivery.timeout.ms', v); },
  'max.request.size': (o, v) => { o.maxRequestSize = int('max.request.size', v); },
  'buffer.memory': (o, v) => { o.bufferMemory = int('buffer.memory', v); },
  'max.block.ms': (o, v) => { o.maxBlockMs = int('max.block.ms', v); },
  'max.in.flight.requests.per.connection': (o, v) => { o.inFlightRequestsMax = int('max.in.flight.requests.per.connection', v); },
  'partitioner.ignore.keys': (o, v) => { o.partitionerIgnoreKeys = bool('partitioner.ignore.keys', v); },
  'allow.auto.create.topics': (o, v) => { o.allowAutoTopicCreation = bool('allow.auto.create.topics', v); },
};

const CONSUMER: Record<string, Setter<ConsumerOptions>> = {
  ...COMMON,
  'isolation.level': (o, v) => { o.isolationLevel = parseIsolationLevel(v); },
  'fetch.min.bytes': (o, v) => { o.fetchMinBytes = int('fetch.min.bytes', v); },
  'fetch.max.wait.ms': (o, v) => { o.fetchMaxWaitMs = int('fetch.max.wait.ms', v); },
  'fetch.max.bytes': (o, v) => { o.fetchMaxBytes = int('fetch.max.bytes', v); },
  'max.partition.fetch.bytes': (o, v) => { o.maxPartitionFetchBytes = int('max.partition.fetch.bytes', v); },
  'max.poll.records': (o, v) => { o.maxPollRecords = int('max.poll.records', v); },
  'group.id': (o, v) => { o.groupId = v; },
  'group.protocol': (o, v) => {
    const protocol = v.trim().toLowerCase();
    if (protocol !== 'classic' && protocol !== 'consumer') throw new CliError(`Invalid value ${v} for configuration group.protocol: String must be one of (case insensitive): CLASSIC, CONSUMER`);
    o.groupProtocol = protocol;
  },
  'group.instance.id': (o, v) => { o.groupInstanceId = v; },
  'group.remote.assignor': (o, v) => { o.groupRemoteAssignor = v; },
  'session.timeout.ms': (o, v) => { o.sessionTimeoutMs = int('session.timeout.ms', v); },
  'heartbeat.interval.ms': (o, v) => { o.heartbeatIntervalMs = int('heartbeat.interval.ms', v); },
  'max.poll.interval.ms': (o, v) => { o.rebalanceTimeoutMs = int('max.poll.interval.ms', v); },
  'enable.auto.commit': (o, v) => { o.enableAutoCommit = bool('enable.auto.commit', v); },
  'auto.commit.interval.ms': (o, v) => { o.autoCommitIntervalMs = int('auto.commit.interval.ms', v); },
  // Kafka names assignors by class; Spool's client knows the built-in ones by their short names too.
  'partition.assignment.strategy': (o, v) => {
    o.partitionAssignmentStrategy = v.split(',').map((name) => name.trim()).filter((name) => name !== '').map((name) => ASSIGNOR_CLASSES[name] ?? name);
  },
  'auto.offset.reset': (o, v) => {
    if (v !== 'earliest' && v !== 'latest' && v !== 'none') throw new CliError(`Invalid value ${v} for configuration auto.offset.reset`);
    o.autoOffsetReset = v;
  },
};

const ASSIGNOR_CLASSES: Record<string, string> = {
  'org.apache.kafka.clients.consumer.RangeAssignor': 'range',
  'org.apache.kafka.clients.consumer.RoundRobinAssignor': 'roundrobin',
  'org.apache.kafka.clients.consumer.CooperativeStickyAssignor': 'cooperative-sticky',
};

export function parseAcks(value: string): Acks {
  const text = value.trim();
  if (text === 'all' || text === '-1') return 'all';
  if (text === '0') return 0;
  if (text === '1') return 1;
  throw new CliError(`Invalid value ${value} for configuration acks: String must be one of: all, -1, 0, 1`);
}

export function parseCompression(value: string): CompressionName {
  const text = value.trim();
  if (text === 'none' || text === 'gzip' || text === 'snappy' || text === 'lz4' || text === 'zstd') return text;
  throw new CliError(`Invalid value ${value} for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd`);
}

export function parseIsolationLevel(value: string): 'read_uncommitted' | 'read_committed' {
  const text = value.trim().toLowerCase();
  if (text === 'read_uncommitted' || text === 'read_committed') return text;
  throw new CliError(`Invalid value ${value} for configuration isolation.level: String must be one of: read_committed, read_uncommitted`);
}

function apply<T>(table: Record<string, Setter<T>>, options: T, properties: ReadonlyMap<string, string>, kind: string): T {
  for (const [name, value] of properties) {
    const setter = table[name];
    if (setter === undefined) throw new CliError(`Unknown ${kind} property ${name}`);
    setter(options, value);
  }
  return options;
}

export function applyProducerProperties(options: ProducerOptions, properties: ReadonlyMap<string, string>): ProducerOptions {
  return apply(PRODUCER, options, properties, 'producer');
}

export function applyConsumerProperties(options: ConsumerOptions, properties: ReadonlyMap<string, string>): ConsumerOptions {
  return apply(CONSUMER, options, properties, 'consumer');
}
