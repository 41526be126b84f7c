/**
 * The share partition's delivery state machine (KIP-932), on a simulated
 * clock: acquisition hands out whole log batches (batch_optimized) or exactly
 * maxRecords (record_limit) and counts each delivery; ACCEPT/RELEASE/REJECT/GAP
 * move records to ACKNOWLEDGED/AVAILABLE/ARCHIVED, per offset when one batch
 * gets several types; RENEW restarts a lock; lock expiry and member departure
 * make records AVAILABLE again and ARCHIVED at the delivery limit (a poison
 * record is archived while its neighbours flow); a member cannot acknowledge
 * another's records and a refused request changes nothing; the in-flight
 * limit stops acquisition; the SPSO moves past the acknowledged prefix, holes
 * the log skips, and the log start offset; the persisted state loads back into
 * the same behaviour.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/io/clock.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { PersisterStateBatch } from '../../src/share/persister.js';
import {
  AcknowledgeType,
  RecordState,
  SharePartition,
  ShareAcquireMode,
  type AcquireOptions,
  type AcquiredRecords,
  type FetchedBatch,
  type SharePartitionOptions,
} from '../../src/share/share-partition.js';

const LOCK_MS = 30_000;
const { ACCEPT, RELEASE, REJECT, GAP, RENEW } = AcknowledgeType;

interface Setup {
  clock: ManualClock;
  sp: SharePartition;
  expiries: number;
}

function setup(over: Partial<SharePartitionOptions> = {}): Setup {
  const clock = new ManualClock();
  const result = { clock, expiries: 0 } as Setup;
  result.sp = new SharePartition({
    clock,
    timers: clock,
    recordLockDurationMs: LOCK_MS,
    deliveryCountLimit: 5,
    maxInFlightRecords: 2000,
    state: { stateEpoch: 0, startOffset: 0, stateBatches: [] },
    onLocksExpired: () => result.expiries++,
    ...over,
  });
  return result;
}

/** A log of `count` records in batches of `batchRecords`, read from an offset the way Fetch does. */
function log(count: number, batchRecords: number): (fromOffset: number) => FetchedBatch[] {
  const batches: FetchedBatch[] = [];
  for (let base = 0; base < count; base += batchRecords) batches.push({ baseOffset: base, lastOffset: Math.min(base + batchRecords, count) - 1, isControl: false });
  return (fromOffset) => batches.filter((batch) => batch.lastOffset >= fromOffset);
}

const batchOptimized = (maxRecords: number, batchSize = maxRecords) => ({ maxRecords, batchSize, acquireMode: ShareAcquireMode.BATCH_OPTIMIZED });
const recordLimit = (maxRecords: number) => ({ maxRecords, batchSize: maxRecords, acquireMode: ShareAcquireMode.RECORD_LIMIT });
const ack = (firstOffset: number, lastOffset: number, ...acknowledgeTypes: number[]) => ({ firstOffset, lastOffset, acknowledgeTypes });
const ok = { errorCode: ErrorCode.NONE, errorMessage: null };

/** Acquired ranges as offset → delivery count, to compare deliveries however they are cut into ranges. */
function perOffset(acquired: readonly AcquiredRecords[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const records of acquired) for (let offset = records.firstOffset; offset <= records.lastOffset; offset++) counts.set(offset, records.deliveryCount);
  return counts;
}

function fetch(s: Setup, read: (fromOffset: number) => FetchedBatch[], memberId: string, options: AcquireOptions = batchOptimized(500)) {
  return s.sp.acquire(memberId, read(s.sp.nextFetchOffset()), options);
}

test('acquire then ACCEPT moves the SPSO past the batches and drops them from flight', () => {
  const s = setup();
  const read = log(30, 10);
  assert.deepEqual(fetch(s, read, 'm1'), [{ firstOffset: 0, lastOffset: 29, deliveryCount: 1 }]);
  assert.equal(s.sp.endOffset, 30);
  assert.equal(s.sp.nextFetchOffset(), 30);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 0, acquired: 30, acknowledged: 0, archived: 0 });
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 29, ACCEPT)]), ok);
  assert.equal(s.sp.startOffset, 30);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 0, acquired: 0, acknowledged: 0, archived: 0 });
  assert.deepEqual(s.sp.persistentState(), { startOffset: 30, deliveryCompleteCount: 0, stateBatches: [] });
  assert.equal(s.clock.pendingCount, 0, 'the acknowledged batch no longer holds a lock timer');
});

