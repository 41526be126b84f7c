/**
 * Each invariant of the cluster simulator catches a planted violation (a
 * checker that cannot fail proves nothing), and accepts the same history
 * without it: two leaders in one epoch; two nodes committing different
 * batches at one offset, or a node skipping offsets; two nodes committing
 * different voter sets at one offset, a snapshot whose voters are not the
 * log's, a node losing a committed voter set, voters after the heal other
 * than the last acknowledged change left; a topic whose acknowledged
 * creation, deletion, partition count or retention.ms did not hold; a leader's HW moving
 * back within its epoch; a consumer reading at the HW; an acked record
 * missing or replaced; a value stored twice; a group's accepted commit
 * below an earlier one; a read_committed consumer given a record of an
 * aborted transaction (read before or after the abort's acknowledgement);
 * a committed transaction missing a record, an aborted one showing one, an
 * in-doubt one showing only some; a group that is not Stable, keeps a stale
 * member, leaves a member or a partition without an assignment, assigns a
 * partition twice, or whose member or client has not caught up with the
 * coordinator's assignment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkAckedPresent,
  checkAdminOutcomes,
  checkGroupStable,
  checkNoDuplicates,
  checkTransactionsAtomic,
  checkVoterChangesHold,
  CommittedLogPrefix,
  CommittedOffsetsMonotonic,
  CommittedVoterSetsAgree,
  HighWatermarkMonotonic,
  ReadCommittedSeesNoAborted,
  ReadsBelowHighWatermark,
  SingleLeaderPerEpoch,
  type AdminTopicExpectation,
  type AdminTopicObserved,
} from './invariants.js';

test('single-leader-per-epoch: a second leader of one epoch is caught; leaders of different epochs are not', () => {
  const checker = new SingleLeaderPerEpoch();
  assert.equal(checker.observeLeader(0, 1), null);
  assert.equal(checker.observeLeader(0, 1), null);
  assert.equal(checker.observeLeader(1, 2), null);
  const violation = checker.observeLeader(2, 2);
  assert.equal(violation?.invariant, 'single-leader-per-epoch');
  assert.match(violation!.detail, /nodes 1 and 2 both led epoch 2/);
});

test('committed-metadata-log-is-a-prefix: a divergent batch at a committed offset, or a gap, is caught', () => {
  const checker = new CommittedLogPrefix();
  const batch = (baseOffset: number, lastOffset: number, digest: string, epoch = 1) => ({ baseOffset, lastOffset, epoch, digest });
  assert.equal(checker.observeCommit(0, 1, batch(0, 2, 'a')), null);
  assert.equal(checker.observeCommit(0, 1, batch(3, 3, 'b')), null);
  assert.equal(checker.observeCommit(1, 1, batch(0, 2, 'a')), null);
  // A restarted node replays its log from the start: the same batches again are fine.
  assert.equal(checker.observeCommit(0, 2, batch(0, 2, 'a')), null);
  const divergent = checker.observeCommit(1, 1, batch(3, 3, 'other'));
  assert.equal(divergent?.invariant, 'committed-metadata-log-is-a-prefix');
  assert.match(divergent!.detail, /offset 3: node 0 committed .* node 1 committed/);
  const fresh = new CommittedLogPrefix();
  assert.equal(fresh.observeCommit(2, 1, batch(0, 2, 'a')), null);
  assert.match(fresh.observeCommit(2, 1, batch(5, 5, 'c'))!.detail, /committed offset 5 after 2/);
  // After a snapshot the next commit starts at the snapshot's end.
  fresh.observeSnapshot(2, 2, 10);
  assert.equal(fresh.observeCommit(2, 2, batch(10, 11, 'd')), null);
});

test('high-watermark-never-goes-backwards-on-a-leader: a leader whose HW drops in its epoch is caught; a new epoch or incarnation starts afresh', () => {
  const checker = new HighWatermarkMonotonic();
  const at = (leaderEpoch: number, incarnation = 1) => ({ nodeId: 0, incarnation, partition: 'sim-0', leaderEpoch });
  assert.equal(checker.observeLeaderHighWatermark(at(3), 10), null);
  assert.equal(checker.observeLeaderHighWatermark(at(3), 12), null);
  assert.equal(checker.observeLeaderHighWatermark(at(4), 11), null);
  assert.equal(checker.observeLeaderHighWatermark(at(3, 2), 5), null);
  const violation = checker.observeLeaderHighWatermark(at(4), 9);
  assert.equal(violation?.invariant, 'high-watermark-never-goes-backwards-on-a-leader');
  assert.match(violation!.detail, /HW went from 11 to 9/);
});

test('no-consumer-reads-above-the-high-watermark: a read at or past the highest HW seen is caught', () => {
  const checker = new ReadsBelowHighWatermark();
  checker.observeHighWatermark('sim-0', 5);
  checker.observeHighWatermark('sim-0', 3);
  assert.equal(checker.observeRead('sim-0', 4), null);
  assert.equal(checker.observeRead('sim-0', 5)?.invariant, 'no-consumer-reads-above-the-high-watermark');
  assert.match(checker.observeRead('sim-1', 0)!.detail, /sim-1 offset 0, at or above the highest HW seen \(0\)/);
});

test('every-acked-record-is-present: a lost or overwritten acked record is caught', () => {
  const stored = [
    { partition: 'sim-0', offset: 0, value: 'v0' },
    { partition: 'sim-0', offset: 1, value: 'v2' },
  ];
  assert.equal(checkAckedPresent([{ partition: 'sim-0', offset: 0, value: 'v0' }], stored), null);
  const overwritten = checkAckedPresent([{ partition: 'sim-0', offset: 1, value: 'v1' }], stored);
  assert.equal(overwritten?.invariant, 'every-acked-record-is-present');
  assert.match(overwritten!.detail, /v1 acked at sim-0@1, found v2 there/);
  assert.match(checkAckedPresent([{ partition: 'sim-0', offset: 7, value: 'v7' }], stored)!.detail, /no record there/);
});

test('no-duplicates-with-idempotence: a value stored twice is caught', () => {
  const once = [
    { partition: 'sim-0', offset: 0, value: 'v0' },
    { partition: 'sim-1', offset: 0, value: 'v1' },
  ];
  assert.equal(checkNoDuplicates(once), null);
  const twice = checkNoDuplicates([...once, { partition: 'sim-0', offset: 1, value: 'v0' }]);
  assert.equal(twice?.invariant, 'no-duplicates-with-idempotence');
  assert.match(twice!.detail, /v0 stored twice: sim-0@0 and sim-0@1/);
});

test('committed-offsets-never-go-backwards: an accepted commit below an earlier one is caught', () => {
  const checker = new CommittedOffsetsMonotonic();
  assert.equal(checker.observeAcceptedCommit('a', 'sim-0', 10), null);
  assert.equal(checker.observeAcceptedCommit('b', 'sim-0', 10), null);
  assert.equal(checker.observeAcceptedCommit('b', 'sim-0', 12), null);
  assert.equal(checker.observeAcceptedCommit('a', 'sim-1', 3), null);
  const violation = checker.observeAcceptedCommit('a', 'sim-0', 11);
  assert.equal(violation?.invariant, 'committed-offsets-never-go-backwards');
  assert.match(violation!.detail, /a committed sim-0 offset 11 after b had committed 12/);
});

test('no-read-committed-consumer-sees-aborted-data: a read of an aborted transaction is caught, before or after its abort is acknowledged', () => {
  const checker = new ReadCommittedSeesNoAborted();
  assert.equal(checker.observeRead('t1', 'sim-0@4'), null);
  assert.equal(checker.observeAbortAcknowledged('t2'), null);
  assert.equal(checker.observeRead('t3', 'sim-1@9'), null);
  const after = checker.observeRead('t2', 'sim-1@7');
  assert.equal(after?.invariant, 'no-read-committed-consumer-sees-aborted-data');
  assert.match(after!.detail, /read sim-1@7 of transaction t2/);
  // A record read before the abort is acknowledged (the consumer got it while the marker was still to come) is caught at the acknowledgement.
  assert.match(checker.observeAbortAcknowledged('t1')!.detail, /read sim-0@4 of transaction t1/);
});

test('transactions-are-atomic: a committed transaction missing a record, an aborted one showing one, or an in-doubt one half visible is caught', () => {
  const record = (offset: number, value: string) => ({ partition: 'sim-0', offset, value });
  const read = [record(0, 't1-0'), record(1, 't1-1'), record(2, 't3-0'), record(3, 't3-1')];
  const t1 = { transaction: 't1', values: ['t1-0', 't1-1'], outcome: 'committed' as const };
  const t2 = { transaction: 't2', values: ['t2-0'], outcome: 'aborted' as const };
  const t3 = { transaction: 't3', values: ['t3-0', 't3-1'], outcome: 'in-doubt' as const };
  const t4 = { transaction: 't4', values: ['t4-0'], outcome: 'in-doubt' as const };
  assert.equal(checkTransactionsAtomic([t1, t2, t3, t4], read), null);
  const lost = checkTransactionsAtomic([t1], read.slice(1));
  assert.equal(lost?.invariant, 'transactions-are-atomic');
  assert.match(lost!.detail, /transaction t1 \(committed\): read_committed sees 1 of its 2 records/);
  assert.match(checkTransactionsAtomic([t2], [...read, record(4, 't2-0')])!.detail, /t2 \(aborted\): read_committed sees 1 of its 1/);
  assert.match(checkTransactionsAtomic([t3], read.slice(0, 3))!.detail, /t3 \(in-doubt\): read_committed sees 1 of its 2/);
});

test('group-stabilises: a group not Stable, with a stale member, an idle member, a partition owned twice or by none, or a member behind its target is caught', () => {
  const expected = { clients: ['member-a', 'member-b'], partitions: ['sim-0', 'sim-1'] };
  const member = (clientId: string, assignment: string[], targetAssignment: string[] | null = null) => ({ memberId: `${clientId}-id`, clientId, assignment, targetAssignment });
  const view = (state: string, members: ReturnType<typeof member>[], clientAssignments?: [string, string[]][]) => ({
    state,
    members,
    clientAssignments: new Map(clientAssignments ?? members.map((m): [string, string[]] => [m.clientId, m.assignment])),
  });
  const stable = [member('member-a', ['sim-0'], ['sim-0']), member('member-b', ['sim-1'])];
  assert.equal(checkGroupStable(view('Stable', stable), expected), null);
  const caught = (v: ReturnType<typeof view>, pattern: RegExp) => {
    const violation = checkGroupStable(v, expected);
    assert.equal(violation?.invariant, 'group-stabilises');
    assert.match(violation!.detail, pattern);
  };
  caught(view('PreparingRebalance', stable), /group state PreparingRebalance, not Stable/);
  caught(view('Stable', [...stable, member('member-a', ['sim-1'])]), /members \[member-a,member-a,member-b\]/);
  caught(view('Stable', [member('member-a', ['sim-0', 'sim-1']), member('member-b', [])]), /member member-b \(member-b-id\) has no partition/);
  caught(view('Stable', [member('member-a', ['sim-0']), member('member-b', ['sim-0'])]), /partition sim-0 assigned to 2 members \(member-a, member-b\)/);
  caught(view('Stable', [member('member-a', ['sim-0']), member('member-b', ['other-0'])]), /partition sim-1 assigned to 0 members/);
  caught(view('Stable', [member('member-a', ['sim-0'], ['sim-0', 'sim-1']), member('member-b', ['sim-1'], [])]), /member member-a owns \[sim-0\] but is headed for \[sim-0,sim-1\]/);
  caught(view('Stable', stable, [['member-a', ['sim-0']], ['member-b', []]]), /client member-b owns \[\] but its coordinator assigned it \[sim-1\]/);
});

test('committed-voter-sets-agree: different voters at one offset, a snapshot with other voters, or a lost voter set are caught', () => {
  const log = (offset: number, voters: string) => ({ offset, fromSnapshot: false, voters });
  const snapshot = (offset: number, voters: string) => ({ offset, fromSnapshot: true, voters });
  const checker = new CommittedVoterSetsAgree();
  assert.equal(checker.observeCommitted(3000, 1, [log(2, 'a,b,c')]), null);
  assert.equal(checker.observeCommitted(3000, 1, [log(2, 'a,b,c'), log(40, 'a,b,c,d')]), null);
  assert.equal(checker.observeCommitted(3001, 1, [log(2, 'a,b,c')]), null);
  // A restart from a snapshot below offset 100 holds the voters in force there: the set of offset 40.
  assert.equal(checker.observeCommitted(3001, 2, [snapshot(99, 'a,b,c,d')]), null);
  // A running node that loads a snapshot keeps nothing below it.
  assert.equal(checker.observeCommitted(3000, 1, [snapshot(99, 'a,b,c,d'), log(120, 'b,c,d')]), null);
  const divergent = checker.observeCommitted(0, 1, [log(2, 'a,b,c'), log(40, 'a,b,c,e')]);
  assert.equal(divergent?.invariant, 'committed-voter-sets-agree');
  assert.match(divergent!.detail, /offset 40: node 3000 committed voters \[a,b,c,d\], node 0 \[a,b,c,e\]/);
  const badSnapshot = checker.observeCommitted(1, 1, [snapshot(60, 'a,b,c')]);
  assert.match(badSnapshot!.detail, /node 1's snapshot below offset 61 holds voters \[a,b,c\], the log had \[a,b,c,d\] \(offset 40\)/);
  const lost = checker.observeCommitted(3000, 1, [snapshot(99, 'a,b,c,d')]);
  assert.match(lost!.detail, /node 3000 lost its committed voter set \[b,c,d\] at offset 120/);
});

test('acknowledged-voter-changes-hold: voters other than the last acknowledged change left are caught; an in-doubt change allows any', () => {
  assert.equal(checkVoterChangesHold('1:a,2:b,3:c,4:d', '1:a,2:b,3:c,4:d'), null);
  assert.equal(checkVoterChangesHold(null, '1:a,2:b,3:c'), null);
  const violation = checkVoterChangesHold('1:a,2:b,3:c,4:d', '1:a,2:b,3:c');
  assert.equal(violation?.invariant, 'acknowledged-voter-changes-hold');
  assert.match(violation!.detail, /left \[1:a,2:b,3:c,4:d\], the nodes agree on \[1:a,2:b,3:c\]/);
});

test('acknowledged-admin-operations-hold: a lost creation, a deletion undone, a partition count or a config not as acknowledged are caught; in-doubt outcomes are not checked', () => {
  const expected = new Map<string, AdminTopicExpectation>([
    ['adm-0', { exists: true, partitions: 3, retentionMs: '60000' }],
    ['adm-1', { exists: false, partitions: null, retentionMs: null }],
    ['adm-2', { exists: null, partitions: null, retentionMs: null }],
    ['adm-3', { exists: true, partitions: null, retentionMs: null }],
  ]);
  const healthy = new Map<string, AdminTopicObserved>([
    ['adm-0', { partitions: 3, retentionMs: '60000' }],
    ['adm-3', { partitions: 7, retentionMs: '1' }],
  ]);
  assert.equal(checkAdminOutcomes(expected, healthy), null);
  assert.equal(checkAdminOutcomes(expected, new Map([...healthy, ['adm-2', { partitions: 1, retentionMs: null }]])), null);
  const cases: [Map<string, AdminTopicObserved>, RegExp][] = [
    [new Map([['adm-3', { partitions: 1, retentionMs: null }]]), /topic adm-0 was created \(acknowledged\) and not deleted, but does not exist/],
    [new Map([...healthy, ['adm-1', { partitions: 1, retentionMs: null }]]), /topic adm-1 was deleted \(acknowledged\) but exists/],
    [new Map([...healthy, ['adm-0', { partitions: 2, retentionMs: '60000' }]]), /adm-0 has 2 partitions, the acknowledged operations left 3/],
    [new Map([...healthy, ['adm-0', { partitions: 3, retentionMs: '5' }]]), /adm-0 has retention.ms 5, the last acknowledged change set 60000/],
  ];
  for (const [observed, detail] of cases) {
    const violation = checkAdminOutcomes(expected, observed);
    assert.equal(violation?.invariant, 'acknowledged-admin-operations-hold');
    assert.match(violation!.detail, detail);
  }
});
