/**
 * `spool transactions`: kafka-transactions.sh (Kafka 4.4's
 * TransactionsCommand, KIP-664) on Spool's admin client. Same subcommands,
 * flags, checks, messages and columns (ToolsUtils.prettyPrintTable):
 *
 *   list [--duration-filter ms]
 *   describe --transactional-id id
 *   describe-producers --topic t --partition p [--broker-id b]
 *   find-hanging (--topic t [--partition p] | --broker-id b) [--max-transaction-timeout min]
 *   abort --topic t --partition p (--start-offset o | --producer-id --producer-epoch --coordinator-epoch)
 *
 * --bootstrap-server may come before or after the subcommand. As in Kafka,
 * a failure prints its message on stderr and exits 1. Not done:
 * --command-config (docs/SKIPPED.md).
 */
import type { Command } from 'commander';
import { Admin, type AbortTransactionSpec, type ProducerState } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import { javaHashOrder } from '../client/group-sticky-assignor.js';
import { ErrorCode } from '../protocol/errors.js';
import type { TopicPartition } from '../protocol/topic-partition.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, prettyPrintTable, type CliIo } from './io.js';

interface TransactionsFlags {
  bootstrapServer?: string;
  durationFilter?: string;
  transactionalId?: string;
  topic?: string;
  partition?: string;
  brokerId?: string;
  maxTransactionTimeout?: string;
  startOffset?: string;
  producerId?: string;
  producerEpoch?: string;
  coordinatorEpoch?: string;
}

/** FindHangingTransactionsCommand's MAX_BATCH_SIZE: partitions per DescribeProducers round. */
const FIND_HANGING_BATCH_MAX = 500;
const MAX_TRANSACTION_TIMEOUT_MINUTES_DEFAULT = '15';
const MS_PER_MINUTE = 60_000;

const LIST_HEADERS = ['TransactionalId', 'Coordinator', 'ProducerId', 'TransactionState'];
const DESCRIBE_HEADERS = ['CoordinatorId', 'TransactionalId', 'ProducerId', 'ProducerEpoch', 'TransactionState', 'TransactionTimeoutMs', 'CurrentTransactionStartTimeMs', 'TransactionDurationMs', 'TopicPartitions'];
const PRODUCERS_HEADERS = ['ProducerId', 'ProducerEpoch', 'LatestCoordinatorEpoch', 'LastSequence', 'LastTimestamp', 'CurrentTransactionStartOffset'];
const HANGING_HEADERS = ['Topic', 'Partition', 'ProducerId', 'ProducerEpoch', 'CoordinatorEpoch', 'StartOffset', 'LastTimestamp', 'Duration(min)'];

type Action = (admin: Admin, flags: TransactionsFlags, io: CliIo) => Promise<void>;

export function registerTransactions(program: Command, io: CliIo): void {
  const transactions = withBootstrap(program.command('transactions'))
    .description('Analyze the transactional state of producers; detect and abort hanging transactions (like kafka-transactions.sh)');
  const sub = (name: string, description: string, action: Action): Command =>
    withBootstrap(transactions.command(name).description(description)).action(async (_flags: TransactionsFlags, command: Command) => {
      const flags = command.optsWithGlobals<TransactionsFlags>();
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer ?? DEFAULT_BOOTSTRAP_SERVER, env: io.env, clientId: 'spool-transactions' });
      try {
        await action(admin, flags, io);
      } finally {
        await admin.close();
      }
    });
  sub('list', 'list transactions', list)
    .option('--duration-filter <ms>', 'Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned');
  sub('describe', 'describe the state of an active transactional-id', describe)
    .requiredOption('--transactional-id <id>', 'transactional id');
  sub('describe-producers', 'describe the states of active producers for a topic partition', describeProducers)
    .option('--broker-id <id>', 'optional broker id to describe the producer state on a specific replica')
    .requiredOption('--topic <topic>', 'topic name')
    .requiredOption('--partition <partition>', 'partition number');
  sub('abort', 'abort a hanging transaction (requires administrative privileges)', abort)
    .requiredOption('--topic <topic>', 'topic name')
    .requiredOption('--partition <partition>', 'partition number')
    .option('--start-offset <offset>', 'start offset of the transaction to abort')
    .option('--producer-id <id>', 'producer id')
    .option('--producer-epoch <epoch>', 'producer epoch')
    .option('--coordinator-epoch <epoch>', 'coordinator epoch');
  sub('find-hanging', 'find hanging transactions', findHanging)
    .option('--broker-id <id>', 'broker id to search for hanging transactions')
    .option('--max-transaction-timeout <minutes>', 'maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)', MAX_TRANSACTION_TIMEOUT_MINUTES_DEFAULT)
    .option('--topic <topic>', 'topic name to limit search to (required if --partition is specified)')
    .option('--partition <partition>', 'partition number');
}

function withBootstrap(command: Command): Command {
  return command.option('--bootstrap-server <host:port>', 'hostname and port for the broker to connect to, in the form `host:port` (multiple comma-separated entries can be given)');
}

