/**
 * DescribeConfigs (key 32), versions 1-4 (Kafka 4 dropped v0).
 *
 * v1 config sources and synonyms (KIP-226), synonyms only when asked for;
 * v2 same as v1; v3 config type and documentation (KIP-569; documentation
 * is null, as Spool carries no doc strings); v4 flexible.
 *
 * TOPIC: every topic config with its effective value (topic override, then
 * dynamic broker configs, server.properties, Kafka's default) and where it
 * came from. BROKER: this broker's configs (resource name = its node id),
 * or, for the empty name, the dynamic cluster-wide defaults only; another
 * broker's id is INVALID_REQUEST, as on a Kafka broker. Requested names
 * that do not exist are left out; an empty or null list means all.
 *
 * GROUP (KIP-848, KIP-932): every group config with its effective value
 * and source: GROUP_CONFIG where the group overrides it, else the broker
 * config it stands for (synonyms group.consumer.session.timeout.ms, ...),
 * else DEFAULT_CONFIG (src/metadata/group-config.ts). The group need not
 * exist; an empty name is INVALID_REQUEST.
 *
 * Not done: BROKER_LOGGER (log4j levels), CLIENT_METRICS: INVALID_REQUEST. Authorization: DESCRIBE_CONFIGS on the cluster (brokers), topic
 * or group (configResourceDenial).
 */
import { DescribeConfigs } from '../../protocol/schemas/32-describe-configs.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ConfigResourceType } from '../../metadata/delta.js';
import { brokerLayers, describeBrokerConfigs, describeTopicConfigs, type DescribedConfig } from '../../metadata/config-schema.js';
import { describeGroupConfigs } from '../../metadata/group-config.js';
import { topicNameError } from '../../controller/topic-names.js';
import { defineHandler } from '../handler.js';
import type { ControllerApiContext } from '../api-context.js';
import { configResourceDenial } from './33-alter-configs.js';
import { AclOperation } from '../authorization.js';

interface Resource {
  resourceType: number;
  resourceName: string;
  configurationKeys: string[] | null;
}

type Outcome = { errorCode: number; errorMessage: string | null; configs: DescribedConfig[] };

export function describeConfigsHandler(broker: ControllerApiContext) {
  return defineHandler({
    api: DescribeConfigs,
    async handle(request, context) {
      await broker.metadata.whenReady();
      const results = request.resources.map((resource) => {
        const denied = configResourceDenial(broker, context, resource, AclOperation.DESCRIBE_CONFIGS);
        const outcome = denied !== null ? { errorCode: denied, errorMessage: null, configs: [] } : describe(broker, resource, request.includeSynonyms);
        return { ...outcome, resourceType: resource.resourceType, resourceName: resource.resourceName };
      });
      return { throttleTimeMs: 0, results };
    },
    errorResponse: (request, errorCode) => ({
      throttleTimeMs: 0,
      results: request.resources.map((r) => ({ errorCode, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] })),
    }),
  });
}

function describe(broker: ControllerApiContext, resource: Resource, includeSynonyms: boolean): Outcome {
  const image = broker.metadata.image;
  const options = { keys: resource.configurationKeys, includeSynonyms };
  const failed = (errorCode: number, errorMessage: string): Outcome => ({ errorCode, errorMessage, configs: [] });
  switch (resource.resourceType) {
    case ConfigResourceType.TOPIC: {
      const nameError = topicNameError(resource.resourceName);
      if (nameError !== null) return failed(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
      const topic = image.topicsByName.get(resource.resourceName);
      if (topic === undefined) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${resource.resourceName}' does not exist.`);
      const configs = describeTopicConfigs(topic, brokerLayers(broker.config, image, broker.nodeId), options);
      return { errorCode: ErrorCode.NONE, errorMessage: null, configs };
    }
    case ConfigResourceType.BROKER: {
      const clusterDefault = resource.resourceName === '';
      if (!clusterDefault && resource.resourceName !== String(broker.nodeId)) {
        return failed(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${broker.nodeId} or empty string, but received ${resource.resourceName}`);
      }
      const configs = describeBrokerConfigs(brokerLayers(broker.config, image, broker.nodeId), { ...options, clusterDefault });
      return { errorCode: ErrorCode.NONE, errorMessage: null, configs };
    }
    case ConfigResourceType.GROUP: {
      if (resource.resourceName === '') return failed(ErrorCode.INVALID_REQUEST, 'Group name must not be empty');
      const configs = describeGroupConfigs(image.groupConfigs.get(resource.resourceName) ?? new Map(), broker.config, options);
      return { errorCode: ErrorCode.NONE, errorMessage: null, configs };
    }
    default:
      return failed(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${resource.resourceType}`);
  }
}