test('batch_optimized keeps whole log batches past maxRecords and cuts acquired ranges near batchSize', () => {
  const s = setup();
  const read = log(40, 10);
  assert.deepEqual(fetch(s, read, 'm1', batchOptimized(15, 10)), [
    { firstOffset: 0, lastOffset: 9, deliveryCount: 1 },
    { firstOffset: 10, lastOffset: 19, deliveryCount: 1 },
  ]);
  assert.equal(s.sp.endOffset, 20);
  assert.deepEqual(fetch(s, read, 'm2', batchOptimized(100, 100)), [{ firstOffset: 20, lastOffset: 39, deliveryCount: 1 }]);
});

test('record_limit acquires exactly maxRecords and leaves the rest of the log batch AVAILABLE, never delivered', () => {
  const s = setup();
  const read = log(20, 10);
  assert.deepEqual(fetch(s, read, 'm1', recordLimit(3)), [{ firstOffset: 0, lastOffset: 2, deliveryCount: 1 }]);
  assert.equal(s.sp.endOffset, 10, 'the whole log batch is in flight');
  assert.equal(s.sp.nextFetchOffset(), 3);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 7, acquired: 3, acknowledged: 0, archived: 0 });
  assert.deepEqual(fetch(s, read, 'm2', recordLimit(4)), [{ firstOffset: 3, lastOffset: 6, deliveryCount: 1 }]);
  assert.deepEqual(fetch(s, read, 'm2', recordLimit(5)), [{ firstOffset: 7, lastOffset: 9, deliveryCount: 1 }, { firstOffset: 10, lastOffset: 11, deliveryCount: 1 }]);
  assert.equal(s.sp.endOffset, 20);
  assert.deepEqual(s.sp.persistentState().stateBatches, [{ firstOffset: 0, lastOffset: 11, deliveryState: RecordState.AVAILABLE, deliveryCount: 1 }]);
});

test('per-offset acknowledgements split a batch; RELEASE redelivers with count 2, REJECT and GAP archive', () => {
  const s = setup();
  const read = log(5, 5);
  fetch(s, read, 'm1');
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 4, ACCEPT, RELEASE, REJECT, GAP, ACCEPT)]), ok);
  assert.equal(s.sp.startOffset, 1, 'offset 1 is AVAILABLE again and holds the SPSO');
  assert.deepEqual(s.sp.inFlightSummary(), { available: 1, acquired: 0, acknowledged: 1, archived: 2 });
  assert.equal(s.sp.nextFetchOffset(), 1);
  assert.deepEqual(fetch(s, read, 'm2'), [{ firstOffset: 1, lastOffset: 1, deliveryCount: 2 }]);
  assert.deepEqual(s.sp.acknowledge('m2', [ack(1, 1, ACCEPT)]), ok);
  assert.equal(s.sp.startOffset, 5);
  assert.equal(s.sp.endOffset, 5);
});

test('lock expiry makes records AVAILABLE with a growing delivery count and archives them at the limit', () => {
  const s = setup({ deliveryCountLimit: 3 });
  const read = log(1, 1);
  for (let delivery = 1; delivery <= 3; delivery++) {
    assert.deepEqual(fetch(s, read, `m${delivery}`), [{ firstOffset: 0, lastOffset: 0, deliveryCount: delivery }]);
    s.clock.advance(LOCK_MS - 1);
    assert.equal(s.sp.inFlightSummary().acquired, 1, 'the lock holds until its duration has passed');
    s.clock.advance(1);
    assert.equal(s.expiries, delivery);
  }
  assert.equal(s.sp.startOffset, 1, 'archived at the third expiry, so the SPSO moved past it');
  assert.deepEqual(fetch(s, read, 'm4'), []);
});

