/**
 * AlterConfigs (key 33), versions 0-2 (KIP-133; superseded by
 * IncrementalAlterConfigs).
 *
 * v1 same as v0; v2 flexible.
 *
 * The given entries replace the resource's whole set of dynamic configs:
 * a TOPIC's overrides, a BROKER's dynamic configs (resource name = a
 * broker id, or '' for the cluster-wide default), or a GROUP's configs. The complete new set is
 * validated with Kafka's messages (INVALID_CONFIG; unknown topic config
 * names included; broker configs that are not dynamic refused) before any
 * ConfigRecord is written. validateOnly writes nothing. The answer comes
 * once the records are committed and published (logs reconfigured).
 *
 * BROKER resources changing a listener's keystore or truststore are checked
 * by this broker first (Kafka's dynamic keystore update; refused ones are
 * INVALID_REQUEST and not written).
 *
 * Not done: AlterConfigPolicy, BROKER_LOGGER. Authorization: ALTER_CONFIGS on the
 * cluster (brokers), topic or group.
 */
import { AlterConfigs } from '../../protocol/schemas/33-alter-configs.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';
import type { RequestContext } from '../handler.js';
import { ConfigResourceType } from '../../metadata/delta.js';
import { AclOperation, ResourceType, authorize, authorizeCluster, type Authorizing } from '../authorization.js';

export function alterConfigsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: AlterConfigs,
    async handle(request, context) {
      const authorized = authorizeConfigResources(broker, context, request.resources, AclOperation.ALTER_CONFIGS);
      // The given entries are the resource's whole new set of dynamic configs.
      const { allowed, denied } = await refuseBrokerStoreChanges(broker, authorized, (resource) => {
        const dynamic = new Map(resource.configs.filter((c) => c.value !== null).map((c) => [c.name, c.value!]));
        return { dynamic, changed: resource.configs.map((c) => c.name) };
      });
      try {
        const responses = allowed.length === 0 ? [] : await broker.controller.alterConfigs(allowed, { validateOnly: request.validateOnly });
        return { throttleTimeMs: 0, responses: [...responses, ...denied] };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return configResourcesError(request.resources, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => configResourcesError(request.resources, errorCode),
  });
}

/**
 * Kafka's config-resource authorization: broker, broker-logger and
 * client-metrics resources need the operation (DESCRIBE_CONFIGS or
 * ALTER_CONFIGS) on the cluster (CLUSTER_AUTHORIZATION_FAILED), a topic on
 * the topic (TOPIC_AUTHORIZATION_FAILED), a group on the group
 * (GROUP_AUTHORIZATION_FAILED). Other types are left to the handler.
 */
export function configResourceDenial(node: Authorizing, context: RequestContext, resource: { resourceType: number; resourceName: string }, operation: number): number | null {
  switch (resource.resourceType) {
    case ConfigResourceType.BROKER:
    case ConfigResourceType.BROKER_LOGGER:
    case ConfigResourceType.CLIENT_METRICS:
      return authorizeCluster(node, context, operation) ? null : ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    case ConfigResourceType.TOPIC:
      return authorize(node, context, operation, ResourceType.TOPIC, resource.resourceName) ? null : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    case ConfigResourceType.GROUP:
      return authorize(node, context, operation, ResourceType.GROUP, resource.resourceName) ? null : ErrorCode.GROUP_AUTHORIZATION_FAILED;
    default:
      return null;
  }
}

/** The resources the client may alter, and the answers for the others. */
export function authorizeConfigResources<R extends { resourceType: number; resourceName: string }>(node: Authorizing, context: RequestContext, resources: readonly R[], operation: number) {
  const allowed: R[] = [];
  const denied: ReturnType<typeof configResourcesError>['responses'] = [];
  for (const resource of resources) {
    const errorCode = configResourceDenial(node, context, resource, operation);
    if (errorCode === null) allowed.push(resource);
    else denied.push(...configResourcesError([resource], errorCode).responses);
  }
  return { allowed, denied };
}

/**
 * Kafka's broker-side preprocessing of BROKER resources that change a
 * listener's keystore or truststore (src/server/listener-tls-reloader.ts):
 * refused ones are answered here and never reach the controller.
 * `altered` gives a resource's dynamic configs once altered, and the names
 * it changes.
 */
export async function refuseBrokerStoreChanges<R extends { resourceType: number; resourceName: string }>(
  broker: ControllerApiContext,
  authorized: { allowed: R[]; denied: ReturnType<typeof configResourcesError>['responses'] },
  altered: (resource: R, current: ReadonlyMap<string, string>) => { dynamic: ReadonlyMap<string, string>; changed: string[] },
) {
  const check = broker.listenerTls;
  if (check === undefined) return authorized;
  const allowed: R[] = [];
  const denied: { errorCode: number; errorMessage: string | null; resourceType: number; resourceName: string }[] = [...authorized.denied];
  for (const resource of authorized.allowed) {
    if (resource.resourceType !== ConfigResourceType.BROKER) {
      allowed.push(resource);
      continue;
    }
    const { dynamic, changed } = altered(resource, broker.metadata.image.brokerConfigs.get(resource.resourceName) ?? new Map());
    const refusal = await check.validate(resource.resourceName, dynamic, changed);
    if (refusal === null) allowed.push(resource);
    else denied.push({ errorCode: refusal.errorCode, errorMessage: refusal.message, resourceType: resource.resourceType, resourceName: resource.resourceName });
  }
  return { allowed, denied };
}

/** One error per config resource: the shape of both AlterConfigs and IncrementalAlterConfigs responses. */
export function configResourcesError(resources: readonly { resourceType: number; resourceName: string }[], errorCode: number) {
  return { throttleTimeMs: 0, responses: resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })) };
}
