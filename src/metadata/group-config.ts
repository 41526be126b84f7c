/**
 * Dynamic group configs (Kafka's GroupConfig, KIP-848 and KIP-932): per-group
 * overrides of the group coordinator's broker configs, set with
 * IncrementalAlterConfigs / AlterConfigs on resource type GROUP (32) and kept
 * in the metadata image from ConfigRecords (`image.groupConfigs`).
 *
 * Three jobs, each as Kafka 4.4 does it:
 * - validation on the controller (GroupConfig.validate): known names only,
 *   each value of its type and within its ConfigDef bound, then within the
 *   broker's min/max configs (consumer.session.timeout.ms inside
 *   group.consumer.min/max.session.timeout.ms, ...), session timeout above
 *   heartbeat interval, a registered streams assignor, no `__` DLQ topic;
 * - the effective value a group runs with (effectiveGroupConfig): the group's
 *   override, clamped to the broker's current bounds (they may have changed
 *   since the override was validated), else the broker config it overrides,
 *   else GroupConfig's own default (share.auto.offset.reset=latest, ...);
 * - DescribeConfigs for a GROUP resource (describeGroupConfigs): source
 *   GROUP_CONFIG (the Java Admin's DYNAMIC_GROUP_CONFIG) for an override,
 *   else the broker synonym's source (STATIC_BROKER_CONFIG or
 *   DEFAULT_CONFIG), else DEFAULT_CONFIG; synonyms as Kafka's ConfigHelper.
 *
 * The broker group.* configs read here are looked up in server.properties
 * by name, with Kafka's defaults beside them in GROUP_BROKER_CONFIGS, so
 * this file needs nothing more from the broker config than its explicit
 * values. Kafka does not let these broker configs change at runtime.
 */
import { ErrorCode } from '../protocol/errors.js';
import { parseConfigValue, type ConfigType, type TopicConfigValue } from '../common/config-value.js';
import { ConfigSource, camelName, configTypeId, describeValue } from './topic-config.js';
import type { MetadataImage } from './image.js';
import type { DescribedConfig, DescribeOptions } from './config-schema.js';

/** What this file needs from a broker's configuration: the values set in server.properties. */
export interface GroupBrokerConfig {
  readonly explicit: ReadonlyMap<string, string>;
}

type GroupConfigValue = TopicConfigValue;

/** A broker config of the group coordinator that a group config defaults to or is bounded by. */
interface BrokerConfigDefault {
  name: string;
  type: ConfigType;
  default: GroupConfigValue;
}

