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
  // `on`, not `once`: the handlers stay while the node stops, so a second signal (npm forwards to its child the
  // SIGTERM or Ctrl-C that the whole process group already got) cannot kill it before its clean shutdown.
  untilSignal: () => new Promise((resolve) => {
    process.on('SIGINT', () => resolve('SIGINT'));
    process.on('SIGTERM', () => resolve('SIGTERM'));
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
