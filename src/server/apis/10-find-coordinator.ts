/**
 * FindCoordinator (key 10), versions 0-6.
 *
 * v1 KeyType (0 group, 1 transaction); v2 same as v1; v3 flexible; v4 many
 * keys at once (KIP-699), each with its own error; v5 same as v4; v6 share
 * groups (KIP-932). A key's coordinator is the leader of partition
 * abs(hashCode(key)) % offsets.topic.num.partitions of __consumer_offsets
 * (transaction.state.log.num.partitions of __transaction_state for
 * transactional ids). Before v4 an error comes back with Kafka's message and
 * node -1, host "", port -1.
 *
 * __consumer_offsets (offsets.topic.num.partitions partitions,
 * offsets.topic.replication.factor replicas) and __transaction_state
 * (transaction.state.log.num.partitions, .replication.factor, .min.isr),
 * both compacted, are created through the controller when first needed.
 * Kafka answers that
 * first request COORDINATOR_NOT_AVAILABLE and lets the client retry; Spool
 * waits for the creation (committed in one step on a one-voter quorum) and
 * answers with the coordinator, which every client accepts as well. If the
 * topic cannot be created (a replication factor above the live brokers,
 * Kafka 4's rule) the answer stays COORDINATOR_NOT_AVAILABLE.
 *
 * Key type 2 (v6+, KIP-932): a share partition's share coordinator, for the
 * key `groupId:topicId:partition` (parsed as Kafka's SharePartitionKey:
 * INVALID_REQUEST for a malformed key, or below v6): the leader of its
 * partition of __share_group_state (share.coordinator.state.topic.num.
 * partitions, .replication.factor, .min.isr, .segment.bytes; cleanup.policy
 * delete, retention.ms -1), created the same way on first use.
 *
 * Authorization, as Kafka's: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED)
 * or on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
 * CLUSTER_ACTION on the cluster for a share key (brokers ask for it), where
 * Kafka fails the whole request with CLUSTER_AUTHORIZATION_FAILED and Spool
 * the key.
 */
import { FindCoordinator } from '../../protocol/schemas/10-find-coordinator.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { brokersOnListener } from '../../metadata/cluster-view.js';
import { CONSUMER_OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, partitionFor } from '../../group/placement.js';
import { InvalidShareCoordinatorKeyError, parseShareCoordinatorKey, SHARE_GROUP_STATE_TOPIC } from '../../share/coordinator/coordinator.js';
import { defineHandler, type RequestContext } from '../handler.js';
import { AclOperation, ResourceType, authorize, authorizeCluster } from '../authorization.js';
import type { ApiContext } from '../api-context.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;
const KEY_TYPE_SHARE = 2;

interface Coordinator {
  key: string;
  errorCode: number;
  nodeId: number;
  host: string;
  port: number;
}

const NO_NODE = { nodeId: -1, host: '', port: -1 };

export function findCoordinatorHandler(broker: ApiContext) {
  return defineHandler({
    api: FindCoordinator,
    async handle(request, context) {
      await broker.metadata.whenReady();
      const keyType = context.apiVersion >= 1 ? request.keyType : KEY_TYPE_GROUP;
      if (context.apiVersion >= 4) {
        const coordinators = await Promise.all(request.coordinatorKeys.map((key) => findCoordinator(broker, key, keyType, context)));
        return { throttleTimeMs: 0, coordinators: coordinators.map((c) => ({ ...c, errorMessage: null })) };
      }
      const found = await findCoordinator(broker, request.key, keyType, context);
      const errorMessage = found.errorCode === ErrorCode.NONE ? null : errorInfo(found.errorCode).message;
      return { throttleTimeMs: 0, errorCode: found.errorCode, errorMessage, nodeId: found.nodeId, host: found.host, port: found.port };
    },
    errorResponse: (request, errorCode, context) =>
      context.apiVersion >= 4
        ? { coordinators: request.coordinatorKeys.map((key) => ({ key, errorCode, errorMessage: null, ...NO_NODE })) }
        : { errorCode, errorMessage: errorInfo(errorCode).message, ...NO_NODE },
  });
}

async function findCoordinator(broker: ApiContext, key: string, keyType: number, context: RequestContext): Promise<Coordinator> {
  const fail = (errorCode: number): Coordinator => ({ key, errorCode, ...NO_NODE });
  if (keyType !== KEY_TYPE_GROUP && keyType !== KEY_TYPE_TRANSACTION && keyType !== KEY_TYPE_SHARE) return fail(ErrorCode.INVALID_REQUEST);
  if (keyType === KEY_TYPE_GROUP && !authorize(broker, context, AclOperation.DESCRIBE, ResourceType.GROUP, key)) return fail(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (keyType === KEY_TYPE_TRANSACTION && !authorize(broker, context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) return fail(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  const placement = placementOf(broker, key, keyType, context);
  if (typeof placement === 'number') return fail(placement);
  const { topicName, partition } = placement;
  if (!broker.metadata.image.topicsByName.has(topicName)) {
    let created;
    try {
      [created] = await broker.autoTopicCreation.autoCreateTopics([topicName]);
    } catch (error) {
      broker.log.warn(`cannot create ${topicName}: ${(error as Error).message}`);
      return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    if (created === undefined || (created.errorCode !== ErrorCode.NONE && created.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS)) {
      if (created !== undefined) broker.log.warn(`cannot create ${topicName}: ${created.errorMessage ?? errorInfo(created.errorCode).name}`);
      return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
  }
  const image = broker.metadata.image;
  const registration = image.topicsByName.get(topicName)?.partitions.get(partition);
  if (registration === undefined || registration.leader < 0) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const node = brokersOnListener(image, context.listenerName).find((n) => n.nodeId === registration.leader);
  if (node === undefined) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { key, errorCode: ErrorCode.NONE, nodeId: node.nodeId, host: node.host, port: node.port };
}

/** The internal topic and partition whose leader coordinates the key, or the error that ends the lookup. */
function placementOf(broker: ApiContext, key: string, keyType: number, context: RequestContext): { topicName: string; partition: number } | number {
  if (keyType === KEY_TYPE_GROUP) return { topicName: CONSUMER_OFFSETS_TOPIC, partition: partitionFor(key, broker.groupCoordinator.config.offsetsTopicPartitions) };
  if (keyType === KEY_TYPE_TRANSACTION) return { topicName: TRANSACTION_STATE_TOPIC, partition: partitionFor(key, broker.transactionCoordinator.config.transactionLogPartitions) };
  if (context.apiVersion < 6) return ErrorCode.INVALID_REQUEST;
  if (!authorizeCluster(broker, context, AclOperation.CLUSTER_ACTION)) return ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
  try {
    return { topicName: SHARE_GROUP_STATE_TOPIC, partition: broker.shareCoordinator.partitionFor(parseShareCoordinatorKey(key)) };
  } catch (error) {
    if (!(error instanceof InvalidShareCoordinatorKeyError)) throw error;
    return ErrorCode.INVALID_REQUEST;
  }
}
