/**
 * Fetch (key 1), versions 4-18, for consumers.
 *
 * v4 isolation level and lastStableOffset / abortedTransactions; v5
 * logStartOffset; v7 incremental fetch sessions (KIP-227); v9
 * currentLeaderEpoch fencing (KIP-320); v11 rackId and preferredReadReplica
 * (KIP-392, below); v12 flexible, lastFetchedEpoch and
 * divergingEpoch (KIP-595); v13 topic ids (KIP-516, unknown id ->
 * UNKNOWN_TOPIC_ID); v15 replicaState; v16 currentLeader / nodeEndpoints on
 * NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH (KIP-951); v17
 * replicaDirectoryId; v18 a follower's highWatermark (KIP-1166: a follower
 * behind the leader's high watermark is answered at once, not parked).
 *
 * Long poll: the request waits for fetch.min.bytes up to max.wait.ms in the
 * fetch purgatory, woken by appends. Sizes: the response holds at most
 * min(maxBytes, fetch.max.bytes), each partition at most its
 * partitionMaxBytes, except that the first batch found is returned whole
 * even if larger (KIP-74). Records are the segment bytes as stored.
 * read_committed reads up to the last stable offset (the first offset of
 * the oldest open transaction, else the high watermark) and gets the
 * aborted transactions overlapping what it read, from the .txnindex files.
 *
 * Followers (replicaId >= 0, or ReplicaState from v15) read up to the log
 * end, from the leader only; each fetch tells the leader the follower's log
 * end offset, which moves the ISR and the high watermark
 * (src/replication/partition.ts). The leader answers the records and its
 * high watermark; a diverging epoch when the follower's last fetched epoch
 * ended earlier here (KIP-595).
 * Fetch from follower (KIP-392): with replica.selector.class set, the
 * leader answers a v11+ consumer that sent its rack (client.rack) with the
 * replica to fetch from instead (preferredReadReplica, no records, at once);
 * v11+ consumers may read from followers, up to the follower's high
 * watermark (an offset between it and the follower's log end reads nothing
 * and waits; past the log end is OFFSET_OUT_OF_RANGE, on which Kafka's
 * clients go back to the leader). A follower's high watermark trails the
 * leader's by a fetch round trip (less with Fetch v18, KIP-1166), so a
 * consumer on a follower sees records a little later than on the leader.
 * Older consumers read from the leader only.
 * ListOffsets stays at the leader (02-list-offsets.ts).
 * Served on broker listeners only: on the controller listener Fetch is
 * Raft's (KafkaRaftClient), which Spool's one-voter quorum does not serve.
 * Quotas: a consumer's response bytes count against its consumer_byte_rate
 * (src/server/client-quota-manager.ts), and its maxBytes is capped at what
 * the quota allows over its window; over the rate, or over the request's
 * request_percentage (src/server/client-request-quota.ts), the answer is
 * empty with throttleTimeMs, and the connection is muted that long.
 * Followers are never throttled by client quotas.
 *
 * Authorization, as Kafka's: a follower's fetch needs CLUSTER_ACTION on the
 * cluster (TOPIC_AUTHORIZATION_FAILED on every partition otherwise); a
 * consumer's needs READ on each topic (TOPIC_AUTHORIZATION_FAILED), decided
 * after an unknown topic id and before whether the partition exists.
 */
import { Fetch } from '../../protocol/schemas/01-fetch.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { MetadataImage } from '../../metadata/image.js';
import { partitionKey, type FetchResponsePartition, type PartitionFetchRequest, type TopicIdPartition } from '../../replication/fetch-session.js';
import type { FetchParams } from '../../replication/delayed-fetch.js';
import { fetchError, type FetchPartitionData, type FetchPartitionInfo } from '../../replication/replica-manager.js';
import { defineHandler, type RequestContext } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { currentLeaderOf } from './00-produce.js';
import { quotaUserOf } from '../client-quota-manager.js';
import { AclOperation, ResourceType, authorizeCluster, authorizedNames } from '../authorization.js';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
type FetchRequestBody = Parameters<ReturnType<typeof fetchHandler>['handle']>[0];

