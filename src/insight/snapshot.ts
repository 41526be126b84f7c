/**
 * The console's read side: one node's view of the cluster, as plain JSON
 * values (the contract `spool doctor` reads; keep the names). Each function
 * reads the node's rooms at the moment it is called and copies what it
 * shows; nothing is cached and nothing is written.
 *
 * Positions follow Kafka's words and DESIGN.md §1 (right-open intervals):
 * logStartOffset <= lastStableOffset <= highWatermark <= logEndOffset, all
 * of the local replica. The figures a Kafka admin reads over the wire come
 * from the same objects its handlers use: DescribeProducers from the
 * partition's producer state, DescribeQuorum from the Raft client,
 * ListTransactions / DescribeTransactions from the transaction coordinator,
 * ListGroups / DescribeGroups / ConsumerGroupDescribe / OffsetFetch from the
 * group coordinator.
 *
 * Bounded: topics, partitions and groups are as many as the node holds (the
 * image bounds them); segments listed per partition (SEGMENTS_LISTED_MAX),
 * transactional ids described (TRANSACTIONS_LISTED_MAX) and open
 * transactions per partition are capped, with the totals reported.
 */
import { Partition } from '../replication/partition.js';
import type { PartitionRegistration, TopicImage } from '../metadata/image.js';
import { errorName } from '../protocol/errors.js';
import { readBatchHeader } from '../protocol/records/batch.js';
import { decodeAssignment } from '../protocol/consumer-protocol.js';
import type { ConsoleSources } from './sources.js';

/** Segments listed per partition: the newest ones, with segmentCount giving the total. */
export const SEGMENTS_LISTED_MAX = 200;
/** Transactional ids described by /api/transactions. */
export const TRANSACTIONS_LISTED_MAX = 500;
/** Open transactions listed per partition. */
export const OPEN_TRANSACTIONS_LISTED_MAX = 100;
/** The internal topics Kafka marks internal in Metadata. */
const INTERNAL_TOPICS = new Set(['__consumer_offsets', '__transaction_state', '__share_group_state']);

/** A request the console cannot answer: an HTTP status, Kafka's error name where one applies, and a message. */
export interface ConsoleFailure {
  readonly failure: true;
  readonly status: number;
  readonly error: string;
  readonly message: string;
}

export function consoleFailure(status: number, error: string, message: string): ConsoleFailure {
  return { failure: true, status, error, message };
}

export function isFailure(value: unknown): value is ConsoleFailure {
  return typeof value === 'object' && value !== null && (value as { failure?: unknown }).failure === true;
}

// ---- overview

export function overview(sources: ConsoleSources) {
  const image = sources.metadata.image;
  return {
    nodeId: sources.nodeId,
    clusterId: image.clusterId,
    roles: [...sources.roles],
    metadataOffset: image.offset,
    actionsEnabled: sources.actionsEnabled,
    brokers: [...image.brokers.values()]
      .sort((a, b) => a.id - b.id)
      .map((broker) => ({
        id: broker.id,
        host: broker.listeners[0]?.host ?? null,
        port: broker.listeners[0]?.port ?? null,
        rack: broker.rack,
        fenced: broker.fenced,
        inControlledShutdown: broker.inControlledShutdown,
      })),
    quorum: quorum(sources),
  };
}

/**
 * The quorum as DescribeQuorum shows it when this node leads; elsewhere
 * what a follower or observer knows: the leader, the epoch, its high
 * watermark, and the voters without positions (-1, as DescribeQuorum marks
 * an unknown one).
 */
