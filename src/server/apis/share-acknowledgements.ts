/**
 * The checks and acknowledgements ShareFetch (78) and ShareAcknowledge (79)
 * share. Acknowledgements, as
 * Kafka's KafkaApis.handleAcknowledgements treats them: per partition, an
 * unknown topic id is UNKNOWN_TOPIC_ID, READ on the topic
 * TOPIC_AUTHORIZATION_FAILED, a missing partition UNKNOWN_TOPIC_OR_PARTITION;
 * batches are validated (validateAcknowledgementBatches: first <= last,
 * ascending and not overlapping, one type or one per offset, types in
 * GAP..REJECT, RENEW only from v2 and only in a renew request), a partition
 * with no batches answers NONE, and the rest go to the share partitions.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { RequestContext } from '../handler.js';
import type { ApiContext } from '../api-context.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';
import { isShareGroupEnabled } from '../../metadata/features.js';
import { partKey, type ShareFetchPartition } from '../../share/share-partition-manager.js';
import type { AcknowledgementBatch } from '../../share/share-partition.js';

export type Precheck = { ok: true; groupId: string; memberId: string } | { ok: false; errorCode: number; errorMessage: string | null };

/**
 * What Kafka checks of a ShareFetch or ShareAcknowledge before its session,
 * in its order: share.version finalized (UNSUPPORTED_VERSION), a group id
 * (INVALID_REQUEST), READ on the group (GROUP_AUTHORIZATION_FAILED), a member
 * id that is not blank (INVALID_REQUEST).
 */
export function shareRequestPrecheck(broker: ApiContext, context: RequestContext, request: { groupId: string | null; memberId: string | null }): Precheck {
  if (!isShareGroupEnabled(broker.metadata.image.features)) return { ok: false, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null };
  const { groupId, memberId } = request;
  if (groupId === null) return { ok: false, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid group id in the request.' };
  if (!authorize(broker, context, AclOperation.READ, ResourceType.GROUP, groupId)) return { ok: false, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null };
  if (memberId === null || memberId.trim() === '') return { ok: false, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid member id in the request.' };
  return { ok: true, groupId, memberId };
}

export interface RequestTopic {
  topicId: string;
  partitions: readonly { partitionIndex: number; acknowledgementBatches: readonly AcknowledgementBatch[] }[];
}

export type AcknowledgeResults = Map<string, { topicId: string; partition: number; errorCode: number; errorMessage: string | null }>;

const ACKNOWLEDGE_TYPE_RENEW = 4;
const ACKNOWLEDGE_TYPE_REJECT = 3;

export async function acknowledgementsByPartition(
  broker: ApiContext,
  context: RequestContext,
  input: { groupId: string; memberId: string; topics: readonly RequestTopic[]; renewOnly: boolean; renewAllowed: boolean; topicName: (topicId: string) => string | null },
): Promise<AcknowledgeResults> {
  const image = broker.metadata.image;
  const names = input.topics.flatMap((topic) => {
    const name = input.topicName(topic.topicId);
    return name === null ? [] : [name];
  });
  const authorized = authorizedNames(broker, context, AclOperation.READ, ResourceType.TOPIC, names);
  const results: AcknowledgeResults = new Map();
  const toApply = new Map<string, { part: ShareFetchPartition; batches: readonly AcknowledgementBatch[] }>();
  for (const topic of input.topics) {
    const name = input.topicName(topic.topicId);
    for (const partition of topic.partitions) {
      const part = { topicId: topic.topicId, partition: partition.partitionIndex };
      const answer = (errorCode: number) => results.set(partKey(part), { ...part, errorCode, errorMessage: null });
      if (name === null) answer(ErrorCode.UNKNOWN_TOPIC_ID);
      else if (!validBatches(partition.acknowledgementBatches, input)) answer(ErrorCode.INVALID_REQUEST);
      else if (!authorized.has(name)) answer(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      else if (image.topicsByName.get(name)?.partitions.has(partition.partitionIndex) !== true) answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      else if (partition.acknowledgementBatches.length === 0) answer(ErrorCode.NONE);
      else toApply.set(partKey(part), { part: { ...part, topic: name }, batches: partition.acknowledgementBatches });
    }
  }
  if (toApply.size === 0) return results;
  const applied = await broker.sharePartitionManager.acknowledge(input.groupId, input.memberId, toApply);
  for (const [key, { part }] of toApply) {
    const outcome = applied.get(key)!;
    results.set(key, { topicId: part.topicId, partition: part.partition, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage });
  }
  return results;
}

/** Kafka's validateAcknowledgementBatches for one partition. */
function validBatches(batches: readonly AcknowledgementBatch[], options: { renewOnly: boolean; renewAllowed: boolean }): boolean {
  const typeMax = options.renewAllowed ? ACKNOWLEDGE_TYPE_RENEW : ACKNOWLEDGE_TYPE_REJECT;
  let previousLastOffset = -1;
  for (const batch of batches) {
    if (batch.firstOffset > batch.lastOffset || batch.firstOffset < previousLastOffset) return false;
    const types = batch.acknowledgeTypes;
    if (types.length === 0) return false;
    if (types.length > 1 && batch.lastOffset - batch.firstOffset !== types.length - 1) return false;
    if (types.some((type) => type < 0 || type > typeMax)) return false;
    if (!options.renewOnly && types.includes(ACKNOWLEDGE_TYPE_RENEW)) return false;
    previousLastOffset = batch.lastOffset;
  }
  return true;
}
