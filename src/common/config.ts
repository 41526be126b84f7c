/**
 * Broker configuration under Kafka's property names (server.properties).
 *
 * Each definition carries Kafka's name, type and default, so `spool start`
 * accepts a Kafka server.properties file unchanged. Unknown names are kept
 * (and reported by DescribeConfigs only if defined) rather than rejected, as
 * Kafka does, so a file written for Kafka never stops Spool from starting.
 * Values are parsed by the one config parser, parseConfigValue.
 */
import { parseConfigValue, type ConfigType } from './config-value.js';
import { int64Text } from '../protocol/int64.js';

export type { ConfigType };

export interface ConfigDef {
  name: string;
  type: ConfigType;
  default: string | number | boolean | null;
  /** Returns an error message for an invalid value, or null. */
  validate?: (value: unknown) => string | null;
  /**
   * Kafka defines it among the dynamic broker configs only (DynamicConfig.Broker,
   * QuotaConfig.brokerQuotaConfigs): server.properties does not set it, and
   * DescribeConfigs shows it only where AlterConfigs set it.
   */
  dynamicOnly?: boolean;
}

const atLeast = (min: number) => (value: unknown) => (typeof value === 'number' && value >= min ? null : `Value must be at least ${min}`);
const between = (min: number, max: number) => (value: unknown) =>
  typeof value === 'number' && value >= min && value <= max ? null : `Value must be between ${min} and ${max}`;

