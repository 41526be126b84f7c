/**
 * Proves that concurrent lookups of one topic share a single Metadata
 * request: while the first is unanswered, every other lookup of the topic
 * waits for it instead of sending its own. Regression test for the
 * producer's first burst of sends asking for a 1,000-partition topic once
 * per record (30,000 Metadata requests, no record acknowledged in a 10 s
 * bench run; docs/PERFORMANCE.md section 2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../../src/client/cluster.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { FakeBroker, apiVersionsBody, reply, type ReceivedRequest } from './fake-broker.js';

const METADATA_KEY = 3;

function metadataBody(address: { host: string; port: number }, topics: readonly string[]): Record<string, unknown> {
  return {
    brokers: [{ nodeId: 1, ...address, rack: null }],
    controllerId: 1,
    topics: topics.map((name) => ({
      errorCode: 0,
      name,
      topicId: ZERO_UUID,
      partitions: [0, 1, 2].map((partitionIndex) => ({ errorCode: 0, partitionIndex, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1] })),
    })),
  };
}

/** A broker that holds Metadata requests until released, then answers each for the topics it asked. */
async function holdingBroker(): Promise<{ broker: FakeBroker; address: { host: string; port: number }; release(): void }> {
  const broker = new FakeBroker();
  const held: ReceivedRequest[] = [];
  let released = false;
  let address = { host: '', port: 0 };
  const answerMetadata = (request: ReceivedRequest): Buffer[] =>
    reply(request, metadataBody(address, (request.body.topics as { name: string }[]).map((t) => t.name)));
  broker.answer = (request) => {
    if (request.header.requestApiKey === 18) return reply(request, apiVersionsBody({ 18: [0, 3], 3: [0, 12] }));
    if (request.header.requestApiKey !== METADATA_KEY) return null;
    if (released) return answerMetadata(request);
    held.push(request);
    return null;
  };
  address = await broker.start();
  return {
    broker,
    address,
    release: () => {
      released = true;
      for (const request of held.splice(0)) request.connection.write(answerMetadata(request));
    },
  };
}

function metadataRequests(broker: FakeBroker): ReceivedRequest[] {
  return broker.received.filter((r) => r.header.requestApiKey === METADATA_KEY);
}

test('lookups of a topic made while its Metadata request is out wait for that request instead of sending their own', async () => {
  const { broker, address, release } = await holdingBroker();
  const cluster = new Cluster({ bootstrapServers: `${address.host}:${address.port}` });
  try {
    const lookups = Array.from({ length: 50 }, () => cluster.topic('t'));
    await broker.untilReceived(2); // ApiVersions, then the first Metadata
    release();
    const topics = await Promise.all(lookups);
    assert.equal(metadataRequests(broker).length, 1);
    for (const topic of topics) assert.equal(topic.partitions.length, 3);
    // Once answered, a later lookup of a fresh topic is served from the cache.
    await cluster.topic('t');
    assert.equal(metadataRequests(broker).length, 1);
  } finally {
    await cluster.close();
    await broker.stop();
  }
});

test('a lookup of another topic is not held back by, nor answered from, the first topic\'s request', async () => {
  const { broker, address, release } = await holdingBroker();
  const cluster = new Cluster({ bootstrapServers: `${address.host}:${address.port}` });
  try {
    const first = cluster.topic('t');
    const other = cluster.topic('u');
    await broker.untilReceived(3); // ApiVersions and one Metadata per topic
    release();
    const [t, u] = await Promise.all([first, other]);
    assert.equal(t.name, 't');
    assert.equal(u.name, 'u');
    assert.deepEqual(metadataRequests(broker).map((r) => (r.body.topics as { name: string }[]).map((x) => x.name).join()).sort(), ['t', 'u']);
  } finally {
    await cluster.close();
    await broker.stop();
  }
});
