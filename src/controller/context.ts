/**
 * What every controller operation reads: the metadata state as replayed so
 * far, the node's static configuration, the config schema (which knows
 * Kafka's topic and broker configs), and randomness for topic ids and
 * replica placement. Operations are pure functions of this context and
 * their request.
 */
import type { Random } from '../io/random.js';
import type { MetadataImage } from '../metadata/image.js';

/** The static (server.properties) configuration the controller reads. BrokerConfig satisfies it. */
export interface StaticConfig {
  /** Values set explicitly, by Kafka property name. */
  readonly explicit: ReadonlyMap<string, string>;
  int(name: string): number;
  bool(name: string): boolean;
}

export interface ConfigEntryDescription {
  name: string;
  value: string | null;
  readOnly: boolean;
  configSource: number;
  isSensitive: boolean;
}

export interface ConfigResourceRef {
  /** ConfigResource type: 2 topic, 4 broker, ... */
  type: number;
  name: string;
}

/** Kafka's KafkaConfigSchema + ConfigurationValidator, injected so the controller stays free of config tables. */
export interface ConfigSchema {
  /** Checks the whole config set a resource would have after a change; null when valid. */
  validate(resource: ConfigResourceRef, configs: ReadonlyMap<string, string | null>, changed: readonly string[]): { errorCode: number; message: string } | null;
  /** True when the config is a list (APPEND and SUBTRACT apply). */
  isSplittable(resourceType: number, name: string): boolean;
  /** The value a config has when nothing sets it, as text; null when none. */
  defaultValue(resourceType: number, name: string): string | null;
  /** A new topic's effective configs, for CreateTopics v5+ responses. */
  describeNewTopic(overrides: ReadonlyMap<string, string>, image: MetadataImage): ConfigEntryDescription[];
}

export interface ControllerContext {
  image: MetadataImage;
  nodeId: number;
  config: StaticConfig;
  configSchema: ConfigSchema;
  random: Random;
  /** Offset the next appended record gets (broker epochs are write offsets, as in Kafka). */
  nextWriteOffset: number;
}