test('a poison record always RELEASEd is archived after deliveryCountLimit deliveries while the others keep flowing', () => {
  const s = setup({ deliveryCountLimit: 5 });
  const read = log(100, 10);
  const poison = 3;
  const deliveriesOfPoison: number[] = [];
  let delivered = 0;
  for (let round = 0; round < 20 && s.sp.startOffset < 100; round++) {
    for (const records of fetch(s, read, 'm1', batchOptimized(10))) {
      const types: number[] = [];
      for (let offset = records.firstOffset; offset <= records.lastOffset; offset++) {
        types.push(offset === poison ? RELEASE : ACCEPT);
        if (offset === poison) deliveriesOfPoison.push(records.deliveryCount);
        else delivered++;
      }
      assert.deepEqual(s.sp.acknowledge('m1', [ack(records.firstOffset, records.lastOffset, ...types)]), ok);
    }
  }
  assert.deepEqual(deliveriesOfPoison, [1, 2, 3, 4, 5]);
  assert.equal(delivered, 99, 'every other record was delivered exactly once');
  assert.equal(s.sp.startOffset, 100);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 0, acquired: 0, acknowledged: 0, archived: 0 });
});

test('a record on its last delivery is handed out alone', () => {
  const s = setup({ deliveryCountLimit: 4 });
  const read = log(6, 6);
  fetch(s, read, 'm1');
  s.sp.acknowledge('m1', [ack(0, 5, RELEASE, RELEASE, ACCEPT, ACCEPT, ACCEPT, ACCEPT)]);
  fetch(s, read, 'm1');
  s.sp.acknowledge('m1', [ack(0, 1, RELEASE, RELEASE)]);
  assert.deepEqual(fetch(s, read, 'm1'), [{ firstOffset: 0, lastOffset: 1, deliveryCount: 3 }]);
  s.sp.acknowledge('m1', [ack(0, 1, RELEASE, RELEASE)]);
  assert.deepEqual(fetch(s, read, 'm1'), [{ firstOffset: 0, lastOffset: 0, deliveryCount: 4 }]);
  assert.deepEqual(fetch(s, read, 'm2'), [{ firstOffset: 1, lastOffset: 1, deliveryCount: 4 }]);
});

test('RENEW keeps records ACQUIRED and restarts their lock', () => {
  const s = setup();
  const read = log(10, 10);
  fetch(s, read, 'm1');
  s.clock.advance(LOCK_MS - 1000);
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 9, RENEW)]), ok);
  s.clock.advance(LOCK_MS - 1);
  assert.equal(s.sp.inFlightSummary().acquired, 10);
  assert.equal(s.expiries, 0);
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 4, RENEW, RENEW, ACCEPT, RENEW, RENEW)]), ok);
  s.clock.advance(1);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 5, acquired: 4, acknowledged: 1, archived: 0 }, 'offsets 5-9 kept the old lock');
  s.clock.advance(LOCK_MS);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 9, acquired: 0, acknowledged: 1, archived: 0 });
  assert.equal(s.clock.pendingCount, 0);
});

test('RENEW is refused when share.renew.acknowledge.enable is false', () => {
  const s = setup({ renewAcknowledgeEnable: false });
  fetch(s, log(3, 3), 'm1');
  assert.equal(s.sp.acknowledge('m1', [ack(0, 2, RENEW)]).errorCode, ErrorCode.INVALID_RECORD_STATE);
});

test('a member acknowledging records another holds is refused, and a refused request changes nothing', () => {
  const s = setup();
  const read = log(20, 10);
  fetch(s, read, 'm1', batchOptimized(10));
  fetch(s, read, 'm2', batchOptimized(10));
  const before = { summary: s.sp.inFlightSummary(), persisted: s.sp.persistentState(), next: s.sp.nextFetchOffset() };
  const stolen = s.sp.acknowledge('m1', [ack(0, 9, ACCEPT), ack(10, 19, ACCEPT)]);
  assert.equal(stolen.errorCode, ErrorCode.INVALID_RECORD_STATE);
  assert.equal(stolen.errorMessage, 'Member is not the owner of batch record');
  const perOffset = s.sp.acknowledge('m1', [ack(5, 12, ACCEPT)]);
  assert.equal(perOffset.errorCode, ErrorCode.INVALID_RECORD_STATE);
  const twice = s.sp.acknowledge('m1', [ack(0, 4, ACCEPT), ack(4, 9, REJECT)]);
  assert.equal(twice.errorCode, ErrorCode.INVALID_RECORD_STATE, 'one offset acknowledged twice in one request');
  assert.deepEqual({ summary: s.sp.inFlightSummary(), persisted: s.sp.persistentState(), next: s.sp.nextFetchOffset() }, before);
  assert.deepEqual(s.sp.acknowledge('m2', [ack(10, 19, ACCEPT)]), ok);
});

