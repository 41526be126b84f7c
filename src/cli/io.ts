/**
 * What a CLI command may touch: output streams, input lines, the Env seams
 * and a way to wait for SIGINT/SIGTERM. main.ts binds these to the process;
 * tests bind them to buffers, so commands run in-process under test.
 */
import type { Env } from '../io/env.js';

export interface CliIo {
  env: Env;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Standard input, line by line (without the line terminator). */
  stdinLines(): AsyncIterable<string>;
  /** Resolves on the first SIGINT or SIGTERM (never in tests unless they trigger it). */
  untilSignal(): Promise<string>;
}

/** Raised by a command to end with an exit code and a message for stderr. */
export class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Commander collector for repeatable options (`--config a=1 --config b=2`). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Parses `key=value` entries (each entry may itself hold several, comma-separated, when `splitCommas`). */
export function parseKeyValues(entries: readonly string[], options: { splitCommas?: boolean } = {}): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of entries) {
    const parts = options.splitCommas === true ? splitConfigList(entry) : [entry];
    for (const part of parts) {
      const equals = part.indexOf('=');
      if (equals <= 0) throw new CliError(`Invalid entry '${part}': expected key=value`);
      out.set(part.slice(0, equals).trim(), part.slice(equals + 1));
    }
  }
  return out;
}

/**
 * Splits kafka-configs' `k=v,k2=v2` list. As in Kafka, a value holding
 * commas is written in square brackets: `k=[a,b],k2=v`.
 */
export function splitConfigList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '[') depth++;
    if (char === ']') depth--;
    if (char === ',' && depth === 0) {
      if (current !== '') out.push(current);
      current = '';
      continue;
    }
    current += char;
  }
  if (current !== '') out.push(current);
  return out.map((part) => part.replace(/=\[(.*)\]$/, '=$1'));
}

export const DEFAULT_BOOTSTRAP_SERVER = '127.0.0.1:9092';

/** Kafka's ToolsUtils.prettyPrintTable: each column padded to its widest value, every value followed by a tab. */
export function prettyPrintTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i]!.length)));
  const line = (row: readonly string[]): string => row.map((value, i) => `${value.padEnd(widths[i]!)}\t`).join('') + '\n';
  return line(headers) + rows.map(line).join('');
}
