/**
 * The simulated stream network behaves as TCP does to a socket user, on the
 * mock clock: bytes arrive in order after seeded delays (the same seed
 * replays the same times and ports); a port nobody listens on refuses; a
 * partition stalls open streams until it heals and times connects out; a
 * one-way cut loses only one direction; end() and destroy() close both
 * ends, bytes for a closed end reset the sender; a reset breaks both ends;
 * a paused reader backs the writer up until 'drain'; a slow link delays by
 * size; bytes that arrive before the reader has a 'data' listener wait for
 * one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, SeededRandom } from '../../src/io/env.js';
import type { Connection } from '../../src/io/net.js';
import { SimStreamNetwork } from '../../src/io/sim-stream-net.js';

function world(seed: number, options: { kernelBufferBytes?: number } = {}): { clock: ManualClock; net: SimStreamNetwork; events: string[] } {
  const clock = new ManualClock(0);
  const events: string[] = [];
  const net = new SimStreamNetwork({ clock, timers: clock, random: new SeededRandom(seed), delayMsMin: 2, delayMsMax: 9, onEvent: (e) => events.push(`${clock.nowMs()} ${e}`), ...options });
  return { clock, net, events };
}

/** Advances time 1 ms at a time, letting promises settle, until `done` or `limitMs`. */
async function runUntil(clock: ManualClock, done: () => boolean, limitMs = 200_000): Promise<void> {
  for (let i = 0; i < limitMs && !done(); i++) {
    await nextTurn();
    clock.advance(1);
    await nextTurn();
  }
  assert.ok(done(), `not done within ${limitMs} ms`);
}

async function settle<T>(clock: ManualClock, promise: Promise<T>): Promise<{ value?: T; error?: Error & { code?: string } }> {
  let outcome: { value?: T; error?: Error } | null = null;
  promise.then((value) => (outcome = { value }), (error: Error) => (outcome = { error }));
  await runUntil(clock, () => outcome !== null);
  return outcome!;
}

interface Recorded {
  connection: Connection;
  received: string[];
  closed: { error: string | null } | null;
}

function record(connection: Connection): Recorded {
  const recorded: Recorded = { connection, received: [], closed: null };
  connection.onData((data) => recorded.received.push(data.toString()));
  connection.onClose((error) => (recorded.closed = { error: error === undefined ? null : ((error as Error & { code?: string }).code ?? error.message) }));
  return recorded;
}

/** Host `server` listens on port 0; host `client` connects; both ends recorded. */
async function connected(clock: ManualClock, net: SimStreamNetwork): Promise<{ server: Recorded; client: Recorded; port: number }> {
  let server: Recorded | null = null;
  const listener = await net.host('server').listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, (connection) => (server = record(connection)));
  const { value } = await settle(clock, net.host('client').connect({ host: '127.0.0.1', port: listener.port }));
  assert.ok(server !== null && value !== undefined);
  return { server, client: record(value), port: listener.port };
}

test('bytes arrive in order after seeded delays; the same seed replays the same times and ports', async () => {
  const run = async (seed: number) => {
    const { clock, net } = world(seed);
    const { server, client, port } = await connected(clock, net);
    const arrivals: string[] = [];
    server.connection.onData((data) => arrivals.push(`${clock.nowMs()}:${data.toString()}`));
    for (let i = 0; i < 20; i++) client.connection.write([Buffer.from(`m${i};`)]);
    await runUntil(clock, () => server.received.length === 20);
    assert.equal(server.received.join(''), Array.from({ length: 20 }, (_, i) => `m${i};`).join(''));
    return { port, arrivals };
  };
  const first = await run(11);
  assert.deepEqual(await run(11), first);
  assert.notDeepEqual((await run(12)).arrivals, first.arrivals);
});

test('a connect to a port nobody listens on is refused after a round trip', async () => {
  const { clock, net } = world(1);
  const { error } = await settle(clock, net.host('client').connect({ host: '127.0.0.1', port: 9092 }));
  assert.equal(error?.code, 'ECONNREFUSED');
  assert.ok(clock.nowMs() >= 4 && clock.nowMs() <= 19, `refused at ${clock.nowMs()}`);
});

test('a partition stalls an open stream until it heals, and a connect across it times out', async () => {
  const { clock, net } = world(2);
  const { server, client, port } = await connected(clock, net);
  net.partition([['client'], ['server']]);
  client.connection.write([Buffer.from('held')]);
  server.connection.write([Buffer.from('back')]);
  const startedMs = clock.nowMs();
  const { error } = await settle(clock, net.host('client').connect({ host: '127.0.0.1', port }));
  assert.equal(error?.code, 'ETIMEDOUT');
  assert.ok(clock.nowMs() - startedMs >= 127_000, `timed out after ${clock.nowMs() - startedMs} ms`);
  assert.deepEqual([server.received, client.received, server.closed, client.closed], [[], [], null, null]);
  net.heal();
  await runUntil(clock, () => server.received.length === 1 && client.received.length === 1);
  assert.deepEqual([server.received, client.received], [['held'], ['back']]);
});

test('a connect that starts during a partition succeeds when it heals before the SYN retries run out', async () => {
  const { clock, net } = world(3);
  const listener = await net.host('server').listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, () => undefined);
  net.partition([['client'], ['server']]);
  const connecting = settle(clock, net.host('client').connect({ host: '127.0.0.1', port: listener.port }));
  clock.advance(5_000);
  net.heal();
  const { value } = await connecting;
  assert.ok(value !== undefined);
  // The SYN retransmitted at 7 s from the start is the one that gets through.
  assert.ok(clock.nowMs() >= 7_000 && clock.nowMs() < 7_100, `connected at ${clock.nowMs()}`);
});

