/**
 * Kafka's ACL vocabulary (org.apache.kafka.common.acl and .resource): the
 * codes resource types, pattern types, operations and permission types
 * travel as, a stored ACL (Kafka's StandardAcl: one AccessControlEntryRecord
 * of the metadata log), and the filters DescribeAcls and DeleteAcls match
 * ACLs with (Kafka's AclBindingFilter.matches).
 */

export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceType = (typeof ResourceType)[keyof typeof ResourceType];

export const PatternType = {
  UNKNOWN: 0,
  ANY: 1,
  MATCH: 2,
  LITERAL: 3,
  PREFIXED: 4,
} as const;

export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const;
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation];

export const AclPermissionType = {
  UNKNOWN: 0,
  ANY: 1,
  DENY: 2,
  ALLOW: 3,
} as const;

/** The one name a CLUSTER resource has. */
export const CLUSTER_NAME = 'kafka-cluster';
/** A LITERAL resource name matching every resource of its type. */
export const WILDCARD_RESOURCE = '*';
/** The host that matches every client address, and the principal matching every principal. */
export const WILDCARD_HOST = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

const { READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS, TWO_PHASE_COMMIT } = AclOperation;

/** The operations each resource type has (Kafka's AclEntry.supportedOperations), which authorized-operations fields range over. */
export const SUPPORTED_OPERATIONS: Readonly<Record<number, readonly AclOperation[]>> = {
  [ResourceType.TOPIC]: [READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS],
  [ResourceType.GROUP]: [READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS],
  [ResourceType.CLUSTER]: [CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE],
  [ResourceType.TRANSACTIONAL_ID]: [DESCRIBE, WRITE, TWO_PHASE_COMMIT],
  [ResourceType.DELEGATION_TOKEN]: [DESCRIBE],
  [ResourceType.USER]: [CREATE_TOKENS, DESCRIBE_TOKENS],
};

/** An ACL as the metadata log stores it (AccessControlEntryRecord without its id). */
export interface StandardAcl {
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

/** What DescribeAcls and DeleteAcls select by; null names, principals and hosts match anything. */
export interface AclBindingFilter {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
  principal: string | null;
  host: string | null;
  operation: number;
  permissionType: number;
}

/** Kafka's ResourcePatternFilter.matches. MATCH selects every pattern that would apply to the named resource. */
function patternMatches(filter: AclBindingFilter, acl: StandardAcl): boolean {
  if (filter.resourceType !== ResourceType.ANY && filter.resourceType !== acl.resourceType) return false;
  const anyPattern = filter.patternType === PatternType.ANY || filter.patternType === PatternType.MATCH;
  if (!anyPattern && filter.patternType !== acl.patternType) return false;
  if (filter.resourceName === null) return true;
  if (filter.patternType === PatternType.ANY || filter.patternType === acl.patternType) return filter.resourceName === acl.resourceName;
  if (acl.patternType === PatternType.LITERAL) return filter.resourceName === acl.resourceName || acl.resourceName === WILDCARD_RESOURCE;
  return filter.resourceName.startsWith(acl.resourceName);
}

/** Kafka's AccessControlEntryFilter.matches. */
function entryMatches(filter: AclBindingFilter, acl: StandardAcl): boolean {
  if (filter.principal !== null && filter.principal !== acl.principal) return false;
  if (filter.host !== null && filter.host !== acl.host) return false;
  if (filter.operation !== AclOperation.ANY && filter.operation !== acl.operation) return false;
  return filter.permissionType === AclPermissionType.ANY || filter.permissionType === acl.permissionType;
}

export function filterMatches(filter: AclBindingFilter, acl: StandardAcl): boolean {
  return patternMatches(filter, acl) && entryMatches(filter, acl);
}

/** A filter with an UNKNOWN element (a code Kafka does not know reads as UNKNOWN), which Kafka refuses to parse. */
export function hasUnknownElement(acl: { resourceType: number; patternType: number; operation: number; permissionType: number }): boolean {
  return !isKnown(ResourceType, acl.resourceType) || !isKnown(PatternType, acl.patternType) || !isKnown(AclOperation, acl.operation) || !isKnown(AclPermissionType, acl.permissionType);
}

function isKnown(codes: Record<string, number>, code: number): boolean {
  return code !== 0 && Object.values(codes).includes(code);
}

/**
 * Why the controller refuses to store an ACL (Kafka's AclControlManager
 * validateNewAcl and AclApis' checks), or null. Every refusal is
 * INVALID_REQUEST with Kafka's message.
 */
export function invalidNewAcl(acl: StandardAcl): string | null {
  if (acl.resourceType === ResourceType.CLUSTER && acl.resourceName !== CLUSTER_NAME) return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`;
  if (acl.resourceName === '') return 'Invalid empty resource name';
  if (acl.resourceType === ResourceType.ANY) return 'Invalid resourceType ANY';
  if (acl.patternType !== PatternType.LITERAL && acl.patternType !== PatternType.PREFIXED) return `Invalid patternType ${nameOf(PatternType, acl.patternType)}`;
  if (acl.operation === AclOperation.ANY) return 'Invalid operation ANY';
  if (acl.permissionType !== AclPermissionType.ALLOW && acl.permissionType !== AclPermissionType.DENY) return `Invalid permissionType ${nameOf(AclPermissionType, acl.permissionType)}`;
  return null;
}

export function nameOf(codes: Record<string, number>, code: number): string {
  return Object.entries(codes).find(([, value]) => value === code)?.[0] ?? 'UNKNOWN';
}

/** Two ACLs that say the same thing (the controller stores one copy, as Kafka's existingAcls set). */
export function aclKey(acl: StandardAcl): string {
  return JSON.stringify([acl.resourceType, acl.resourceName, acl.patternType, acl.principal, acl.host, acl.operation, acl.permissionType]);
}

/** A bit per operation (Kafka's Utils.to32BitField), the form of authorized-operations fields. */
export function operationsBitField(operations: Iterable<number>): number {
  let bits = 0;
  for (const operation of operations) bits |= 1 << operation;
  return bits;
}
