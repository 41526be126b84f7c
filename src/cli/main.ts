#!/usr/bin/env node
/**
 * The `spool` bin (package.json "bin"): binds the CLI to this process's
 * streams and signals, then runs it.
 */
import { createInterface } from 'node:readline';
import { realEnv } from '../io/env.js';
import type { CliIo } from './io.js';
import { runCli } from './program.js';

const processIo: CliIo = {
  env: realEnv,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdinLines: () => createInterface({ input: process.stdin, crlfDelay: Infinity }),
  untilSignal: () => new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  }),
};

runCli(process.argv.slice(2), processIo).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
