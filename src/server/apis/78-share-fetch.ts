/**
 * ShareFetch (key 78), versions 1-2 (KIP-932): a share-group member fetches
 * records acquired for it, and may acknowledge earlier deliveries in the
 * same request.
 *
 * v1 is Kafka 4.1's baseline (maxRecords, batchSize, the acquisition lock
 * timeout in the response); v2 the acquire mode (KIP-1206: batch_optimized
 * or record_limit) and renew acknowledgements (KIP-1222: isRenewAck, with
 * maxBytes, minBytes, maxRecords and maxWaitMs all 0, acknowledges without
 * fetching).
 *
 * Checked first, answered top-level as Kafka: share.version below 1 is
 * UNSUPPORTED_VERSION; a null group id INVALID_REQUEST; READ on the group
 * (GROUP_AUTHORIZATION_FAILED); an empty member id INVALID_REQUEST; then the
 * share session (src/share/share-session.ts): SHARE_SESSION_NOT_FOUND,
 * INVALID_SHARE_SESSION_EPOCH, INVALID_REQUEST for acknowledgements in a
 * session's opening request; a full session cache answers
 * SHARE_SESSION_LIMIT_REACHED after maxWaitMs, as Kafka's idle timer does.
 * Per partition: an unknown topic id is UNKNOWN_TOPIC_ID, READ on the topic
 * TOPIC_AUTHORIZATION_FAILED, a missing partition UNKNOWN_TOPIC_OR_PARTITION,
 * a partition led elsewhere NOT_LEADER_OR_FOLLOWER with the current leader
 * and its endpoint (KIP-951). Acknowledgements are validated as Kafka's
 * validateAcknowledgementBatches (INVALID_REQUEST on the partition's
 * acknowledgeErrorCode) and applied alongside the fetch, which does not
 * wait for their state write (Kafka runs both together).
 *
 * A continued session answers only partitions with records, errors,
 * acknowledgement results, or newly added to the session.
 *
 * Quotas, as Kafka's: the records' bytes count against the member's
 * consumer_byte_rate and maxBytes is capped at what the quota allows over
 * its window (the fetch quota of 01-fetch.ts). Over the rate, or over the
 * request's request_percentage, the answer carries no partitions, only the
 * throttle time, and the connection is muted that long. As in Kafka, the
 * records that fetch acquired stay acquired by the member until their
 * acquisition lock times out, and its acknowledgements were applied. Records are
 * read_uncommitted: share.isolation.level=read_committed is not served
 * (docs/SKIPPED.md).
 */
import { ShareFetch } from '../../protocol/schemas/78-share-fetch.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler, type RequestContext } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { currentLeaderOf } from './00-produce.js';
import { fetchQuotaThrottleTimeMs, quotaWindowBytes } from './01-fetch.js';
import { AclOperation, ResourceType, authorizedNames } from '../authorization.js';
import { partKey, type ShareFetchPartition, type ShareFetchPartitionResult } from '../../share/share-partition-manager.js';
import { sharePartitionKeyOf, type ShareFetchContext } from '../../share/share-session.js';
import { acknowledgementsByPartition, shareRequestPrecheck, type AcknowledgeResults, type RequestTopic } from './share-acknowledgements.js';

type Endpoint = { nodeId: number; host: string; port: number; rack: string | null };

interface ResponsePartition {
  partitionIndex: number;
  errorCode: number;
  errorMessage: string | null;
  acknowledgeErrorCode: number;
  acknowledgeErrorMessage: string | null;
  currentLeader: { leaderId: number; leaderEpoch: number };
  records: Buffer;
  acquiredRecords: { firstOffset: number; lastOffset: number; deliveryCount: number }[];
}