function quorum(sources: ConsoleSources) {
  const raft = sources.quorum;
  if (raft === null) return null;
  const described = raft.describeQuorum().topics?.[0]?.partitions?.[0];
  const replica = (state: { replicaId?: number; logEndOffset?: number; lastFetchTimestamp?: number; lastCaughtUpTimestamp?: number }) => ({
    id: state.replicaId ?? -1,
    logEndOffset: state.logEndOffset ?? -1,
    lastFetchTimestamp: state.lastFetchTimestamp ?? -1,
    lastCaughtUpTimestamp: state.lastCaughtUpTimestamp ?? -1,
  });
  if (described !== undefined && described.errorCode === 0) {
    return {
      leaderId: described.leaderId ?? -1,
      leaderEpoch: described.leaderEpoch ?? -1,
      highWatermark: described.highWatermark ?? -1,
      voters: (described.currentVoters ?? []).map(replica),
      observers: (described.observers ?? []).map(replica),
    };
  }
  const { leaderId, epoch } = raft.leaderAndEpoch;
  return {
    leaderId: leaderId ?? -1,
    leaderEpoch: epoch,
    highWatermark: raft.highWatermark ?? -1,
    voters: raft.voterIds().map((id) => replica({ replicaId: id })),
    observers: [],
  };
}

// ---- topics

