/**
 * The whole-cluster simulator: three combined Spool nodes (broker and
 * controller, Raft over Kafka's RPCs), or three controller-only and three
 * broker-only nodes (`shape: 'split'`), Spool's own producer, consumer and
 * admin, all in this process on one seed. With `dynamicQuorum` an operator
 * adds and removes voters (KIP-853) during the faults; with `adminOps` an
 * operator creates and deletes topics, creates partitions and alters
 * configs, and what was acknowledged must hold after the heal. Every node has its own simulated
 * disk (src/io/sim-fs.ts) and its own host on one simulated TCP network
 * (src/io/sim-stream-net.ts); one ManualClock is the only time (each host
 * reads its wall clock through a seeded skew, skewed-clock.ts). Nothing runs
 * but what the clock's timers and the promises they settle start, so a seed
 * replays exactly, trace and all.
 *
 * Driving: each step lets every pending promise settle (one setImmediate
 * turn: the microtask queue drains before it), checks the continuous
 * invariants, then moves the clock to the next timer that falls due.
 *
 * A run (`runSeed`): start the cluster; create topic `sim` (2 partitions,
 * RF=3, min.insync.replicas=2); an idempotent acks=all producer, a
 * consumer, a transactional producer committing and aborting and a
 * read_committed consumer run for `faultPhaseMs` while faults are injected
 * (a node killed as kill -9 and restarted, a power cut that loses its
 * unsynced writes, a node partitioned two ways or one way, connections
 * reset, a node paused as by a GC stall or SIGSTOP, a slow link, a disk
 * whose fsyncs fail or that fills up, an NTP step of a host's wall clock); then everything heals and the cluster must become whole again within
 * `healBoundMs` (every node running, one Raft leader they agree on, full
 * ISRs) and, with the group, the group stable (checkGroupStable); the producer flushes; a fresh consumer reads both partitions to
 * their ends (read_uncommitted and read_committed) and the final invariants
 * are checked. At most one node is faulty at a time (down, cut off, paused
 * or with a failing disk): RF − min.insync.replicas = 1 failure
 * is what acks=all promises to survive.
 */
import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Admin } from '../../src/client/admin.js';
import { Consumer, type ConsumerRecord } from '../../src/client/consumer.js';
import { Producer } from '../../src/client/producer.js';
import type { Logger } from '../../src/common/logger.js';
import { ManualClock, SeededRandom, type Clock, type Env } from '../../src/io/env.js';
import { PauseControl, pausableEnv } from './pausable-env.js';
import { drawSkew, drawStep, SkewedClock } from './skewed-clock.js';
import { SimFileSystem } from '../../src/io/sim-fs.js';
import { SimStreamNetwork } from '../../src/io/sim-stream-net.js';
import { BrokerConnection } from '../../src/client/connection.js';
import { KafkaError } from '../../src/client/errors.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AddRaftVoter } from '../../src/protocol/schemas/80-add-raft-voter.js';
import { RemoveRaftVoter } from '../../src/protocol/schemas/81-remove-raft-voter.js';
import { encodeMetadataRecord, type MetadataRecord } from '../../src/metadata/records.js';
import { startCluster, type EmbeddedNode, type RunningCluster } from '../../src/node/cluster.js';
import type { Batch } from '../../src/raft/raft-client.js';
import type { Partition } from '../../src/replication/partition.js';
import type { SpoolNode } from '../../src/node/node.js';
import {
  checkAckedPresent,
  checkAdminOutcomes,
  checkGroupStable,
  checkNoDuplicates,
  checkTransactionsAtomic,
  checkVoterChangesHold,
  CommittedLogPrefix,
  CommittedVoterSetsAgree,
  CommittedOffsetsMonotonic,
  HighWatermarkMonotonic,
  ReadCommittedSeesNoAborted,
  ReadsBelowHighWatermark,
  SingleLeaderPerEpoch,
  type AdminTopicExpectation,
  type AdminTopicObserved,
  type StoredRecord,
  type TransactionOutcome,
  type TransactionRun,
  type Violation,
} from './invariants.js';

const START_MS = 1_700_000_000_000;
const TOPIC = 'sim';
const PARTITIONS = 2;
/** Brokers (combined nodes in the combined shape): the topic's replication factor. */
const BROKERS = 3;
/** Controller-only nodes of the split shape (node ids from 3000, as KafkaClusterTestKit names them). */
const CONTROLLERS = 3;
/** The voter changes' schedule: one every VOTER_CHANGE_GAP_MS, drawn uniformly. */
const VOTER_CHANGE_GAP_MS = { min: 100, max: 800 };
/** New controllers the operator adds in one run (removed ones may be added again beyond that). */
const CONTROLLERS_ADDED_MAX = 2;
/** TimeoutMs of an AddRaftVoter, and request.timeout.ms of the operator's connection. */
const VOTER_CHANGE_TIMEOUT_MS = 10_000;
/** Simulated ms the voter sets have to agree everywhere once the cluster is whole. */
const VOTERS_AGREE_BOUND_MS = 30_000;
/** The admin operations' schedule: one every ADMIN_OP_GAP_MS, drawn uniformly. */
const ADMIN_OP_GAP_MS = { min: 100, max: 600 };
/** Replication factor of the operator's topics: RF 2 can be created while one of the three brokers is down. */
const ADMIN_TOPIC_REPLICATION_FACTOR = 2;
/** Simulated ms the acknowledged admin outcomes have to show once the cluster is whole. */
const ADMIN_OUTCOMES_BOUND_MS = 30_000;
/** One fault draw in this many also steps a host's wall clock (clockStepMs). */
const CLOCK_STEP_ODDS = 6;
/** A run that has not settled after this many steps is stuck (a bug in the simulator or a busy loop in a node). */
const STEPS_MAX = 5_000_000;
/** The transactional producer's transactional.id. */
const TRANSACTIONAL_ID = 'sim-txn';
/** transaction.timeout.ms of the transactional producer: short, so that what an abandoned producer left open is aborted within the run. */
const TRANSACTION_TIMEOUT_MS = 15_000;

/**
 * The cluster's shape: three combined nodes (broker and controller), or
 * split, three controller-only nodes (the Raft voters) and three
 * broker-only nodes (observers of the metadata log).
 */
export type SimShape = 'combined' | 'split';

export interface SimRunOptions {
  seed: number;
  /** Default 'combined'. */
  shape?: SimShape;
  /**
   * A dynamic quorum (KIP-853, kraft.version 1): during the faults an
   * operator adds controllers (new controller-only nodes, or removed ones
   * again) with AddRaftVoter and removes voters with RemoveRaftVoter, one
   * change at a time. Default false (static voters).
   */
  dynamicQuorum?: boolean;
  /**
   * During the faults an operator's admin client creates and deletes
   * topics, creates partitions and alters retention.ms, one operation at a
   * time; after the heal what was acknowledged must hold
   * (checkAdminOutcomes). Default false.
   */
  adminOps?: boolean;
  /** Simulated ms of load with faults, before healing. Default 20 s. */
  faultPhaseMs?: number;
  /** Simulated ms between faults, drawn uniformly from [min, max). Default 300 to 3000; short CI seeds use a denser schedule. */
  faultGapMs?: { min: number; max: number };
  /** Simulated ms the cluster has to become whole after healing. Default 120 s. */
  healBoundMs?: number;
  /** Inject faults (default true); false runs the load alone. */
  faults?: boolean;
  /** Node log lines in the trace from this level up. Default 'warn'. */
  nodeLogLevel?: 'error' | 'warn' | 'info' | 'debug';
  /** How many nodes may be faulty (down, cut off or paused) at once. Default 1 (RF − min.insync.replicas); 2 loses the quorum at times. */
  faultyNodesMax?: number;
  /** Also run a consumer group of two members that commit what they read (default true). */
  groups?: boolean;
  /** Also run a transactional producer and a read_committed consumer (default true). */
  transactions?: boolean;
  /**
   * Each host's wall clock (nodes and clients; not the harness) is off true
   * time by an offset drawn from [-clockSkewMs, clockSkewMs] and drifts by a
   * rate drawn from [-clockDriftPpm, clockDriftPpm]; monotonic time and
   * timers stay shared. Drawn from a generator of its own, so the other
   * draws of a seed do not move. Defaults 10 000 ms and 1 000 ppm; 0 and 0
   * give every host true time.
   */
  clockSkewMs?: number;
  clockDriftPpm?: number;
  /**
   * During the faults, an NTP step of one host's wall clock (a node's or a
   * client's) forward or back by 128 ms to this bound comes at one fault
   * draw in CLOCK_STEP_ODDS. Drawn from a generator of its own, like the
   * skews. Default 30 000; 0 steps no clock.
   */
  clockStepMs?: number;
  /** Simulated ms the consumer group has to become stable once the cluster is whole. Default 60 s. */
  groupStableBoundMs?: number;
  /** Told of each trace line as it is written (a live trace). */
  onTrace?: (line: string) => void;
}

