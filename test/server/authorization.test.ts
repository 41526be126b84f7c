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
import { Metadata } from '../../src/protocol/schemas/03-metadata.js';
import { ListGroups } from '../../src/protocol/schemas/16-list-groups.js';
import { CreateTopics } from '../../src/protocol/schemas/19-create-topics.js';
import { DescribeAcls } from '../../src/protocol/schemas/29-describe-acls.js';
import { DeleteAcls } from '../../src/protocol/schemas/31-delete-acls.js';
import { AclOperation as Op, AclPermissionType, PatternType, ResourceType as Res } from '../../src/security/authorizer/acl.js';
import { call } from './wire-client.js';
import { addAcls, login, runDenyPathTable } from './authorization-table.js';

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

test('deny-path table: each API refuses alice with Kafka\'s *_AUTHORIZATION_FAILED, and the ACL Kafka requires lets the request through', { timeout: 120_000 }, async () => {
  await withSecuredBroker((_broker, bootstrap) => runDenyPathTable(bootstrap));
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
