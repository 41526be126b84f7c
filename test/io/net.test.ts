/**
 * The real network seam under accept failures: when accept() fails (EMFILE
 * and libuv has no spare descriptor to accept-and-close with), Node emits
 * 'error' on the listening server. Each one reaches the listener's
 * onAcceptError and the listener keeps serving; none ends the process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Server } from 'node:net';
import { realNetwork, type Connection } from '../../src/io/net.js';

/** The listening net.Server behind a realNetwork listener on `port` (test-only reach under the seam). */
function serverOn(port: number): Server {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const server = handles.find((handle): handle is Server => handle instanceof Server && (handle.address() as { port?: number } | null)?.port === port);
  assert.ok(server !== undefined, `a net.Server listening on ${port}`);
  return server;
}

function acceptError(): Error {
  return Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', errno: -24, syscall: 'accept' });
}

// Regression: the listener kept its one-shot 'error' handler from listen(), which took the first accept error;
// the second had no handler and ended the process.
test('accept errors reach onAcceptError and the listener goes on accepting', async () => {
  const acceptErrors: Error[] = [];
  const accepted: Connection[] = [];
  const listener = await realNetwork.listen({ host: '127.0.0.1', port: 0, onAcceptError: (error) => acceptErrors.push(error) }, (connection) => {
    accepted.push(connection);
    connection.onData((data) => connection.write([data]));
  });
  const server = serverOn(listener.port);
  for (let i = 0; i < 3; i++) server.emit('error', acceptError());
  assert.deepEqual(acceptErrors.map((error) => (error as NodeJS.ErrnoException).code), ['EMFILE', 'EMFILE', 'EMFILE']);

  const client = await realNetwork.connect({ host: '127.0.0.1', port: listener.port });
  const echoed = new Promise<string>((resolve) => client.onData((data) => resolve(data.toString())));
  client.write([Buffer.from('still here')]);
  assert.equal(await echoed, 'still here');
  client.destroy();
  for (const connection of accepted) connection.destroy();
  await listener.close();
});

// Regression: end() on a paused connection left it open for good once the peer had sent bytes and closed: a paused
// socket holding unread bytes never reports the peer's close, so a stopping broker waited on it forever (a combined
// node that a client was talking to at SIGTERM logged "stopping" and never exited).
test('a paused connection that is ended closes once the peer closes, though the peer sent bytes it never read', async () => {
  let serverSide!: (connection: Connection) => void;
  const accepted = new Promise<Connection>((resolve) => (serverSide = resolve));
  const listener = await realNetwork.listen({ host: '127.0.0.1', port: 0, onAcceptError: () => undefined }, (connection) => serverSide(connection));
  const client = await realNetwork.connect({ host: '127.0.0.1', port: listener.port });
  const connection = await accepted;
  connection.pause();
  const received: Buffer[] = [];
  connection.onData((data) => received.push(data));
  const closed = new Promise<void>((resolve) => connection.onClose(() => resolve()));
  client.write([Buffer.from('unread request bytes')]);
  client.end();
  connection.end();
  await closed;
  assert.deepEqual(received, [], 'nothing is delivered after end()');
  await listener.close();
});
