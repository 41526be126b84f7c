/**
 * The checks of `spool doctor`, one named function per link of the chain
 * the Kafka literature teaches (a record is appended at the leader, copied
 * by the ISR, made visible by the high watermark, made readable to
 * read_committed consumers by the last stable offset, consumed and
 * committed by a group):
 *
 *   checkMinInsyncReplicas     produce not acknowledged: ISR below min.insync.replicas
 *   checkReplicationThrottles  leader/follower.replication.throttled.rate in force
 *   checkStuckHighWatermark    log end offset beyond a high watermark that does not move: which follower
 *   checkOpenTransactions      last stable offset held below the high watermark: which producer, how old
 *   checkConsumerLag           lag grows: no members, commits not moving, or consumers slower than producers
 *   checkRebalances            a group, or a KIP-848 member, stuck in a rebalance
 *   checkUnderReplicated       ISR smaller than the replica set
 *   checkOfflinePartitions     no leader
 *   checkOfflineLogDirs        a log directory DescribeLogDirs reports with an error
 *   checkFencedBrokers         a registered broker that is fenced, or a replica on a broker not registered
 *   checkUnreachableBrokers    an unfenced broker this client cannot connect to
 *   checkControllerQuorum      the KRaft quorum without a leader, or unreachable
 *
 * Checks that compare two samples (first, second: a sampling window apart)
 * judge movement only on partitions whose leader and leader epoch did not
 * change in between.
 */
import type { Admin } from '../client/admin.js';
import { KafkaError } from '../client/errors.js';
import type { MemberDescription } from '../client/group-admin.js';
import { errorInfo } from '../protocol/errors.js';
import { topicPartitionKey, type TopicPartition } from '../protocol/topic-partition.js';
import type { Finding } from './doctor-findings.js';
import type { GroupSample, PartitionSample, Sample } from './doctor-sample.js';

/** A topic's effective configs that the checks read. */
export interface TopicConfigs {
  minInsyncReplicas: number;
  leaderThrottledReplicas: string;
  followerThrottledReplicas: string;
}

/** A broker's configs that the checks read (null when the broker could not be asked). */
export interface BrokerConfigs {
  brokerId: number;
  consoleListener: string | null;
  leaderThrottledRate: string | null;
  followerThrottledRate: string | null;
}

/** A follower as the partition leader sees it (the web console's replicaStates). */
export interface ReplicaState {
  brokerId: number;
  logEndOffset: number;
  /** Wall-clock times of the follower's last caught-up fetch and last fetch (-1: none yet). */
  lastCaughtUpTimeMs: number;
  lastFetchTimeMs?: number;
  inIsr: boolean;
}

/** Where a follower's position is read from, for checkStuckHighWatermark. */
export interface ReplicaViews {
  /** The leader's view of its followers, or null (with the reason) when it cannot be had. */
  leaderView(partition: PartitionSample): Promise<{ replicas: ReplicaState[]; nowMs: number } | { unavailable: string }>;
  /** A follower's own log end offset (Kafka's debugging ListOffsets to that broker), or the error that kept it. */
  followerLogEnd(partition: PartitionSample, brokerId: number): Promise<number | string>;
}

const key = topicPartitionKey;

function samePartitionLeader(a: PartitionSample, b: PartitionSample): boolean {
  return a.leader === b.leader && a.leaderEpoch === b.leaderEpoch && a.leader >= 0;
}

/** Pairs of a partition's samples with an unchanged leader. */
function steadyPartitions(first: Sample, second: Sample): { before: PartitionSample; after: PartitionSample }[] {
  const pairs: { before: PartitionSample; after: PartitionSample }[] = [];
  for (const [k, after] of second.partitions) {
    const before = first.partitions.get(k);
    if (before !== undefined && samePartitionLeader(before, after)) pairs.push({ before, after });
  }
  return pairs;
}

export function checkOfflinePartitions(sample: Sample): Finding[] {
  return [...sample.partitions.values()].filter((p) => p.leader < 0).map((p) => ({
    check: 'offline-partition',
    severity: 'critical',
    subject: key(p),
    message: 'the partition has no leader: it can be neither written nor read',
    evidence: { leader: p.leader, replicas: p.replicas, isr: p.isr },
  }));
}

