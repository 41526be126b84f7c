/**
 * The deny-path table of test/server/authorization.test.ts, kept apart so
 * that the same table can be played against Apache Kafka 4.4 with its
 * StandardAuthorizer (a bootstrap address is all it needs): a request per
 * API key that User:alice, with no ACL, must be refused with Kafka's *_AUTHORIZATION_FAILED error, and the ACLs
 * Kafka requires for it, after which the same request is not refused.
 * `runDenyPathTable` plays it against a SASL PLAIN listener where admin is
 * a super user (passwords: the user's name + "-secret").
 */
import assert from 'node:assert/strict';
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
import { ReadShareGroupState } from '../../src/protocol/schemas/84-read-share-group-state.js';
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
import { ShareGroupHeartbeat } from '../../src/protocol/schemas/76-share-group-heartbeat.js';
import { ShareGroupDescribe } from '../../src/protocol/schemas/77-share-group-describe.js';
import { DescribeShareGroupOffsets } from '../../src/protocol/schemas/90-describe-share-group-offsets.js';
import { AlterShareGroupOffsets } from '../../src/protocol/schemas/91-alter-share-group-offsets.js';
import { DeleteShareGroupOffsets } from '../../src/protocol/schemas/92-delete-share-group-offsets.js';
import { IncrementalAlterConfigs } from '../../src/protocol/schemas/44-incremental-alter-configs.js';
import { AlterPartitionReassignments } from '../../src/protocol/schemas/45-alter-partition-reassignments.js';
import { ElectLeaders } from '../../src/protocol/schemas/43-elect-leaders.js';
import { ListPartitionReassignments } from '../../src/protocol/schemas/46-list-partition-reassignments.js';
import { DescribeUserScramCredentials } from '../../src/protocol/schemas/50-describe-user-scram-credentials.js';
import { DescribeProducers } from '../../src/protocol/schemas/61-describe-producers.js';
import { DescribeTransactions } from '../../src/protocol/schemas/65-describe-transactions.js';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as Res } from '../../src/security/authorizer/acl.js';
import { buildBatch } from '../../src/protocol/records/records.js';
import { WireClient, call, fetchBody, produceBody } from './wire-client.js';

export const TOPIC = 'payments';
const GROUP = 'billing';
const TXN = 'billing-txn';

