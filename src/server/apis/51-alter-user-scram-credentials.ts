/**
 * AlterUserScramCredentials (key 51), version 0 (KIP-554), on both roles'
 * listeners: the controller validates and writes UserScramCredentialRecord
 * and RemoveUserScramCredentialRecord (src/controller/scram-control.ts);
 * the answer comes once they are in this node's image, so the new
 * credential authenticates at once. NOT_CONTROLLER for every user where this
 * node has no active controller.
 *
 * Not done: the ALTER CLUSTER authorization check (no ACLs yet).
 */
import { AlterUserScramCredentials } from '../../protocol/schemas/51-alter-user-scram-credentials.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

type Request = { deletions: readonly { name: string }[]; upsertions: readonly { name: string }[] };

function everyUser(request: Request, errorCode: number) {
  const users = [...new Set([...request.deletions, ...request.upsertions].map((entry) => entry.name))];
  return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode, errorMessage: null })) };
}

export function alterUserScramCredentialsHandler(node: ControllerApiContext) {
  return defineHandler({
    api: AlterUserScramCredentials,
    async handle(request) {
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