/** Kafka 4.4's GroupCoordinatorConfig and ShareGroupConfig defaults for the configs below. */
export const GROUP_BROKER_CONFIGS: readonly BrokerConfigDefault[] = [
  { name: 'group.consumer.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.consumer.min.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.consumer.max.session.timeout.ms', type: 'int', default: 60000 },
  { name: 'group.consumer.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.consumer.min.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.consumer.max.heartbeat.interval.ms', type: 'int', default: 15000 },
  { name: 'group.consumer.assignment.interval.ms', type: 'int', default: 1000 },
  { name: 'group.consumer.min.assignment.interval.ms', type: 'int', default: 0 },
  { name: 'group.consumer.max.assignment.interval.ms', type: 'int', default: 15000 },
  { name: 'group.consumer.assignor.offload.enable', type: 'boolean', default: true },
  { name: 'group.share.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.share.min.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.share.max.session.timeout.ms', type: 'int', default: 60000 },
  { name: 'group.share.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.share.min.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.share.max.heartbeat.interval.ms', type: 'int', default: 15000 },
  { name: 'group.share.record.lock.duration.ms', type: 'int', default: 30000 },
  { name: 'group.share.min.record.lock.duration.ms', type: 'int', default: 15000 },
  { name: 'group.share.max.record.lock.duration.ms', type: 'int', default: 60000 },
  { name: 'group.share.delivery.count.limit', type: 'int', default: 5 },
  { name: 'group.share.min.delivery.count.limit', type: 'int', default: 2 },
  { name: 'group.share.max.delivery.count.limit', type: 'int', default: 10 },
  { name: 'group.share.partition.max.record.locks', type: 'int', default: 2000 },
  { name: 'group.share.min.partition.max.record.locks', type: 'int', default: 100 },
  { name: 'group.share.max.partition.max.record.locks', type: 'int', default: 4000 },
  { name: 'group.share.assignment.interval.ms', type: 'int', default: 1000 },
  { name: 'group.share.min.assignment.interval.ms', type: 'int', default: 0 },
  { name: 'group.share.max.assignment.interval.ms', type: 'int', default: 15000 },
  { name: 'group.share.assignor.offload.enable', type: 'boolean', default: true },
  { name: 'group.streams.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.streams.min.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.streams.max.session.timeout.ms', type: 'int', default: 60000 },
  { name: 'group.streams.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.streams.min.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.streams.max.heartbeat.interval.ms', type: 'int', default: 15000 },
  { name: 'group.streams.num.standby.replicas', type: 'int', default: 0 },
  { name: 'group.streams.max.standby.replicas', type: 'int', default: 2 },
  { name: 'group.streams.initial.rebalance.delay.ms', type: 'int', default: 3000 },
  { name: 'group.streams.assignment.interval.ms', type: 'int', default: 1000 },
  { name: 'group.streams.min.assignment.interval.ms', type: 'int', default: 0 },
  { name: 'group.streams.max.assignment.interval.ms', type: 'int', default: 15000 },
  { name: 'group.streams.assignor.offload.enable', type: 'boolean', default: true },
  { name: 'group.streams.task.offset.interval.ms', type: 'int', default: 60000 },
  { name: 'group.streams.min.task.offset.interval.ms', type: 'int', default: 15000 },
  { name: 'group.streams.num.warmup.replicas', type: 'int', default: 2 },
  { name: 'group.streams.max.warmup.replicas', type: 'int', default: 20 },
  { name: 'group.streams.rack.aware.assignment.tags', type: 'list', default: [] },
  { name: 'group.streams.acceptable.recovery.lag', type: 'long', default: 10000 },
  { name: 'group.streams.assignors', type: 'list', default: ['sticky'] },
];

const BROKER_DEFAULTS = new Map(GROUP_BROKER_CONFIGS.map((def) => [def.name, def]));

/** The broker's value of one of GROUP_BROKER_CONFIGS: server.properties, else Kafka's default. */
export function groupBrokerValue(config: GroupBrokerConfig, name: string): GroupConfigValue {
  const def = BROKER_DEFAULTS.get(name);
  if (def === undefined) throw new Error(`${name} is not a group coordinator broker config`);
  const raw = config.explicit.get(name);
  if (raw === undefined) return def.default;
  const parsed = parseConfigValue(name, def.type, raw);
  // A server.properties value Spool cannot parse is Kafka's startup error; here it falls back to the default.
  return 'error' in parsed ? def.default : parsed.value;
}

function brokerInt(config: GroupBrokerConfig, name: string): number {
  return groupBrokerValue(config, name) as number;
}

export interface GroupConfigDef {
  name: string;
  type: 'int' | 'long' | 'boolean' | 'string' | 'list';
  /** GroupConfig's own default, used when the broker has no synonym (or for the described value of internal configs). */
  default: GroupConfigValue | null;
  /** The broker config this group config overrides (GroupConfig.ALL_GROUP_CONFIG_SYNONYMS). */
  brokerSynonym: string | null;
  /** ConfigDef.Range.atLeast of the group config itself. */
  atLeast?: number;
  /** ConfigDef.ValidString.in. */
  oneOf?: readonly string[];
  /** The broker's min/max configs bounding the value (GroupConfig.validateValues). */
  brokerMin?: string;
  brokerMax?: string;
  /** Kafka's defineInternal: described only where set. */
  internal?: boolean;
}

