/**
 * The StandardAuthorizer's decisions, case by case as Kafka's
 * StandardAuthorizerTest states them: super users, no ACL found (both
 * settings of allow.everyone.if.no.acl.found), LITERAL / PREFIXED / `*`
 * patterns, DENY over ALLOW, implied operations (DESCRIBE from READ,
 * DESCRIBE_CONFIGS from ALTER_CONFIGS, but a DENY READ does not deny
 * DESCRIBE), principal and host wildcards, authorizeByResourceType, and the
 * filters DescribeAcls and DeleteAcls match with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConfig, ConfigError } from '../../src/common/config.js';
import { AclOperation as Op, AclPermissionType as Perm, PatternType, ResourceType, filterMatches, operationsBitField, type AclBindingFilter, type StandardAcl } from '../../src/security/authorizer/acl.js';
import { IN_PROCESS_PRINCIPAL, StandardAuthorizer } from '../../src/security/authorizer/standard-authorizer.js';

const alice = { principal: 'User:alice', clientAddress: '10.0.0.1' };
const bob = { principal: 'User:bob', clientAddress: '::ffff:10.0.0.2' };

function acl(overrides: Partial<StandardAcl>): StandardAcl {
  return { resourceType: ResourceType.TOPIC, resourceName: 'orders', patternType: PatternType.LITERAL, principal: 'User:alice', host: '*', operation: Op.READ, permissionType: Perm.ALLOW, ...overrides };
}

function authorizer(acls: StandardAcl[], options: { superUsers?: string[]; allowEveryone?: boolean } = {}): StandardAuthorizer {
  const map = new Map(acls.map((a, i) => [`id-${i}`, a]));
  return new StandardAuthorizer(() => map, { superUsers: new Set(options.superUsers ?? []), allowEveryoneIfNoAclFound: options.allowEveryone ?? false });
}

const topic = (name: string, operation: number) => ({ operation, resourceType: ResourceType.TOPIC, resourceName: name });

test('with no ACL on a resource, allow.everyone.if.no.acl.found decides; an ACL for anyone else denies', () => {
  assert.equal(authorizer([]).authorize(alice, topic('orders', Op.READ)), false);
  assert.equal(authorizer([], { allowEveryone: true }).authorize(alice, topic('orders', Op.READ)), true);
  const others = authorizer([acl({ principal: 'User:bob' })], { allowEveryone: true });
  assert.equal(others.authorize(alice, topic('orders', Op.READ)), false);
  assert.equal(others.authorize(alice, topic('payments', Op.READ)), true);
});

test('super users are allowed everything, even against a DENY; the in-process principal is one', () => {
  const denied = authorizer([acl({ principal: 'User:*', operation: Op.ALL, permissionType: Perm.DENY })], { superUsers: ['User:admin'] });
  assert.equal(denied.authorize({ principal: 'User:admin', clientAddress: '1.2.3.4' }, topic('orders', Op.WRITE)), true);
  assert.equal(denied.authorize({ principal: IN_PROCESS_PRINCIPAL, clientAddress: 'in-process' }, topic('orders', Op.WRITE)), true);
  assert.equal(denied.authorize(alice, topic('orders', Op.WRITE)), false);
});

test('LITERAL matches one name, PREFIXED every name it starts, LITERAL * every name', () => {
  const authz = authorizer([
    acl({ resourceName: 'orders' }),
    acl({ resourceName: 'pay', patternType: PatternType.PREFIXED, operation: Op.WRITE }),
    acl({ resourceName: '*', operation: Op.DELETE }),
  ]);
  assert.equal(authz.authorize(alice, topic('orders', Op.READ)), true);
  assert.equal(authz.authorize(alice, topic('orders2', Op.READ)), false);
  assert.equal(authz.authorize(alice, topic('payments', Op.WRITE)), true);
  assert.equal(authz.authorize(alice, topic('pay', Op.WRITE)), true);
  assert.equal(authz.authorize(alice, topic('pa', Op.WRITE)), false);
  assert.equal(authz.authorize(alice, topic('anything', Op.DELETE)), true);
  // A PREFIXED `*` is only the names that start with a star.
  const star = authorizer([acl({ resourceName: '*', patternType: PatternType.PREFIXED })]);
  assert.equal(star.authorize(alice, topic('orders', Op.READ)), false);
  assert.equal(star.authorize(alice, topic('*x', Op.READ)), true);
});

test('DENY wins over ALLOW, whichever pattern carries it', () => {
  const authz = authorizer([
    acl({ resourceName: '*', operation: Op.ALL }),
    acl({ resourceName: 'secret-', patternType: PatternType.PREFIXED, permissionType: Perm.DENY }),
  ]);
  assert.equal(authz.authorize(alice, topic('orders', Op.READ)), true);
  assert.equal(authz.authorize(alice, topic('secret-plans', Op.READ)), false);
  assert.equal(authz.authorize(alice, topic('secret-plans', Op.WRITE)), true);
});

test('ALLOW implies DESCRIBE from READ, WRITE, DELETE, ALTER and DESCRIBE_CONFIGS from ALTER_CONFIGS; DENY implies nothing', () => {
  for (const operation of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
    assert.equal(authorizer([acl({ operation })]).authorize(alice, topic('orders', Op.DESCRIBE)), true, `DESCRIBE from ${operation}`);
  }
  assert.equal(authorizer([acl({ operation: Op.CREATE })]).authorize(alice, topic('orders', Op.DESCRIBE)), false);
  assert.equal(authorizer([acl({ operation: Op.ALTER_CONFIGS })]).authorize(alice, topic('orders', Op.DESCRIBE_CONFIGS)), true);
  assert.equal(authorizer([acl({ operation: Op.DESCRIBE })]).authorize(alice, topic('orders', Op.READ)), false);
  const denyRead = authorizer([acl({ operation: Op.ALL }), acl({ permissionType: Perm.DENY })]);
  assert.equal(denyRead.authorize(alice, topic('orders', Op.DESCRIBE)), true);
  assert.equal(denyRead.authorize(alice, topic('orders', Op.READ)), false);
});

test('principals: the session\'s or User:*; hosts: the client\'s address (IPv4-mapped read as IPv4) or *', () => {
  const authz = authorizer([acl({ principal: 'User:*', host: '10.0.0.2' })]);
  assert.equal(authz.authorize(bob, topic('orders', Op.READ)), true);
  assert.equal(authz.authorize(alice, topic('orders', Op.READ)), false);
  assert.equal(authorizer([acl({})]).authorize(bob, topic('orders', Op.READ)), false);
});

test('resource types are kept apart', () => {
  const authz = authorizer([acl({ resourceType: ResourceType.GROUP, resourceName: '*' })]);
  assert.equal(authz.authorize(alice, { operation: Op.READ, resourceType: ResourceType.GROUP, resourceName: 'g' }), true);
  assert.equal(authz.authorize(alice, topic('g', Op.READ)), false);
});

test('authorized operations of a resource: the bits of the supported operations allowed', () => {
  const authz = authorizer([acl({ operation: Op.READ })]);
  assert.equal(authz.authorizedOperations(alice, ResourceType.TOPIC, 'orders'), operationsBitField([Op.READ, Op.DESCRIBE]));
});

test('authorizeByResourceType: an ALLOW somewhere that no DENY dominates (KIP-679)', () => {
  const byType = (acls: StandardAcl[]) => authorizer(acls).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC);
  assert.equal(byType([]), false);
  assert.equal(byType([acl({ operation: Op.WRITE })]), true);
  assert.equal(byType([acl({ operation: Op.WRITE }), acl({ operation: Op.WRITE, permissionType: Perm.DENY })]), false);
  assert.equal(byType([acl({ operation: Op.WRITE }), acl({ resourceName: 'ord', patternType: PatternType.PREFIXED, operation: Op.WRITE, permissionType: Perm.DENY })]), false);
  assert.equal(byType([acl({ operation: Op.WRITE }), acl({ resourceName: 'x', operation: Op.WRITE, permissionType: Perm.DENY })]), true);
  assert.equal(byType([acl({ resourceName: 'ord', patternType: PatternType.PREFIXED, operation: Op.WRITE })]), true);
  assert.equal(byType([acl({ resourceName: '*', operation: Op.ALL })]), true);
  assert.equal(byType([acl({ operation: Op.WRITE }), acl({ resourceName: '*', operation: Op.WRITE, permissionType: Perm.DENY })]), false);
});

test('filters: ANY, MATCH and exact pattern types select as Kafka\'s AclBindingFilter', () => {
  const prefixed = acl({ resourceName: 'ord', patternType: PatternType.PREFIXED });
  const wildcard = acl({ resourceName: '*' });
  const literal = acl({});
  const filter = (patternType: number, resourceName: string | null): AclBindingFilter => ({ resourceType: ResourceType.TOPIC, resourceName, patternType, principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY });
  const select = (f: AclBindingFilter) => [literal, prefixed, wildcard].filter((a) => filterMatches(f, a));
  assert.deepEqual(select(filter(PatternType.MATCH, 'orders')), [literal, prefixed, wildcard]);
  assert.deepEqual(select(filter(PatternType.ANY, 'orders')), [literal]);
  assert.deepEqual(select(filter(PatternType.PREFIXED, 'ord')), [prefixed]);
  assert.deepEqual(select(filter(PatternType.ANY, null)), [literal, prefixed, wildcard]);
  assert.deepEqual(select({ ...filter(PatternType.ANY, null), operation: Op.WRITE }), []);
});

test('authorizer.class.name: empty means none; StandardAuthorizer with super.users; any other class refuses to start', () => {
  const empty = new Map();
  assert.equal(StandardAuthorizer.fromConfig(BrokerConfig.fromObject({}), () => empty), null);
  const standard = StandardAuthorizer.fromConfig(
    BrokerConfig.fromObject({ 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:admin;User:broker', 'allow.everyone.if.no.acl.found': 'true' }),
    () => empty,
  );
  assert.deepEqual([...standard!.options.superUsers], ['User:admin', 'User:broker']);
  assert.equal(standard!.options.allowEveryoneIfNoAclFound, true);
  assert.throws(() => StandardAuthorizer.fromConfig(BrokerConfig.fromObject({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' }), () => empty), ConfigError);
});
