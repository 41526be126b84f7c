/**
 * Topics and partitions (Kafka's ReplicationControlManager): CreateTopics,
 * DeleteTopics, CreatePartitions, and the leader changes that follow a
 * broker being fenced or unfenced. Each operation reads the replayed state
 * and returns records plus a response; nothing here mutates state.
 *
 * Error codes and messages are Kafka's. Validation happens per topic, so one
 * bad topic in a request does not fail the others.
 */
import { ErrorCode, errorInfo } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import type { MetadataImage, PartitionRegistration, TopicImage } from '../metadata/image.js';
import { metadataRecord, type MetadataRecord } from '../metadata/records.js';
import { ConfigResourceType } from '../metadata/delta.js';
import type { ConfigEntryDescription, ControllerContext } from './context.js';
import { EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP, result, type ApiError, type ControllerResult } from './result.js';
import { hasCollisionChars, reservedTopicNameError, topicNameError, unifyTopicName } from './topic-names.js';
import { InvalidReplicationFactorError, placeReplicas } from './replica-placement.js';
import { Election, LeaderRecoveryState, buildPartitionChange, leaderRecoveryStateOf } from './partition-change.js';
import { alterPartitionChange, partitionChangeOptions, partitionChangeRecord } from './elections.js';

/** Kafka's Uuid.METADATA_TOPIC_ID (0, 1), reserved for `__cluster_metadata`. */
export const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
export const NO_LEADER = -1;

export interface CreatableTopic {
  name: string;
  /** -1: num.partitions. */
  numPartitions: number;
  /** -1: default.replication.factor. */
  replicationFactor: number;
  assignments: readonly { partitionIndex: number; brokerIds: readonly number[] }[];
  configs: readonly { name: string; value: string | null }[];
}

export interface CreatableTopicResult extends ApiError {
  name: string;
  topicId: string;
  numPartitions: number;
  replicationFactor: number;
  /** The new topic's effective configs (CreateTopics v5+); empty on error. */
  configs: ConfigEntryDescription[];
}

export interface CreateTopicsOptions {
  validateOnly: boolean;
  partitionChangeQuota?: PartitionChangeQuota | undefined;
}

/**
 * Kafka's ControllerRequestContext.applyPartitionChangeQuota (KIP-599):
 * counts `partitions` created, added or deleted against the requester's
 * controller_mutation_rate; false when the quota refuses the mutation (the
 * topic is answered THROTTLING_QUOTA_EXCEEDED). Called once a topic has
 * passed every other check, validateOnly or not, as Kafka's controller does.
 */
export type PartitionChangeQuota = (partitions: number) => boolean;

/**
 * What a topic refused by its controller_mutation_rate is answered: Kafka's
 * ApiError.fromThrowable of ThrottlingQuotaExceededException, whose message
 * is the error's default and so is left out (null).
 */
const throttled = (): ApiError => ({ errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: null });

const failed = (name: string, errorCode: number, errorMessage: string | null): CreatableTopicResult => ({
  name,
  topicId: ZERO_UUID,
  errorCode,
  errorMessage,
  numPartitions: -1,
  replicationFactor: -1,
  configs: [],
});

/** A new random topic id that is neither reserved nor in use nor starts with '-' (as Kafka's Uuid.randomUuid). */
export function newTopicId(context: ControllerContext, taken: ReadonlySet<string>): string {
  for (;;) {
    const id = context.random.uuid().toString('base64url');
    if (id === ZERO_UUID || id === METADATA_TOPIC_ID || id.startsWith('-')) continue;
    if (context.image.topicsById.has(id) || taken.has(id)) continue;
    return id;
  }
}