/** Kafka 4.4's GroupConfig.CONFIG_DEF, in its order (validation reports the first problem in this order). */
export const GROUP_CONFIGS: readonly GroupConfigDef[] = [
  { name: 'consumer.session.timeout.ms', type: 'int', default: 45000, brokerSynonym: 'group.consumer.session.timeout.ms', atLeast: 1, brokerMin: 'group.consumer.min.session.timeout.ms', brokerMax: 'group.consumer.max.session.timeout.ms' },
  { name: 'consumer.heartbeat.interval.ms', type: 'int', default: 5000, brokerSynonym: 'group.consumer.heartbeat.interval.ms', atLeast: 1, brokerMin: 'group.consumer.min.heartbeat.interval.ms', brokerMax: 'group.consumer.max.heartbeat.interval.ms' },
  { name: 'consumer.assignment.interval.ms', type: 'int', default: 1000, brokerSynonym: 'group.consumer.assignment.interval.ms', atLeast: 0, brokerMin: 'group.consumer.min.assignment.interval.ms', brokerMax: 'group.consumer.max.assignment.interval.ms' },
  { name: 'consumer.assignor.offload.enable', type: 'boolean', default: true, brokerSynonym: 'group.consumer.assignor.offload.enable', internal: true },
  { name: 'share.session.timeout.ms', type: 'int', default: 45000, brokerSynonym: 'group.share.session.timeout.ms', atLeast: 1, brokerMin: 'group.share.min.session.timeout.ms', brokerMax: 'group.share.max.session.timeout.ms' },
  { name: 'share.heartbeat.interval.ms', type: 'int', default: 5000, brokerSynonym: 'group.share.heartbeat.interval.ms', atLeast: 1, brokerMin: 'group.share.min.heartbeat.interval.ms', brokerMax: 'group.share.max.heartbeat.interval.ms' },
  { name: 'share.record.lock.duration.ms', type: 'int', default: 30000, brokerSynonym: 'group.share.record.lock.duration.ms', atLeast: 1000, brokerMin: 'group.share.min.record.lock.duration.ms', brokerMax: 'group.share.max.record.lock.duration.ms' },
  { name: 'share.delivery.count.limit', type: 'int', default: 5, brokerSynonym: 'group.share.delivery.count.limit', atLeast: 2, brokerMin: 'group.share.min.delivery.count.limit', brokerMax: 'group.share.max.delivery.count.limit' },
  { name: 'share.partition.max.record.locks', type: 'int', default: 2000, brokerSynonym: 'group.share.partition.max.record.locks', atLeast: 100, brokerMin: 'group.share.min.partition.max.record.locks', brokerMax: 'group.share.max.partition.max.record.locks' },
  { name: 'share.auto.offset.reset', type: 'string', default: 'latest', brokerSynonym: null },
  { name: 'share.isolation.level', type: 'string', default: 'read_uncommitted', brokerSynonym: null, oneOf: ['read_committed', 'read_uncommitted'] },
  { name: 'share.renew.acknowledge.enable', type: 'boolean', default: true, brokerSynonym: null },
  { name: 'share.assignment.interval.ms', type: 'int', default: 1000, brokerSynonym: 'group.share.assignment.interval.ms', atLeast: 0, brokerMin: 'group.share.min.assignment.interval.ms', brokerMax: 'group.share.max.assignment.interval.ms' },
  { name: 'share.assignor.offload.enable', type: 'boolean', default: true, brokerSynonym: 'group.share.assignor.offload.enable', internal: true },
  { name: 'streams.session.timeout.ms', type: 'int', default: 45000, brokerSynonym: 'group.streams.session.timeout.ms', atLeast: 1, brokerMin: 'group.streams.min.session.timeout.ms', brokerMax: 'group.streams.max.session.timeout.ms' },
  { name: 'streams.heartbeat.interval.ms', type: 'int', default: 5000, brokerSynonym: 'group.streams.heartbeat.interval.ms', atLeast: 1, brokerMin: 'group.streams.min.heartbeat.interval.ms', brokerMax: 'group.streams.max.heartbeat.interval.ms' },
  { name: 'streams.num.standby.replicas', type: 'int', default: 0, brokerSynonym: 'group.streams.num.standby.replicas', atLeast: 0, brokerMax: 'group.streams.max.standby.replicas' },
  { name: 'streams.initial.rebalance.delay.ms', type: 'int', default: 3000, brokerSynonym: 'group.streams.initial.rebalance.delay.ms', atLeast: 0 },
  { name: 'streams.assignment.interval.ms', type: 'int', default: 1000, brokerSynonym: 'group.streams.assignment.interval.ms', atLeast: 0, brokerMin: 'group.streams.min.assignment.interval.ms', brokerMax: 'group.streams.max.assignment.interval.ms' },
  { name: 'streams.assignor.offload.enable', type: 'boolean', default: true, brokerSynonym: 'group.streams.assignor.offload.enable', internal: true },
  { name: 'streams.task.offset.interval.ms', type: 'int', default: 60000, brokerSynonym: 'group.streams.task.offset.interval.ms', atLeast: 1, brokerMin: 'group.streams.min.task.offset.interval.ms', internal: true },
  { name: 'streams.num.warmup.replicas', type: 'int', default: 2, brokerSynonym: 'group.streams.num.warmup.replicas', atLeast: 0, brokerMax: 'group.streams.max.warmup.replicas', internal: true },
  { name: 'streams.rack.aware.assignment.tags', type: 'list', default: [], brokerSynonym: 'group.streams.rack.aware.assignment.tags' },
  { name: 'streams.acceptable.recovery.lag', type: 'long', default: 10000, brokerSynonym: 'group.streams.acceptable.recovery.lag', atLeast: 0, internal: true },
  { name: 'streams.assignor.name', type: 'string', default: null, brokerSynonym: 'group.streams.assignors' },
  { name: 'errors.deadletterqueue.topic.name', type: 'string', default: '', brokerSynonym: null },
  { name: 'errors.deadletterqueue.copy.record.enable', type: 'boolean', default: false, brokerSynonym: null },
];

