/**
 * What API handlers ask of the authorizer (Kafka's AuthHelper): one
 * resource, a list filtered to the authorized ones, the authorized-operations
 * bit fields (KIP-430), and authorizeByResourceType (KIP-679). Without an
 * authorizer (authorizer.class.name empty) everything is allowed and the bit
 * fields hold every supported operation, as in Kafka.
 */
import { AclOperation, CLUSTER_NAME, ResourceType, SUPPORTED_OPERATIONS, operationsBitField } from '../security/authorizer/acl.js';
import type { StandardAuthorizer } from '../security/authorizer/standard-authorizer.js';
import type { RequestContext } from './handler.js';

export { AclOperation, ResourceType };

/** The part of a handler's context that authorizes: absent or null means no authorizer. */
export interface Authorizing {
  readonly authorizer?: StandardAuthorizer | null;
}

type Session = Pick<RequestContext, 'principal' | 'clientAddress'>;

export function authorize(node: Authorizing, context: Session, operation: number, resourceType: number, resourceName: string): boolean {
  const authorizer = node.authorizer ?? null;
  if (authorizer === null) return true;
  return authorizer.authorize(context, { operation, resourceType, resourceName });
}

export function authorizeCluster(node: Authorizing, context: Session, operation: number): boolean {
  return authorize(node, context, operation, ResourceType.CLUSTER, CLUSTER_NAME);
}

/** The names among `names` the session may do `operation` on (each name decided once). */
export function authorizedNames(node: Authorizing, context: Session, operation: number, resourceType: number, names: Iterable<string>): Set<string> {
  const allowed = new Set<string>();
  const decided = new Set<string>();
  for (const name of names) {
    if (decided.has(name)) continue;
    decided.add(name);
    if (authorize(node, context, operation, resourceType, name)) allowed.add(name);
  }
  return allowed;
}

/** The authorized-operations bit field of one resource: every supported operation without an authorizer. */
export function authorizedOperations(node: Authorizing, context: Session, resourceType: number, resourceName: string): number {
  const authorizer = node.authorizer ?? null;
  if (authorizer === null) return operationsBitField(SUPPORTED_OPERATIONS[resourceType] ?? []);
  return authorizer.authorizedOperations(context, resourceType, resourceName);
}

export function authorizeByResourceType(node: Authorizing, context: Session, operation: number, resourceType: number): boolean {
  const authorizer = node.authorizer ?? null;
  if (authorizer === null) return true;
  return authorizer.authorizeByResourceType(context, operation, resourceType);
}
