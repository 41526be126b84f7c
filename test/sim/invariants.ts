/**
 * The cluster simulator's invariants, each a named checker fed with what the
 * harness observes (or, in their own tests, a fabricated history holding a
 * planted violation). A checker keeps what it needs of the history and
 * returns a violation's description, or null; the harness stops a seed at the
 * first one. They know nothing of Spool's classes, so a test can drive them
 * without a cluster.
 */

export interface Violation {
  invariant: string;
  detail: string;
}

/** At most one Raft leader per epoch: no two nodes ever claim to lead the same epoch. */
export class SingleLeaderPerEpoch {
  static readonly invariant = 'single-leader-per-epoch';
  private readonly leaders = new Map<number, number>();

  observeLeader(nodeId: number, epoch: number): Violation | null {
    const known = this.leaders.get(epoch);
    if (known === undefined) this.leaders.set(epoch, nodeId);
    else if (known !== nodeId) return { invariant: SingleLeaderPerEpoch.invariant, detail: `nodes ${known} and ${nodeId} both led epoch ${epoch}` };
    return null;
  }
}

/** A committed metadata batch as one node's loader received it. */
export interface CommittedBatch {
  baseOffset: number;
  lastOffset: number;
  epoch: number;
  /** A digest of the batch's records. */
  digest: string;
}

/**
 * The committed metadata log is a prefix on every node: whatever any node
 * (in any incarnation) committed at an offset, every node that commits that
 * offset commits the same batch, and a node's commits are contiguous.
 */
export class CommittedLogPrefix {
  static readonly invariant = 'committed-metadata-log-is-a-prefix';
  private readonly committed = new Map<number, CommittedBatch & { nodeId: number }>();
  private readonly nextOffset = new Map<string, number>();

  /** `incarnation` names one run of the node: a restart replays its log from the start or a snapshot. */
  observeCommit(nodeId: number, incarnation: number, batch: CommittedBatch): Violation | null {
    const key = `${nodeId}/${incarnation}`;
    const expected = this.nextOffset.get(key);
    this.nextOffset.set(key, batch.lastOffset + 1);
    if (expected !== undefined && batch.baseOffset !== expected) {
      return { invariant: CommittedLogPrefix.invariant, detail: `node ${nodeId} committed offset ${batch.baseOffset} after ${expected - 1} (a gap or a repeat)` };
    }
    const known = this.committed.get(batch.baseOffset);
    if (known === undefined) {
      this.committed.set(batch.baseOffset, { ...batch, nodeId });
      return null;
    }
    if (known.lastOffset === batch.lastOffset && known.epoch === batch.epoch && known.digest === batch.digest) return null;
    return {
      invariant: CommittedLogPrefix.invariant,
      detail: `offset ${batch.baseOffset}: node ${known.nodeId} committed ${describe(known)}, node ${nodeId} committed ${describe(batch)}`,
    };
  }

  /** A snapshot loaded at `endOffset`: the node's next commit starts there. */
  observeSnapshot(nodeId: number, incarnation: number, endOffset: number): void {
    this.nextOffset.set(`${nodeId}/${incarnation}`, endOffset);
  }
}

function describe(batch: CommittedBatch): string {
  return `[${batch.baseOffset}..${batch.lastOffset}] epoch ${batch.epoch} digest ${batch.digest}`;
}

/** A committed voter set as one node's Raft client holds it (KIP-853: a VotersRecord below its HW). */
export interface CommittedVoterSet {
  /** The VotersRecord's offset; one a snapshot holds stands at the offset just below the snapshot. */
  offset: number;
  fromSnapshot: boolean;
  /** The voters, named `id:directoryId`, in one canonical order. */
  voters: string;
}

/**
 * The committed voter set is agreed: a VotersRecord committed at an offset
 * holds the same voters on every node and incarnation that commits that
 * offset; a snapshot's voter set is the one the log had in force at the
 * snapshot's offset; and a node never loses a committed voter set, other
 * than to a snapshot that starts its history above it.
 */
export class CommittedVoterSetsAgree {
  static readonly invariant = 'committed-voter-sets-agree';
  /** Each VotersRecord any node committed from its log, by offset. */
  private readonly fromLog = new Map<number, { voters: string; nodeId: number }>();
  private readonly lastSeen = new Map<string, readonly CommittedVoterSet[]>();

