/**
 * Proves the client connection against a fake broker on real TCP: KIP-511
 * ApiVersions fallback and per-API version choice, pipelined requests matched
 * to responses in order (also when many responses arrive in one TCP write),
 * the in-flight bound, the request timeout (driven by a ManualClock), a
 * mismatched correlation id closing the connection, and clean close waiting
 * for in-flight requests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection, CLIENT_SOFTWARE_NAME } from '../../src/client/connection.js';
import { NetworkError, TimeoutError } from '../../src/client/errors.js';
import { ManualClock, realEnv, type Env } from '../../src/io/env.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { FakeBroker, apiVersionsBody, reply, type ReceivedRequest } from './fake-broker.js';

const SPANS: Record<number, [number, number]> = { 18: [0, 4], 3: [0, 9] };

/** Answers ApiVersions at once with SPANS; holds everything else. */
function answerApiVersions(request: ReceivedRequest): Buffer[] | null {
  return request.header.requestApiKey === ApiVersions.key ? reply(request, apiVersionsBody(SPANS)) : null;
}

/** A Metadata reply naming the single requested topic, so a test can tell which request it answers. */
function echoTopic(request: ReceivedRequest): Buffer[] {
  const topics = request.body.topics as { name: string }[];
  return reply(request, { brokers: [], topics: topics.map((t) => ({ errorCode: 0, name: t.name, partitions: [] })) });
}

async function setup(answer = answerApiVersions, env: Env = realEnv, extra: { inFlightRequestsMax?: number; requestTimeoutMs?: number } = {}) {
  const broker = new FakeBroker();
  broker.answer = answer;
  const { host, port } = await broker.start();
  const connection = await BrokerConnection.connect({ host, port, env, ...extra });
  return { broker, connection };
}

test('negotiates ApiVersions v4 with the client software name and picks the highest common version per API', async () => {
  const { broker, connection } = await setup();
  const first = broker.received[0]!;
  assert.equal(first.header.requestApiVersion, 4);
  assert.equal(first.body.clientSoftwareName, CLIENT_SOFTWARE_NAME);
  assert.equal(connection.versionFor(Metadata), 9);
  assert.equal(connection.versionFor(Metadata, 7), 7);
  connection.destroy();
  await broker.stop();
});

test('falls back to the broker\'s ApiVersions version after UNSUPPORTED_VERSION in a v0 response (KIP-511)', async () => {
  const { broker, connection } = await setup((request) => {
    if (request.header.requestApiKey !== ApiVersions.key) return null;
    if (request.header.requestApiVersion > 2) return reply(request, apiVersionsBody({ 18: [0, 2] }, 35), { version: 0 });
    return reply(request, apiVersionsBody({ 18: [0, 2], 3: [0, 12] }));
  });
  assert.deepEqual(broker.received.map((r) => r.header.requestApiVersion), [4, 2]);
  assert.equal(connection.versionFor(Metadata), 12);
  connection.destroy();
  await broker.stop();
});

test('pipelined requests get their own responses, in order, even when all responses arrive in one write', async () => {
  const held: ReceivedRequest[] = [];
  const { broker, connection } = await setup((request) => {
    if (request.header.requestApiKey === ApiVersions.key) return answerApiVersions(request);
    held.push(request);
    return null;
  }, realEnv, { inFlightRequestsMax: 10 });
  const names = Array.from({ length: 10 }, (_, i) => `topic-${i}`);
  const responses = names.map((name) => connection.send(Metadata, { topics: [{ name }] }));
  await broker.untilReceived(11);
  const frames = held.flatMap((request) => echoTopic(request));
  held[0]!.connection.write([Buffer.concat(frames)]);
  const answered = await Promise.all(responses);
  assert.deepEqual(answered.map((r) => r.topics[0]!.name), names);
  connection.destroy();
  await broker.stop();
});

test('at most inFlightRequestsMax requests are on the wire; the rest wait for responses', async () => {
  const held: ReceivedRequest[] = [];
  const { broker, connection } = await setup((request) => {
    if (request.header.requestApiKey === ApiVersions.key) return answerApiVersions(request);
    held.push(request);
    return null;
  }, realEnv, { inFlightRequestsMax: 2 });
  const responses = [0, 1, 2, 3].map((i) => connection.send(Metadata, { topics: [{ name: `t${i}` }] }));
  await broker.untilReceived(3);
  assert.equal(held.length, 2);
  assert.equal(connection.inFlightCount, 4);
  held[0]!.connection.write(echoTopic(held[0]!));
  await broker.untilReceived(4);
  assert.equal(held.length, 3);
  for (const request of held.slice(1)) request.connection.write(echoTopic(request));
  await broker.untilReceived(5);
  held[3]!.connection.write(echoTopic(held[3]!));
  const answered = await Promise.all(responses);
  assert.deepEqual(answered.map((r) => r.topics[0]!.name), ['t0', 't1', 't2', 't3']);
  connection.destroy();
  await broker.stop();
});

test('a request unanswered after request.timeout.ms fails with TimeoutError and closes the connection', async () => {
  const clock = new ManualClock();
  const env: Env = { ...realEnv, clock, timers: clock };
  const { broker, connection } = await setup(answerApiVersions, env, { requestTimeoutMs: 1000 });
  const pending = connection.send(Metadata, { topics: [{ name: 'slow' }] });
  await broker.untilReceived(2);
  clock.advance(999);
  assert.equal(connection.closed, false);
  clock.advance(1);
  await assert.rejects(pending, TimeoutError);
  assert.equal(connection.closed, true);
  await assert.rejects(connection.send(Metadata, { topics: [] }), TimeoutError);
  await broker.stop();
});

test('a response whose correlation id does not match the oldest request closes the connection', async () => {
  const { broker, connection } = await setup((request) => {
    if (request.header.requestApiKey === ApiVersions.key) return answerApiVersions(request);
    return reply(request, { brokers: [], topics: [] }, { correlationId: request.header.correlationId + 7 });
  });
  await assert.rejects(connection.send(Metadata, { topics: [] }), NetworkError);
  assert.equal(connection.closed, true);
  await broker.stop();
});

test('close() waits for in-flight responses, then refuses new requests', async () => {
  const held: ReceivedRequest[] = [];
  const { broker, connection } = await setup((request) => {
    if (request.header.requestApiKey === ApiVersions.key) return answerApiVersions(request);
    held.push(request);
    return null;
  });
  const pending = connection.send(Metadata, { topics: [{ name: 'last' }] });
  await broker.untilReceived(2);
  const closing = connection.close();
  held[0]!.connection.write(echoTopic(held[0]!));
  assert.equal((await pending).topics[0]!.name, 'last');
  await closing;
  assert.equal(connection.closed, true);
  await assert.rejects(connection.send(Metadata, { topics: [] }), NetworkError);
  await broker.stop();
});
