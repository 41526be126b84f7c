/**
 * Where @confluentinc/kafka-javascript's native addon is, and whether it was
 * built (by ci-setup.sh in this folder), without loading it: the test runner
 * only starts driver processes that load it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { missingToolSkip } from '../clients/scenario.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const ADDON = `${ROOT}node_modules/@confluentinc/kafka-javascript/build/Release/confluent-kafka-javascript.node`;
export const KAFKA_JAVASCRIPT_SETUP = `${ROOT}test/interop/kafka-javascript/ci-setup.sh`;
/** The compiled drivers (this file runs from dist/test/interop/kafka-javascript/). */
export const KAFKA_JAVASCRIPT_DRIVER = fileURLToPath(new URL('./driver.js', import.meta.url));
export const KAFKA_JAVASCRIPT_MEMBER = fileURLToPath(new URL('../groups/kafka-javascript-member.js', import.meta.url));

/** A skip message unless the addon was built (throws with CI=true). */
export function kafkaJavascriptMissing(): string | undefined {
  return missingToolSkip(existsSync(ADDON), `@confluentinc/kafka-javascript's addon not built: run ${KAFKA_JAVASCRIPT_SETUP}`);
}
