/**
 * DescribeClientQuotas (key 48), versions 0-1 (KIP-546; v1 flexible).
 *
 * The filter is validated as Kafka's ClientQuotasImage.describe validates
 * it (INVALID_REQUEST for an empty or repeated entity type, a match string
 * that contradicts its match type, an unknown match type, or an IP
 * component beside user or client-id; UNSUPPORTED_VERSION for an unknown
 * entity type). A valid filter is answered from this broker's metadata
 * image (the ClientQuotaRecords AlterClientQuotas wrote) with Kafka's
 * matching: every entity that has each component (by name, the default
 * entity, or any name), only those with no other component when strict;
 * values in the order Kafka's image map holds them.
 */
import { DescribeClientQuotas } from '../../protocol/schemas/48-describe-client-quotas.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, authorizeCluster, type Authorizing } from '../authorization.js';
import { defineHandler } from '../handler.js';
import { componentsOf, javaHashMapOrder, matchClientQuotas, QUOTA_MAP_CAPACITY, type ClientQuotaFilter } from '../../metadata/client-quotas.js';
import type { MetadataView } from '../api-context.js';

const ENTITY_TYPES = new Set(['user', 'client-id', 'ip']);
const MATCH_EXACT = 0;
const MATCH_DEFAULT = 1;
const MATCH_SPECIFIED = 2;

type Component = { entityType: string; matchType: number; match: string | null };
type Problem = { errorCode: number; message: string };

const invalid = (message: string): Problem => ({ errorCode: ErrorCode.INVALID_REQUEST, message });

function componentProblem(component: Component, seen: ReadonlySet<string>): Problem | null {
  const { entityType, matchType, match } = component;
  if (entityType === '') return invalid('Invalid empty entity type.');
  if (seen.has(entityType)) return invalid(`Entity type ${entityType} cannot appear more than once in the filter.`);
  if (!ENTITY_TYPES.has(entityType)) return { errorCode: ErrorCode.UNSUPPORTED_VERSION, message: `Unsupported entity type ${entityType}` };
  if (matchType === MATCH_EXACT && match === null) return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.');
  if (matchType === MATCH_DEFAULT && match !== null) return invalid('Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
  if (matchType === MATCH_SPECIFIED && match !== null) return invalid('Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
  if (matchType !== MATCH_EXACT && matchType !== MATCH_DEFAULT && matchType !== MATCH_SPECIFIED) return invalid(`Unknown match type ${matchType}`);
  return null;
}

function filterProblem(components: readonly Component[]): Problem | null {
  const seen = new Set<string>();
  for (const component of components) {
    const problem = componentProblem(component, seen);
    if (problem !== null) return problem;
    seen.add(component.entityType);
  }
  if (seen.has('ip') && (seen.has('user') || seen.has('client-id'))) {
    return invalid('Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
  }
  return null;
}

function filterOf(components: readonly Component[], strict: boolean): ClientQuotaFilter {
  const exact = new Map<string, string | null>();
  const ofType = new Set<string>();
  for (const { entityType, matchType, match } of components) {
    if (matchType === MATCH_SPECIFIED) ofType.add(entityType);
    else exact.set(entityType, matchType === MATCH_DEFAULT ? null : match);
  }
  return { exact, ofType, strict };
}

export function describeClientQuotasHandler(broker: Authorizing & { readonly metadata: MetadataView }) {
  return defineHandler({
    api: DescribeClientQuotas,
    handle(request, context) {
      // DESCRIBE_CONFIGS on the cluster, as Kafka's.
      if (!authorizeCluster(broker, context, AclOperation.DESCRIBE_CONFIGS)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, entries: null };
      const problem = filterProblem(request.components);
      if (problem !== null) return { throttleTimeMs: 0, errorCode: problem.errorCode, errorMessage: problem.message, entries: null };
      const matched = matchClientQuotas(broker.metadata.image.clientQuotas, filterOf(request.components, request.strict));
      const entries = matched.map(({ entity, quotas }) => ({
        entity: componentsOf(entity),
        values: javaHashMapOrder([...quotas.keys()], QUOTA_MAP_CAPACITY).map((key) => ({ key, value: quotas.get(key)! })),
      }));
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, entries: null }),
  });
}
