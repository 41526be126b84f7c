/**
 * Kafka's StandardAuthorizer (authorizer.class.name=
 * org.apache.kafka.metadata.authorizer.StandardAuthorizer): the ACLs are
 * the metadata image's (AccessControlEntryRecords), so every node decides
 * from the same replicated state.
 *
 * One action (principal, client host, operation, resource) is decided as
 * StandardAuthorizerData.authorize does:
 * - a principal in `super.users` is allowed everything;
 * - otherwise the ACLs that apply to the resource are those of its type
 *   whose pattern is LITERAL with the resource's name, LITERAL `*`, or
 *   PREFIXED with a prefix of the name; of these, the ones whose principal
 *   is the session's or `User:*` and whose host is the client's or `*`
 *   take part;
 * - an ACL for operation ALL matches every operation; an ALLOW ACL also
 *   grants the operations it implies (DESCRIBE from READ, WRITE, DELETE or
 *   ALTER; DESCRIBE_CONFIGS from ALTER_CONFIGS); a DENY ACL denies only its
 *   own operation;
 * - a matching DENY wins over any ALLOW; a matching ALLOW allows; when no
 *   ACL at all applies to the resource, `allow.everyone.if.no.acl.found`
 *   decides (default false); otherwise the action is denied.
 */
import { ConfigError, type BrokerConfig } from '../../common/config.js';
import {
  AclOperation,
  AclPermissionType,
  PatternType,
  SUPPORTED_OPERATIONS,
  WILDCARD_HOST,
  WILDCARD_PRINCIPAL,
  WILDCARD_RESOURCE,
  operationsBitField,
  type StandardAcl,
} from './acl.js';

/** Who asks: the connection's authenticated principal and its client address. */
export interface AuthorizationSession {
  principal: string;
  clientAddress: string;
}

export interface Action {
  operation: number;
  resourceType: number;
  resourceName: string;
}

/** Kafka's class name for the authorizer Spool implements (the only value of authorizer.class.name Spool accepts). */
export const STANDARD_AUTHORIZER_CLASS = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

/**
 * The principal of requests a node sends to its own controller in process
 * (no connection, no authentication). Its type is one no authenticator
 * produces, so no client can claim it; Kafka's equivalent is the
 * inter-broker principal listed in super.users.
 */
export const IN_PROCESS_PRINCIPAL = 'Node:in-process';

const IMPLIES_DESCRIBE: ReadonlySet<number> = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]);
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<number> = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);

/** The ACLs a node authorizes with: its metadata image's, indexed by resource type once per image. */
export type AclSource = () => ReadonlyMap<string, StandardAcl>;

export interface StandardAuthorizerOptions {
  superUsers: ReadonlySet<string>;
  allowEveryoneIfNoAclFound: boolean;
}

export class StandardAuthorizer {
  private indexedFrom: ReadonlyMap<string, StandardAcl> | null = null;
  private byResourceType = new Map<number, StandardAcl[]>();

  constructor(
    private readonly acls: AclSource,
    readonly options: StandardAuthorizerOptions,
  ) {}

  /** authorizer.class.name, super.users and allow.everyone.if.no.acl.found; null when no authorizer is configured. */
  static fromConfig(config: BrokerConfig, acls: AclSource): StandardAuthorizer | null {
    const className = config.string('authorizer.class.name') ?? '';
    if (className.trim() === '') return null;
    if (className.trim() !== STANDARD_AUTHORIZER_CLASS) {
      throw new ConfigError(`authorizer.class.name=${className}: Spool implements only ${STANDARD_AUTHORIZER_CLASS}`);
    }
    // super.users is a semicolon-separated list of principals, as Kafka's.
    const superUsers = new Set((config.string('super.users') ?? '').split(';').map((u) => u.trim()).filter((u) => u !== ''));
    return new StandardAuthorizer(acls, { superUsers, allowEveryoneIfNoAclFound: config.bool('allow.everyone.if.no.acl.found') });
  }

  authorize(session: AuthorizationSession, action: Action): boolean {
    if (this.isSuperUser(session)) return true;
    const host = hostAddress(session.clientAddress);
    let applies = false;
    let allowed = false;
    for (const acl of this.aclsOf(action.resourceType)) {
      if (!appliesToResource(acl, action.resourceName)) continue;
      applies = true;
      const result = aclResult(acl, session.principal, host, action.operation);
      if (result === 'deny') return false;
      if (result === 'allow') allowed = true;
    }
    return applies ? allowed : this.options.allowEveryoneIfNoAclFound;
  }

