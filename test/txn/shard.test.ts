/**
 * The transaction coordinator's state machine for one `__transaction_state`
 * partition, driven as the runtime drives it: each operation's records are
 * replayed (as after a successful append), then its onAppend runs. Proves
 * Kafka's rules: epochs bumped by InitProducerId fence older producers, an
 * open transaction is aborted under a bumped epoch when its id is
 * re-initialized or when it times out, EndTxn retries are answered, idle
 * ids expire, and a reload from the records rebuilds the same state and
 * re-sends the markers of a transaction left prepared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinatorApiError } from '../../src/coordinator/errors.js';
import { ManualClock } from '../../src/io/clock.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { decodeTransactionLogRecord, encodeTransactionLogRecord, type TransactionLogRecord } from '../../src/txn/records.js';
import { TransactionCoordinatorShard, type PendingMarkers, type TxnResult } from '../../src/txn/shard.js';

class Harness {
  readonly clock = new ManualClock();
  readonly markers: PendingMarkers[] = [];
  /** Every record written, as bytes would be read back from the log. */
  readonly log: TransactionLogRecord[] = [];
  readonly shard: TransactionCoordinatorShard;

  /** `transactionVersion`: the finalized transaction.version the shard sees. */
  constructor(readonly transactionVersion = 0) {
    this.shard = this.newShard();
  }

  newShard(): TransactionCoordinatorShard {
    return new TransactionCoordinatorShard({
      partition: 0,
      leaderEpoch: 5,
      clock: this.clock,
      sendMarkers: (m) => this.markers.push(m),
      transactionVersion: () => this.transactionVersion,
    });
  }

  /** Runs an operation as the runtime does: a thrown Kafka error is the answer, else records replayed, then onAppend. */
  run<T>(operation: (shard: TransactionCoordinatorShard) => TxnResult<T>): T | number {
    let result: TxnResult<T>;
    try {
      result = operation(this.shard);
    } catch (error) {
      if (error instanceof CoordinatorApiError) return error.errorCode;
      throw error;
    }
    for (const record of result.records) {
      this.shard.replay(record, { offset: this.log.length, producerId: -1 });
      this.log.push(record);
    }
    result.onAppend?.(ErrorCode.NONE);
    return result.response;
  }

  init(transactionalId: string, newProducerId: number | null = 4000, expected: { producerId: number; producerEpoch: number } | null = null) {
    return this.run((s) => s.initProducerId({ transactionalId, transactionTimeoutMs: 60_000, expected, newProducerId }));
  }
}

const TXN = 'copier-1';
const orders = [{ topic: 'orders', partition: 0 }, { topic: 'orders', partition: 1 }];

test('a new transactional id gets the allocated producer id at epoch 0; InitProducerId again bumps the epoch and fences the old producer', () => {
  const h = new Harness();
  assert.ok(h.shard.needsProducerId(TXN));
  assert.deepEqual(h.init(TXN), { errorCode: ErrorCode.NONE, producerId: 4000, producerEpoch: 0 });
  assert.ok(!h.shard.needsProducerId(TXN));
  assert.deepEqual(h.init(TXN, null), { errorCode: ErrorCode.NONE, producerId: 4000, producerEpoch: 1 });
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders)), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4001, producerEpoch: 1 }, orders)), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 1 }, orders)), undefined);
  assert.equal(h.shard.transactions.get(TXN)?.state, 'Ongoing');
});

test('commit: PrepareCommit is written and answered, the markers go out, the markers written complete it; retries are answered as Kafka does', () => {
  const h = new Harness();
  h.init(TXN);
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders));
  const end = { transactionalId: TXN, producerId: 4000, producerEpoch: 0, committed: true, clientTransactionVersion: 0 };
  assert.deepEqual(h.run((s) => s.endTransaction(end)), { producerId: 4000, producerEpoch: 0 });
  assert.equal(h.shard.transactions.get(TXN)?.state, 'PrepareCommit');
  assert.deepEqual(h.markers, [{ transactionalId: TXN, producerId: 4000, producerEpoch: 0, committed: true, coordinatorEpoch: 5, partitions: orders, transactionVersion: 0 }]);
  assert.equal(h.run((s) => s.endTransaction(end)), ErrorCode.CONCURRENT_TRANSACTIONS, 'a retry while markers are written');
  assert.equal(h.run((s) => s.endTransaction({ ...end, committed: false })), ErrorCode.INVALID_TXN_STATE);
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders)), ErrorCode.CONCURRENT_TRANSACTIONS);
  h.run((s) => s.completeTransaction(h.markers[0]!));
  const done = h.shard.transactions.get(TXN)!;
  assert.equal(done.state, 'CompleteCommit');
  assert.equal(done.partitions.size, 0);
  assert.deepEqual(h.run((s) => s.endTransaction(end)), { producerId: 4000, producerEpoch: 0 }, 'a retry after completion');
  assert.equal(h.run((s) => s.endTransaction({ ...end, committed: false })), ErrorCode.INVALID_TXN_STATE);
  assert.equal(h.run((s) => s.endTransaction({ ...end, producerEpoch: 1 })), ErrorCode.PRODUCER_FENCED);
});

