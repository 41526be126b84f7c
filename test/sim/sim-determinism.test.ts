/**
 * The whole-cluster simulator replays a seed byte for byte: the same seed
 * (with faults, the consumer group and node logs at info level) gives the
 * same trace twice, and another seed a different one; a seed run on a
 * worker thread of the seed pool, after another seed, gives the same trace
 * as in this thread; and so does a short seed of the split shape with
 * voters added and removed, admin operations and clock steps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed } from './cluster-sim.js';
import { outcomeOf, SeedPool } from './seed-pool.js';

/** Simulated milliseconds of faults per run. */
const FAULT_PHASE_MS = 10_000;

test('the same seed gives the same trace, byte for byte', async () => {
  const first = await runSeed({ seed: 42, faultPhaseMs: FAULT_PHASE_MS, nodeLogLevel: 'info' });
  const second = await runSeed({ seed: 42, faultPhaseMs: FAULT_PHASE_MS, nodeLogLevel: 'info' });
  assert.equal(first.violation, null, first.trace.join('\n'));
  assert.ok(first.trace.length > 20, `a trace of ${first.trace.length} lines`);
  assert.equal(second.trace.join('\n'), first.trace.join('\n'));
  const other = await runSeed({ seed: 43, faultPhaseMs: FAULT_PHASE_MS, nodeLogLevel: 'info' });
  assert.notEqual(other.trace.join('\n'), first.trace.join('\n'));
});

test('a short seed of the split shape, with voter changes, admin operations and clock steps, gives the same trace twice', async () => {
  const options = { seed: 3010, shape: 'split' as const, dynamicQuorum: true, adminOps: true, faultPhaseMs: 1_500, faultGapMs: { min: 100, max: 1_000 }, groups: false, nodeLogLevel: 'info' as const };
  const first = await runSeed(options);
  const second = await runSeed(options);
  assert.equal(first.violation, null, first.trace.join('\n'));
  const trace = first.trace.join('\n');
  assert.match(trace, /3 controllers and 3 brokers \(a dynamic quorum/);
  assert.match(trace, /VOTERS add voter \d+: acknowledged/);
  assert.match(trace, /VOTERS remove voter \d+: acknowledged/);
  assert.match(trace, /ADMIN create topic adm-0 .*: acknowledged/);
  assert.match(trace, /FAULT clock of \S+ stepped (forward|back)/);
  assert.equal(second.trace.join('\n'), trace);
});

test('a seed run on a worker thread, after another seed, gives the trace it gives here', async () => {
  const options = { seed: 44, faultPhaseMs: 1_500, faultGapMs: { min: 100, max: 1_000 }, groups: false };
  const here = outcomeOf(await runSeed(options));
  const pool = new SeedPool(2);
  try {
    const [, second, third] = await pool.run([{ ...options, seed: 45 }, options, options]);
    assert.equal(here.violation, null);
    assert.ok(here.acked > 0, `${here.acked} acked`);
    assert.deepEqual(second, here);
    assert.deepEqual(third, here);
  } finally {
    await pool.close();
  }
});
