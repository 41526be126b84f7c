/**
 * The faults of the ducktape oracle, each run against a FaultCluster while a
 * workload produces and consumes, and each waiting on what the cluster
 * shows (a new leader, the ISR whole again, acknowledged sends growing),
 * never on fixed delays:
 * - kill-leader: kill -9 of partition 0's leader, a new leader from the
 *   ISR, writes acknowledged again, then the old leader restarted and back
 *   in every ISR;
 * - bounce-each: a clean stop (SIGTERM, exit 0) of each node in turn, its
 *   partitions led elsewhere, writes acknowledged, the node restarted and
 *   back in every ISR;
 * - pause-leader: SIGSTOP of the leader until the controller has fenced it
 *   (its session timed out) and another node leads, then SIGCONT;
 * - partition-leader: the leader cut off from every node and client by the
 *   proxies until another node leads, then the partition healed.
 *
 * After the faults, `finishAndCheck` stops the producers, reads every
 * partition to its end, stops the consumers and checks the history.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { until } from '../interop/cluster/until.js';
import { FaultCluster, WAIT_MS } from './fault-cluster.js';
import { anomalyCounts, checkHistory, describeReport, type HistoryReport } from './history-checker.js';
import { NO_ANOMALIES, type Fault, type FaultPlan } from './plan.js';
import { highestPolled, type Workload } from './workload.js';


export interface FaultRun {
  cluster: FaultCluster;
  topic: string;
  workload: Workload;
  /** Acknowledged sends to wait for before, during and after a fault. */
  progress: number;
}


async function untilProgress(run: FaultRun, what: string): Promise<void> {
  const target = run.workload.acknowledged() + run.progress;
  await until(`${run.progress} more acknowledged sends ${what}`, async () => (run.workload.acknowledged() >= target ? true : null), { waitMs: WAIT_MS, pollMs: 100 });
}

async function leaderOfFirstPartition(run: FaultRun): Promise<number> {
  const partitions = await run.cluster.untilFullyReplicated(run.topic);
  return partitions[0]!.leader;
}

export interface FaultOutcome {
  /** Milliseconds from the fault to another leader of partition 0 agreed by the other nodes (null for bounce-each). */
  reelectionMs: number | null;
  /** What went otherwise than planned without breaking the oracle (a node that did not stop on SIGTERM). */
  notes: string[];
}

export async function runFault(run: FaultRun, fault: Fault): Promise<FaultOutcome> {
  const { cluster, topic } = run;
  await untilProgress(run, `before ${fault}`);
  let reelectionMs: number | null = null;
  const notes: string[] = [];
  if (fault === 'bounce-each') {
    for (const id of [0, 1, 2]) {
      if ((await cluster.cleanStop(id)) === 'killed') notes.push(`node ${id} did not exit on SIGTERM in time and was killed (docs/SKIPPED.md)`);
      await cluster.untilAgreed(`no partition of ${topic} led by the stopped node ${id}`, topic, (partitions) => partitions.every((p) => p.leader >= 0 && p.leader !== id), [id]);
      await untilProgress(run, `with node ${id} stopped`);
      await cluster.startNode(id);
      await cluster.untilFullyReplicated(topic);
    }
  } else {
    const leader = await leaderOfFirstPartition(run);
    const startedMs = Date.now();
    if (fault === 'kill-leader') await cluster.kill9(leader);
    else if (fault === 'pause-leader') cluster.pause(leader);
    else await cluster.network.isolate(leader);
    await cluster.untilLeaderMoved(topic, 0, leader);
    reelectionMs = Date.now() - startedMs;
    await untilProgress(run, `after ${fault} of node ${leader}`);
    if (fault === 'kill-leader') await cluster.startNode(leader);
    else if (fault === 'pause-leader') cluster.resume(leader);
    else cluster.network.heal();
    await cluster.untilFullyReplicated(topic);
  }
  await untilProgress(run, `after ${fault} healed`);
  return { reelectionMs, notes };
}

/** Stops producing, waits until the consumers read every partition to its end, stops them and checks the history. */
export async function finishAndCheck(run: FaultRun, partitions: number): Promise<HistoryReport> {
  await run.workload.stopProducers();
  const ends = await run.cluster.endOffsets(run.topic, partitions);
  try {
    await until(`every partition of ${run.topic} consumed to its end ${JSON.stringify(ends)}`, async () => {
      const highest = highestPolled(run.workload.history, run.topic);
      return ends.every((end, partition) => end === 0 || (highest.get(partition) ?? -1) >= end - 1) ? true : null;
    }, { waitMs: WAIT_MS, pollMs: 200 });
  } finally {
    await run.workload.stopConsumers();
  }
  return checkHistory(run.workload.history);
}

export interface FaultSuiteOptions {
  /** Topic names start with it. */
  name: string;
  partitions: number;
  plan: FaultPlan;
  startWorkload(cluster: FaultCluster, topic: string): Workload & { describe?(): string };
}

/**
 * One cluster; per round and fault a new RF=3, min.insync.replicas=2 topic
 * and a new workload run through the fault, then checked. Each is its own
 * subtest, failing with the workload's and the nodes' output.
 */
export async function runFaultSuite(t: TestContext, options: FaultSuiteOptions): Promise<void> {
  const cluster = await FaultCluster.start();
  try {
    for (let round = 1; round <= options.plan.rounds; round++) {
      for (const fault of options.plan.faults) {
        await t.test(`round ${round}: ${fault}`, (subtest) => runOne(subtest, cluster, options, `${options.name}-${round}-${fault}`, fault));
      }
    }
  } finally {
    await cluster.stop();
  }
}

async function runOne(t: TestContext, cluster: FaultCluster, options: FaultSuiteOptions, topic: string, fault: Fault): Promise<void> {
  await cluster.createTopic(topic, options.partitions);
  const workload = options.startWorkload(cluster, topic);
  const run = { cluster, topic, workload, progress: options.plan.progress };
  try {
    const { reelectionMs, notes } = await runFault(run, fault);
    // The figure docs/PERFORMANCE.md quotes (a measurement, not an assertion).
    if (reelectionMs !== null) t.diagnostic(`${fault}: partition 0 led by another node, as the others agree, ${reelectionMs} ms after the fault`);
    for (const note of notes) t.diagnostic(`${fault}: ${note}`);
  } catch (error) {
    cluster.healAll();
    await workload.stopProducers().catch(() => undefined);
    await workload.stopConsumers().catch(() => undefined);
    throw new Error(`${(error as Error).message}\n${workload.describe?.() ?? ''}\n${cluster.output()}`);
  }
  const report = await finishAndCheck(run, options.partitions);
  t.diagnostic(`${fault}: ${JSON.stringify(report.counts)}`);
  const sendErrors = new Set(run.workload.history.flatMap((event) => (event.type === 'send' && event.error !== undefined ? [event.error] : [])));
  for (const error of sendErrors) t.diagnostic(`${fault}: a send failed (outcome unknown): ${error}`);
  // runFault waited for `progress` acks before the fault, during it and after it healed: at least three times that.
  assert.ok(report.counts.acknowledged >= 3 * options.plan.progress, describeReport(report));
  assert.deepEqual(anomalyCounts(report), NO_ANOMALIES, describeReport(report));
}