const DEFS = new Map(GROUP_CONFIGS.map((def) => [def.name, def]));

export function groupConfigDef(name: string): GroupConfigDef | undefined {
  return DEFS.get(name);
}

/** The pairs GroupConfig checks: a session timeout must exceed its heartbeat interval. */
const SESSION_HEARTBEAT_PAIRS = [
  ['consumer.session.timeout.ms', 'consumer.heartbeat.interval.ms'],
  ['share.session.timeout.ms', 'share.heartbeat.interval.ms'],
  ['streams.session.timeout.ms', 'streams.heartbeat.interval.ms'],
] as const;

// ---- share.auto.offset.reset

/** A share group's start-offset strategy (ShareGroupAutoOffsetResetStrategy). */
export type ShareAutoOffsetReset = { type: 'earliest' } | { type: 'latest' } | { type: 'by_duration'; durationMs: number };

/**
 * Java's Duration.parse for PnDTnHnMn.nS (case-insensitive, signs allowed
 * per part and in front), in milliseconds (sub-millisecond digits dropped).
 */
function parseIsoDurationMs(text: string): number | null {
  const match = /^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i.exec(text);
  if (match === null) return null;
  const [, sign, days, hours, minutes, seconds, fraction] = match;
  const hasTime = /T/i.test(text);
  if (days === undefined && !hasTime) return null;
  if (hasTime && hours === undefined && minutes === undefined && seconds === undefined) return null;
  const part = (digits: string | undefined, unitMs: number) => (digits === undefined ? 0 : Number(digits) * unitMs);
  const secondsSign = seconds?.startsWith('-') === true ? -1 : 1;
  const fractionMs = fraction === undefined || fraction === '' ? 0 : secondsSign * Number(fraction.padEnd(3, '0').slice(0, 3));
  const total = part(days, 86_400_000) + part(hours, 3_600_000) + part(minutes, 60_000) + part(seconds, 1000) + fractionMs;
  return sign === '-' ? -total : total;
}

/** Parses share.auto.offset.reset as Kafka does (AutoOffsetResetStrategy.fromString less `none`), or null when invalid. */
export function parseShareAutoOffsetReset(text: string): ShareAutoOffsetReset | null {
  if (text === 'earliest' || text === 'latest') return { type: text };
  if (!text.startsWith('by_duration:')) return null;
  const durationMs = parseIsoDurationMs(text.slice('by_duration:'.length));
  if (durationMs === null || durationMs < 0) return null;
  return { type: 'by_duration', durationMs };
}

// ---- validation (controller)

