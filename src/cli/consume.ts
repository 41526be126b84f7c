/**
 * `spool consume`: kafka-console-consumer.sh. Without --group it assigns the
 * topic's partitions (or --partition) itself; with --group it joins that
 * consumer group (group.protocol from --consumer-property, classic by
 * default), starts at the group's committed offsets (else --from-beginning /
 * latest), commits as it goes (enable.auto.commit) and on exit. Prints each record through Kafka's
 * DefaultMessageFormatter rules: optional CreateTime:ts, Partition:p,
 * Offset:o, headers (k:v,k2:v2 or NO_HEADERS) and key, each followed by
 * key.separator, then the value and line.separator. Ends after
 * --max-messages, after --timeout-ms without a record, or on SIGINT/SIGTERM,
 * printing "Processed a total of N messages" to stderr.
 */
import type { Command } from 'commander';
import { Consumer, type ConsumerOptions, type ConsumerRecord } from '../client/consumer.js';
import type { TopicPartition } from '../client/cluster.js';
import { applyConsumerProperties, parseIsolationLevel } from './client-config.js';
import { CliError, collect, DEFAULT_BOOTSTRAP_SERVER, parseKeyValues, type CliIo } from './io.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';

interface ConsumeFlags {
  bootstrapServer: string;
  topic?: string;
  partition?: string;
  offset: string;
  fromBeginning?: boolean;
  maxMessages?: string;
  timeoutMs?: string;
  property: string[];
  formatterProperty: string[];
  consumerProperty: string[];
  isolationLevel: string;
  group?: string;
}

export interface FormatterSettings {
  printTimestamp: boolean;
  printKey: boolean;
  printOffset: boolean;
  printPartition: boolean;
  printHeaders: boolean;
  printValue: boolean;
  keySeparator: string;
  lineSeparator: string;
  headersSeparator: string;
  headersKeySeparator: string;
  nullLiteral: string;
}

const isTrue = (value: string | undefined): boolean => value?.trim().toLowerCase() === 'true';

export function formatterSettings(properties: ReadonlyMap<string, string>): FormatterSettings {
  return {
    printTimestamp: isTrue(properties.get('print.timestamp')),
    printKey: isTrue(properties.get('print.key')),
    printOffset: isTrue(properties.get('print.offset')),
    printPartition: isTrue(properties.get('print.partition')),
    printHeaders: isTrue(properties.get('print.headers')),
    printValue: properties.get('print.value')?.trim().toLowerCase() !== 'false',
    keySeparator: properties.get('key.separator') ?? '\t',
    lineSeparator: properties.get('line.separator') ?? '\n',
    headersSeparator: properties.get('headers.separator') ?? ',',
    headersKeySeparator: properties.get('headers.key.separator') ?? ':',
    nullLiteral: properties.get('null.literal') ?? 'null',
  };
}

/** One record as Kafka's DefaultMessageFormatter writes it. */
export function formatRecord(record: ConsumerRecord, settings: FormatterSettings): string {
  const columns: string[] = [];
  const text = (value: Buffer | null): string => (value === null ? settings.nullLiteral : value.toString('utf8'));
  if (settings.printTimestamp) columns.push(record.timestamp >= 0 ? `${record.timestampType}:${record.timestamp}` : 'NO_TIMESTAMP');
  if (settings.printPartition) columns.push(`Partition:${record.partition}`);
  if (settings.printOffset) columns.push(`Offset:${record.offset}`);
  if (settings.printHeaders) {
    columns.push(record.headers.length === 0 ? 'NO_HEADERS' : record.headers.map((h) => `${h.key}${settings.headersKeySeparator}${text(h.value)}`).join(settings.headersSeparator));
  }
  if (settings.printKey) columns.push(text(record.key));
  if (settings.printValue) columns.push(text(record.value));
  return columns.join(settings.keySeparator) + settings.lineSeparator;
}