export function topics(sources: ConsoleSources) {
  return [...sources.metadata.image.topicsByName.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((topic) => {
      const registrations = [...topic.partitions.values()];
      return {
        name: topic.name,
        topicId: topic.id,
        partitions: registrations.length,
        replicationFactor: registrations[0]?.replicas.length ?? 0,
        internal: INTERNAL_TOPICS.has(topic.name),
        /** How many of its partitions have an ISR smaller than their replica set. */
        underReplicated: registrations.filter((r) => r.isr.length < r.replicas.length).length,
        /** How many have no leader. */
        offline: registrations.filter((r) => r.leader === -1).length,
      };
    });
}

export function topic(sources: ConsoleSources, name: string) {
  const found = sources.metadata.image.topicsByName.get(name);
  if (found === undefined) return unknownTopic(name);
  return {
    name: found.name,
    topicId: found.id,
    internal: INTERNAL_TOPICS.has(found.name),
    configs: Object.fromEntries([...found.configs].sort(([a], [b]) => a.localeCompare(b))),
    partitions: [...found.partitions.values()].sort((a, b) => a.partition - b.partition).map((registration) => partitionEntry(sources, registration)),
  };
}

function unknownTopic(name: string): ConsoleFailure {
  return consoleFailure(404, 'UNKNOWN_TOPIC_OR_PARTITION', `unknown topic ${name}`);
}

/** A partition's registration (image) and, when this node hosts a replica, its positions. */
function partitionEntry(sources: ConsoleSources, registration: PartitionRegistration) {
  const hosted = hostedPartition(sources, registration.topicName, registration.partition);
  return {
    partition: registration.partition,
    leader: registration.leader,
    leaderEpoch: registration.leaderEpoch,
    partitionEpoch: registration.partitionEpoch,
    replicas: [...registration.replicas],
    isr: [...registration.isr],
    elr: [...registration.elr],
    lastKnownElr: [...registration.lastKnownElr],
    addingReplicas: [...registration.addingReplicas],
    removingReplicas: [...registration.removingReplicas],
    local: hosted === null ? null : localPositions(hosted),
  };
}

function localPositions(partition: Partition) {
  return {
    role: partition.isLeader ? 'leader' : 'follower',
    logStartOffset: partition.logStartOffset,
    lastStableOffset: partition.lastStableOffset(),
    highWatermark: partition.highWatermark,
    logEndOffset: partition.log.logEndOffset,
    sizeBytes: partition.log.sizeBytes,
  };
}

/** The replica this node hosts (online), or null. */
export function hostedPartition(sources: ConsoleSources, topicName: string, partitionIndex: number): Partition | null {
  const found = sources.broker?.replicaManager.getPartitionOrError({ topic: topicName, partition: partitionIndex });
  return found instanceof Partition ? found : null;
}

export function registrationOf(sources: ConsoleSources, topicName: string, partitionIndex: number): PartitionRegistration | ConsoleFailure {
  const found: TopicImage | undefined = sources.metadata.image.topicsByName.get(topicName);
  if (found === undefined) return unknownTopic(topicName);
  const registration = found.partitions.get(partitionIndex);
  if (registration === undefined) return consoleFailure(404, 'UNKNOWN_TOPIC_OR_PARTITION', `unknown partition ${topicName}-${partitionIndex}`);
  return registration;
}

// ---- one partition

export async function partitionDetail(sources: ConsoleSources, topicName: string, partitionIndex: number) {
  const registration = registrationOf(sources, topicName, partitionIndex);
  if (isFailure(registration)) return registration;
  const entry = partitionEntry(sources, registration);
  const hosted = hostedPartition(sources, topicName, partitionIndex);
  if (hosted === null) return { ...entry, topic: topicName, replicaStates: null, segmentCount: 0, segments: [], producers: [], openTransactions: [] };
  return {
    ...entry,
    topic: topicName,
    replicaStates: hosted.isLeader ? replicaStates(sources, hosted) : null,
    segmentCount: hosted.log.logSegments.length,
    segments: await segments(hosted),
    producers: producers(hosted),
    openTransactions: await openTransactions(sources, hosted),
  };
}

/** Each replica's position as the leader sees it (from the followers' fetches); its own is its log end. */
function replicaStates(sources: ConsoleSources, partition: Partition) {
  const nowMs = sources.nowMs();
  return partition.replicas.map((brokerId) => {
    const inIsr = partition.isr.has(brokerId);
    if (brokerId === sources.nodeId) {
      return { brokerId, logStartOffset: partition.logStartOffset, logEndOffset: partition.log.logEndOffset, lastCaughtUpTimeMs: nowMs, lastFetchTimeMs: nowMs, inIsr };
    }
    const remote = partition.remoteReplicas.get(brokerId);
    return {
      brokerId,
      logStartOffset: remote?.logStartOffset ?? -1,
      logEndOffset: remote?.logEndOffset ?? -1,
      lastCaughtUpTimeMs: remote?.lastCaughtUpTimeMs ?? -1,
      lastFetchTimeMs: remote?.lastFetchTimeMs ?? -1,
      inIsr,
    };
  });
}

/** The newest SEGMENTS_LISTED_MAX segments, oldest first: base offset, size, index entries and time range. */
async function segments(partition: Partition) {
  const all = partition.log.logSegments;
  const listed = all.slice(Math.max(0, all.length - SEGMENTS_LISTED_MAX));
  return Promise.all(
    listed.map(async (segment) => ({
      baseOffset: segment.baseOffset,
      sizeBytes: segment.sizeBytes,
      offsetIndexEntries: segment.offsetIndex.entries,
      timeIndexEntries: segment.timeIndex.entries,
      firstTimestamp: (await segment.firstBatch())?.baseTimestamp ?? -1,
      maxTimestamp: segment.maxTimestampSoFar,
      nextOffset: await segment.readNextOffset(),
    })),
  );
}

/** The active producers, as DescribeProducers answers them. */
function producers(partition: Partition) {
  return [...partition.producerState.activeProducers().values()].map((entry) => ({
    producerId: entry.producerId,
    producerEpoch: entry.producerEpoch,
    lastSequence: entry.lastSeq,
    lastTimestamp: entry.lastTimestampMs,
    coordinatorEpoch: entry.coordinatorEpoch,
    currentTxnStartOffset: entry.currentTxnFirstOffset ?? -1,
  }));
}

/**
 * The transactions open in this log, oldest first: what holds the last
 * stable offset back. The age counts from the timestamp of the batch at the
 * transaction's first offset (-1 when that batch is gone from the log).
 */
async function openTransactions(sources: ConsoleSources, partition: Partition) {
  const open = [...partition.producerState.activeProducers().values()]
    .filter((entry) => entry.currentTxnFirstOffset !== null)
    .sort((a, b) => a.currentTxnFirstOffset! - b.currentTxnFirstOffset!)
    .slice(0, OPEN_TRANSACTIONS_LISTED_MAX);
  const nowMs = sources.nowMs();
  return Promise.all(
    open.map(async (entry) => {
      const firstOffset = entry.currentTxnFirstOffset!;
      const startTimestamp = await batchTimestampAt(partition, firstOffset);
      return {
        producerId: entry.producerId,
        producerEpoch: entry.producerEpoch,
        firstOffset,
        lastTimestamp: entry.lastTimestampMs,
        startTimestamp,
        ageMs: startTimestamp < 0 ? -1 : nowMs - startTimestamp,
        holdsLastStableOffset: firstOffset === partition.lastStableOffset(),
      };
    }),
  );
}

async function batchTimestampAt(partition: Partition, offset: number): Promise<number> {
  if (offset < partition.logStartOffset || offset >= partition.log.logEndOffset) return -1;
  const read = await partition.log.read(offset, { maxBytes: 1, minOneMessage: true });
  return read.records.length === 0 ? -1 : readBatchHeader(read.records).baseTimestamp;
}

// ---- groups

export function groups(sources: ConsoleSources) {
  const coordinator = sources.broker?.groupCoordinator;
  if (coordinator === undefined) return [];
  const listed = coordinator.listGroups([], []);
  // A shard still loading fails ListGroups as a whole (COORDINATOR_LOAD_IN_PROGRESS): say so rather than list part.
  if (listed.errorCode !== 0) return consoleFailure(503, errorName(listed.errorCode), `node ${sources.nodeId} cannot list its groups yet`);
  return listed.groups
    .sort((a, b) => a.groupId.localeCompare(b.groupId))
    .map((group) => ({
      groupId: group.groupId,
      protocol: group.groupType === 'consumer' ? 'consumer' : 'classic',
      protocolType: group.protocolType,
      state: group.groupState,
      members: memberCount(sources, group.groupId, group.groupType),
    }));
}

function memberCount(sources: ConsoleSources, groupId: string, groupType: string): number {
  const coordinator = sources.broker!.groupCoordinator;
  if (groupType === 'consumer') return coordinator.consumerGroupDescribe([groupId])[0]?.members.length ?? 0;
  return coordinator.describeGroups([groupId], 6)[0]?.members.length ?? 0;
}

interface GroupMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  memberEpoch: number | null;
  assignment: { topic: string; partitions: number[] }[];
}