test('a one-way cut loses only what crosses it in that direction', async () => {
  const { clock, net } = world(4);
  const { server, client } = await connected(clock, net);
  net.cutOneWay('client', 'server');
  assert.equal(net.isCut('server', 'client'), false);
  client.connection.write([Buffer.from('lost')]);
  server.connection.write([Buffer.from('arrives')]);
  await runUntil(clock, () => client.received.length === 1);
  clock.advance(1_000);
  await nextTurn();
  assert.deepEqual([client.received, server.received], [['arrives'], []]);
});

test('end() delivers what was queued, then both ends close cleanly', async () => {
  const { clock, net } = world(5);
  const { server, client } = await connected(clock, net);
  client.connection.write([Buffer.from('last words')]);
  client.connection.end();
  assert.equal(client.connection.write([Buffer.from('after end')]), false);
  await runUntil(clock, () => server.closed !== null && client.closed !== null);
  assert.deepEqual(server.received, ['last words']);
  assert.deepEqual([server.closed, client.closed], [{ error: null }, { error: null }]);
  assert.equal(net.openConnectionEnds, 0);
});

test('destroy() closes at once; the peer closes after what was in flight, and bytes sent to the dead end reset the sender', async () => {
  const { clock, net } = world(6);
  const { server, client } = await connected(clock, net);
  client.connection.write([Buffer.from('in flight')]);
  client.connection.destroy();
  server.connection.write([Buffer.from('to the dead')]);
  await runUntil(clock, () => server.closed !== null && client.closed !== null);
  assert.deepEqual(server.received, ['in flight']);
  assert.deepEqual(client.closed, { error: null });
  assert.deepEqual(server.closed, { error: 'ECONNRESET' });
});

test('resetConnections breaks both ends at once and loses what was in flight', async () => {
  const { clock, net, events } = world(7);
  const { server, client } = await connected(clock, net);
  client.connection.write([Buffer.from('lost')]);
  assert.equal(net.resetConnections('client', 'server'), 1);
  await runUntil(clock, () => server.closed !== null && client.closed !== null);
  clock.advance(100);
  await nextTurn();
  assert.deepEqual(server.received, []);
  assert.deepEqual([server.closed, client.closed], [{ error: 'ECONNRESET' }, { error: 'ECONNRESET' }]);
  assert.ok(events.some((e) => e.includes('reset 1 connections of client with server')));
});

test('a paused reader backs the writer up past the kernel buffers; resuming drains it', async () => {
  const { clock, net } = world(8, { kernelBufferBytes: 1_000 });
  const { server, client } = await connected(clock, net);
  let drained = 0;
  client.connection.onDrain(() => drained++);
  server.connection.pause();
  const chunk = Buffer.alloc(1_000, 1);
  const accepted: boolean[] = [];
  for (let i = 0; i < 20; i++) accepted.push(client.connection.write([chunk]));
  assert.deepEqual(accepted.indexOf(false), 17, 'the 18th write is past 1 000 kernel bytes plus the 16 KiB high water mark');
  clock.advance(100);
  await nextTurn();
  assert.equal(client.connection.pendingWriteBytes, 19_000);
  assert.equal(server.received.length, 0);
  server.connection.resume();
  await runUntil(clock, () => drained === 1);
  assert.equal(server.received.length, 20);
  assert.equal(client.connection.pendingWriteBytes, 0);
});

test('a slow link delays a segment by its size', async () => {
  const { clock, net } = world(9);
  const { server, client } = await connected(clock, net);
  net.slowLink('client', 'server', { bytesPerMs: 10, extraDelayMs: 50 });
  const sentMs = clock.nowMs();
  client.connection.write([Buffer.alloc(10_000)]);
  await runUntil(clock, () => server.received.length === 1);
  // 50 ms extra, 1 000 ms on the wire, and the seeded 2..9 ms trip.
  assert.ok(clock.nowMs() - sentMs >= 1_052 && clock.nowMs() - sentMs <= 1_060, `took ${clock.nowMs() - sentMs} ms`);
});

test('a port in use is refused, and a closed listener accepts no more', async () => {
  const { clock, net } = world(10);
  const listener = await net.host('a').listen({ host: '127.0.0.1', port: 9092, onAcceptError: () => undefined }, () => undefined);
  await assert.rejects(net.host('b').listen({ host: '0.0.0.0', port: 9092, onAcceptError: () => undefined }, () => undefined), /EADDRINUSE/);
  await listener.close();
  const { error } = await settle(clock, net.host('client').connect({ host: '127.0.0.1', port: 9092 }));
  assert.equal(error?.code, 'ECONNREFUSED');
});

// Regression (simulator seed 5183, short schedule): a node paused when a replica fetcher connected to it attached the
// connection on resume, and the fetcher's first request, which had arrived meanwhile, was lost: no answer for 30 s.
test('bytes that arrive before the reader has a data listener wait for one, as on a Node socket', async () => {
  const { clock, net } = world(5);
  let accepted: Connection | null = null;
  const listener = await net.host('server').listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, (connection) => (accepted = connection));
  const { value: client } = await settle(clock, net.host('client').connect({ host: '127.0.0.1', port: listener.port }));
  assert.ok(client !== undefined && accepted !== null);
  client.write([Buffer.from('first;')]);
  client.write([Buffer.from('second;')]);
  await runUntil(clock, () => client.pendingWriteBytes === 0 && clock.nowMs() > 50);
  const received: string[] = [];
  (accepted as Connection).onData((data) => received.push(data.toString()));
  await runUntil(clock, () => received.length === 2);
  assert.deepEqual(received, ['first;', 'second;']);
});
