/**
 * The `spool` bin as a user runs it, in child processes: `spool start` with
 * --override (port 0, a temporary data dir) prints one ready line with the
 * address; `spool produce` reads piped stdin; `spool consume` prints the
 * records back; SIGTERM stops the node with exit code 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type AddressInfo } from 'node:net';

const BIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function run(args: readonly string[], stdin?: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (data: Buffer) => { out += data.toString(); });
    child.stderr.on('data', (data: Buffer) => { err += data.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(stdin ?? '');
  });
}

/** Resolves with the first stdout line of `child` (the ready line). */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let errors = '';
    child.stderr!.on('data', (data: Buffer) => { errors += data.toString(); });
    child.stdout!.on('data', (data: Buffer) => {
      text += data.toString();
      const end = text.indexOf('\n');
      if (end >= 0) resolve(text.slice(0, end));
    });
    child.on('close', (code) => reject(new Error(`spool start exited with ${code} before it was ready: ${errors}`)));
  });
}

test('spool start serves until SIGTERM; spool produce and consume work against it', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-bin-'));
  const node = spawn(process.execPath, [BIN, 'start', '--override', 'listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', '--override', `log.dirs=${dir}`, '--override', 'node.id=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => node.on('close', (code) => resolve(code)));
  try {
    const ready = await firstLine(node);
    const match = /^Spool started: PLAINTEXT:\/\/(127\.0\.0\.1:\d+) \(node 1, data in (.+)\)$/.exec(ready);
    assert.ok(match, ready);
    assert.equal(match[2], dir);
    const server = ['--bootstrap-server', match[1]!];

    const created = await run(['topics', ...server, '--create', '--topic', 'lines', '--partitions', '2']);
    assert.equal(created.code, 0, created.err);
    const produced = await run(['produce', ...server, '--topic', 'lines', '--property', 'parse.key=true', '--property', 'key.separator=:'], 'a:one\nb:two\na:three\n');
    assert.equal(produced.code, 0, produced.err);
    const consumed = await run(['consume', ...server, '--topic', 'lines', '--from-beginning', '--max-messages', '3', '--property', 'print.key=true', '--property', 'key.separator==']);
    assert.equal(consumed.code, 0, consumed.err);
    assert.deepEqual(consumed.out.trimEnd().split('\n').sort(), ['a=one', 'a=three', 'b=two']);
    const aLines = consumed.out.split('\n').filter((line) => line.startsWith('a='));
    assert.deepEqual(aLines, ['a=one', 'a=three']);
  } finally {
    node.kill('SIGTERM');
    assert.equal(await exited, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('spool start refuses a SASL listener whose mechanism Spool does not serve (Kafka\'s default GSSAPI), with a clear message and exit code 1', { timeout: 120_000 }, async () => {
  // Bug pinned: a SASL_SSL listener bound a plain socket and advertised it as SASL_SSL.
  const dir = mkdtempSync(join(tmpdir(), 'spool-bin-sasl-'));
  try {
    const listeners = ['--override', 'listeners=SASL_PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', '--override', 'listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT', '--override', 'security.inter.broker.protocol=SASL_PLAINTEXT'];
    const started = await run(['start', ...listeners, '--override', `log.dirs=${dir}`]);
    assert.equal(started.code, 1);
    assert.equal(started.out, '');
    assert.match(started.err, /^Listener SASL_PLAINTEXT enables SASL mechanism GSSAPI \(sasl.enabled.mechanisms\), which Spool does not serve/);
    assert.doesNotMatch(started.err, /\n\s+at /, 'a message, not a stack trace');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Regression: a listener that could not bind (its port taken) left the listeners bound before it open, so `spool start`
// printed EADDRINUSE and stayed alive without serving; Kafka's broker exits when it cannot bind.
test('spool start exits 1 with a clear message when a listener port is taken', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-bin-'));
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as AddressInfo).port;
  try {
    const result = await run(['start', '--override', `listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:${port}`, '--override', `log.dirs=${dir}`, '--override', 'node.id=1', '--override', `controller.quorum.voters=1@127.0.0.1:${port}`]);
    assert.equal(result.code, 1, result.err);
    assert.match(result.err, new RegExp(`^Cannot bind listener CONTROLLER to 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`, 'm'));
    assert.equal(result.out, '');
  } finally {
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
