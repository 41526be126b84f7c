/**
 * Proves Kafka's connection quotas on the socket server:
 * - max.connections.per.ip (and its overrides): a connection from an address
 *   at its maximum is closed unanswered; once one closes, a new one is served;
 * - max.connections and listener.name.<name>.max.connections: a listener at
 *   its limit stops admitting; a new connection waits unanswered until a slot
 *   frees, and beyond socket.listen.backlog.size waiting ones it is closed;
 * - the inter-broker listener is exempt from max.connections when the node
 *   has other listeners, and the least recently active connection of another
 *   listener is closed to make room;
 * - the configs are read as Kafka reads them (overrides list, per-listener
 *   prefix, max.connections.per.ip=0 only with overrides).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realEnv } from '../../src/io/env.js';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { RequestHandlerTable } from '../../src/server/request-handler.js';
import { SocketServer } from '../../src/server/socket-server.js';
import { silentLogger } from '../../src/common/logger.js';
import { apiVersionsHandler } from '../../src/server/apis/18-api-versions.js';
import { BrokerConfig, ConfigError } from '../../src/common/config.js';
import { UNLIMITED_CONNECTIONS, connectionQuotaConfigFrom, type ConnectionQuotaConfig } from '../../src/server/connection-quotas.js';
import type { ApiContext } from '../../src/server/api-context.js';
import { WireClient } from './wire-client.js';
import { WatchedNetwork } from './watched-network.js';

async function startServer(quotas: Partial<ConnectionQuotaConfig>, listenerNames: readonly string[] = ['PLAINTEXT']) {
  const fakeBroker = { metadata: { image: { offset: 3, clusterId: 'test-cluster', features: new Map() } }, raft: { kraftVersion: 0 } } as unknown as ApiContext;
  const table = new RequestHandlerTable([apiVersionsHandler(fakeBroker)], silentLogger);
  (fakeBroker as unknown as { handlers: RequestHandlerTable }).handlers = table;
  const net = new WatchedNetwork();
  const server = new SocketServer({ ...realEnv, net }, table, {
    requestBytesMax: 1 << 20, queuedRequestsMax: 100, queuedBytesMax: 1 << 20, idleMs: 60_000, pendingResponseBytesMax: 1 << 20, requestPoolBytes: -1,
    connectionQuotas: { ...UNLIMITED_CONNECTIONS, ...quotas },
  }, silentLogger);
  const addresses = new Map<string, string>();
  for (const name of listenerNames) addresses.set(name, `127.0.0.1:${(await server.listen(name, '127.0.0.1', 0)).port}`);
  return { server, net, address: (name = 'PLAINTEXT') => addresses.get(name)! };
}

/** Connects and waits until the broker has taken the connection (admitted, held or closed it). */
async function connect(net: WatchedNetwork, address: string): Promise<WireClient> {
  const expected = net.accepted + 1;
  const client = await WireClient.connect(address);
  await net.acceptedCount(expected);
  return client;
}

/** A negative frame size makes the broker close the connection; it has counted the close by the time the client sees it. */
async function closedByBroker(client: WireClient): Promise<void> {
  client.send([Buffer.from([0xff, 0xff, 0xff, 0xff])]);
  assert.equal(await client.next(), null);
}

let nextCorrelationId = 0;

/** Sends ApiVersions; resolves true when answered, false when the connection is closed. */
async function answered(client: WireClient): Promise<boolean> {
  const id = ++nextCorrelationId;
  client.send(encodeRequest(ApiVersions, { apiVersion: 3, correlationId: id, clientId: 'quota' }, { clientSoftwareName: 'quota', clientSoftwareVersion: '1' }));
  const frame = await client.next();
  if (frame === null) return false;
  const decoded = decodeResponse(ApiVersions, 3, frame);
  assert.ok(decoded.ok);
  assert.equal(decoded.correlationId, id);
  return true;
}

test('max.connections.per.ip: the connection over the limit is closed unanswered; a freed slot is reused', async () => {
  const { server, net, address } = await startServer({ maxConnectionsPerIp: 2 });
  const first = await connect(net, address());
  const second = await connect(net, address());
  const third = await connect(net, address());
  assert.equal(await answered(third), false);
  assert.equal(await answered(first), true);
  assert.equal(await answered(second), true);
  await closedByBroker(first);
  const fourth = await connect(net, address());
  assert.equal(await answered(fourth), true);
  for (const client of [second, fourth]) client.close();
  await server.shutdown();
});

