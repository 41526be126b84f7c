/**
 * Produce (key 0), versions 3-13 served; 0-13 advertised as Kafka 4
 * advertises them (librdkafka infers features from the range). A v0-v2
 * request closes the connection, as Kafka 4's request parser does.
 *
 * v3 transactionalId and magic-2 batches only, exactly one batch per
 * partition; v7 ZStandard; v8 recordErrors / errorMessage (KIP-467); v9
 * flexible; v10 currentLeader and nodeEndpoints on NOT_LEADER_OR_FOLLOWER
 * (KIP-951); v11 TRANSACTION_ABORTABLE; v13 topics by id (KIP-516).
 *
 * acks=0: nothing is answered; if any partition failed the connection is
 * closed, as Kafka does, so the client refreshes metadata. acks=1 answers
 * after the leader append, acks=-1 once the high watermark covers it.
 *
 * Transactions: a transactional batch without a transactionalId gets
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition (Kafka's answer).
 * One that would open a transaction in its partition (the producer has none
 * open there) is first verified with the transaction coordinator (KIP-890
 * part 1, Kafka's transaction.partition.verification.enable default): a
 * partition not added to the transaction is INVALID_TXN_STATE
 * (TRANSACTION_ABORTABLE from v11), a fenced producer INVALID_PRODUCER_EPOCH,
 * and a coordinator that cannot answer NOT_ENOUGH_REPLICAS, as Kafka maps
 * them. From v12 (Transactions V2, KIP-890 part 2) the partitions are not
 * verified but added to the transaction, one add per producer and request,
 * as Kafka's AddPartitionsToTxnManager does for ADD_PARTITION.
 *
 * Quotas: the request's bytes count against the client's producer_byte_rate
 * (src/server/client-quota-manager.ts); over it, throttleTimeMs says for how
 * long and the connection is muted that long; request_percentage is
 * applied by the request handler table (src/server/client-request-quota.ts),
 * the larger throttle time winning.
 *
 * Authorization, as Kafka's: transactional records need WRITE on the
 * transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every
 * partition otherwise); each topic needs WRITE (TOPIC_AUTHORIZATION_FAILED,
 * decided before whether the topic exists).
 */
import { Produce } from '../../protocol/schemas/00-produce.js';
import { ErrorCode, errorInfo } from '../../protocol/errors.js';
import { BATCH_FIELD, TRANSACTIONAL_MASK, readBatchHeader } from '../../protocol/records/batch.js';
import { Partition } from '../../replication/partition.js';
import type { MetadataImage } from '../../metadata/image.js';
import { topicPartitionKey } from '../../protocol/topic-partition.js';
import { validateProduceRecords } from '../../replication/record-validator.js';
import { produceError, type ProduceEntry, type ProducePartitionResult } from '../../replication/replica-manager.js';
import { CloseConnection, defineHandler, type RequestContext } from '../handler.js';
import type { RequestOf } from '../../protocol/schema.js';
import { quotaUserOf } from '../client-quota-manager.js';
import type { ApiContext } from '../api-context.js';
import { AclOperation, ResourceType, authorize, authorizedNames } from '../authorization.js';

/** Kafka's AdminUtils.ADMIN_CLIENT_ID: the only client allowed to write internal topics. */
const ADMIN_CLIENT_ID = '__admin_client';
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

interface PartitionSlot {
  index: number;
  key: string | null;
  result: ProducePartitionResult | null;
}

interface TopicSlot {
  name: string;
  topicId: string;
  partitions: PartitionSlot[];
}

export function produceHandler(broker: ApiContext) {
  return defineHandler({
    api: Produce,
    versions: { min: 3, max: 13 },
    advertised: { min: 0, max: 13 },
    async handle(request, context) {
      const response = await produce(broker, request, context);
      const throttleTimeMs = produceThrottleTimeMs(broker, context);
      if (throttleTimeMs === 0 || response === null || response instanceof CloseConnection) return response;
      return { ...response, throttleTimeMs };
    },
    errorResponse: (request, errorCode, context) => responseFor(request.topicData, context.apiVersion, () => produceError(errorCode)),
  });
}

