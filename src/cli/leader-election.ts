/**
 * `spool leader-election`: kafka-leader-election.sh on Spool's admin client
 * (ElectLeaders), with its flags, its JSON ({"partitions":[{"topic":"foo",
 * "partition":1}]}) and its output:
 *
 *   Successfully completed leader election (PREFERRED) for partitions t-0, t-1
 *   Valid replica already elected for partitions t-2
 *   Error completing leader election (PREFERRED) for partition: t-3: <exception>
 *
 * exiting 1 with "N replica(s) could not be elected" when some failed.
 * --election-type PREFERRED elects the first replica where it is in sync and
 * another leads; UNCLEAN elects any live replica where none leads. Exactly
 * one of --topic (with --partition), --all-topic-partitions and
 * --path-to-json-file. Not done: --admin.config (docs/SKIPPED.md).
 */
import type { Command } from 'commander';
import { Admin } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import { ElectionType } from '../controller/elections.js';
import { ErrorCode } from '../protocol/errors.js';
import type { TopicPartition } from '../protocol/topic-partition.js';
import { CliError, type CliIo } from './io.js';

interface LeaderElectionFlags {
  bootstrapServer?: string;
  electionType?: string;
  topic?: string;
  partition?: string;
  allTopicPartitions?: boolean;
  pathToJsonFile?: string;
}

const ELECTION_TYPES: ReadonlyMap<string, number> = new Map([
  ['PREFERRED', ElectionType.PREFERRED],
  ['UNCLEAN', ElectionType.UNCLEAN],
]);

export function registerLeaderElection(program: Command, io: CliIo): void {
  program
    .command('leader-election')
    .description('Elect preferred or unclean leaders for partitions (like kafka-leader-election.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to, host:port (required)')
    .option('--election-type <type>', 'PREFERRED: the first replica, where in sync; UNCLEAN: any live replica, where none leads (required)')
    .option('--topic <topic>', 'the topic of the partition to elect for (with --partition)')
    .option('--partition <id>', 'the partition to elect for (with --topic)')
    .option('--all-topic-partitions', 'elect for every partition that needs it')
    .option('--path-to-json-file <file>', 'the partitions to elect for: {"partitions":[{"topic":"foo","partition":1}]}')
    .action(async (flags: LeaderElectionFlags) => {
      const { electionType, partitions } = await parseLeaderElectionFlags(flags, io);
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer!, env: io.env, clientId: 'leader-election-tool' });
      try {
        await runLeaderElection(admin, { electionType, partitions }, io);
      } finally {
        await admin.close();
      }
    });
}

/** Kafka's LeaderElectionCommandOptions.validate, then the partitions from --topic/--partition or the JSON file (null for all). */
async function parseLeaderElectionFlags(flags: LeaderElectionFlags, io: CliIo): Promise<{ electionType: string; partitions: TopicPartition[] | null }> {
  const missing = [flags.bootstrapServer === undefined ? 'bootstrap-server' : null, flags.electionType === undefined ? 'election-type' : null].filter((name) => name !== null);
  if (missing.length > 0) throw new CliError(`Missing required option(s): ${missing.join(', ')}`);
  const electionType = flags.electionType!.toUpperCase();
  if (!ELECTION_TYPES.has(electionType)) throw new CliError(`Unknown election type ${flags.electionType}: expected one of PREFERRED, UNCLEAN`);
  const chosen = [flags.topic !== undefined, flags.allTopicPartitions === true, flags.pathToJsonFile !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw new CliError('One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file');
  if (flags.topic !== undefined && flags.partition === undefined) throw new CliError('Missing required option(s): partition');
  if (flags.topic === undefined && flags.partition !== undefined) throw new CliError('Option partition is only allowed if topic is used');
  if (flags.topic !== undefined) {
    const partition = Number(flags.partition);
    if (!Number.isSafeInteger(partition)) throw new CliError(`Cannot parse argument '${flags.partition}' of option partition`);
    return { electionType, partitions: [{ topic: flags.topic, partition }] };
  }
  if (flags.pathToJsonFile !== undefined) return { electionType, partitions: parseElectionJson((await io.env.fs.readFile(flags.pathToJsonFile)).toString('utf8')) };
  return { electionType, partitions: null };
}

/** Kafka's parseReplicaElectionData: {"partitions":[{"topic","partition"}]}, without duplicates. */
export function parseElectionJson(text: string): TopicPartition[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError('Replica election data is empty');
  }
  const list = (parsed as { partitions?: unknown } | null)?.partitions;
  if (!Array.isArray(list)) throw new CliError('Replica election data is missing "partitions" field');
  const partitions = list.map((entry: unknown) => {
    const { topic, partition } = (entry ?? {}) as { topic?: unknown; partition?: unknown };
    if (typeof topic !== 'string' || typeof partition !== 'number' || !Number.isSafeInteger(partition)) throw new CliError(`Invalid partition entry ${JSON.stringify(entry)}`);
    return { topic, partition };
  });
  const keys = partitions.map((tp) => `${tp.topic}-${tp.partition}`);
  const duplicates = [...new Set(keys.filter((key, i) => keys.indexOf(key) !== i))];
  if (duplicates.length > 0) throw new CliError(`Replica election data contains duplicate partitions: [${duplicates.join(', ')}]`);
  return partitions;
}

async function runLeaderElection(admin: Admin, request: { electionType: string; partitions: TopicPartition[] | null }, io: CliIo): Promise<void> {
  const { electionType } = request;
  let results: Map<string, KafkaError | null>;
  try {
    results = await admin.electLeaders(ELECTION_TYPES.get(electionType)!, request.partitions);
  } catch (error) {
    if (error instanceof KafkaError && error.code === ErrorCode.CLUSTER_AUTHORIZATION_FAILED) {
      io.stdout('Not authorized to perform leader election\n');
      throw new CliError('Not authorized to perform leader election');
    }
    throw error;
  }
  const succeeded: string[] = [];
  const noop: string[] = [];
  const failed: [string, KafkaError][] = [];
  for (const [key, error] of results) {
    if (error === null) succeeded.push(key);
    else if (error.code === ErrorCode.ELECTION_NOT_NEEDED) noop.push(key);
    else failed.push([key, error]);
  }
  if (succeeded.length > 0) io.stdout(`Successfully completed leader election (${electionType}) for partitions ${succeeded.join(', ')}\n`);
  if (noop.length > 0) io.stdout(`Valid replica already elected for partitions ${noop.join(', ')}\n`);
  for (const [key, error] of failed) io.stdout(`Error completing leader election (${electionType}) for partition: ${key}: ${javaException(error)}\n`);
  if (failed.length > 0) throw new CliError(`${failed.length} replica(s) could not be elected`);
}

/** The error as Kafka's tool prints its exception: `org.apache.kafka.common.errors.ElectionNotNeededException: message`. */
function javaException(error: KafkaError): string {
  const className = error.errorName
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
  return `org.apache.kafka.common.errors.${className}Exception: ${error.detail}`;
}