export function shareFetchHandler(broker: ApiContext) {
  return defineHandler({
    api: ShareFetch,
    async handle(request, context) {
      const lockTimeoutMs = (groupId: string | null) => (groupId === null ? 0 : broker.sharePartitionManager.groupConfig(groupId).recordLockDurationMs);
      const refuse = (errorCode: number, errorMessage: string | null = null) => topLevel(errorCode, errorMessage, lockTimeoutMs(request.groupId));
      const image = broker.metadata.image;
      const checked = shareRequestPrecheck(broker, context, request);
      if (!checked.ok) return refuse(checked.errorCode, checked.errorMessage);
      const { groupId, memberId } = checked;
      const renewOnly = context.apiVersion >= 2 && request.isRenewAck;
      if (renewOnly) {
        const problem = renewAckProblem(request);
        if (problem !== null) return refuse(ErrorCode.INVALID_REQUEST, problem);
      }
      const topicName = (topicId: string) => image.topicsById.get(topicId)?.name ?? null;
      const manager = broker.sharePartitionManager;
      const requested = request.topics.flatMap((topic) => topic.partitions.map((partition) => ({ topicId: topic.topicId, partition: partition.partitionIndex })));
      const forgotten = request.forgottenTopicsData.flatMap((topic) => topic.partitions.map((partition) => ({ topicId: topic.topicId, partition })));
      const hasAcknowledgements = request.topics.some((topic) => topic.partitions.some((partition) => partition.acknowledgementBatches.length > 0));
      const outcome = manager.sessions.newContext({ groupId, memberId, epoch: request.shareSessionEpoch, partitions: requested, forgotten, hasAcknowledgements, connectionId: context.connectionId });
      if (!outcome.ok) {
        // Kafka's idle timer: a member refused a session for lack of room asks again only after maxWaitMs.
        if (outcome.errorCode === ErrorCode.SHARE_SESSION_LIMIT_REACHED) await manager.idle(request.maxWaitMs);
        return refuse(outcome.errorCode);
      }
      const shareContext = outcome.context;
      // As Kafka's KafkaApis, the acknowledgements and the fetch run together: the fetch does not wait for the
      // acknowledgements' state write, and (as in Kafka) records they release may come in this fetch or the next.
      const acknowledging: Promise<AcknowledgeResults> = hasAcknowledgements
        ? acknowledgementsByPartition(broker, context, { groupId, memberId, topics: request.topics as readonly RequestTopic[], renewOnly, renewAllowed: context.apiVersion >= 2, topicName })
        : Promise.resolve(new Map());
      const fetchParts = renewOnly ? [] : partitionsToFetch(shareContext, requested);
      const [acknowledged, fetched] = await Promise.all([acknowledging, fetchPartitions(broker, context, { groupId, memberId, request, parts: fetchParts, topicName })]);
      if (shareContext.kind === 'final') void manager.releaseSessionAndForget(groupId, memberId);
      const responseBytes = broker.clientQuotas.fetch.quotasEnabled ? recordsBytesOf(fetched) : 0;
      const throttleTimeMs = fetchQuotaThrottleTimeMs(broker, context, responseBytes, context.requestThrottleTimeMs?.() ?? 0);
      if (throttleTimeMs > 0) return { ...topLevel(ErrorCode.NONE, null, lockTimeoutMs(groupId)), throttleTimeMs };
      const nodeEndpoints = new Map<number, Endpoint>();
      const responses = buildResponses({ broker, context, fetched, acknowledged, shareContext, nodeEndpoints, topicName });
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, acquisitionLockTimeoutMs: lockTimeoutMs(groupId), responses, nodeEndpoints: [...nodeEndpoints.values()] };
    },
    errorResponse: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, responses: [], nodeEndpoints: [] }),
  });
}

function topLevel(errorCode: number, errorMessage: string | null, acquisitionLockTimeoutMs: number) {
  return { throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs, responses: [], nodeEndpoints: [] };
}

/** Kafka's check of a renew-only ShareFetch: the fetch limits must all be 0. */
function renewAckProblem(request: { maxBytes: number; minBytes: number; maxRecords: number; maxWaitMs: number }): string | null {
  let message = '';
  if (request.maxBytes !== 0) message += 'maxBytes must be set to 0, ';
  if (request.minBytes !== 0) message += 'minBytes must be set to 0, ';
  if (request.maxRecords !== 0) message += 'maxRecords must be set to 0, ';
  if (request.maxWaitMs !== 0) message += 'maxWaitMs must be set to 0, ';
  return message === '' ? null : `${message}if isRenewAck is true.`;
}

/** A new session or the final request reads the request's partitions; a continued one every partition of the session. */
function partitionsToFetch(shareContext: ShareFetchContext, requested: readonly { topicId: string; partition: number }[]) {
  return shareContext.kind === 'subsequent' ? [...shareContext.session.partitions.values()] : requested;
}