/**
 * Kafka's produce quota: the request's bytes against producer_byte_rate,
 * recorded once the response is ready, whatever it says (acks=0 too); over
 * the rate, the connection is muted for the throttle time.
 */
function produceThrottleTimeMs(broker: ApiContext, context: RequestContext): number {
  const quota = broker.clientQuotas.produce;
  if (!quota.quotasEnabled) return 0;
  const throttleTimeMs = quota.recordAndGetThrottleTimeMs(quotaUserOf(context.principal), context.clientId, context.requestBytes);
  if (throttleTimeMs > 0) context.throttle?.(throttleTimeMs);
  return throttleTimeMs;
}

async function produce(broker: ApiContext, request: RequestOf<typeof Produce>, context: RequestContext) {
  const image = broker.metadata.image;
  const version = context.apiVersion;
  const transactionalIdAuthorized = request.transactionalId !== null && authorize(broker, context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId);
  if (!transactionalIdAuthorized && hasTransactionalRecords(request.topicData)) {
    return responseFor(request.topicData, version, () => produceError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
  }
  const slots: TopicSlot[] = [];
  const entries: ProduceEntry[] = [];
  const unverified: UnverifiedEntry[] = [];
  const needsVerification = (tp: { topic: string; partition: number }, records: Buffer) => request.transactionalId !== null && opensTransaction(broker, tp, records);
  const nameOf = (topic: { name: string; topicId: string }) => (version >= 13 ? (image.topicsById.get(topic.topicId)?.name ?? null) : topic.name);
  const names = request.topicData.map(nameOf).filter((name) => name !== null);
  const authorized = authorizedNames(broker, context, AclOperation.WRITE, ResourceType.TOPIC, names);
  for (const topic of request.topicData) {
    const name = nameOf(topic);
    const slot: TopicSlot = { name: name ?? '', topicId: version >= 13 ? topic.topicId : ZERO_UUID, partitions: [] };
    slots.push(slot);
    for (const partition of topic.partitionData) {
      slot.partitions.push(admitPartition({ name, authorized: name !== null && authorized.has(name), partition, image, version, entries, unverified, needsVerification }));
    }
  }
  if (unverified.length > 0) {
    const errors = await verifyTransactions(broker, request.transactionalId!, unverified, version);
    unverified.forEach((entry, i) => {
      const error = errors[i]!;
      if (error !== null) {
        entry.slot.result = produceError(error.errorCode, error.message);
        return;
      }
      entries.push({ topicPartition: entry.topicPartition, records: entry.records });
      entry.slot.key = topicPartitionKey(entry.topicPartition);
    });
  }
  const results = await broker.replicaManager.appendRecords({
    timeoutMs: request.timeoutMs,
    requiredAcks: request.acks,
    internalTopicsAllowed: context.clientId === ADMIN_CLIENT_ID,
    entries,
  });
  for (const slot of slots) for (const partition of slot.partitions) if (partition.key !== null) partition.result = results.get(partition.key) ?? null;
  if (request.acks === 0) {
    const failed = slots.some((slot) => slot.partitions.some((p) => p.result !== null && p.result.errorCode !== ErrorCode.NONE));
    return failed ? new CloseConnection('acks=0 produce failed on at least one partition') : null;
  }
  return buildResponse(slots, version, image, context.listenerName);
}

/** A transactional batch that would open a transaction in its partition: verified (or added, v12+) before it is appended. */
interface UnverifiedEntry {
  slot: PartitionSlot;
  topicPartition: { topic: string; partition: number };
  records: Buffer;
}

/**
 * Checks one partition before the append; returns its slot, adding the
 * append to `entries` when admitted, or to `unverified` when it must first
 * be verified with the transaction coordinator.
 */
function admitPartition(options: {
  name: string | null;
  /** WRITE on the topic. */
  authorized: boolean;
  partition: { index: number; records: Buffer | null };
  image: MetadataImage;
  version: number;
  entries: ProduceEntry[];
  unverified: UnverifiedEntry[];
  needsVerification: (topicPartition: { topic: string; partition: number }, records: Buffer) => boolean;
}): PartitionSlot {
  const { name, partition, image, version } = options;
  if (name === null) return { index: partition.index, key: null, result: produceError(ErrorCode.UNKNOWN_TOPIC_ID) };
  if (!options.authorized) return { index: partition.index, key: null, result: produceError(ErrorCode.TOPIC_AUTHORIZATION_FAILED) };
  if (image.topicsByName.get(name)?.partitions.has(partition.index) !== true) {
    return { index: partition.index, key: null, result: produceError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) };
  }
  const invalid = validateProduceRecords(partition.records, version);
  if (invalid !== null) return { index: partition.index, key: null, result: produceError(invalid.errorCode) };
  const records = partition.records!;
  const topicPartition = { topic: name, partition: partition.index };
  if (isTransactional(records) && options.needsVerification(topicPartition, records)) {
    const slot: PartitionSlot = { index: partition.index, key: null, result: null };
    options.unverified.push({ slot, topicPartition, records });
    return slot;
  }
  options.entries.push({ topicPartition, records });
  return { index: partition.index, key: topicPartitionKey(topicPartition), result: null };
}

