/**
 * Authorization of every API, as Kafka's KafkaApis and ControllerApis check
 * it, against a real broker with
 * authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer:
 * - a deny-path table: for each API key, a client authenticated as
 *   User:alice with no ACL is refused with Kafka's *_AUTHORIZATION_FAILED
 *   error; after the ACL Kafka requires is added (CreateAcls as the super
 *   user admin), the same request is no longer refused;
 * - Metadata hides topics alice may not DESCRIBE when all are listed, and
 *   answers TOPIC_AUTHORIZATION_FAILED (with a zero id) when one is named;
 * - a DENY ACL wins over the ALLOW that made a request pass; PREFIXED
 *   patterns apply; DescribeAcls and DeleteAcls see and remove them;
 * - ACLs are metadata records: they survive a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/node/embedded.js';
import { silentLogger } from '../../src/common/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ApiDef } from '../../src/protocol/schema.js';
import { SaslHandshake } from '../../src/protocol/schemas/17-sasl-handshake.js';
import { SaslAuthenticate } from '../../src/protocol/schemas/36-sasl-authenticate.js';
import { Produce } from '../../src/protocol/schemas/00-produce.js';
import { Fetch } from '../../src/protocol/schemas/01-fetch.js';
import { ListOffsets } from '../../src/protocol/schemas/02-list-offsets.js';
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { OffsetCommit } from '../../src/protocol/schemas/08-offset-commit.js';
import { OffsetFetch } from '../../src/protocol/schemas/09-offset-fetch.js';
import { FindCoordinator } from '../../src/protocol/schemas/10-find-coordinator.js';
import { JoinGroup } from '../../src/protocol/schemas/11-join-group.js';
import { Heartbeat } from '../../src/protocol/schemas/12-heartbeat.js';
import { DescribeGroups } from '../../src/protocol/schemas/15-describe-groups.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { DeleteTopics } from '../../src/protocol/schemas/20-delete-topics.js';
import { DeleteRecords } from '../../src/protocol/schemas/21-delete-records.js';
import { InitProducerId } from '../../src/protocol/schemas/22-init-producer-id.js';
import { OffsetForLeaderEpoch } from '../../src/protocol/schemas/23-offset-for-leader-epoch.js';
import { EndTxn } from '../../src/protocol/schemas/26-end-txn.js';
import { DescribeAcls } from '../../src/protocol/schemas/29-describe-acls.js';
import { CreateAcls } from '../../src/protocol/schemas/30-create-acls.js';
import { DeleteAcls } from '../../src/protocol/schemas/31-delete-acls.js';
import { DescribeConfigs } from '../../src/protocol/schemas/32-describe-configs.js';
import { DescribeLogDirs } from '../../src/protocol/schemas/35-describe-log-dirs.js';
import { CreatePartitions } from '../../src/protocol/schemas/37-create-partitions.js';
import { DeleteGroups } from '../../src/protocol/schemas/42-delete-groups.js';
import { IncrementalAlterConfigs } from '../../src/protocol/schemas/44-incremental-alter-configs.js';
import { DescribeUserScramCredentials } from '../../src/protocol/schemas/50-describe-user-scram-credentials.js';
import { DescribeProducers } from '../../src/protocol/schemas/61-describe-producers.js';
import { DescribeTransactions } from '../../src/protocol/schemas/65-describe-transactions.js';
import { ListGroups } from '../../src/protocol/schemas/16-list-groups.js';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as Res } from '../../src/security/authorizer/acl.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { WireClient, call, fetchBody, produceBody } from './wire-client.js';

const TOPIC = 'payments';
const GROUP = 'billing';
const TXN = 'billing-txn';

const AUTH_FAILED = new Set<number>([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);

async function withSecuredBroker(body: (broker: RunningBroker, sasl: string) => Promise<void>, dir = mkdtempSync(join(tmpdir(), 'spool-acl-'))): Promise<void> {
  const broker = await startBroker({
    config: {
      'log.dirs': dir,
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
      'listener.security.protocol.map': 'SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name': 'SASL_PLAINTEXT',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";',
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:admin',
      'connection.failed.authentication.delay.ms': 0,
      'group.initial.rebalance.delay.ms': 0,
    },
    logger: silentLogger,
  });
  try {
    const listener = broker.broker.listeners.find((l) => l.name === 'SASL_PLAINTEXT')!;
    await body(broker, `${listener.advertisedHost}:${listener.advertisedPort}`);
  } finally {
    await broker.stop();
  }
}

async function login(bootstrap: string, user: string): Promise<WireClient> {
  const client = await WireClient.connect(bootstrap);
  assert.equal((await call(client, SaslHandshake, 1, { mechanism: 'PLAIN' })).errorCode, ErrorCode.NONE);
  const authenticated = await call(client, SaslAuthenticate, 2, { authBytes: Buffer.from(`\0${user}\0${user}-secret`) });
  assert.equal(authenticated.errorCode, ErrorCode.NONE);
  return client;
}

interface Acl {
  resourceType: number;
  resourceName: string;
  operation: number;
  patternType?: number;
  permissionType?: number;
}

async function addAcls(admin: WireClient, acls: readonly Acl[]): Promise<void> {
  const creations = acls.map((acl) => ({
    resourceType: acl.resourceType,
    resourceName: acl.resourceName,
    resourcePatternType: acl.patternType ?? PatternType.LITERAL,
    principal: 'User:alice',
    host: '*',
    operation: acl.operation,
    permissionType: acl.permissionType ?? AclPermissionType.ALLOW,
  }));
  const created = await call(admin, CreateAcls, 3, { creations });
  assert.deepEqual(created.results.map((r) => r.errorCode), acls.map(() => ErrorCode.NONE));
}

/** Each row starts from no ACL. */
async function removeAlicesAcls(admin: WireClient): Promise<void> {
  const filter = { resourceTypeFilter: Res.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: 'User:alice', hostFilter: null, operation: Op.ANY, permissionType: AclPermissionType.ANY };
  const deleted = await call(admin, DeleteAcls, 3, { filters: [filter] });
  assert.equal(deleted.filterResults[0]!.errorCode, ErrorCode.NONE);
}

