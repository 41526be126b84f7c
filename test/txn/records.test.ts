/**
 * `__transaction_state` records: Spool writes the bytes Kafka 4.4's
 * TransactionLog.keyToBytes / valueToBytes write (value v0 at
 * transaction.version 0, v1 from 1, flexible with tagged fields), and reads
 * both. Golden bytes printed by a JVM run of
 * org.apache.kafka.coordinator.transaction.TransactionLog from
 * kafka-transaction-coordinator 4.4.0 (test/interop/kafka/lib), with the
 * field values below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeTransactionLogRecord, encodeTransactionLogRecord, type TransactionLogValue } from '../../src/txn/records.js';

const KAFKA_KEY = '000000066d792d74786e';
// TxnTransitMetadata(1000, -1, -1, epoch 3, lastEpoch 2, 60000, EMPTY, {}, -1, 1700000000000, TV_0), TV_0
const KAFKA_EMPTY_V0 = '000000000000000003e800030000ea6000ffffffff0000018bcfe56800ffffffffffffffff';
// ... ONGOING, {orders-2}, start 1700000000100, update 1700000000200, TV_0
const KAFKA_ONGOING_V0 = '000000000000000003e800030000ea60010000000100066f726465727300000001000000020000018bcfe568c80000018bcfe56864';
// TxnTransitMetadata(1000, previous 999, -1, 3, 2, 60000, PREPARE_COMMIT, {orders-2}, ..., TV_2), TV_2
const KAFKA_PREPARE_COMMIT_V1 = '000100000000000003e800030000ea600202076f72646572730200000002000000018bcfe568c80000018bcfe5686402000800000000000003e702020002';

function value(fields: Partial<TransactionLogValue>): TransactionLogValue {
  return {
    producerId: 1000,
    previousProducerId: -1,
    nextProducerId: -1,
    producerEpoch: 3,
    transactionTimeoutMs: 60000,
    transactionStatus: 0,
    transactionPartitions: null,
    transactionLastUpdateTimestampMs: 1700000000000,
    transactionStartTimestampMs: -1,
    clientTransactionVersion: 0,
    ...fields,
  };
}

test('an Empty and an Ongoing state are written with the bytes Kafka 4.4 writes (key v0, value v0)', () => {
  const empty = encodeTransactionLogRecord({ transactionalId: 'my-txn', value: value({}) });
  assert.equal(empty.key.toString('hex'), KAFKA_KEY);
  assert.equal(empty.value?.toString('hex'), KAFKA_EMPTY_V0);
  const ongoing = value({
    transactionStatus: 1,
    transactionPartitions: [{ topic: 'orders', partitionIds: [2] }],
    transactionStartTimestampMs: 1700000000100,
    transactionLastUpdateTimestampMs: 1700000000200,
  });
  const encoded = encodeTransactionLogRecord({ transactionalId: 'my-txn', value: ongoing });
  assert.equal(encoded.value?.toString('hex'), KAFKA_ONGOING_V0);
  assert.deepEqual(decodeTransactionLogRecord(Buffer.from(KAFKA_KEY, 'hex'), Buffer.from(KAFKA_ONGOING_V0, 'hex')), { transactionalId: 'my-txn', value: ongoing });
});

test("Kafka's flexible v1 value (transaction.version 2) is read with its tagged fields, and written with the same bytes", () => {
  const prepareCommit = value({
    previousProducerId: 999,
    transactionStatus: 2,
    transactionPartitions: [{ topic: 'orders', partitionIds: [2] }],
    transactionStartTimestampMs: 1700000000100,
    transactionLastUpdateTimestampMs: 1700000000200,
    clientTransactionVersion: 2,
  });
  const decoded = decodeTransactionLogRecord(Buffer.from(KAFKA_KEY, 'hex'), Buffer.from(KAFKA_PREPARE_COMMIT_V1, 'hex'));
  assert.deepEqual(decoded?.value, prepareCommit);
  const encoded = encodeTransactionLogRecord({ transactionalId: 'my-txn', value: prepareCommit, valueVersion: 1 });
  assert.equal(encoded.value?.toString('hex'), KAFKA_PREPARE_COMMIT_V1);
});

test('a tombstone deletes the id; a value of an unknown version fails; a key of another version is skipped', () => {
  const tombstone = encodeTransactionLogRecord({ transactionalId: 'my-txn', value: null });
  assert.equal(tombstone.value, null);
  assert.deepEqual(decodeTransactionLogRecord(tombstone.key, null), { transactionalId: 'my-txn', value: null });
  const future = Buffer.from(KAFKA_EMPTY_V0, 'hex');
  future.writeInt16BE(2, 0);
  assert.throws(() => decodeTransactionLogRecord(Buffer.from(KAFKA_KEY, 'hex'), future), /unknown transaction log value version 2/);
  assert.throws(() => decodeTransactionLogRecord(Buffer.from(KAFKA_KEY, 'hex'), Buffer.from(KAFKA_EMPTY_V0.slice(0, 20), 'hex')), /transaction log value v0/);
  const otherKey = Buffer.from(KAFKA_KEY, 'hex');
  otherKey.writeInt16BE(1, 0);
  assert.equal(decodeTransactionLogRecord(otherKey, Buffer.from(KAFKA_EMPTY_V0, 'hex')), null);
});