/** TRANSACTION_ABORTABLE reaches producers from this version; older ones get INVALID_TXN_STATE. */
const TRANSACTION_ABORTABLE_VERSION = 11;

/** The first Produce version whose transactional partitions are added to the transaction (Kafka's ADD_PARTITION). */
const ADD_PARTITION_VERSION = 12;

/** Whether a transactional batch's producer has no transaction open in the partition yet (Kafka's verification guard). */
function opensTransaction(broker: ApiContext, topicPartition: { topic: string; partition: number }, records: Buffer): boolean {
  const header = readBatchHeader(records, 0);
  const partition = broker.replicaManager.getPartitionOrError(topicPartition);
  return !(partition instanceof Partition && partition.producerState.hasOngoingTransaction(header.producerId, header.producerEpoch));
}

/**
 * KIP-890: a transactional batch from a producer with no open transaction
 * in the partition must belong to a transaction the coordinator has the
 * partition in. Before v12 the coordinator verifies it (part 1); from v12
 * the partitions of each producer are added to its transaction at once, at
 * transaction version 2 (part 2). The error of each entry, or null.
 */
async function verifyTransactions(
  broker: ApiContext,
  transactionalId: string,
  unverified: readonly UnverifiedEntry[],
  version: number,
): Promise<({ errorCode: number; message: string | null } | null)[]> {
  const coordinator = broker.addPartitionsToTxn;
  const producerOf = (entry: UnverifiedEntry) => {
    const header = readBatchHeader(entry.records, 0);
    return { producerId: header.producerId, producerEpoch: header.producerEpoch };
  };
  if (version < ADD_PARTITION_VERSION) {
    return Promise.all(unverified.map(async (entry) => {
      const [errorCode = ErrorCode.UNKNOWN_SERVER_ERROR] = await coordinator.verify(transactionalId, producerOf(entry), [entry.topicPartition]);
      return verificationError(errorCode, version);
    }));
  }
  const byProducer = new Map<string, { producer: { producerId: number; producerEpoch: number }; indexes: number[] }>();
  unverified.forEach((entry, i) => {
    const producer = producerOf(entry);
    const key = `${producer.producerId}:${producer.producerEpoch}`;
    const group = byProducer.get(key) ?? { producer, indexes: [] };
    group.indexes.push(i);
    byProducer.set(key, group);
  });
  const errors: ({ errorCode: number; message: string | null } | null)[] = unverified.map(() => null);
  await Promise.all(
    [...byProducer.values()].map(async ({ producer, indexes }) => {
      const partitions = indexes.map((i) => unverified[i]!.topicPartition);
      const errorCode = await coordinator.add(transactionalId, producer, partitions);
      for (const i of indexes) errors[i] = verificationError(errorCode, version);
    }),
  );
  return errors;
}