export function checkUnderReplicated(sample: Sample): Finding[] {
  return [...sample.partitions.values()].filter((p) => p.leader >= 0 && p.isr.length < p.replicas.length).map((p) => ({
    check: 'under-replicated',
    severity: 'warning',
    subject: key(p),
    message: `${p.replicas.length - p.isr.length} of ${p.replicas.length} replicas are out of the ISR`,
    evidence: { leader: p.leader, replicas: p.replicas, isr: p.isr, outOfSync: p.replicas.filter((id) => !p.isr.includes(id)) },
  }));
}

export function checkMinInsyncReplicas(sample: Sample, topicConfigs: ReadonlyMap<string, TopicConfigs>): Finding[] {
  const findings: Finding[] = [];
  for (const p of sample.partitions.values()) {
    const minInsyncReplicas = topicConfigs.get(p.topic)?.minInsyncReplicas;
    if (minInsyncReplicas === undefined || p.leader < 0 || p.isr.length >= minInsyncReplicas) continue;
    findings.push({
      check: 'min-insync-replicas',
      severity: 'critical',
      subject: key(p),
      message: `ISR of ${p.isr.length} is below min.insync.replicas=${minInsyncReplicas}: produce with acks=all fails with NOT_ENOUGH_REPLICAS`,
      evidence: { leader: p.leader, isr: p.isr, replicas: p.replicas, minInsyncReplicas },
    });
  }
  return findings;
}

function throttleSet(value: string | null): value is string {
  return value !== null && value !== '' && value !== '9223372036854775807' && value !== 'Infinity';
}

/** Whether a throttled-replicas list (`*`, or `partition:broker` items) names `brokerId`'s replica of `partition`. */
function listsReplica(list: string, partition: number, brokerId: number): boolean {
  const items = list.split(',').map((item) => item.trim());
  return items.includes('*') || items.includes(`${partition}:${brokerId}`);
}

/**
 * Out-of-sync partitions whose catch-up a broker's throttle holds back: as
 * leader, those its topic's leader.replication.throttled.replicas lists for
 * it; as the out-of-sync follower, those follower.replication.throttled.replicas
 * lists for it (KIP-73: a rate applies only to the replicas listed).
 */
function heldBack(sample: Sample, topicConfigs: ReadonlyMap<string, TopicConfigs>, broker: BrokerConfigs): { asLeader: string[]; asFollower: string[] } {
  const asLeader: string[] = [];
  const asFollower: string[] = [];
  for (const p of sample.partitions.values()) {
    const configs = topicConfigs.get(p.topic);
    if (configs === undefined || p.leader < 0 || p.isr.length >= p.replicas.length) continue;
    if (throttleSet(broker.leaderThrottledRate) && p.leader === broker.brokerId && listsReplica(configs.leaderThrottledReplicas, p.partition, broker.brokerId)) asLeader.push(key(p));
    const outOfSync = p.replicas.includes(broker.brokerId) && !p.isr.includes(broker.brokerId);
    if (throttleSet(broker.followerThrottledRate) && outOfSync && listsReplica(configs.followerThrottledReplicas, p.partition, broker.brokerId)) asFollower.push(key(p));
  }
  return { asLeader, asFollower };
}

/**
 * A broker with a replication rate set. Warning where the rate applies to
 * a partition out of sync (the broker leads it and its topic lists it in
 * leader.replication.throttled.replicas, or the broker is the out-of-sync
 * follower listed in follower.replication.throttled.replicas): the
 * throttle slows that replica's catch-up. Info otherwise.
 */
export function checkReplicationThrottles(sample: Sample, topicConfigs: ReadonlyMap<string, TopicConfigs>, brokers: readonly BrokerConfigs[]): Finding[] {
  const throttledTopics = [...topicConfigs].filter(([, c]) => c.leaderThrottledReplicas !== '' || c.followerThrottledReplicas !== '').map(([topic]) => topic);
  const findings: Finding[] = [];
  for (const broker of brokers) {
    if (!throttleSet(broker.leaderThrottledRate) && !throttleSet(broker.followerThrottledRate)) continue;
    const { asLeader, asFollower } = heldBack(sample, topicConfigs, broker);
    const behind = asLeader.length + asFollower.length > 0;
    findings.push({
      check: 'replication-throttle',
      severity: behind ? 'warning' : 'info',
      subject: `broker ${broker.brokerId}`,
      message: behind
        ? `a replication throttle is in force on partitions out of sync: it slows their catch-up (${[...new Set([...asLeader, ...asFollower])].join(', ')})`
        : `a replication throttle is in force${throttledTopics.length === 0 ? ', though no topic lists throttled replicas' : ''}; no partition it throttles is out of sync`,
      evidence: {
        leaderReplicationThrottledRate: broker.leaderThrottledRate,
        followerReplicationThrottledRate: broker.followerThrottledRate,
        throttledTopics,
        heldBackAsLeader: asLeader,
        heldBackAsFollower: asFollower,
      },
    });
  }
  return findings;
}

