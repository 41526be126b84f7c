/**
 * Seeded property test of the share partition: random acquire / acknowledge /
 * release / lock-expiry sequences by several members, checked against a
 * model of who holds what. Invariants: an ACKNOWLEDGED or ARCHIVED offset is
 * never delivered again; an offset is never held by two members; each
 * delivery's count is the previous one plus one and never passes the limit;
 * a member's acknowledgement of its own records succeeds and one touching
 * another's records is refused without changing anything; the SPSO never
 * moves back and everything below it is done; a partition rebuilt from
 * persistentState() reports the same state; with acks only, every record is
 * eventually done. A failure names its seed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/io/clock.js';
import { SeededRandom } from '../../src/io/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AcknowledgeType, SharePartition, ShareAcquireMode, type FetchedBatch } from '../../src/share/share-partition.js';

const LOCK_MS = 10_000;
const LIMIT = 4;
const MEMBERS = ['a', 'b', 'c'];
const ACK_TYPES = [AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT, AcknowledgeType.GAP, AcknowledgeType.RENEW];

interface Held {
  memberId: string;
  deadlineMs: number;
  deliveryCount: number;
}

class Model {
  readonly held = new Map<number, Held>();
  readonly done = new Set<number>();
  readonly lastCount = new Map<number, number>();

  expire(nowMs: number): void {
    for (const [offset, held] of this.held) {
      if (held.deadlineMs > nowMs) continue;
      this.held.delete(offset);
      if (held.deliveryCount >= LIMIT) this.done.add(offset);
    }
  }

  /** Runs of consecutive offsets the member holds. */
  runsOf(memberId: string): number[][] {
    const offsets = [...this.held].filter(([, held]) => held.memberId === memberId).map(([offset]) => offset).sort((x, y) => x - y);
    const runs: number[][] = [];
    for (const offset of offsets) {
      const run = runs.at(-1);
      if (run !== undefined && run.at(-1) === offset - 1) run.push(offset);
      else runs.push([offset]);
    }
    return runs;
  }
}

function makeLog(random: SeededRandom, records: number): FetchedBatch[] {
  const batches: FetchedBatch[] = [];
  for (let base = 0; base < records; ) {
    const size = Math.min(1 + random.nextInt(8), records - base);
    batches.push({ baseOffset: base, lastOffset: base + size - 1, isControl: random.nextInt(10) === 0 });
    base += size;
  }
  return batches;
}

function snapshot(sp: SharePartition) {
  return { persisted: sp.persistentState(), summary: sp.inFlightSummary(), next: sp.nextFetchOffset(), end: sp.endOffset };
}

