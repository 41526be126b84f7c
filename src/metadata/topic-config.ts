/**
 * Kafka's topic configs (TopicConfig / LogConfig of Kafka 4.4): names, types,
 * defaults, validation with Kafka's error messages, the broker configs each
 * one falls back to (its synonyms, most specific first), and the effective
 * config of a topic:
 *
 *   topic override > per-broker dynamic > cluster-default dynamic
 *   > server.properties > Kafka's default
 *
 * The first synonym that has a value at any of the broker levels wins, in
 * synonym order (log.retention.ms before log.retention.minutes before
 * log.retention.hours), as Kafka resolves them.
 *
 * `parseConfigValue` is the one parser of config text, for topic and broker
 * configs alike (Kafka's ConfigDef.parseType). Values are typed: short, int
 * and long as number (a long as src/protocol/int64.ts carries it: Long.MAX_VALUE
 * is Infinity), double as number, boolean, string, and list as string[].
 * Beside each value the parser returns its text as Kafka's DescribeConfigs
 * shows it (ConfigDef.convertToString), computed from the exact value, so a
 * long beyond 2^53 is shown as it was set.
 */
import { describeValue, parseConfigValue, type TopicConfigType, type TopicConfigValue } from '../common/config-value.js';

export { describeValue, parseConfigValue, type ConfigType, type ParseResult, type TopicConfigType, type TopicConfigValue } from '../common/config-value.js';

export interface ConfigSynonym {
  /** The broker config name. */
  name: string;
  /** Converts the broker value to the topic config's unit (hours to ms). */
  scale?: number;
}

export interface TopicConfigDef {
  name: string;
  type: TopicConfigType;
  /** Kafka's default; null only for internal configs without one. */
  default: TopicConfigValue | null;
  /** Kafka's validator text after "Invalid value X for configuration Y: ", or null when valid. */
  validate?: (value: TopicConfigValue) => string | null;
  synonyms: readonly ConfigSynonym[];
  /** Hidden from DescribeConfigs (Kafka's internal configs). */
  internal?: boolean;
}

const LONG_MAX = Infinity;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

const atLeast = (min: number) => (value: TopicConfigValue) =>
  (value as number) >= min ? null : `Value must be at least ${min}`;
const between = (min: number, max: number) => (value: TopicConfigValue) => {
  if ((value as number) < min) return `Value must be at least ${min}`;
  if ((value as number) > max) return `Value must be no more than ${max}`;
  return null;
};
const oneOf = (...allowed: string[]) => (value: TopicConfigValue) =>
  allowed.includes(value as string) ? null : `String must be one of: ${allowed.join(', ')}`;
const listOf = (...allowed: string[]) => (value: TopicConfigValue) => {
  const bad = (value as readonly string[]).find((item) => !allowed.includes(item));
  return bad === undefined ? null : `String must be one of: ${allowed.join(', ')}`;
};
const gzipLevel = (value: TopicConfigValue) =>
  value === -1 || ((value as number) >= 1 && (value as number) <= 9) ? null : 'Value must be between 1 and 9 or equal to -1';

/** Kafka's ThrottledReplicaListValidator: each item `partition:broker` (or empty), or the items together spell `*`. */
const THROTTLED_REPLICA = /^(\d+:\d+)?$/;
const throttledReplicas = (name: string) => (value: TopicConfigValue) => {
  const items = value as readonly string[];
  if (items.join('') === '*') return null;
  if (items.every((item) => THROTTLED_REPLICA.test(item))) return null;
  return `${name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`;
};

const same = (name: string): ConfigSynonym[] => [{ name }];