test('acknowledgement errors: outside the in-flight range is INVALID_REQUEST, not acquired is INVALID_RECORD_STATE', () => {
  const s = setup();
  fetch(s, log(10, 10), 'm1');
  assert.equal(s.sp.acknowledge('m1', [ack(5, 12, ACCEPT)]).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(s.sp.acknowledge('m1', [ack(11, 12, ACCEPT)]).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(s.sp.acknowledge('m1', [ack(0, 9, 7)]).errorCode, ErrorCode.INVALID_REQUEST, 'unknown acknowledge type');
  assert.equal(s.sp.acknowledge('m1', [ack(0, 9, ACCEPT, ACCEPT)]).errorCode, ErrorCode.INVALID_REQUEST, 'types do not match offsets');
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 4, ACCEPT)]), ok);
  const again = s.sp.acknowledge('m1', [ack(5, 9, ACCEPT), ack(9, 9, RELEASE)]);
  assert.equal(again.errorCode, ErrorCode.INVALID_RECORD_STATE);
  assert.deepEqual(s.sp.acknowledge('m1', [ack(2, 3, ACCEPT)]), ok, 'offsets below the SPSO are already done');
  assert.deepEqual(s.sp.inFlightSummary(), { available: 0, acquired: 5, acknowledged: 0, archived: 0 });
  s.sp.releaseAcquiredRecords('m1');
  const available = s.sp.acknowledge('m1', [ack(5, 9, ACCEPT)]);
  assert.deepEqual(available, { errorCode: ErrorCode.INVALID_RECORD_STATE, errorMessage: 'The offset cannot be acknowledged. The offset is not acquired.' });
});

test('maxInFlightRecords stops new acquisition until acknowledgements move the SPSO', () => {
  const s = setup({ maxInFlightRecords: 20 });
  const read = log(100, 10);
  assert.equal(fetch(s, read, 'm1', batchOptimized(15)).at(-1)?.lastOffset, 19);
  assert.equal(s.sp.canAcquireRecords(), false);
  assert.deepEqual(fetch(s, read, 'm2'), []);
  s.sp.acknowledge('m1', [ack(0, 9, RELEASE)]);
  assert.equal(s.sp.canAcquireRecords(), true, 'released records inside the window can be acquired again');
  assert.deepEqual(fetch(s, read, 'm2'), [{ firstOffset: 0, lastOffset: 9, deliveryCount: 2 }], 'nothing new beyond the window');
  s.sp.acknowledge('m2', [ack(0, 9, ACCEPT)]);
  assert.equal(s.sp.startOffset, 10);
  assert.equal(s.sp.canAcquireRecords(), true);
  assert.deepEqual(fetch(s, read, 'm2'), [{ firstOffset: 20, lastOffset: 29, deliveryCount: 1 }]);
});

test('releaseAcquiredRecords gives a departed member\'s records back, archiving those at the limit', () => {
  const s = setup({ deliveryCountLimit: 2 });
  const read = log(20, 10);
  fetch(s, read, 'm1', batchOptimized(10));
  fetch(s, read, 'm2', batchOptimized(10));
  assert.equal(s.sp.releaseAcquiredRecords('m1'), true);
  assert.equal(s.sp.releaseAcquiredRecords('m1'), false, 'nothing left to release');
  assert.deepEqual(s.sp.inFlightSummary(), { available: 10, acquired: 10, acknowledged: 0, archived: 0 });
  assert.deepEqual(fetch(s, read, 'm3', batchOptimized(10)), [{ firstOffset: 0, lastOffset: 9, deliveryCount: 2 }]);
  s.sp.releaseAcquiredRecords('m3');
  assert.equal(s.sp.startOffset, 10, 'the second delivery was the last');
  assert.deepEqual(s.sp.acknowledge('m2', [ack(10, 19, ACCEPT)]), ok);
});