/** argparse4j's conversion of an Integer / Long / Short argument, with its message. */
function integer(flag: string, text: string | undefined, type: 'Integer' | 'Long' | 'Short'): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  const bits = type === 'Short' ? 15 : type === 'Integer' ? 31 : 63;
  if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || Math.abs(value) > 2 ** bits) {
    throw new CliError(`argument --${flag}: could not convert '${text}' to ${type}`);
  }
  return value;
}

/** TransactionsCommand.printErrorAndExit(message, cause). */
function failed(message: string, error: unknown): never {
  if (!(error instanceof KafkaError)) throw error;
  throw new CliError(`${message}: ${error.detail}. Enable debug logging for additional detail.`);
}

const topicPartitionText = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`;

async function list(admin: Admin, flags: TransactionsFlags, io: CliIo): Promise<void> {
  const durationFilterMs = integer('duration-filter', flags.durationFilter, 'Long');
  const byBroker = await admin.listTransactions(durationFilterMs === undefined ? {} : { durationFilterMs }).catch((error: unknown) => failed('Failed to list transactions', error));
  const rows = [...byBroker].flatMap(([brokerId, listings]) => listings.map((l) => [l.transactionalId, String(brokerId), String(l.producerId), l.state]));
  io.stdout(prettyPrintTable(LIST_HEADERS, rows));
}

async function describe(admin: Admin, flags: TransactionsFlags, io: CliIo): Promise<void> {
  const transactionalId = flags.transactionalId!;
  const described = await admin.describeTransaction(transactionalId).catch((error: unknown) => failed(`Failed to describe transaction state of transactional-id \`${transactionalId}\``, error));
  const startMs = described.transactionStartTimeMs;
  io.stdout(prettyPrintTable(DESCRIBE_HEADERS, [[
    String(described.coordinatorId),
    transactionalId,
    String(described.producerId),
    String(described.producerEpoch),
    described.state,
    String(described.transactionTimeoutMs),
    startMs === null ? 'None' : String(startMs),
    startMs === null ? 'None' : String(io.env.clock.nowMs() - startMs),
    described.topicPartitions.map(topicPartitionText).join(','),
  ]]));
}

async function describeProducers(admin: Admin, flags: TransactionsFlags, io: CliIo): Promise<void> {
  const brokerId = integer('broker-id', flags.brokerId, 'Integer');
  const topicPartition = { topic: flags.topic!, partition: integer('partition', flags.partition, 'Integer')! };
  const producers = await admin.describeProducers(topicPartition, brokerId === undefined ? {} : { brokerId }).catch((error: unknown) =>
    failed(`Failed to describe producers for partition ${topicPartitionText(topicPartition)} on ${brokerId === undefined ? 'leader' : `broker ${brokerId}`}`, error));
  io.stdout(prettyPrintTable(PRODUCERS_HEADERS, producers.map((p) => [
    String(p.producerId),
    String(p.producerEpoch),
    String(p.coordinatorEpoch ?? -1),
    String(p.lastSequence),
    String(p.lastTimestamp),
    p.currentTransactionStartOffset === null ? 'None' : String(p.currentTransactionStartOffset),
  ])));
}

async function abort(admin: Admin, flags: TransactionsFlags): Promise<void> {
  const topicPartition = { topic: flags.topic!, partition: integer('partition', flags.partition, 'Integer')! };
  const startOffset = integer('start-offset', flags.startOffset, 'Long');
  const producerId = integer('producer-id', flags.producerId, 'Long');
  const producerEpoch = integer('producer-epoch', flags.producerEpoch, 'Short');
  const coordinatorEpoch = integer('coordinator-epoch', flags.coordinatorEpoch, 'Integer');
  if (startOffset === undefined && producerId === undefined) {
    throw new CliError('The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)');
  }
  let spec: AbortTransactionSpec;
  if (startOffset === undefined) {
    if (producerEpoch === undefined) throw new CliError('Missing required argument --producer-epoch');
    if (coordinatorEpoch === undefined) throw new CliError('Missing required argument --coordinator-epoch');
    // As Kafka: a hanging transaction of a producer id that never completed one shows coordinator epoch -1; 0 is at most any real one.
    spec = { ...topicPartition, producerId: producerId!, producerEpoch, coordinatorEpoch: Math.max(0, coordinatorEpoch) };
  } else {
    const producers = await admin.describeProducers(topicPartition).catch((error: unknown) => failed(`Failed to validate producer state for partition ${topicPartitionText(topicPartition)}`, error));
    const open = producers.find((p) => p.currentTransactionStartOffset === startOffset);
    if (open === undefined) throw new CliError(`Could not find any open transactions starting at offset ${startOffset} on partition ${topicPartitionText(topicPartition)}`);
    spec = { ...topicPartition, producerId: open.producerId, producerEpoch: open.producerEpoch, coordinatorEpoch: open.coordinatorEpoch ?? 0 };
  }
  await admin.abortTransaction(spec).catch((error: unknown) =>
    failed(`Failed to abort transaction AbortTransactionSpec(topicPartition=${topicPartitionText(spec)}, producerId=${spec.producerId}, producerEpoch=${spec.producerEpoch}, coordinatorEpoch=${spec.coordinatorEpoch})`, error));
}

