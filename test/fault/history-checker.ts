/**
 * A Jepsen-style checker over the history of a multi-producer,
 * multi-consumer Kafka workload (after Jepsen's `jepsen.tests.kafka`):
 * producers' sends with their outcomes and offsets, consumers' polls with
 * the offsets they returned, and consumers' assignment changes. Every value
 * a workload sends is unique, so a value names one write.
 *
 * Anomalies, each a list in the report (zero of each is the oracle):
 * - lostWrites: a send acknowledged (ok) whose value no poll ever returned.
 *   The workload must have drained its consumers to the log end before the
 *   history is checked, or this reports writes merely not read yet.
 * - duplicates: one value at two different positions (topic-partition and
 *   offset), as seen by acks and polls together: with idempotence a retried
 *   send must not land twice.
 * - inconsistentOffsets: one position holding two different values, as seen
 *   by acks and polls (a truncated and rewritten offset read by someone, or
 *   an ack naming an offset that holds another value).
 * - nonmonotonicSends: one producer's acknowledged sends to a partition, in
 *   the order their acks arrived, at offsets that do not increase.
 * - nonmonotonicPolls: one consumer reading a partition at an offset not
 *   above the one it read before, with no assignment change between.
 * - pollSkips: one consumer going from offset a to offset b of a partition
 *   (no assignment change between) while some position strictly between a
 *   and b is known to hold a value (from any ack or poll). Offsets with no
 *   known value (transaction markers, compacted records) are legitimate gaps.
 *
 * Sends that failed or whose outcome is unknown are not expected anywhere,
 * but if they are read they count like any other value (for duplicates and
 * consistency). The checker is pure: the same history gives the same report.
 */

/** One event of a workload's history, in the order the workload observed it. */
export type HistoryEvent = SendEvent | PollEvent | AssignEvent;

export interface SendEvent {
  type: 'send';
  /** The producer that sent it (a name unique in the history). */
  process: string;
  value: string;
  /** ok: acknowledged with an offset; fail: definitely not written; info: unknown (a timeout, a lost connection). */
  outcome: 'ok' | 'fail' | 'info';
  /** With fail or info: what the client said, for the report. */
  error?: string;
  /** With ok: where the ack says the value is. */
  topic?: string;
  partition?: number;
  offset?: number;
}

export interface PollRecord {
  topic: string;
  partition: number;
  offset: number;
  value: string;
}

export interface PollEvent {
  type: 'poll';
  /** The consumer that polled (a name unique in the history). */
  process: string;
  records: readonly PollRecord[];
}

/** A consumer's assignment changed (a rebalance, a manual assign or seek): its positions may legitimately jump. */
export interface AssignEvent {
  type: 'assign';
  process: string;
}

export interface Position {
  topic: string;
  partition: number;
  offset: number;
}

export interface HistoryReport {
  lostWrites: { value: string; position: Position; process: string }[];
  duplicates: { value: string; positions: Position[] }[];
  inconsistentOffsets: { position: Position; values: string[] }[];
  nonmonotonicSends: { process: string; topicPartition: string; previousOffset: number; offset: number; value: string }[];
  nonmonotonicPolls: { process: string; topicPartition: string; previousOffset: number; offset: number }[];
  pollSkips: { process: string; topicPartition: string; previousOffset: number; offset: number; skipped: number[] }[];
  /** Not anomalies: what the history held, so a report of zeros can be told from an empty run. */
  counts: { acknowledged: number; failed: number; unknown: number; polledRecords: number; distinctPolledValues: number };
}

export const ANOMALY_KINDS = ['lostWrites', 'duplicates', 'inconsistentOffsets', 'nonmonotonicSends', 'nonmonotonicPolls', 'pollSkips'] as const;
export type AnomalyKind = (typeof ANOMALY_KINDS)[number];

const positionKey = (topic: string, partition: number, offset: number): string => `${topic}-${partition}@${offset}`;
const topicPartitionKey = (topic: string, partition: number): string => `${topic}-${partition}`;

function ackedPosition(event: SendEvent): Position {
  if (event.topic === undefined || event.partition === undefined || event.offset === undefined) {
    throw new Error(`acknowledged send of ${event.value} by ${event.process} without topic, partition and offset`);
  }
  return { topic: event.topic, partition: event.partition, offset: event.offset };
}

export function checkHistory(history: readonly HistoryEvent[]): HistoryReport {
  const report: HistoryReport = {
    lostWrites: [], duplicates: [], inconsistentOffsets: [], nonmonotonicSends: [], nonmonotonicPolls: [], pollSkips: [],
    counts: { acknowledged: 0, failed: 0, unknown: 0, polledRecords: 0, distinctPolledValues: 0 },
  };
  const observations = observe(history, report);
  checkPositions(observations, report);
  checkSends(history, observations.polledValues, report);
  checkPolls(history, observations.knownOffsets, report);
  return report;
}

interface Observations {
  /** value → the positions acks and polls put it at. */
  positionsByValue: Map<string, Map<string, Position>>;
  /** position → the values acks and polls saw there. */
  valuesByPosition: Map<string, { position: Position; values: Set<string> }>;
  /** topic-partition → offsets known to hold a value, sorted. */
  knownOffsets: Map<string, number[]>;
  polledValues: Set<string>;
}