test('max.connections.per.ip.overrides: an address with an override gets its own limit', async () => {
  const { server, net, address } = await startServer({ maxConnectionsPerIp: 0, maxConnectionsPerIpOverrides: new Map([['127.0.0.1', 1]]) });
  const first = await connect(net, address());
  const second = await connect(net, address());
  assert.equal(await answered(second), false);
  assert.equal(await answered(first), true);
  first.close();
  await server.shutdown();
});

test('max.connections: a new connection waits unanswered until a slot frees; past the backlog it is closed', async () => {
  const { server, net, address } = await startServer({ maxConnections: 2, listenBacklogSize: 1 });
  const first = await connect(net, address());
  const second = await connect(net, address());
  const waiting = await connect(net, address());
  const overflow = await connect(net, address());
  assert.equal(server.connectionCount, 2, 'two connections admitted, one held');
  assert.equal(await answered(overflow), false, 'the backlog holds one');
  const waitingAnswer = answered(waiting);
  assert.equal(await answered(first), true);
  assert.equal(server.connectionCount, 2);
  second.close();
  assert.equal(await waitingAnswer, true, 'answered once a slot freed');
  first.close();
  waiting.close();
  await server.shutdown();
});

test('shutdown closes connections still waiting for a slot', async () => {
  const { server, net, address } = await startServer({ maxConnections: 1 });
  const admitted = await connect(net, address());
  const waiting = await connect(net, address());
  await server.shutdown();
  assert.equal(await answered(waiting), false);
  admitted.close();
});

test('listener.name.<name>.max.connections limits one listener; the others still admit', async () => {
  const { server, net, address } = await startServer({ listenerMaxConnections: new Map([['INTERNAL', 1]]) }, ['PLAINTEXT', 'INTERNAL']);
  const internal = await connect(net, address('INTERNAL'));
  const internalWaiting = await connect(net, address('INTERNAL'));
  const plain = await connect(net, address('PLAINTEXT'));
  assert.equal(await answered(plain), true);
  assert.equal(await answered(internal), true);
  assert.equal(server.connectionCount, 2);
  const waitingAnswer = answered(internalWaiting);
  internal.close();
  assert.equal(await waitingAnswer, true);
  for (const client of [plain, internalWaiting]) client.close();
  await server.shutdown();
});

test('the inter-broker listener is exempt from max.connections; the least recently active other connection makes room', async () => {
  const { server, net, address } = await startServer({ maxConnections: 2, interBrokerListenerName: 'REPLICATION' }, ['PLAINTEXT', 'REPLICATION']);
  const older = await connect(net, address('PLAINTEXT'));
  assert.equal(await answered(older), true);
  const newer = await connect(net, address('PLAINTEXT'));
  assert.equal(await answered(newer), true);
  const replication = await connect(net, address('REPLICATION'));
  assert.equal(await answered(replication), true, 'admitted although the node is at max.connections');
  assert.equal(await answered(older), false, 'the least recently active client connection was closed');
  assert.equal(await answered(newer), true);
  for (const client of [newer, replication]) client.close();
  await server.shutdown();
});

test('quota configs are read as Kafka reads them', () => {
  const config = connectionQuotaConfigFrom(BrokerConfig.fromObject({
    'max.connections': 100,
    'max.connections.per.ip': 0,
    'max.connections.per.ip.overrides': '127.0.0.1:5, ::1:7 ,10.0.0.1:0',
    'listener.name.internal.max.connections': 3,
    'inter.broker.listener.name': 'internal',
  }));
  assert.equal(config.maxConnections, 100);
  assert.deepEqual([...config.maxConnectionsPerIpOverrides], [['127.0.0.1', 5], ['::1', 7], ['10.0.0.1', 0]]);
  assert.deepEqual([...config.listenerMaxConnections], [['INTERNAL', 3]]);
  assert.equal(config.interBrokerListenerName, 'INTERNAL');
  assert.equal(config.listenBacklogSize, 50);
  assert.throws(() => connectionQuotaConfigFrom(BrokerConfig.fromObject({ 'max.connections.per.ip': 0 })), ConfigError);
  assert.throws(() => connectionQuotaConfigFrom(BrokerConfig.fromObject({ 'max.connections.per.ip.overrides': 'host' })), ConfigError);
  assert.throws(() => BrokerConfig.fromObject({ 'max.connections': -1 }), ConfigError);
});
