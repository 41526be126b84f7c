/**
 * AlterClientQuotas (key 49), versions 0-1 (KIP-546; v1 flexible), on both
 * roles' listeners: a broker forwards it to the active controller
 * (src/node/forwarding.ts), which validates each entity and its quota
 * values as Kafka's ClientQuotaControlManager and writes ClientQuotaRecords
 * (src/controller/client-quota-control.ts); validateOnly writes nothing.
 * The answer comes once the records are in this node's image, so a
 * DescribeClientQuotas that follows sees them. NOT_CONTROLLER for every
 * entity where this node has no active controller.
 *
 * Authorization: ALTER_CONFIGS on the cluster (CLUSTER_AUTHORIZATION_FAILED
 * with its message for every entity), as Kafka's ControllerApis.
 */
import { AlterClientQuotas } from '../../protocol/schemas/49-alter-client-quotas.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

type Request = { entries: readonly { entity: readonly { entityType: string; entityName: string | null }[] }[] };

/** Kafka's AlterClientQuotasRequest.getErrorResponse: every entry, its entity as sent, the error's default message. */
function everyEntity(request: Request, errorCode: number) {
  const errorMessage = errorInfo(errorCode).message;
  return {
    throttleTimeMs: 0,
    entries: request.entries.map((entry) => ({ errorCode, errorMessage, entity: entry.entity.map(({ entityType, entityName }) => ({ entityType, entityName })) })),
  };
}

export function alterClientQuotasHandler(node: ControllerApiContext) {
  return defineHandler({
    api: AlterClientQuotas,
    async handle(request, context) {
      if (!authorizeCluster(node, context, AclOperation.ALTER_CONFIGS)) return everyEntity(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      try {
        return { throttleTimeMs: 0, entries: await node.controller.alterClientQuotas(request.entries, { validateOnly: request.validateOnly }) };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return everyEntity(request, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => everyEntity(request, errorCode),
  });
}