/** Every topic config of Kafka 4.4, alphabetically. */
export const TOPIC_CONFIGS: readonly TopicConfigDef[] = [
  { name: 'cleanup.policy', type: 'list', default: ['delete'], validate: listOf('compact', 'delete'), synonyms: same('log.cleanup.policy') },
  { name: 'compression.gzip.level', type: 'int', default: -1, validate: gzipLevel, synonyms: same('compression.gzip.level') },
  { name: 'compression.lz4.level', type: 'int', default: 9, validate: between(1, 17), synonyms: same('compression.lz4.level') },
  { name: 'compression.type', type: 'string', default: 'producer', validate: oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'), synonyms: same('compression.type') },
  { name: 'compression.zstd.level', type: 'int', default: 3, validate: between(-131072, 22), synonyms: same('compression.zstd.level') },
  { name: 'delete.retention.ms', type: 'long', default: 86_400_000, validate: atLeast(0), synonyms: same('log.cleaner.delete.retention.ms') },
  { name: 'errors.deadletterqueue.group.enable', type: 'boolean', default: false, synonyms: [] },
  { name: 'file.delete.delay.ms', type: 'long', default: 60_000, validate: atLeast(0), synonyms: same('log.segment.delete.delay.ms') },
  { name: 'flush.messages', type: 'long', default: LONG_MAX, validate: atLeast(1), synonyms: same('log.flush.interval.messages') },
  { name: 'flush.ms', type: 'long', default: LONG_MAX, validate: atLeast(0), synonyms: [{ name: 'log.flush.interval.ms' }, { name: 'log.flush.scheduler.interval.ms' }] },
  { name: 'follower.replication.throttled.replicas', type: 'list', default: [], validate: throttledReplicas('follower.replication.throttled.replicas'), synonyms: [] },
  { name: 'index.interval.bytes', type: 'int', default: 4096, validate: atLeast(0), synonyms: same('log.index.interval.bytes') },
  { name: 'internal.segment.bytes', type: 'int', default: null, synonyms: [], internal: true },
  { name: 'leader.replication.throttled.replicas', type: 'list', default: [], validate: throttledReplicas('leader.replication.throttled.replicas'), synonyms: [] },
  { name: 'local.retention.bytes', type: 'long', default: -2, validate: atLeast(-2), synonyms: same('log.local.retention.bytes') },
  { name: 'local.retention.ms', type: 'long', default: -2, validate: atLeast(-2), synonyms: same('log.local.retention.ms') },
  { name: 'max.compaction.lag.ms', type: 'long', default: LONG_MAX, validate: atLeast(1), synonyms: same('log.cleaner.max.compaction.lag.ms') },
  { name: 'max.decompressed.message.bytes', type: 'int', default: 2147483639, validate: between(1, 2147483639), synonyms: same('max.decompressed.message.bytes') },
  { name: 'max.message.bytes', type: 'int', default: 1048588, validate: atLeast(0), synonyms: same('message.max.bytes') },
  { name: 'message.timestamp.after.max.ms', type: 'long', default: 3_600_000, validate: atLeast(0), synonyms: same('log.message.timestamp.after.max.ms') },
  { name: 'message.timestamp.before.max.ms', type: 'long', default: LONG_MAX, validate: atLeast(0), synonyms: same('log.message.timestamp.before.max.ms') },
  { name: 'message.timestamp.type', type: 'string', default: 'CreateTime', validate: oneOf('CreateTime', 'LogAppendTime'), synonyms: same('log.message.timestamp.type') },
  { name: 'min.cleanable.dirty.ratio', type: 'double', default: 0.5, validate: between(0, 1), synonyms: same('log.cleaner.min.cleanable.ratio') },
  { name: 'min.compaction.lag.ms', type: 'long', default: 0, validate: atLeast(0), synonyms: same('log.cleaner.min.compaction.lag.ms') },
  { name: 'min.insync.replicas', type: 'int', default: 1, validate: atLeast(1), synonyms: same('min.insync.replicas') },
  { name: 'preallocate', type: 'boolean', default: false, synonyms: same('log.preallocate') },
  { name: 'remote.copy.lag.bytes', type: 'long', default: -1, validate: atLeast(-1), synonyms: same('log.remote.copy.lag.bytes') },
  { name: 'remote.copy.lag.ms', type: 'long', default: 0, validate: atLeast(-1), synonyms: same('log.remote.copy.lag.ms') },
  { name: 'remote.log.copy.disable', type: 'boolean', default: false, synonyms: [] },
  { name: 'remote.log.delete.on.disable', type: 'boolean', default: false, synonyms: [] },
  { name: 'remote.storage.enable', type: 'boolean', default: false, synonyms: [] },
  { name: 'retention.bytes', type: 'long', default: -1, synonyms: same('log.retention.bytes') },
  {
    name: 'retention.ms',
    type: 'long',
    default: 604_800_000,
    validate: atLeast(-1),
    synonyms: [{ name: 'log.retention.ms' }, { name: 'log.retention.minutes', scale: MINUTE_MS }, { name: 'log.retention.hours', scale: HOUR_MS }],
  },
  { name: 'segment.bytes', type: 'int', default: 1_073_741_824, validate: atLeast(1_048_576), synonyms: same('log.segment.bytes') },
  { name: 'segment.index.bytes', type: 'int', default: 10_485_760, validate: atLeast(4), synonyms: same('log.index.size.max.bytes') },
  { name: 'segment.jitter.ms', type: 'long', default: 0, validate: atLeast(0), synonyms: [{ name: 'log.roll.jitter.ms' }, { name: 'log.roll.jitter.hours', scale: HOUR_MS }] },
  { name: 'segment.ms', type: 'long', default: 604_800_000, validate: atLeast(1), synonyms: [{ name: 'log.roll.ms' }, { name: 'log.roll.hours', scale: HOUR_MS }] },
  { name: 'unclean.leader.election.enable', type: 'boolean', default: false, synonyms: same('unclean.leader.election.enable') },
];

const DEFS = new Map(TOPIC_CONFIGS.map((def) => [def.name, def]));

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return DEFS.get(name);
}

