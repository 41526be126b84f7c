/**
 * Process plumbing for the benchmark harness: running commands with a time
 * limit and line callbacks, resident set size and process age from /proc,
 * free ports, and a description of the machine.
 *
 * Benchmark code, not product code: it uses node:fs, node:net, child
 * processes and the clock directly (DESIGN.md's io seams bind src/ only).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import * as os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CommandResult {
  stdout: string;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The harness stopped it (time limit or `stopWhen`). */
  stopped: boolean;
  elapsedMs: number;
}

export interface RunCommandOptions {
  env?: NodeJS.ProcessEnv;
  /** SIGTERM after this long (SIGKILL 10 s later). */
  timeoutMs: number;
  /** Called with each stdout line; returning true stops the command (SIGTERM). */
  onLine?: (line: string) => boolean | void;
  /** Called once the process exists (for pids). */
  onSpawn?: (child: ChildProcess) => void;
}

const runningChildren = new Set<ChildProcess>();

/** SIGTERM to every command runCommand() started that is still running (the harness was interrupted). */
export function killRunningCommands(): void {
  for (const child of runningChildren) child.kill('SIGTERM');
}

/** Runs a command to completion or until stopped, collecting its output. */
export function runCommand(file: string, args: readonly string[], options: RunCommandOptions): Promise<CommandResult> {
  const startMs = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    runningChildren.add(child);
    options.onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    let partial = '';
    let stopped = false;
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    };
    const timer = setTimeout(stop, options.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (options.onLine?.(line) === true) stop();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19));
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      runningChildren.delete(child);
      clearTimeout(timer);
      resolve({ stdout, stderr, code, signal, stopped, elapsedMs: performance.now() - startMs });
    });
  });
}

/** VmRSS of a live process in KiB, or null when it is gone. */
export function rssKiB(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]);
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `intervalMs` until stop(). */
export class RssSampler {
  private readonly samples: number[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number, intervalMs = 250) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.sample();
  }

  private sample(): void {
    const kib = rssKiB(this.pid);
    if (kib !== null) this.samples.push(kib);
  }

  stop(): { peakMiB: number; meanMiB: number; samples: number } {
    clearInterval(this.timer);
    this.sample();
    const peak = this.samples.reduce((a, b) => Math.max(a, b), 0);
    const mean = this.samples.reduce((a, b) => a + b, 0) / Math.max(1, this.samples.length);
    return { peakMiB: peak / 1024, meanMiB: mean / 1024, samples: this.samples.length };
  }
}

let clockTicksPerSecond: number | undefined;

/** Milliseconds since boot (/proc/uptime, 10 ms resolution): the clock processStartMs() uses. */
export function uptimeMs(): number {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
}

/** When a live process started, in uptimeMs() terms (10 ms resolution), or null when it is gone. */
export function processStartMs(pid: number): number | null {
  try {
    clockTicksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime) counts from the end of the command name, which may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[19]) / clockTicksPerSecond) * 1000;
  } catch {
    return null;
  }
}

/** True while process `pid` exists (signal 0 delivers nothing, only checks). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** User + system CPU seconds a live process has used (/proc/<pid>/stat utime + stime). */
export function cpuSeconds(pid: number): number {
  clockTicksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : port;
      server.close(() => resolve(bound));
    });
  });
}

/** A port p such that p and p + 1 were both free a moment ago (client and controller listeners). */
export async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await listenOnce(0);
    if (port < 65535 && (await listenOnce(port + 1).then(() => true, () => false))) return port;
  }
  throw new Error('no free port pair found');
}

export interface MachineInfo {
  hostname: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  java: string;
  dataDisk: string;
  loadAverageStart: number[];
  loadAverageEnd?: number[];
}

function firstLine(file: string, args: readonly string[]): string {
  try {
    const out = execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return out.trim().split('\n')[0] ?? '';
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    return stderr.trim().split('\n')[0] ?? 'unknown';
  }
}

/** What the figures were measured on. */
export function machineInfo(dataDir: string): MachineInfo {
  const javaLine = firstLine('sh', ['-c', 'java -version 2>&1 | sed -n 2p']);
  const df = firstLine('sh', ['-c', `df -h --output=source,fstype,size ${JSON.stringify(dataDir)} | tail -1`]);
  return {
    hostname: os.hostname(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    java: javaLine,
    dataDisk: df.replace(/\s+/g, ' '),
    loadAverageStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export function loadAverage(): number[] {
  return os.loadavg().map((l) => Math.round(l * 100) / 100);
}

/** A shell-quoted command line, for the report. */
export function commandLine(file: string, args: readonly string[]): string {
  const quote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return [file, ...args].map(quote).join(' ');
}

/** The repository root (the directory holding package.json), found from this file so it works from dist/. */
export const REPO_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found');
    dir = parent;
  }
  return dir;
})();

let buildRoot: string | null = null;

/** Where spawned Spool and generator processes load their compiled code from (see snapshotBuild). */
export function buildRootDir(): string {
  return buildRoot ?? REPO_ROOT;
}

/**
 * Copies dist/src and dist/bench to `dir` (with package.json and a
 * node_modules link) and runs Spool and the Node generator from there, so a
 * rebuild of the checkout during a run (other work on the same tree) cannot
 * change or break the code under test halfway.
 */
export function snapshotBuild(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'dist'), { recursive: true });
  for (const part of ['src', 'bench']) cpSync(join(REPO_ROOT, 'dist', part), join(dir, 'dist', part), { recursive: true });
  copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  buildRoot = dir;
}

/** A path for the report: relative to the repository (or to the build snapshot). */
export function shownPath(path: string): string {
  return path.replace(buildRootDir() + '/', '').replace(REPO_ROOT + '/', '');
}
