/**
 * How long the fault suites run. `npm test` runs the bounded form: each
 * suite takes its half of the faults once (the two suites together take
 * every fault, each checked by one workload), a few hundred acknowledged
 * sends around it. `npm run fault` runs the long form through the
 * environment:
 *   SPOOL_FAULT_ROUNDS    rounds of every fault (default 1)
 *   SPOOL_FAULT_PROGRESS  acknowledged sends waited for before, during and after each fault (default 100)
 *   SPOOL_FAULT_THROUGHPUT messages a second per Kafka VerifiableProducer (default 100)
 *   SPOOL_FAULTS          a comma-separated subset of the faults, or `all` (default: the suite's half)
 */
import type { AnomalyKind } from './history-checker.js';

export const FAULTS = ['kill-leader', 'bounce-each', 'pause-leader', 'partition-leader'] as const;
export type Fault = (typeof FAULTS)[number];

export interface FaultPlan {
  rounds: number;
  progress: number;
  throughput: number;
  faults: Fault[];
  timeoutMs: number;
}

function positive(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name}=${text}: a positive integer is needed`);
  return value;
}

/** The bounded form's faults: each suite half of them, so that one `npm test` still brings every fault once. */
export const BOUNDED_FAULTS = {
  oracle: ['kill-leader', 'pause-leader'],
  'spool-client': ['bounce-each', 'partition-leader'],
} as const satisfies Record<string, readonly Fault[]>;

export function faultPlan(boundedFaults: readonly Fault[]): FaultPlan {
  const rounds = positive('SPOOL_FAULT_ROUNDS', 1);
  const progress = positive('SPOOL_FAULT_PROGRESS', 100);
  const throughput = positive('SPOOL_FAULT_THROUGHPUT', 100);
  const named = (process.env.SPOOL_FAULTS ?? '').split(',').filter((name) => name !== '');
  for (const name of named) if (name !== 'all' && !(FAULTS as readonly string[]).includes(name)) throw new Error(`SPOOL_FAULTS: no fault ${name} (${FAULTS.join(', ')})`);
  const faults = named.length === 0 ? [...boundedFaults] : named.includes('all') ? [...FAULTS] : FAULTS.filter((fault) => named.includes(fault));
  // Generous: a stalled fault fails on its own WAIT_MS bounds long before this.
  return { rounds, progress, throughput, faults, timeoutMs: rounds * faults.length * 600_000 };
}

export const NO_ANOMALIES: Record<AnomalyKind, number> = { lostWrites: 0, duplicates: 0, inconsistentOffsets: 0, nonmonotonicSends: 0, nonmonotonicPolls: 0, pollSkips: 0 };
