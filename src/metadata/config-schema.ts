/**
 * Kafka's config schema as the controller and the DescribeConfigs handler
 * use it: which topic and broker configs exist, their types, which broker
 * configs may change at runtime, validation of a resource's whole config
 * set (Kafka's ControllerConfigurationValidator), and the description of a
 * resource's configs with sources and synonyms (Kafka's ConfigHelper).
 *
 * Broker configs come in four layers, most specific first: dynamic for this
 * broker (ConfigRecord resource BROKER, name = node id), dynamic cluster
 * default (name ''), server.properties, Kafka's default.
 */
import type { ConfigEntryDescription, ConfigResourceRef, ConfigSchema, StaticConfig } from '../controller/context.js';
import { ErrorCode } from '../protocol/errors.js';
import { BROKER_CONFIGS, brokerConfigDef, type ConfigDef } from '../common/config.js';
import { ConfigResourceType } from './delta.js';
import type { MetadataImage, TopicImage } from './image.js';
import {
  ConfigSource,
  TOPIC_CONFIGS,
  brokerConfigLayers,
  configTypeId,
  describeValue,
  parseConfigValue,
  resolveTopicConfigEntry,
  topicConfigDef,
  validateTopicConfigs,
  type BrokerConfigLayers,
} from './topic-config.js';
import { groupConfigDef, validateGroupConfigs } from './group-config.js';

/** The log cleaner's settings that AlterConfigs may change (Kafka's LogCleaner.ReconfigurableConfigs, less message.max.bytes, a topic synonym). */
export const LOG_CLEANER_RECONFIGURABLE_CONFIGS: readonly string[] = [
  'log.cleaner.threads',
  'log.cleaner.dedupe.buffer.size',
  'log.cleaner.io.buffer.load.factor',
  'log.cleaner.io.buffer.size',
  'log.cleaner.io.max.bytes.per.second',
  'log.cleaner.backoff.ms',
];

/** Broker configs Kafka can change without a restart (a subset of DynamicBrokerConfig.AllDynamicConfigs). */
export const DYNAMIC_BROKER_CONFIGS: ReadonlySet<string> = new Set([
  ...TOPIC_CONFIGS.flatMap((def) => def.synonyms.map((synonym) => synonym.name)),
  'max.connections',
  'max.connections.per.ip',
  'producer.id.expiration.ms',
  'num.io.threads',
  'num.network.threads',
  'num.replica.fetchers',
  'background.threads',
  ...LOG_CLEANER_RECONFIGURABLE_CONFIGS,
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
]);

export function brokerLayers(config: StaticConfig, image: MetadataImage, brokerId: number): BrokerConfigLayers {
  return brokerConfigLayers(config, image.brokerConfigs, brokerId);
}

export class KafkaConfigSchema implements ConfigSchema {
  constructor(
    private readonly config: StaticConfig,
    private readonly nodeId: number,
  ) {}

  validate(resource: ConfigResourceRef, configs: ReadonlyMap<string, string | null>): { errorCode: number; message: string } | null {
    if (resource.type === ConfigResourceType.TOPIC) {
      const problem = validateTopicConfigs(configs);
      return problem === null ? null : { errorCode: ErrorCode[problem.kind], message: problem.message };
    }
    if (resource.type === ConfigResourceType.BROKER) return validateBrokerConfigs(configs, resource.name === '');
    if (resource.type === ConfigResourceType.GROUP) return validateGroupConfigs(configs, this.config);
    return { errorCode: ErrorCode.INVALID_REQUEST, message: `Unsupported resource type ${resource.type}.` };
  }

  isSplittable(resourceType: number, name: string): boolean {
    if (resourceType === ConfigResourceType.TOPIC) return topicConfigDef(name)?.type === 'list';
    if (resourceType === ConfigResourceType.BROKER) return brokerConfigDef(name)?.type === 'list';
    if (resourceType === ConfigResourceType.GROUP) return groupConfigDef(name)?.type === 'list';
    return false;
  }

  defaultValue(resourceType: number, name: string): string | null {
    if (resourceType === ConfigResourceType.TOPIC) {
      const def = topicConfigDef(name);
      return def === undefined || def.default === null ? null : describeValue(def.type, def.default);
    }
    if (resourceType === ConfigResourceType.GROUP) {
      const def = groupConfigDef(name);
      return def === undefined || def.default === null ? null : describeValue(def.type, def.default);
    }
    const def = brokerConfigDef(name);
    return def === undefined || def.default === null ? null : brokerValueText(def, def.default);
  }

  describeNewTopic(overrides: ReadonlyMap<string, string>, image: MetadataImage): ConfigEntryDescription[] {
    const layers = brokerLayers(this.config, image, this.nodeId);
    return TOPIC_CONFIGS.filter((def) => def.internal !== true).map((def) => {
      const entry = resolveTopicConfigEntry(def, overrides, layers);
      return {
        name: def.name,
        value: entry.text,
        readOnly: false,
        configSource: entry.source,
        isSensitive: false,
      };
    });
  }
}

