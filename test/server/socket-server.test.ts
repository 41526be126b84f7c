/**
 * Proves the network front's contract with clients: framing limits close
 * only the offending connection, ApiVersions at an unknown version gets a v0
 * answer with UNSUPPORTED_VERSION (KIP-511), unknown API keys and malformed
 * bodies close the connection, and pipelined requests are answered in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realEnv, type Network } from '../../src/io/env.js';
import { WatchedNetwork } from './watched-network.js';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { RequestHandlerTable } from '../../src/server/request-handler.js';
import { SocketServer, type SocketServerLimits } from '../../src/server/socket-server.js';
import { UNLIMITED_CONNECTIONS } from '../../src/server/connection-quotas.js';
import { defineHandler, type ApiHandler } from '../../src/server/handler.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { silentLogger } from '../../src/common/logger.js';
import { apiVersionsHandler } from '../../src/server/apis/18-api-versions.js';
import type { ApiContext } from '../../src/server/api-context.js';
import { WireClient } from './wire-client.js';

const REQUEST_BYTES_MAX = 1024;
const LIMITS: SocketServerLimits = { requestBytesMax: REQUEST_BYTES_MAX, queuedRequestsMax: 100, queuedBytesMax: 1 << 20, idleMs: 60_000, pendingResponseBytesMax: 1 << 20, requestPoolBytes: -1, connectionQuotas: UNLIMITED_CONNECTIONS };

interface ServerOptions {
  handlers?: (broker: ApiContext) => ApiHandler[];
  limits?: Partial<SocketServerLimits>;
  net?: Network;
}

async function startServer(options: ServerOptions = {}) {
  const fakeBroker = { metadata: { image: { offset: 3, clusterId: 'test-cluster', features: new Map([['metadata.version', 25]]) } }, raft: { kraftVersion: 0 } } as unknown as ApiContext;
  const table = new RequestHandlerTable([apiVersionsHandler(fakeBroker), ...(options.handlers?.(fakeBroker) ?? [])], silentLogger);
  (fakeBroker as unknown as { handlers: RequestHandlerTable }).handlers = table;
  const env = { ...realEnv, net: options.net ?? realEnv.net };
  const server = new SocketServer(env, table, { ...LIMITS, ...options.limits }, silentLogger);
  const listener = await server.listen('PLAINTEXT', '127.0.0.1', 0);
  return { server, address: `127.0.0.1:${listener.port}` };
}

function apiVersionsRequest(version: number, correlationId: number) {
  return encodeRequest(ApiVersions, { apiVersion: version, correlationId, clientId: 'test' }, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1.0' });
}

test('ApiVersions at every served version lists the registered handlers and features', async () => {
  const { server, address } = await startServer();
  const client = await WireClient.connect(address);
  for (let version = 0; version <= 5; version++) {
    client.send(apiVersionsRequest(version, 100 + version));
    const decoded = decodeResponse(ApiVersions, version, (await client.next())!);
    assert.ok(decoded.ok);
    assert.equal(decoded.correlationId, 100 + version);
    assert.equal(decoded.body.errorCode, ErrorCode.NONE);
    assert.deepEqual(decoded.body.apiKeys.map((k) => [k.apiKey, k.minVersion, k.maxVersion]), [[18, 0, 5]]);
    if (version >= 3) assert.deepEqual(decoded.body.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel]), [['metadata.version', 25]]);
  }
  client.close();
  await server.shutdown();
});

test('ApiVersions at an unknown version is answered at v0 with UNSUPPORTED_VERSION', async () => {
  const { server, address } = await startServer();
  const client = await WireClient.connect(address);
  const frame = Buffer.concat(apiVersionsRequest(3, 7));
  frame.writeInt16BE(99, 6); // the api version field, after size (4) and api key (2)
  client.send([frame]);
  const decoded = decodeResponse(ApiVersions, 0, (await client.next())!);
  assert.ok(decoded.ok);
  assert.equal(decoded.correlationId, 7);
  assert.equal(decoded.body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.deepEqual(decoded.body.apiKeys.map((k) => k.apiKey), [18]);
  client.close();
  await server.shutdown();
});

test('ApiVersions with an invalid client software name gets INVALID_REQUEST', async () => {
  const { server, address } = await startServer();
  const client = await WireClient.connect(address);
  client.send(encodeRequest(ApiVersions, { apiVersion: 3, correlationId: 1, clientId: null }, { clientSoftwareName: '-bad name-', clientSoftwareVersion: '1' }));
  const decoded = decodeResponse(ApiVersions, 3, (await client.next())!);
  assert.ok(decoded.ok);
  assert.equal(decoded.body.errorCode, ErrorCode.INVALID_REQUEST);
  client.close();
  await server.shutdown();
});

test('an oversized frame closes only that connection', async () => {
  const { server, address } = await startServer();
  const bystander = await WireClient.connect(address);
  const offender = await WireClient.connect(address);
  const size = Buffer.alloc(4);
  size.writeInt32BE(REQUEST_BYTES_MAX + 1);
  offender.send([size]);
  assert.equal(await offender.next(), null);
  bystander.send(apiVersionsRequest(3, 1));
  assert.ok(decodeResponse(ApiVersions, 3, (await bystander.next())!).ok);
  bystander.close();
  await server.shutdown();
});

test('an unknown API key and a malformed body each close the connection', async () => {
  const { server, address } = await startServer();
  const unknown = await WireClient.connect(address);
  const frame = Buffer.concat(apiVersionsRequest(3, 1));
  frame.writeInt16BE(999, 4);
  unknown.send([frame]);
  assert.equal(await unknown.next(), null);

  const malformed = await WireClient.connect(address);
  const truncated = Buffer.concat(apiVersionsRequest(3, 2));
  const cut = truncated.subarray(0, truncated.length - 3);
  cut.writeInt32BE(cut.length - 4, 0);
  malformed.send([cut]);
  assert.equal(await malformed.next(), null);
  await server.shutdown();
});

test('pipelined requests are answered in order, across frames split at any byte', async () => {
  const { server, address } = await startServer();
  const client = await WireClient.connect(address);
  const all = Buffer.concat(Array.from({ length: 20 }, (_, i) => Buffer.concat(apiVersionsRequest(i % 6, i))));
  for (let offset = 0; offset < all.length; offset += 7) client.send([all.subarray(offset, offset + 7)]);
  for (let i = 0; i < 20; i++) {
    const decoded = decodeResponse(ApiVersions, i % 6, (await client.next())!);
    assert.ok(decoded.ok);
    assert.equal(decoded.correlationId, i);
  }
  client.close();
  await server.shutdown();
});

const RESPONSE_BYTES = 1 << 20;
const PENDING_RESPONSE_BYTES_MAX = 4 << 20;

/** Answers every Fetch with RESPONSE_BYTES of records, as a fetch of a full partition would. */
function bigFetchHandler(handled: { count: number }): ApiHandler {
  const records = Buffer.alloc(RESPONSE_BYTES, 1);
  return defineHandler({
    api: Fetch,
    handle() {
      handled.count++;
      return { responses: [{ topic: 'big', partitions: [{ partitionIndex: 0, records }] }] };
    },
  }) as unknown as ApiHandler;
}

