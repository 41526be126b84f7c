/**
 * Time to move a partition (KIP-455 reassignment) on an embedded cluster
 * (one controller, three brokers, src/node/cluster.ts): an RF=1 partition
 * on broker 0 holding `--mib` MiB of 1 KiB records is reassigned to broker 1;
 * the clock runs from the AlterPartitionReassignments call to the
 * controller's image showing the move complete (broker 1 the only replica
 * and the leader), which includes broker 1 fetching everything and joining
 * the ISR. Median of `--runs` runs, each on a fresh cluster.
 *
 * Run: npx tsc -p . && node dist/bench/reassign-bench.js [--mib 64] [--runs 3]
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Admin } from '../src/client/admin.js';
import { startCluster, type RunningCluster } from '../src/node/cluster.js';
import { buildBatch } from '../src/protocol/records/records.js';

const { values: flags } = parseArgs({ options: { mib: { type: 'string', default: '64' }, runs: { type: 'string', default: '3' } } });
const MIB = Number(flags.mib);
const RUNS = Number(flags.runs);
const TOPIC = 'bench-move';
const RECORDS_PER_BATCH = 512;
const POLL_MS = 5;

async function fill(cluster: RunningCluster): Promise<void> {
  const value = Buffer.alloc(1024, 7).toString();
  const batch = Buffer.from(buildBatch({ records: Array.from({ length: RECORDS_PER_BATCH }, () => ({ value, timestamp: Date.now() })) }));
  const leader = cluster.node(0).node.replicaManager;
  // A copy per append: the leader assigns offsets by rewriting the batch header in place.
  for (let i = 0; i < (MIB * 1024) / RECORDS_PER_BATCH; i++) {
    const results = await leader.appendRecords({ timeoutMs: 30_000, requiredAcks: 1, internalTopicsAllowed: false, entries: [{ topicPartition: { topic: TOPIC, partition: 0 }, records: Buffer.from(batch) }] });
    const errorCode = results.get(`${TOPIC}-0`)!.errorCode;
    if (errorCode !== 0) throw new Error(`append failed with error ${errorCode}`);
  }
}

async function oneRun(): Promise<number> {
  const cluster = await startCluster({ controllers: 1, brokers: 3, config: { 'replica.fetch.backoff.ms': 100 } });
  const admin = new Admin({ bootstrapServers: cluster.bootstrapServers });
  try {
    await admin.createTopics([{ name: TOPIC, replicaAssignment: { 0: [0] } }]);
    while (cluster.node(0).node.replicaManager.hostedPartitions().find((p) => p.topicPartition.topic === TOPIC)?.isLeader !== true) await sleep(POLL_MS);
    await fill(cluster);
    const controller = cluster.activeController()!.node;
    const started = performance.now();
    const results = await admin.alterPartitionReassignments([{ topic: TOPIC, partition: 0, replicas: [1] }]);
    if (results.get(`${TOPIC}-0`) !== null) throw new Error(`reassignment refused: ${results.get(`${TOPIC}-0`)!.message}`);
    for (;;) {
      const partition = controller.metadata.image.topicsByName.get(TOPIC)?.partitions.get(0);
      if (partition !== undefined && partition.replicas.length === 1 && partition.replicas[0] === 1 && partition.leader === 1) break;
      await sleep(POLL_MS);
    }
    return performance.now() - started;
  } finally {
    await admin.close();
    await cluster.stop();
  }
}

const times: number[] = [];
for (let run = 0; run < RUNS; run++) times.push(await oneRun());
const sorted = [...times].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)]!;
console.log(
  `move of ${MIB} MiB (RF=1, broker 0 -> 1): ${median.toFixed(0)} ms median of ${RUNS} (min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)}); ` +
    `${((MIB / median) * 1000).toFixed(1)} MiB/s`,
);