test('InitProducerId while a transaction is open aborts it under a bumped epoch and answers CONCURRENT_TRANSACTIONS; the retry gets the next epoch', () => {
  const h = new Harness();
  h.init(TXN);
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders));
  assert.deepEqual(h.init(TXN, null), { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS, producerId: -1, producerEpoch: -1 });
  assert.equal(h.shard.transactions.get(TXN)?.state, 'PrepareAbort');
  assert.deepEqual(h.markers.map((m) => [m.committed, m.producerEpoch]), [[false, 1]], 'the abort markers fence epoch 0');
  assert.equal(h.init(TXN, null), ErrorCode.CONCURRENT_TRANSACTIONS, 'still aborting');
  h.run((s) => s.completeTransaction(h.markers[0]!));
  assert.deepEqual(h.init(TXN, null), { errorCode: ErrorCode.NONE, producerId: 4000, producerEpoch: 2 });
});

test('KIP-360: InitProducerId with the current epoch bumps it, a retry of that bump gets the same epoch, an older epoch is PRODUCER_FENCED', () => {
  const h = new Harness();
  h.init(TXN);
  assert.deepEqual(h.init(TXN, null, { producerId: 4000, producerEpoch: 0 }), { errorCode: ErrorCode.NONE, producerId: 4000, producerEpoch: 1 });
  assert.deepEqual(h.init(TXN, null, { producerId: 4000, producerEpoch: 0 }), { errorCode: ErrorCode.NONE, producerId: 4000, producerEpoch: 1 });
  h.init(TXN, null);
  assert.equal(h.init(TXN, null, { producerId: 4000, producerEpoch: 0 }), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.init(TXN, null, { producerId: 17, producerEpoch: 2 }), ErrorCode.PRODUCER_FENCED);
});

test('an exhausted epoch rotates to a fresh producer id at epoch 0', () => {
  const h = new Harness();
  h.init(TXN);
  const record = h.log.at(-1)!;
  h.shard.replay({ ...record, value: { ...record.value!, producerEpoch: 32766 } }, { offset: 9, producerId: -1 });
  assert.ok(h.shard.needsProducerId(TXN));
  assert.equal(h.init(TXN, null), ErrorCode.CONCURRENT_TRANSACTIONS, 'no id was allocated');
  assert.deepEqual(h.init(TXN, 5000), { errorCode: ErrorCode.NONE, producerId: 5000, producerEpoch: 0 });
  assert.equal(h.shard.transactions.get(TXN)?.previousProducerId, 4000);
});

test('a transaction open longer than transaction.timeout.ms is aborted by the coordinator, fencing its producer', () => {
  const h = new Harness();
  h.init(TXN);
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders));
  h.clock.advance(60_000);
  h.run((s) => s.abortTimedOutTransactions());
  assert.equal(h.shard.transactions.get(TXN)?.state, 'Ongoing', 'not yet: exactly the timeout');
  h.clock.advance(1);
  h.run((s) => s.abortTimedOutTransactions());
  assert.equal(h.shard.transactions.get(TXN)?.state, 'PrepareAbort');
  assert.deepEqual(h.markers.map((m) => [m.committed, m.producerEpoch]), [[false, 1]]);
  h.run((s) => s.completeTransaction(h.markers[0]!));
  const end = { transactionalId: TXN, producerId: 4000, producerEpoch: 0, committed: true, clientTransactionVersion: 0 };
  assert.equal(h.run((s) => s.endTransaction(end)), ErrorCode.PRODUCER_FENCED, 'the timed-out producer is fenced');
});