/** Kafka's DynamicBrokerConfig.validateConfigs: only dynamic configs, each of its type. */
function validateBrokerConfigs(configs: ReadonlyMap<string, string | null>, clusterDefault: boolean): { errorCode: number; message: string } | null {
  void clusterDefault;
  const names = [...configs.keys()];
  const nonDynamic = names.filter((name) => brokerConfigDef(name) !== undefined && !DYNAMIC_BROKER_CONFIGS.has(name));
  if (nonDynamic.length > 0) return { errorCode: ErrorCode.INVALID_CONFIG, message: `Cannot update these configs dynamically: Set(${nonDynamic.join(', ')})` };
  for (const [name, value] of configs) {
    if (value === null) continue;
    const topicDef = TOPIC_CONFIGS.find((def) => def.synonyms.some((synonym) => synonym.name === name));
    const def: ConfigDef | undefined = brokerConfigDef(name);
    if (def !== undefined) {
      const parsed = parseConfigValue(name, def.type, value);
      if ('error' in parsed) return { errorCode: ErrorCode.INVALID_CONFIG, message: parsed.error };
      const problem = def.validate?.(parsed.value) ?? null;
      if (problem !== null) return { errorCode: ErrorCode.INVALID_CONFIG, message: `Invalid value ${value} for configuration ${name}: ${problem}` };
    } else if (topicDef !== undefined && topicDef.synonyms.length === 1) {
      const problem = validateTopicConfigs(new Map([[topicDef.name, value]]));
      if (problem !== null) return { errorCode: ErrorCode.INVALID_CONFIG, message: problem.message.replaceAll(topicDef.name, name) };
    }
  }
  return null;
}

// ---- DescribeConfigs

export interface DescribedConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
  configType: number;
  documentation: string | null;
}

export interface DescribeOptions {
  /** null or empty: every config. Names that do not exist are left out, as Kafka does. */
  keys: readonly string[] | null;
  includeSynonyms: boolean;
}

function wanted(options: DescribeOptions): (name: string) => boolean {
  if (options.keys === null || options.keys.length === 0) return () => true;
  const keys = new Set(options.keys);
  return (name) => keys.has(name);
}

export function describeTopicConfigs(topic: TopicImage, layers: BrokerConfigLayers, options: DescribeOptions): DescribedConfig[] {
  const include = wanted(options);
  return TOPIC_CONFIGS.filter((def) => def.internal !== true && include(def.name)).map((def) => {
    const entry = resolveTopicConfigEntry(def, topic.configs, layers);
    return {
      name: def.name,
      value: entry.text,
      readOnly: false,
      configSource: entry.source,
      isSensitive: false,
      synonyms: options.includeSynonyms ? entry.synonyms : [],
      configType: configTypeId(def.type),
      documentation: null,
    };
  });
}

/** Kafka's text for a broker config's default. */
function brokerValueText(def: ConfigDef, value: string | number | boolean): string {
  return typeof value === 'string' ? value : describeValue(def.type, value);
}

interface BrokerValue {
  value: string | null;
  source: number;
}

function brokerValues(def: ConfigDef, layers: BrokerConfigLayers): BrokerValue[] {
  const out: BrokerValue[] = [];
  const perBroker = layers.perBroker.get(def.name);
  if (perBroker !== undefined) out.push({ value: perBroker, source: ConfigSource.DYNAMIC_BROKER_CONFIG });
  const clusterDefault = layers.clusterDefault.get(def.name);
  if (clusterDefault !== undefined) out.push({ value: clusterDefault, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
  const fromFile = def.dynamicOnly === true ? undefined : layers.static.get(def.name);
  if (fromFile !== undefined) out.push({ value: fromFile, source: ConfigSource.STATIC_BROKER_CONFIG });
  if (def.default !== null) out.push({ value: brokerValueText(def, def.default), source: ConfigSource.DEFAULT_CONFIG });
  return out;
}

/** The broker configs that stand in for `name` after it (log.retention.ms: then minutes, then hours). */
function brokerSynonymNames(name: string): string[] {
  for (const def of TOPIC_CONFIGS) {
    const index = def.synonyms.findIndex((synonym) => synonym.name === name);
    if (index >= 0) return def.synonyms.slice(index).map((synonym) => synonym.name);
  }
  return [name];
}

/**
 * A broker's configs: `brokerId`'s effective values, or (resource name '')
 * only the dynamic cluster defaults, as Kafka describes them.
 */
export function describeBrokerConfigs(layers: BrokerConfigLayers, options: DescribeOptions & { clusterDefault: boolean }): DescribedConfig[] {
  const include = wanted(options);
  const described: DescribedConfig[] = [];
  for (const def of BROKER_CONFIGS) {
    if (!include(def.name)) continue;
    const sensitive = def.type === 'password';
    const values = options.clusterDefault
      ? brokerValues(def, { perBroker: new Map(), clusterDefault: layers.clusterDefault, static: new Map() }).filter((v) => v.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
      : brokerValues(def, layers);
    const chosen = values[0];
    if (options.clusterDefault && chosen === undefined) continue;
    if (def.dynamicOnly === true && (chosen === undefined || chosen.source === ConfigSource.DEFAULT_CONFIG)) continue;
    const synonyms = options.includeSynonyms
      ? brokerSynonymNames(def.name).flatMap((name) => {
          const synonymDef = brokerConfigDef(name);
          return synonymDef === undefined ? [] : brokerValues(synonymDef, layers).map((v) => ({ name, value: sensitive ? null : v.value, source: v.source }));
        })
      : [];
    described.push({
      name: def.name,
      value: sensitive ? null : (chosen?.value ?? null),
      readOnly: !DYNAMIC_BROKER_CONFIGS.has(def.name),
      configSource: chosen?.source ?? ConfigSource.DEFAULT_CONFIG,
      isSensitive: sensitive,
      synonyms,
      configType: configTypeId(def.type),
      documentation: null,
    });
  }
  return described;
}