export interface GroupConfigProblem {
  errorCode: number;
  message: string;
}

const invalidConfig = (message: string): GroupConfigProblem => ({ errorCode: ErrorCode.INVALID_CONFIG, message });

/** Parses and checks one value against its own ConfigDef (type, atLeast, ValidString, the reset strategy). */
function parseGroupValue(def: GroupConfigDef, raw: string): { value: GroupConfigValue } | GroupConfigProblem {
  const parsed = parseConfigValue(def.name, def.type, raw);
  if ('error' in parsed) return invalidConfig(parsed.error);
  const invalid = (reason: string) => invalidConfig(`Invalid value ${parsed.text} for configuration ${def.name}: ${reason}`);
  if (def.atLeast !== undefined && (parsed.value as number) < def.atLeast) return invalid(`Value must be at least ${def.atLeast}`);
  if (def.oneOf !== undefined && !def.oneOf.includes(parsed.value as string)) return invalid(`String must be one of: ${def.oneOf.join(', ')}`);
  if (def.name === 'share.auto.offset.reset' && parseShareAutoOffsetReset(parsed.value as string) === null) {
    return invalid(`Invalid value \`${parsed.value as string}\` for configuration ${def.name}. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.`);
  }
  return { value: parsed.value };
}

/**
 * Kafka's GroupConfig.validate on the set a group would have after the
 * change: null values refused, unknown names, duplicate rack tags, each
 * value by its ConfigDef, then the broker bounds and cross-config rules.
 */
export function validateGroupConfigs(configs: ReadonlyMap<string, string | null>, broker: GroupBrokerConfig): GroupConfigProblem | null {
  const nulls = [...configs].filter(([, value]) => value === null).map(([name]) => name);
  if (nulls.length > 0) return invalidConfig(`Null value not supported for group configs: ${nulls.join(',')}`);
  for (const name of configs.keys()) if (!DEFS.has(name)) return invalidConfig(`Unknown group config name: ${name}`);
  const tags = configs.get('streams.rack.aware.assignment.tags');
  if (tags !== undefined && tags !== null) {
    const list = tags.trim() === '' ? [] : tags.trim().split(/\s*,\s*/);
    if (new Set(list).size !== list.length) return invalidConfig('streams.rack.aware.assignment.tags must not contain duplicate tag keys.');
  }
  const parsed = new Map<string, GroupConfigValue>();
  for (const def of GROUP_CONFIGS) {
    const raw = configs.get(def.name);
    if (raw === undefined || raw === null) continue;
    const outcome = parseGroupValue(def, raw);
    if ('errorCode' in outcome) return outcome;
    parsed.set(def.name, outcome.value);
  }
  return validateBrokerBounds(parsed, broker) ?? validateCrossConfig(parsed, broker);
}

/** GroupConfig.validateValues' range checks against the broker's min/max configs. */
function validateBrokerBounds(parsed: ReadonlyMap<string, GroupConfigValue>, broker: GroupBrokerConfig): GroupConfigProblem | null {
  for (const def of GROUP_CONFIGS) {
    const value = parsed.get(def.name);
    if (value === undefined || (def.brokerMin === undefined && def.brokerMax === undefined)) continue;
    const min = def.brokerMin === undefined ? null : brokerInt(broker, def.brokerMin);
    const max = def.brokerMax === undefined ? null : brokerInt(broker, def.brokerMax);
    const n = value as number;
    if (min !== null && max !== null && (n < min || n > max)) return invalidConfig(`${def.name} must be in the range ${min} to ${max} inclusive.`);
    if (min === null && max !== null && n > max) return invalidConfig(`${def.name} must be less than or equal to ${max}`);
    if (max === null && min !== null && n < min) return invalidConfig(`${def.name} must be greater than or equal to ${min}`);
  }
  return null;
}