interface ResponsePartition {
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  divergingEpoch: { epoch: number; endOffset: number };
  currentLeader: { leaderId: number; leaderEpoch: number };
  abortedTransactions: { producerId: number; firstOffset: number }[] | null;
  preferredReadReplica: number;
  records: Buffer;
}

export function fetchHandler(broker: ApiContext) {
  return defineHandler({
    api: Fetch,
    // The broker's Fetch. A controller listener's Fetch is the Raft one (followers copying __cluster_metadata).
    listeners: ['broker'],
    versions: { min: 4, max: 18 },
    async handle(request, context) {
      const image = broker.metadata.image;
      const version = context.apiVersion;
      const usesTopicIds = version >= 13;
      const fetchData = new Map<string, { part: TopicIdPartition; request: PartitionFetchRequest }>();
      for (const topic of request.topics) {
        const name = usesTopicIds ? (image.topicsById.get(topic.topicId)?.name ?? null) : topic.topic;
        for (const partition of topic.partitions) {
          const part = { topicId: usesTopicIds ? topic.topicId : ZERO_UUID, topic: name, partition: partition.partition };
          fetchData.set(partitionKey(part, usesTopicIds), {
            part,
            request: {
              fetchOffset: partition.fetchOffset,
              logStartOffset: partition.logStartOffset,
              maxBytes: partition.partitionMaxBytes,
              currentLeaderEpoch: partition.currentLeaderEpoch,
              lastFetchedEpoch: partition.lastFetchedEpoch,
              replicaHighWatermark: partition.highWatermark,
            },
          });
        }
      }
      const toForget = request.forgottenTopicsData.flatMap((topic) =>
        topic.partitions.map((partition) => partitionKey({ topicId: usesTopicIds ? topic.topicId : ZERO_UUID, topic: topic.topic, partition }, usesTopicIds)),
      );
      const replicaId = version >= 15 ? request.replicaState.replicaId : request.replicaId;
      const fetchContext = broker.replicaManager.fetchManager.newContext({
        version,
        sessionId: request.sessionId,
        epoch: request.sessionEpoch,
        isFollower: replicaId >= 0,
        fetchData,
        toForget,
        topicNames: (topicId) => image.topicsById.get(topicId)?.name ?? null,
      });
      const partitions = fetchContext.partitions();
      const replicaEpoch = version >= 15 ? request.replicaState.replicaEpoch : -1;
      const followerDenied = replicaId >= 0 && !authorizeCluster(broker, context, AclOperation.CLUSTER_ACTION);
      const results = followerDenied ? partitions.map(() => fetchError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)) : await readPartitions(broker, request, context, image, partitions, { replicaId, replicaEpoch });
      const nodeEndpoints = new Map<number, { nodeId: number; host: string; port: number; rack: string | null }>();
      const answered: FetchResponsePartition<ResponsePartition>[] = partitions.map((partition, index) => {
        const data = results[index]!;
        const response = toResponsePartition(partition.part, data, { version, image, listenerName: context.listenerName, nodeEndpoints });
        return {
          key: partition.key,
          part: partition.part,
          data: response,
          result: {
            errorCode: response.errorCode,
            highWatermark: response.highWatermark,
            logStartOffset: response.logStartOffset,
            recordsBytes: response.records.length,
            preferredReadReplica: response.preferredReadReplica,
            divergingEpoch: data.divergingEpoch !== null,
          },
        };
      });
      const throttleTimeMs = replicaId >= 0 ? 0 : consumerThrottleTimeMs(broker, context, answered, context.requestThrottleTimeMs?.() ?? 0);
      if (throttleTimeMs > 0) return { throttleTimeMs, ...fetchContext.throttled(), responses: [], nodeEndpoints: [] };
      const { errorCode, sessionId, partitions: selected } = fetchContext.respond(answered);
      recordFetchStats(broker, selected, { fromFollower: replicaId >= 0 });
      return { throttleTimeMs: 0, errorCode, sessionId, responses: groupByTopic(selected, usesTopicIds), nodeEndpoints: [...nodeEndpoints.values()] };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, sessionId: 0, responses: [] }),
  });
}