  /** One node incarnation's whole committed voter history, oldest first, as after a step. */
  observeCommitted(nodeId: number, incarnation: number, history: readonly CommittedVoterSet[]): Violation | null {
    const fail = (detail: string): Violation => ({ invariant: CommittedVoterSetsAgree.invariant, detail });
    const key = `${nodeId}/${incarnation}`;
    const previous = this.lastSeen.get(key) ?? [];
    this.lastSeen.set(key, history);
    const startOffset = history[0]?.offset ?? Infinity;
    for (const old of previous) {
      if (old.offset < startOffset) continue;
      if (!history.some((entry) => entry.offset === old.offset && entry.voters === old.voters)) return fail(`node ${nodeId} lost its committed voter set [${old.voters}] at offset ${old.offset}`);
    }
    for (const entry of history) {
      if (entry.fromSnapshot) continue;
      const known = this.fromLog.get(entry.offset);
      if (known === undefined) this.fromLog.set(entry.offset, { voters: entry.voters, nodeId });
      else if (known.voters !== entry.voters) return fail(`offset ${entry.offset}: node ${known.nodeId} committed voters [${known.voters}], node ${nodeId} [${entry.voters}]`);
    }
    for (const entry of history) {
      if (!entry.fromSnapshot) continue;
      let inForce: { offset: number; voters: string } | null = null;
      for (const [offset, { voters }] of this.fromLog) if (offset <= entry.offset && (inForce === null || offset > inForce.offset)) inForce = { offset, voters };
      if (inForce !== null && inForce.voters !== entry.voters) return fail(`node ${nodeId}'s snapshot below offset ${entry.offset + 1} holds voters [${entry.voters}], the log had [${inForce.voters}] (offset ${inForce.offset}) in force there`);
    }
    return null;
  }
}

/**
 * An acknowledged voter change holds: once the cluster healed, the voter set
 * every node agrees on is the one the last acknowledged AddRaftVoter or
 * RemoveRaftVoter left (`expected`; null when a later change failed, so the
 * outcome is in doubt and either set may stand).
 */
export function checkVoterChangesHold(expected: string | null, agreed: string): Violation | null {
  if (expected === null || expected === agreed) return null;
  return { invariant: 'acknowledged-voter-changes-hold', detail: `the last acknowledged voter change left [${expected}], the nodes agree on [${agreed}]` };
}

/** What the admin operations acknowledged of one topic; null where a failed operation left the outcome in doubt. */
export interface AdminTopicExpectation {
  exists: boolean | null;
  partitions: number | null;
  /** retention.ms as last set. */
  retentionMs: string | null;
}

/** A topic as the cluster describes it after the heal. */
export interface AdminTopicObserved {
  partitions: number;
  retentionMs: string | null;
}

/**
 * Acknowledged admin operations hold once the faults healed: a topic whose
 * creation was acknowledged exists (unless its deletion was), one whose
 * deletion was acknowledged does not, and its partition count and
 * retention.ms are what the last acknowledged CreatePartitions and
 * IncrementalAlterConfigs left. What a failed operation touched is in doubt
 * and not checked.
 */
export function checkAdminOutcomes(expected: ReadonlyMap<string, AdminTopicExpectation>, observed: ReadonlyMap<string, AdminTopicObserved>): Violation | null {
  const fail = (detail: string): Violation => ({ invariant: 'acknowledged-admin-operations-hold', detail });
  for (const [name, expectation] of expected) {
    const found = observed.get(name);
    if (expectation.exists === false && found !== undefined) return fail(`topic ${name} was deleted (acknowledged) but exists`);
    if (expectation.exists !== true) continue;
    if (found === undefined) return fail(`topic ${name} was created (acknowledged) and not deleted, but does not exist`);
    if (expectation.partitions !== null && found.partitions !== expectation.partitions) return fail(`topic ${name} has ${found.partitions} partitions, the acknowledged operations left ${expectation.partitions}`);
    if (expectation.retentionMs !== null && found.retentionMs !== expectation.retentionMs) return fail(`topic ${name} has retention.ms ${found.retentionMs}, the last acknowledged change set ${expectation.retentionMs}`);
  }
  return null;
}

/** The HW never goes backwards on a leader: within one leader epoch of one incarnation, a partition's HW only grows. */
export class HighWatermarkMonotonic {
  static readonly invariant = 'high-watermark-never-goes-backwards-on-a-leader';
  private readonly last = new Map<string, number>();

  observeLeaderHighWatermark(where: { nodeId: number; incarnation: number; partition: string; leaderEpoch: number }, highWatermark: number): Violation | null {
    const key = `${where.nodeId}/${where.incarnation}/${where.partition}/${where.leaderEpoch}`;
    const previous = this.last.get(key);
    this.last.set(key, highWatermark);
    if (previous !== undefined && highWatermark < previous) {
      return { invariant: HighWatermarkMonotonic.invariant, detail: `${where.partition} on leader ${where.nodeId} (epoch ${where.leaderEpoch}): HW went from ${previous} to ${highWatermark}` };
    }
    return null;
  }
}