/** Kafka's defaults of the broker synonyms that have one (`log.retention.hours=168`, ...). */
const SYNONYM_DEFAULTS: ReadonlyMap<string, TopicConfigValue> = new Map<string, TopicConfigValue>([
  ['log.retention.hours', 168],
  ['log.roll.hours', 168],
  ['log.roll.jitter.hours', 0],
  ['log.flush.scheduler.interval.ms', LONG_MAX],
  ...TOPIC_CONFIGS.filter((def) => def.synonyms.length === 1 && def.default !== null).map((def) => [def.synonyms[0]!.name, def.default!] as const),
]);

/** Broker synonyms that only exist for their topic config, with their Kafka types. */
const SYNONYM_TYPES: ReadonlyMap<string, TopicConfigType> = new Map(
  TOPIC_CONFIGS.flatMap((def) => def.synonyms.map((synonym) => [synonym.name, synonym.scale === undefined ? def.type : 'long'] as const)),
);

export interface ConfigProblem {
  /** INVALID_CONFIG, or INVALID_REQUEST for null values where Kafka says so. */
  kind: 'INVALID_CONFIG' | 'INVALID_REQUEST';
  message: string;
}

/** Parses and validates one topic config value. */
export function validateTopicConfigValue(name: string, raw: string): { value: TopicConfigValue } | ConfigProblem {
  const def = DEFS.get(name);
  if (def === undefined) return { kind: 'INVALID_CONFIG', message: `Unknown topic config name: ${name}` };
  const parsed = parseConfigValue(name, def.type, raw);
  if ('error' in parsed) return { kind: 'INVALID_CONFIG', message: parsed.error };
  const reason = def.validate?.(parsed.value) ?? null;
  if (reason !== null) return { kind: 'INVALID_CONFIG', message: `Invalid value ${raw} for configuration ${name}: ${reason}` };
  return parsed;
}

/**
 * Validates a topic's complete set of overrides (as it would be after a
 * change), as Kafka's controller does before writing ConfigRecords: unknown
 * names, null values, each value, then the rules across configs.
 * Returns null when the set is valid.
 */
export function validateTopicConfigs(configs: ReadonlyMap<string, string | null>): ConfigProblem | null {
  const nulls = [...configs].filter(([, value]) => value === null).map(([name]) => name);
  if (nulls.length > 0) return { kind: 'INVALID_CONFIG', message: `Null value not supported for topic configs: ${nulls.join(',')}` };
  const unknown = [...configs.keys()].filter((name) => !DEFS.has(name));
  if (unknown.length > 0) return { kind: 'INVALID_CONFIG', message: `Unknown topic config name: ${unknown[0]}` };
  const values = new Map<string, TopicConfigValue>();
  for (const [name, raw] of configs) {
    const result = validateTopicConfigValue(name, raw!);
    if (!('value' in result)) return result;
    values.set(name, result.value);
  }
  return validateAcrossConfigs(values);
}

