/**
 * Proves the metadata path end to end on a real broker (startBroker, real
 * disk, TCP) spoken to with Spool's own encoder: CreateTopics, Metadata
 * (by name, by id, all, auto-creation, errors), DescribeConfigs,
 * IncrementalAlterConfigs, CreatePartitions, DescribeCluster,
 * DescribeTopicPartitions paging, DeleteTopics by id, and a restart that
 * serves the same metadata.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { decodeResponse, encodeRequest } from '../../src/protocol/apis.js';
import type { ApiDef, Partial, RequestOf, ResponseOf } from '../../src/protocol/schema.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../../src/protocol/reader.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { DescribeConfigs } from '../../src/protocol/schemas/32-describe-configs.js';
import { IncrementalAlterConfigs } from '../../src/protocol/schemas/44-incremental-alter-configs.js';
import { CreatePartitions } from '../../src/protocol/schemas/37-create-partitions.js';
import { DeleteTopics } from '../../src/protocol/schemas/20-delete-topics.js';
import { DescribeCluster } from '../../src/protocol/schemas/60-describe-cluster.js';
import { DescribeTopicPartitions } from '../../src/protocol/schemas/75-describe-topic-partitions.js';
import { silentLogger } from '../../src/common/logger.js';
import { WireClient } from '../server/wire-client.js';

let correlationId = 0;

async function call<A extends ApiDef>(client: WireClient, api: A, version: number, body: Partial<RequestOf<A>>): Promise<ResponseOf<A>> {
  const id = ++correlationId;
  client.send(encodeRequest(api, { apiVersion: version, correlationId: id, clientId: 'e2e' }, body));
  const frame = await client.next();
  assert.ok(frame !== null, `${api.name} v${version}: connection closed`);
  const decoded = decodeResponse(api, version, frame);
  assert.ok(decoded.ok, `${api.name} v${version}: ${decoded.ok ? '' : decoded.error.message}`);
  assert.equal(decoded.correlationId, id);
  return decoded.body;
}

async function withBroker<T>(dir: string, run: (broker: RunningBroker, client: WireClient) => Promise<T>): Promise<T> {
  const broker = await startBroker({ config: { 'log.dirs': dir, 'auto.create.topics.enable': true }, logger: silentLogger });
  const client = await WireClient.connect(broker.bootstrapServers);
  try {
    return await run(broker, client);
  } finally {
    client.close();
    await broker.stop();
  }
}

test('topics are created, described, altered, grown, paged, deleted, and survive a restart', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-metadata-e2e-'));
  try {
    const topicId = await withBroker(dir, async (broker, client) => {
      const port = Number(broker.bootstrapServers.split(':')[1]);
      const created = await call(client, CreateTopics, 7, {
        topics: [
          { name: 'events', numPartitions: 3, replicationFactor: 1, configs: [{ name: 'retention.ms', value: '12345' }] },
          { name: 'bad/name', numPartitions: 1, replicationFactor: 1 },
          { name: 'too-many-replicas', numPartitions: 1, replicationFactor: 3 },
        ],
        timeoutMs: 30000,
      });
      const [events, badName, tooMany] = created.topics;
      assert.equal(events!.errorCode, ErrorCode.NONE);
      assert.equal(events!.numPartitions, 3);
      assert.equal(events!.replicationFactor, 1);
      assert.notEqual(events!.topicId, ZERO_UUID);
      assert.deepEqual(events!.configs!.find((c) => c.name === 'retention.ms'), { name: 'retention.ms', value: '12345', readOnly: false, configSource: 1, isSensitive: false });
      assert.equal(badName!.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
      assert.equal(tooMany!.errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);

      const metadata = await call(client, Metadata, 12, { topics: [{ name: 'events' }, { name: 'missing' }, { name: 'bad/name' }], allowAutoTopicCreation: false });
      assert.deepEqual(metadata.brokers, [{ nodeId: 1, host: '127.0.0.1', port, rack: null }]);
      assert.equal(metadata.controllerId, 1);
      assert.equal(metadata.clusterId, broker.broker.metadata.image.clusterId);
      const [described, missing, invalid] = metadata.topics;
      assert.equal(described!.topicId, events!.topicId);
      assert.equal(described!.topicAuthorizedOperations, -2147483648);
      assert.deepEqual(described!.partitions.map((p) => [p.errorCode, p.partitionIndex, p.leaderId, p.leaderEpoch, p.replicaNodes, p.isrNodes]), [
        [0, 0, 1, 0, [1], [1]],
        [0, 1, 1, 0, [1], [1]],
        [0, 2, 1, 0, [1], [1]],
      ]);
      assert.equal(missing!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal(invalid!.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);

      const byId = await call(client, Metadata, 12, { topics: [{ topicId: events!.topicId, name: null }], includeTopicAuthorizedOperations: true });
      assert.equal(byId.topics[0]!.name, 'events');
      assert.equal(byId.topics[0]!.topicAuthorizedOperations, 3576);
      const autoCreated = await call(client, Metadata, 4, { topics: [{ name: 'auto-topic' }], allowAutoTopicCreation: true });
      assert.equal(autoCreated.topics[0]!.errorCode, ErrorCode.NONE);
      assert.equal(autoCreated.topics[0]!.partitions.length, 1);
      const v0 = await call(client, Metadata, 0, { topics: [] });
      assert.deepEqual(v0.topics.map((t) => t.name), ['auto-topic', 'events']);

      const configs = await call(client, DescribeConfigs, 4, {
        resources: [
          { resourceType: 2, resourceName: 'events', configurationKeys: ['retention.ms', 'segment.bytes'] },
          { resourceType: 2, resourceName: 'nope', configurationKeys: null },
          { resourceType: 4, resourceName: '1', configurationKeys: ['num.partitions'] },
        ],
        includeSynonyms: true,
      });
      const [topicConfigs, unknownTopic, brokerConfigs] = configs.results;
      assert.deepEqual(topicConfigs!.configs.map((c) => [c.name, c.value, c.configSource, c.configType, c.documentation]), [
        ['retention.ms', '12345', 1, 5, null],
        ['segment.bytes', '1073741824', 5, 3, null],
      ]);
      assert.deepEqual(topicConfigs!.configs[0]!.synonyms, [
        { name: 'retention.ms', value: '12345', source: 1 },
        { name: 'log.retention.hours', value: '168', source: 5 },
      ]);
      assert.equal(unknownTopic!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.deepEqual(brokerConfigs!.configs.map((c) => [c.name, c.value, c.readOnly]), [['num.partitions', '1', true]]);

      const altered = await call(client, IncrementalAlterConfigs, 1, {
        resources: [
          { resourceType: 2, resourceName: 'events', configs: [{ name: 'cleanup.policy', configOperation: 0, value: 'compact' }] },
          { resourceType: 2, resourceName: 'events', configs: [] },
        ],
      });
      assert.equal(altered.responses[0]!.errorCode, ErrorCode.NONE);
      assert.equal(altered.responses[1]!.errorCode, ErrorCode.INVALID_REQUEST);
      const badValue = await call(client, IncrementalAlterConfigs, 1, {
        resources: [{ resourceType: 2, resourceName: 'events', configs: [{ name: 'segment.bytes', configOperation: 0, value: '12' }] }],
      });
      assert.equal(badValue.responses[0]!.errorCode, ErrorCode.INVALID_CONFIG);
      assert.equal(badValue.responses[0]!.errorMessage, 'Invalid value 12 for configuration segment.bytes: Value must be at least 1048576');

      const grown = await call(client, CreatePartitions, 3, { topics: [{ name: 'events', count: 5, assignments: null }], timeoutMs: 30000 });
      assert.equal(grown.results[0]!.errorCode, ErrorCode.NONE);

      const cluster = await call(client, DescribeCluster, 1, { endpointType: 1 });
      assert.equal(cluster.errorCode, ErrorCode.NONE);
      assert.deepEqual(cluster.brokers.map((b) => [b.brokerId, b.port]), [[1, port]]);
      const controllers = await call(client, DescribeCluster, 1, { endpointType: 2 });
      assert.equal(controllers.errorCode, ErrorCode.MISMATCHED_ENDPOINT_TYPE);

      const firstPage = await call(client, DescribeTopicPartitions, 0, { topics: [], responsePartitionLimit: 4 });
      assert.deepEqual(firstPage.topics.map((t) => [t.name, t.partitions.length]), [['auto-topic', 1], ['events', 3]]);
      assert.deepEqual(firstPage.nextCursor, { topicName: 'events', partitionIndex: 3 });
      const secondPage = await call(client, DescribeTopicPartitions, 0, { topics: [], responsePartitionLimit: 4, cursor: firstPage.nextCursor });
      assert.deepEqual(secondPage.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)]), [['events', [3, 4]]]);
      assert.equal(secondPage.nextCursor, null);

      const deleted = await call(client, DeleteTopics, 6, { topics: [{ name: null, topicId: (await call(client, Metadata, 12, { topics: [{ name: 'auto-topic' }] })).topics[0]!.topicId }], timeoutMs: 30000 });
      assert.deepEqual(deleted.responses.map((r) => [r.name, r.errorCode]), [['auto-topic', ErrorCode.NONE]]);
      return events!.topicId;
    });

    await withBroker(dir, async (_broker, client) => {
      const metadata = await call(client, Metadata, 12, { topics: null });
      assert.deepEqual(metadata.topics.map((t) => [t.name, t.topicId, t.partitions.length]), [['events', topicId, 5]]);
      assert.ok(metadata.topics[0]!.partitions.every((p) => p.errorCode === ErrorCode.NONE && p.leaderId === 1));
      const configs = await call(client, DescribeConfigs, 4, { resources: [{ resourceType: 2, resourceName: 'events', configurationKeys: ['cleanup.policy'] }] });
      assert.equal(configs.results[0]!.configs[0]!.value, 'compact');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
