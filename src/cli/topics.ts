/**
 * `spool topics`: kafka-topics.sh on Spool's admin client. Same flags, same
 * output: "Created topic t.", one name per line for --list, and for
 * --describe a topic line (TopicId, PartitionCount, ReplicationFactor,
 * non-default Configs) followed by one tab-indented line per partition.
 */
import type { Command } from 'commander';
import { Admin, type PartitionReassignment, type ReplicaOffsets, type TopicDescription } from '../client/admin.js';
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { topicPartitionKey } from '../protocol/topic-partition.js';
import { KafkaError } from '../client/errors.js';
import { CliError, collect, DEFAULT_BOOTSTRAP_SERVER, parseKeyValues, type CliIo } from './io.js';

interface TopicsFlags {
  bootstrapServer: string;
  create?: boolean;
  list?: boolean;
  describe?: boolean;
  alter?: boolean;
  delete?: boolean;
  topic?: string;
  partitions?: string;
  replicationFactor?: string;
  replicaAssignment?: string;
  config: string[];
  ifExists?: boolean;
  ifNotExists?: boolean;
  excludeInternal?: boolean;
  replicaOffsets?: boolean;
}

export function registerTopics(program: Command, io: CliIo): void {
  program
    .command('topics')
    .description('Create, list, describe, alter and delete topics (like kafka-topics.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--create', 'create a new topic')
    .option('--list', 'list all topics')
    .option('--describe', 'describe topics (all, or those matching --topic)')
    .option('--alter', 'raise the partition count of a topic')
    .option('--delete', 'delete a topic')
    .option('--topic <topic>', 'topic name (a regular expression for --list, --describe, --delete, --alter)')
    .option('--partitions <count>', 'partition count for --create or --alter')
    .option('--replication-factor <count>', 'replication factor for --create')
    .option('--replica-assignment <list>', 'explicit replicas: partitions separated by ",", brokers by ":" (e.g. 1:2,2:3)')
    .option('--config <name=value>', 'a topic config override for --create (repeatable)', collect, [])
    .option('--if-exists', 'with --alter, --describe or --delete: do nothing if the topic is missing')
    .option('--if-not-exists', 'with --create: do nothing if the topic exists')
    .option('--exclude-internal', 'leave internal topics out of --list and --describe')
    .option('--replica-offsets', "with --describe: each replica's log start, log end offset, high watermark and lag behind the leader (Spool's own)")
    .action(async (flags: TopicsFlags) => {
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-topics' });
      try {
        await runTopics(admin, flags, io);
      } catch (error) {
        if (error instanceof KafkaError || error instanceof CliError) throw new CliError(`Error while executing topic command : ${error instanceof KafkaError ? error.detail : error.message}`);
        throw error;
      } finally {
        await admin.close();
      }
    });
}

async function runTopics(admin: Admin, flags: TopicsFlags, io: CliIo): Promise<void> {
  const actions = (['create', 'list', 'describe', 'alter', 'delete'] as const).filter((name) => flags[name] === true);
  if (actions.length !== 1) throw new CliError('Command must include exactly one action: --list, --describe, --create, --alter or --delete');
  switch (actions[0]) {
    case 'create':
      return createTopic(admin, flags, io);
    case 'list':
      for (const name of await matchingTopics(admin, flags)) io.stdout(`${name}\n`);
      return;
    case 'describe':
      return describeTopics(admin, flags, io);
    case 'alter':
      return alterTopic(admin, flags);
    case 'delete':
      return deleteTopic(admin, flags);
  }
}

function requireTopic(flags: TopicsFlags): string {
  if (flags.topic === undefined) throw new CliError('Missing required argument "[topic]"');
  return flags.topic;
}

function positiveInt(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text)) throw new CliError(`Invalid value for ${name}: ${text}`);
  return Number(text);
}

