/**
 * `spool start --console`: the console listener defaults to
 * CONSOLE_DEFAULT_LISTENER unless console.listener is set, and a started
 * node prints the console's address, where the API answers; without the
 * flag nothing changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_DEFAULT_LISTENER, setConsoleDefault } from '../../src/cli/start.js';
import { runCli } from '../../src/cli/program.js';
import { testIo } from '../cli/cli-io.js';

test('--console sets console.listener only when it is not set', () => {
  const unset = new Map<string, string>();
  setConsoleDefault(unset);
  assert.equal(unset.get('console.listener'), CONSOLE_DEFAULT_LISTENER);
  const set = new Map([['console.listener', 'http://0.0.0.0:9600']]);
  setConsoleDefault(set);
  assert.equal(set.get('console.listener'), 'http://0.0.0.0:9600');
});

test('spool start --console prints the console address, where the API answers', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'spool-console-cli-'));
  const io = testIo();
  let announced!: (line: string) => void;
  const consoleLine = new Promise<string>((resolve) => (announced = resolve));
  const stdout = io.stdout;
  io.stdout = (text) => {
    stdout(text);
    const line = text.split('\n').find((l) => l.startsWith('Spool console: '));
    if (line !== undefined) announced(line);
  };
  const args = ['start', '--console', '--override', 'listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', '--override', `log.dirs=${dir}`, '--override', 'console.listener=http://127.0.0.1:0'];
  const exited = runCli(args, io);
  try {
    const line = await Promise.race([consoleLine, exited.then((code) => assert.fail(`spool start exited ${code}: ${io.err}`))]);
    const url = /^Spool console: (http:\/\/127\.0\.0\.1:\d+)\/$/.exec(line)?.[1];
    assert.ok(url !== undefined, line);
    const overview = (await (await fetch(`${url}/api/overview`)).json()) as { nodeId: number };
    assert.equal(overview.nodeId, 1);
  } finally {
    io.signal();
    assert.equal(await exited, 0, io.err);
    await rm(dir, { recursive: true, force: true });
  }
});