/**
 * No consumer reads above the HW: every record a consumer receives lies
 * below the highest HW any replica of its partition has reached (observed
 * before the read, since a fetch response travels after it is built).
 */
export class ReadsBelowHighWatermark {
  static readonly invariant = 'no-consumer-reads-above-the-high-watermark';
  private readonly highest = new Map<string, number>();

  observeHighWatermark(partition: string, highWatermark: number): void {
    if (highWatermark > (this.highest.get(partition) ?? 0)) this.highest.set(partition, highWatermark);
  }

  observeRead(partition: string, offset: number): Violation | null {
    const highWatermark = this.highest.get(partition) ?? 0;
    if (offset < highWatermark) return null;
    return { invariant: ReadsBelowHighWatermark.invariant, detail: `a consumer read ${partition} offset ${offset}, at or above the highest HW seen (${highWatermark})` };
  }
}

/** A record as the final read finds it in a partition. */
export interface StoredRecord {
  partition: string;
  offset: number;
  value: string;
}

/** Every acknowledged record is present once the faults healed, at the offset its acknowledgement named. */
export function checkAckedPresent(acked: readonly StoredRecord[], stored: readonly StoredRecord[]): Violation | null {
  const at = new Map(stored.map((record) => [`${record.partition}@${record.offset}`, record.value]));
  const missing = acked.filter((record) => at.get(`${record.partition}@${record.offset}`) !== record.value);
  if (missing.length === 0) return null;
  const first = missing[0]!;
  const found = at.get(`${first.partition}@${first.offset}`);
  return {
    invariant: 'every-acked-record-is-present',
    detail: `${missing.length} acked records lost; first: ${first.value} acked at ${first.partition}@${first.offset}, ${found === undefined ? 'no record there' : `found ${found} there`}`,
  };
}

/** No duplicates with idempotence: every value the producer sent (each is unique) is stored at most once. */
export function checkNoDuplicates(stored: readonly StoredRecord[]): Violation | null {
  const seen = new Map<string, StoredRecord>();
  for (const record of stored) {
    const earlier = seen.get(record.value);
    if (earlier !== undefined) {
      return { invariant: 'no-duplicates-with-idempotence', detail: `${record.value} stored twice: ${earlier.partition}@${earlier.offset} and ${record.partition}@${record.offset}` };
    }
    seen.set(record.value, record);
  }
  return null;
}

/**
 * Committed offsets never go backwards for a group: every commit the group
 * coordinator accepted names, per partition, an offset at least as high as
 * the last accepted one. Members commit what they read; a member that lost a
 * partition has its commits refused (a stale generation or member epoch), so
 * a lower accepted offset means a zombie got through or an offset was lost.
 */
export class CommittedOffsetsMonotonic {
  static readonly invariant = 'committed-offsets-never-go-backwards';
  private readonly highest = new Map<string, { offset: number; member: string }>();

  observeAcceptedCommit(member: string, partition: string, offset: number): Violation | null {
    const previous = this.highest.get(partition);
    if (previous !== undefined && offset < previous.offset) {
      return { invariant: CommittedOffsetsMonotonic.invariant, detail: `${member} committed ${partition} offset ${offset} after ${previous.member} had committed ${previous.offset}` };
    }
    this.highest.set(partition, { offset, member });
    return null;
  }
}

/** How a transaction ended, as far as its producer knows: acknowledged, or in doubt (its EndTxn failed or never went out). */
export type TransactionOutcome = 'committed' | 'aborted' | 'in-doubt';

/**
 * No read_committed consumer sees aborted data: no record of a transaction
 * whose abort was acknowledged is ever returned to a read_committed
 * consumer, whichever of the read and the acknowledgement the harness sees
 * first (the abort marker, and so the LSO's passing, may come after either).
 */
export class ReadCommittedSeesNoAborted {
  static readonly invariant = 'no-read-committed-consumer-sees-aborted-data';
  private readonly aborted = new Set<string>();
  /** The first record read of each transaction, by transaction. */
  private readonly reads = new Map<string, string>();

  observeAbortAcknowledged(transaction: string): Violation | null {
    this.aborted.add(transaction);
    const read = this.reads.get(transaction);
    return read === undefined ? null : this.violation(transaction, read);
  }