export interface SimRunResult {
  seed: number;
  violation: Violation | null;
  /** Simulated milliseconds the run took. */
  simulatedMs: number;
  acked: number;
  /** Records of the idempotent producer the read_uncommitted consumer read during the load. */
  consumed: number;
  /** The transactional producer's transactions, by outcome. */
  transactions: Record<TransactionOutcome, number>;
  trace: string[];
}

class SimViolation extends Error {
  constructor(readonly violation: Violation) {
    super(`${violation.invariant}: ${violation.detail}`);
  }
}

/** Runs one seed to its end; a violation (or a stuck run) is in the result, never thrown. */
export async function runSeed(options: SimRunOptions): Promise<SimRunResult> {
  const sim = new ClusterSim(options);
  let violation: Violation | null = null;
  try {
    await sim.run();
  } catch (error) {
    violation = error instanceof SimViolation ? error.violation : { invariant: 'run-completes', detail: (error as Error).stack ?? String(error) };
    sim.log(`VIOLATION ${violation.invariant}: ${violation.detail}`);
  }
  return { seed: options.seed, violation, simulatedMs: sim.clock.nowMs() - START_MS, acked: sim.acked.length, consumed: sim.consumed, transactions: sim.transactionOutcomes(), trace: sim.trace };
}

class ClusterSim {
  readonly clock = new ManualClock(START_MS);
  readonly trace: string[] = [];
  readonly acked: StoredRecord[] = [];
  consumed = 0;
  private readonly random: SeededRandom;
  private readonly net: SimStreamNetwork;
  private readonly disks = new Map<number, SimFileSystem>();
  private readonly pauses = new Map<number, PauseControl>();
  private readonly incarnations = new Map<number, number>();
  private cluster: RunningCluster | null = null;
  private readonly leaders = new SingleLeaderPerEpoch();
  private readonly metadataLog = new CommittedLogPrefix();
  private readonly leaderHighWatermarks = new HighWatermarkMonotonic();
  private readonly reads = new ReadsBelowHighWatermark();
  private readonly groupCommits = new CommittedOffsetsMonotonic();
  private readonly committedReads = new ReadCommittedSeesNoAborted();
  private readonly transactions: TransactionRun[] = [];

  transactionOutcomes(): Record<TransactionOutcome, number> {
    const outcomes = { committed: 0, aborted: 0, 'in-doubt': 0 };
    for (const { outcome } of this.transactions) outcomes[outcome]++;
    return outcomes;
  }
  private pendingViolation: Violation | null = null;
  private loadRunning = true;
  private readonly faultPhaseMs: number;
  private readonly healBoundMs: number;
  private readonly nodeLogLevel: number;
  private readonly lastLeader = new Map<number, { leaderId: number | null; epoch: number }>();
  /** What was last observed of each hosted partition (a Partition belongs to one node incarnation). */
  private readonly partitionViews = new WeakMap<Partition, PartitionView>();
  /** Incarnations seen running at the last check: one that stopped since gets a last high-watermark reading. */
  private readonly runningAtLastCheck = new Set<SpoolNode>();
  private readonly partitionLeaders = new Map<string, string>();
  private steps = 0;

  constructor(private readonly options: SimRunOptions) {
    this.random = new SeededRandom(options.seed);
    // Its own stream (not a fork), so that skewing clocks moves none of the seed's other draws.
    this.skewRandom = new SeededRandom((options.seed ^ 0x5c3e7c1d) >>> 0);
    this.stepRandom = new SeededRandom((options.seed ^ 0x2b7f4e95) >>> 0);
    this.faultPhaseMs = options.faultPhaseMs ?? 20_000;
    this.healBoundMs = options.healBoundMs ?? 120_000;
    this.nodeLogLevel = LOG_LEVELS[options.nodeLogLevel ?? 'warn'];
    this.net = new SimStreamNetwork({ clock: this.clock, timers: this.clock, random: this.fork(), onEvent: (event) => this.log(event) });
  }

  log(line: string): void {
    const stamped = `${((this.clock.nowMs() - START_MS) / 1000).toFixed(3).padStart(9)} ${line}`;
    this.trace.push(stamped);
    this.options.onTrace?.(stamped);
  }

  /** A generator of its own for each consumer of randomness, so one's draws do not shift another's. */
  private fork(): SeededRandom {
    return new SeededRandom(this.random.nextInt(2 ** 31));
  }

  private env(host: string, fs: SimFileSystem): Env {
    return { clock: this.wallClockOf(host), timers: this.clock, random: this.fork(), fs, net: this.net.host(host) };
  }

  /** Each host's skewed wall clock, drawn on the host's first use (the harness keeps true time). */
  private readonly wallClocks = new Map<string, SkewedClock>();
  private readonly skewRandom: SeededRandom;
  /** The clock steps' own stream, so that stepping clocks moves none of the seed's other draws. */
  private readonly stepRandom: SeededRandom;

  /** At one fault draw in CLOCK_STEP_ODDS, an NTP step of a skewed host's wall clock, forward or back (the timers keep true time). */
  private maybeStepClock(): void {
    const maxMs = this.options.clockStepMs ?? 30_000;
    if (maxMs === 0 || this.wallClocks.size === 0 || this.stepRandom.nextInt(CLOCK_STEP_ODDS) !== 0) return;
    // Half the time a node's (its transaction coordinator, Raft and log stamp with it), else any host's, a client's included.
    const all = [...this.wallClocks.keys()];
    const nodes = all.filter((host) => host.startsWith('node-'));
    const hosts = nodes.length > 0 && this.stepRandom.nextInt(2) === 0 ? nodes : all;
    const host = hosts[this.stepRandom.nextInt(hosts.length)]!;
    const stepMs = drawStep(this.stepRandom, maxMs);
    const clock = this.wallClocks.get(host)!;
    clock.step(stepMs);
    this.log(`FAULT clock of ${host} stepped ${stepMs >= 0 ? 'forward' : 'back'} ${(Math.abs(stepMs) / 1000).toFixed(3)} s (an NTP step; ${(clock.stepsMs / 1000).toFixed(3)} s in all)`);
  }

  private wallClockOf(host: string): Clock {
    const skewMs = this.options.clockSkewMs ?? 10_000;
    const driftPpm = this.options.clockDriftPpm ?? 1_000;
    if (host === 'harness' || (skewMs === 0 && driftPpm === 0)) return this.clock;
    let clock = this.wallClocks.get(host);
    if (clock === undefined) {
      clock = new SkewedClock(this.clock, drawSkew(this.skewRandom, skewMs, driftPpm));
      this.wallClocks.set(host, clock);
      const { offsetMs, driftPpm: drift } = clock.skew;
      this.log(`clock of ${host}: ${offsetMs >= 0 ? '+' : ''}${(offsetMs / 1000).toFixed(3)} s, drift ${drift >= 0 ? '+' : ''}${drift} ppm`);
    }
    return clock;
  }