const records = () => buildBatch({ records: [{ value: 'x', timestamp: Date.now() }] });

/** One row: a request alice sends, where its error is, and the ACLs Kafka requires for it. */
interface Row {
  api: ApiDef;
  version: number;
  body: Record<string, unknown>;
  error: (response: any) => number;
  refusedWith: number;
  acls: Acl[];
}

const topicAcl = (operation: number): Acl => ({ resourceType: Res.TOPIC, resourceName: TOPIC, operation });
const groupAcl = (operation: number): Acl => ({ resourceType: Res.GROUP, resourceName: GROUP, operation });
const clusterAcl = (operation: number): Acl => ({ resourceType: Res.CLUSTER, resourceName: 'kafka-cluster', operation });

const TABLE: Row[] = [
  { api: Metadata, version: 12, body: { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: TOPIC }], allowAutoTopicCreation: false }, error: (r) => r.topics[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DESCRIBE)] },
  { api: Produce, version: 9, body: produceBody(TOPIC, Buffer.alloc(0)), error: (r) => r.responses[0].partitionResponses[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.WRITE)] },
  { api: Fetch, version: 12, body: fetchBody(TOPIC, 0), error: (r) => r.responses[0].partitions[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.READ)] },
  { api: ListOffsets, version: 7, body: { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }] }] }, error: (r) => r.topics[0].partitions[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DESCRIBE)] },
  { api: OffsetForLeaderEpoch, version: 4, body: { replicaId: -1, topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] }, error: (r) => r.topics[0].partitions[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DESCRIBE)] },
  { api: DeleteRecords, version: 2, body: { topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: 0 }] }], timeoutMs: 5000 }, error: (r) => r.topics[0].partitions[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DELETE)] },
  { api: DescribeProducers, version: 0, body: { topics: [{ name: TOPIC, partitionIndexes: [0] }] }, error: (r) => r.topics[0].partitions[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.READ)] },
  { api: CreatePartitions, version: 3, body: { topics: [{ name: TOPIC, count: 2, assignments: null }], timeoutMs: 5000, validateOnly: true }, error: (r) => r.results[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.ALTER)] },
  { api: DescribeConfigs, version: 4, body: { resources: [{ resourceType: 2, resourceName: TOPIC, configurationKeys: null }] }, error: (r) => r.results[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DESCRIBE_CONFIGS)] },
  { api: IncrementalAlterConfigs, version: 1, body: { resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: true }, error: (r) => r.responses[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.ALTER_CONFIGS)] },
  { api: DescribeConfigs, version: 4, body: { resources: [{ resourceType: 4, resourceName: '1', configurationKeys: null }] }, error: (r) => r.results[0].errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.DESCRIBE_CONFIGS)] },
  { api: CreateTopics, version: 7, body: { topics: [{ name: 'alice-new', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: true }, error: (r) => r.topics[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [{ resourceType: Res.TOPIC, resourceName: 'alice-', patternType: PatternType.PREFIXED, operation: Op.CREATE }] },
  { api: FindCoordinator, version: 4, body: { keyType: 0, coordinatorKeys: [GROUP] }, error: (r) => r.coordinators[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DESCRIBE)] },
  { api: FindCoordinator, version: 4, body: { keyType: 1, coordinatorKeys: [TXN] }, error: (r) => r.coordinators[0].errorCode, refusedWith: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, acls: [{ resourceType: Res.TRANSACTIONAL_ID, resourceName: TXN, operation: Op.DESCRIBE }] },
  { api: JoinGroup, version: 9, body: { groupId: GROUP, sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null }, error: (r) => r.errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.READ)] },
  { api: Heartbeat, version: 4, body: { groupId: GROUP, generationId: 1, memberId: 'm', groupInstanceId: null }, error: (r) => r.errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.READ)] },
  { api: OffsetCommit, version: 8, body: { groupId: GROUP, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 0, committedLeaderEpoch: -1, committedMetadata: null }] }] }, error: (r) => r.topics[0].partitions[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.READ), topicAcl(Op.READ)] },
  { api: OffsetFetch, version: 8, body: { groups: [{ groupId: GROUP, topics: null }], requireStable: false }, error: (r) => r.groups[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DESCRIBE)] },
  { api: DescribeGroups, version: 5, body: { groups: [GROUP], includeAuthorizedOperations: true }, error: (r) => r.groups[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DESCRIBE)] },
  { api: DeleteGroups, version: 2, body: { groupsNames: [GROUP] }, error: (r) => r.results[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DELETE)] },
  { api: InitProducerId, version: 4, body: { transactionalId: TXN, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 }, error: (r) => r.errorCode, refusedWith: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, acls: [{ resourceType: Res.TRANSACTIONAL_ID, resourceName: TXN, operation: Op.WRITE }] },
  { api: InitProducerId, version: 4, body: { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.IDEMPOTENT_WRITE)] },
  { api: EndTxn, version: 3, body: { transactionalId: TXN, producerId: 1, producerEpoch: 0, committed: true }, error: (r) => r.errorCode, refusedWith: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, acls: [{ resourceType: Res.TRANSACTIONAL_ID, resourceName: TXN, operation: Op.WRITE }] },
  { api: DescribeTransactions, version: 0, body: { transactionalIds: [TXN] }, error: (r) => r.transactionStates[0].errorCode, refusedWith: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, acls: [{ resourceType: Res.TRANSACTIONAL_ID, resourceName: TXN, operation: Op.DESCRIBE }] },
  { api: DescribeLogDirs, version: 4, body: { topics: null }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.DESCRIBE)] },
  { api: DescribeAcls, version: 3, body: { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.DESCRIBE)] },
  { api: DescribeUserScramCredentials, version: 0, body: { users: null }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.DESCRIBE)] },
  { api: CreateAcls, version: 3, body: { creations: [{ resourceType: Res.TOPIC, resourceName: 'x', resourcePatternType: PatternType.LITERAL, principal: 'User:bob', host: '*', operation: Op.READ, permissionType: AclPermissionType.ALLOW }] }, error: (r) => r.results[0].errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.ALTER)] },
  { api: DeleteTopics, version: 6, body: { topics: [{ name: TOPIC, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], timeoutMs: 5000 }, error: (r) => r.responses[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DELETE)] },
];

