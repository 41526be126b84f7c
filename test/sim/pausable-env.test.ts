/**
 * A paused env holds its node's timers and everything arriving on its
 * connections, and runs them in their order on resume; a running one passes
 * them straight through.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, SeededRandom, type Env } from '../../src/io/env.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { SimStreamNetwork } from '../../src/io/sim-stream-net.js';
import { PauseControl, pausableEnv } from './pausable-env.js';

async function runFor(clock: ManualClock, ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    await nextTurn();
    clock.advance(1);
  }
  await nextTurn();
}

test('while paused, timers and arrivals wait; on resume they run in order', async () => {
  const clock = new ManualClock(0);
  const net = new SimStreamNetwork({ clock, timers: clock, random: new SeededRandom(1) });
  const base = (host: string): Env => ({ clock, timers: clock, random: new SeededRandom(2), fs: new SimFileSystem(new SeededRandom(3)), net: net.host(host) });
  const control = new PauseControl();
  const paused = pausableEnv(base('node'), control);
  const events: string[] = [];
  const listener = await paused.net.listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, (connection) => {
    events.push('accepted');
    connection.onData((data) => events.push(`data ${data.toString()}`));
  });
  const client = await (async () => {
    const connecting = base('client').net.connect({ host: '127.0.0.1', port: listener.port });
    await runFor(clock, 20);
    return connecting;
  })();
  assert.deepEqual(events, ['accepted']);

  control.pause();
  // The bytes arrive within the network's 5 ms delay, well before the timer falls due.
  paused.timers.schedule(40, () => events.push('timer'));
  client.write([Buffer.from('while paused')]);
  await runFor(clock, 50);
  assert.deepEqual(events, ['accepted']);

  control.resume();
  assert.deepEqual(events, ['accepted', 'data while paused', 'timer']);
  paused.timers.schedule(5, () => events.push('timer after'));
  await runFor(clock, 10);
  assert.deepEqual(events.at(-1), 'timer after');
});