function validateCrossConfig(parsed: ReadonlyMap<string, GroupConfigValue>, broker: GroupBrokerConfig): GroupConfigProblem | null {
  const assignor = parsed.get('streams.assignor.name');
  if (assignor !== undefined) {
    const registered = groupBrokerValue(broker, 'group.streams.assignors') as string[];
    if (!registered.includes(assignor as string)) {
      return invalidConfig(`streams.assignor.name '${assignor as string}' is not a registered task assignor. Registered assignors are: [${registered.join(', ')}].`);
    }
  }
  for (const [sessionName, heartbeatName] of SESSION_HEARTBEAT_PAIRS) {
    if (!parsed.has(sessionName) && !parsed.has(heartbeatName)) continue;
    const session = (parsed.get(sessionName) ?? brokerInt(broker, groupConfigDef(sessionName)!.brokerSynonym!)) as number;
    const heartbeat = (parsed.get(heartbeatName) ?? brokerInt(broker, groupConfigDef(heartbeatName)!.brokerSynonym!)) as number;
    if (session <= heartbeat) return invalidConfig(`${sessionName} must be greater than ${heartbeatName}`);
  }
  const dlqTopic = parsed.get('errors.deadletterqueue.topic.name') as string | undefined;
  if (dlqTopic !== undefined && dlqTopic.startsWith('__')) return invalidConfig("errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'");
  return null;
}

// ---- effective values (group coordinator, share-partition leaders)

/** Every group config's effective value for one group, by Kafka's name in camelCase. */
export interface EffectiveGroupConfig {
  consumerSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerAssignmentIntervalMs: number;
  consumerAssignorOffloadEnable: boolean;
  shareSessionTimeoutMs: number;
  shareHeartbeatIntervalMs: number;
  shareRecordLockDurationMs: number;
  shareDeliveryCountLimit: number;
  sharePartitionMaxRecordLocks: number;
  /** The text as set ('latest', 'earliest', 'by_duration:PT1H'); parseShareAutoOffsetReset gives its parts. */
  shareAutoOffsetReset: string;
  shareIsolationLevel: 'read_committed' | 'read_uncommitted';
  shareRenewAcknowledgeEnable: boolean;
  shareAssignmentIntervalMs: number;
  shareAssignorOffloadEnable: boolean;
  streamsSessionTimeoutMs: number;
  streamsHeartbeatIntervalMs: number;
  streamsNumStandbyReplicas: number;
  streamsInitialRebalanceDelayMs: number;
  streamsAssignmentIntervalMs: number;
  streamsAssignorOffloadEnable: boolean;
  streamsTaskOffsetIntervalMs: number;
  streamsNumWarmupReplicas: number;
  streamsRackAwareAssignmentTags: readonly string[];
  streamsAcceptableRecoveryLag: number;
  streamsAssignorName: string;
  errorsDeadletterqueueTopicName: string;
  errorsDeadletterqueueCopyRecordEnable: boolean;
}

/** The broker-side value a group config falls back to (streams.assignor.name: the first registered assignor). */
function brokerFallback(def: GroupConfigDef, broker: GroupBrokerConfig): GroupConfigValue | null {
  if (def.brokerSynonym === null) return def.default;
  const value = groupBrokerValue(broker, def.brokerSynonym);
  if (def.name === 'streams.assignor.name') return (value as string[])[0] ?? null;
  return value;
}

/** GroupConfig.evaluate: an override outside the broker's current bounds runs at the nearest bound. */
function clampToBrokerBounds(def: GroupConfigDef, value: GroupConfigValue, broker: GroupBrokerConfig): GroupConfigValue {
  if (typeof value !== 'number') return value;
  if (def.brokerMin !== undefined && value < brokerInt(broker, def.brokerMin)) return brokerInt(broker, def.brokerMin);
  if (def.brokerMax !== undefined && value > brokerInt(broker, def.brokerMax)) return brokerInt(broker, def.brokerMax);
  return value;
}

/** One config's effective value: the group's override (clamped), else the broker's, else GroupConfig's default. */
function effectiveValue(def: GroupConfigDef, override: string | undefined, broker: GroupBrokerConfig): GroupConfigValue | null {
  if (override !== undefined) {
    const parsed = parseGroupValue(def, override);
    // The controller validated the override; one that no longer parses (never expected) falls back like an unset one.
    if (!('errorCode' in parsed)) return clampToBrokerBounds(def, parsed.value, broker);
  }
  return brokerFallback(def, broker);
}

