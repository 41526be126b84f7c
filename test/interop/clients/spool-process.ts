/**
 * A real Spool node in a child process, as a user runs it:
 * `node dist/src/cli/main.js start --override log.dirs=DIR --override listeners=...`.
 * Resolves once the node prints its "Spool started: ..." line. The interop
 * tests point third-party clients at `bootstrap`; the crash test kills it
 * with SIGKILL and starts it again on the same data dir and port.
 *
 * Test code, not product code: it uses child processes, node:fs and node:net
 * directly (DESIGN.md's io seams bind src/ only).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The compiled `spool` bin (this file runs from dist/test/interop/clients/). */
export const SPOOL_BIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

/** The first client listener's name (PLAINTEXT, or CONTROLLER on a controller-only node) and address. */
const READY_LINE = /^Spool started: [A-Z0-9_]+:\/\/(127\.0\.0\.1):(\d+) /m;
const START_TIMEOUT_MS = 60_000;

export interface StartSpoolOptions {
  /** Data dir (log.dirs); default a new temp dir that stop() removes. */
  dir?: string;
  /** PLAINTEXT port; default a free one. */
  port?: number;
  /** CONTROLLER port; default a free one. */
  controllerPort?: number;
  /** `listeners` instead of PLAINTEXT on `port` plus CONTROLLER on `controllerPort` (a broker-only or controller-only node). */
  listeners?: string;
  /** Extra `--override key=value` properties. */
  overrides?: readonly string[];
  /** Options for node itself, before the script (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
  /** RLIMIT_NOFILE for the node once it serves (`prlimit --nofile`), to run it out of file descriptors. */
  openFilesMax?: number;
}

export interface SpoolProcess {
  bootstrap: string;
  port: number;
  dir: string;
  pid: number;
  /** Everything the node printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGTERM and wait; resolves with the exit code. Removes the dir if it was created here (unless keepDir). */
  stop(options?: { keepDir?: boolean }): Promise<number | null>;
  /** SIGKILL and wait until the process is gone; keeps the data dir. */
  kill9(): Promise<void>;
  /** Sends SIGSTOP (the process freezes, its sockets stay open) or SIGCONT (it resumes). */
  signal(name: 'SIGSTOP' | 'SIGCONT'): void;
}

export async function startSpool(options: StartSpoolOptions = {}): Promise<SpoolProcess> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'spool-interop-'));
  const port = options.port ?? (await freePort());
  const controllerPort = options.controllerPort ?? (await freePort());
  const args = [
    ...(options.nodeArgs ?? []),
    SPOOL_BIN, 'start',
    '--override', `log.dirs=${dir}`,
    '--override', `listeners=${options.listeners ?? `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`}`,
    ...(options.overrides ?? []).flatMap((override) => ['--override', override]),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (data: Buffer) => { text += data.toString(); });
  child.stderr.on('data', (data: Buffer) => { text += data.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await untilReady(child, () => text);
    // Lowered once the node serves: Node's module loader reads the module files concurrently at startup, and under
    // load that alone could run past a low limit (seen in CI: EMFILE opening a module before the node was up).
    if (options.openFilesMax !== undefined) execFileSync('prlimit', ['--pid', String(child.pid), `--nofile=${options.openFilesMax}:${options.openFilesMax}`]);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let gone = false;
  return {
    bootstrap: `127.0.0.1:${port}`,
    port,
    dir,
    pid: child.pid!,
    output: () => text,
    async stop(stopOptions = {}) {
      const code = gone ? null : (child.kill('SIGTERM'), await exited);
      gone = true;
      if (ownDir && stopOptions.keepDir !== true) rmSync(dir, { recursive: true, force: true });
      return code;
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited;
      gone = true;
    },
    signal(name) {
      child.kill(name);
    },
  };
}

function untilReady(child: ChildProcess, text: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`spool start did not print its ready line in ${START_TIMEOUT_MS} ms:\n${text()}`)), START_TIMEOUT_MS);
    const check = (): void => {
      if (READY_LINE.test(text())) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`spool start exited with ${code} before it was ready:\n${text()}`));
    });
  });
}

/**
 * Where freePort looks: below Linux's default ephemeral range (32768-60999), from which the kernel picks the local
 * port of every outgoing connection and of every port-0 listener. A port found there could be taken by a client
 * connection of a parallel test before the node binds it (seen in CI: EADDRINUSE on a quorum voter's port).
 */
const FREE_PORT_RANGE = { first: 20_000, last: 32_767 } as const;
const FREE_PORT_ATTEMPTS_MAX = 200;

/** A TCP port that was free a moment ago, outside the kernel's ephemeral range. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < FREE_PORT_ATTEMPTS_MAX; attempt++) {
    const port = FREE_PORT_RANGE.first + Math.floor(Math.random() * (FREE_PORT_RANGE.last - FREE_PORT_RANGE.first + 1));
    if (await bindsOn(port)) return port;
  }
  throw new Error(`no free port in ${FREE_PORT_RANGE.first}-${FREE_PORT_RANGE.last} after ${FREE_PORT_ATTEMPTS_MAX} tries`);
}

function bindsOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