  /** A record of `transaction` (named by the harness from its value) returned to a read_committed consumer at `where`. */
  observeRead(transaction: string, where: string): Violation | null {
    if (!this.reads.has(transaction)) this.reads.set(transaction, where);
    return this.aborted.has(transaction) ? this.violation(transaction, where) : null;
  }

  private violation(transaction: string, where: string): Violation {
    return { invariant: ReadCommittedSeesNoAborted.invariant, detail: `a read_committed consumer read ${where} of transaction ${transaction}, whose abort was acknowledged` };
  }
}

/** A transaction the harness ran: the values it sent and how it ended. */
export interface TransactionRun {
  transaction: string;
  values: readonly string[];
  outcome: TransactionOutcome;
}

/**
 * Transactions are atomic once the faults healed: a read_committed read of
 * every partition to its end holds all the values of each transaction whose
 * commit was acknowledged, none of one whose abort was acknowledged, and of
 * one in doubt either all or none (a commit goes out only after every record
 * was acknowledged, so a committed transaction has them all).
 */
export function checkTransactionsAtomic(transactions: readonly TransactionRun[], readCommitted: readonly StoredRecord[]): Violation | null {
  const visible = new Set(readCommitted.map((record) => record.value));
  for (const { transaction, values, outcome } of transactions) {
    const seen = values.filter((value) => visible.has(value)).length;
    const allowed = outcome === 'committed' ? [values.length] : outcome === 'aborted' ? [0] : [0, values.length];
    if (allowed.includes(seen)) continue;
    return { invariant: 'transactions-are-atomic', detail: `transaction ${transaction} (${outcome}): read_committed sees ${seen} of its ${values.length} records` };
  }
  return null;
}

/** One member of a consumer group as its coordinator describes it; partitions as `topic-partition`. */
export interface GroupMemberView {
  memberId: string;
  clientId: string;
  assignment: readonly string[];
  /** KIP-848 groups: the assignment the member is headed for (null for a classic group). */
  targetAssignment: readonly string[] | null;
}

/** A consumer group as its coordinator describes it, with what each member client believes it owns. */
export interface GroupView {
  state: string;
  members: readonly GroupMemberView[];
  /** Each member client's own assignment, by client id. */
  clientAssignments: ReadonlyMap<string, readonly string[]>;
}

/**
 * Liveness of a consumer group: once faults heal, within a bound, the group
 * is Stable with exactly the expected member clients (no stale member left
 * from before a fault), every member has partitions, every partition of the
 * topic is assigned to exactly one member, a KIP-848 member has reached its
 * target, and each client owns what the coordinator says it owns. The
 * harness calls this repeatedly until it passes, and reports the last
 * reason when the bound runs out.
 */
export function checkGroupStable(view: GroupView, expected: { clients: readonly string[]; partitions: readonly string[] }): Violation | null {
  const fail = (detail: string): Violation => ({ invariant: 'group-stabilises', detail });
  if (view.state !== 'Stable') return fail(`group state ${view.state}, not Stable`);
  const clients = view.members.map((member) => member.clientId).sort();
  if (clients.join(',') !== [...expected.clients].sort().join(',')) return fail(`members [${clients.join(',')}], expected one each of [${[...expected.clients].sort().join(',')}]`);
  const owners = new Map<string, string[]>();
  for (const member of view.members) {
    if (member.assignment.length === 0) return fail(`member ${member.clientId} (${member.memberId}) has no partition`);
    if (member.targetAssignment !== null && [...member.targetAssignment].sort().join(',') !== [...member.assignment].sort().join(',')) {
      return fail(`member ${member.clientId} owns [${[...member.assignment].sort().join(',')}] but is headed for [${[...member.targetAssignment].sort().join(',')}]`);
    }
    for (const partition of member.assignment) owners.set(partition, [...(owners.get(partition) ?? []), member.clientId]);
    const own = [...(view.clientAssignments.get(member.clientId) ?? [])].sort().join(',');
    if (own !== [...member.assignment].sort().join(',')) return fail(`client ${member.clientId} owns [${own}] but its coordinator assigned it [${[...member.assignment].sort().join(',')}]`);
  }
  for (const partition of expected.partitions) {
    const owner = owners.get(partition) ?? [];
    if (owner.length !== 1) return fail(`partition ${partition} assigned to ${owner.length} members${owner.length > 0 ? ` (${owner.join(', ')})` : ''}`);
  }
  for (const partition of owners.keys()) if (!expected.partitions.includes(partition)) return fail(`partition ${partition} assigned but not of the subscribed topic`);
  return null;
}