/** DescribeGroups v6 (GROUP_ID_NOT_FOUND for a missing group, KIP-1043). */
const DESCRIBE_GROUPS_VERSION = 6;

export function groupDetail(sources: ConsoleSources, groupId: string) {
  const coordinator = sources.broker?.groupCoordinator;
  if (coordinator === undefined) return consoleFailure(404, 'GROUP_ID_NOT_FOUND', `node ${sources.nodeId} has no group coordinator`);
  const all = coordinator.listGroups([], []);
  if (all.errorCode !== 0) return consoleFailure(503, errorName(all.errorCode), `node ${sources.nodeId} cannot list its groups yet`);
  const listed = all.groups.find((group) => group.groupId === groupId);
  if (listed === undefined) return consoleFailure(404, 'GROUP_ID_NOT_FOUND', `group ${groupId} is not coordinated by node ${sources.nodeId}`);
  const protocol = listed.groupType === 'consumer' ? 'consumer' : 'classic';
  const described = protocol === 'consumer' ? consumerMembers(sources, groupId) : classicMembers(sources, groupId);
  return {
    groupId,
    protocol,
    protocolType: listed.protocolType,
    state: listed.groupState,
    coordinatorPartition: coordinator.partitionFor(groupId),
    ...described,
    offsets: groupOffsets(sources, groupId, described.members),
  };
}

function classicMembers(sources: ConsoleSources, groupId: string): { assignor: string; groupEpoch: number | null; members: GroupMember[] } {
  const group = sources.broker!.groupCoordinator.describeGroups([groupId], DESCRIBE_GROUPS_VERSION)[0]!;
  const members = group.members.map((member) => ({
    memberId: member.memberId,
    groupInstanceId: member.groupInstanceId,
    clientId: member.clientId,
    clientHost: member.clientHost,
    memberEpoch: null,
    // Only the consumer protocol's assignments have a known layout (ConsumerProtocolAssignment).
    assignment: group.protocolType === 'consumer' && member.memberAssignment.length > 0 ? (decodeAssignment(member.memberAssignment)?.assignedPartitions ?? []).map((a) => ({ topic: a.topic, partitions: [...a.partitions] })) : [],
  }));
  return { assignor: group.protocolData, groupEpoch: null, members };
}