interface OpenTransaction {
  topicPartition: TopicPartition;
  producer: ProducerState;
}

async function findHanging(admin: Admin, flags: TransactionsFlags, io: CliIo): Promise<void> {
  const brokerId = integer('broker-id', flags.brokerId, 'Integer');
  const partition = integer('partition', flags.partition, 'Integer');
  const maxTimeoutMs = integer('max-transaction-timeout', flags.maxTransactionTimeout, 'Integer')! * MS_PER_MINUTE;
  if (flags.topic === undefined && brokerId === undefined) throw new CliError('The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search');
  if (partition !== undefined && flags.topic === undefined) throw new CliError('The --partition argument requires --topic to be provided');
  const partitions = await partitionsToSearch(admin, { topic: flags.topic, partition, brokerId });
  const candidates: OpenTransaction[] = [];
  for (let start = 0; start < partitions.length; start += FIND_HANGING_BATCH_MAX) {
    const batch = partitions.slice(start, start + FIND_HANGING_BATCH_MAX);
    const nowMs = io.env.clock.nowMs();
    for (const topicPartition of batch) {
      const producers = await admin.describeProducers(topicPartition, brokerId === undefined ? {} : { brokerId }).catch((error: unknown) =>
        failed(`Failed to describe producers for ${batch.length} partitions on broker ${brokerId === undefined ? 'Optional.empty' : `Optional[${brokerId}]`}`, error));
      for (const producer of producers) {
        if (producer.currentTransactionStartOffset !== null && nowMs - producer.lastTimestamp > maxTimeoutMs) candidates.push({ topicPartition, producer });
      }
    }
  }
  const hanging = candidates.length === 0 ? [] : await filterHanging(admin, candidates);
  const nowMs = io.env.clock.nowMs();
  io.stdout(prettyPrintTable(HANGING_HEADERS, hanging.map(({ topicPartition, producer }) => [
    topicPartition.topic,
    String(topicPartition.partition),
    String(producer.producerId),
    String(producer.producerEpoch),
    String(producer.coordinatorEpoch ?? -1),
    String(producer.currentTransactionStartOffset ?? -1),
    String(producer.lastTimestamp),
    String(Math.trunc((nowMs - producer.lastTimestamp) / MS_PER_MINUTE)),
  ])));
}

/** The partitions find-hanging looks at: one, a topic's, or every topic's, kept to those with a replica on `brokerId` when given. */
async function partitionsToSearch(admin: Admin, scope: { topic: string | undefined; partition: number | undefined; brokerId: number | undefined }): Promise<TopicPartition[]> {
  if (scope.topic !== undefined && scope.partition !== undefined) return [{ topic: scope.topic, partition: scope.partition }];
  const topics = scope.topic !== undefined ? [scope.topic] : await admin.listTopics({ listInternal: true }).catch((error: unknown) => failed('Failed to list topics', error));
  const described = await admin.describeTopics(topics).catch((error: unknown) => failed(`Failed to describe ${topics.length} topics`, error));
  return described.flatMap((topic) => topic.partitions
    .filter((p) => scope.brokerId === undefined || p.replicas.includes(scope.brokerId))
    .map((p) => ({ topic: topic.name, partition: p.partition })));
}

/** Java's Long.hashCode, for a safe integer. */
function javaLongHash(value: number): number {
  return ((value >>> 0) ^ Math.floor(value / 2 ** 32)) | 0;
}

/**
 * Kafka's filterHangingTransactions: an open transaction is hanging when no
 * transactional id owns its producer id, the id is gone, or its
 * coordinator does not list the partition (it will never write the marker).
 * Producers come in Java HashMap order, as Kafka prints them.
 */
async function filterHanging(admin: Admin, candidates: readonly OpenTransaction[]): Promise<OpenTransaction[]> {
  const producerIds = javaHashOrder([...new Set(candidates.map((c) => c.producer.producerId))], javaLongHash);
  const listed = await admin.listTransactions({ producerIds }).catch((error: unknown) => failed(`Failed to list transactions for ${producerIds.length} producers`, error));
  const transactionalIds = new Map<number, string>();
  for (const listing of [...listed.values()].flat()) if (producerIds.includes(listing.producerId)) transactionalIds.set(listing.producerId, listing.transactionalId);
  const hanging: OpenTransaction[] = [];
  for (const producerId of producerIds) {
    const open = candidates.filter((c) => c.producer.producerId === producerId);
    const transactionalId = transactionalIds.get(producerId);
    if (transactionalId === undefined) {
      hanging.push(...open);
      continue;
    }
    const description = await admin.describeTransaction(transactionalId).catch((error: unknown) => {
      if (error instanceof KafkaError && error.code === ErrorCode.TRANSACTIONAL_ID_NOT_FOUND) return null;
      return failed(`Failed to describe ${transactionalIds.size} transactions`, error);
    });
    if (description === null) {
      hanging.push(...open);
      continue;
    }
    const listedPartitions = new Set(description.topicPartitions.map(topicPartitionText));
    hanging.push(...open.filter((c) => !listedPartitions.has(topicPartitionText(c.topicPartition))));
  }
  return hanging;
}
