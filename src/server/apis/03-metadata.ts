/**
 * Metadata (key 3), versions 0-13.
 *
 * v0 an empty topic list means all topics, and replicas that are down are
 * left out (REPLICA_NOT_AVAILABLE); v1 null means all topics, rack,
 * controllerId and isInternal; v2 clusterId; v3 throttleTimeMs; v4
 * allowAutoTopicCreation (before v4 auto creation is always requested);
 * v5 offlineReplicas; v6 a leader without the request's listener is
 * LISTENER_NOT_FOUND; v7 leaderEpoch (KIP-320); v8 authorized operations
 * (KIP-430), -2147483648 unless asked for; v9 flexible; v10 topic ids
 * (KIP-516), topics may be asked for by id; v11 drops cluster authorized
 * operations (KIP-700); v12 topic name nullable; v13 top-level errorCode.
 *
 * Brokers are the live (unfenced) ones, with the advertised endpoint of the
 * listener the request came in on; controllerId is a live broker, as KRaft
 * brokers report. Missing topics are created when both the request and
 * auto.create.topics.enable allow it: the creation is committed and
 * published before the answer, so the answer normally carries the new
 * topic. A creation the controller refused (`__cluster_metadata`, a
 * replication factor above the live brokers) is UNKNOWN_TOPIC_OR_PARTITION,
 * which is what Kafka 4.4 answers while and after its CreateTopics goes to
 * the controller; a legal name created but not yet in the image is
 * LEADER_NOT_AVAILABLE (the client retries); an illegal name is
 * INVALID_TOPIC_EXCEPTION.
 *
 * Authorization, as Kafka's: only topics the client may DESCRIBE are
 * listed when all are asked for; one asked for by name without DESCRIBE is
 * TOPIC_AUTHORIZATION_FAILED with a zero id (its existence is not
 * disclosed), by id TOPIC_AUTHORIZATION_FAILED with a null name. A missing
 * topic is auto-created only with CREATE on the cluster or on the topic
 * (TOPIC_AUTHORIZATION_FAILED otherwise). Authorized operations: those the
 * client has on each listed topic, and on the cluster only with DESCRIBE
 * there (0 otherwise).
 */
import { Metadata } from '../../protocol/schemas/03-metadata.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/reader.js';
import type { MetadataImage, TopicImage } from '../../metadata/image.js';
import {
  AUTHORIZED_OPERATIONS_OMITTED,
  aliveBrokerId,
  brokersOnListener,
  partitionView,
} from '../../metadata/cluster-view.js';
import { isInternalTopic, topicNameError } from '../../controller/topic-names.js';
import { defineHandler, type RequestContext } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { CLUSTER_NAME } from '../../security/authorizer/acl.js';
import { AclOperation, ResourceType, authorize, authorizeCluster, authorizedNames, authorizedOperations } from '../authorization.js';

type TopicResult = {
  errorCode: number;
  name: string | null;
  topicId: string;
  isInternal: boolean;
  partitions: ReturnType<typeof partitionsOf>;
  topicAuthorizedOperations: number;
};

export function metadataHandler(broker: ApiContext) {
  return defineHandler({
    api: Metadata,
    async handle(request, context) {
      await broker.metadata.whenReady();
      const version = context.apiVersion;
      const allTopics = request.topics === null || (version === 0 && request.topics.length === 0);
      const withTopicOperations = version >= 8 && request.includeTopicAuthorizedOperations;
      const topicOperations = (name: string) => (withTopicOperations ? authorizedOperations(broker, context, ResourceType.TOPIC, name) : AUTHORIZED_OPERATIONS_OMITTED);
      const describe = (topic: TopicImage, image: MetadataImage): TopicResult => ({
        errorCode: ErrorCode.NONE,
        name: topic.name,
        topicId: topic.id,
        isInternal: isInternalTopic(topic.name),
        partitions: partitionsOf(topic, image, context),
        topicAuthorizedOperations: topicOperations(topic.name),
      });
      let topics: TopicResult[];
      if (allTopics) {
        const image = broker.metadata.image;
        const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, image.topicsByName.keys());
        topics = [...image.topicsByName.values()]
          .filter((topic) => described.has(topic.name))
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((topic) => describe(topic, image));
      } else {
        const allowAutoCreation = (version < 4 || request.allowAutoTopicCreation) && broker.config.bool('auto.create.topics.enable');
        topics = await requestedTopics(broker, context, request.topics ?? [], { version, allowAutoCreation, describe, topicOperations });
      }
      let clusterAuthorizedOperations = AUTHORIZED_OPERATIONS_OMITTED;
      if (version >= 8 && request.includeClusterAuthorizedOperations) {
        clusterAuthorizedOperations = authorizeCluster(broker, context, AclOperation.DESCRIBE) ? authorizedOperations(broker, context, ResourceType.CLUSTER, CLUSTER_NAME) : 0;
      }
      const image = broker.metadata.image;
      return {
        throttleTimeMs: 0,
        brokers: brokersOnListener(image, context.listenerName).map((node) => ({ nodeId: node.nodeId, host: node.host, port: node.port, rack: node.rack })),
        clusterId: image.clusterId,
        controllerId: aliveBrokerId(image, broker.nodeId),
        topics,
        clusterAuthorizedOperations,
        errorCode: ErrorCode.NONE,
      };
    },
    // Kafka's MetadataRequest.getErrorResponse: every requested topic carries the error, no brokers.
    errorResponse: (request, errorCode) => ({
      brokers: [],
      topics: (request.topics ?? []).map((topic) => ({ errorCode, name: topic.name, topicId: topic.topicId, isInternal: false, partitions: [] })),
    }),
  });
}

