/**
 * Metadata transactions (KIP-868) in the MetadataLoader: Kafka's controller
 * wraps a new cluster's bootstrap records in BeginTransactionRecord ...
 * EndTransactionRecord, so a Spool broker following a Kafka quorum must
 * apply them together. Proves that records inside a transaction are
 * published once, as one delta, at its end (even across batches), that
 * records before the begin in the same batch are published first, that an
 * aborted transaction leaves no trace, and that the three records round-trip
 * with Kafka's encoding (tagged name/reason).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConfig } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { MetadataLoader } from '../../src/node/metadata-loader.js';
import type { MetadataDelta, MetadataImage } from '../../src/metadata/image.js';
import { decodeMetadataRecord, encodeMetadataRecord, metadataRecord, type MetadataRecord } from '../../src/metadata/records.js';
import type { Batch } from '../../src/raft/raft-client.js';

function loader(): { loader: MetadataLoader; published: { delta: MetadataDelta; image: MetadataImage }[] } {
  const published: { delta: MetadataDelta; image: MetadataImage }[] = [];
  const result = new MetadataLoader({ nodeId: 1, config: BrokerConfig.fromObject({ 'log.dirs': '/unused' }), log: silentLogger, onSnapshotFailure: () => undefined });
  result.open('cluster', { createSnapshot: async () => undefined });
  result.addPublisher({ name: 'test', onMetadataUpdate: (delta, image) => void published.push({ delta, image }) });
  return { loader: result, published };
}

let nextOffset = 0;
function batch(records: MetadataRecord[]): Batch<MetadataRecord> {
  const baseOffset = nextOffset;
  nextOffset += records.length;
  return { baseOffset, lastOffset: nextOffset - 1, epoch: 1, appendTimestamp: 0, sizeInBytes: 100, records, control: [] };
}

const topic = (name: string, id: string) => metadataRecord('TopicRecord', { name, topicId: id });
const begin = metadataRecord('BeginTransactionRecord', { name: 'Bootstrap records' });
const end = metadataRecord('EndTransactionRecord', {});

test('a metadata transaction is published as one delta at its end, after what came before it', async () => {
  nextOffset = 0;
  const { loader: metadata, published } = loader();
  await metadata.publishFirst();
  published.length = 0;
  await metadata.handleCommit(batch([topic('before', 'AAAAAAAAAAAAAAAAAAAAAQ'), begin, topic('inside-1', 'AAAAAAAAAAAAAAAAAAAAAg')]));
  assert.deepEqual(published.map((p) => [...p.image.topicsByName.keys()]), [['before']]);
  assert.ok(!metadata.image.topicsByName.has('inside-1'));
  await metadata.handleCommit(batch([topic('inside-2', 'AAAAAAAAAAAAAAAAAAAAAw')]));
  assert.equal(published.length, 1);
  await metadata.handleCommit(batch([end, topic('after', 'AAAAAAAAAAAAAAAAAAAABA')]));
  assert.deepEqual(published.map((p) => [...p.image.topicsByName.keys()].sort()), [['before'], ['before', 'inside-1', 'inside-2'], ['after', 'before', 'inside-1', 'inside-2']]);
  assert.equal(metadata.image.offset, nextOffset - 1);
});

test('an aborted metadata transaction leaves no trace; the image still moves past it', async () => {
  nextOffset = 0;
  const { loader: metadata, published } = loader();
  await metadata.publishFirst();
  published.length = 0;
  await metadata.handleCommit(batch([begin, topic('dropped', 'AAAAAAAAAAAAAAAAAAAAAQ')]));
  await metadata.handleCommit(batch([metadataRecord('AbortTransactionRecord', { reason: 'controller failover' })]));
  assert.ok(!metadata.image.topicsByName.has('dropped'));
  assert.equal(metadata.image.offset, nextOffset - 1);
  await metadata.handleCommit(batch([topic('kept', 'AAAAAAAAAAAAAAAAAAAAAg')]));
  assert.deepEqual([...metadata.image.topicsByName.keys()], ['kept']);
});

test('Begin/End/AbortTransactionRecord encode as Kafka does: types 23-25, v0, the name and reason as tag 0', () => {
  // frame 1, type 23, version 0, tagged fields: 1 field, tag 0, size 5, compact string "abc" (length+1 = 4).
  assert.deepEqual([...encodeMetadataRecord(metadataRecord('BeginTransactionRecord', { name: 'abc' }))], [1, 23, 0, 1, 0, 4, 4, 97, 98, 99]);
  assert.deepEqual([...encodeMetadataRecord(begin.type === 'BeginTransactionRecord' ? metadataRecord('BeginTransactionRecord', {}) : begin)], [1, 23, 0, 0]);
  assert.deepEqual([...encodeMetadataRecord(end)], [1, 24, 0, 0]);
  const abort = encodeMetadataRecord(metadataRecord('AbortTransactionRecord', { reason: 'x' }));
  assert.deepEqual(decodeMetadataRecord(abort), { type: 'AbortTransactionRecord', version: 0, data: { reason: 'x' } });
});