  async run(): Promise<void> {
    const split = this.options.shape === 'split';
    const dynamicQuorum = this.options.dynamicQuorum === true;
    const shape = split ? `${CONTROLLERS} controllers and ${BROKERS} brokers` : `${BROKERS} combined nodes`;
    this.log(`seed ${this.options.seed}: ${shape}${dynamicQuorum ? ' (a dynamic quorum: voters added and removed)' : ''}, topic ${TOPIC} (${PARTITIONS} partitions, RF=${BROKERS}, min.insync.replicas=2)`);
    const cluster = await this.drive(
      startCluster({
        ...(split ? { controllers: CONTROLLERS, brokers: BROKERS } : { combined: BROKERS }),
        dynamicQuorum,
        env: this.env('harness', new SimFileSystem(this.fork(), this.clock)),
        nodeEnv: (nodeId) => {
          const disk = new SimFileSystem(this.fork(), this.clock);
          this.disks.set(nodeId, disk);
          const pause = new PauseControl();
          this.pauses.set(nodeId, pause);
          return pausableEnv(this.env(`node-${nodeId}`, disk), pause);
        },
        logger: (nodeId) => this.nodeLogger(nodeId),
        // The election timeout its seeds were found with (startCluster's own default is shorter since): same seed, same trace.
        config: { 'controller.quorum.election.timeout.ms': 100, 'broker.session.timeout.ms': 3000, 'broker.heartbeat.interval.ms': 500, 'offsets.topic.num.partitions': 3, 'transaction.state.log.num.partitions': 3 },
      }),
      { limitMs: 60_000, what: 'the cluster to start' },
    );
    this.cluster = cluster;
    for (const node of cluster.nodes) this.tapIncarnation(node);
    await this.makeDirectoriesDurable();
    this.log(`cluster ${cluster.clusterId} started at ${cluster.bootstrapServers}`);
    await this.createTopic();
    const producer = this.produce();
    const consumer = this.consume();
    const group = this.options.groups === false ? Promise.resolve() : this.consumeInGroup();
    const transactional = this.options.transactions === false ? Promise.resolve() : Promise.all([this.produceTransactions(), this.consumeCommitted()]);
    this.changingVoters = dynamicQuorum && this.options.faults !== false;
    const voterChanges = this.changingVoters ? this.changeVoters() : Promise.resolve();
    this.administering = this.options.adminOps === true && this.options.faults !== false;
    const administration = this.administering ? this.administer() : Promise.resolve();
    if (this.options.faults !== false) await this.injectFaults();
    else await this.runFor(this.faultPhaseMs);
    this.changingVoters = false;
    this.administering = false;
    await this.drive(voterChanges, { limitMs: 2 * VOTER_CHANGE_TIMEOUT_MS + 10_000, what: 'the last voter change' });
    await this.drive(administration, { limitMs: 180_000, what: 'the last admin operation' });
    await this.healAndAwaitWhole();
    if (dynamicQuorum) await this.awaitVotersAgreed();
    if (this.options.adminOps === true) await this.awaitAdminOutcomes();
    if (this.options.groups !== false) await this.awaitGroupStable();
    this.loadRunning = false;
    await this.drive(Promise.all([producer, consumer, group, transactional]), { limitMs: 180_000, what: 'the producer to flush and the clients to close' });
    await this.finalCheck();
    this.log(`done: ${this.acked.length} acked, ${this.consumed} consumed`);
  }

  // ---- driving

  /** Steps the simulation until `operation` settles, or fails after `limitMs` of simulated time. */
  async drive<T>(operation: Promise<T>, options: { limitMs: number; what: string; state?: () => string }): Promise<T> {
    const state: { outcome: { value: T } | { error: unknown } | null } = { outcome: null };
    operation.then(
      (value) => (state.outcome = { value }),
      (error: unknown) => (state.outcome = { error }),
    );
    const deadlineMs = this.clock.nowMs() + options.limitMs;
    while (state.outcome === null) {
      if (this.clock.nowMs() > deadlineMs) throw new SimViolation({ invariant: 'liveness', detail: `${options.what}: not within ${options.limitMs} ms${options.state === undefined ? '' : `: ${options.state()}`}` });
      await this.step(deadlineMs + 1);
    }
    if ('error' in state.outcome) throw state.outcome.error;
    return state.outcome.value;
  }

  async runFor(ms: number): Promise<void> {
    const untilMs = this.clock.nowMs() + ms;
    while (this.clock.nowMs() < untilMs) await this.step(untilMs);
  }

  /** Waits (in simulated time) until `done`, checking after every step. False after `limitMs`. */
  async runUntil(done: () => boolean, limitMs: number): Promise<boolean> {
    const untilMs = this.clock.nowMs() + limitMs;
    while (!done()) {
      if (this.clock.nowMs() >= untilMs) return false;
      await this.step(untilMs);
    }
    return true;
  }

  private async step(notAfterMs: number): Promise<void> {
    await nextTurn();
    if (++this.steps > STEPS_MAX) throw new Error(`more than ${STEPS_MAX} steps`);
    this.checkContinuous();
    const nextMs = this.clock.nextDueMs();
    if (nextMs === null) throw new SimViolation({ invariant: 'liveness', detail: 'nothing left to run: every timer is gone while work waits' });
    this.clock.advance(Math.max(0, Math.min(nextMs, notAfterMs) - this.clock.nowMs()));
  }

  /** A simulated pause of `ms`, for the harness's own loops (the clock's timers, like every node's). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.schedule(ms, resolve));
  }

  // ---- observation

  private nodeLogger(nodeId: number): Logger {
    const line = (level: keyof typeof LOG_LEVELS) => (message: string) => {
      if (LOG_LEVELS[level] <= this.nodeLogLevel) this.log(`node-${nodeId} ${level}: ${message}`);
    };
    return { error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug') };
  }

  /**
   * Taps the loader of a node's incarnation, whose start has just begun: the
   * start runs synchronously up to its first wait, so the SpoolNode exists
   * and its Raft client has not started.
   */
  private tapIncarnation(node: EmbeddedNode): void {
    const incarnation = (this.incarnations.get(node.nodeId) ?? 0) + 1;
    this.incarnations.set(node.nodeId, incarnation);
    const loader = node.node.shared.loader;
    const handleCommit = loader.handleCommit.bind(loader);
    const handleLoadSnapshot = loader.handleLoadSnapshot.bind(loader);
    loader.handleCommit = (batch: Batch<MetadataRecord>) => {
      this.report(this.metadataLog.observeCommit(node.nodeId, incarnation, { baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, epoch: batch.epoch, digest: digestOf(batch) }));
      return handleCommit(batch);
    };
    loader.handleLoadSnapshot = (snapshot) => {
      this.metadataLog.observeSnapshot(node.nodeId, incarnation, snapshot.id.offset);
      handleLoadSnapshot(snapshot);
    };
  }

  private report(violation: Violation | null): void {
    if (violation !== null && this.pendingViolation === null) this.pendingViolation = violation;
  }

  /** The invariants checked after every step. */
  private checkContinuous(): void {
    const cluster = this.cluster;
    if (cluster !== null) {
      for (const node of cluster.nodes) {
        if (node.running) {
          this.observeNode(node);
          this.runningAtLastCheck.add(node.node);
        } else if (this.runningAtLastCheck.delete(node.node)) {
          // It stopped during this step (a disk failure, a kill) perhaps just after its HW moved and a consumer's
          // waiting fetch was answered below the new HW: that HW was reached all the same.
          for (const partition of hostedPartitions(node)) this.observeHighWatermark(partition);
        }
      }
    }
    if (this.pendingViolation !== null) throw new SimViolation(this.pendingViolation);
  }

  private observeNode(node: EmbeddedNode): void {
    const spool = node.node;
    const incarnation = this.incarnations.get(node.nodeId)!;
    const raft = spool.shared.raft;
    const { leaderId, epoch } = raft.leaderAndEpoch;
    if (raft.isLeader) this.report(this.leaders.observeLeader(node.nodeId, epoch));
    const seen = this.lastLeader.get(node.nodeId);
    if (seen === undefined || seen.leaderId !== leaderId || seen.epoch !== epoch) {
      this.lastLeader.set(node.nodeId, { leaderId, epoch });
      this.log(`node-${node.nodeId} raft: epoch ${epoch}, leader ${leaderId ?? 'unknown'} (${raft.role})`);
    }
    this.observeVoterSets(node, incarnation);
    for (const partition of hostedPartitions(node)) this.observePartition(node.nodeId, incarnation, partition);
  }

  private observeHighWatermark(partition: Partition, view = this.viewOf(partition)): void {
    const highWatermark = partition.highWatermark;
    if (highWatermark === view.highWatermark) return;
    view.highWatermark = highWatermark;
    this.reads.observeHighWatermark(view.name, highWatermark);
  }

  private viewOf(partition: Partition): PartitionView {
    let view = this.partitionViews.get(partition);
    if (view === undefined) {
      view = { name: `${partition.topicPartition.topic}-${partition.topicPartition.partition}`, highWatermark: -1, leaderObserved: null, leadership: null };
      this.partitionViews.set(partition, view);
    }
    return view;
  }

  /**
   * One hosted partition after a step. This runs for every partition of
   * every node after every step, so it only calls the checkers and builds
   * strings when what they look at moved; a repeated observation of the
   * same value is a no-op for each of them.
   */
  private observePartition(nodeId: number, incarnation: number, partition: Partition): void {
    const view = this.viewOf(partition);
    this.observeHighWatermark(partition, view);
    const highWatermark = partition.highWatermark;
    if (!partition.isLeader) {
      view.leaderObserved = null;
      return;
    }
    const leaderEpoch = partition.leaderEpoch;
    const last = view.leaderObserved;
    if (last === null || last.incarnation !== incarnation || last.leaderEpoch !== leaderEpoch || last.highWatermark !== highWatermark) {
      view.leaderObserved = { incarnation, leaderEpoch, highWatermark };
      this.report(this.leaderHighWatermarks.observeLeaderHighWatermark({ nodeId, incarnation, partition: view.name, leaderEpoch }, highWatermark));
    }
    if (partition.topicPartition.topic !== TOPIC) return;
    // The ISR is replaced, never changed in place (a ReadonlySet), so the same set and epoch give the same line.
    if (view.leadership === null || view.leadership.leaderEpoch !== leaderEpoch || view.leadership.isr !== partition.isr) {
      view.leadership = { leaderEpoch, isr: partition.isr, text: `node-${nodeId} epoch ${leaderEpoch} isr [${[...partition.isr].sort().join(',')}]` };
    }
    const leadership = view.leadership.text;
    const key = `${view.name}@${nodeId}`;
    if (this.partitionLeaders.get(key) !== leadership) {
      this.partitionLeaders.set(key, leadership);
      this.log(`${view.name}: leader ${leadership}, HW ${highWatermark}`);
    }
  }