async function fetchPartitions(
  broker: ApiContext,
  context: RequestContext,
  input: {
    groupId: string;
    memberId: string;
    request: { maxWaitMs: number; maxBytes: number; maxRecords: number; batchSize: number; shareAcquireMode: number };
    parts: readonly { topicId: string; partition: number }[];
    topicName: (topicId: string) => string | null;
  },
): Promise<Map<string, ShareFetchPartitionResult & { topicId: string; partition: number; topic: string | null }>> {
  const image = broker.metadata.image;
  const names = input.parts.flatMap((part) => {
    const name = input.topicName(part.topicId);
    return name === null ? [] : [name];
  });
  const authorized = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, names);
  const results = new Map<string, ShareFetchPartitionResult & { topicId: string; partition: number; topic: string | null }>();
  const interesting: ShareFetchPartition[] = [];
  for (const part of input.parts) {
    const topic = input.topicName(part.topicId);
    const errorCode =
      topic === null
        ? ErrorCode.UNKNOWN_TOPIC_ID
        : !authorized.has(topic)
          ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
          : image.topicsByName.get(topic)?.partitions.has(part.partition) !== true
            ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            : ErrorCode.NONE;
    if (errorCode === ErrorCode.NONE) interesting.push({ ...part, topic: topic! });
    else results.set(partKey(part), { ...part, topic, errorCode, errorMessage: null, records: Buffer.alloc(0), acquiredRecords: [] });
  }
  if (interesting.length === 0) return results;
  const maxBytes = Math.min(input.request.maxBytes, broker.config.int('fetch.max.bytes'), quotaWindowBytes(broker, context));
  const fetched = await broker.sharePartitionManager.fetchMessages({
    groupId: input.groupId,
    memberId: input.memberId,
    maxWaitMs: input.request.maxWaitMs,
    maxBytes,
    maxRecords: input.request.maxRecords,
    batchSize: input.request.batchSize,
    acquireMode: input.request.shareAcquireMode,
    partitions: interesting,
  });
  for (const part of interesting) results.set(partKey(part), { ...part, ...fetched.get(partKey(part))! });
  return results;
}

function recordsBytesOf(fetched: ReadonlyMap<string, { records: Buffer }>): number {
  let bytes = 0;
  for (const partition of fetched.values()) bytes += partition.records.length;
  return bytes;
}

/** Groups the partition results by topic, merging acknowledgement results, and drops what a continued session need not repeat. */
function buildResponses(input: {
  broker: ApiContext;
  context: RequestContext;
  fetched: Map<string, ShareFetchPartitionResult & { topicId: string; partition: number; topic: string | null }>;
  acknowledged: AcknowledgeResults;
  shareContext: ShareFetchContext;
  nodeEndpoints: Map<number, Endpoint>;
  topicName: (topicId: string) => string | null;
}) {
  const image = input.broker.metadata.image;
  const byTopic = new Map<string, ResponsePartition[]>();
  const session = input.shareContext.kind === 'subsequent' ? input.shareContext.session : null;
  const keys = new Set([...input.fetched.keys(), ...input.acknowledged.keys()]);
  for (const key of keys) {
    const data = input.fetched.get(key);
    const ack = input.acknowledged.get(key);
    const part = data ?? ack!;
    const errorCode = data?.errorCode ?? ErrorCode.NONE;
    const mustRespond = session === null || (data !== undefined && data.records.length > 0) || errorCode !== ErrorCode.NONE || ack !== undefined || session.unreported.has(key);
    if (session !== null) session.unreported.delete(sharePartitionKeyOf(part));
    if (!mustRespond) continue;
    const topic = input.topicName(part.topicId);
    const leaderMoved = errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || errorCode === ErrorCode.FENCED_LEADER_EPOCH;
    const currentLeader = leaderMoved && topic !== null ? currentLeaderOf(image, { topic, partition: part.partition }, input.context.listenerName, input.nodeEndpoints) : { leaderId: -1, leaderEpoch: -1 };
    let partitions = byTopic.get(part.topicId);
    if (partitions === undefined) byTopic.set(part.topicId, (partitions = []));
    partitions.push({
      partitionIndex: part.partition,
      errorCode,
      errorMessage: data?.errorMessage ?? null,
      acknowledgeErrorCode: ack?.errorCode ?? ErrorCode.NONE,
      acknowledgeErrorMessage: ack?.errorMessage ?? null,
      currentLeader,
      records: data?.records ?? Buffer.alloc(0),
      acquiredRecords: data?.acquiredRecords ?? [],
    });
  }
  return [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions }));
}
