/**
 * `spool get-offsets`: kafka-get-offsets.sh. Prints `topic:partition:offset`
 * for each matching partition at --time: -1 / latest, -2 / earliest,
 * -3 / max-timestamp, or a timestamp in ms (the first offset at or after it).
 */
import type { Command } from 'commander';
import { Admin } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, type CliIo } from './io.js';

interface GetOffsetsFlags {
  bootstrapServer: string;
  topic?: string;
  partitions?: string;
  time: string;
  excludeInternalTopics?: boolean;
}

/** --time as a ListOffsets spec. */
export function parseOffsetTime(text: string): 'earliest' | 'latest' | 'max-timestamp' | number {
  const value = text.trim().toLowerCase();
  if (value === '-1' || value === 'latest') return 'latest';
  if (value === '-2' || value === 'earliest') return 'earliest';
  if (value === '-3' || value === 'max-timestamp') return 'max-timestamp';
  if (/^\d+$/.test(value)) return Number(value);
  throw new CliError(`Malformed time argument ${text}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp, or a specified long format timestamp`);
}

export function registerGetOffsets(program: Command, io: CliIo): void {
  program
    .command('get-offsets')
    .description('Print partition offsets at a time (like kafka-get-offsets.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--topic <topic>', 'topic name or regular expression (default: all topics)')
    .option('--partitions <list>', 'comma-separated partition ids (default: all)')
    .option('--time <time>', '-1 or latest, -2 or earliest, -3 or max-timestamp, or a timestamp in ms', '-1')
    .option('--exclude-internal-topics', 'leave internal topics out')
    .action(async (flags: GetOffsetsFlags) => {
      const spec = parseOffsetTime(flags.time);
      const partitionFilter = flags.partitions === undefined ? null : new Set(flags.partitions.split(',').map((p) => Number(p.trim())));
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-get-offsets' });
      try {
        const pattern = flags.topic === undefined ? null : new RegExp(`^(?:${flags.topic})$`);
        const topics = (await admin.listTopics({ listInternal: flags.excludeInternalTopics !== true })).filter((t) => pattern === null || pattern.test(t));
        if (topics.length === 0) return;
        const descriptions = await admin.describeTopics(topics);
        const queries = descriptions.flatMap((d) => d.partitions.filter((p) => partitionFilter === null || partitionFilter.has(p.partition)).map((p) => ({ topic: d.name, partition: p.partition, spec })));
        const offsets = await admin.listOffsets(queries);
        for (const listed of offsets) io.stdout(`${listed.topic}:${listed.partition}:${listed.offset}\n`);
      } catch (error) {
        if (error instanceof KafkaError) throw new CliError(`Error occurred: ${error.detail}`);
        throw error;
      } finally {
        await admin.close();
      }
    });
}
