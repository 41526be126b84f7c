/**
 * AlterConfigs (key 33), versions 0-2 (KIP-133; superseded by
 * IncrementalAlterConfigs).
 *
 * v1 same as v0; v2 flexible.
 *
 * The given entries replace the resource's whole set of dynamic configs:
 * a TOPIC's overrides, or a BROKER's dynamic configs (resource name = a
 * broker id, or '' for the cluster-wide default). The complete new set is
 * validated with Kafka's messages (INVALID_CONFIG; unknown topic config
 * names included; broker configs that are not dynamic refused) before any
 * ConfigRecord is written. validateOnly writes nothing. The answer comes
 * once the records are committed and published (logs reconfigured).
 *
 * Not done: AlterConfigPolicy, BROKER_LOGGER, ACLs.
 */
import { AlterConfigs } from '../../protocol/schemas/33-alter-configs.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';

export function alterConfigsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: AlterConfigs,
    async handle(request) {
      try {
        const responses = await broker.controller.alterConfigs(request.resources, { validateOnly: request.validateOnly });
        return { throttleTimeMs: 0, responses };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return configResourcesError(request.resources, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => configResourcesError(request.resources, errorCode),
  });
}

/** One error per config resource: the shape of both AlterConfigs and IncrementalAlterConfigs responses. */
export function configResourcesError(resources: readonly { resourceType: number; resourceName: string }[], errorCode: number) {
  return { throttleTimeMs: 0, responses: resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName })) };
}
