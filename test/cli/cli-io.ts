/**
 * An in-memory CliIo for running `spool` commands in-process under test:
 * stdout and stderr collect into strings, stdin is a fixed list of lines,
 * and signals arrive only when the test calls signal().
 */
import { realEnv, type Env } from '../../src/io/env.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/program.js';

export interface TestIo extends CliIo {
  out: string;
  err: string;
  signal(): void;
}

export function testIo(stdin: readonly string[] = [], env: Env = realEnv): TestIo {
  let raise: (name: string) => void = () => undefined;
  const signalled = new Promise<string>((resolve) => { raise = resolve; });
  const io: TestIo = {
    env,
    out: '',
    err: '',
    stdout: (text) => { io.out += text; },
    stderr: (text) => { io.err += text; },
    async *stdinLines() {
      yield* stdin;
    },
    untilSignal: () => signalled,
    signal: () => raise('SIGTERM'),
  };
  return io;
}

/** Runs `spool <args>` in-process. */
export async function spool(args: readonly string[], stdin: readonly string[] = []): Promise<{ code: number; out: string; err: string }> {
  const io = testIo(stdin);
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}