  /** The authorized-operations bit field of one resource (Kafka's AuthHelper.authorizedOperations). */
  authorizedOperations(session: AuthorizationSession, resourceType: number, resourceName: string): number {
    const supported = SUPPORTED_OPERATIONS[resourceType] ?? [];
    return operationsBitField(supported.filter((operation) => this.authorize(session, { operation, resourceType, resourceName })));
  }

  /**
   * Whether the session may do `operation` on at least one resource of the
   * type (Kafka's Authorizer.authorizeByResourceType, KIP-679): an ALLOW
   * that no DENY dominates. InitProducerId uses it for idempotent producers.
   */
  authorizeByResourceType(session: AuthorizationSession, operation: number, resourceType: number): boolean {
    // A made-up name first, so super users and allow.everyone.if.no.acl.found answer as they do for any resource.
    if (this.authorize(session, { operation, resourceType, resourceName: 'hardcode' })) return true;
    const host = hostAddress(session.clientAddress);
    const deny = { literal: new Set<string>(), prefixed: new Set<string>() };
    const allow = { literal: new Set<string>(), prefixed: new Set<string>() };
    for (const acl of this.aclsOf(resourceType)) {
      if (acl.host !== host && acl.host !== WILDCARD_HOST) continue;
      if (acl.principal !== session.principal && acl.principal !== WILDCARD_PRINCIPAL) continue;
      if (acl.operation !== operation && acl.operation !== AclOperation.ALL) continue;
      const patterns = acl.permissionType === AclPermissionType.DENY ? deny : acl.permissionType === AclPermissionType.ALLOW ? allow : null;
      if (patterns === null) continue;
      if (acl.patternType === PatternType.LITERAL && acl.resourceName === WILDCARD_RESOURCE) {
        if (patterns === deny) return false;
        allow.literal.add(WILDCARD_RESOURCE);
      } else if (acl.patternType === PatternType.LITERAL) patterns.literal.add(acl.resourceName);
      else if (acl.patternType === PatternType.PREFIXED) patterns.prefixed.add(acl.resourceName);
    }
    if (allow.literal.has(WILDCARD_RESOURCE)) return true;
    const dominated = (name: string) => [...name].some((_, i) => deny.prefixed.has(name.slice(0, i + 1)));
    for (const name of allow.literal) if (!deny.literal.has(name) && !dominated(name)) return true;
    for (const name of allow.prefixed) if (!dominated(name)) return true;
    return false;
  }

  private isSuperUser(session: AuthorizationSession): boolean {
    return session.principal === IN_PROCESS_PRINCIPAL || this.options.superUsers.has(session.principal);
  }

  private aclsOf(resourceType: number): readonly StandardAcl[] {
    const acls = this.acls();
    if (acls !== this.indexedFrom) {
      this.byResourceType = new Map();
      for (const acl of acls.values()) {
        const list = this.byResourceType.get(acl.resourceType) ?? [];
        list.push(acl);
        this.byResourceType.set(acl.resourceType, list);
      }
      this.indexedFrom = acls;
    }
    return this.byResourceType.get(resourceType) ?? [];
  }
}

/** Kafka compares the client's InetAddress.getHostAddress(): an IPv4-mapped IPv6 address is its IPv4 form. */
function hostAddress(clientAddress: string): string {
  return clientAddress.startsWith('::ffff:') ? clientAddress.slice(7) : clientAddress;
}

function appliesToResource(acl: StandardAcl, resourceName: string): boolean {
  if (acl.patternType === PatternType.PREFIXED) return resourceName.startsWith(acl.resourceName);
  return acl.patternType === PatternType.LITERAL && (acl.resourceName === resourceName || acl.resourceName === WILDCARD_RESOURCE);
}

/** Kafka's StandardAuthorizerData.findResult: null when the ACL does not match the principal, host or operation. */
function aclResult(acl: StandardAcl, principal: string, host: string, operation: number): 'allow' | 'deny' | null {
  if (acl.principal !== principal && acl.principal !== WILDCARD_PRINCIPAL) return null;
  if (acl.host !== WILDCARD_HOST && acl.host !== host) return null;
  if (acl.operation !== AclOperation.ALL) {
    if (acl.permissionType === AclPermissionType.ALLOW) {
      if (operation === AclOperation.DESCRIBE) {
        if (!IMPLIES_DESCRIBE.has(acl.operation)) return null;
      } else if (operation === AclOperation.DESCRIBE_CONFIGS) {
        if (!IMPLIES_DESCRIBE_CONFIGS.has(acl.operation)) return null;
      } else if (operation !== acl.operation) return null;
    } else if (operation !== acl.operation) return null;
  }
  return acl.permissionType === AclPermissionType.ALLOW ? 'allow' : 'deny';
}
