/**
 * AlterUserScramCredentials (key 51), version 0 (KIP-554), on both roles'
 * listeners: the controller validates and writes UserScramCredentialRecord
 * and RemoveUserScramCredentialRecord (src/controller/scram-control.ts);
 * the answer comes once they are in this node's image, so the new
 * credential authenticates at once. NOT_CONTROLLER for every user where this
 * node has no active controller.
 *
 * Authorization: ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for
 * every user), as Kafka's.
 */
import { AlterUserScramCredentials } from '../../protocol/schemas/51-alter-user-scram-credentials.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

type Request = { deletions: readonly { name: string }[]; upsertions: readonly { name: string }[] };

function everyUser(request: Request, errorCode: number) {
  const users = [...new Set([...request.deletions, ...request.upsertions].map((entry) => entry.name))];
  return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode, errorMessage: null })) };
}

export function alterUserScramCredentialsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: AlterUserScramCredentials,
    async handle(request, context) {
      if (!authorizeCluster(node, context, AclOperation.ALTER)) return everyUser(request, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      try {
        return { throttleTimeMs: 0, results: await node.controller.alterUserScramCredentials(request) };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return everyUser(request, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => everyUser(request, errorCode),
  });
}