test('the log start offset moving archives what is below it and moves the SPSO', () => {
  const s = setup();
  const read = log(30, 10);
  fetch(s, read, 'm1', batchOptimized(10));
  fetch(s, read, 'm2', batchOptimized(10));
  s.sp.releaseAcquiredRecords('m2');
  s.sp.updateLogStartOffset(15);
  assert.equal(s.sp.startOffset, 15);
  assert.equal(s.sp.nextFetchOffset(), 15);
  assert.deepEqual(s.sp.inFlightSummary(), { available: 5, acquired: 0, acknowledged: 0, archived: 0 }, 'm1 still holds 0-9, now below the SPSO');
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 9, ACCEPT)]), ok);
  s.sp.updateLogStartOffset(40);
  assert.equal(s.sp.startOffset, 40);
  assert.equal(s.sp.endOffset, 40);
  assert.deepEqual(fetch(s, read, 'm1'), []);
  assert.equal(s.clock.pendingCount, 0, 'locks below the log start offset were dropped');
});

test('with fetchOffset, AVAILABLE records the log no longer has are archived', () => {
  const s = setup();
  fetch(s, log(20, 10), 'm1');
  s.sp.acknowledge('m1', [ack(0, 19, RELEASE)]);
  const compacted: FetchedBatch[] = [{ baseOffset: 10, lastOffset: 19, isControl: false }];
  assert.deepEqual(s.sp.acquire('m2', compacted, { ...batchOptimized(100), fetchOffset: s.sp.nextFetchOffset() }), [{ firstOffset: 10, lastOffset: 19, deliveryCount: 2 }]);
  assert.equal(s.sp.startOffset, 10);
});

test('control batches are acquired with the data, as Kafka 4.4 does, and GAP archives their offsets', () => {
  const s = setup();
  const batches: FetchedBatch[] = [
    { baseOffset: 0, lastOffset: 4, isControl: false },
    { baseOffset: 5, lastOffset: 5, isControl: true },
  ];
  assert.deepEqual(s.sp.acquire('m1', batches, batchOptimized(100)), [{ firstOffset: 0, lastOffset: 5, deliveryCount: 1 }]);
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 5, ACCEPT, ACCEPT, ACCEPT, ACCEPT, ACCEPT, GAP)]), ok);
  assert.equal(s.sp.startOffset, 6);
});

test('loading: ACKNOWLEDGED/ARCHIVED runs are not redelivered, AVAILABLE with deliveries comes back counted on', () => {
  const stateBatches: PersisterStateBatch[] = [
    { firstOffset: 12, lastOffset: 13, deliveryState: RecordState.ACKNOWLEDGED, deliveryCount: 1 },
    { firstOffset: 14, lastOffset: 15, deliveryState: RecordState.AVAILABLE, deliveryCount: 2 },
    { firstOffset: 18, lastOffset: 19, deliveryState: RecordState.ARCHIVED, deliveryCount: 5 },
  ];
  const s = setup({ state: { stateEpoch: 3, startOffset: 10, stateBatches } });
  assert.equal(s.sp.stateEpoch, 3);
  assert.equal(s.sp.startOffset, 10);
  assert.equal(s.sp.endOffset, 20);
  assert.equal(s.sp.nextFetchOffset(), 10);
  const read = log(30, 30);
  const acquired = fetch(s, read, 'm1');
  assert.deepEqual(acquired, [
    { firstOffset: 10, lastOffset: 11, deliveryCount: 1 },
    { firstOffset: 14, lastOffset: 15, deliveryCount: 3 },
    { firstOffset: 16, lastOffset: 17, deliveryCount: 1 },
    { firstOffset: 20, lastOffset: 29, deliveryCount: 1 },
  ]);
});

test('a loaded prefix of ACKNOWLEDGED records moves the SPSO at once', () => {
  const stateBatches = [{ firstOffset: 0, lastOffset: 4, deliveryState: RecordState.ACKNOWLEDGED, deliveryCount: 1 }];
  const s = setup({ state: { stateEpoch: 0, startOffset: 0, stateBatches } });
  assert.equal(s.sp.startOffset, 5);
  assert.equal(s.sp.endOffset, 5);
});