  // ---- the workload

  private clientOptions(host: string) {
    return { bootstrapServers: this.cluster!.bootstrapServers, clientId: host, env: this.env(host, new SimFileSystem(this.fork(), this.clock)) };
  }

  private async createTopic(): Promise<void> {
    const admin = new Admin(this.clientOptions('admin'));
    try {
      await this.drive(admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: BROKERS, configs: { 'min.insync.replicas': '2' } }]), {
        limitMs: 60_000,
        what: 'the topic to be created',
      });
    } finally {
      void admin.close();
    }
    const created = await this.runUntil(() => this.leadersOf(TOPIC).length === PARTITIONS, 30_000);
    if (!created) throw new SimViolation({ invariant: 'liveness', detail: `topic ${TOPIC} has no leaders 30 s after it was created` });
    this.log(`topic ${TOPIC} created`);
  }

  /** The partitions of `topic` that some running node leads. */
  private leadersOf(topic: string): number[] {
    const led = new Set<number>();
    for (const node of this.cluster!.nodes) {
      if (!node.running) continue;
      for (const partition of hostedPartitions(node)) {
        if (partition.isLeader && partition.topicPartition.topic === topic) led.add(partition.topicPartition.partition);
      }
    }
    return [...led];
  }

  /** Sends unique values at seeded intervals, round-robin over the partitions, until the load stops; then flushes. */
  private async produce(): Promise<void> {
    const producer = new Producer({ ...this.clientOptions('producer'), acks: 'all', idempotence: true, lingerMs: 5 });
    const random = this.fork();
    const sends: Promise<void>[] = [];
    let failed = 0;
    for (let n = 0; this.loadRunning; n++) {
      const value = `v${n}`;
      const partition = n % PARTITIONS;
      sends.push(
        producer.send({ topic: TOPIC, partition, value }).then(
          (metadata) => {
            this.acked.push({ partition: `${TOPIC}-${metadata.partition}`, offset: metadata.offset, value });
          },
          (error: Error) => {
            if (failed++ < 10) this.log(`producer: ${value} failed: ${error.message}`);
          },
        ),
      );
      await this.sleep(1 + random.nextInt(40));
    }
    await producer.flush();
    await Promise.all(sends);
    this.log(`producer: ${this.acked.length} acked, ${failed} failed`);
    await producer.close();
  }

  /** Reads both partitions from the start while the load runs; every record read is checked against the HW. */
  private consume(): Promise<void> {
    return this.readWhileLoading('consumer', 'read_uncommitted', (record) => {
      if (transactionOf(record.value?.toString() ?? '') === null) this.consumed++;
      this.report(this.reads.observeRead(`${record.topic}-${record.partition}`, record.offset));
    });
  }

  /** A consumer of `name` assigned both partitions from the start, told of each record it reads while the load runs. */
  private async readWhileLoading(name: string, isolationLevel: 'read_uncommitted' | 'read_committed', onRecord: (record: ConsumerRecord) => void): Promise<void> {
    const consumer = new Consumer({ ...this.clientOptions(name), isolationLevel });
    consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition })));
    consumer.seekToBeginning();
    try {
      while (this.loadRunning) {
        let records;
        try {
          records = await consumer.poll(200);
        } catch (error) {
          this.log(`${name}: poll failed: ${(error as Error).message}`);
          await this.sleep(100);
          continue;
        }
        for (const record of records) onRecord(record);
      }
    } finally {
      await consumer.close();
    }
  }

  /**
   * Two members of group `sim-group` (the classic protocol or KIP-848's, by
   * the seed) subscribe to the topic, check every record against the HW
   * and commit what they read after each poll; every accepted commit is
   * checked against the group's earlier ones.
   */
  /** The group's member clients, by client id. */
  private readonly groupMembers = new Map<string, Consumer>();

  private async consumeInGroup(): Promise<void> {
    const protocol = this.fork().nextInt(2) === 0 ? 'classic' : 'consumer';
    this.log(`group sim-group: two members, ${protocol} protocol`);
    const member = async (name: string) => {
      const consumer = new Consumer({
        ...this.clientOptions(name),
        groupId: 'sim-group',
        groupProtocol: protocol,
        autoOffsetReset: 'earliest',
        enableAutoCommit: false,
        sessionTimeoutMs: 10_000,
        heartbeatIntervalMs: 1_000,
      });
      consumer.subscribe([TOPIC]);
      this.groupMembers.set(name, consumer);
      let failures = 0;
      let commits = 0;
      while (this.loadRunning) {
        try {
          const next = new Map<number, number>();
          for (const record of await consumer.poll(200)) {
            this.report(this.reads.observeRead(`${record.topic}-${record.partition}`, record.offset));
            next.set(record.partition, record.offset + 1);
          }
          if (next.size === 0) continue;
          const offsets = [...next].map(([partition, offset]) => ({ topic: TOPIC, partition, offset }));
          await consumer.commitSync(offsets);
          for (const { partition, offset } of offsets) this.report(this.groupCommits.observeAcceptedCommit(name, `${TOPIC}-${partition}`, offset));
          commits++;
        } catch (error) {
          if (failures++ < 10) this.log(`${name}: ${(error as Error).message}`);
          await this.sleep(100);
        }
      }
      this.log(`${name}: ${commits} commits accepted, ${failures} polls or commits failed`);
      await consumer.close();
    };
    await Promise.all([member('member-a'), member('member-b')]);
  }

  /**
   * A transactional producer (transactional.id sim-txn, acks=all) runs
   * transactions of a few records over both partitions of the topic,
   * committing two in three and aborting the rest, by the seed. Only an
   * acknowledged EndTxn settles an outcome: a transaction whose commit or
   * abort failed stays in doubt. After a failure the producer aborts; if it
   * cannot, it is abandoned and a new one's initTransactions fences it and
   * ends what it left open.
   */
  private async produceTransactions(): Promise<void> {
    const random = this.fork();
    let producer: Producer | null = null;
    let incarnation = 0;
    let settled = 0;
    for (let n = 0; this.loadRunning; n++) {
      if (producer === null) {
        producer = new Producer({ ...this.clientOptions(`txn-producer-${++incarnation}`), transactionalId: TRANSACTIONAL_ID, acks: 'all', lingerMs: 5, transactionTimeoutMs: TRANSACTION_TIMEOUT_MS });
        try {
          await producer.initTransactions();
        } catch (error) {
          this.log(`txn-producer-${incarnation}: initTransactions failed: ${(error as Error).message}`);
          abandon(producer);
          producer = null;
          await this.sleep(500);
          continue;
        }
      }
      const run: TransactionRun = { transaction: `t${n}`, values: [], outcome: 'in-doubt' };
      this.transactions.push(run);
      if (await this.runTransaction(producer, run, random)) settled++;
      else if (!(await this.abortAfterFailure(producer, run))) {
        abandon(producer);
        producer = null;
      }
      // A transaction every 100 to 300 ms: each costs EndTxn, a transaction log write and a marker per partition, so a denser load slows every seed.
      await this.sleep(100 + random.nextInt(200));
    }
    if (producer !== null) await producer.close();
    this.log(`txn-producer: ${this.transactions.length} transactions, ${settled} settled as asked, ${this.transactions.filter((t) => t.outcome === 'in-doubt').length} in doubt`);
  }

  /** Sends a transaction's records and commits or aborts it; false when that failed. */
  private async runTransaction(producer: Producer, run: TransactionRun, random: SeededRandom): Promise<boolean> {
    const commit = random.nextInt(3) !== 0;
    const count = 1 + random.nextInt(6);
    const firstPartition = random.nextInt(PARTITIONS);
    const values = run.values as string[];
    try {
      producer.beginTransaction();
      for (let i = 0; i < count; i++) {
        const value = `${run.transaction}-${i}`;
        values.push(value);
        // A record that fails makes the transaction abortable: the commit refuses, which is what is checked.
        producer.send({ topic: TOPIC, partition: (firstPartition + i) % PARTITIONS, value }).catch(() => undefined);
        await this.sleep(1 + random.nextInt(20));
      }
      if (commit) {
        await producer.commitTransaction();
        run.outcome = 'committed';
      } else {
        await producer.abortTransaction();
        this.settleAborted(run);
      }
      return true;
    } catch (error) {
      this.log(`txn-producer: ${run.transaction} (${count} records) failed to ${commit ? 'commit' : 'abort'}: ${(error as Error).message}`);
      return false;
    }
  }

  /** Aborts after a failed commit or abort; the transaction stays in doubt if a commit had been asked for (its EndTxn may have gone through). */
  private async abortAfterFailure(producer: Producer, run: TransactionRun): Promise<boolean> {
    try {
      await producer.abortTransaction();
      this.log(`txn-producer: ${run.transaction} aborted after the failure (still in doubt)`);
      return true;
    } catch (error) {
      this.log(`txn-producer: ${run.transaction}: the abort after the failure failed too: ${(error as Error).message}`);
      return false;
    }
  }

  private settleAborted(run: TransactionRun): void {
    run.outcome = 'aborted';
    this.report(this.committedReads.observeAbortAcknowledged(run.transaction));
  }

  /** Reads both partitions read_committed while the load runs; every transactional record read is checked against the acknowledged aborts. */
  private consumeCommitted(): Promise<void> {
    return this.readWhileLoading('committed-consumer', 'read_committed', (record) => this.observeCommittedRead(`${record.topic}-${record.partition}`, record.offset, record.value?.toString() ?? ''));
  }

  private observeCommittedRead(partition: string, offset: number, value: string): void {
    this.report(this.reads.observeRead(partition, offset));
    const transaction = transactionOf(value);
    if (transaction !== null) this.report(this.committedReads.observeRead(transaction, `${partition}@${offset}`));
  }

  // ---- faults

  private async injectFaults(): Promise<void> {
    const random = this.fork();
    const endMs = this.clock.nowMs() + this.faultPhaseMs;
    const gap = this.options.faultGapMs ?? { min: 300, max: 3_000 };
    if (!(gap.min >= 0 && gap.max > gap.min)) throw new RangeError(`bad fault gap [${gap.min}, ${gap.max})`);
    /** The nodes down, cut off or paused; a node that lost power is faulty alone. */
    const faulty = new Map<number, 'down' | 'cut' | 'paused' | 'starting' | 'disk'>();
    let powerCut = false;
    const faultyNodesMax = this.options.faultyNodesMax ?? 1;
    while (this.clock.nowMs() < endMs) {
      await this.runFor(gap.min + random.nextInt(gap.max - gap.min));
      this.maybeStepClock();
      const nodes = this.cluster!.nodes;
      for (const [nodeId, kind] of faulty) if (kind === 'starting' && !this.starting.has(nodeId)) faulty.delete(nodeId);
      const recoverable = [...faulty].filter(([, kind]) => kind !== 'starting');
      if (faulty.size >= faultyNodesMax && recoverable.length === 0) continue;
      if (recoverable.length > 0 && (faulty.size >= faultyNodesMax || powerCut || random.nextInt(2) === 0)) {
        const [nodeId, kind] = recoverable[0]!;
        // A restart runs on while faults go on (a start may wait on a cut that only a later step heals).
        if (kind === 'down') this.restartInBackground(this.cluster!.node(nodeId));
        else if (kind === 'paused') this.resume(nodeId);
        else if (kind === 'disk') await this.replaceFailedDisk(this.cluster!.node(nodeId));
        else this.net.heal();
        if (kind === 'down' || (kind === 'disk' && this.starting.has(nodeId))) faulty.set(nodeId, 'starting');
        else faulty.delete(nodeId);
        if (kind === 'cut') for (const [id, other] of faulty) if (other === 'cut') faulty.delete(id);
        powerCut = false;
        continue;
      }
      // Half the time the victim is the Raft leader (the active controller), whose loss moves the most.
      const healthy = nodes.filter((node) => !faulty.has(node.nodeId));
      const raftLeader = healthy.find((node) => node.running && node.node.shared.raft.isLeader);
      const victim = raftLeader !== undefined && random.nextInt(2) === 0 ? raftLeader : healthy[random.nextInt(healthy.length)]!;
      const other = nodes.find((node) => node !== victim && random.nextInt(2) === 0) ?? nodes.find((node) => node !== victim)!;
      const action = random.nextInt(8);
      if (action === 0) {
        this.log(`FAULT kill node-${victim.nodeId} (kill -9)`);
        await this.drive(victim.kill(), { limitMs: 10_000, what: 'a kill' });
        faulty.set(victim.nodeId, 'down');
      } else if (action === 1 && faulty.size > 0) {
        // A power cut loses acknowledged writes on one replica: with another node faulty that is beyond what acks=all promises.
        this.log(`FAULT kill node-${victim.nodeId} (kill -9; no power cut while another node is faulty)`);
        await this.drive(victim.kill(), { limitMs: 10_000, what: 'a kill' });
        faulty.set(victim.nodeId, 'down');
      } else if (action === 1) {
        // Either a seeded prefix of the unsynced operations survives (the last write maybe torn), or none of them.
        const keepUnsyncedPrefix = random.nextInt(2) === 0;
        this.log(`FAULT power cut on node-${victim.nodeId} (kill, and its disk loses ${keepUnsyncedPrefix ? 'some' : 'all'} unsynced writes)`);
        await this.drive(victim.kill(), { limitMs: 10_000, what: 'a kill' });
        const report = this.disks.get(victim.nodeId)!.crash({ keepUnsyncedPrefix });
        this.log(`disk of node-${victim.nodeId}: kept ${report.keptOperations} of ${report.pendingOperations} unsynced operations, torn write ${report.tornWriteBytes}`);
        await this.logMetadataDir(victim);
        faulty.set(victim.nodeId, 'down');
        powerCut = true;
      } else if (action === 2) {
        this.log(`FAULT partition node-${victim.nodeId} from the others, both ways`);
        this.net.partition([[`node-${victim.nodeId}`], nodes.filter((node) => node !== victim).map((node) => `node-${node.nodeId}`)]);
        faulty.set(victim.nodeId, 'cut');
      } else if (action === 3) {
        this.log(`FAULT one-way cut node-${victim.nodeId} -> node-${other.nodeId}`);
        this.net.cutOneWay(`node-${victim.nodeId}`, `node-${other.nodeId}`);
        faulty.set(victim.nodeId, 'cut');
      } else if (action === 4) {
        this.log(`FAULT reset the connections of node-${victim.nodeId}`);
        this.net.resetConnections(`node-${victim.nodeId}`);
      } else if (action === 5) {
        this.log(`FAULT pause node-${victim.nodeId} (a GC stall or SIGSTOP: its timers and arrivals wait)`);
        this.pauses.get(victim.nodeId)!.pause();
        faulty.set(victim.nodeId, 'paused');
      } else if (action === 6) {
        this.failDisk(victim, random);
        faulty.set(victim.nodeId, 'disk');
      } else {
        const fault = { extraDelayMs: random.nextInt(200), bytesPerMs: 100 + random.nextInt(1000) };
        this.log(`FAULT slow link node-${victim.nodeId} -> node-${other.nodeId}`);
        this.net.slowLink(`node-${victim.nodeId}`, `node-${other.nodeId}`, fault);
      }
    }
  }

  /** The nodes whose disk is failing: what `replaceFailedDisk` undoes. */
  private readonly diskFaults = new Set<number>();

  /**
   * A failing disk under a node: its next fsyncs fail with EIO, or it fills
   * up (a write past a seeded capacity is cut short with ENOSPC). The node
   * takes the log directory offline and, its only one, stops (as Kafka
   * halts); it stays faulty until the disk is replaced.
   */
  private failDisk(victim: EmbeddedNode, random: SeededRandom): void {
    const disk = this.disks.get(victim.nodeId)!;
    this.diskFaults.add(victim.nodeId);
    if (random.nextInt(2) === 0) {
      const skip = random.nextInt(3);
      this.log(`FAULT fsync fails with EIO on node-${victim.nodeId} (after ${skip} more fsyncs, until the disk is replaced)`);
      disk.injectFault({ operation: 'sync', code: 'EIO', skip, count: Infinity });
    } else {
      const headroom = random.nextInt(4 * 1024);
      this.log(`FAULT disk of node-${victim.nodeId} fills up (${headroom} bytes left: ENOSPC)`);
      disk.setCapacityBytes(disk.usedBytes() + headroom);
    }
  }

  /**
   * The operator's fix for a failing disk: the fault goes and the node is
   * restarted on the same files, whether it had stopped or not (a failed
   * call it did not report, as in quorum-state, may have left it unusable).
   */
  private async replaceFailedDisk(node: EmbeddedNode): Promise<void> {
    const disk = this.disks.get(node.nodeId)!;
    this.diskFaults.delete(node.nodeId);
    disk.clearFaults();
    disk.setCapacityBytes(null);
    this.log(`disk of node-${node.nodeId} replaced (the node ${node.running ? 'ran on' : 'had stopped'})`);
    await this.drive(node.kill(), { limitMs: 10_000, what: 'a kill' });
    this.restartInBackground(node);
  }

  private resume(nodeId: number): void {
    this.log(`resume node-${nodeId}`);
    this.pauses.get(nodeId)!.resume();
  }

  /** Nodes whose start is under way in the background, by id. */
  private readonly starting = new Map<number, Promise<void>>();

  /** Starts a node without waiting for it: a start that fails (other than by a kill) is a violation; a slow one is judged once everything heals. */
  private restartInBackground(node: EmbeddedNode): void {
    this.log(`restart node-${node.nodeId} (in the background)`);
    const started = node.start();
    this.tapIncarnation(node);
    const tracked = started.then(
      () => this.log(`node-${node.nodeId} running again`),
      (error: Error) => this.report({ invariant: 'restart-succeeds', detail: `node-${node.nodeId}: ${error.message}` }),
    );
    this.starting.set(node.nodeId, tracked.finally(() => this.starting.delete(node.nodeId)));
  }

  private async restart(node: EmbeddedNode): Promise<void> {
    this.log(`restart node-${node.nodeId}`);
    const starting = node.start();
    this.tapIncarnation(node);
    try {
      await this.drive(starting, { limitMs: 60_000, what: `node-${node.nodeId} to restart`, state: () => this.describeState() });
      this.log(`node-${node.nodeId} running again`);
    } catch (error) {
      if (error instanceof SimViolation) throw error;
      throw new SimViolation({ invariant: 'restart-succeeds', detail: `node-${node.nodeId}: ${(error as Error).message}: ${this.describeState()}` });
    }
  }

  /** What survived of a node's metadata log directory, for the trace. */
  private async logMetadataDir(node: EmbeddedNode): Promise<void> {
    const disk = this.disks.get(node.nodeId)!;
    const dir = `${node.node.config.logDirs[0]}/__cluster_metadata-0`;
    const names = await disk.readdir(dir).catch(() => null);
    if (names === null) return this.log(`disk of node-${node.nodeId}: ${dir} is gone`);
    const sizes = await Promise.all(names.map(async (name) => `${name} ${(await disk.stat(`${dir}/${name}`))?.size ?? '?'}`));
    this.log(`disk of node-${node.nodeId}: ${dir}: ${sizes.join(', ')}`);
  }

  /** Heals the network, restarts what is down, and waits until the cluster is whole. */
  private async healAndAwaitWhole(): Promise<void> {
    this.log('HEAL: network healed, every node restarted');
    this.net.heal();
    this.net.clearLinkFaults();
    for (const [nodeId, pause] of this.pauses) if (pause.paused) this.resume(nodeId);
    for (const nodeId of [...this.diskFaults.keys()]) await this.replaceFailedDisk(this.cluster!.node(nodeId));
    for (const node of this.cluster!.nodes) if (!node.running && !this.starting.has(node.nodeId)) await this.restart(node);
    const whole = await this.runUntil(() => this.whole(), this.healBoundMs);
    if (!whole) throw new SimViolation({ invariant: 'liveness-after-heal', detail: `the cluster is not whole ${this.healBoundMs} ms after healing: ${this.describeState()}` });
    this.log('cluster whole: one agreed Raft leader, full ISRs');
  }

  /**
   * Once the cluster is whole, the group must become stable within
   * `groupStableBoundMs` (checkGroupStable): described by its coordinator
   * every 500 ms while the members go on polling and committing.
   */
  private async awaitGroupStable(): Promise<void> {
    const boundMs = this.options.groupStableBoundMs ?? 60_000;
    const admin = new Admin(this.clientOptions('group-checker'));
    const expected = { clients: [...this.groupMembers.keys()], partitions: Array.from({ length: PARTITIONS }, (_, partition) => `${TOPIC}-${partition}`) };
    const names = (tps: readonly { topic: string; partition: number }[]) => tps.map((tp) => `${tp.topic}-${tp.partition}`);
    let last = 'not described yet';
    const startedMs = this.clock.nowMs();
    const stable = async (): Promise<void> => {
      for (;;) {
        try {
          const [group] = await admin.describeConsumerGroups(['sim-group']);
          const view = {
            state: group!.groupState,
            members: group!.members.map((member) => ({ memberId: member.memberId, clientId: member.clientId, assignment: names(member.assignment), targetAssignment: member.targetAssignment === null ? null : names(member.targetAssignment) })),
            clientAssignments: new Map([...this.groupMembers].map(([name, consumer]) => [name, names(consumer.assignment())])),
          };
          const violation = checkGroupStable(view, expected);
          if (violation === null) return;
          last = violation.detail;
        } catch (error) {
          last = `describing the group failed: ${(error as Error).message}`;
        }
        await this.sleep(500);
      }
    };
    try {
      await this.drive(stable(), { limitMs: boundMs, what: 'the group to become stable' });
    } catch (error) {
      // Only the bound running out is this invariant's failure; time stopping (also 'liveness') stays what it is.
      if (error instanceof SimViolation && error.violation.invariant === 'liveness' && error.violation.detail.startsWith('the group to become stable')) {
        throw new SimViolation({ invariant: 'group-stabilises', detail: `group sim-group is not stable ${boundMs} ms after the cluster became whole: ${last}` });
      }
      throw error;
    } finally {
      void admin.close();
    }
    this.log(`group sim-group stable after ${this.clock.nowMs() - startedMs} ms: ${this.groupMembers.size} members, every partition assigned once`);
  }

  private whole(): boolean {
    const nodes = this.cluster!.nodes;
    if (!nodes.every((node) => node.running)) return false;
    const leaders = new Set(nodes.map((node) => JSON.stringify(node.node.shared.raft.leaderAndEpoch)));
    if (leaders.size !== 1 || nodes.every((node) => !node.node.shared.raft.isLeader)) return false;
    let fullIsrs = 0;
    for (const node of nodes) {
      for (const partition of hostedPartitions(node)) {
        if (partition.isLeader && partition.topicPartition.topic === TOPIC && partition.isr.size === BROKERS) fullIsrs++;
      }
    }
    return fullIsrs === PARTITIONS;
  }

  private describeState(): string {
    return this.cluster!.nodes
      .map((node) => {
        if (!node.running) return `node-${node.nodeId} down (${raftState(node)})`;
        const raft = node.node.shared.raft;
        const partitions = hostedPartitions(node)
          .filter((partition) => partition.topicPartition.topic === TOPIC)
          .map((p) => `${p.topicPartition.partition}:${p.isLeader ? `leader isr [${[...p.isr].join(',')}]` : `follower of ${p.leaderId}`}`);
        return `node-${node.nodeId} raft ${raft.role} epoch ${raft.leaderAndEpoch.epoch} leader ${raft.leaderAndEpoch.leaderId}; ${partitions.join(' ')}`;
      })
      .join('; ');
  }

  /** Reads both partitions to their ends with fresh consumers (read_uncommitted, and read_committed) and checks what they hold. */
  private async finalCheck(): Promise<void> {
    const ends = this.endOffsets();
    const stored = await this.readToEnds('checker', 'read_uncommitted', ends);
    this.log(`final read: ${stored.length} records (ends ${[...ends.values()].join(', ')})`);
    for (const violation of [checkAckedPresent(this.acked, stored), checkNoDuplicates(stored)]) if (violation !== null) throw new SimViolation(violation);
    if (this.options.transactions === false) return;
    const committed = await this.readToEnds('committed-checker', 'read_committed', ends);
    this.log(`final read_committed read: ${committed.length} records`);
    for (const record of committed) this.observeCommittedRead(record.partition, record.offset, record.value);
    if (this.pendingViolation !== null) throw new SimViolation(this.pendingViolation);
    const atomic = checkTransactionsAtomic(this.transactions, committed);
    if (atomic !== null) throw new SimViolation(atomic);
  }

  /** Every record of both partitions up to `ends`, as a fresh consumer at this isolation level reads them. */
  private async readToEnds(host: string, isolationLevel: 'read_committed' | 'read_uncommitted', ends: Map<number, number>): Promise<StoredRecord[]> {
    const consumer = new Consumer({ ...this.clientOptions(host), isolationLevel });
    const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition }));
    consumer.assign(partitions);
    consumer.seekToBeginning();
    const stored: StoredRecord[] = [];
    /** The newest CreateTime of the idempotent producer's records: its skewed clock's, shown in the trace against true time. */
    let newestProducerStampMs = -1;
    const read = async () => {
      // The position, not the last record: a read_committed consumer skips aborted records and markers.
      const behind = async () => (await Promise.all(partitions.map(async (tp) => (await consumer.position(tp)) < ends.get(tp.partition)!))).some(Boolean);
      while (await behind()) {
        for (const record of await consumer.poll(500)) {
          const value = record.value?.toString() ?? '';
          if (transactionOf(value) === null) newestProducerStampMs = Math.max(newestProducerStampMs, record.timestamp);
          stored.push({ partition: `${record.topic}-${record.partition}`, offset: record.offset, value });
        }
      }
      await consumer.close();
    };
    await this.drive(read(), { limitMs: 120_000, what: `the final ${isolationLevel} read` });
    if (newestProducerStampMs >= 0) this.log(`${host}: the producer's newest record is stamped ${newestProducerStampMs - this.clock.nowMs()} ms from true time`);
    return stored;
  }

  /** Each partition's HW on its leader. */
  private endOffsets(): Map<number, number> {
    const ends = new Map<number, number>();
    for (const node of this.cluster!.nodes) {
      for (const partition of hostedPartitions(node)) {
        if (partition.isLeader && partition.topicPartition.topic === TOPIC) ends.set(partition.topicPartition.partition, partition.highWatermark);
      }
    }
    return ends;
  }

  /** Every directory on every disk made durable once the cluster is formatted and started (an operator's disks exist before a run). */
  private async makeDirectoriesDurable(): Promise<void> {
    for (const node of this.cluster!.nodes) await syncTree(this.disks.get(node.nodeId)!, '/');
  }

  // ---- admin operations

  /** True while the operator's admin client goes on (the fault phase, with adminOps). */
  private administering = false;
  /** The operator's topics, by name: what their acknowledged operations left (null: in doubt). */
  private readonly adminTopics = new Map<string, AdminTopicExpectation>();

  /**
   * The operator: one admin operation at a time while the faults run. With
   * no topic of its own whose state is settled, or one time in four, it
   * creates one (1 or 2 partitions, RF 2, a retention.ms); else, on a
   * settled topic, it deletes it, adds a partition or sets retention.ms. An
   * acknowledgement settles what the operation did; a failure leaves it in
   * doubt, and the topic is left alone from then on.
   */
  private async administer(): Promise<void> {
    const random = this.fork();
    const admin = new Admin({ ...this.clientOptions('operator'), requestTimeoutMs: 10_000 });
    let created = 0;
    let failed = 0;
    while (this.administering) {
      await this.sleep(ADMIN_OP_GAP_MS.min + random.nextInt(ADMIN_OP_GAP_MS.max - ADMIN_OP_GAP_MS.min));
      if (!this.administering) break;
      const settled = [...this.adminTopics].filter(([, t]) => t.exists === true && t.partitions !== null && t.retentionMs !== null);
      const action = settled.length === 0 ? 0 : random.nextInt(4);
      const retentionMs = String(60_000 * (1 + random.nextInt(1_000)));
      let what: string;
      let operation: () => Promise<unknown>;
      let settle: (acknowledged: boolean) => void;
      if (action === 0) {
        const name = `adm-${created++}`;
        const partitions = 1 + random.nextInt(2);
        what = `create topic ${name} (${partitions} partitions, retention.ms ${retentionMs})`;
        operation = () => admin.createTopics([{ name, numPartitions: partitions, replicationFactor: ADMIN_TOPIC_REPLICATION_FACTOR, configs: { 'retention.ms': retentionMs } }], { timeoutMs: 10_000 });
        settle = (ok) => this.adminTopics.set(name, ok ? { exists: true, partitions, retentionMs } : { exists: null, partitions: null, retentionMs: null });
      } else {
        const [name, topic] = settled[random.nextInt(settled.length)]!;
        if (action === 1) {
          what = `delete topic ${name}`;
          operation = () => admin.deleteTopics([name], { timeoutMs: 10_000 });
          settle = (ok) => (topic.exists = ok ? false : null);
        } else if (action === 2) {
          const partitions = topic.partitions! + 1;
          what = `create partitions of ${name} up to ${partitions}`;
          operation = () => admin.createPartitions({ [name]: partitions }, { timeoutMs: 10_000 });
          settle = (ok) => (topic.partitions = ok ? partitions : null);
        } else {
          what = `set retention.ms ${retentionMs} on ${name}`;
          operation = () => admin.alterConfigs([{ type: 'topic', name, ops: [{ name: 'retention.ms', op: 'set', value: retentionMs }] }]);
          settle = (ok) => (topic.retentionMs = ok ? retentionMs : null);
        }
      }
      try {
        await operation();
        settle(true);
        this.log(`ADMIN ${what}: acknowledged`);
      } catch (error) {
        settle(false);
        failed++;
        this.log(`ADMIN ${what}: failed (in doubt): ${(error as Error).message}`);
      }
    }
    this.log(`operator: ${this.adminTopics.size} topics created or tried, ${failed} operations failed`);
    void admin.close();
  }

  /**
   * Once the cluster is whole, what the admin operations acknowledged must
   * show (checkAdminOutcomes) within ADMIN_OUTCOMES_BOUND_MS: topics listed,
   * described and their retention.ms read every 500 ms until it does.
   */
  private async awaitAdminOutcomes(): Promise<void> {
    const admin = new Admin(this.clientOptions('admin-checker'));
    let last: Violation | null = null;
    const holds = async (): Promise<void> => {
      for (;;) {
        try {
          const names = (await admin.listTopics()).filter((name) => this.adminTopics.has(name));
          const observed = new Map<string, AdminTopicObserved>();
          for (const description of await admin.describeTopics(names)) observed.set(description.name, { partitions: description.partitions.length, retentionMs: null });
          const configs = await admin.describeConfigs([...observed.keys()].map((name) => ({ type: 'topic' as const, name })), { configNames: ['retention.ms'] });
          for (const resource of configs) observed.get(resource.name)!.retentionMs = resource.configs.find((c) => c.name === 'retention.ms')?.value ?? null;
          last = checkAdminOutcomes(this.adminTopics, observed);
          if (last === null) return;
        } catch (error) {
          last = { invariant: 'acknowledged-admin-operations-hold', detail: `describing the topics failed: ${(error as Error).message}` };
        }
        await this.sleep(500);
      }
    };
    try {
      await this.drive(holds(), { limitMs: ADMIN_OUTCOMES_BOUND_MS, what: 'the acknowledged admin outcomes to show' });
    } catch (error) {
      if (error instanceof SimViolation && error.violation.invariant === 'liveness' && last !== null) throw new SimViolation(last);
      throw error;
    } finally {
      void admin.close();
    }
    const settled = [...this.adminTopics.values()].filter((t) => t.exists !== null).length;
    this.log(`admin outcomes hold: ${settled} of ${this.adminTopics.size} topics settled`);
  }

  // ---- the dynamic quorum (KIP-853)

  /** True while the operator goes on changing voters (the fault phase of a dynamic quorum). */
  private changingVoters = false;
  private readonly voterCheck = new CommittedVoterSetsAgree();
  /** What each node incarnation's committed voter history was last seen as, by a key of its shape. */
  private readonly voterViews = new Map<string, string>();
  /** The voter set the last acknowledged change left, or null while a failed change leaves it in doubt (or none was made). */
  private expectedVoters: string | null = null;
  private controllersAdded = 0;
  private quorumAdmin: Env | null = null;

  /** Feeds a node's committed voter history to the checker when it changed since the last step. */
  private observeVoterSets(node: EmbeddedNode, incarnation: number): void {
    const history = node.node.shared.raft.committedVoterSets;
    const key = `${node.nodeId}/${incarnation}`;
    const shape = `${history.length}/${history[0]?.offset}/${history.at(-1)?.offset}`;
    if (this.voterViews.get(key) === shape) return;
    this.voterViews.set(key, shape);
    const committed = history.map((entry) => ({ offset: entry.offset, fromSnapshot: entry.fromSnapshot, voters: votersOf(entry.voters) }));
    this.report(this.voterCheck.observeCommitted(node.nodeId, incarnation, committed));
    const last = committed.at(-1);
    if (last !== undefined) this.log(`node-${node.nodeId} committed voters [${idsOf(last.voters)}] (offset ${last.offset}${last.fromSnapshot ? ', from a snapshot' : ''})`);
  }

  /**
   * The operator: while the faults run, one voter change at a time, the
   * first at once and then every VOTER_CHANGE_GAP_MS. With the initial number of voters it adds a
   * controller that is not a voter (one removed before, or a new one, up to
   * CONTROLLERS_ADDED_MAX); with more it removes a voter, the active
   * controller as likely as any other. A change that fails is tried again
   * later, as an operator would; its outcome is in doubt meanwhile.
   */
  private async changeVoters(): Promise<void> {
    const random = this.fork();
    const initialVoters = this.cluster!.nodes.filter((node) => node.roles.includes('controller')).length;
    // The first change comes at once (a new controller takes a while to start), so that short seeds see a few.
    for (let first = true; this.changingVoters; first = false) {
      if (!first) await this.sleep(VOTER_CHANGE_GAP_MS.min + random.nextInt(VOTER_CHANGE_GAP_MS.max - VOTER_CHANGE_GAP_MS.min));
      if (!this.changingVoters) break;
      const active = this.cluster!.activeController();
      if (active === null) continue;
      const voters = active.node.shared.raft.voterSet;
      if (voters.ids.length > initialVoters) {
        const removed = voters.voters[random.nextInt(voters.ids.length)]!;
        const rest = voters.voters.filter((voter) => voter.id !== removed.id);
        await this.voterChange(active, `remove voter ${removed.id}`, (c) => c.send(RemoveRaftVoter, { clusterId: null, voterId: removed.id, voterDirectoryId: removed.directoryId }), rest.map(voterName));
        continue;
      }
      let joining = this.cluster!.nodes.find((node) => node.roles.includes('controller') && !voters.ids.includes(node.nodeId) && node.running);
      if (joining === undefined) {
        if (this.controllersAdded >= CONTROLLERS_ADDED_MAX || this.starting.size > 0) continue;
        this.controllersAdded++;
        const node = await this.cluster!.addController({ start: false });
        // A new machine's formatted directories are on its disk before it starts, as the first ones' are.
        await syncTree(this.disks.get(node.nodeId)!, '/');
        this.log(`VOTERS new controller node-${node.nodeId} formatted (--no-initial-controllers)`);
        this.restartInBackground(node);
        continue;
      }
      const directoryId = joining.node.shared.logDirIds[0]!;
      const endpoint = controllerEndpoint(joining);
      const after = [...voters.voters.map(voterName), `${joining.nodeId}:${directoryId}`].sort();
      const request = { clusterId: null, timeoutMs: VOTER_CHANGE_TIMEOUT_MS, voterId: joining.nodeId, voterDirectoryId: directoryId, listeners: [{ name: 'CONTROLLER', ...endpoint }], ackWhenCommitted: true };
      await this.voterChange(active, `add voter ${joining.nodeId}`, (c) => c.send(AddRaftVoter, request), after);
    }
  }

  /** Sends one voter change to the active controller's CONTROLLER listener; an acknowledgement settles the voters at `after`. */
  private async voterChange(active: EmbeddedNode, what: string, send: (connection: BrokerConnection) => Promise<{ errorCode: number; errorMessage: string | null }>, after: string[]): Promise<void> {
    this.quorumAdmin ??= this.env('quorum-admin', new SimFileSystem(this.fork(), this.clock));
    this.log(`VOTERS ${what} (to node-${active.nodeId})`);
    try {
      const connection = await BrokerConnection.connect({ ...controllerEndpoint(active), env: this.quorumAdmin, clientId: 'quorum-admin', requestTimeoutMs: VOTER_CHANGE_TIMEOUT_MS + 5_000 });
      try {
        const response = await send(connection);
        if (response.errorCode !== ErrorCode.NONE) throw new KafkaError(response.errorCode, response.errorMessage);
      } finally {
        await connection.close();
      }
      this.expectedVoters = after.sort().join(',');
      this.log(`VOTERS ${what}: acknowledged, voters [${idsOf(this.expectedVoters)}]`);
    } catch (error) {
      this.expectedVoters = null;
      this.log(`VOTERS ${what}: failed (in doubt): ${(error as Error).message}`);
    }
  }

  /**
   * After the heal every node must come to hold one voter set, committed
   * (its last committed VotersRecord and its log's last agree), within
   * VOTERS_AGREE_BOUND_MS; and if the last change was acknowledged, that set
   * is the one it left (checkVoterChangesHold).
   */
  private async awaitVotersAgreed(): Promise<void> {
    const viewOf = (node: EmbeddedNode) => {
      const raft = node.node.shared.raft;
      const committed = raft.committedVoterSets.at(-1);
      return committed === undefined ? null : { committed: votersOf(committed.voters), last: votersOf(raft.voterSet) };
    };
    const agreed = () => {
      const views = this.cluster!.nodes.map(viewOf);
      return views.every((view) => view !== null && view.committed === view.last && view.last === views[0]!.last) ? views[0]!.last : null;
    };
    if (!(await this.runUntil(() => agreed() !== null, VOTERS_AGREE_BOUND_MS))) {
      const views = this.cluster!.nodes.map((node) => `node-${node.nodeId} ${JSON.stringify(viewOf(node))}`).join('; ');
      throw new SimViolation({ invariant: 'liveness-after-heal', detail: `the voter sets do not agree ${VOTERS_AGREE_BOUND_MS} ms after the cluster became whole: ${views}` });
    }
    const voters = agreed()!;
    const violation = checkVoterChangesHold(this.expectedVoters, voters);
    if (violation !== null) throw new SimViolation(violation);
    this.log(`voters agreed everywhere: [${idsOf(voters)}]${this.expectedVoters === null ? ' (the last change was in doubt)' : ', as the last acknowledged change left them'}`);
  }
}