const AUTH_FAILED = new Set<number>([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);


export async function login(bootstrap: string, user: string): Promise<WireClient> {
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

export async function addAcls(admin: WireClient, acls: readonly Acl[]): Promise<void> {
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
  // A share key (KIP-932) is asked for by brokers: CLUSTER_ACTION; so are the share coordinator's RPCs (83-87).
  { api: FindCoordinator, version: 6, body: { keyType: 2, coordinatorKeys: [`${GROUP}:AAAAAAAAAAAAAAAAAAAAAQ:0`] }, error: (r) => r.coordinators[0].errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.CLUSTER_ACTION)] },
  { api: ReadShareGroupState, version: 0, body: { groupId: GROUP, topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partition: 0, leaderEpoch: 0 }] }] }, error: (r) => r.results[0].partitions[0].errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.CLUSTER_ACTION)] },
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
  // A cancel with nothing to cancel: allowed, it answers NO_REASSIGNMENT_IN_PROGRESS on the partition and changes nothing.
  { api: ElectLeaders, version: 2, body: { electionType: 0, topicPartitions: [{ topic: TOPIC, partitions: [0] }], timeoutMs: 5000 }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.ALTER)] },
  { api: AlterPartitionReassignments, version: 0, body: { timeoutMs: 5000, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, replicas: null }] }] }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.ALTER)] },
  { api: ListPartitionReassignments, version: 0, body: { timeoutMs: 5000, topics: null }, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.DESCRIBE)] },
  { api: DescribeUserScramCredentials, version: 0, body: { users: [] } /* all users; Kafka 4.4's broker throws on null and never answers */, error: (r) => r.errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.DESCRIBE)] },
  { api: CreateAcls, version: 3, body: { creations: [{ resourceType: Res.TOPIC, resourceName: 'x', resourcePatternType: PatternType.LITERAL, principal: 'User:bob', host: '*', operation: Op.READ, permissionType: AclPermissionType.ALLOW }] }, error: (r) => r.results[0].errorCode, refusedWith: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, acls: [clusterAcl(Op.ALTER)] },
  { api: DeleteTopics, version: 6, body: { topics: [{ name: TOPIC, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], timeoutMs: 5000 }, error: (r) => r.responses[0].errorCode, refusedWith: ErrorCode.TOPIC_AUTHORIZATION_FAILED, acls: [topicAcl(Op.DELETE)] },
  // Share groups (KIP-932): the group-level refusals come first, as Kafka's KafkaApis checks them.
  { api: ShareGroupHeartbeat, version: 1, body: { groupId: GROUP, memberId: 'alice-member', memberEpoch: 0, rackId: null, subscribedTopicNames: [TOPIC] }, error: (r) => r.errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.READ), topicAcl(Op.DESCRIBE)] },
  { api: ShareGroupDescribe, version: 1, body: { groupIds: [GROUP], includeAuthorizedOperations: false }, error: (r) => r.groups[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DESCRIBE)] },
  { api: DescribeShareGroupOffsets, version: 1, body: { groups: [{ groupId: GROUP, topics: [{ topicName: TOPIC, partitions: [0] }] }] }, error: (r) => r.groups[0].errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DESCRIBE)] },
  { api: AlterShareGroupOffsets, version: 0, body: { groupId: GROUP, topics: [{ topicName: TOPIC, partitions: [{ partitionIndex: 0, startOffset: 0 }] }] }, error: (r) => r.errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.READ)] },
  { api: DeleteShareGroupOffsets, version: 0, body: { groupId: GROUP, topics: [{ topicName: TOPIC }] }, error: (r) => r.errorCode, refusedWith: ErrorCode.GROUP_AUTHORIZATION_FAILED, acls: [groupAcl(Op.DELETE)] },
];


/**
 * Kafka's brokers apply a committed ACL when their metadata catches up,
 * after CreateAcls and DeleteAcls have answered (Spool's answer waits for
 * its own image): the answer is asked again, a bounded number of times,
 * until it is the one expected.
 */
async function until<T>(send: () => Promise<T>, done: (response: T) => boolean): Promise<T> {
  let response = await send();
  for (let attempt = 0; attempt < ATTEMPTS_MAX && !done(response); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS));
    response = await send();
  }
  return response;
}
const ATTEMPTS_MAX = 50;
const RETRY_BACKOFF_MS = 100;

/** Plays every row on `bootstrap`; the topic `payments` must not exist yet. */
export async function runDenyPathTable(bootstrap: string): Promise<void> {
  const admin = await login(bootstrap, 'admin');
  const created = await call(admin, CreateTopics, 7, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000 });
  assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
  // Kafka answers CreateTopics before the new partition has a leader (NOT_LEADER_OR_FOLLOWER until it has).
  const produced = await until(() => call(admin, Produce, 9, produceBody(TOPIC, records())), (r) => r.responses[0]!.partitionResponses[0]!.errorCode === ErrorCode.NONE);
  assert.equal(produced.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  const alice = await login(bootstrap, 'alice');
  for (const row of TABLE) {
    const label = `${row.api.name} v${row.version} ${JSON.stringify(row.acls.map((a) => [a.resourceType, a.operation]))}`;
    const send = () => call(alice, row.api, row.version, row.body as never);
    assert.equal(row.error(await until(send, (r) => row.error(r) === row.refusedWith)), row.refusedWith, `${label}: refused`);
    await addAcls(admin, row.acls);
    const allowed = await until(send, (r) => !AUTH_FAILED.has(row.error(r)));
    assert.ok(!AUTH_FAILED.has(row.error(allowed)), `${label}: allowed after the ACL, got ${row.error(allowed)}`);
    await removeAlicesAcls(admin);
  }
  alice.close();
  admin.close();
}
