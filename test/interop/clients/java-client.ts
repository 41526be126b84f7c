/**
 * Finds the Java client driver (test/interop/java-client, built by its
 * ci-setup.sh from kafka-clients 4.4.0) and builds its `java` command line.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hasCommand } from './harness.js';

const DIR = fileURLToPath(new URL('../../../../test/interop/java-client/', import.meta.url));

/** The `java` arguments that run ClientDriver with `args`. */
export function javaDriverArgs(args: readonly string[]): string[] {
  return ['-Xmx256m', '-XX:TieredStopAtLevel=1', '-cp', `${DIR}lib/*:${DIR}classes`, 'ClientDriver', ...args];
}

/** Undefined when java and the compiled driver are there; else what is missing. */
export function javaDriverMissing(): string | undefined {
  if (!hasCommand('java')) return 'java not installed';
  if (!existsSync(`${DIR}classes/ClientDriver.class`)) return `Java client driver not built: run ${DIR}ci-setup.sh`;
  return undefined;
}