export function createTopics(
  context: ControllerContext,
  topics: readonly CreatableTopic[],
  options: CreateTopicsOptions,
): ControllerResult<CreatableTopicResult[]> {
  const counts = new Map<string, number>();
  for (const topic of topics) counts.set(topic.name, (counts.get(topic.name) ?? 0) + 1);
  const records: MetadataRecord[] = [];
  const results: CreatableTopicResult[] = [];
  const creating = { names: new Set<string>(), unified: new Map<string, string>(), ids: new Set<string>() };
  for (const topic of topics) {
    if (counts.get(topic.name)! > 1) {
      if (!results.some((r) => r.name === topic.name)) results.push(failed(topic.name, ErrorCode.INVALID_REQUEST, 'Duplicate topic name.'));
      continue;
    }
    const outcome = createTopic(context, topic, creating, options.partitionChangeQuota);
    results.push(outcome.response);
    records.push(...outcome.records);
  }
  if (records.length > MAX_RECORDS_PER_USER_OP) {
    return result([], results.map((r) => (r.errorCode === ErrorCode.NONE ? failed(r.name, ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH_MESSAGE) : r)));
  }
  return result(options.validateOnly ? [] : records, results);
}

interface Creating {
  names: Set<string>;
  unified: Map<string, string>;
  ids: Set<string>;
}

function createTopic(context: ControllerContext, topic: CreatableTopic, creating: Creating, quota: PartitionChangeQuota | undefined): ControllerResult<CreatableTopicResult> {
  const refused = (errorCode: number, message: string | null) => result([], failed(topic.name, errorCode, message));
  const reserved = reservedTopicNameError(topic.name);
  if (reserved !== null) return refused(ErrorCode.INVALID_REQUEST, reserved);
  const nameError = topicNameError(topic.name);
  if (nameError !== null) return refused(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
  if (context.image.topicsByName.has(topic.name) || creating.names.has(topic.name)) {
    return refused(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${topic.name}' already exists.`);
  }
  const collision = collidingTopic(context.image, topic.name, creating);
  if (collision !== null) return refused(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${topic.name}' collides with existing topic: ${collision}`);
  const configs = new Map(topic.configs.map((c) => [c.name, c.value]));
  const configProblem = context.configSchema.validate({ type: ConfigResourceType.TOPIC, name: topic.name }, configs, [...configs.keys()]);
  if (configProblem !== null) return refused(configProblem.errorCode, configProblem.message);
  const placement = partitionPlacement(context, topic);
  if ('errorCode' in placement) return refused(placement.errorCode, placement.errorMessage);
  if (quota !== undefined && !quota(placement.length)) return refused(ErrorCode.THROTTLING_QUOTA_EXCEEDED, throttled().errorMessage);
  const topicId = newTopicId(context, creating.ids);
  creating.names.add(topic.name);
  creating.ids.add(topicId);
  if (hasCollisionChars(topic.name)) creating.unified.set(unifyTopicName(topic.name), topic.name);
  const records: MetadataRecord[] = [metadataRecord('TopicRecord', { name: topic.name, topicId })];
  for (const [name, value] of configs) {
    records.push(metadataRecord('ConfigRecord', { resourceType: ConfigResourceType.TOPIC, resourceName: topic.name, name, value }));
  }
  placement.forEach((replicas, partitionId) => records.push(newPartitionRecord(context.image, topicId, partitionId, replicas)));
  const overrides = new Map([...configs].map(([name, value]) => [name, value ?? '']));
  return result(records, {
    name: topic.name,
    topicId,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    numPartitions: placement.length,
    replicationFactor: placement[0]?.length ?? 0,
    configs: context.configSchema.describeNewTopic(overrides, context.image),
  });
}

function collidingTopic(image: MetadataImage, name: string, creating: Creating): string | null {
  if (!hasCollisionChars(name)) return null;
  const unified = unifyTopicName(name);
  const pending = creating.unified.get(unified);
  if (pending !== undefined) return pending;
  for (const existing of image.topicsByName.keys()) {
    if (hasCollisionChars(existing) && unifyTopicName(existing) === unified) return existing;
  }
  return null;
}

/** Replica lists for a new topic, from its manual assignment or by placement. */
function partitionPlacement(context: ControllerContext, topic: CreatableTopic): number[][] | ApiError {
  if (topic.assignments.length > 0) return manualPlacement(context.image, topic);
  const numPartitions = topic.numPartitions === -1 ? context.config.int('num.partitions') : topic.numPartitions;
  const replicationFactor = topic.replicationFactor === -1 ? context.config.int('default.replication.factor') : topic.replicationFactor;
  if (numPartitions <= 0) return { errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: 'Number of partitions was set to an invalid non-positive value.' };
  if (replicationFactor <= 0) {
    return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: 'Replication factor must be larger than 0, or -1 to use the default value.' };
  }
  try {
    return placeReplicas(context.image, { count: numPartitions, replicationFactor, random: context.random });
  } catch (error) {
    if (!(error instanceof InvalidReplicationFactorError)) throw error;
    return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: `Unable to replicate the partition ${replicationFactor} time(s): ${error.message}` };
  }
}

function manualPlacement(image: MetadataImage, topic: CreatableTopic): number[][] | ApiError {
  if (topic.replicationFactor !== -1) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'A manual partition assignment was specified, but replication factor was not set to -1.' };
  }
  if (topic.numPartitions !== -1) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'A manual partition assignment was specified, but numPartitions was not set to -1.' };
  }
  const byPartition = new Map<number, number[]>();
  let replicationFactor: number | null = null;
  for (const assignment of topic.assignments) {
    if (byPartition.has(assignment.partitionIndex)) {
      return invalidAssignment(`Found multiple manual partition assignments for partition ${assignment.partitionIndex}`);
    }
    const problem = checkManualAssignment(image, assignment.brokerIds, replicationFactor);
    if (problem !== null) return problem;
    replicationFactor = assignment.brokerIds.length;
    byPartition.set(assignment.partitionIndex, [...assignment.brokerIds]);
  }
  const placement: number[][] = [];
  for (let p = 0; p < byPartition.size; p++) {
    const replicas = byPartition.get(p);
    if (replicas === undefined) return invalidAssignment('partitions should be a consecutive 0-based integer sequence');
    placement.push(replicas);
  }
  return placement;
}

