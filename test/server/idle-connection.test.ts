/**
 * Proves connections.max.idle.ms counts writes as activity, as Kafka's
 * Selector does: a client still reading a large response is not closed as
 * idle however long ago it sent its request, while a client that stopped
 * reading is closed once an idle period passes with no byte taken. The
 * server's timers are a ManualClock; the client is a real socket whose
 * reading the test pauses and resumes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock, realEnv } from '../../src/io/env.js';
import { encodeRequest } from '../../src/protocol/apis.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { RequestHandlerTable } from '../../src/server/request-handler.js';
import { SocketServer } from '../../src/server/socket-server.js';
import { UNLIMITED_CONNECTIONS } from '../../src/server/connection-quotas.js';
import { defineHandler, type ApiHandler } from '../../src/server/handler.js';
import { silentLogger } from '../../src/common/logger.js';

const IDLE_MS = 1000;
/** Idle periods a client that stopped reading may stay open (the kernel's buffers fill first). */
const IDLE_PERIODS_MAX = 10;
/** Larger than loopback's socket buffers, so most of it waits in the server until the client reads. */
const RECORDS_BYTES = 48 * 1024 * 1024;

/** A Fetch answered with one partition of RECORDS_BYTES of records. */
function largeFetch(): ApiHandler {
  const records = Buffer.alloc(RECORDS_BYTES, 1);
  return defineHandler({
    api: Fetch,
    handle: () => ({ responses: [{ topic: 't', partitions: [{ partitionIndex: 0, highWatermark: 1, records }] }] }),
  }) as unknown as ApiHandler;
}

const fetchRequest = Buffer.concat(encodeRequest(Fetch, { apiVersion: 12, correlationId: 1, clientId: 'slow' }, {
  maxWaitMs: 0, minBytes: 1, maxBytes: RECORDS_BYTES * 2, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
  topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: RECORDS_BYTES * 2 }] }],
} as never));

async function withServer(run: (clock: ManualClock, client: Socket, received: () => number, server: SocketServer) => Promise<void>): Promise<void> {
  const clock = new ManualClock(0);
  const table = new RequestHandlerTable([largeFetch()], silentLogger);
  const limits = { requestBytesMax: 1 << 20, queuedRequestsMax: 100, queuedBytesMax: 1 << 20, idleMs: IDLE_MS, pendingResponseBytesMax: 1 << 20, requestPoolBytes: -1, connectionQuotas: UNLIMITED_CONNECTIONS };
  const server = new SocketServer({ ...realEnv, clock, timers: clock }, table, limits, silentLogger);
  const listener = await server.listen('PLAINTEXT', '127.0.0.1', 0);
  const client = connect(listener.port, '127.0.0.1');
  await once(client, 'connect');
  closes.set(client, once(client, 'close'));
  let bytes = 0;
  client.on('data', (data: Buffer) => { bytes += data.length; });
  try {
    client.pause();
    client.write(fetchRequest);
    await run(clock, client, () => bytes, server);
  } finally {
    client.destroy();
    await server.shutdown();
  }
}

/** Each client's close, awaited once. */
const closes = new WeakMap<Socket, Promise<unknown>>();

/** Reads until `more` bytes have arrived (or a byte past the records' size), then stops reading. */
async function readSome(client: Socket, received: () => number, more: number): Promise<void> {
  const target = Math.min(received() + more, RECORDS_BYTES + 1);
  client.resume();
  while (received() < target) {
    const data = await Promise.race([once(client, 'data').then(() => true), closes.get(client)!.then(() => false)]);
    assert.ok(data, `closed after ${received()} bytes`);
  }
  client.pause();
}

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await nextTurn();
}

test('a client that stops reading a large response is closed once an idle period passes with no byte taken', async () => {
  await withServer(async (clock, client, received, server) => {
    await readSome(client, received, 1024 * 1024);
    // The kernel's buffers may still take bytes for a moment after the client stops reading; from then on
    // every idle period passes with none taken.
    let periods = 0;
    while (server.connectionCount > 0 && periods < IDLE_PERIODS_MAX) {
      clock.advance(IDLE_MS);
      periods++;
      await turns(20);
    }
    assert.equal(server.connectionCount, 0, `closed within ${IDLE_PERIODS_MAX} idle periods of not reading`);
    assert.ok(received() < RECORDS_BYTES, 'closed before the whole response was taken');
  });
});

/** Event-loop turns the server may take to see that the client took bytes (loopback's window update is immediate). */
const TURNS_TO_SEE_PROGRESS_MAX = 10_000;

/** Turns the event loop until the server's unsent bytes differ from `before`: it has seen the client take some. */
async function serverSeesProgress(server: SocketServer, before: number): Promise<void> {
  for (let i = 0; i < TURNS_TO_SEE_PROGRESS_MAX && server.unsentResponseBytes === before; i++) await nextTurn();
}

test('a client that reads its whole large response slowly gets all of it', async () => {
  await withServer(async (clock, client, received, server) => {
    await turns(5);
    while (received() <= RECORDS_BYTES) {
      // Each idle period the client takes some bytes and the server writes more into the kernel.
      const unsent = server.unsentResponseBytes;
      await readSome(client, received, 4 * 1024 * 1024);
      if (received() <= RECORDS_BYTES) await serverSeesProgress(server, unsent);
      clock.advance(IDLE_MS);
      await turns(5);
    }
    assert.ok(received() > RECORDS_BYTES, 'the whole response arrived');
  });
});