/** Kafka's --replica-assignment: "1:2,2:3" -> partition 0 on brokers 1,2; partition 1 on 2,3. */
export function parseReplicaAssignment(text: string): Record<number, number[]> {
  const out: Record<number, number[]> = {};
  text.split(',').forEach((replicas, partition) => {
    out[partition] = replicas.split(':').map((id) => {
      if (!/^\d+$/.test(id.trim())) throw new CliError(`Invalid replica assignment ${text}`);
      return Number(id.trim());
    });
  });
  return out;
}

async function createTopic(admin: Admin, flags: TopicsFlags, io: CliIo): Promise<void> {
  const name = requireTopic(flags);
  const numPartitions = positiveInt(flags.partitions, '--partitions');
  const replicationFactor = positiveInt(flags.replicationFactor, '--replication-factor');
  if (name.includes('.') || name.includes('_')) {
    io.stdout("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\n");
  }
  try {
    await admin.createTopics([{
      name,
      ...(numPartitions === undefined ? {} : { numPartitions }),
      ...(replicationFactor === undefined ? {} : { replicationFactor }),
      ...(flags.replicaAssignment === undefined ? {} : { replicaAssignment: parseReplicaAssignment(flags.replicaAssignment) }),
      configs: Object.fromEntries(parseKeyValues(flags.config)),
    }]);
  } catch (error) {
    if (flags.ifNotExists === true && error instanceof KafkaError && error.errorName === 'TOPIC_ALREADY_EXISTS') return;
    throw error;
  }
  io.stdout(`Created topic ${name}.\n`);
}

/** Topics matching --topic as a whole-name regular expression (Kafka's include list), or all. */
async function matchingTopics(admin: Admin, flags: TopicsFlags): Promise<string[]> {
  const all = await admin.listTopics({ listInternal: flags.excludeInternal !== true });
  if (flags.topic === undefined) return all;
  const pattern = new RegExp(`^(?:${flags.topic})$`);
  return all.filter((name) => pattern.test(name));
}

async function existingTopics(admin: Admin, flags: TopicsFlags): Promise<string[]> {
  const topics = await matchingTopics(admin, flags);
  if (topics.length === 0 && flags.topic !== undefined && flags.ifExists !== true) {
    throw new CliError(`Topic '${flags.topic}' does not exist as expected`);
  }
  return topics;
}

async function describeTopics(admin: Admin, flags: TopicsFlags, io: CliIo): Promise<void> {
  const names = await existingTopics(admin, flags);
  if (names.length === 0) return;
  const descriptions = await admin.describeTopics(names);
  const configs = await admin.describeConfigs(names.map((name) => ({ type: 'topic' as const, name })));
  const reassignments = await reassignmentsOf(admin, descriptions);
  const descriptionTexts: string[] = [];
  descriptions.forEach((description, index) => {
    const overrides = configs[index]!.configs.filter((c) => c.source !== 'DEFAULT_CONFIG' && c.value !== null);
    const text = formatTopicDescription(description, overrides.map((c) => `${c.name}=${c.isSensitive ? '<sensitive>' : c.value}`), reassignments);
    descriptionTexts.push(text);
  });
  for (const [index, description] of descriptions.entries()) {
    if (flags.replicaOffsets !== true) {
      io.stdout(descriptionTexts[index]!);
      continue;
    }
    const lines = descriptionTexts[index]!.split('\n');
    let out = `${lines[0]!}\n`;
    for (const [partitionIndex, partition] of description.partitions.entries()) {
      out += `${lines[partitionIndex + 1]!}\n`;
      const offsets = await Promise.all(partition.replicas.map((brokerId) => admin.describeReplicaOffsets({ topic: description.name, partition: partition.partition, topicId: description.topicId }, brokerId)));
      out += formatReplicaOffsets(offsets, partition.leader);
    }
    io.stdout(out);
  }
}