function validateAcrossConfigs(values: ReadonlyMap<string, TopicConfigValue>): ConfigProblem | null {
  const minLag = (values.get('min.compaction.lag.ms') ?? 0) as number;
  const maxLag = (values.get('max.compaction.lag.ms') ?? LONG_MAX) as number;
  if (minLag > maxLag) {
    return {
      kind: 'INVALID_CONFIG',
      message: `conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${describeValue('long', maxLag)})`,
    };
  }
  if (values.get('remote.storage.enable') === true) {
    return { kind: 'INVALID_CONFIG', message: 'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.' };
  }
  return null;
}

/** Where a config value comes from, with DescribeConfigs' ConfigSource ids. */
export const ConfigSource = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
  GROUP_CONFIG: 8,
} as const;

/** DescribeConfigs' ConfigType ids (KIP-569). */
export const ConfigTypeId = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;

export function configTypeId(type: string): number {
  const id = (ConfigTypeId as Record<string, number>)[type.toUpperCase()];
  return id ?? ConfigTypeId.UNKNOWN;
}

export interface ConfigSynonymValue {
  name: string;
  value: string;
  source: number;
}

/**
 * The broker side of topic configs: the static server.properties values and
 * the dynamic broker configs from the metadata image (cluster default under
 * resource name '', this broker under its id).
 */
export interface BrokerConfigLayers {
  /** Dynamic configs of this broker (ConfigRecord resource BROKER, name = broker id). */
  perBroker: ReadonlyMap<string, string>;
  /** Dynamic cluster-wide defaults (resource BROKER, name ''). */
  clusterDefault: ReadonlyMap<string, string>;
  /** Values set in server.properties / overrides. */
  static: ReadonlyMap<string, string>;
}

/** The layers of `brokerId` from the static config and the image's dynamic broker configs. */
export function brokerConfigLayers(
  config: { readonly explicit: ReadonlyMap<string, string> },
  brokerConfigs: ReadonlyMap<string, ReadonlyMap<string, string>>,
  brokerId: number,
): BrokerConfigLayers {
  return {
    perBroker: brokerConfigs.get(String(brokerId)) ?? new Map(),
    clusterDefault: brokerConfigs.get('') ?? new Map(),
    static: config.explicit,
  };
}

interface FoundValue {
  /** In the topic config's unit. */
  value: TopicConfigValue;
  /** `value` as DescribeConfigs shows the topic config. */
  text: string;
  /** As DescribeConfigs shows the synonym (in the broker config's unit). */
  synonymText: string;
  source: number;
}

