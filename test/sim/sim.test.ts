/**
 * The whole-cluster simulator in CI, bounded: a run without faults acks and
 * reads back every record, and a few dozen seeds with faults (kills, power
 * cuts, partitions both ways and one way, resets, pauses, slow links, fsync
 * failures and full disks) break no invariant, a few of them with a
 * consumer group committing what it reads. Every run also has a
 * transactional producer committing and aborting, and a read_committed
 * consumer. The long form is `npm run sim -- --seeds N` or `--minutes M`;
 * replay is proved by sim-determinism.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed } from './cluster-sim.js';

/** Seeds of the bounded CI run without a consumer group: 12, not 24, since the transactional load and the restarts after disk faults made a seed about twice as dear, and the CI form keeps its wall time. */
const CI_SEEDS = 12;
/** Seeds of the bounded CI run with a consumer group (a group makes a seed several times slower). */
const CI_GROUP_SEEDS = 4;
/** Simulated milliseconds of faults per CI seed. */
const CI_FAULT_PHASE_MS = 10_000;

test('without faults every record is acked and read back', async () => {
  const result = await runSeed({ seed: 7, faults: false, groups: false, faultPhaseMs: CI_FAULT_PHASE_MS });
  assert.equal(result.violation, null, result.trace.join('\n'));
  assert.ok(result.acked > 100, `${result.acked} acked`);
  assert.equal(result.consumed, result.acked);
  assert.ok(result.transactions.committed > 10 && result.transactions.aborted > 5, JSON.stringify(result.transactions));
  assert.equal(result.transactions['in-doubt'], 0);
});

test(`${CI_SEEDS} seeds with faults break no invariant`, async () => {
  const failures: string[] = [];
  for (let seed = 1; seed <= CI_SEEDS; seed++) {
    const result = await runSeed({ seed, faultPhaseMs: CI_FAULT_PHASE_MS, groups: false });
    if (result.violation !== null) failures.push(`seed ${seed}: ${result.violation.invariant}: ${result.violation.detail}`);
  }
  assert.deepEqual(failures, []);
});

test(`${CI_GROUP_SEEDS} seeds with faults and a committing consumer group break no invariant`, async () => {
  const failures: string[] = [];
  for (let seed = 101; seed < 101 + CI_GROUP_SEEDS; seed++) {
    const result = await runSeed({ seed, faultPhaseMs: CI_FAULT_PHASE_MS });
    if (result.violation !== null) failures.push(`seed ${seed}: ${result.violation.invariant}: ${result.violation.detail}`);
  }
  assert.deepEqual(failures, []);
});
