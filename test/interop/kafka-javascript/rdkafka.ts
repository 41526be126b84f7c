/**
 * What the @confluentinc/kafka-javascript drivers (driver.ts here and
 * ../groups/kafka-javascript-member.ts) share: the package itself, loaded
 * with require and typed here by the slice of its librdkafka-style API they
 * use, so the tests compile in a checkout whose node_modules predates the
 * package (the drivers only run once ci-setup.sh built the addon); the
 * client's versions for their reports; a promise around its callbacks.
 * Loads the native addon.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** librdkafka configuration properties, by librdkafka's names. */
export type Config = Record<string, string | number | boolean>;
type Callback<T> = (error: Error | null | undefined, result: T) => void;
type Header = Record<string, Buffer>;

export interface TopicPartitionOffset { topic: string; partition: number; offset: number }
export interface Message extends TopicPartitionOffset {
  key?: Buffer | string | null;
  value: Buffer | null;
  timestamp?: number;
  headers?: Header[];
}

interface Client {
  connect(options: { timeout?: number }, done: Callback<unknown>): void;
  disconnect(done: Callback<unknown>): void;
}

export interface Producer extends Client {
  on(event: 'delivery-report', listener: (error: Error | null | undefined) => void): void;
  setPollInterval(intervalMs: number): void;
  produce(topic: string, partition: null, value: Buffer, key: Buffer, timestamp: number | undefined, opaque: undefined, headers: Header[]): void;
  flush(timeoutMs: number, done: (error: Error | null | undefined) => void): void;
}

export interface KafkaConsumer extends Client {
  assign(assignments: TopicPartitionOffset[]): void;
  subscribe(topics: string[]): void;
  assignments(): { partition: number }[];
  setDefaultConsumeTimeout(timeoutMs: number): void;
  consume(count: number, done: Callback<Message[]>): void;
  /** Throws the broker's or librdkafka's error. */
  commitSync(offsets: TopicPartitionOffset[]): void;
  offsetsForTimes(query: TopicPartitionOffset[], timeoutMs: number, done: Callback<TopicPartitionOffset[]>): void;
}

export interface AdminClient {
  createTopic(topic: { topic: string; num_partitions: number; replication_factor: number }, timeoutMs: number, done: (error: Error | null | undefined) => void): void;
  listTopics(options: { timeout: number }, done: Callback<string[]>): void;
  describeTopics(topics: string[], options: { timeout: number }, done: Callback<{ name: string; partitions: unknown[] }[]>): void;
  deleteTopic(topic: string, timeoutMs: number, done: (error: Error | null | undefined) => void): void;
  disconnect(): void;
}

export const kafka = require('@confluentinc/kafka-javascript') as {
  librdkafkaVersion: string;
  Producer: new (config: Config) => Producer;
  KafkaConsumer: new (config: Config, topicConfig: Config) => KafkaConsumer;
  AdminClient: { create(config: Config): AdminClient };
};

/** The package version and the version of the librdkafka built into it. */
export function kafkaJavascriptName(): string {
  const { version } = require('@confluentinc/kafka-javascript/package.json') as { version: string };
  return `@confluentinc/kafka-javascript ${version}, librdkafka ${kafka.librdkafkaVersion}`;
}

/** Runs a callback-style call; resolves with its result, rejects with its error. */
export function call<T>(start: (done: (error: unknown, result: T) => void) => unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    start((error, result) => {
      if (error === null || error === undefined) resolve(result);
      else reject(error instanceof Error ? error : new Error(JSON.stringify(error)));
    });
  });
}