/** A verification's (or add's) error as the producer gets it, as Kafka's AddPartitionsToTxnManager and ReplicaManager map it. */
function verificationError(errorCode: number, version: number): { errorCode: number; message: string | null } | null {
  switch (errorCode) {
    case ErrorCode.NONE:
      return null;
    case ErrorCode.PRODUCER_FENCED:
      return { errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, message: null };
    case ErrorCode.TRANSACTION_ABORTABLE:
      if (version >= TRANSACTION_ABORTABLE_VERSION) return { errorCode, message: 'Partition was not added to the transaction' };
      return { errorCode: ErrorCode.INVALID_TXN_STATE, message: 'Partition was not added to the transaction' };
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return {
        errorCode: ErrorCode.NOT_ENOUGH_REPLICAS,
        message: `Unable to verify the partition has been added to the transaction. Underlying error: ${errorInfo(errorCode).name}`,
      };
    default:
      return { errorCode, message: null };
  }
}

function isTransactional(records: Buffer): boolean {
  return records.length > BATCH_FIELD.attributes + 1 && (records.readInt16BE(BATCH_FIELD.attributes) & TRANSACTIONAL_MASK) !== 0;
}

function hasTransactionalRecords(topics: readonly { partitionData: readonly { records: Buffer | null }[] }[]): boolean {
  return topics.some((topic) => topic.partitionData.some((partition) => partition.records !== null && isTransactional(partition.records)));
}

function buildResponse(slots: readonly TopicSlot[], version: number, image: MetadataImage, listenerName: string) {
  const nodeEndpoints = new Map<number, { nodeId: number; host: string; port: number; rack: string | null }>();
  const responses = slots.map((slot) => ({
    name: slot.name,
    topicId: slot.topicId,
    partitionResponses: slot.partitions.map((partition) => {
      const result = partition.result ?? produceError(ErrorCode.UNKNOWN_SERVER_ERROR);
      const currentLeader =
        version >= 10 && result.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER
          ? currentLeaderOf(image, { topic: slot.name, partition: partition.index }, listenerName, nodeEndpoints)
          : { leaderId: -1, leaderEpoch: -1 };
      return {
        index: partition.index,
        errorCode: result.errorCode,
        baseOffset: result.baseOffset,
        logAppendTimeMs: result.logAppendTimeMs,
        logStartOffset: result.logStartOffset,
        recordErrors: result.recordErrors,
        errorMessage: result.errorMessage,
        currentLeader,
      };
    }),
  }));
  return { responses, throttleTimeMs: 0, nodeEndpoints: [...nodeEndpoints.values()] };
}

/** The partition's leader as the image knows it, adding the leader's endpoint on `listenerName` (KIP-951). */
export function currentLeaderOf(
  image: MetadataImage,
  topicPartition: { topic: string; partition: number },
  listenerName: string,
  nodeEndpoints: Map<number, { nodeId: number; host: string; port: number; rack: string | null }>,
): { leaderId: number; leaderEpoch: number } {
  const registration = image.topicsByName.get(topicPartition.topic)?.partitions.get(topicPartition.partition);
  if (registration === undefined || registration.leader < 0) return { leaderId: -1, leaderEpoch: -1 };
  const leader = image.brokers.get(registration.leader);
  const endpoint = leader?.listeners.find((listener) => listener.name === listenerName);
  if (leader !== undefined && endpoint !== undefined) {
    nodeEndpoints.set(leader.id, { nodeId: leader.id, host: endpoint.host, port: endpoint.port, rack: leader.rack });
  }
  return { leaderId: registration.leader, leaderEpoch: registration.leaderEpoch };
}

/** Every partition of the request with the same result. */
function responseFor(
  topics: readonly { name: string; topicId: string; partitionData: readonly { index: number }[] }[],
  version: number,
  result: () => ProducePartitionResult,
) {
  return {
    responses: topics.map((topic) => ({
      name: topic.name,
      topicId: version >= 13 ? topic.topicId : ZERO_UUID,
      partitionResponses: topic.partitionData.map((partition) => {
        const { errorCode, baseOffset, logAppendTimeMs, logStartOffset, errorMessage } = result();
        return { index: partition.index, errorCode, baseOffset, logAppendTimeMs, logStartOffset, errorMessage };
      }),
    })),
    throttleTimeMs: 0,
  };
}
