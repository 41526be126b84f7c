/**
 * The history checker finds what it claims to: a clean two-producer,
 * two-consumer history reports zero of every anomaly, and each anomaly
 * planted into it (a lost write, a duplicate, an offset holding two values,
 * a producer's acks going backwards, a consumer reading backwards, a
 * consumer skipping a known offset) is reported, alone, with where it
 * happened. Also what is not an anomaly: failed or unknown sends never read,
 * re-reading after an assignment change, offsets nobody knows (gaps).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anomalyCounts, checkHistory, describeReport, type HistoryEvent, type PollRecord } from './history-checker.js';

const T = 'orders';
const ack = (process: string, value: string, partition: number, offset: number): HistoryEvent => ({ type: 'send', process, value, outcome: 'ok', topic: T, partition, offset });
const rec = (partition: number, offset: number, value: string): PollRecord => ({ topic: T, partition, offset, value });
const poll = (process: string, ...records: PollRecord[]): HistoryEvent => ({ type: 'poll', process, records });

/** Two producers over partitions 0 and 1; two consumers, each reading everything in two polls. */
function cleanHistory(): HistoryEvent[] {
  return [
    ack('p1', 'a0', 0, 0), ack('p2', 'b0', 0, 1), ack('p1', 'a1', 1, 0), ack('p1', 'a2', 0, 2), ack('p2', 'b1', 1, 1),
    { type: 'send', process: 'p2', value: 'b2', outcome: 'fail' },
    { type: 'send', process: 'p1', value: 'a3', outcome: 'info' },
    poll('c1', rec(0, 0, 'a0'), rec(0, 1, 'b0'), rec(1, 0, 'a1')),
    poll('c2', rec(0, 0, 'a0'), rec(1, 0, 'a1'), rec(1, 1, 'b1')),
    poll('c1', rec(0, 2, 'a2'), rec(1, 1, 'b1')),
    poll('c2', rec(0, 1, 'b0'), rec(0, 2, 'a2')),
  ];
}

function onlyAnomaly(history: readonly HistoryEvent[], kind: keyof ReturnType<typeof anomalyCounts>) {
  const report = checkHistory(history);
  const counts = anomalyCounts(report);
  for (const [other, count] of Object.entries(counts)) {
    if (other !== kind) assert.equal(count, 0, `${other} in a history planted with ${kind} only:\n${describeReport(report)}`);
  }
  assert.equal(counts[kind], 1, describeReport(report));
  return report;
}

test('a clean history reports zero of every anomaly, with its counts', () => {
  const report = checkHistory(cleanHistory());
  assert.deepEqual(anomalyCounts(report), { lostWrites: 0, duplicates: 0, inconsistentOffsets: 0, nonmonotonicSends: 0, nonmonotonicPolls: 0, pollSkips: 0 });
  assert.deepEqual(report.counts, { acknowledged: 5, failed: 1, unknown: 1, polledRecords: 10, distinctPolledValues: 5 });
});

test('a lost write: acknowledged, never polled', () => {
  const history = cleanHistory();
  history.splice(5, 0, ack('p2', 'b9', 1, 2));
  const report = onlyAnomaly(history, 'lostWrites');
  assert.deepEqual(report.lostWrites, [{ value: 'b9', position: { topic: T, partition: 1, offset: 2 }, process: 'p2' }]);
});

test('a duplicate: one value read at two offsets (a retried send written twice)', () => {
  const history = [...cleanHistory(), poll('c1', rec(0, 3, 'a0'))];
  const report = onlyAnomaly(history, 'duplicates');
  assert.deepEqual(report.duplicates, [{ value: 'a0', positions: [{ topic: T, partition: 0, offset: 0 }, { topic: T, partition: 0, offset: 3 }] }]);
});

test('an inconsistent offset: an ack and a poll disagree on what one offset holds', () => {
  const history = cleanHistory();
  // Another consumer reads a2's acknowledged offset holding x (an offset truncated and rewritten).
  history.push(poll('c3', rec(0, 2, 'x')));
  const report = onlyAnomaly(history, 'inconsistentOffsets');
  assert.deepEqual(report.inconsistentOffsets, [{ position: { topic: T, partition: 0, offset: 2 }, values: ['a2', 'x'] }]);
});

test('a nonmonotonic send: one producer acked at a lower offset after a higher one on the same partition', () => {
  const history: HistoryEvent[] = [
    ack('p1', 'a0', 0, 5), ack('p1', 'a1', 0, 4), ack('p2', 'b0', 0, 3),
    poll('c1', rec(0, 3, 'b0'), rec(0, 4, 'a1'), rec(0, 5, 'a0')),
  ];
  const report = onlyAnomaly(history, 'nonmonotonicSends');
  assert.deepEqual(report.nonmonotonicSends, [{ process: 'p1', topicPartition: `${T}-0`, previousOffset: 5, offset: 4, value: 'a1' }]);
});

test('a nonmonotonic poll: one consumer reads an offset again without an assignment change; after one it may', () => {
  const reread = [...cleanHistory(), poll('c1', rec(1, 0, 'a1'))];
  const report = onlyAnomaly(reread, 'nonmonotonicPolls');
  assert.deepEqual(report.nonmonotonicPolls, [{ process: 'c1', topicPartition: `${T}-1`, previousOffset: 1, offset: 0 }]);
  const afterRebalance: HistoryEvent[] = [...cleanHistory(), { type: 'assign', process: 'c1' }, poll('c1', rec(1, 0, 'a1'))];
  assert.deepEqual(anomalyCounts(checkHistory(afterRebalance)).nonmonotonicPolls, 0);
});

test('a poll skip: a consumer jumps over an offset known to hold a value; unknown offsets are gaps, not skips', () => {
  const history = cleanHistory();
  // c3 reads offset 0 then 2 of partition 0: offset 1 (b0) is known from p2's ack and others' polls.
  history.push(poll('c3', rec(0, 0, 'a0')), poll('c3', rec(0, 2, 'a2')));
  const report = onlyAnomaly(history, 'pollSkips');
  assert.deepEqual(report.pollSkips, [{ process: 'c3', topicPartition: `${T}-0`, previousOffset: 0, offset: 2, skipped: [1] }]);
  // Offsets 3 and 4 hold nothing anyone saw (say, transaction markers): going from 2 to 5 is no skip.
  const gap: HistoryEvent[] = [ack('p1', 'a0', 0, 2), ack('p1', 'a1', 0, 5), poll('c1', rec(0, 2, 'a0'), rec(0, 5, 'a1'))];
  assert.deepEqual(anomalyCounts(checkHistory(gap)), { lostWrites: 0, duplicates: 0, inconsistentOffsets: 0, nonmonotonicSends: 0, nonmonotonicPolls: 0, pollSkips: 0 });
});

test('a failed or unknown send that was written anyway counts for duplicates and consistency like any value', () => {
  const history: HistoryEvent[] = [
    { type: 'send', process: 'p1', value: 'u', outcome: 'info' },
    ack('p1', 'v', 0, 1),
    poll('c1', rec(0, 0, 'u'), rec(0, 1, 'v')),
    poll('c2', rec(0, 0, 'u'), rec(0, 1, 'v'), rec(0, 2, 'u')),
  ];
  const report = onlyAnomaly(history, 'duplicates');
  assert.equal(report.duplicates[0]!.value, 'u');
});

test('an acknowledged send without its offset is a broken history, not a clean one', () => {
  assert.throws(() => checkHistory([{ type: 'send', process: 'p1', value: 'v', outcome: 'ok' }]), /without topic, partition and offset/);
});