test('an id idle for transactional.id.expiration.ms is written as a tombstone and forgotten; an open one is kept', () => {
  const h = new Harness();
  h.init(TXN);
  h.init('other', 4001);
  h.run((s) => s.addPartitions('other', { producerId: 4001, producerEpoch: 0 }, orders));
  h.clock.advance(1000);
  h.run((s) => s.expireTransactionalIds(1000));
  assert.deepEqual(h.log.at(-1), { transactionalId: TXN, value: null });
  assert.deepEqual([...h.shard.transactions.keys()], ['other']);
});

test('a reload from the written records rebuilds every id and re-sends the markers of a transaction left in PrepareAbort', () => {
  const h = new Harness();
  h.init(TXN);
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders));
  h.run((s) => s.endTransaction({ transactionalId: TXN, producerId: 4000, producerEpoch: 0, committed: false, clientTransactionVersion: 0 }));
  h.markers.length = 0;
  const reloaded = h.newShard();
  for (const [offset, record] of h.log.entries()) {
    const { key, value } = encodeTransactionLogRecord(record);
    reloaded.replay(decodeTransactionLogRecord(key, value)!, { offset, producerId: -1 });
  }
  reloaded.onLoaded();
  const state = reloaded.transactions.get(TXN)!;
  assert.equal(state.state, 'PrepareAbort');
  assert.equal(state.lastProducerEpoch, -1, 'not written, as in Kafka');
  assert.deepEqual(h.markers, [{ transactionalId: TXN, producerId: 4000, producerEpoch: 0, committed: false, coordinatorEpoch: 5, partitions: orders, transactionVersion: 0 }]);
});

// ---- Transactions V2 (KIP-890 part 2)

const endV2 = (producerEpoch: number, committed: boolean, producerId = 4000) => ({ transactionalId: TXN, producerId, producerEpoch, committed, clientTransactionVersion: 2 });

test('V2: every EndTxn bumps the epoch and answers it; the markers carry the bumped epoch; the next transaction goes on at it', () => {
  const h = new Harness(2);
  h.init(TXN);
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders, 2)), undefined);
  assert.equal(h.shard.transactions.get(TXN)?.clientTransactionVersion, 2);
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(0, true))), { producerId: 4000, producerEpoch: 1 });
  const prepared = h.shard.transactions.get(TXN)!;
  assert.deepEqual([prepared.state, prepared.producerEpoch, prepared.lastProducerEpoch], ['PrepareCommit', 1, 0]);
  assert.deepEqual(h.markers, [{ transactionalId: TXN, producerId: 4000, producerEpoch: 1, committed: true, coordinatorEpoch: 5, partitions: orders, transactionVersion: 2 }]);
  assert.equal(h.run((s) => s.endTransaction(endV2(0, true))), ErrorCode.CONCURRENT_TRANSACTIONS, 'a retry while the markers are written');
  assert.equal(h.run((s) => s.endTransaction(endV2(1, true))), ErrorCode.PRODUCER_FENCED, 'the bumped epoch cannot end a transaction still being written');
  h.run((s) => s.completeTransaction(h.markers[0]!));
  const done = h.shard.transactions.get(TXN)!;
  assert.deepEqual([done.state, done.producerId, done.producerEpoch, done.lastProducerEpoch], ['CompleteCommit', 4000, 1, 0]);
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(0, true))), { producerId: 4000, producerEpoch: 1 }, 'a retry after completion: NONE with the current epoch');
  assert.equal(h.run((s) => s.endTransaction(endV2(0, false))), ErrorCode.INVALID_TXN_STATE, 'an ABORT retry of a commit');
  assert.equal(h.run((s) => s.endTransaction(endV2(1, true))), ErrorCode.INVALID_TXN_STATE, 'COMMIT with nothing open');
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders, 2)), ErrorCode.PRODUCER_FENCED, 'the old epoch is fenced');
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 1 }, orders, 2)), undefined, 'the next transaction at the new epoch');
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(1, false))), { producerId: 4000, producerEpoch: 2 });
});

