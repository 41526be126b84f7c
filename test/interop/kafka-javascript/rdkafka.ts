/**
 * What the @confluentinc/kafka-javascript drivers (driver.ts here and
 * ../groups/kafka-javascript-member.ts) share: the client's name and versions
 * for their reports, and a promise around the librdkafka-style API's
 * callbacks. Loads the native addon.
 */
import { createRequire } from 'node:module';
import kafka from '@confluentinc/kafka-javascript';

const require = createRequire(import.meta.url);

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
