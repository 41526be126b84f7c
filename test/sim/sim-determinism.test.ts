/**
 * The whole-cluster simulator replays a seed byte for byte: the same seed
 * (with faults, the consumer group and node logs at info level) gives the
 * same trace twice, and another seed a different one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed } from './cluster-sim.js';

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
