/**
 * Shared by the share coordinator's handlers (keys 83-87, KIP-932): sent
 * by share-partition leaders and group coordinators on other brokers, so
 * authorized as Kafka does, CLUSTER_ACTION on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED for every partition otherwise); a request
 * with an empty group id, no topics, or a topic with no partitions gets an
 * empty answer, as Kafka's ShareCoordinatorService gives; every partition
 * is answered by this node's share coordinator, which says NOT_COORDINATOR
 * where it does not lead the share partition's state partition.
 */
import { errorInfo } from '../../protocol/errors.js';
import type { SharePartitionKey } from '../../share/persister.js';
import { AclOperation, authorizeCluster } from '../authorization.js';
import type { ApiContext } from '../api-context.js';
import type { RequestContext } from '../handler.js';

interface StateRequest<P extends { partition: number }> {
  groupId: string;
  topics: readonly { topicId: string; partitions: readonly P[] }[];
}

export function shareStateAuthorized(broker: ApiContext, context: RequestContext): boolean {
  return authorizeCluster(broker, context, AclOperation.CLUSTER_ACTION);
}

/** Whether Kafka answers the request with no results at all. */
export function isEmptyStateRequest<P extends { partition: number }>(request: StateRequest<P>): boolean {
  return request.groupId === '' || request.topics.length === 0 || request.topics.some((topic) => topic.partitions.length === 0);
}

/** Answers each partition of the request with `answer`, topic by topic, in request order. */
export async function answerEachPartition<P extends { partition: number }, R>(
  request: StateRequest<P>,
  answer: (key: SharePartitionKey, partition: P) => Promise<R>,
): Promise<{ topicId: string; partitions: (R & { partition: number })[] }[]> {
  return Promise.all(
    request.topics.map(async (topic) => ({
      topicId: topic.topicId,
      partitions: await Promise.all(
        topic.partitions.map(async (partition) => ({
          partition: partition.partition,
          ...(await answer({ groupId: request.groupId, topicId: topic.topicId, partition: partition.partition }, partition)),
        })),
      ),
    })),
  );
}

/** Every partition of the request answered with `errorCode` (and `extra`, the fields of a failed partition). */
export function stateErrorResults<P extends { partition: number }, X extends object>(request: StateRequest<P>, errorCode: number, extra: X) {
  return request.topics.map((topic) => ({
    topicId: topic.topicId,
    partitions: topic.partitions.map((partition) => ({ partition: partition.partition, errorCode, errorMessage: errorInfo(errorCode).message, ...extra })),
  }));
}