/** The ISR followers that hold the high watermark back, with their offsets as evidence. */
async function laggingFollowers(after: PartitionSample, views: ReplicaViews, gaps: string[]): Promise<{ ids: number[]; evidence: string[] }> {
  const highWatermark = after.highWatermark!;
  const view = await views.leaderView(after);
  if ('replicas' in view) {
    const ago = (timeMs: number | undefined) => (timeMs === undefined || timeMs <= 0 ? 'never' : String(view.nowMs - timeMs));
    const lagging = view.replicas.filter((r) => r.brokerId !== after.leader && r.inIsr && r.logEndOffset <= highWatermark);
    return {
      ids: lagging.map((r) => r.brokerId),
      evidence: lagging.map((r) => `${r.brokerId}:logEndOffset=${r.logEndOffset},caughtUpAgoMs=${ago(r.lastCaughtUpTimeMs)},lastFetchAgoMs=${ago(r.lastFetchTimeMs)}(leader's view)`),
    };
  }
  gaps.push(`stuck-high-watermark ${key(after)}: the leader's view of its followers needs console.listener on broker ${after.leader} (${view.unavailable}); used each follower's own log end offset`);
  const ids: number[] = [];
  const evidence: string[] = [];
  for (const brokerId of after.isr.filter((id) => id !== after.leader)) {
    const logEnd = await views.followerLogEnd(after, brokerId);
    if (typeof logEnd === 'number' && logEnd > highWatermark) continue;
    ids.push(brokerId);
    evidence.push(typeof logEnd === 'number' ? `${brokerId}:logEndOffset=${logEnd}` : `${brokerId}:unreachable(${logEnd})`);
  }
  return { ids, evidence };
}

/**
 * Records the leader had at the first sample are still above the high
 * watermark at the second: an ISR follower does not copy them (and
 * acks=all produce waits for it). Names the follower at or below the high
 * watermark.
 */
export async function checkStuckHighWatermark(first: Sample, second: Sample, views: ReplicaViews, gaps: string[]): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const { before, after } of steadyPartitions(first, second)) {
    if (before.logEndOffset === null || after.highWatermark === null || before.highWatermark === null) continue;
    if (after.highWatermark >= before.logEndOffset) continue;
    const lagging = await laggingFollowers(after, views, gaps);
    const who = lagging.ids.length === 0 ? 'no ISR follower was found behind it' : `follower${lagging.ids.length > 1 ? 's' : ''} ${lagging.ids.join(', ')} in the ISR lag${lagging.ids.length > 1 ? '' : 's'}`;
    findings.push({
      check: 'stuck-high-watermark',
      severity: 'warning',
      subject: key(after),
      message: `the log end offset grows but the high watermark is stuck at ${after.highWatermark}: ${who}; acks=all produce waits for it`,
      evidence: {
        leader: after.leader,
        isr: after.isr,
        highWatermark: `${before.highWatermark}->${after.highWatermark}`,
        logEndOffset: `${before.logEndOffset}->${after.logEndOffset ?? 'unknown'}`,
        laggingFollowers: lagging.ids,
        followers: lagging.evidence,
      },
    });
  }
  return findings;
}

/** The transactional id owning `producerId`, its state and start time, if a coordinator knows it. */
async function transactionOf(admin: Admin, producerId: number): Promise<{ transactionalId: string; state: string; transactionStartTimeMs: number | null; transactionTimeoutMs: number } | null> {
  const listed = [...(await admin.listTransactions({ producerIds: [producerId] })).values()].flat().find((t) => t.producerId === producerId);
  if (listed === undefined) return null;
  const described = await admin.describeTransaction(listed.transactionalId).catch((error: unknown) => {
    if (error instanceof KafkaError) return null;
    throw error;
  });
  return {
    transactionalId: listed.transactionalId,
    state: described?.state ?? listed.state,
    transactionStartTimeMs: described?.transactionStartTimeMs ?? null,
    transactionTimeoutMs: described?.transactionTimeoutMs ?? -1,
  };
}