/** The records' bytes of the partitions answered: what Spool counts against consumer_byte_rate. */
function recordsBytesOf(answered: readonly FetchResponsePartition<ResponsePartition>[]): number {
  let bytes = 0;
  for (const partition of answered) bytes += partition.result.recordsBytes;
  return bytes;
}

function consumerThrottleTimeMs(broker: ApiContext, context: RequestContext, answered: readonly FetchResponsePartition<ResponsePartition>[], requestThrottleMs: number): number {
  return fetchQuotaThrottleTimeMs(broker, context, broker.clientQuotas.fetch.quotasEnabled ? recordsBytesOf(answered) : 0, requestThrottleMs);
}

/**
 * Kafka's fetch quota, for Fetch from consumers and for ShareFetch: the
 * response bytes against the client's consumer_byte_rate, the larger of
 * its throttle time and the request's request_percentage one
 * (`requestThrottleMs`) applying. Throttled either way, the bytes are taken
 * back, the caller answers without partitions and the connection is muted
 * for the throttle time. Spool counts the records' bytes; Kafka the whole
 * encoded response, a few dozen bytes more per partition.
 */
export function fetchQuotaThrottleTimeMs(broker: ApiContext, context: RequestContext, responseBytes: number, requestThrottleMs: number): number {
  const quota = broker.clientQuotas.fetch;
  if (!quota.quotasEnabled) {
    if (requestThrottleMs > 0) context.throttle?.(requestThrottleMs);
    return requestThrottleMs;
  }
  const user = quotaUserOf(context.principal);
  const throttleTimeMs = Math.max(quota.recordAndGetThrottleTimeMs(user, context.clientId, responseBytes), requestThrottleMs);
  if (throttleTimeMs === 0) return 0;
  quota.unrecord(user, context.clientId, responseBytes);
  context.throttle?.(throttleTimeMs);
  return throttleTimeMs;
}

/**
 * Kafka's BrokerTopicStats for the partitions sent: bytes out (to followers
 * counted as replication) and, as Kafka's readFromLocalLog, a failure only
 * for an error outside those a fetch expects.
 */
function recordFetchStats(broker: ApiContext, sent: readonly FetchResponsePartition<ResponsePartition>[], options: { fromFollower: boolean }): void {
  const stats = broker.replicaManager.stats;
  for (const { part, data } of sent) {
    if (part.topic === null) continue;
    stats.fetched(part.topic, data.records.length, options);
    if (data.errorCode !== ErrorCode.NONE && !EXPECTED_FETCH_ERRORS.has(data.errorCode)) stats.failedFetch(part.topic);
  }
}

/** Errors Kafka's readFromLocalLog answers without marking FailedFetchRequestsPerSec (and those KafkaApis decides before reading). */
const EXPECTED_FETCH_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.OFFSET_OUT_OF_RANGE,
]);

/** Checks each partition against the image, then reads the known ones through the replica manager. */
/** A consumer reads at most what its quota allows over the whole window (Kafka's maxValueInQuotaWindow, as an int). */
export function quotaWindowBytes(broker: ApiContext, context: RequestContext): number {
  const quota = broker.clientQuotas.fetch;
  if (!quota.quotasEnabled) return Infinity;
  return Math.min(Math.trunc(quota.maxValueInQuotaWindow(quotaUserOf(context.principal), context.clientId)), 2_147_483_647);
}