function fetchRequest(correlationId: number) {
  return encodeRequest(Fetch, { apiVersion: 12, correlationId, clientId: 'flood' }, {
    maxWaitMs: 0, minBytes: 1, maxBytes: 0x7fffffff, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
    topics: [{ topic: 'big', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: RESPONSE_BYTES }] }],
  } as never);
}

// Regression: the broker stopped reading a connection whose responses piled up, but went on handling the requests
// it had already queued, so 100 pipelined 1 MiB fetches from a client that never read left ~100 MiB unsent.
test('a client that pipelines large fetches and never reads holds at most pendingResponseBytesMax plus one response', async () => {
  const net = new WatchedNetwork();
  const handled = { count: 0 };
  const { server, address } = await startServer({ net, handlers: () => [bigFetchHandler(handled)], limits: { pendingResponseBytesMax: PENDING_RESPONSE_BYTES_MAX } });
  const flooder = await WireClient.connect(address, { reading: false });
  const paused = net.nextPause();
  const requests = 100;
  for (let i = 0; i < requests; i++) flooder.send(fetchRequest(i));
  await paused;
  const bystander = await WireClient.connect(address);
  bystander.send(apiVersionsRequest(3, 1));
  assert.ok(decodeResponse(ApiVersions, 3, (await bystander.next())!).ok, 'other connections are served meanwhile');
  assert.ok(handled.count < requests, `${handled.count} of ${requests} fetches handled before the client read anything`);

  flooder.startReading();
  for (let i = 0; i < requests; i++) assert.equal((await flooder.next())?.readInt32BE(0), i, 'every fetch answered, in order');
  assert.equal(handled.count, requests);
  assert.ok(net.pendingWriteBytesPeak < PENDING_RESPONSE_BYTES_MAX + 2 * RESPONSE_BYTES, `peak unsent response bytes ${net.pendingWriteBytesPeak}`);
  flooder.close();
  bystander.close();
  await server.shutdown();
});