/**
 * The last stable offset stays below the high watermark through the
 * window: an open transaction holds it (read_committed consumers stop
 * there). DescribeProducers at the leader names the producer whose
 * current transaction starts at the LSO; ListTransactions and
 * DescribeTransactions its transactional id, when a coordinator knows it
 * (else it is a hanging transaction, for `spool transactions abort`).
 */
export async function checkOpenTransactions(admin: Admin, first: Sample, second: Sample): Promise<Finding[]> {
  const findings: Finding[] = [];
  const nowMs = admin.cluster.env.clock.nowMs();
  for (const { before, after } of steadyPartitions(first, second)) {
    const { lastStableOffset, highWatermark } = after;
    if (lastStableOffset === null || highWatermark === null || lastStableOffset >= highWatermark) continue;
    if (before.lastStableOffset !== lastStableOffset) continue;
    const producers = await admin.describeProducers(after);
    const open = producers.filter((p) => p.currentTransactionStartOffset !== null).sort((a, b) => a.currentTransactionStartOffset! - b.currentTransactionStartOffset!);
    const holder = open.find((p) => p.currentTransactionStartOffset === lastStableOffset) ?? open[0];
    const hwMoved = before.highWatermark !== null && highWatermark > before.highWatermark;
    const base = { leader: after.leader, lastStableOffset, highWatermark: `${before.highWatermark}->${highWatermark}`, highWatermarkMoved: hwMoved };
    if (holder === undefined) {
      findings.push({ check: 'open-transaction', severity: 'warning', subject: key(after), message: `the last stable offset is held at ${lastStableOffset}, below the high watermark, by no producer the leader lists`, evidence: base });
      continue;
    }
    const txn = await transactionOf(admin, holder.producerId);
    const ageMs = nowMs - holder.lastTimestamp;
    const evidence = {
      ...base,
      producerId: holder.producerId,
      producerEpoch: holder.producerEpoch,
      currentTransactionStartOffset: holder.currentTransactionStartOffset,
      lastTimestamp: holder.lastTimestamp,
      ageMs,
      transactionalId: txn?.transactionalId ?? null,
      transactionState: txn?.state ?? null,
      transactionTimeoutMs: txn?.transactionTimeoutMs ?? null,
    };
    const owner = txn === null ? 'which no transaction coordinator knows (a hanging transaction: `spool transactions abort --start-offset`)' : `of transactional.id ${txn.transactionalId} (${txn.state})`;
    findings.push({
      check: 'open-transaction',
      severity: 'warning',
      subject: key(after),
      message: `an open transaction of producer ${holder.producerId} ${owner}, last written ${ageMs} ms ago, holds the last stable offset at ${lastStableOffset}: read_committed consumers stop there`,
      evidence,
    });
  }
  return findings;
}

type LagCause = 'no-members' | 'commits-stalled' | 'slow-consumers' | 'held-by-transaction';

const LAG_MESSAGES: Record<LagCause, string> = {
  'no-members': 'lag grows and the group has no members: nothing consumes these partitions',
  'commits-stalled': 'lag grows and the committed offsets do not move although the group has members: its consumers are stuck or their commits fail',
  'slow-consumers': 'lag grows although the committed offsets move: the consumers are slower than the producers',
  'held-by-transaction': 'lag grows and the committed offsets sit at the last stable offset: an open transaction holds back what read_committed consumers may read',
};

/**
 * Why a partition's lag grew. A member that commits other partitions is
 * alive and busy, so its stalled one means it is slow, not stuck; a commit
 * that has reached a last stable offset below the high watermark is
 * waiting for a transaction.
 */
function lagCause(k: string, before: GroupSample, after: GroupSample, partition: PartitionSample): LagCause {
  const committedBefore = before.committed.get(k);
  const committedAfter = after.committed.get(k)!;
  if (committedAfter !== committedBefore) return 'slow-consumers';
  if (after.description.members.length === 0) return 'no-members';
  const { lastStableOffset, highWatermark } = partition;
  if (lastStableOffset !== null && highWatermark !== null && lastStableOffset < highWatermark && committedAfter >= lastStableOffset) return 'held-by-transaction';
  const ownerCommitted = assignedMember(after, k)?.assignment.some((tp) => {
    const other = key(tp);
    return other !== k && after.committed.get(other) !== before.committed.get(other);
  });
  return ownerCommitted === true ? 'slow-consumers' : 'commits-stalled';
}

