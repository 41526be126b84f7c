/**
 * `spool configs`: kafka-configs.sh for topics, brokers and groups (group
 * configs such as share.auto.offset.reset, KIP-932). --describe
 * prints "Dynamic configs for topic t are:" (or "All configs ..." with
 * --all) and one "  name=value sensitive=false synonyms={SOURCE:name=value, ...}"
 * line per entry, sorted by name; --alter applies --add-config and
 * --delete-config through IncrementalAlterConfigs and prints
 * "Completed updating config for topic t.".
 */
import type { Command } from 'commander';
import { Admin, type ConfigAlteration, type ConfigEntry, type ConfigResource } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, parseKeyValues, type CliIo } from './io.js';

interface ConfigsFlags {
  bootstrapServer: string;
  entityType?: string;
  entityName?: string;
  entityDefault?: boolean;
  describe?: boolean;
  alter?: boolean;
  addConfig?: string;
  deleteConfig?: string;
  all?: boolean;
}

const ENTITY_TYPES = { topics: 'topic', brokers: 'broker', groups: 'group' } as const;
type EntityType = (typeof ENTITY_TYPES)[keyof typeof ENTITY_TYPES];

/** The source that makes an entry "dynamic" for this entity. */
function dynamicSource(resource: ConfigResource): string {
  if (resource.type === 'topic') return 'DYNAMIC_TOPIC_CONFIG';
  if (resource.type === 'group') return 'DYNAMIC_GROUP_CONFIG';
  return resource.name === '' ? 'DYNAMIC_DEFAULT_BROKER_CONFIG' : 'DYNAMIC_BROKER_CONFIG';
}

export function formatConfigEntry(entry: ConfigEntry): string {
  const value = (v: string | null): string => (entry.isSensitive ? 'null' : String(v));
  const synonyms = entry.synonyms.map((s) => `${s.source}:${s.name}=${value(s.value)}`).join(', ');
  return `  ${entry.name}=${value(entry.value)} sensitive=${entry.isSensitive} synonyms={${synonyms}}\n`;
}

function entityLabel(resource: ConfigResource): string {
  if (resource.type === 'broker' && resource.name === '') return 'default config for brokers in the cluster';
  return `${resource.type} ${resource.name}`;
}

export function registerConfigs(program: Command, io: CliIo): void {
  program
    .command('configs')
    .description('Describe or alter topic, broker and group configs (like kafka-configs.sh)')
    .option('--bootstrap-server <server>', 'the broker to connect to', DEFAULT_BOOTSTRAP_SERVER)
    .option('--entity-type <type>', 'topics, brokers or groups')
    .option('--entity-name <name>', 'topic name, broker id or group id (default for --describe: all topics or brokers)')
    .option('--entity-default', 'the cluster-wide broker default')
    .option('--describe', 'list configs of the entity')
    .option('--alter', 'change configs of the entity')
    .option('--add-config <list>', 'k=v,k2=v2 to set (a value with commas in square brackets: k=[a,b])')
    .option('--delete-config <list>', 'k,k2 to remove')
    .option('--all', 'with --describe: every config, not only dynamic ones')
    .action(async (flags: ConfigsFlags) => {
      const type = ENTITY_TYPES[flags.entityType as keyof typeof ENTITY_TYPES];
      if (type === undefined) throw new CliError(`--entity-type must be one of: ${Object.keys(ENTITY_TYPES).join(', ')}`);
      if ((flags.describe === true) === (flags.alter === true)) throw new CliError('Command must include exactly one action: --describe, --alter');
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-configs' });
      try {
        if (flags.describe === true) await describeConfigs(admin, type, flags, io);
        else await alterConfigs(admin, type, flags, io);
      } catch (error) {
        if (error instanceof KafkaError) throw new CliError(`Error while executing config command with args '${flags.entityType} ${flags.entityName ?? ''}': ${error.detail}`);
        throw error;
      } finally {
        await admin.close();
      }
    });
}

async function resourcesToDescribe(admin: Admin, type: EntityType, flags: ConfigsFlags): Promise<ConfigResource[]> {
  if (flags.entityDefault === true && type !== 'group') return [{ type, name: '' }];
  if (flags.entityName !== undefined) return [{ type, name: flags.entityName }];
  // Kafka's ConfigCommand lists every group for a nameless --describe; Spool's admin client has no group listing.
  if (type === 'group') throw new CliError('--entity-name must be specified with --describe of --entity-type groups');
  if (type === 'topic') return (await admin.listTopics()).map((name) => ({ type, name }));
  return (await admin.describeCluster()).brokers.map((b) => ({ type, name: String(b.nodeId) }));
}

async function describeConfigs(admin: Admin, type: EntityType, flags: ConfigsFlags, io: CliIo): Promise<void> {
  const resources = await resourcesToDescribe(admin, type, flags);
  for (const described of await admin.describeConfigs(resources, { includeSynonyms: true })) {
    const entries = flags.all === true ? described.configs : described.configs.filter((c) => c.source === dynamicSource(described));
    const label = described.type === 'broker' && described.name === '' ? 'Default configs for brokers in the cluster are:' : `${flags.all === true ? 'All' : 'Dynamic'} configs for ${described.type} ${described.name} are:`;
    io.stdout(`${label}\n`);
    for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) io.stdout(formatConfigEntry(entry));
  }
}

async function alterConfigs(admin: Admin, type: EntityType, flags: ConfigsFlags, io: CliIo): Promise<void> {
  const name = flags.entityDefault === true && type !== 'group' ? '' : flags.entityName;
  if (name === undefined) throw new CliError('--entity-name or --entity-default must be specified with --alter');
  const ops: ConfigAlteration[] = [];
  for (const [key, value] of parseKeyValues(flags.addConfig === undefined ? [] : [flags.addConfig], { splitCommas: true })) ops.push({ name: key, op: 'set', value });
  for (const key of (flags.deleteConfig ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '')) ops.push({ name: key, op: 'delete' });
  if (ops.length === 0) throw new CliError('At least one of --add-config or --delete-config must be specified with --alter');
  const resource = { type, name };
  await admin.alterConfigs([{ ...resource, ops }]);
  io.stdout(name === '' ? `Completed updating ${entityLabel(resource)}.\n` : `Completed updating config for ${entityLabel(resource)}.\n`);
}