async function readPartitions(
  broker: ApiContext,
  request: FetchRequestBody,
  context: RequestContext,
  image: MetadataImage,
  partitions: readonly { part: TopicIdPartition; request: PartitionFetchRequest }[],
  replica: { replicaId: number; replicaEpoch: number },
): Promise<FetchPartitionData[]> {
  const names = partitions.flatMap(({ part }) => (part.topic === null ? [] : [part.topic]));
  // A follower was authorized for the cluster (CLUSTER_ACTION); a consumer needs READ on each topic.
  const authorized = replica.replicaId >= 0 ? new Set(names) : authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, names);
  const results: (FetchPartitionData | null)[] = partitions.map(({ part }) => {
    if (part.topic === null) return fetchError(ErrorCode.UNKNOWN_TOPIC_ID);
    if (!authorized.has(part.topic)) return fetchError(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    if (image.topicsByName.get(part.topic)?.partitions.has(part.partition) !== true) return fetchError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    return null;
  });
  const interesting: FetchPartitionInfo[] = [];
  partitions.forEach(({ part, request: partitionRequest }, index) => {
    if (results[index] !== null) return;
    interesting.push({ topicPartition: { topic: part.topic!, partition: part.partition }, ...partitionRequest });
  });
  const fromFollower = replica.replicaId >= 0;
  const maxBytes = Math.min(request.maxBytes, broker.config.int('fetch.max.bytes'), fromFollower ? Infinity : quotaWindowBytes(broker, context));
  const params: FetchParams = {
    replicaId: fromFollower ? replica.replicaId : -1,
    replicaEpoch: replica.replicaEpoch,
    maxWaitMs: request.maxWaitMs,
    minBytes: Math.min(request.minBytes, maxBytes),
    maxBytes,
    // A follower copies up to the log end; consumers read below the high watermark or the last stable offset.
    isolation: fromFollower ? 'logEnd' : request.isolationLevel === 1 ? 'txnCommitted' : 'highWatermark',
    // Followers fetch from the leader only; v11+ consumers may read from followers (KIP-392), older ones not.
    fetchOnlyFromLeader: fromFollower || context.apiVersion < 11,
    // Built only when a selector could use it, so the usual fetch allocates nothing for KIP-392.
    clientMetadata:
      !fromFollower && context.apiVersion >= 11 && request.rackId !== '' && broker.replicaManager.selectsReplicas
        ? { rackId: request.rackId, listenerName: context.listenerName }
        : null,
  };
  const read = await broker.replicaManager.fetchMessages(params, interesting);
  let next = 0;
  return results.map((result) => result ?? read[next++]!);
}

function toResponsePartition(
  part: TopicIdPartition,
  data: FetchPartitionData,
  options: { version: number; image: MetadataImage; listenerName: string; nodeEndpoints: Map<number, { nodeId: number; host: string; port: number; rack: string | null }> },
): ResponsePartition {
  // Fetch v5 and older clients do not know KAFKA_STORAGE_ERROR.
  const errorCode = data.errorCode === ErrorCode.KAFKA_STORAGE_ERROR && options.version <= 5 ? ErrorCode.NOT_LEADER_OR_FOLLOWER : data.errorCode;
  const leaderHint = options.version >= 16 && part.topic !== null && (errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || errorCode === ErrorCode.FENCED_LEADER_EPOCH);
  return {
    partitionIndex: part.partition,
    errorCode,
    highWatermark: data.highWatermark,
    lastStableOffset: data.lastStableOffset,
    logStartOffset: data.logStartOffset,
    divergingEpoch: data.divergingEpoch ?? { epoch: -1, endOffset: -1 },
    currentLeader: leaderHint ? currentLeaderOf(options.image, { topic: part.topic!, partition: part.partition }, options.listenerName, options.nodeEndpoints) : { leaderId: -1, leaderEpoch: -1 },
    abortedTransactions: data.abortedTransactions?.map((txn) => ({ producerId: txn.producerId, firstOffset: txn.firstOffset })) ?? null,
    preferredReadReplica: data.preferredReadReplica,
    records: data.records,
  };
}

/** Consecutive partitions of the same topic share one topic entry, as Kafka's FetchResponse builds it. */
function groupByTopic(partitions: readonly FetchResponsePartition<ResponsePartition>[], usesTopicIds: boolean) {
  const topics: { topic: string; topicId: string; partitions: ResponsePartition[] }[] = [];
  for (const { part, data } of partitions) {
    const last = topics.at(-1);
    const sameTopic = last !== undefined && (usesTopicIds ? last.topicId === part.topicId : last.topic === part.topic);
    if (sameTopic) last.partitions.push(data);
    else topics.push({ topic: part.topic ?? '', topicId: part.topicId, partitions: [data] });
  }
  return topics;
}