/** The member partition `k` is assigned to, if any. */
function assignedMember(group: GroupSample, k: string): MemberDescription | undefined {
  return group.description.members.find((member) => member.assignment.some((tp) => key(tp) === k));
}

/** `memberId (client clientId, host)` of the member a partition is assigned to, or `unassigned`. */
function ownerOf(group: GroupSample, k: string): string {
  const member = assignedMember(group, k);
  return member === undefined ? 'unassigned' : `${member.memberId}(client=${member.clientId},host=${member.host})`;
}

interface LaggingPartitions {
  partitions: string[];
  owners: string[];
  lagBefore: number;
  lagAfter: number;
}

/**
 * Per group, the partitions whose lag grew between the samples, by cause,
 * with the member each is assigned to (the one to look at when commits
 * stall or consumption is slow).
 */
export function checkConsumerLag(first: Sample, second: Sample): Finding[] {
  const findings: Finding[] = [];
  for (const [groupId, after] of second.groups) {
    const before = first.groups.get(groupId);
    if (before === undefined) continue;
    const byCause = new Map<LagCause, LaggingPartitions>();
    for (const [k, committedAfter] of after.committed) {
      const committedBefore = before.committed.get(k);
      const p1 = first.partitions.get(k);
      const p2 = second.partitions.get(k);
      if (committedBefore === undefined || p1?.highWatermark == null || p2?.highWatermark == null) continue;
      const lagBefore = p1.highWatermark - committedBefore;
      const lagAfter = p2.highWatermark - committedAfter;
      if (!(lagAfter > lagBefore && p2.highWatermark > p1.highWatermark)) continue;
      const cause = lagCause(k, before, after, p2);
      const lagging = byCause.get(cause) ?? { partitions: [], owners: [], lagBefore: 0, lagAfter: 0 };
      lagging.partitions.push(`${k}:committed=${committedBefore}->${committedAfter},highWatermark=${p1.highWatermark}->${p2.highWatermark}`);
      if (cause !== 'no-members') lagging.owners.push(`${k}:${ownerOf(after, k)}`);
      lagging.lagBefore += lagBefore;
      lagging.lagAfter += lagAfter;
      byCause.set(cause, lagging);
    }
    for (const [cause, lagging] of byCause) {
      findings.push({
        check: 'consumer-lag',
        severity: 'warning',
        subject: `group ${groupId}`,
        message: LAG_MESSAGES[cause],
        evidence: {
          cause,
          state: after.description.groupState,
          members: after.description.members.length,
          lag: `${lagging.lagBefore}->${lagging.lagAfter}`,
          partitions: lagging.partitions,
          ...(cause === 'no-members' ? {} : { assignedTo: lagging.owners }),
        },
      });
    }
  }
  return findings;
}

const REBALANCING_STATES = ['PreparingRebalance', 'CompletingRebalance', 'Assigning', 'Reconciling'];

/** What a classic group waits for in each rebalancing state (Kafka's GroupCoordinator). */
const REBALANCE_WAITS: Readonly<Record<string, string>> = {
  PreparingRebalance: 'the coordinator waits for every member to rejoin (JoinGroup), for up to the rebalance timeout (the largest max.poll.interval.ms among them); a consumer that does not call poll() holds the others',
  CompletingRebalance: 'the coordinator waits for the leader\'s SyncGroup with the assignment',
};

function sameAssignment(a: readonly TopicPartition[] | null, b: readonly TopicPartition[] | null): boolean {
  const text = (list: readonly TopicPartition[] | null) => (list ?? []).map(key).sort().join(',');
  return text(a) === text(b);
}

type GroupMember = GroupSample['description']['members'][number];

/** A KIP-848 member whose epoch lags the target assignment's: it has not acknowledged the revocations asked of it. */
function lagsTarget(member: GroupMember, targetEpoch: number | null): boolean {
  return member.memberEpoch !== null && targetEpoch !== null && member.memberEpoch < targetEpoch;
}

