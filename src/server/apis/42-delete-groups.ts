/**
 * DeleteGroups (key 42), versions 0-3 (KIP-229): deletes empty groups and
 * their committed offsets.
 *
 * v1 same as v0; v2 flexible; v3 an error message per group. A group with
 * members is NON_EMPTY_GROUP, a missing one GROUP_ID_NOT_FOUND. Classic and
 * KIP-848 consumer groups alike; an empty share group (KIP-932) first has
 * its share-partition state deleted in the share coordinator, and a failure
 * there is the group's error. DELETE on each group is required (GROUP_AUTHORIZATION_FAILED).
 */
import { DeleteGroups } from '../../protocol/schemas/42-delete-groups.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorizedNames } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function deleteGroupsHandler(broker: ApiContext) {
  return defineHandler({
    api: DeleteGroups,
    async handle(request, context) {
      // DELETE on each group (GROUP_AUTHORIZATION_FAILED), as Kafka's.
      const allowed = authorizedNames(broker, context, AclOperation.DELETE, ResourceType.GROUP, request.groupsNames);
      const denied = request.groupsNames.filter((groupId) => !allowed.has(groupId)).map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }));
      const results = allowed.size === 0 ? [] : await broker.groupCoordinator.deleteGroups([...allowed]);
      return { throttleTimeMs: 0, results: [...denied, ...results] };
    },
    errorResponse: (request, errorCode) => ({ results: request.groupsNames.map((groupId) => ({ groupId, errorCode })) }),
  });
}