function invalidAssignment(message: string): ApiError {
  return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: message };
}

function checkManualAssignment(image: MetadataImage, replicas: readonly number[], replicationFactor: number | null): ApiError | null {
  if (replicas.length === 0) return invalidAssignment('The manual partition assignment includes an empty replica list.');
  const seen = new Set<number>();
  for (const replica of replicas) {
    if (seen.has(replica)) return invalidAssignment(`The manual partition assignment includes the broker ${replica} more than once.`);
    seen.add(replica);
    if (!image.brokers.has(replica)) return invalidAssignment(`The manual partition assignment includes broker ${replica}, but no such broker is registered.`);
  }
  if (replicationFactor !== null && replicationFactor !== replicas.length) {
    return invalidAssignment(
      `The manual partition assignment includes a partition with ${replicas.length} replica(s), but this is not consistent with previous partitions, which have ${replicationFactor} replica(s).`,
    );
  }
  if (replicas.every((replica) => !isActive(image, replica))) {
    return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: 'All brokers specified in the partition assignment are currently fenced.' };
  }
  return null;
}

/** A broker that may lead: registered, unfenced, not in controlled shutdown. */
export function isActive(image: MetadataImage, brokerId: number): boolean {
  const broker = image.brokers.get(brokerId);
  return broker !== undefined && !broker.fenced && !broker.inControlledShutdown;
}

/** The log directory a new replica goes to: the broker's only directory, else unassigned (the broker picks). */
export function defaultDirectory(image: MetadataImage, brokerId: number): string {
  const dirs = image.brokers.get(brokerId)?.logDirs ?? [];
  return dirs.length === 1 ? dirs[0]! : ZERO_UUID;
}

