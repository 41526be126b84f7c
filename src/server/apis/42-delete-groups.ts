/**
 * DeleteGroups (key 42), versions 0-3 (KIP-229): deletes empty groups and
 * their committed offsets.
 *
 * v1 same as v0; v2 flexible; v3 an error message per group. A group with
 * members is NON_EMPTY_GROUP, a missing one GROUP_ID_NOT_FOUND. Classic and
 * KIP-848 consumer groups alike. Not done: ACLs.
 */
import { DeleteGroups } from '../../protocol/schemas/42-delete-groups.js';
import { defineHandler } from '../handler.js';
import type { ApiContext } from '../api-context.js';

export function deleteGroupsHandler(broker: ApiContext) {
  return defineHandler({
    api: DeleteGroups,
    async handle(request) {
      const results = await broker.groupCoordinator.deleteGroups(request.groupsNames);
      return { throttleTimeMs: 0, results };
    },
    errorResponse: (request, errorCode) => ({ results: request.groupsNames.map((groupId) => ({ groupId, errorCode })) }),
  });
}