test('V2: ABORT with no transaction open is allowed (an abort of no partitions, completed at once); COMMIT is not; an older epoch is fenced', () => {
  const h = new Harness(2);
  h.init(TXN);
  assert.equal(h.run((s) => s.endTransaction(endV2(0, true))), ErrorCode.INVALID_TXN_STATE);
  assert.equal(h.run((s) => s.endTransaction(endV2(1, false))), ErrorCode.PRODUCER_FENCED);
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(0, false))), { producerId: 4000, producerEpoch: 1 });
  assert.deepEqual(h.markers.map((m) => [m.committed, m.producerEpoch, m.partitions.length]), [[false, 1, 0]]);
  h.run((s) => s.completeTransaction(h.markers[0]!));
  assert.equal(h.shard.transactions.get(TXN)?.state, 'CompleteAbort');
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(0, false))), { producerId: 4000, producerEpoch: 1 }, 'a retry: NONE');
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(1, false))), { producerId: 4000, producerEpoch: 2 }, 'another abort bumps again');
  assert.equal(h.run((s) => s.endTransaction(endV2(0, false, 17))), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
});

test('V2: ending with an exhausted epoch continues under a fresh producer id at epoch 0; a retry from the old id is answered', () => {
  const h = new Harness(2);
  h.init(TXN);
  const record = h.log.at(-1)!;
  h.shard.replay({ ...record, value: { ...record.value!, producerEpoch: 32766 } }, { offset: 9, producerId: -1 });
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 32766 }, orders, 2));
  assert.ok(h.shard.needsProducerIdToEnd(TXN, 2));
  assert.ok(!h.shard.needsProducerIdToEnd(TXN, 0), 'V1 ends never bump');
  assert.equal(h.run((s) => s.endTransaction(endV2(32766, true))), ErrorCode.CONCURRENT_TRANSACTIONS, 'no id was allocated');
  assert.deepEqual(h.run((s) => s.endTransaction({ ...endV2(32766, true), newProducerId: 5000 })), { producerId: 5000, producerEpoch: 0 });
  assert.deepEqual(h.markers.map((m) => [m.producerId, m.producerEpoch]), [[4000, 32767]], 'the markers close the old id at the last epoch');
  h.run((s) => s.completeTransaction(h.markers[0]!));
  const done = h.shard.transactions.get(TXN)!;
  assert.deepEqual([done.producerId, done.producerEpoch, done.previousProducerId, done.nextProducerId], [5000, 0, 4000, -1]);
  assert.deepEqual(h.run((s) => s.endTransaction(endV2(32766, true))), { producerId: 5000, producerEpoch: 0 }, 'the retry from the old id');
  assert.equal(h.run((s) => s.addPartitions(TXN, { producerId: 5000, producerEpoch: 0 }, orders, 2)), undefined);
});

test('V2: the aborts the coordinator starts (InitProducerId on an open transaction, a timeout) bump the epoch to fence and again to end', () => {
  const h = new Harness(2);
  h.init(TXN);
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders, 2));
  assert.deepEqual(h.init(TXN, null), { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS, producerId: -1, producerEpoch: -1 });
  const fenced = h.shard.transactions.get(TXN)!;
  assert.deepEqual([fenced.state, fenced.producerEpoch, fenced.lastProducerEpoch, fenced.clientTransactionVersion], ['PrepareAbort', 2, 1, 2]);
  h.run((s) => s.completeTransaction(h.markers[0]!));
  assert.deepEqual(h.init(TXN, null), { errorCode: ErrorCode.NONE, producerId: 4000, producerEpoch: 3 });
  h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 3 }, orders, 2));
  h.clock.advance(60_001);
  h.run((s) => s.abortTimedOutTransactions());
  assert.deepEqual(h.markers.map((m) => [m.committed, m.producerEpoch]), [[false, 2], [false, 5]]);
  h.run((s) => s.completeTransaction(h.markers[1]!));
  assert.equal(h.run((s) => s.endTransaction(endV2(3, true))), ErrorCode.PRODUCER_FENCED, 'the timed-out producer is fenced');
});

test('the value version follows transaction.version: v0 at 0, v1 (flexible, with the previous producer id and client version) from 1', () => {
  for (const [version, valueVersion] of [[0, 0], [1, 1], [2, 1]] as const) {
    const h = new Harness(version);
    h.init(TXN);
    h.run((s) => s.addPartitions(TXN, { producerId: 4000, producerEpoch: 0 }, orders, 2));
    const { value } = encodeTransactionLogRecord(h.log.at(-1)!);
    assert.equal(value!.readInt16BE(0), valueVersion);
    const reread = decodeTransactionLogRecord(encodeTransactionLogRecord(h.log.at(-1)!).key, value)!.value!;
    assert.deepEqual([reread.previousProducerId, reread.clientTransactionVersion], valueVersion === 1 ? [4000, 2] : [-1, 0]);
  }
});
