/**
 * The same faults as the ducktape oracle (faults.ts: kill -9 of the leader,
 * a clean bounce of each node, SIGSTOP of the leader, a partition isolating
 * it) on three real Spool processes, with Spool's own client as the
 * workload (spool-clients.ts): two idempotent acks=all producers and two
 * consumers each assigned every partition of an RF=3, min.insync.replicas=2
 * topic. The history checker must report zero of every anomaly: no
 * acknowledged write lost, no duplicate, no offset with two values, acks and
 * reads in order, no read skipping a known offset.
 *
 * Regression: under SIGSTOP of the leader Spool's producers retried at the
 * stopped broker for ever (a client-side request timeout did not refresh
 * metadata); it now counts as a disconnection (src/client/producer.ts).
 *
 * `npm test` runs its half of the faults once, briefly (BOUNDED_FAULTS:
 * the bounces and the partition, the other suite the rest); `npm run fault`
 * runs every fault in the long form (plan.ts).
 */
import { test } from 'node:test';
import { runFaultSuite } from './faults.js';
import { BOUNDED_FAULTS, faultPlan } from './plan.js';
import { startSpoolWorkload } from './spool-clients.js';

const PARTITIONS = 3;
const plan = faultPlan(BOUNDED_FAULTS['spool-client']);

test(`Spool's client through ${plan.faults.join(', ')}: the history checker finds nothing`, { timeout: plan.timeoutMs }, async (t) => {
  await runFaultSuite(t, {
    name: 'spool-client',
    partitions: PARTITIONS,
    plan,
    startWorkload: (cluster, topic) => startSpoolWorkload({ bootstrapServers: cluster.bootstrapServers, topic, partitions: PARTITIONS, producers: 2, consumers: 2 }),
  });
});
