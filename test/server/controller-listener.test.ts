/**
 * The CONTROLLER listener serves only the controller's APIs, as Kafka's
 * does: ApiVersions there advertises only keys whose schema lists the
 * controller (Kafka's ApiMessageType listeners), a broker-only API (Metadata,
 * Produce, FindCoordinator, ...) closes the connection, and the broker
 * listener likewise closes on a controller-only API (Vote). DescribeCluster
 * answers by the listener's endpoint type with Kafka's codes.
 *
 * Bug pinned: Spool's controller listener served every API, so a client
 * pointed at port 9093 produced and consumed there.
 *
 * Against startBroker(), or a running Kafka: SPOOL_E2E_BOOTSTRAP=host:port
 * with SPOOL_E2E_CONTROLLER=host:port (its controller listener). The
 * Spool-only test pins the exact list Spool serves there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ApiDef } from '../../src/protocol/schema.js';
import { allApis } from '../../src/protocol/schemas/index.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { ApiVersions } from '../../src/protocol/schemas/18-api-versions.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { Vote } from '../../src/protocol/schemas/52-vote.js';
import { DescribeCluster } from '../../src/protocol/schemas/60-describe-cluster.js';
import { startBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { uniqueTopic } from '../client/broker-fixture.js';
import { WireClient, call, callOrClosed } from './wire-client.js';

interface Endpoints {
  broker: string;
  controller: string;
  stop(): Promise<void>;
}

async function startEndpoints(): Promise<Endpoints> {
  const external = process.env.SPOOL_E2E_BOOTSTRAP;
  const externalController = process.env.SPOOL_E2E_CONTROLLER;
  if (external !== undefined && external !== '' && externalController !== undefined && externalController !== '') {
    return { broker: external, controller: externalController, stop: async () => undefined };
  }
  const dir = mkdtempSync(join(tmpdir(), 'spool-controller-listener-'));
  const running = await startBroker({ config: { 'log.dirs': dir }, logger: silentLogger });
  const controller = running.broker.listeners.find((l) => l.name === 'CONTROLLER')!;
  return {
    broker: running.bootstrapServers,
    controller: `${controller.advertisedHost}:${controller.advertisedPort}`,
    stop: async () => {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const apiVersions = (client: WireClient) => call(client, ApiVersions, 3, { clientSoftwareName: 'spool-test', clientSoftwareVersion: '1' });

const apiOf = (key: number): ApiDef => allApis.find((api) => api.key === key)!;

/** True when the broker closes a fresh connection instead of answering `api`. */
async function closes<A extends ApiDef>(hostPort: string, api: A, version: number, body: Parameters<typeof callOrClosed<A>>[3]): Promise<boolean> {
  const client = await WireClient.connect(hostPort);
  try {
    return (await callOrClosed(client, api, version, body)) === null;
  } finally {
    client.close();
  }
}

test('each listener advertises only its role\'s APIs and closes the connection on the other role\'s', async () => {
  const endpoints = await startEndpoints();
  try {
    const controller = await WireClient.connect(endpoints.controller);
    const advertised = await apiVersions(controller);
    controller.close();
    assert.equal(advertised.errorCode, ErrorCode.NONE);
    for (const key of advertised.apiKeys) assert.ok(apiOf(key.apiKey).listeners.includes('controller'), `${apiOf(key.apiKey).name} advertised on the controller listener`);
    const broker = await WireClient.connect(endpoints.broker);
    for (const key of (await apiVersions(broker)).apiKeys) assert.ok(apiOf(key.apiKey).listeners.includes('broker'), `${apiOf(key.apiKey).name} advertised on the broker listener`);
    broker.close();

    assert.ok(await closes(endpoints.controller, Metadata, 12, { topics: null }), 'Metadata on the controller listener');
    assert.ok(await closes(endpoints.controller, Produce, 9, { acks: 1, timeoutMs: 1000, topicData: [] }), 'Produce on the controller listener');
    assert.ok(await closes(endpoints.controller, FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['g'] }), 'FindCoordinator on the controller listener');
    assert.ok(await closes(endpoints.broker, Vote, 0, {}), 'Vote on the broker listener');
  } finally {
    await endpoints.stop();
  }
});

