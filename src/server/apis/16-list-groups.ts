/**
 * ListGroups (key 16), versions 0-5: every group this broker coordinates.
 *
 * v1 throttleTimeMs; v2 same; v3 flexible; v4 StatesFilter (KIP-518) and
 * each group's state; v5 TypesFilter ("classic", "consumer", "share") and
 * each group's type (KIP-848; share groups of KIP-932 have protocol type
 * "share"). Filters are case-insensitive; an empty filter
 * matches everything. A coordinator partition still loading fails the
 * answer with COORDINATOR_LOAD_IN_PROGRESS, as in Kafka. Groups are listed with DESCRIBE on the
 * cluster or on each group.
 */
import { ListGroups } from '../../protocol/schemas/16-list-groups.js';
import { defineHandler } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizeCluster } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

export function listGroupsHandler(broker: ApiContext) {
  return defineHandler({
    api: ListGroups,
    handle(request, context) {
      const states = context.apiVersion >= 4 ? request.statesFilter : [];
      const types = context.apiVersion >= 5 ? request.typesFilter : [];
      const result = broker.groupCoordinator.listGroups(states, types);
      // Every group with DESCRIBE on the cluster, else those with DESCRIBE on the group, as Kafka's.
      const groups = authorizeCluster(broker, context, AclOperation.DESCRIBE)
        ? result.groups
        : result.groups.filter((group) => authorize(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, group.groupId));
      return { throttleTimeMs: 0, errorCode: result.errorCode, groups };
    },
    errorResponse: (_request, errorCode) => ({ errorCode, groups: [] }),
  });
}