function consumerMembers(sources: ConsoleSources, groupId: string): { assignor: string; groupEpoch: number | null; members: GroupMember[] } {
  const group = sources.broker!.groupCoordinator.consumerGroupDescribe([groupId])[0]!;
  const members = group.members.map((member) => ({
    memberId: member.memberId,
    groupInstanceId: member.instanceId,
    clientId: member.clientId,
    clientHost: member.clientHost,
    memberEpoch: member.memberEpoch,
    assignment: member.assignment.topicPartitions.map((tp) => ({ topic: tp.topicName, partitions: [...tp.partitions] })),
  }));
  return { assignor: group.assignorName, groupEpoch: group.groupEpoch, members };
}

/**
 * Committed offsets and lag for every partition the group has an offset for
 * or a member owns, as kafka-consumer-groups --describe shows them. Lag is
 * the high watermark minus the committed offset, where this node hosts the
 * partition (null elsewhere, or with no committed offset).
 */
function groupOffsets(sources: ConsoleSources, groupId: string, members: readonly GroupMember[]) {
  const fetched = sources.broker!.groupCoordinator.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null, requireStable: false });
  const rows = new Map<string, { topic: string; partition: number; committedOffset: number | null; metadata: string | null; memberId: string | null; clientId: string | null }>();
  const key = (topicName: string, partition: number) => `${topicName}\u0000${partition}`;
  for (const fetchedTopic of fetched.topics) {
    for (const p of fetchedTopic.partitions) {
      if (p.committedOffset < 0) continue;
      rows.set(key(fetchedTopic.name, p.partitionIndex), { topic: fetchedTopic.name, partition: p.partitionIndex, committedOffset: p.committedOffset, metadata: p.metadata, memberId: null, clientId: null });
    }
  }
  for (const member of members) {
    for (const owned of member.assignment) {
      for (const partition of owned.partitions) {
        const row = rows.get(key(owned.topic, partition)) ?? { topic: owned.topic, partition, committedOffset: null, metadata: null, memberId: null, clientId: null };
        rows.set(key(owned.topic, partition), { ...row, memberId: member.memberId, clientId: member.clientId });
      }
    }
  }
  return [...rows.values()]
    .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
    .map((row) => {
      const hosted = hostedPartition(sources, row.topic, row.partition);
      const highWatermark = hosted?.highWatermark ?? null;
      const lag = highWatermark === null || row.committedOffset === null ? null : Math.max(0, highWatermark - row.committedOffset);
      return { ...row, logStartOffset: hosted?.logStartOffset ?? null, highWatermark, lag };
    });
}

// ---- transactions

export async function transactions(sources: ConsoleSources) {
  const broker = sources.broker;
  if (broker === null) return { transactionalIds: [], transactionalIdCount: 0, openTransactions: [] };
  const listed = broker.transactionCoordinator.listTransactions({ states: [], producerIds: [], durationMs: -1, transactionalIdPattern: null });
  const described = listed.transactionStates
    .sort((a, b) => a.transactionalId.localeCompare(b.transactionalId))
    .slice(0, TRANSACTIONS_LISTED_MAX)
    .map((listing) => broker.transactionCoordinator.describeTransaction(listing.transactionalId))
    .map((txn) => ({
      transactionalId: txn.transactionalId,
      errorCode: txn.errorCode === 0 ? null : errorName(txn.errorCode),
      state: txn.transactionState,
      producerId: txn.producerId,
      producerEpoch: txn.producerEpoch,
      transactionTimeoutMs: txn.transactionTimeoutMs,
      transactionStartTimeMs: txn.transactionStartTimeMs,
      partitions: txn.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
    }));
  const open = [];
  for (const partition of broker.replicaManager.hostedPartitions()) {
    if (!partition.isLeader || partition.log.isOffline) continue;
    for (const txn of await openTransactions(sources, partition)) {
      open.push({ topic: partition.topicPartition.topic, partition: partition.topicPartition.partition, lastStableOffset: partition.lastStableOffset(), highWatermark: partition.highWatermark, ...txn });
    }
  }
  open.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition || a.firstOffset - b.firstOffset);
  return { transactionalIds: described, transactionalIdCount: listed.transactionStates.length, openTransactions: open };
}
