/**
 * The simulated network delivers requests and responses after seeded
 * delays on the mock clock; a cut link (partition) or a lost message makes
 * the request time out, a node that is down refuses at once and sends
 * nothing, and the same seed replays the same delivery times.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import { SimNetwork, SimNetworkError } from '../../src/io/sim-net.js';

const TIMEOUT_MS = 100;

function network(seed: number, dropRate = 0): { clock: ManualClock; net: SimNetwork<string, string> } {
  const clock = new ManualClock(0);
  const net = new SimNetwork<string, string>({ timers: clock, random: new SeededRandom(seed), delayMsMin: 2, delayMsMax: 9, dropRate });
  for (const node of [1, 2, 3]) net.register(node, async (source, request) => `${node} answers ${source}: ${request}`);
  return { clock, net };
}

/** Sends and advances time until the request settles; the outcome and when. */
async function exchange(clock: ManualClock, sent: Promise<string>): Promise<{ outcome: string; atMs: number }> {
  let outcome: string | null = null;
  sent.then((response) => (outcome = response), (error: Error) => (outcome = `${error.name}: ${error.message}`));
  while (outcome === null) {
    await nextTurn();
    clock.advance(1);
    await nextTurn();
  }
  return { outcome, atMs: clock.nowMs() };
}

test('a request is answered after two seeded delays, and the same seed replays the same times', async () => {
  const first = network(7);
  const answered = await exchange(first.clock, first.net.send(1, 2, 'ping', { timeoutMs: TIMEOUT_MS }));
  assert.equal(answered.outcome, '2 answers 1: ping');
  assert.ok(answered.atMs >= 4 && answered.atMs <= 19, `answered at ${answered.atMs}`);
  const again = network(7);
  assert.deepEqual(await exchange(again.clock, again.net.send(1, 2, 'ping', { timeoutMs: TIMEOUT_MS })), answered);
});

test('across a partition requests time out; after heal they are answered', async () => {
  const { clock, net } = network(8);
  net.partition([[1], [2, 3]]);
  assert.equal(net.isConnected(1, 2), false);
  assert.equal(net.isConnected(2, 3), true);
  const cut = await exchange(clock, net.send(1, 2, 'ping', { timeoutMs: TIMEOUT_MS }));
  assert.match(cut.outcome, /^SimNetworkError: .*timed out/);
  assert.equal(cut.atMs, TIMEOUT_MS);
  assert.equal((await exchange(clock, net.send(2, 3, 'inside', { timeoutMs: TIMEOUT_MS }))).outcome, '3 answers 2: inside');
  net.heal();
  assert.equal((await exchange(clock, net.send(1, 2, 'healed', { timeoutMs: TIMEOUT_MS }))).outcome, '2 answers 1: healed');
});

test('a node that is down refuses requests at once and sends none', async () => {
  const { clock, net } = network(9);
  net.unregister(2);
  const refused = await exchange(clock, net.send(1, 2, 'ping', { timeoutMs: TIMEOUT_MS }));
  assert.match(refused.outcome, /refused/);
  assert.ok(refused.atMs < TIMEOUT_MS);
  assert.match((await exchange(clock, net.send(2, 1, 'ping', { timeoutMs: TIMEOUT_MS }))).outcome, /node 2 is down/);
  assert.equal(new SimNetworkError('x').name, 'SimNetworkError');
});

test('with every message lost, each request times out', async () => {
  const { clock, net } = network(10, 0.999_999);
  for (let i = 0; i < 5; i++) assert.match((await exchange(clock, net.send(1, 3, `m${i}`, { timeoutMs: TIMEOUT_MS }))).outcome, /timed out/);
});