test('DescribeCluster answers by the listener\'s endpoint type, with Kafka\'s codes for the other type', async () => {
  const endpoints = await startEndpoints();
  const controller = await WireClient.connect(endpoints.controller);
  const broker = await WireClient.connect(endpoints.broker);
  try {
    const controllers = await call(controller, DescribeCluster, 1, { endpointType: 2 });
    assert.equal(controllers.errorCode, ErrorCode.NONE);
    assert.equal(controllers.endpointType, 2);
    assert.deepEqual(controllers.brokers.map((b) => `${b.host}:${b.port}`), [endpoints.controller]);
    assert.equal(controllers.controllerId, controllers.brokers[0]!.brokerId);
    const wantedBrokers = 'The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER';
    const v0 = await call(controller, DescribeCluster, 0, {});
    assert.deepEqual([v0.errorCode, v0.errorMessage, v0.clusterId, v0.brokers], [ErrorCode.INVALID_REQUEST, wantedBrokers, '', []]);
    const v1 = await call(controller, DescribeCluster, 1, { endpointType: 1 });
    assert.deepEqual([v1.errorCode, v1.errorMessage], [ErrorCode.MISMATCHED_ENDPOINT_TYPE, wantedBrokers]);
    const unknown = await call(controller, DescribeCluster, 1, { endpointType: 3 });
    assert.deepEqual([unknown.errorCode, unknown.errorMessage], [ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, 'Unsupported endpoint type 3']);
    const onBroker = await call(broker, DescribeCluster, 1, { endpointType: 2 });
    assert.deepEqual([onBroker.errorCode, onBroker.errorMessage], [ErrorCode.MISMATCHED_ENDPOINT_TYPE, 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER']);
  } finally {
    controller.close();
    broker.close();
    await endpoints.stop();
  }
});

test('Spool\'s controller listener serves ApiVersions, SASL, topic and config admin, client quotas (AlterClientQuotas), feature updates (UpdateFeatures), DescribeCluster, the broker lifecycle (registrations, heartbeats, unregistration, producer-id blocks, controller registrations, ISR changes), forwarded requests (Envelope) and KRaft\'s RPCs, voter changes (KIP-853) included; its Fetch is only the metadata log\'s', async () => {
  if (process.env.SPOOL_E2E_BOOTSTRAP) return; // Kafka's controller serves many more (Raft, registrations, ACLs, ...)
  const endpoints = await startEndpoints();
  try {
    const controller = await WireClient.connect(endpoints.controller);
    const advertised = (await apiVersions(controller)).apiKeys.map((k) => apiOf(k.apiKey).name);
    assert.deepEqual(advertised, [
      'Fetch', 'SaslHandshake', 'ApiVersions', 'CreateTopics', 'DeleteTopics', 'DescribeAcls', 'CreateAcls', 'DeleteAcls', 'DescribeConfigs', 'AlterConfigs', 'SaslAuthenticate', 'CreatePartitions', 'ElectLeaders', 'IncrementalAlterConfigs', 'AlterPartitionReassignments', 'ListPartitionReassignments',
      'AlterClientQuotas', 'DescribeUserScramCredentials', 'AlterUserScramCredentials', 'Vote', 'BeginQuorumEpoch', 'EndQuorumEpoch', 'DescribeQuorum', 'AlterPartition', 'UpdateFeatures', 'Envelope', 'FetchSnapshot',
      'DescribeCluster', 'BrokerRegistration', 'BrokerHeartbeat', 'UnregisterBroker', 'AllocateProducerIds', 'ControllerRegistration',
      'AddRaftVoter', 'RemoveRaftVoter', 'UpdateRaftVoter',
    ]);
    const topic = uniqueTopic('via-controller');
    const created = await call(controller, CreateTopics, 7, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000 });
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
    // A consumer's Fetch names no metadata partition: Kafka's controller answers INVALID_REQUEST.
    const fetched = await call(controller, Fetch, 12, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1000, topics: [] });
    assert.equal(fetched.errorCode, ErrorCode.INVALID_REQUEST);
    controller.close();
  } finally {
    await endpoints.stop();
  }
});