/**
 * The configs group `groupId` runs with: its dynamic overrides from the
 * metadata image over the broker's group.* configs (Kafka's
 * GroupConfigManager + the coordinator's fallbacks). Cheap enough to call
 * per heartbeat or per share-partition initialization: no caching, so a
 * change is seen as soon as the image carries it.
 */
export function effectiveGroupConfig(image: Pick<MetadataImage, 'groupConfigs'>, groupId: string, broker: GroupBrokerConfig): EffectiveGroupConfig {
  const overrides = image.groupConfigs.get(groupId);
  const out: Record<string, GroupConfigValue | null> = {};
  for (const def of GROUP_CONFIGS) out[camelName(def.name)] = effectiveValue(def, overrides?.get(def.name), broker);
  return out as unknown as EffectiveGroupConfig;
}

/**
 * The session timeout and heartbeat interval a consumer or share group runs
 * with: effectiveGroupConfig's answer for those two configs only, since every
 * heartbeat asks for them.
 */
export function effectiveGroupTimeouts(image: Pick<MetadataImage, 'groupConfigs'>, groupId: string, type: 'consumer' | 'share', broker: GroupBrokerConfig): { sessionTimeoutMs: number; heartbeatIntervalMs: number } {
  const overrides = image.groupConfigs.get(groupId);
  const value = (name: string) => effectiveValue(DEFS.get(name)!, overrides?.get(name), broker) as number;
  return { sessionTimeoutMs: value(`${type}.session.timeout.ms`), heartbeatIntervalMs: value(`${type}.heartbeat.interval.ms`) };
}

// ---- DescribeConfigs

function valueText(def: { type: ConfigType }, value: GroupConfigValue | null): string | null {
  return value === null ? null : describeValue(def.type, value);
}

/** Synonyms of the broker config behind `def` (ConfigHelper.configSynonyms: server.properties, then Kafka's default). */
function brokerSynonyms(def: GroupConfigDef, broker: GroupBrokerConfig): { name: string; value: string | null; source: number }[] {
  if (def.brokerSynonym === null) return [];
  const brokerDef = BROKER_DEFAULTS.get(def.brokerSynonym)!;
  const out: { name: string; value: string | null; source: number }[] = [];
  const raw = broker.explicit.get(brokerDef.name);
  if (raw !== undefined) out.push({ name: brokerDef.name, value: valueText(brokerDef, groupBrokerValue(broker, brokerDef.name)), source: ConfigSource.STATIC_BROKER_CONFIG });
  out.push({ name: brokerDef.name, value: valueText(brokerDef, brokerDef.default), source: ConfigSource.DEFAULT_CONFIG });
  return out;
}

/**
 * A GROUP resource's configs as Kafka's ConfigHelper describes them: every
 * non-internal config, and an internal one only where the group or
 * server.properties sets it; the value is the override as set (not
 * clamped), else the broker's value, else GroupConfig's default.
 */
export function describeGroupConfigs(overrides: ReadonlyMap<string, string>, broker: GroupBrokerConfig, options: DescribeOptions): DescribedConfig[] {
  const keys = options.keys === null || options.keys.length === 0 ? null : new Set(options.keys);
  const described: DescribedConfig[] = [];
  for (const def of GROUP_CONFIGS) {
    if (keys !== null && !keys.has(def.name)) continue;
    const override = overrides.get(def.name);
    const setOnBroker = def.brokerSynonym !== null && broker.explicit.has(def.brokerSynonym);
    if (def.internal === true && override === undefined && !setOnBroker) continue;
    const synonyms = brokerSynonyms(def, broker);
    const parsed = override === undefined ? null : parseGroupValue(def, override);
    const value = parsed !== null && !('errorCode' in parsed) ? valueText(def, parsed.value) : valueText(def, brokerFallback(def, broker));
    if (override !== undefined) synonyms.unshift({ name: def.name, value, source: ConfigSource.GROUP_CONFIG });
    described.push({
      name: def.name,
      value,
      readOnly: false,
      configSource: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
      isSensitive: false,
      synonyms: options.includeSynonyms ? synonyms : [],
      configType: configTypeId(def.type),
      documentation: null,
    });
  }
  return described;
}