/** The --replica-offsets lines under a partition: lag is the leader's log end minus the replica's. */
export function formatReplicaOffsets(offsets: readonly ReplicaOffsets[], leader: number): string {
  const leaderEnd = offsets.find((o) => o.brokerId === leader && o.errorCode === 0)?.logEndOffset ?? null;
  return offsets
    .map((o) => {
      if (o.errorCode !== 0) return `\t\tReplica: ${o.brokerId}\tError: ${errorInfo(o.errorCode).name}\n`;
      const lag = leaderEnd === null ? 'unknown' : String(Math.max(0, leaderEnd - o.logEndOffset));
      return `\t\tReplica: ${o.brokerId}\tLogStartOffset: ${o.logStartOffset}\tLogEndOffset: ${o.logEndOffset}\tHighWatermark: ${o.highWatermark}\tLag: ${lag}\n`;
    })
    .join('');
}

/** The reassignments in progress of the described partitions; none where the cluster will not say (as Kafka's TopicCommand). */
async function reassignmentsOf(admin: Admin, descriptions: readonly TopicDescription[]): Promise<Map<string, PartitionReassignment>> {
  const partitions = descriptions.flatMap((d) => d.partitions.map((p) => ({ topic: d.name, partition: p.partition })));
  try {
    return new Map((await admin.listPartitionReassignments(partitions)).map((r) => [topicPartitionKey(r), r]));
  } catch (error) {
    if (error instanceof KafkaError && (error.code === ErrorCode.UNSUPPORTED_VERSION || error.code === ErrorCode.CLUSTER_AUTHORIZATION_FAILED)) return new Map();
    throw error;
  }
}

/**
 * kafka-topics --describe text for one topic. A partition being reassigned
 * shows its adding and removing replicas, and counts in the replication
 * factor without the adding ones (Kafka's TopicCommand).
 */
export function formatTopicDescription(topic: TopicDescription, configs: readonly string[], reassignments: ReadonlyMap<string, PartitionReassignment> = new Map()): string {
  const reassigning = (p: TopicDescription['partitions'][number]) => {
    const r = reassignments.get(topicPartitionKey({ topic: topic.name, partition: p.partition }));
    return r !== undefined && p.replicas.some((id) => r.addingReplicas.includes(id) || r.removingReplicas.includes(id)) ? r : undefined;
  };
  const first = topic.partitions[0];
  const firstReassignment = first === undefined ? undefined : reassigning(first);
  const replicationFactor = firstReassignment !== undefined ? firstReassignment.replicas.length - firstReassignment.addingReplicas.length : (first?.replicas.length ?? 0);
  let text = `Topic: ${topic.name}\tTopicId: ${topic.topicId}\tPartitionCount: ${topic.partitions.length}\tReplicationFactor: ${replicationFactor}\tConfigs: ${configs.join(',')}\n`;
  for (const p of topic.partitions) {
    text += `\tTopic: ${topic.name}\tPartition: ${p.partition}\tLeader: ${p.leader < 0 ? 'none' : p.leader}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}`;
    const reassignment = reassignments.get(topicPartitionKey({ topic: topic.name, partition: p.partition }));
    if (reassignment !== undefined) text += `\tAdding Replicas: ${reassignment.addingReplicas.join(',')}\tRemoving Replicas: ${reassignment.removingReplicas.join(',')}`;
    // Kafka 4.4's TopicCommand prints no Offline column.
    text += `\tElr: ${p.elr === null ? 'N/A' : p.elr.join(',')}\tLastKnownElr: ${p.lastKnownElr === null ? 'N/A' : p.lastKnownElr.join(',')}\n`;
  }
  return text;
}

async function alterTopic(admin: Admin, flags: TopicsFlags): Promise<void> {
  requireTopic(flags);
  const count = positiveInt(flags.partitions, '--partitions');
  if (count === undefined) throw new CliError('--alter needs --partitions');
  const names = await existingTopics(admin, flags);
  if (names.length > 0) await admin.createPartitions(Object.fromEntries(names.map((name) => [name, count])));
}

async function deleteTopic(admin: Admin, flags: TopicsFlags): Promise<void> {
  requireTopic(flags);
  const names = await existingTopics(admin, flags);
  if (names.length > 0) await admin.deleteTopics(names);
}