/** A voter as the checkers name it: `id:directoryId`. */
function voterName(voter: { id: number; directoryId: string }): string {
  return `${voter.id}:${voter.directoryId}`;
}

/** The ids of voters named `id:directoryId,...`, for the trace. */
function idsOf(voters: string): string {
  return voters.split(',').map((voter) => voter.slice(0, voter.indexOf(':'))).join(',');
}

function votersOf(voters: { voters: readonly { id: number; directoryId: string }[] }): string {
  return voters.voters.map(voterName).sort().join(',');
}

/** A controller's CONTROLLER listener. */
function controllerEndpoint(node: EmbeddedNode): { host: string; port: number } {
  const listener = node.node.config.list('listeners').find((l) => l.startsWith('CONTROLLER://'))!;
  const address = listener.slice('CONTROLLER://'.length);
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
}

/** Makes every directory under `path` durable on a simulated disk (its entries, then its own). */
async function syncTree(disk: SimFileSystem, path: string): Promise<void> {
  for (const name of await disk.readdir(path)) {
    const child = path === '/' ? `/${name}` : `${path}/${name}`;
    if ((await disk.stat(child))?.isDirectory === true) await syncTree(disk, child);
  }
  await disk.syncDir(path);
}

/** The partitions a node hosts (none on a controller-only node). */
function hostedPartitions(node: EmbeddedNode): readonly Partition[] {
  return node.roles.includes('broker') ? node.node.replicaManager.hostedPartitions() : [];
}