/** A new partition: ISR = the active replicas, leader = the first of them, epochs 0. */
function newPartitionRecord(image: MetadataImage, topicId: string, partitionId: number, replicas: readonly number[]): MetadataRecord {
  const isr = replicas.filter((replica) => isActive(image, replica));
  return metadataRecord('PartitionRecord', {
    partitionId,
    topicId,
    replicas: [...replicas],
    isr,
    removingReplicas: [],
    addingReplicas: [],
    leader: isr[0] ?? NO_LEADER,
    leaderEpoch: 0,
    partitionEpoch: 0,
    directories: replicas.map((replica) => defaultDirectory(image, replica)),
  });
}

// ---- DeleteTopics

export interface DeletableTopic {
  /** Null when deleting by id. */
  name: string | null;
  /** ZERO_UUID when deleting by name. */
  topicId: string;
}

export interface DeletableTopicResult extends ApiError {
  name: string | null;
  topicId: string;
}

export function deleteTopics(
  context: ControllerContext,
  topics: readonly DeletableTopic[],
  options: { partitionChangeQuota?: PartitionChangeQuota | undefined } = {},
): ControllerResult<DeletableTopicResult[]> {
  const results: DeletableTopicResult[] = [];
  const records: MetadataRecord[] = [];
  const deleting = new Set<string>();
  const deletionEnabled = context.config.bool('delete.topic.enable');
  // As Kafka: entries naming both or neither are refused on their own; duplicates are answered once.
  const single = topics.filter((t) => (t.name !== null && t.name !== '') !== (t.topicId !== ZERO_UUID));
  const seenNames = countBy(single.filter((t) => t.name !== null && t.name !== '').map((t) => t.name!));
  const seenIds = countBy(single.filter((t) => t.topicId !== ZERO_UUID).map((t) => t.topicId));
  const answeredDuplicates = new Set<string>();
  for (const request of topics) {
    const outcome = deleteOne(context.image, request, { seenNames, seenIds, deletionEnabled });
    if ('errorCode' in outcome) {
      const key = `${request.name ?? ''}/${request.topicId}`;
      if (outcome.errorMessage?.startsWith('Duplicate') === true && answeredDuplicates.has(key)) continue;
      answeredDuplicates.add(key);
      results.push({ name: request.name, topicId: request.topicId, ...outcome });
      continue;
    }
    const quota = options.partitionChangeQuota;
    if (!deleting.has(outcome.id) && quota !== undefined && !quota(outcome.partitions.size)) {
      results.push({ name: outcome.name, topicId: outcome.id, ...throttled() });
      continue;
    }
    if (!deleting.has(outcome.id)) records.push(metadataRecord('RemoveTopicRecord', { topicId: outcome.id }));
    deleting.add(outcome.id);
    results.push({ name: outcome.name, topicId: outcome.id, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  return result(records, results);
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function deleteOne(
  image: MetadataImage,
  request: DeletableTopic,
  checks: { seenNames: Map<string, number>; seenIds: Map<string, number>; deletionEnabled: boolean },
): TopicImage | ApiError {
  const byName = request.name !== null && request.name !== '';
  const byId = request.topicId !== ZERO_UUID;
  if (byName && byId) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'You may not specify both topic name and topic id.' };
  if (!byName && !byId) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Neither topic name nor id were specified.' };
  if (byName && checks.seenNames.get(request.name!)! > 1) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic name.' };
  if (byId && checks.seenIds.get(request.topicId)! > 1) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic id.' };
  if (!checks.deletionEnabled) return defaultError(ErrorCode.TOPIC_DELETION_DISABLED);
  const topic = byName ? image.topicsByName.get(request.name!) : image.topicsById.get(request.topicId);
  if (topic === undefined) return defaultError(byName ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID);
  return topic;
}

export function defaultError(errorCode: number): ApiError {
  return { errorCode, errorMessage: errorInfo(errorCode).message };
}

// ---- CreatePartitions

export interface CreatePartitionsTopic {
  name: string;
  count: number;
  /** Replica lists of the new partitions, or null to place them. */
  assignments: readonly { brokerIds: readonly number[] }[] | null;
}

export interface CreatePartitionsTopicResult extends ApiError {
  name: string;
}

export function createPartitions(
  context: ControllerContext,
  topics: readonly CreatePartitionsTopic[],
  options: { validateOnly: boolean; partitionChangeQuota?: PartitionChangeQuota | undefined },
): ControllerResult<CreatePartitionsTopicResult[]> {
  const counts = countBy(topics.map((t) => t.name));
  const records: MetadataRecord[] = [];
  const results: CreatePartitionsTopicResult[] = [];
  for (const request of topics) {
    if (counts.get(request.name)! > 1) {
      if (!results.some((r) => r.name === request.name)) results.push({ name: request.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic name.' });
      continue;
    }
    const outcome = createPartitionsOfTopic(context, request, options.partitionChangeQuota);
    if ('errorCode' in outcome) {
      results.push({ name: request.name, ...outcome });
      continue;
    }
    records.push(...outcome);
    results.push({ name: request.name, errorCode: ErrorCode.NONE, errorMessage: null });
  }
  if (records.length > MAX_RECORDS_PER_USER_OP) {
    return result([], results.map((r) => (r.errorCode === ErrorCode.NONE ? { ...r, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE } : r)));
  }
  return result(options.validateOnly ? [] : records, results);
}

function createPartitionsOfTopic(context: ControllerContext, request: CreatePartitionsTopic, quota: PartitionChangeQuota | undefined): MetadataRecord[] | ApiError {
  const topic = context.image.topicsByName.get(request.name);
  if (topic === undefined) return defaultError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const current = topic.partitions.size;
  if (request.count === current) return { errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `Topic already has ${current} partition(s).` };
  if (request.count < current) {
    return { errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `The topic ${topic.name} currently has ${current} partition(s); ${request.count} would not be an increase.` };
  }
  const additional = request.count - current;
  const replicationFactor = topic.partitions.get(0)?.replicas.length ?? 1;
  let placement: number[][];
  if (request.assignments !== null && request.assignments.length !== additional) {
    return invalidAssignment(`Attempted to add ${additional} additional partition(s), but only ${request.assignments.length} assignment(s) were specified.`);
  }
  // Kafka's controller applies the quota here: after the count checks, before the assignments are validated or placed.
  if (quota !== undefined && !quota(additional)) return throttled();
  if (request.assignments !== null) {
    for (const assignment of request.assignments) {
      const problem = checkManualAssignment(context.image, assignment.brokerIds, replicationFactor);
      if (problem !== null) return problem;
    }
    placement = request.assignments.map((a) => [...a.brokerIds]);
  } else {
    try {
      placement = placeReplicas(context.image, { count: additional, replicationFactor, random: context.random });
    } catch (error) {
      if (!(error instanceof InvalidReplicationFactorError)) throw error;
      return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: `Unable to replicate the partition ${replicationFactor} time(s): ${error.message}` };
    }
  }
  return placement.map((replicas, i) => newPartitionRecord(context.image, topic.id, current + i, replicas));
}

// ---- leadership when brokers come and go

/**
 * Which broker leaves the ISR and leadership of the partitions (brokerToRemove,
 * never an acceptable leader) and which may lead although the image still
 * shows it fenced (brokerToAdd, being unfenced by the same records).
 * brokerWithUncleanShutdown leaves the ISR, the ELR and leadership (KIP-966).
 * NO_LEADER for none.
 */
export interface LeaderAndIsrChange {
  brokerToRemove: number;
  brokerToAdd: number;
  brokerWithUncleanShutdown?: number;
}

/**
 * Kafka's generateLeaderAndIsrUpdates: one PartitionChangeRecord per
 * partition whose ISR, ELR or leader changes (partition-change.ts).
 */
export function generateLeaderAndIsrUpdates(context: ControllerContext, change: LeaderAndIsrChange, partitions: Iterable<PartitionRegistration>): MetadataRecord[] {
  const records: MetadataRecord[] = [];
  const unclean = change.brokerWithUncleanShutdown ?? NO_LEADER;
  const isAcceptableLeader = (replica: number): boolean =>
    replica !== change.brokerToRemove && replica !== unclean && (replica === change.brokerToAdd || isActive(context.image, replica));
  for (const partition of partitions) {
    const data = buildPartitionChange(partition, {
      ...partitionChangeOptions(context, partition),
      isAcceptableLeader,
      election: uncleanLeaderElectionEnabled(context, partition.topicName) ? Election.UNCLEAN : Election.ONLINE,
      targetIsr: partition.isr.filter((replica) => replica !== change.brokerToRemove && replica !== unclean),
      ...(unclean !== NO_LEADER ? { uncleanShutdownReplicas: [unclean] } : {}),
    });
    if (data !== null) records.push(partitionChangeRecord(data));
  }
  return records;
}

/** Kafka's LeaderRecoveryState.RECOVERING: an unclean leader recovers before it takes followers. */
export const LEADER_RECOVERY_RECOVERING = LeaderRecoveryState.RECOVERING;

/** unclean.leader.election.enable of a topic: its override, else the cluster's dynamic default, else the static config. */
export function uncleanLeaderElectionEnabled(context: ControllerContext, topicName: string): boolean {
  const name = 'unclean.leader.election.enable';
  const value = context.image.topicsByName.get(topicName)?.configs.get(name) ?? context.image.brokerConfigs.get('')?.get(name);
  return value !== undefined ? value === 'true' : context.config.bool(name);
}

/** The partitions whose ISR holds the broker (Kafka's BrokersToIsrs.partitionsWithBrokerInIsr). */
export function partitionsWithBrokerInIsr(image: MetadataImage, brokerId: number): PartitionRegistration[] {
  return [...allPartitions(image)].filter((partition) => partition.isr.includes(brokerId));
}

/** The partitions whose ELR holds the broker (Kafka's BrokersToElrs.partitionsWithBrokerInElr). */
export function partitionsWithBrokerInElr(image: MetadataImage, brokerId: number): PartitionRegistration[] {
  return [...allPartitions(image)].filter((partition) => partition.elr.includes(brokerId));
}

/** The partitions without a leader. */
export function partitionsWithNoLeader(image: MetadataImage): PartitionRegistration[] {
  return [...allPartitions(image)].filter((partition) => partition.leader === NO_LEADER);
}

/** True while the broker leads some partition (controlled shutdown waits for none). */
export function hasLeaderships(image: MetadataImage, brokerId: number): boolean {
  for (const partition of allPartitions(image)) if (partition.leader === brokerId) return true;
  return false;
}

function* allPartitions(image: MetadataImage): Generator<PartitionRegistration> {
  for (const topic of image.topicsById.values()) yield* topic.partitions.values();
}

// ---- AlterPartition

export interface AlterPartitionRequest {
  brokerId: number;
  brokerEpoch: number;
  topics: readonly {
    topicId: string;
    partitions: readonly {
      partitionIndex: number;
      leaderEpoch: number;
      /** The proposed ISR with each member's broker epoch (-1: not checked, as AlterPartition v2 sends). */
      newIsrWithEpochs: readonly { brokerId: number; brokerEpoch: number }[];
      leaderRecoveryState: number;
      partitionEpoch: number;
    }[];
  }[];
}

export interface AlterPartitionPartitionResult {
  partitionIndex: number;
  errorCode: number;
  leaderId: number;
  leaderEpoch: number;
  isr: number[];
  leaderRecoveryState: number;
  partitionEpoch: number;
}

export interface AlterPartitionReply {
  errorCode: number;
  topics: { topicId: string; partitions: AlterPartitionPartitionResult[] }[];
}

/**
 * Kafka's ReplicationControlManager.alterPartition: a leader proposes a new
 * ISR for partitions it leads. The broker epoch must be the sender's
 * current one (else STALE_BROKER_EPOCH for the whole request). Each
 * partition is checked as Kafka's validateAlterPartitionData does: a newer
 * leader or partition epoch than the controller knows means this controller
 * is behind (NOT_CONTROLLER), an older leader epoch FENCED_LEADER_EPOCH, an
 * older partition epoch INVALID_UPDATE_VERSION; the ISR must be replicas
 * without repeats and hold the leader (INVALID_REQUEST); a proposed member
 * that is fenced, shutting down or registered with another epoch is
 * INELIGIBLE_REPLICA. An accepted change is one PartitionChangeRecord (the
 * partition epoch moves on replay) and the answer carries the partition as
 * it will be. On a reassigning partition the change may complete the
 * reassignment (partition-change.ts), and NEW_LEADER_ELECTED answers a
 * sender that lost the leadership by it.
 */
export function alterPartition(context: ControllerContext, request: AlterPartitionRequest): ControllerResult<AlterPartitionReply> {
  const broker = context.image.brokers.get(request.brokerId);
  if (broker === undefined || broker.epoch !== request.brokerEpoch) {
    return result([], { errorCode: ErrorCode.STALE_BROKER_EPOCH, topics: [] });
  }
  const records: MetadataRecord[] = [];
  const topics: AlterPartitionReply['topics'] = [];
  for (const topicRequest of request.topics) {
    const topic = context.image.topicsById.get(topicRequest.topicId);
    const partitions: AlterPartitionPartitionResult[] = [];
    topics.push({ topicId: topicRequest.topicId, partitions });
    for (const data of topicRequest.partitions) {
      if (topic === undefined) {
        partitions.push(alterPartitionError(data.partitionIndex, ErrorCode.UNKNOWN_TOPIC_ID));
        continue;
      }
      const partition = topic.partitions.get(data.partitionIndex);
      const errorCode = validateAlterPartitionData(context.image, request.brokerId, partition, data);
      if (errorCode !== ErrorCode.NONE || partition === undefined) {
        partitions.push(alterPartitionError(data.partitionIndex, errorCode));
        continue;
      }
      const outcome = alterPartitionChange(context, partition, data);
      records.push(...outcome.records);
      partitions.push(outcome.response);
    }
  }
  return result(records, { errorCode: ErrorCode.NONE, topics });
}

function validateAlterPartitionData(
  image: MetadataImage,
  brokerId: number,
  partition: PartitionRegistration | undefined,
  data: AlterPartitionRequest['topics'][number]['partitions'][number],
): number {
  if (partition === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  // A leader ahead of this controller means another controller has newer metadata.
  if (data.leaderEpoch > partition.leaderEpoch || data.partitionEpoch > partition.partitionEpoch) return ErrorCode.NOT_CONTROLLER;
  if (data.leaderEpoch < partition.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
  if (brokerId !== partition.leader) return ErrorCode.INVALID_REQUEST;
  if (data.partitionEpoch < partition.partitionEpoch) return ErrorCode.INVALID_UPDATE_VERSION;
  const newIsr = data.newIsrWithEpochs.map((member) => member.brokerId);
  if (new Set(newIsr).size !== newIsr.length || !newIsr.every((replica) => partition.replicas.includes(replica))) return ErrorCode.INVALID_REQUEST;
  if (!newIsr.includes(partition.leader)) return ErrorCode.INVALID_REQUEST;
  if (data.leaderRecoveryState === LeaderRecoveryState.RECOVERING && newIsr.length > 1) return ErrorCode.INVALID_REQUEST;
  // A RECOVERED partition may not go back to RECOVERING.
  if (data.leaderRecoveryState === LeaderRecoveryState.RECOVERING && leaderRecoveryStateOf(partition) === LeaderRecoveryState.RECOVERED) return ErrorCode.INVALID_REQUEST;
  const ineligible = data.newIsrWithEpochs.some((member) => {
    const registration = image.brokers.get(member.brokerId);
    if (registration === undefined || registration.fenced || registration.inControlledShutdown) return true;
    return member.brokerEpoch !== -1 && member.brokerEpoch !== registration.epoch;
  });
  return ineligible ? ErrorCode.INELIGIBLE_REPLICA : ErrorCode.NONE;
}

function alterPartitionError(partitionIndex: number, errorCode: number): AlterPartitionPartitionResult {
  return { partitionIndex, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 };
}