/** `memberId:topic-partition` for each target partition a member at the target epoch does not have yet. */
function waitingFor(group: GroupSample): string[] {
  const target = group.description.targetAssignmentEpoch;
  return group.description.members
    .filter((m) => !lagsTarget(m, target))
    .flatMap((m) => {
      const held = new Set(m.assignment.map(key));
      return (m.targetAssignment ?? []).map(key).filter((k) => !held.has(k)).map((k) => `${m.memberId}:${k}`);
    });
}

function unreconciledFinding(group: GroupSample, member: GroupMember, waiting: string[]): Finding {
  const lags = lagsTarget(member, group.description.targetAssignmentEpoch);
  return {
    check: 'rebalance',
    severity: 'warning',
    subject: `group ${group.groupId}`,
    message: lags
      ? `member ${member.memberId} (client ${member.clientId}) has not reconciled its assignment: its epoch lags the group's target assignment (it has not acknowledged giving up the partitions the target moves away from it)${waiting.length > 0 ? '; the members waiting for them get them only once it does' : ''}`
      : `member ${member.memberId} (client ${member.clientId}) has not received its target assignment: partitions it is assigned are still owned by others`,
    evidence: {
      memberId: member.memberId,
      clientId: member.clientId,
      host: member.host,
      memberEpoch: member.memberEpoch,
      groupEpoch: group.description.groupEpoch,
      targetAssignmentEpoch: group.description.targetAssignmentEpoch,
      assignment: member.assignment.map(key),
      targetAssignment: (member.targetAssignment ?? []).map(key),
      waitingMembers: waiting,
    },
  };
}

/**
 * KIP-848 members that do not reconcile, through both samples: those whose
 * epoch lags the target assignment epoch (they keep partitions the
 * coordinator asked them to revoke, or stopped heartbeating). A member at
 * the target epoch that lacks some of its target partitions waits for
 * them: it is named in the evidence, and gets a finding of its own only
 * when no member lags (the partitions' owner is not in the description).
 */
function unreconciledMembers(before: GroupSample, after: GroupSample): Finding[] {
  if (after.description.type !== 'consumer' || after.description.targetAssignmentEpoch === null) return [];
  const inBoth = (m: GroupMember, stuck: (g: GroupSample, m: GroupMember) => boolean) =>
    stuck(after, m) && before.description.members.some((b) => b.memberId === m.memberId && stuck(before, b));
  const waiting = waitingFor(after);
  const lagging = after.description.members.filter((m) => inBoth(m, (g, x) => lagsTarget(x, g.description.targetAssignmentEpoch)));
  if (lagging.length > 0) return lagging.map((m) => unreconciledFinding(after, m, waiting));
  const short = (g: GroupSample, m: GroupMember) => !lagsTarget(m, g.description.targetAssignmentEpoch) && !sameAssignment(m.assignment, m.targetAssignment);
  return after.description.members.filter((m) => inBoth(m, short)).map((m) => unreconciledFinding(after, m, waiting));
}

/** A group in a rebalancing state in both samples, or a KIP-848 member stuck reconciling. */
export function checkRebalances(first: Sample, second: Sample): Finding[] {
  const findings: Finding[] = [];
  for (const [groupId, after] of second.groups) {
    const before = first.groups.get(groupId);
    if (before === undefined) continue;
    const members = unreconciledMembers(before, after);
    findings.push(...members);
    const state = after.description.groupState;
    if (members.length > 0 || !REBALANCING_STATES.includes(state) || !REBALANCING_STATES.includes(before.description.groupState)) continue;
    findings.push({
      check: 'rebalance',
      severity: 'warning',
      subject: `group ${groupId}`,
      message: `the group stayed in a rebalance (${state}) through the sampling window: ${REBALANCE_WAITS[state] ?? 'the rebalance does not complete'}; consumption is paused until it completes`,
      evidence: {
        type: after.description.type,
        state: `${before.description.groupState}->${state}`,
        members: after.description.members.map((m) => `${m.memberId}(client=${m.clientId},host=${m.host})`),
        groupEpoch: after.description.groupEpoch,
      },
    });
  }
  return findings;
}

/**
 * Each broker's log directories that DescribeLogDirs reports with an error
 * (KAFKA_STORAGE_ERROR: taken offline by a disk error). The replicas lost
 * with them are those the metadata assigns to the broker (within the
 * sample's topics) that none of its online directories holds; the ones it
 * leads answer KAFKA_STORAGE_ERROR.
 */
