/**
 * DescribeAcls (key 29), versions 1-3 (v1 the pattern type filter, KIP-290;
 * v2 flexible; v3 the USER resource type), on both roles' listeners: the
 * ACLs of this node's metadata image matching the filter
 * (AclBindingFilter.matches; pattern type MATCH selects every ACL that
 * applies to the named resource), grouped by resource pattern.
 *
 * As Kafka: DESCRIBE on the cluster is required (CLUSTER_AUTHORIZATION_FAILED);
 * SECURITY_DISABLED when no authorizer is configured; a filter with an
 * UNKNOWN element cannot be parsed, and the connection is closed.
 */
import { DescribeAcls } from '../../protocol/schemas/29-describe-acls.js';
import { ErrorCode } from '../../protocol/errors.js';
import { filterMatches, hasUnknownElement, type AclBindingFilter, type StandardAcl } from '../../security/authorizer/acl.js';
import { CloseConnection, defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

const errorResponse = (errorCode: number, errorMessage: string | null) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });

export function describeAclsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: DescribeAcls,
    handle(request, context) {
      const filter: AclBindingFilter = {
        resourceType: request.resourceTypeFilter,
        resourceName: request.resourceNameFilter,
        patternType: request.patternTypeFilter,
        principal: request.principalFilter,
        host: request.hostFilter,
        operation: request.operation,
        permissionType: request.permissionType,
      };
      if (hasUnknownElement(filter)) return new CloseConnection('DescribeAcls filter with UNKNOWN elements');
      if (!authorizeCluster(node, context, AclOperation.DESCRIBE)) return errorResponse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
      if ((node.authorizer ?? null) === null) return errorResponse(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured on the broker');
      const matching = [...node.metadata.image.acls.values()].filter((acl) => filterMatches(filter, acl));
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, resources: byResource(matching) };
    },
    errorResponse: (_request, errorCode) => errorResponse(errorCode, null),
  });
}

/** Kafka's DescribeAclsResponse.aclsResources: one entry per resource pattern. */
function byResource(acls: readonly StandardAcl[]) {
  const resources = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: { principal: string; host: string; operation: number; permissionType: number }[] }>();
  for (const acl of acls) {
    const key = JSON.stringify([acl.resourceType, acl.resourceName, acl.patternType]);
    let resource = resources.get(key);
    if (resource === undefined) {
      resource = { resourceType: acl.resourceType, resourceName: acl.resourceName, patternType: acl.patternType, acls: [] };
      resources.set(key, resource);
    }
    resource.acls.push({ principal: acl.principal, host: acl.host, operation: acl.operation, permissionType: acl.permissionType });
  }
  return [...resources.values()];
}
