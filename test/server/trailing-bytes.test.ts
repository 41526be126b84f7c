/**
 * Proves, on a real broker over TCP, that a request with bytes after its last
 * field gets a normal answer and the connection stays open.
 * Regression: librdkafka 2.15 (@confluentinc/kafka-javascript 1.10,
 * confluent-kafka-python 2.x) sends a Metadata v13 request with 3 trailing
 * bytes; Spool closed the connection, so every librdkafka-based client failed
 * with "Broker transport failure".
 * SPOOL_E2E_BOOTSTRAP=host:port runs it against another broker (Apache Kafka).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { startTestBroker } from '../client/broker-fixture.js';
import { WireClient } from './wire-client.js';

const METADATA_VERSION = 13;

function metadataFrame(correlationId: number, trailing: Buffer): Buffer {
  const chunks = encodeRequest(Metadata, { apiVersion: METADATA_VERSION, correlationId, clientId: 'rdkafka' }, { topics: [], allowAutoTopicCreation: false });
  const frame = Buffer.concat([...chunks, trailing]);
  frame.writeInt32BE(frame.length - 4, 0);
  return frame;
}

test('a Metadata v13 request with 3 trailing bytes gets a normal answer on an open connection', async () => {
  const broker = await startTestBroker();
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    client.send([metadataFrame(1, Buffer.from([0x01, 0x02, 0x03]))]);
    const frame = await client.next();
    assert.ok(frame !== null, 'the broker closed the connection');
    const decoded = decodeResponse(Metadata, METADATA_VERSION, frame);
    assert.ok(decoded.ok);
    assert.equal(decoded.correlationId, 1);
    assert.equal(decoded.body.errorCode, ErrorCode.NONE);
    assert.ok(decoded.body.brokers.length >= 1);

    client.send([metadataFrame(2, Buffer.alloc(0))]);
    const next = await client.next();
    assert.ok(next !== null, 'the connection did not stay open');
    assert.equal(decodeResponse(Metadata, METADATA_VERSION, next).ok, true);
  } finally {
    client.close();
    await broker.stop();
  }
});