test('shutdown does not wait for a client that never reads its responses', async () => {
  const handled = { count: 0 };
  const net = new WatchedNetwork();
  const { server, address } = await startServer({ net, handlers: () => [bigFetchHandler(handled)], limits: { pendingResponseBytesMax: PENDING_RESPONSE_BYTES_MAX } });
  const flooder = await WireClient.connect(address, { reading: false });
  const paused = net.nextPause();
  for (let i = 0; i < 50; i++) flooder.send(fetchRequest(i));
  await paused;
  await server.shutdown();
  flooder.close();
});

// Regression: a response the encoder refused (here a records field that is not bytes) rejected the connection's
// processing promise, and the unhandled rejection ended the broker process.
test('a response that cannot be encoded closes that connection; the broker serves the next one', async () => {
  const broken = defineHandler({
    api: Fetch,
    handle: () => ({ responses: [{ topic: 'big', partitions: [{ partitionIndex: 0, records: 7 as never }] }] }),
  }) as unknown as ApiHandler;
  const { server, address } = await startServer({ handlers: () => [broken] });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const victim = await WireClient.connect(address);
    victim.send(fetchRequest(1));
    assert.equal(await victim.next(), null, 'the connection is closed unanswered');
    const next = await WireClient.connect(address);
    next.send(apiVersionsRequest(3, 2));
    assert.ok(decodeResponse(ApiVersions, 3, (await next.next())!).ok);
    next.close();
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await server.shutdown();
  }
});

/** A Fetch handler that holds each request until the test lets it go, and logs when each starts and ends. */
class HeldFetches {
  readonly events: string[] = [];
  private readonly held: (() => void)[] = [];
  private onHeld: (() => void) | null = null;

  handler(): ApiHandler {
    return defineHandler({
      api: Fetch,
      handle: async (_request, context) => {
        this.events.push(`${context.clientId} handled`);
        await new Promise<void>((resolve) => {
          this.held.push(resolve);
          this.onHeld?.();
        });
        this.events.push(`${context.clientId} answered`);
        return { responses: [] };
      },
    }) as unknown as ApiHandler;
  }

  /** Lets the oldest held request go, once there is one. */
  async releaseNext(): Promise<void> {
    if (this.held.length === 0) await new Promise<void>((resolve) => (this.onHeld = resolve));
    this.onHeld = null;
    this.held.shift()!();
  }
}

function namedFetch(clientId: string) {
  return encodeRequest(Fetch, { apiVersion: 12, correlationId: 1, clientId }, {
    maxWaitMs: 0, minBytes: 1, maxBytes: 1024, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
    topics: [{ topic: 'pooled', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1024 }] }],
  } as never);
}

// Regression: queued.max.request.bytes was accepted but not enforced. Kafka's pool admits a request while any memory
// is left (overdrawing it), then reads no new request on any connection until answered requests return their bytes.
test('queued.max.request.bytes: once read requests exhaust the pool, no connection reads another until one is answered', async () => {
  const net = new WatchedNetwork();
  const fetches = new HeldFetches();
  const { server, address } = await startServer({ net, handlers: () => [fetches.handler()], limits: { requestPoolBytes: 10 } });
  const first = await WireClient.connect(address);
  const firstPaused = net.nextPause();
  first.send(namedFetch('first'));
  await firstPaused;
  assert.deepEqual(fetches.events, ['first handled'], 'the first request overdraws the pool and is served');

  const secondPaused = net.nextPause();
  const second = await WireClient.connect(address);
  await secondPaused;
  second.send(namedFetch('second'));
  await fetches.releaseNext();
  assert.ok(await first.next(), 'the first request is answered');
  await fetches.releaseNext();
  assert.ok(await second.next(), 'the second request is answered once the pool has memory again');
  assert.deepEqual(fetches.events, ['first handled', 'first answered', 'second handled', 'second answered']);
  first.close();
  second.close();
  await server.shutdown();
});