export function registerConsume(program: Command, io: CliIo): void {
  program
    .command('consume')
    .description('Print records of a topic (like kafka-console-consumer.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--topic <topic>', 'the topic to consume')
    .option('--partition <partition>', 'consume only this partition')
    .option('--offset <offset>', 'with --partition: earliest, latest or an offset', 'latest')
    .option('--from-beginning', 'start at the earliest offset instead of the latest')
    .option('--max-messages <count>', 'exit after this many records')
    .option('--timeout-ms <ms>', 'exit when no record arrived for this long')
    .option('--property <name=value>', 'formatter property: print.timestamp, print.key, print.offset, print.partition, print.headers, print.value, key.separator, line.separator, headers.separator, headers.key.separator, null.literal (repeatable)', collect, [])
    .option('--formatter-property <name=value>', 'same as --property', collect, [])
    .option('--consumer-property <name=value>', 'a consumer config, e.g. fetch.min.bytes=1 (repeatable)', collect, [])
    .option('--isolation-level <level>', 'read_committed or read_uncommitted', 'read_uncommitted')
    .option('--group <group>', 'consume as a member of this consumer group, committing its offsets')
    .action(async (flags: ConsumeFlags) => {
      const plan = consumePlan(flags);
      const settings = formatterSettings(parseKeyValues([...flags.property, ...flags.formatterProperty]));
      const options: ConsumerOptions = {
        bootstrapServers: flags.bootstrapServer,
        env: io.env,
        clientId: 'console-consumer',
        isolationLevel: parseIsolationLevel(flags.isolationLevel),
        autoOffsetReset: plan.start === 'earliest' ? 'earliest' : 'latest',
        ...(plan.group === null ? {} : { groupId: plan.group }),
      };
      const properties = parseKeyValues(flags.consumerProperty);
      const fromProperty = properties.get('group.id');
      if (plan.group !== null && fromProperty !== undefined && fromProperty !== plan.group) {
        throw new CliError(`Group id specified multiple times: --group ${plan.group} and --consumer-property group.id=${fromProperty}`);
      }
      const consumer = new Consumer(applyConsumerProperties(options, properties));
      try {
        const count = await consumeLoop(consumer, plan, settings, io);
        io.stderr(`Processed a total of ${count} messages\n`);
      } finally {
        await consumer.close();
      }
    });
}

export interface ConsumePlan {
  topic: string;
  partition: number | null;
  start: 'earliest' | 'latest' | number;
  maxMessages: number;
  timeoutMs: number | null;
  group: string | null;
}

/** Checks the flags as Kafka's ConsoleConsumerOptions does. */
export function consumePlan(flags: ConsumeFlags): ConsumePlan {
  if (flags.topic === undefined) throw new CliError('Exactly one of --include/--topic is required.');
  const partition = flags.partition === undefined ? null : Number(flags.partition);
  if (partition !== null && !(Number.isInteger(partition) && partition >= 0)) throw new CliError(`Invalid partition ${flags.partition}`);
  const offsetGiven = flags.offset !== 'latest';
  if (offsetGiven && partition === null) throw new CliError('The partition is required when offset is specified.');
  if (offsetGiven && flags.fromBeginning === true) throw new CliError("Options from-beginning and offset cannot be specified together.");
  let start: ConsumePlan['start'] = flags.fromBeginning === true ? 'earliest' : 'latest';
  if (flags.offset === 'earliest') start = 'earliest';
  else if (flags.offset !== 'latest') {
    if (!/^\d+$/.test(flags.offset)) throw new CliError(`The provided offset value '${flags.offset}' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.`);
    start = Number(flags.offset);
  }
  return {
    topic: flags.topic,
    partition,
    start,
    maxMessages: flags.maxMessages === undefined ? Infinity : Number(flags.maxMessages),
    timeoutMs: flags.timeoutMs === undefined ? null : Number(flags.timeoutMs),
    group: flags.group ?? null,
  };
}

/** With --group, the offsets committed on exit must not cover records left unprinted by --max-messages. */
function rewindUnprinted(consumer: Consumer, unprinted: readonly ConsumerRecord[]): void {
  const first = new Map<string, ConsumerRecord>();
  for (const record of unprinted) {
    const key = topicPartitionKey(record);
    if (!first.has(key)) first.set(key, record);
  }
  for (const record of first.values()) consumer.seek({ topic: record.topic, partition: record.partition }, record.offset);
}

async function consumeLoop(consumer: Consumer, plan: ConsumePlan, settings: FormatterSettings, io: CliIo): Promise<number> {
  if (plan.group !== null && plan.partition === null) {
    consumer.subscribe([plan.topic]);
  } else {
    const partitions: TopicPartition[] = plan.partition !== null
      ? [{ topic: plan.topic, partition: plan.partition }]
      : (await consumer.cluster.retry(() => consumer.cluster.topic(plan.topic))).partitions.map((p) => ({ topic: plan.topic, partition: p.partition }));
    consumer.assign(partitions);
    if (typeof plan.start === 'number') consumer.seek(partitions[0]!, plan.start);
  }
  let stopped = false;
  void io.untilSignal().then(() => { stopped = true; });
  const clock = io.env.clock;
  let lastRecordMs = clock.monotonicMs();
  let count = 0;
  while (!stopped && count < plan.maxMessages) {
    const records = await consumer.poll(plan.timeoutMs === null ? 1000 : Math.min(1000, plan.timeoutMs));
    const printed = records.slice(0, plan.maxMessages - count);
    for (const record of printed) io.stdout(formatRecord(record, settings));
    if (plan.group !== null) rewindUnprinted(consumer, records.slice(printed.length));
    count += printed.length;
    if (records.length > 0) lastRecordMs = clock.monotonicMs();
    else if (plan.timeoutMs !== null && clock.monotonicMs() - lastRecordMs >= plan.timeoutMs) break;
  }
  return count;
}
