/**
 * A new user's first minute (README "Run a broker"): `npm install` builds
 * the project (the `prepare` script), so the `spool` bin exists right after
 * it, and `npm start` runs a node with the defaults (extra arguments after
 * `--` go to `spool start`), which shuts down cleanly (its clean-shutdown
 * marker written) on SIGTERM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };

test('npm install builds the project: prepare runs the build, whose output holds the spool bin', () => {
  assert.equal(manifest.scripts.prepare, 'npm run build');
  assert.equal(manifest.scripts.build, 'tsc -p .');
  assert.ok(existsSync(join(ROOT, manifest.bin.spool!)), `${manifest.bin.spool} is built`);
});

test('npm start runs a broker with the defaults and stops on SIGTERM', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-npm-start-'));
  // Only the port (0: any free one) and the data directory differ from the defaults, so the test can run anywhere.
  const npm = spawn('npm', ['start', '--', '--override', 'listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', '--override', `log.dirs=${dir}`], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C or a supervisor's SIGTERM reaches npm and the node alike.
    detached: true,
  });
  const closed = new Promise<void>((resolve) => npm.on('close', () => resolve()));
  try {
    const ready = await new Promise<string>((resolve, reject) => {
      let out = '';
      npm.stdout.on('data', (data: Buffer) => {
        out += data.toString();
        const line = out.split('\n').find((l) => l.startsWith('Spool started: '));
        if (line !== undefined) resolve(line);
      });
      npm.on('close', (code) => reject(new Error(`npm start exited with ${code} before the broker was ready: ${out}`)));
    });
    assert.match(ready, /^Spool started: PLAINTEXT:\/\/127\.0\.0\.1:\d+ \(node 1, data in /);
  } finally {
    process.kill(-npm.pid!, 'SIGTERM');
    await closed;
  }
  try {
    assert.ok(existsSync(join(dir, '.kafka_cleanshutdown')), 'the node shut down cleanly');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
