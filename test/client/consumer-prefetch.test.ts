/**
 * The consumer's Fetches run ahead of poll(), as Kafka's consumer's do: the
 * next Fetch goes out before poll() returns records (so it is answered while
 * the application processes them), a response for a partition whose
 * position moved while it was out is dropped, and close() does not wait out
 * a long poll. Fetch requests are seen on the wire through a network that
 * reports every Fetch frame the consumer writes.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { Admin } from '../../src/client/admin.js';
import { Consumer } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import { realEnv, type Env } from '../../src/io/env.js';
import { FrameAssembler } from '../../src/protocol/framing.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { startTestBroker, uniqueTopic, type TestBroker } from './broker-fixture.js';

let broker: TestBroker;
let admin: Admin;

before(async () => {
  broker = await startTestBroker();
  admin = new Admin({ bootstrapServers: broker.bootstrapServers });
});

after(async () => {
  await admin?.close();
  await broker?.stop();
});

/**
 * realEnv whose connections keep the correlation ids of the Fetch requests
 * written and not yet answered (one write is one request frame; a response
 * frame starts with its correlation id), and emit 'fetch' on each write.
 */
function watchedEnv(): { env: Env; wire: EventEmitter; fetchesInFlight: () => number } {
  const wire = new EventEmitter();
  const unanswered = new Set<string>();
  let connections = 0;
  const env: Env = {
    ...realEnv,
    net: {
      listen: (options, onConnection) => realEnv.net.listen(options, onConnection),
      connect: async (options) => {
        const connection = await realEnv.net.connect(options);
        const id = connections++;
        const write = connection.write.bind(connection);
        connection.write = (chunks) => {
          const frame = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
          if (frame.length >= 12 && frame.readInt16BE(4) === Fetch.key) {
            unanswered.add(`${id}:${frame.readInt32BE(8)}`);
            wire.emit('fetch');
          }
          return write(chunks);
        };
        const frames = new FrameAssembler({ frameBytesMin: 4, frameBytesMax: 1 << 30 });
        connection.onData((data) => {
          const result = frames.push(data);
          if ('frames' in result) for (const response of result.frames) unanswered.delete(`${id}:${response.readInt32BE(0)}`);
        });
        return connection;
      },
    },
  };
  return { env, wire, fetchesInFlight: () => unanswered.size };
}

async function topicWith(records: number): Promise<string> {
  const topic = uniqueTopic('prefetch');
  await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
  const producer = new Producer({ bootstrapServers: broker.bootstrapServers });
  await Promise.all(Array.from({ length: records }, (_, i) => producer.send({ topic, partition: 0, value: `v${i}` })));
  await producer.close();
  return topic;
}

async function firstRecords(consumer: Consumer): Promise<number> {
  for (;;) {
    const records = await consumer.poll(1000);
    if (records.length > 0) return records.length;
  }
}

test('after poll() returns records, the next Fetch is out with no poll() running', { timeout: 30_000 }, async () => {
  const topic = await topicWith(5);
  const { env, wire, fetchesInFlight } = watchedEnv();
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, env, autoOffsetReset: 'earliest' });
  try {
    consumer.assign([{ topic, partition: 0 }]);
    assert.equal(await firstRecords(consumer), 5);
    // Either it is already on the wire (a long poll at the log end, unanswered) or it is about to be written;
    // a consumer that fetches only inside poll() has nothing out now and never writes one.
    if (fetchesInFlight() === 0) await once(wire, 'fetch');
    assert.ok(fetchesInFlight() > 0);
  } finally {
    await consumer.close();
  }
});

test('a Fetch answered after a seek is dropped: the next poll() starts at the sought offset', { timeout: 30_000 }, async () => {
  const topic = await topicWith(10);
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, autoOffsetReset: 'earliest', maxPollRecords: 3 });
  try {
    consumer.assign([{ topic, partition: 0 }]);
    const first = await consumer.poll(5000);
    assert.deepEqual(first.map((r) => r.offset), [0, 1, 2]);
    // Records 3..9 are buffered; drain them so the next Fetch (from 10) goes out, then write more behind it.
    const rest: number[] = [];
    while (rest.length < 7) rest.push(...(await consumer.poll(5000)).map((r) => r.offset));
    assert.deepEqual(rest, [3, 4, 5, 6, 7, 8, 9]);
    const producer = new Producer({ bootstrapServers: broker.bootstrapServers });
    await Promise.all(Array.from({ length: 5 }, (_, i) => producer.send({ topic, partition: 0, value: `late${i}` })));
    await producer.close();
    consumer.seek({ topic, partition: 0 }, 1);
    const afterSeek = await consumer.poll(5000);
    assert.deepEqual(afterSeek.map((r) => r.offset), [1, 2, 3]);
  } finally {
    await consumer.close();
  }
});

test('close() does not wait for a long-poll Fetch in flight', { timeout: 30_000 }, async () => {
  const topic = await topicWith(2);
  const { env, wire, fetchesInFlight } = watchedEnv();
  // A Fetch at the log end would wait 10 minutes for data: the test's timeout fails a close() that waits for it.
  const consumer = new Consumer({ bootstrapServers: broker.bootstrapServers, env, autoOffsetReset: 'earliest', fetchMaxWaitMs: 600_000 });
  consumer.assign([{ topic, partition: 0 }]);
  assert.equal(await firstRecords(consumer), 2);
  if (fetchesInFlight() === 0) await once(wire, 'fetch');
  await consumer.close();
  await assert.rejects(consumer.poll(0), /closed/);
});
