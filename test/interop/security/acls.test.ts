/**
 * ACLs against a real Spool process with Kafka's StandardAuthorizer
 * settings, driven by Apache Kafka 4.4's own tools and Spool's CLI:
 * - Kafka's kafka-acls (AclCommand: --add --producer, --list, --remove) and
 *   `spool acls` (--add --consumer, --list) manage the same ACLs, and both
 *   --list outputs hold the same lines;
 * - alice's console producer and consumer are refused with Kafka's
 *   authorization errors until the ACLs exist, then work; bob, with no ACL,
 *   is still refused; a PREFIXED DENY added with kafka-acls wins over the
 *   ALLOWs; removing the ACLs with --remove --force refuses alice again.
 * Clients authenticate with SASL PLAIN; admin is a super user.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kafkaLibReady, runKafkaTool, TOOL } from '../kafka/kafka.js';
import { missingToolSkip } from '../clients/scenario.js';
import { makeTestPki } from '../../security/certificates.js';
import { spool as spoolCli } from '../../cli/cli-io.js';
import { kafkaTool as tool, startSecuredSpool } from './secured-spool.js';

const ACL_COMMAND = 'org.apache.kafka.tools.AclCommand';
const pki = makeTestPki();
after(() => pki.remove());

const USERS = 'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret"';
const settings = [
  'sasl.enabled.mechanisms=PLAIN',
  `listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${USERS};`,
  'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
  // The PLAINTEXT listener (the harness's, and `spool acls`'s here) is User:ANONYMOUS.
  'super.users=User:admin;User:ANONYMOUS',
  'connection.failed.authentication.delay.ms=0',
];

function clientConfig(user: string): string {
  const path = join(pki.dir, `acl-${user}.properties`);
  writeFileSync(path, [
    'security.protocol=SASL_PLAINTEXT',
    'sasl.mechanism=PLAIN',
    `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${user}-secret";`,
    '',
  ].join('\n'));
  return path;
}

/** The lines of a --list output, without blank ones, sorted (Kafka prints its resources in hash order). */
const listed = (text: string) => text.split('\n').map((line) => line.trim()).filter((line) => line !== '').sort();

test('kafka-acls and spool acls against Spool: producers and consumers refused, then allowed, then denied by a PREFIXED DENY', { timeout: 300_000 }, async (t) => {
  const skip = missingToolSkip(kafkaLibReady(), 'Kafka 4.4 jars not resolved: run test/interop/kafka/ci-setup.sh');
  if (skip !== undefined) return t.skip(skip);
  const { spool, bootstrap } = await startSecuredSpool('SASL_PLAINTEXT', settings);
  try {
    const as = (user: string) => ['--bootstrap-server', bootstrap, '--command-config', clientConfig(user)];
    await tool(TOOL.topics, [...as('admin'), '--create', '--topic', 'acl-orders', '--partitions', '1', '--replication-factor', '1']);

    const produce = (user: string) => runKafkaTool(TOOL.consoleProducer, [...as(user), '--topic', 'acl-orders'], { input: 'one\ntwo\n', timeoutMs: 120_000 });
    const consume = (user: string) =>
      runKafkaTool(TOOL.consoleConsumer, [...as(user), '--topic', 'acl-orders', '--group', 'acl-group', '--from-beginning', '--max-messages', '2', '--timeout-ms', '20000'], { timeoutMs: 120_000 });

    const refusedProduce = await produce('alice');
    assert.match(refusedProduce.stderr, /TopicAuthorizationException|Not authorized to access topics: \[acl-orders\]/);

    const added = await tool(ACL_COMMAND, [...as('admin'), '--add', '--allow-principal', 'User:alice', '--producer', '--topic', 'acl-orders']);
    assert.match(added, /Adding ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=acl-orders, patternType=LITERAL\)`/);
    const spoolAdded = await spoolCli(['acls', '--bootstrap-server', spool.bootstrap, '--add', '--allow-principal', 'User:alice', '--consumer', '--topic', 'acl-orders', '--group', 'acl-group']);
    assert.equal(spoolAdded.code, 0, spoolAdded.err);
    assert.match(spoolAdded.out, /Adding ACLs for resource `ResourcePattern\(resourceType=GROUP, name=acl-group, patternType=LITERAL\)`: \n \t\(principal=User:alice, host=\*, operation=READ, permissionType=ALLOW\) \n/);

    const kafkaList = await tool(ACL_COMMAND, [...as('admin'), '--list', '--topic', 'acl-orders']);
    const spoolList = await spoolCli(['acls', '--bootstrap-server', spool.bootstrap, '--list', '--topic', 'acl-orders']);
    assert.equal(spoolList.code, 0, spoolList.err);
    assert.deepEqual(listed(spoolList.out), listed(kafkaList));
    assert.deepEqual(listed(kafkaList), [
      '(principal=User:alice, host=*, operation=CREATE, permissionType=ALLOW)',
      '(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)',
      '(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)',
      '(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)',
      'Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=acl-orders, patternType=LITERAL)`:',
    ]);

    const produced = await produce('alice');
    assert.equal(produced.code, 0, produced.stderr);
    assert.doesNotMatch(produced.stderr, /AuthorizationException/);
    const consumed = await consume('alice');
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['one', 'two']);

    const bob = await consume('bob');
    // The console consumer reports the refusal and exits 0, as it does against Kafka.
    assert.match(bob.stderr, /(Topic|Group)AuthorizationException/);
    assert.match(bob.stderr, /Processed a total of 0 messages/);

    await tool(ACL_COMMAND, [...as('admin'), '--add', '--deny-principal', 'User:alice', '--operation', 'Read', '--topic', 'acl-', '--resource-pattern-type', 'prefixed']);
    const denied = await consume('alice');
    assert.match(denied.stderr, /TopicAuthorizationException/);
    assert.equal(denied.stdout.trim(), '');

    await tool(ACL_COMMAND, [...as('admin'), '--remove', '--force', '--topic', 'acl-', '--resource-pattern-type', 'prefixed']);
    await tool(ACL_COMMAND, [...as('admin'), '--remove', '--force', '--topic', 'acl-orders']);
    const after = await spoolCli(['acls', '--bootstrap-server', spool.bootstrap, '--list', '--topic', 'acl-orders']);
    assert.equal(after.out, '');
    assert.match((await produce('alice')).stderr, /TopicAuthorizationException|Not authorized to access topics: \[acl-orders\]/);
  } finally {
    await spool.stop();
  }
});