function observe(history: readonly HistoryEvent[], report: HistoryReport): Observations {
  const observations: Observations = { positionsByValue: new Map(), valuesByPosition: new Map(), knownOffsets: new Map(), polledValues: new Set() };
  const see = (value: string, position: Position): void => {
    const key = positionKey(position.topic, position.partition, position.offset);
    let positions = observations.positionsByValue.get(value);
    if (positions === undefined) observations.positionsByValue.set(value, (positions = new Map()));
    positions.set(key, position);
    let entry = observations.valuesByPosition.get(key);
    if (entry === undefined) observations.valuesByPosition.set(key, (entry = { position, values: new Set() }));
    entry.values.add(value);
  };
  for (const event of history) {
    if (event.type === 'send') {
      if (event.outcome === 'ok') {
        report.counts.acknowledged++;
        see(event.value, ackedPosition(event));
      } else if (event.outcome === 'fail') report.counts.failed++;
      else report.counts.unknown++;
    } else if (event.type === 'poll') {
      for (const record of event.records) {
        report.counts.polledRecords++;
        observations.polledValues.add(record.value);
        see(record.value, { topic: record.topic, partition: record.partition, offset: record.offset });
      }
    }
  }
  report.counts.distinctPolledValues = observations.polledValues.size;
  const offsets = new Map<string, Set<number>>();
  for (const { position } of observations.valuesByPosition.values()) {
    const key = topicPartitionKey(position.topic, position.partition);
    let set = offsets.get(key);
    if (set === undefined) offsets.set(key, (set = new Set()));
    set.add(position.offset);
  }
  for (const [key, set] of offsets) observations.knownOffsets.set(key, [...set].sort((a, b) => a - b));
  return observations;
}

function checkPositions(observations: Observations, report: HistoryReport): void {
  for (const [value, positions] of observations.positionsByValue) {
    if (positions.size > 1) report.duplicates.push({ value, positions: [...positions.values()] });
  }
  for (const { position, values } of observations.valuesByPosition.values()) {
    if (values.size > 1) report.inconsistentOffsets.push({ position, values: [...values].sort() });
  }
}

function checkSends(history: readonly HistoryEvent[], polled: ReadonlySet<string>, report: HistoryReport): void {
  const lastOffset = new Map<string, number>();
  for (const event of history) {
    if (event.type !== 'send' || event.outcome !== 'ok') continue;
    const position = ackedPosition(event);
    if (!polled.has(event.value)) report.lostWrites.push({ value: event.value, position, process: event.process });
    const topicPartition = topicPartitionKey(position.topic, position.partition);
    const key = `${event.process}\u0000${topicPartition}`;
    const previousOffset = lastOffset.get(key);
    if (previousOffset !== undefined && position.offset <= previousOffset) {
      report.nonmonotonicSends.push({ process: event.process, topicPartition, previousOffset, offset: position.offset, value: event.value });
    }
    lastOffset.set(key, position.offset);
  }
}

function checkPolls(history: readonly HistoryEvent[], knownOffsets: ReadonlyMap<string, number[]>, report: HistoryReport): void {
  /** process → topic-partition → the offset it read last since its last assignment change. */
  const lastRead = new Map<string, Map<string, number>>();
  for (const event of history) {
    if (event.type === 'assign') lastRead.delete(event.process);
    if (event.type !== 'poll') continue;
    let reads = lastRead.get(event.process);
    if (reads === undefined) lastRead.set(event.process, (reads = new Map()));
    for (const record of event.records) {
      const topicPartition = topicPartitionKey(record.topic, record.partition);
      const previousOffset = reads.get(topicPartition);
      reads.set(topicPartition, record.offset);
      if (previousOffset === undefined) continue;
      if (record.offset <= previousOffset) {
        report.nonmonotonicPolls.push({ process: event.process, topicPartition, previousOffset, offset: record.offset });
        continue;
      }
      const skipped = between(knownOffsets.get(topicPartition) ?? [], previousOffset, record.offset);
      if (skipped.length > 0) report.pollSkips.push({ process: event.process, topicPartition, previousOffset, offset: record.offset, skipped });
    }
  }
}

/** The elements of a sorted list strictly between low and high. */
function between(sorted: readonly number[], low: number, high: number): number[] {
  let first = 0;
  let last = sorted.length;
  while (first < last) {
    const middle = (first + last) >>> 1;
    if (sorted[middle]! <= low) first = middle + 1;
    else last = middle;
  }
  const found: number[] = [];
  for (let index = first; index < sorted.length && sorted[index]! < high; index++) found.push(sorted[index]!);
  return found;
}

/** The anomalies of a report by kind, with their counts (for assertion messages). */
export function anomalyCounts(report: HistoryReport): Record<AnomalyKind, number> {
  return Object.fromEntries(ANOMALY_KINDS.map((kind) => [kind, report[kind].length])) as Record<AnomalyKind, number>;
}

/** A short text of the report: the counts, then the first few anomalies of each kind found. */
export function describeReport(report: HistoryReport, examplesMax = 5): string {
  const lines = [`history: ${JSON.stringify(report.counts)}`, `anomalies: ${JSON.stringify(anomalyCounts(report))}`];
  for (const kind of ANOMALY_KINDS) {
    for (const anomaly of report[kind].slice(0, examplesMax)) lines.push(`  ${kind}: ${JSON.stringify(anomaly)}`);
  }
  return lines.join('\n');
}