export async function checkOfflineLogDirs(admin: Admin, sample: Sample, options: { brokerIds: readonly number[]; gaps: string[] }): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const brokerId of options.brokerIds) {
    const dirs = await admin.describeLogDirs(brokerId).catch((error: unknown) => {
      if (!(error instanceof KafkaError)) throw error;
      options.gaps.push(`offline-log-dir broker ${brokerId}: DescribeLogDirs failed (${error.message})`);
      return [];
    });
    const offline = dirs.filter((d) => d.errorCode !== 0);
    if (offline.length === 0) continue;
    const online = new Set(dirs.filter((d) => d.errorCode === 0).flatMap((d) => d.replicas.map(key)));
    const lost = [...sample.partitions.values()].filter((p) => p.replicas.includes(brokerId) && !online.has(key(p)));
    const led = lost.filter((p) => p.leader === brokerId).map(key);
    for (const dir of offline) {
      findings.push({
        check: 'offline-log-dir',
        severity: 'critical',
        subject: `broker ${brokerId}`,
        message: `log directory ${dir.logDir} is offline (${errorInfo(dir.errorCode).name}): ${lost.length} replica${lost.length === 1 ? '' : 's'} on it ${lost.length === 1 ? 'is' : 'are'} lost to this broker until the disk is replaced and the broker restarted${led.length > 0 ? `; the ${led.length} it leads answer${led.length === 1 ? 's' : ''} ${errorInfo(dir.errorCode).name}` : ''}`,
        evidence: {
          brokerId,
          logDir: dir.logDir,
          error: errorInfo(dir.errorCode).name,
          onlineLogDirs: dirs.filter((d) => d.errorCode === 0).map((d) => d.logDir),
          [offline.length === 1 ? 'replicas' : 'replicasInOfflineLogDirs']: lost.map(key),
          ledReplicas: led,
        },
      });
    }
  }
  return findings;
}

/**
 * Brokers DescribeCluster (v2, includeFencedBrokers) lists as fenced, and
 * replica ids of partitions no registered broker has.
 */
export function checkFencedBrokers(sample: Sample, brokers: readonly { nodeId: number; fenced: boolean }[]): Finding[] {
  const hosting = (brokerId: number) => [...sample.partitions.values()].filter((p) => p.replicas.includes(brokerId));
  const findings: Finding[] = brokers.filter((b) => b.fenced).map((b) => ({
    check: 'fenced-broker',
    severity: 'warning',
    subject: `broker ${b.nodeId}`,
    message: 'the broker is registered but fenced (no heartbeats reach the controller, or it is shutting down): its replicas are out of the ISR and it leads nothing',
    evidence: { brokerId: b.nodeId, replicas: hosting(b.nodeId).length },
  }));
  const registered = new Set(brokers.map((b) => b.nodeId));
  const unknown = [...new Set([...sample.partitions.values()].flatMap((p) => p.replicas))].filter((id) => !registered.has(id)).sort((a, b) => a - b);
  for (const brokerId of unknown) {
    findings.push({
      check: 'fenced-broker',
      severity: 'warning',
      subject: `broker ${brokerId}`,
      message: 'replicas are assigned to a broker that is not registered',
      evidence: { brokerId, replicas: hosting(brokerId).length },
    });
  }
  return findings;
}

/**
 * Unfenced brokers that refuse a connection: the controller still counts
 * them alive (their session has not expired), so their replicas stay in
 * the ISR and their partitions led, though no client reaches them.
 * Resolves with the reachable brokers' ids and the findings.
 */
export async function checkUnreachableBrokers(admin: Admin, brokers: readonly { nodeId: number; host: string; port: number; fenced: boolean }[]): Promise<{ reachable: number[]; findings: Finding[] }> {
  const reachable: number[] = [];
  const findings: Finding[] = [];
  for (const broker of brokers.filter((b) => !b.fenced)) {
    try {
      await admin.cluster.connectTo(broker.host, broker.port);
      reachable.push(broker.nodeId);
    } catch (error) {
      if (!(error instanceof KafkaError)) throw error;
      findings.push({
        check: 'unreachable-broker',
        severity: 'critical',
        subject: `broker ${broker.nodeId}`,
        message: 'the broker is registered and not fenced, but does not answer (connection refused or no response in time): until its session expires the controller keeps it in the ISR and as leader',
        evidence: { brokerId: broker.nodeId, address: `${broker.host}:${broker.port}`, error: error.message },
      });
    }
  }
  return { reachable, findings };
}