function partitionsOf(topic: TopicImage, image: MetadataImage, context: RequestContext) {
  const options = { listenerName: context.listenerName, errorUnavailableListeners: context.apiVersion >= 6, errorUnavailableEndpoints: context.apiVersion === 0 };
  return [...topic.partitions.values()]
    .sort((a, b) => a.partition - b.partition)
    .map((partition) => {
      const view = partitionView(image, partition, options);
      return {
        errorCode: view.errorCode,
        partitionIndex: view.partitionIndex,
        leaderId: view.leaderId,
        leaderEpoch: view.leaderEpoch,
        replicaNodes: view.replicaNodes,
        isrNodes: view.isrNodes,
        offlineReplicas: view.offlineReplicas,
      };
    });
}

async function requestedTopics(
  broker: ApiContext,
  context: RequestContext,
  requested: readonly { topicId: string; name: string | null }[],
  options: { version: number; allowAutoCreation: boolean; describe: (topic: TopicImage, image: MetadataImage) => TopicResult; topicOperations: (name: string) => number },
): Promise<TopicResult[]> {
  const missing = (errorCode: number, name: string | null, topicId: string, operations = options.topicOperations(name ?? '')): TopicResult => ({
    errorCode,
    name,
    topicId,
    isInternal: false,
    partitions: [],
    topicAuthorizedOperations: operations,
  });
  const unauthorized = (name: string | null, topicId: string, isInternal = false): TopicResult => ({
    ...missing(ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, topicId, AUTHORIZED_OPERATIONS_OMITTED),
    isInternal,
  });
  const requestedNames = [...new Set(requested.filter((t) => t.name !== null).map((t) => t.name!))];
  const described = authorizedNames(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, requestedNames);
  const deniedResults = requestedNames.filter((name) => !described.has(name)).map((name) => unauthorized(name, ZERO_UUID));
  let names = requestedNames.filter((name) => described.has(name));
  const ids = [...new Set(requested.filter((t) => t.name === null && t.topicId !== ZERO_UUID).map((t) => t.topicId))];
  if (options.allowAutoCreation && !authorizeCluster(broker, context, AclOperation.CREATE)) {
    const notCreatable = names.filter((name) => !broker.metadata.image.topicsByName.has(name) && !authorize(broker, context, AclOperation.CREATE, ResourceType.TOPIC, name));
    deniedResults.push(...notCreatable.map((name) => unauthorized(name, ZERO_UUID, isInternalTopic(name))));
    names = names.filter((name) => !notCreatable.includes(name));
  }
  const toCreate = names.filter((name) => !broker.metadata.image.topicsByName.has(name) && topicNameError(name) === null);
  const refused = new Set<string>();
  if (options.allowAutoCreation && toCreate.length > 0) {
    for (const result of await broker.autoTopicCreation.autoCreateTopics(toCreate)) {
      if (result.errorCode !== ErrorCode.NONE && result.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) refused.add(result.name);
    }
  }
  const image = broker.metadata.image;
  const results: TopicResult[] = [];
  for (const name of names) {
    const topic = image.topicsByName.get(name);
    if (topic !== undefined) results.push(options.describe(topic, image));
    else if (topicNameError(name) !== null) results.push(missing(ErrorCode.INVALID_TOPIC_EXCEPTION, name, ZERO_UUID));
    else if (options.allowAutoCreation && !refused.has(name)) results.push(missing(ErrorCode.LEADER_NOT_AVAILABLE, name, ZERO_UUID));
    else results.push(missing(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, ZERO_UUID));
  }
  for (const id of ids) {
    const topic = image.topicsById.get(id);
    // Names are nullable from v12 on; before that an unknown id answers with an empty name.
    if (topic === undefined) results.push(missing(ErrorCode.UNKNOWN_TOPIC_ID, options.version >= 12 ? null : '', id, AUTHORIZED_OPERATIONS_OMITTED));
    else if (!authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name)) results.push(unauthorized(null, id));
    else results.push(options.describe(topic, image));
  }
  return [...results, ...deniedResults];
}
