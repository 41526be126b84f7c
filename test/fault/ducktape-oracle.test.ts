/**
 * The ducktape oracle on real Spool processes: three combined nodes behind
 * cut-able proxies (fault-cluster.ts), a topic with three partitions, RF=3
 * and min.insync.replicas=2, two of Kafka's VerifiableProducers (idempotent,
 * acks=all) and two VerifiableConsumers in one group, run through each fault
 * of faults.ts: kill -9 of the leader, a clean bounce of each node in turn,
 * SIGSTOP of the leader past its session timeout, a network partition
 * isolating the leader. The oracle, per fault: every acknowledged message is
 * consumed, none twice in the log, and the history checker reports zero of
 * every anomaly (history-checker.ts).
 *
 * Regression: the partition fault found brokers keeping a heartbeat waiting
 * on the isolated old active controller for request.timeout.ms while the
 * new one fenced them all (every partition left leaderless); the controller
 * channel now follows the Raft leader (src/node/rpc-controller-channel.ts).
 *
 * `npm test` runs its half of the faults once, briefly (BOUNDED_FAULTS:
 * kill -9 and SIGSTOP of the leader, the other suite the rest); `npm run fault`
 * runs every fault in the long form (plan.ts).
 */
import { test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaSkipReason } from '../interop/kafka/kafka.js';
import { runFaultSuite } from './faults.js';
import { BOUNDED_FAULTS, faultPlan } from './plan.js';
import { startVerifiableWorkload } from './verifiable-clients.js';

const plan = faultPlan(BOUNDED_FAULTS['oracle']);

test(`ducktape oracle: Kafka VerifiableProducer/VerifiableConsumer through ${plan.faults.join(', ')}`, { timeout: plan.timeoutMs }, async (t) => {
  const skip = kafkaSkipReason();
  if (skip !== undefined) return t.skip(skip);
  const dir = mkdtempSync(join(tmpdir(), 'spool-oracle-'));
  try {
    await runFaultSuite(t, {
      name: 'oracle',
      partitions: 3,
      plan,
      startWorkload: (cluster, topic) => startVerifiableWorkload({ bootstrapServers: cluster.bootstrapServers, topic, dir, producers: 2, consumers: 2, throughput: plan.throughput }),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
