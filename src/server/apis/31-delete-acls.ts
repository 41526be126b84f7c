/**
 * DeleteAcls (key 31), versions 1-3, on both roles' listeners: the
 * controller removes every ACL each filter matches
 * (RemoveAccessControlEntryRecord, src/controller/acl-control.ts) and
 * reports them per filter.
 *
 * As Kafka: ALTER on the cluster is required (CLUSTER_AUTHORIZATION_FAILED
 * for every filter); SECURITY_DISABLED when no authorizer is configured;
 * a filter with an UNKNOWN element cannot be parsed, and the connection is
 * closed; NOT_CONTROLLER where this node has no active controller.
 */
import { DeleteAcls } from '../../protocol/schemas/31-delete-acls.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { hasUnknownElement, type AclBindingFilter } from '../../security/authorizer/acl.js';
import { CloseConnection, defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

type Request = { filters: readonly unknown[] };

const everyFilter = (request: Request, errorCode: number, errorMessage: string | null = null) => ({
  throttleTimeMs: 0,
  filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })),
});

export function deleteAclsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: DeleteAcls,
    async handle(request, context) {
      const filters: AclBindingFilter[] = request.filters.map((f) => ({
        resourceType: f.resourceTypeFilter,
        resourceName: f.resourceNameFilter,
        patternType: f.patternTypeFilter,
        principal: f.principalFilter,
        host: f.hostFilter,
        operation: f.operation,
        permissionType: f.permissionType,
      }));
      if (filters.some(hasUnknownElement)) return new CloseConnection('DeleteAcls filter with UNKNOWN elements');
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return everyFilter(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      if ((node.authorizer ?? null) === null) return everyFilter(request, ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.');
      try {
        const results = await node.controller.deleteAcls(filters);
        return {
          throttleTimeMs: 0,
          filterResults: results.map((result) => ({
            errorCode: result.errorCode,
            errorMessage: result.errorMessage,
            matchingAcls: result.matchingAcls.map((acl) => ({ errorCode: ErrorCode.NONE, errorMessage: null, ...acl })),
          })),
        };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return everyFilter(request, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => everyFilter(request, errorCode),
  });
}