/** Every value a broker config name has across the layers, most specific first, converted to the topic unit. */
function synonymValues(synonym: ConfigSynonym, type: TopicConfigType, layers: BrokerConfigLayers): FoundValue[] {
  const out: FoundValue[] = [];
  const brokerType = SYNONYM_TYPES.get(synonym.name) ?? type;
  const found = (value: TopicConfigValue, synonymText: string, source: number): FoundValue => {
    if (synonym.scale === undefined || value === Infinity) return { value, text: synonymText, synonymText, source };
    const scaled = (value as number) * synonym.scale;
    return { value: scaled, text: describeValue(type, scaled), synonymText, source };
  };
  const levels: [ReadonlyMap<string, string>, number][] = [
    [layers.perBroker, ConfigSource.DYNAMIC_BROKER_CONFIG],
    [layers.clusterDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    [layers.static, ConfigSource.STATIC_BROKER_CONFIG],
  ];
  for (const [values, source] of levels) {
    const raw = values.get(synonym.name);
    if (raw === undefined) continue;
    const parsed = parseConfigValue(synonym.name, brokerType, raw);
    if ('value' in parsed) out.push(found(parsed.value, parsed.text, source));
  }
  const fallback = SYNONYM_DEFAULTS.get(synonym.name);
  if (fallback !== undefined) out.push(found(fallback, describeValue(brokerType, fallback), ConfigSource.DEFAULT_CONFIG));
  return out;
}

export interface ResolvedConfigEntry {
  name: string;
  value: TopicConfigValue | null;
  /** The value as DescribeConfigs shows it: the exact text of what was set. */
  text: string | null;
  source: number;
  /** Every place a value was found, most specific first (DescribeConfigs synonyms). */
  synonyms: ConfigSynonymValue[];
}

/** The effective value of one topic config and where it came from. */
export function resolveTopicConfigEntry(
  def: TopicConfigDef,
  overrides: ReadonlyMap<string, string>,
  layers: BrokerConfigLayers,
): ResolvedConfigEntry {
  const synonyms: ConfigSynonymValue[] = [];
  const candidates: FoundValue[] = [];
  const override = overrides.get(def.name);
  if (override !== undefined) {
    const parsed = parseConfigValue(def.name, def.type, override);
    if ('value' in parsed) {
      candidates.push({ value: parsed.value, text: parsed.text, synonymText: parsed.text, source: ConfigSource.TOPIC_CONFIG });
      synonyms.push({ name: def.name, value: parsed.text, source: ConfigSource.TOPIC_CONFIG });
    }
  }
  for (const synonym of def.synonyms) {
    for (const found of synonymValues(synonym, def.type, layers)) {
      // Non-default broker values win in synonym order; defaults only after every synonym was tried.
      if (found.source !== ConfigSource.DEFAULT_CONFIG) candidates.push(found);
      synonyms.push({ name: synonym.name, value: found.synonymText, source: found.source });
    }
  }
  const firstDefault = def.synonyms.flatMap((synonym) => synonymValues(synonym, def.type, layers)).find((found) => found.source === ConfigSource.DEFAULT_CONFIG);
  const kafkaDefault = def.default === null ? null : { value: def.default, text: describeValue(def.type, def.default), source: ConfigSource.DEFAULT_CONFIG };
  const chosen = candidates[0] ?? firstDefault ?? kafkaDefault;
  return { name: def.name, value: chosen?.value ?? null, text: chosen?.text ?? null, source: chosen?.source ?? ConfigSource.DEFAULT_CONFIG, synonyms };
}

/** The effective topic configs, named as storage's LogConfig names them (camelCase, units last). */
export interface TopicConfig {
  cleanupPolicy: readonly ('delete' | 'compact')[];
  compressionType: 'uncompressed' | 'zstd' | 'lz4' | 'snappy' | 'gzip' | 'producer';
  compressionGzipLevel: number;
  compressionLz4Level: number;
  compressionZstdLevel: number;
  deleteRetentionMs: number;
  fileDeleteDelayMs: number;
  flushMessages: number;
  flushMs: number;
  indexIntervalBytes: number;
  maxCompactionLagMs: number;
  maxDecompressedMessageBytes: number;
  maxMessageBytes: number;
  messageTimestampAfterMaxMs: number;
  messageTimestampBeforeMaxMs: number;
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  minCleanableDirtyRatio: number;
  minCompactionLagMs: number;
  minInsyncReplicas: number;
  preallocate: boolean;
  retentionBytes: number;
  retentionMs: number;
  /** internal.segment.bytes when set (tests), else segment.bytes. */
  segmentBytes: number;
  segmentIndexBytes: number;
  segmentJitterMs: number;
  segmentMs: number;
  uncleanLeaderElectionEnable: boolean;
  localRetentionBytes: number;
  localRetentionMs: number;
  remoteStorageEnable: boolean;
  leaderReplicationThrottledReplicas: readonly string[];
  followerReplicationThrottledReplicas: readonly string[];
}

/** `retention.ms` -> `retentionMs`. */
export function camelName(name: string): string {
  return name.replace(/\.([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * The effective config of a topic: its overrides over the broker's layers
 * over Kafka's defaults. The replica manager configures each log with it.
 */
export function resolveTopicConfig(overrides: ReadonlyMap<string, string>, layers: BrokerConfigLayers): TopicConfig {
  const out: Record<string, TopicConfigValue> = {};
  for (const def of TOPIC_CONFIGS) {
    if (def.internal === true) continue;
    const entry = resolveTopicConfigEntry(def, overrides, layers);
    out[camelName(def.name)] = entry.value!;
  }
  const internalSegmentBytes = overrides.get('internal.segment.bytes');
  if (internalSegmentBytes !== undefined) {
    const parsed = parseConfigValue('internal.segment.bytes', 'int', internalSegmentBytes);
    if ('value' in parsed) out.segmentBytes = parsed.value;
  }
  return out as unknown as TopicConfig;
}

/** Resolves against server.properties only (no dynamic configs): for tests and tools. */
export function staticBrokerLayers(config: { readonly explicit: ReadonlyMap<string, string> }): BrokerConfigLayers {
  return { perBroker: new Map(), clusterDefault: new Map(), static: config.explicit };
}