function runSeed(seed: number, steps: number): void {
  const random = new SeededRandom(seed);
  const clock = new ManualClock();
  const records = 150;
  const log = makeLog(random, records);
  const sp = new SharePartition({
    clock,
    timers: clock,
    recordLockDurationMs: LOCK_MS,
    deliveryCountLimit: LIMIT,
    maxInFlightRecords: 40,
    state: { stateEpoch: 0, startOffset: 0, stateBatches: [] },
  });
  const model = new Model();
  let startOffset = sp.startOffset;
  const where = (step: number) => `seed ${seed} step ${step}`;

  const acquire = (step: number, memberId: string) => {
    const fetchOffset = sp.nextFetchOffset();
    const batches = log.filter((batch) => batch.lastOffset >= fetchOffset);
    const mode = random.nextInt(2) === 0 ? ShareAcquireMode.BATCH_OPTIMIZED : ShareAcquireMode.RECORD_LIMIT;
    const maxRecords = 1 + random.nextInt(20);
    const acquired = sp.acquire(memberId, batches, { maxRecords, batchSize: 1 + random.nextInt(10), acquireMode: mode, fetchOffset });
    for (const range of acquired) {
      for (let offset = range.firstOffset; offset <= range.lastOffset; offset++) {
        assert.ok(!model.done.has(offset), `${where(step)}: offset ${offset} was done and is delivered again`);
        assert.ok(!model.held.has(offset), `${where(step)}: offset ${offset} is held by ${model.held.get(offset)?.memberId} and given to ${memberId}`);
        assert.equal(range.deliveryCount, (model.lastCount.get(offset) ?? 0) + 1, `${where(step)}: delivery count of ${offset}`);
        assert.ok(range.deliveryCount <= LIMIT, `${where(step)}: delivery count past the limit`);
        model.lastCount.set(offset, range.deliveryCount);
        model.held.set(offset, { memberId, deadlineMs: clock.nowMs() + LOCK_MS, deliveryCount: range.deliveryCount });
      }
    }
    if (mode === ShareAcquireMode.RECORD_LIMIT) {
      const count = acquired.reduce((sum, range) => sum + range.lastOffset - range.firstOffset + 1, 0);
      assert.ok(count <= maxRecords, `${where(step)}: record_limit acquired ${count} > ${maxRecords}`);
    }
  };

  const acknowledgeOwn = (step: number, memberId: string) => {
    const runs = model.runsOf(memberId);
    const run = runs[random.nextInt(runs.length)];
    if (run === undefined) return;
    const from = random.nextInt(run.length);
    const offsets = run.slice(from, from + 1 + random.nextInt(run.length - from));
    const single = random.nextInt(2) === 0;
    const types = single ? [ACK_TYPES[random.nextInt(ACK_TYPES.length)]!] : offsets.map(() => ACK_TYPES[random.nextInt(ACK_TYPES.length)]!);
    const result = sp.acknowledge(memberId, [{ firstOffset: offsets[0]!, lastOffset: offsets.at(-1)!, acknowledgeTypes: types }]);
    assert.deepEqual(result, { errorCode: ErrorCode.NONE, errorMessage: null }, `${where(step)}: own acknowledgement refused`);
    offsets.forEach((offset, i) => applyAck(offset, single ? types[0]! : types[i]!));
  };

  const applyAck = (offset: number, type: number) => {
    const held = model.held.get(offset)!;
    if (type === AcknowledgeType.RENEW) {
      held.deadlineMs = clock.nowMs() + LOCK_MS;
      return;
    }
    model.held.delete(offset);
    if (type !== AcknowledgeType.RELEASE || held.deliveryCount >= LIMIT) model.done.add(offset);
  };

  const acknowledgeOthers = (step: number, memberId: string) => {
    const other = [...model.held].find(([, held]) => held.memberId !== memberId);
    if (other === undefined) return;
    const before = snapshot(sp);
    const result = sp.acknowledge(memberId, [{ firstOffset: other[0], lastOffset: other[0], acknowledgeTypes: [AcknowledgeType.ACCEPT] }]);
    assert.equal(result.errorCode, ErrorCode.INVALID_RECORD_STATE, `${where(step)}: acknowledged another member's record`);
    assert.deepEqual(snapshot(sp), before, `${where(step)}: a refused acknowledgement changed state`);
  };

  const release = (memberId: string) => {
    sp.releaseAcquiredRecords(memberId);
    for (const [offset, held] of model.held) {
      if (held.memberId !== memberId) continue;
      model.held.delete(offset);
      if (held.deliveryCount >= LIMIT) model.done.add(offset);
    }
  };

  const check = (step: number) => {
    assert.ok(sp.startOffset >= startOffset, `${where(step)}: SPSO moved back from ${startOffset} to ${sp.startOffset}`);
    startOffset = sp.startOffset;
    for (let offset = 0; offset < startOffset; offset++) assert.ok(model.done.has(offset), `${where(step)}: offset ${offset} below the SPSO is not done`);
    assert.equal(sp.inFlightSummary().acquired, [...model.held.keys()].filter((offset) => offset >= startOffset).length, `${where(step)}: ACQUIRED count`);
    const rebuilt = new SharePartition({ clock, timers: clock, recordLockDurationMs: LOCK_MS, deliveryCountLimit: LIMIT, maxInFlightRecords: 40, state: { stateEpoch: 0, ...sp.persistentState() } });
    assert.deepEqual(rebuilt.persistentState(), sp.persistentState(), `${where(step)}: persisted state does not load back the same`);
  };

  for (let step = 0; step < steps; step++) {
    const memberId = MEMBERS[random.nextInt(MEMBERS.length)]!;
    const action = random.nextInt(10);
    if (action < 4) acquire(step, memberId);
    else if (action < 7) acknowledgeOwn(step, memberId);
    else if (action < 8) acknowledgeOthers(step, memberId);
    else if (action < 9) release(memberId);
    else {
      clock.advance(random.nextInt(LOCK_MS));
      model.expire(clock.nowMs());
    }
    check(step);
  }

  // Drain: one member accepts everything it gets; every record ends done.
  clock.advance(LOCK_MS);
  model.expire(clock.nowMs());
  for (let round = 0; round < 500 && sp.startOffset < records; round++) {
    acquire(steps + round, 'drain');
    for (const run of model.runsOf('drain')) {
      assert.deepEqual(sp.acknowledge('drain', [{ firstOffset: run[0]!, lastOffset: run.at(-1)!, acknowledgeTypes: [AcknowledgeType.ACCEPT] }]).errorCode, ErrorCode.NONE);
      for (const offset of run) applyAck(offset, AcknowledgeType.ACCEPT);
    }
    check(steps + round);
  }
  assert.equal(sp.startOffset, records, `seed ${seed}: drained to the log end`);
  for (let offset = 0; offset < records; offset++) assert.ok(model.done.has(offset), `seed ${seed}: offset ${offset} ends done`);
  assert.equal(clock.pendingCount, 0, `seed ${seed}: no lock timer left`);
}

test('random acquire/acknowledge/release/expire sequences keep the share partition invariants', () => {
  for (let seed = 1; seed <= 40; seed++) runSeed(seed, 400);
});
