/**
 * What `spool doctor` reports: findings, each naming the link of the chain
 * that is stuck (the check), how bad it is, what it is about and the
 * evidence (ids, offsets, ages) an operator can verify with Kafka's own
 * tools; and the gaps, the checks that could not run and why.
 *
 * Severity: `critical` (data does not flow: an offline partition, produce
 * refused for want of in-sync replicas, no quorum leader), `warning`
 * (data flows but something is behind or stuck: a lagging follower, an
 * open transaction holding the LSO, a group whose lag grows), `info`
 * (context, such as a replication throttle in force). Critical and
 * warning findings make doctor exit with DOCTOR_EXIT_PROBLEM.
 */

export const CHECKS = [
  'min-insync-replicas',
  'replication-throttle',
  'stuck-high-watermark',
  'open-transaction',
  'consumer-lag',
  'rebalance',
  'under-replicated',
  'offline-partition',
  'offline-log-dir',
  'fenced-broker',
  'unreachable-broker',
  'controller-quorum',
] as const;
export type CheckName = (typeof CHECKS)[number];

export const SEVERITIES = ['critical', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export type EvidenceValue = number | string | boolean | null | readonly number[] | readonly string[];

export interface Finding {
  check: CheckName;
  severity: Severity;
  /** What the finding is about: `topic-partition`, `group <id>`, `broker <id>`, `quorum`. */
  subject: string;
  message: string;
  evidence: Readonly<Record<string, EvidenceValue>>;
}

export interface DoctorReport {
  /** How long doctor watched between its two samples. */
  sampleMs: number;
  findings: Finding[];
  /** Checks that could not run (or ran with less evidence than they want), and why. */
  gaps: string[];
}

/** The exit code when a critical or warning finding is made (1 stays doctor's own failure: usage, no broker reachable). */
export const DOCTOR_EXIT_PROBLEM = 2;

export function isProblem(finding: Finding): boolean {
  return finding.severity !== 'info';
}

function evidenceText(value: EvidenceValue): string {
  if (Array.isArray(value)) return `[${value.join(',')}]`;
  return String(value);
}

/** One line: `SEVERITY check subject: message (key=value ...)`. */
export function formatFinding(finding: Finding): string {
  const evidence = Object.entries(finding.evidence).map(([key, value]) => `${key}=${evidenceText(value)}`).join(' ');
  return `${finding.severity.toUpperCase().padEnd(8)} ${finding.check} ${finding.subject}: ${finding.message}${evidence === '' ? '' : ` (${evidence})`}`;
}

/** Findings worst first, then by check and subject, so the output is stable. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  const rank = (f: Finding) => SEVERITIES.indexOf(f.severity) * 100 + CHECKS.indexOf(f.check);
  return [...findings].sort((a, b) => rank(a) - rank(b) || a.subject.localeCompare(b.subject));
}