/** What a node's Raft client says of itself, while it may still be starting. */
function raftState(node: EmbeddedNode): string {
  try {
    const raft = node.node.shared.raft;
    return `raft ${raft.role} epoch ${raft.leaderAndEpoch.epoch} leader ${raft.leaderAndEpoch.leaderId} log end ${raft.logEndOffset} HW ${raft.highWatermark}`;
  } catch {
    return 'metadata log not open';
  }
}

/** The transaction a record's value belongs to (`t12-3` is record 3 of transaction t12), or null for the idempotent producer's values. */
function transactionOf(value: string): string | null {
  return value.startsWith('t') ? value.slice(0, value.indexOf('-')) : null;
}

/** Lets a producer that failed close in the background: its batches may wait out delivery.timeout.ms, and its successor fences it. */
function abandon(producer: Producer): void {
  producer.close().catch(() => undefined);
}

/** What `observePartition` last saw of one hosted partition. */
interface PartitionView {
  /** `topic-partition`. */
  readonly name: string;
  highWatermark: number;
  /** The last leader observation, null while a follower. */
  leaderObserved: { incarnation: number; leaderEpoch: number; highWatermark: number } | null;
  /** The leadership line of a partition of the topic, for the epoch and ISR it was built from. */
  leadership: { leaderEpoch: number; isr: ReadonlySet<number>; text: string } | null;
}

const LOG_LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;

function digestOf(batch: Batch<MetadataRecord>): string {
  const hash = createHash('sha256');
  for (const record of batch.records) hash.update(encodeMetadataRecord(record));
  return hash.digest('hex').slice(0, 12);
}
