/**
 * `spool configs`: kafka-configs.sh for topics, brokers and groups (group
 * configs such as share.auto.offset.reset, KIP-932), and client quotas of
 * one `clients` or `users` entity (a name or --entity-default; Kafka's
 * pairs of --entity-type are not taken). --describe
 * prints "Dynamic configs for topic t are:" (or "All configs ..." with
 * --all) and one "  name=value sensitive=false synonyms={SOURCE:name=value, ...}"
 * line per entry, sorted by name; --alter applies --add-config and
 * --delete-config through IncrementalAlterConfigs and prints
 * "Completed updating config for topic t.". Quotas print as
 * kafka-configs.sh prints them: "Quota configs for client-id 'c1' are
 * producer_byte_rate=1024.0" (Java's double text, its map order).
 */
import type { Command } from 'commander';
import { Admin, type ClientQuotaEntry, type ConfigAlteration, type ConfigEntry, type ConfigResource } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import { CliError, DEFAULT_BOOTSTRAP_SERVER, parseKeyValues, type CliIo } from './io.js';
import { javaEntityHash, javaHashMapOrder, javaHashOrder } from '../metadata/client-quotas.js';

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
/** Client quota entity types, by kafka-configs.sh's name. */
const QUOTA_ENTITY_TYPES = { clients: 'client-id', users: 'user' } as const;
type QuotaEntityType = (typeof QUOTA_ENTITY_TYPES)[keyof typeof QUOTA_ENTITY_TYPES];
/** Kafka's QuotaConfig.userAndClientQuotaConfigs(). */
const QUOTA_KEYS = new Set(['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'controller_mutation_rate']);

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
    .option('--entity-type <type>', 'topics, brokers, groups, clients or users')
    .option('--entity-name <name>', 'topic name, broker id or group id (default for --describe: all topics or brokers)')
    .option('--entity-default', 'the cluster-wide broker default')
    .option('--describe', 'list configs of the entity')
    .option('--alter', 'change configs of the entity')
    .option('--add-config <list>', 'k=v,k2=v2 to set (a value with commas in square brackets: k=[a,b])')
    .option('--delete-config <list>', 'k,k2 to remove')
    .option('--all', 'with --describe: every config, not only dynamic ones')
    .action(async (flags: ConfigsFlags) => {
      const type = ENTITY_TYPES[flags.entityType as keyof typeof ENTITY_TYPES];
      const quotaType = QUOTA_ENTITY_TYPES[flags.entityType as keyof typeof QUOTA_ENTITY_TYPES];
      if (type === undefined && quotaType === undefined) {
        throw new CliError(`--entity-type must be one of: ${[...Object.keys(ENTITY_TYPES), ...Object.keys(QUOTA_ENTITY_TYPES)].join(', ')}`);
      }
      if ((flags.describe === true) === (flags.alter === true)) throw new CliError('Command must include exactly one action: --describe, --alter');
      const admin = new Admin({ bootstrapServers: flags.bootstrapServer, env: io.env, clientId: 'spool-configs' });
      try {
        if (quotaType !== undefined) await (flags.describe === true ? describeQuotas : alterQuotas)(admin, quotaType, flags, io);
        else if (flags.describe === true) await describeConfigs(admin, type!, flags, io);
        else await alterConfigs(admin, type!, flags, io);
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

/** Java's Double.toString for the values quotas print: `1024.0`, `0.5`, `1.0E7`. */
export function javaDouble(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return '0.0';
  const abs = Math.abs(value);
  if (abs >= 1e-3 && abs < 1e7) return Number.isInteger(value) ? `${value}.0` : String(value);
  const [mantissa, exponent] = value.toExponential().split('e') as [string, string];
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

/** ConfigCommand's entity text: `user-principal 'alice', client-id 'c1'`, `the default client-id`. */
function quotaEntityText(entity: ClientQuotaEntry['entity']): string {
  const labels: Record<string, string> = { user: 'user-principal', 'client-id': 'client-id', ip: 'ip' };
  return ['user', 'client-id', 'ip']
    .flatMap((type) => entity.filter((c) => c.entityType === type))
    .map((c) => (c.entityName === null || c.entityName === '' ? `the default ${labels[c.entityType]}` : `${labels[c.entityType]} '${c.entityName}'`))
    .join(', ');
}

async function describeQuotas(admin: Admin, type: QuotaEntityType, flags: ConfigsFlags, io: CliIo): Promise<void> {
  const match = flags.entityDefault === true ? { match: null } : flags.entityName !== undefined ? { match: flags.entityName } : {};
  const entries = await admin.describeClientQuotas([{ entityType: type, ...match }], { strict: true });
  // Kafka's admin client hands the entities over in a HashMap keyed by ClientQuotaEntity.
  for (const entry of javaHashOrder(entries, (e) => javaEntityHash(e.entity))) {
    const values = new Map(entry.values.map((v) => [v.key, v.value]));
    const text = javaHashMapOrder([...values.keys()]).map((key) => `${key}=${javaDouble(values.get(key)!)}`).join(', ');
    io.stdout(`Quota configs for ${quotaEntityText(entry.entity)} are ${text}\n`);
  }
}

async function alterQuotas(admin: Admin, type: QuotaEntityType, flags: ConfigsFlags, io: CliIo): Promise<void> {
  const name = flags.entityDefault === true ? null : flags.entityName;
  if (name === undefined) throw new CliError('--entity-name or --entity-default must be specified with --alter');
  const ops: { key: string; value: number | null }[] = [];
  const added = parseKeyValues(flags.addConfig === undefined ? [] : [flags.addConfig], { splitCommas: true });
  const unknown = [...added.keys()].filter((key) => !QUOTA_KEYS.has(key));
  if (unknown.length > 0) throw new CliError(`Only quota configs can be added for '${flags.entityType}' using --bootstrap-server. Unexpected config names: ${unknown.join(',')}`);
  for (const [key, value] of added) ops.push({ key, value: Number(value) });
  for (const key of (flags.deleteConfig ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '')) ops.push({ key, value: null });
  if (ops.length === 0) throw new CliError('At least one of --add-config or --delete-config must be specified with --alter');
  await admin.alterClientQuotas([{ entity: [{ entityType: type, entityName: name }], ops }]);
  const plural = flags.entityType!;
  const singular = plural.slice(0, -1);
  io.stdout(name === null ? `Completed updating default config for ${plural} in the cluster.\n` : `Completed updating config for ${singular} ${name}.\n`);
}
