/**
 * CreateAcls (key 30), versions 1-3, on both roles' listeners: the
 * controller validates each ACL and writes AccessControlEntryRecords
 * (src/controller/acl-control.ts); the answer comes once they are in this
 * node's image, so the next request is decided with them.
 *
 * As Kafka: ALTER on the cluster is required (CLUSTER_AUTHORIZATION_FAILED
 * for every creation); SECURITY_DISABLED when no authorizer is configured;
 * a creation with an UNKNOWN element cannot be parsed, and the connection is
 * closed; NOT_CONTROLLER where this node has no active controller.
 */
import { CreateAcls } from '../../protocol/schemas/30-create-acls.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { hasUnknownElement, type StandardAcl } from '../../security/authorizer/acl.js';
import { CloseConnection, defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';
import { AclOperation, authorizeCluster } from '../authorization.js';

type Request = { creations: readonly unknown[] };

const everyCreation = (request: Request, errorCode: number, errorMessage: string | null = null) => ({
  throttleTimeMs: 0,
  results: request.creations.map(() => ({ errorCode, errorMessage })),
});

export function createAclsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: CreateAcls,
    async handle(request, context) {
      const acls: StandardAcl[] = request.creations.map((c) => ({
        resourceType: c.resourceType,
        resourceName: c.resourceName,
        patternType: c.resourcePatternType,
        principal: c.principal,
        host: c.host,
        operation: c.operation,
        permissionType: c.permissionType,
      }));
      if (acls.some(hasUnknownElement)) return new CloseConnection('CreateAcls creation with UNKNOWN elements');
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return everyCreation(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      if ((node.authorizer ?? null) === null) return everyCreation(request, ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.');
      try {
        return { throttleTimeMs: 0, results: await node.controller.createAcls(acls) };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return everyCreation(request, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => everyCreation(request, errorCode),
  });
}