test('deny-path table: each API refuses alice with Kafka\'s *_AUTHORIZATION_FAILED, and the ACL Kafka requires lets the request through', { timeout: 120_000 }, async () => {
  await withSecuredBroker(async (_broker, bootstrap) => {
    const admin = await login(bootstrap, 'admin');
    const created = await call(admin, CreateTopics, 7, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000 });
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
    const produced = await call(admin, Produce, 9, produceBody(TOPIC, records()));
    assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    const alice = await login(bootstrap, 'alice');
    for (const row of TABLE) {
      const label = `${row.api.name} v${row.version} ${JSON.stringify(row.acls.map((a) => [a.resourceType, a.operation]))}`;
      const refused = await call(alice, row.api, row.version, row.body as never);
      assert.equal(row.error(refused), row.refusedWith, `${label}: refused`);
      await addAcls(admin, row.acls);
      const allowed = await call(alice, row.api, row.version, row.body as never);
      assert.ok(!AUTH_FAILED.has(row.error(allowed)), `${label}: allowed after the ACL, got ${row.error(allowed)}`);
      await removeAlicesAcls(admin);
    }
    alice.close();
    admin.close();
  });
});

test('Metadata hides what alice may not DESCRIBE; DENY wins over ALLOW; PREFIXED patterns apply; DescribeAcls and DeleteAcls; ACLs survive a restart', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-acl-'));
  try {
    await withSecuredBroker(async (_broker, bootstrap) => {
      const admin = await login(bootstrap, 'admin');
      await call(admin, CreateTopics, 7, { topics: ['orders-eu', 'orders-us', 'secrets'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })), timeoutMs: 30_000 });
      const alice = await login(bootstrap, 'alice');
      const all = { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true };
      assert.deepEqual((await call(alice, Metadata, 12, all)).topics, []);
      await addAcls(admin, [{ resourceType: Res.TOPIC, resourceName: 'orders-', patternType: PatternType.PREFIXED, operation: Op.READ }]);
      const listed = await call(alice, Metadata, 12, all);
      assert.deepEqual(listed.topics.map((t) => t.name), ['orders-eu', 'orders-us']);
      // READ implies DESCRIBE: the authorized operations are exactly those two bits.
      assert.equal(listed.topics[0]!.topicAuthorizedOperations, (1 << Op.READ) | (1 << Op.DESCRIBE));
      const named = await call(alice, Metadata, 12, { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'secrets' }], allowAutoTopicCreation: false });
      assert.deepEqual(named.topics.map((t) => [t.name, t.errorCode, t.topicId]), [['secrets', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'AAAAAAAAAAAAAAAAAAAAAA']]);
      await addAcls(admin, [{ resourceType: Res.TOPIC, resourceName: 'orders-us', operation: Op.DESCRIBE, permissionType: AclPermissionType.DENY }]);
      assert.deepEqual((await call(alice, Metadata, 12, all)).topics.map((t) => t.name), ['orders-eu']);
      // ListGroups without DESCRIBE on the cluster lists only groups alice may describe (none exist): no error.
      assert.equal((await call(alice, ListGroups, 4, { statesFilter: [] })).errorCode, ErrorCode.NONE);
      const described = await call(admin, DescribeAcls, 3, { resourceTypeFilter: Res.TOPIC, resourceNameFilter: 'orders-us', patternTypeFilter: PatternType.MATCH, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: AclPermissionType.ANY });
      assert.deepEqual(
        described.resources.map((r) => [r.resourceName, r.patternType, r.acls.map((a) => [a.principal, a.host, a.operation, a.permissionType])]).sort(),
        [
          ['orders-', PatternType.PREFIXED, [['User:alice', '*', Op.READ, AclPermissionType.ALLOW]]],
          ['orders-us', PatternType.LITERAL, [['User:alice', '*', Op.DESCRIBE, AclPermissionType.DENY]]],
        ],
      );
      admin.close();
      alice.close();
    }, dir);
    await withSecuredBroker(async (_broker, bootstrap) => {
      const admin = await login(bootstrap, 'admin');
      const alice = await login(bootstrap, 'alice');
      const all = { topics: null, allowAutoTopicCreation: false };
      assert.deepEqual((await call(alice, Metadata, 12, all)).topics.map((t) => t.name), ['orders-eu'], 'ACLs replayed from the metadata log');
      const deleted = await call(admin, DeleteAcls, 3, {
        filters: [{ resourceTypeFilter: Res.TOPIC, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: 'User:alice', hostFilter: null, operation: Op.DESCRIBE, permissionType: AclPermissionType.DENY }],
      });
      assert.deepEqual(deleted.filterResults[0]!.matchingAcls.map((a) => [a.resourceName, a.operation, a.permissionType]), [['orders-us', Op.DESCRIBE, AclPermissionType.DENY]]);
      assert.deepEqual((await call(alice, Metadata, 12, all)).topics.map((t) => t.name), ['orders-eu', 'orders-us']);
      admin.close();
      alice.close();
    }, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