/** The broker configs Spool reads. Defaults are Kafka 4.x's. */
export const BROKER_CONFIGS: readonly ConfigDef[] = [
  { name: 'node.id', type: 'int', default: 1 },
  { name: 'process.roles', type: 'list', default: 'broker,controller' },
  { name: 'listeners', type: 'list', default: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093' },
  { name: 'advertised.listeners', type: 'list', default: null },
  { name: 'controller.listener.names', type: 'list', default: 'CONTROLLER' },
  { name: 'inter.broker.listener.name', type: 'string', default: null },
  { name: 'security.inter.broker.protocol', type: 'string', default: 'PLAINTEXT' },
  { name: 'listener.security.protocol.map', type: 'list', default: 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT' },
  { name: 'controller.quorum.voters', type: 'list', default: '' },
  { name: 'controller.quorum.bootstrap.servers', type: 'list', default: '' },
  { name: 'controller.quorum.election.timeout.ms', type: 'int', default: 1000 },
  { name: 'controller.quorum.fetch.timeout.ms', type: 'int', default: 2000 },
  { name: 'controller.quorum.election.backoff.max.ms', type: 'int', default: 1000 },
  { name: 'controller.quorum.request.timeout.ms', type: 'int', default: 2000 },
  { name: 'controller.quorum.retry.backoff.ms', type: 'int', default: 20 },
  { name: 'controller.quorum.auto.join.enable', type: 'boolean', default: false },
  { name: 'broker.rack', type: 'string', default: null },
  { name: 'cluster.id', type: 'string', default: null },
  { name: 'log.dirs', type: 'list', default: null },
  { name: 'log.dir', type: 'string', default: './data' },
  { name: 'num.partitions', type: 'int', default: 1, validate: atLeast(1) },
  { name: 'default.replication.factor', type: 'int', default: 1, validate: atLeast(1) },
  { name: 'auto.create.topics.enable', type: 'boolean', default: true },
  { name: 'delete.topic.enable', type: 'boolean', default: true },
  { name: 'message.max.bytes', type: 'int', default: 1048588, validate: atLeast(0) },
  { name: 'socket.request.max.bytes', type: 'int', default: 104857600, validate: atLeast(1) },
  { name: 'socket.send.buffer.bytes', type: 'int', default: 102400 },
  { name: 'socket.receive.buffer.bytes', type: 'int', default: 102400 },
  { name: 'connections.max.idle.ms', type: 'long', default: 600000 },
  { name: 'queued.max.requests', type: 'int', default: 500, validate: atLeast(1) },
  { name: 'queued.max.request.bytes', type: 'long', default: -1 },
  { name: 'max.connections', type: 'int', default: 2147483647, validate: atLeast(0) },
  { name: 'max.connections.per.ip', type: 'int', default: 2147483647, validate: atLeast(0) },
  { name: 'max.connections.per.ip.overrides', type: 'string', default: '' },
  { name: 'socket.listen.backlog.size', type: 'int', default: 50, validate: atLeast(1) },
  { name: 'min.insync.replicas', type: 'int', default: 1, validate: atLeast(1) },
  { name: 'replica.lag.time.max.ms', type: 'long', default: 30000 },
  { name: 'replica.fetch.max.bytes', type: 'int', default: 1048576, validate: atLeast(0) },
  { name: 'replica.fetch.min.bytes', type: 'int', default: 1 },
  { name: 'replica.fetch.wait.max.ms', type: 'int', default: 500 },
  { name: 'replica.fetch.response.max.bytes', type: 'int', default: 10485760, validate: atLeast(0) },
  { name: 'replica.fetch.backoff.ms', type: 'int', default: 1000, validate: atLeast(0) },
  { name: 'replica.socket.timeout.ms', type: 'int', default: 30000 },
  { name: 'num.replica.fetchers', type: 'int', default: 1 },
  // KIP-392: null serves consumers from the leader only; see src/replication/replica-selector.ts.
  { name: 'replica.selector.class', type: 'class', default: null },
  // Replication throttles (KIP-73): the rates are set through AlterConfigs only.
  { name: 'leader.replication.throttled.rate', type: 'long', default: Infinity, validate: atLeast(0), dynamicOnly: true },
  { name: 'follower.replication.throttled.rate', type: 'long', default: Infinity, validate: atLeast(0), dynamicOnly: true },
  { name: 'replication.quota.window.num', type: 'int', default: 11, validate: atLeast(1) },
  { name: 'replication.quota.window.size.seconds', type: 'int', default: 1, validate: atLeast(1) },
  // Client quotas (KIP-13, KIP-55): the rates themselves are set with AlterClientQuotas.
  { name: 'quota.window.num', type: 'int', default: 11, validate: atLeast(1) },
  { name: 'quota.window.size.seconds', type: 'int', default: 1, validate: atLeast(1) },
  { name: 'fetch.max.bytes', type: 'int', default: 57671680 },
  { name: 'max.incremental.fetch.session.cache.slots', type: 'int', default: 1000 },
  { name: 'fetch.purgatory.purge.interval.requests', type: 'int', default: 1000 },
  { name: 'producer.purgatory.purge.interval.requests', type: 'int', default: 1000 },
  { name: 'log.segment.bytes', type: 'int', default: 1073741824, validate: atLeast(14) },
  { name: 'log.roll.ms', type: 'long', default: null },
  { name: 'log.roll.hours', type: 'int', default: 168 },
  { name: 'log.retention.ms', type: 'long', default: null },
  { name: 'log.retention.minutes', type: 'int', default: null },
  { name: 'log.retention.hours', type: 'int', default: 168 },
  { name: 'log.retention.bytes', type: 'long', default: -1 },
  { name: 'log.retention.check.interval.ms', type: 'long', default: 300000 },
  { name: 'log.index.size.max.bytes', type: 'int', default: 10485760 },
  { name: 'log.index.interval.bytes', type: 'int', default: 4096 },
  { name: 'log.flush.interval.messages', type: 'long', default: Infinity },
  { name: 'log.flush.interval.ms', type: 'long', default: null },
  { name: 'log.flush.scheduler.interval.ms', type: 'long', default: Infinity },
  { name: 'log.segment.delete.delay.ms', type: 'long', default: 60000 },
  { name: 'log.cleanup.policy', type: 'list', default: 'delete' },
  { name: 'log.cleaner.enable', type: 'boolean', default: true },
  { name: 'log.cleaner.threads', type: 'int', default: 1, validate: atLeast(0) },
  { name: 'log.cleaner.dedupe.buffer.size', type: 'long', default: 134217728 },
  { name: 'log.cleaner.io.buffer.size', type: 'int', default: 524288, validate: atLeast(0) },
  { name: 'log.cleaner.io.buffer.load.factor', type: 'double', default: 0.9 },
  { name: 'log.cleaner.io.max.bytes.per.second', type: 'double', default: Number.MAX_VALUE },
  { name: 'log.cleaner.backoff.ms', type: 'long', default: 15000, validate: atLeast(0) },
  { name: 'log.message.timestamp.type', type: 'string', default: 'CreateTime' },
  { name: 'log.message.timestamp.before.max.ms', type: 'long', default: Infinity },
  { name: 'log.message.timestamp.after.max.ms', type: 'long', default: 3600000 },
  { name: 'compression.type', type: 'string', default: 'producer' },
  { name: 'offsets.topic.num.partitions', type: 'int', default: 50, validate: atLeast(1) },
  { name: 'offsets.topic.replication.factor', type: 'short', default: 3, validate: atLeast(1) },
  { name: 'offsets.topic.segment.bytes', type: 'int', default: 104857600 },
  { name: 'offsets.retention.minutes', type: 'int', default: 10080 },
  { name: 'offsets.retention.check.interval.ms', type: 'long', default: 600000 },
  { name: 'offsets.commit.timeout.ms', type: 'int', default: 5000 },
  { name: 'group.initial.rebalance.delay.ms', type: 'int', default: 3000 },
  { name: 'group.min.session.timeout.ms', type: 'int', default: 6000 },
  { name: 'group.max.session.timeout.ms', type: 'int', default: 1800000 },
  { name: 'group.max.size', type: 'int', default: 2147483647 },
  { name: 'group.coordinator.rebalance.protocols', type: 'list', default: 'classic,consumer,streams' },
  { name: 'group.consumer.session.timeout.ms', type: 'int', default: 45000 },
  { name: 'group.consumer.heartbeat.interval.ms', type: 'int', default: 5000 },
  { name: 'group.consumer.assignors', type: 'list', default: 'uniform,range' },
  // Share groups (KIP-932): Kafka 4.4's names, defaults and bounds (GroupCoordinatorConfig, ShareGroupConfig).
  { name: 'group.share.session.timeout.ms', type: 'int', default: 45000, validate: atLeast(1) },
  { name: 'group.share.min.session.timeout.ms', type: 'int', default: 45000, validate: atLeast(1) },
  { name: 'group.share.max.session.timeout.ms', type: 'int', default: 60000, validate: atLeast(1) },
  { name: 'group.share.heartbeat.interval.ms', type: 'int', default: 5000, validate: atLeast(1) },
  { name: 'group.share.min.heartbeat.interval.ms', type: 'int', default: 5000, validate: atLeast(1) },
  { name: 'group.share.max.heartbeat.interval.ms', type: 'int', default: 15000, validate: atLeast(1) },
  { name: 'group.share.max.size', type: 'int', default: 200, validate: between(1, 1000) },
  { name: 'group.share.assignors', type: 'list', default: 'simple' },
  { name: 'group.share.initialize.retry.interval.ms', type: 'int', default: 30000, validate: atLeast(1) },
  { name: 'group.share.record.lock.duration.ms', type: 'int', default: 30000, validate: atLeast(1000) },
  { name: 'group.share.min.record.lock.duration.ms', type: 'int', default: 15000, validate: atLeast(1000) },
  { name: 'group.share.max.record.lock.duration.ms', type: 'int', default: 60000, validate: atLeast(1000) },
  { name: 'group.share.delivery.count.limit', type: 'int', default: 5, validate: between(2, 10) },
  { name: 'group.share.min.delivery.count.limit', type: 'int', default: 2, validate: between(2, 10) },
  { name: 'group.share.max.delivery.count.limit', type: 'int', default: 10, validate: between(2, 10) },
  { name: 'group.share.partition.max.record.locks', type: 'int', default: 2000, validate: atLeast(100) },
  { name: 'group.share.min.partition.max.record.locks', type: 'int', default: 100, validate: atLeast(100) },
  { name: 'group.share.max.partition.max.record.locks', type: 'int', default: 4000, validate: atLeast(100) },
  { name: 'group.share.max.share.sessions', type: 'int', default: 2000, validate: atLeast(1) },
  { name: 'share.fetch.purgatory.purge.interval.requests', type: 'int', default: 1000 },
  { name: 'transaction.state.log.num.partitions', type: 'int', default: 50 },
  { name: 'transaction.state.log.replication.factor', type: 'short', default: 3 },
  { name: 'transaction.state.log.min.isr', type: 'int', default: 2 },
  { name: 'share.coordinator.state.topic.num.partitions', type: 'int', default: 50, validate: atLeast(1) },
  { name: 'share.coordinator.state.topic.replication.factor', type: 'short', default: 3, validate: atLeast(1) },
  { name: 'share.coordinator.state.topic.min.isr', type: 'short', default: 2, validate: atLeast(1) },
  { name: 'share.coordinator.state.topic.segment.bytes', type: 'int', default: 104857600, validate: atLeast(1) },
  { name: 'share.coordinator.snapshot.update.records.per.snapshot', type: 'int', default: 500, validate: between(0, 500) },
  { name: 'share.coordinator.write.timeout.ms', type: 'int', default: 5000, validate: atLeast(1) },
  { name: 'share.coordinator.cold.partition.snapshot.interval.ms', type: 'int', default: 300000, validate: atLeast(1) },
  { name: 'transaction.max.timeout.ms', type: 'int', default: 900000 },
  { name: 'transactional.id.expiration.ms', type: 'int', default: 604800000 },
  { name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms', type: 'int', default: 10000, validate: atLeast(1) },
  { name: 'transaction.remove.expired.transaction.cleanup.interval.ms', type: 'int', default: 3600000, validate: atLeast(1) },
  { name: 'producer.id.expiration.ms', type: 'int', default: 86400000 },
  { name: 'max.in.flight.requests.per.connection', type: 'int', default: 5 },
  { name: 'unclean.leader.election.enable', type: 'boolean', default: false },
  { name: 'unclean.leader.election.interval.ms', type: 'long', default: 300000, validate: atLeast(1) },
  { name: 'auto.leader.rebalance.enable', type: 'boolean', default: true },
  { name: 'leader.imbalance.check.interval.seconds', type: 'long', default: 300, validate: atLeast(1) },
  // Read by Kafka's ZooKeeper-era controller only: a KRaft controller balances every imbalanced partition.
  { name: 'leader.imbalance.per.broker.percentage', type: 'int', default: 10, validate: atLeast(0) },
  { name: 'metadata.log.dir', type: 'string', default: null },
  { name: 'metadata.log.segment.bytes', type: 'int', default: 1073741824 },
  { name: 'metadata.max.retention.bytes', type: 'long', default: 104857600 },
  { name: 'metadata.log.max.record.bytes.between.snapshots', type: 'long', default: 20971520 },
  { name: 'broker.heartbeat.interval.ms', type: 'int', default: 2000 },
  { name: 'broker.session.timeout.ms', type: 'int', default: 9000 },
  { name: 'request.timeout.ms', type: 'int', default: 30000 },
  { name: 'authorizer.class.name', type: 'string', default: '' },
  { name: 'super.users', type: 'string', default: null },
  { name: 'allow.everyone.if.no.acl.found', type: 'boolean', default: false },
  // Spool's own operator listeners (src/insight), off unless set: `http://host:port`.
  { name: 'metrics.listener', type: 'string', default: null },
  { name: 'console.listener', type: 'string', default: null },
  // The web console's actions (reset offsets, delete records): read-only unless enabled.
  { name: 'console.actions.enable', type: 'boolean', default: false },
];

const DEFS = new Map(BROKER_CONFIGS.map((def) => [def.name, def]));

export function brokerConfigDef(name: string): ConfigDef | undefined {
  return DEFS.get(name);
}

/** Parses a Java .properties text (key=value or key: value, # and ! comments, \ line continuation). */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim();
    while (line.endsWith('\\') && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const match = /^([^=:\s]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (match !== null) out.set(match[1]!, match[2]!);
    else out.set(line, '');
  }
  return out;
}

/** A resolved broker configuration: explicit values over Kafka defaults. */
export class BrokerConfig {
  private readonly values = new Map<string, unknown>();

  constructor(readonly explicit: ReadonlyMap<string, string>) {
    for (const def of BROKER_CONFIGS) {
      const raw = def.dynamicOnly === true ? undefined : explicit.get(def.name);
      if (raw === undefined) {
        this.values.set(def.name, def.default);
        continue;
      }
      const parsed = parseConfigValue(def.name, def.type, raw);
      if ('error' in parsed) throw new ConfigError(parsed.error);
      const problem = def.validate?.(parsed.value) ?? null;
      if (problem !== null) throw new ConfigError(`Invalid value ${raw} for configuration ${def.name}: ${problem}`);
      this.values.set(def.name, parsed.value);
    }
  }

  /**
   * From startBroker's settings. A JS number cannot spell Long.MAX_VALUE
   * (9223372036854775807 is 2^63 as a double): integers are written as
   * src/protocol/int64.ts prints them, so 2**63 means Long.MAX_VALUE.
   */
  static fromObject(settings: Record<string, string | number | boolean>): BrokerConfig {
    const integral = (value: number) => Number.isInteger(value) || Math.abs(value) === Infinity;
    const text = (value: string | number | boolean) => (typeof value === 'number' && integral(value) ? int64Text(value) : String(value));
    return new BrokerConfig(new Map(Object.entries(settings).map(([key, value]) => [key, text(value)])));
  }

  int(name: string): number {
    const value = this.values.get(name);
    if (typeof value !== 'number') throw new ConfigError(`${name} has no numeric value`);
    return value;
  }

  optionalInt(name: string): number | null {
    const value = this.values.get(name);
    return typeof value === 'number' ? value : null;
  }

  bool(name: string): boolean {
    return this.values.get(name) === true;
  }

  string(name: string): string | null {
    const value = this.values.get(name);
    return value === null || value === undefined ? null : String(value);
  }

  list(name: string): string[] {
    const value = this.string(name);
    if (value === null || value.trim() === '') return [];
    return value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  }

  /** True when the value came from the user rather than Kafka's default. */
  isExplicit(name: string): boolean {
    return this.explicit.has(name);
  }

  /** log.retention.ms, else minutes, else hours (Kafka's precedence). */
  get logRetentionMs(): number {
    const ms = this.optionalInt('log.retention.ms');
    if (ms !== null) return ms;
    const minutes = this.optionalInt('log.retention.minutes');
    if (minutes !== null) return minutes * 60_000;
    return this.int('log.retention.hours') * 3_600_000;
  }

  get logRollMs(): number {
    return this.optionalInt('log.roll.ms') ?? this.int('log.roll.hours') * 3_600_000;
  }

  get logDirs(): string[] {
    const dirs = this.list('log.dirs');
    return dirs.length > 0 ? dirs : [this.string('log.dir')!];
  }
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface ListenerSpec {
  name: string;
  host: string;
  port: number;
}

/** Parses `NAME://host:port` entries (host may be empty or [ipv6]). */
export function parseListeners(entries: readonly string[]): ListenerSpec[] {
  return entries.map((entry) => {
    const match = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(entry.trim());
    if (match === null) throw new ConfigError(`Invalid listener ${entry}: expected NAME://host:port`);
    const host = match[2]!.replace(/^\[|\]$/g, '');
    return { name: match[1]!.toUpperCase(), host, port: Number(match[3]) };
  });
}

/**
 * What Kafka's shipped config/server.properties sets for a one-node
 * quickstart, applied when `spool start` runs without a properties file and
 * by the embedded startBroker(): internal topics with one replica (Kafka's
 * default of 3 cannot be met by one node) and no initial rebalance delay.
 * Explicit settings always win.
 */
export const SINGLE_NODE_DEFAULTS: Readonly<Record<string, string>> = {
  'offsets.topic.replication.factor': '1',
  'transaction.state.log.replication.factor': '1',
  'transaction.state.log.min.isr': '1',
  'share.coordinator.state.topic.replication.factor': '1',
  'share.coordinator.state.topic.min.isr': '1',
  'group.initial.rebalance.delay.ms': '0',
};