test('persistentState merges runs, writes ACQUIRED as AVAILABLE, and a partition built from it behaves the same', () => {
  const s = setup();
  const read = log(40, 10);
  fetch(s, read, 'm1', batchOptimized(30, 10));
  s.sp.acknowledge('m1', [ack(0, 9, RELEASE), ack(10, 14, ACCEPT, REJECT, ACCEPT, ACCEPT, RELEASE)]);
  const persisted = s.sp.persistentState();
  assert.deepEqual(persisted, {
    startOffset: 0,
    deliveryCompleteCount: 4,
    stateBatches: [
      { firstOffset: 0, lastOffset: 9, deliveryState: RecordState.AVAILABLE, deliveryCount: 1 },
      { firstOffset: 10, lastOffset: 10, deliveryState: RecordState.ACKNOWLEDGED, deliveryCount: 1 },
      { firstOffset: 11, lastOffset: 11, deliveryState: RecordState.ARCHIVED, deliveryCount: 1 },
      { firstOffset: 12, lastOffset: 13, deliveryState: RecordState.ACKNOWLEDGED, deliveryCount: 1 },
      { firstOffset: 14, lastOffset: 29, deliveryState: RecordState.AVAILABLE, deliveryCount: 1 },
    ],
  });
  const copy = setup({ state: { stateEpoch: 1, ...persisted } });
  assert.deepEqual(copy.sp.persistentState(), persisted);
  s.sp.releaseAcquiredRecords('m1');
  assert.deepEqual(copy.sp.persistentState(), s.sp.persistentState());
  assert.equal(copy.sp.nextFetchOffset(), s.sp.nextFetchOffset());
  const deliveries = [s, copy].map((partition) => perOffset(fetch(partition, read, 'm2', batchOptimized(100, 100))));
  assert.deepEqual(deliveries[0], deliveries[1]);
  assert.equal(deliveries[0]!.get(0), 2);
  assert.equal(deliveries[0]!.get(10), undefined, 'acknowledged, not redelivered');
  assert.equal(deliveries[0]!.get(11), undefined, 'rejected, not redelivered');
  assert.equal(deliveries[0]!.get(29), 2);
  assert.equal(deliveries[0]!.get(30), 1);
});

test('close cancels every lock timer', () => {
  const s = setup();
  fetch(s, log(30, 10), 'm1', batchOptimized(30, 10));
  assert.equal(s.clock.pendingCount, 3);
  s.sp.close();
  assert.equal(s.clock.pendingCount, 0);
});

test('offsets the log skips between fetches (compaction) are a hole the SPSO jumps over', () => {
  const s = setup();
  assert.deepEqual(s.sp.acquire('m1', [{ baseOffset: 0, lastOffset: 4, isControl: false }], batchOptimized(100)), [{ firstOffset: 0, lastOffset: 4, deliveryCount: 1 }]);
  assert.deepEqual(s.sp.acquire('m2', [{ baseOffset: 10, lastOffset: 14, isControl: false }], batchOptimized(100)), [{ firstOffset: 10, lastOffset: 14, deliveryCount: 1 }]);
  assert.equal(s.sp.endOffset, 15);
  assert.equal(s.sp.acknowledge('m1', [ack(6, 8, ACCEPT)]).errorCode, ErrorCode.INVALID_REQUEST, 'no records were handed out in the hole');
  assert.deepEqual(s.sp.acknowledge('m1', [ack(0, 4, ACCEPT)]), ok);
  assert.equal(s.sp.startOffset, 10);
  assert.deepEqual(s.sp.persistentState().stateBatches, [{ firstOffset: 10, lastOffset: 14, deliveryState: RecordState.AVAILABLE, deliveryCount: 1 }]);
});

test('with nothing in flight, acquisition from a log starting above the SPSO moves the SPSO there', () => {
  const s = setup({ state: { stateEpoch: 0, startOffset: 3, stateBatches: [] } });
  assert.deepEqual(s.sp.acquire('m1', [{ baseOffset: 8, lastOffset: 9, isControl: false }], batchOptimized(100)), [{ firstOffset: 8, lastOffset: 9, deliveryCount: 1 }]);
  assert.equal(s.sp.startOffset, 8);
});
