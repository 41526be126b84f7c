/**
 * IncrementalAlterConfigs (key 44), versions 0-1 (KIP-339).
 *
 * v1 flexible.
 *
 * Per entry: SET (0), DELETE (1), APPEND (2) and SUBTRACT (3); APPEND and
 * SUBTRACT apply to list configs only (INVALID_CONFIG "Can't APPEND to key
 * ... because its type is not LIST.") and start from Kafka's default when
 * the config is not set. Resources: TOPIC overrides, BROKER dynamic configs
 * (a broker id, or '' for the cluster default), GROUP configs (Kafka's
 * GroupConfig: share.auto.offset.reset, consumer.session.timeout.ms within
 * the broker's min/max, ...; src/metadata/group-config.ts). The resulting set is
 * validated as a whole before ConfigRecords are written; validateOnly
 * writes nothing; the answer comes once they are committed and published.
 *
 * BROKER resources changing a listener's keystore or truststore are checked
 * by this broker first (Kafka's dynamic keystore update; refused ones are
 * INVALID_REQUEST and not written).
 *
 * Not done: AlterConfigPolicy, BROKER_LOGGER levels, CLIENT_METRICS configs
 * (INVALID_REQUEST). Authorization as AlterConfigs.
 */
import { IncrementalAlterConfigs } from '../../protocol/schemas/44-incremental-alter-configs.js';
import { ErrorCode } from '../../protocol/errors.js';
import { NotControllerError } from '../../controller/quorum-controller.js';
import { AlterConfigOp } from '../../controller/configuration-control.js';
import { defineHandler } from '../handler.js';
import { authorizeConfigResources, configResourcesError, refuseBrokerStoreChanges } from './33-alter-configs.js';
import { AclOperation } from '../authorization.js';
import type { ControllerApiContext } from '../api-context.js';

export function incrementalAlterConfigsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: IncrementalAlterConfigs,
    async handle(request, context) {
      const authorized = authorizeConfigResources(broker, context, request.resources, AclOperation.ALTER_CONFIGS);
      const { allowed, denied } = await refuseBrokerStoreChanges(broker, authorized, (resource, current) => {
        const dynamic = new Map(current);
        // APPEND and SUBTRACT apply to list configs, which a listener's stores are not.
        for (const config of resource.configs) {
          if (config.configOperation === AlterConfigOp.SET && config.value !== null) dynamic.set(config.name, config.value);
          if (config.configOperation === AlterConfigOp.DELETE) dynamic.delete(config.name);
        }
        return { dynamic, changed: resource.configs.map((c) => c.name) };
      });
      try {
        const responses = allowed.length === 0 ? [] : await broker.controller.incrementalAlterConfigs(allowed, { validateOnly: request.validateOnly });
        return { throttleTimeMs: 0, responses: [...responses, ...denied] };
      } catch (error) {
        if (!(error instanceof NotControllerError)) throw error;
        return configResourcesError(request.resources, ErrorCode.NOT_CONTROLLER);
      }
    },
    errorResponse: (request, errorCode) => configResourcesError(request.resources, errorCode),
  });
}
